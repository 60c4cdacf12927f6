"""Long polling under ``moderator telegram``: an update is confirmed to Telegram only once its input is stored."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any

from telegram import Update
from telegram.error import RetryAfter, TelegramError
from telegram.ext import Application

from ...channels import RETRY_FIRST, RETRY_MOST, Problem, Refused, Unreachable
from .config import provider_problem, retry_seconds
from .handlers import TelegramBot

log = logging.getLogger(__name__)

class Poller:
    """Long polling that confirms an update to Telegram only once its input is stored.

    PTB's own updater confirms every update it fetches before it is handled. Here updates are handled in order and
    the offset moves past one only after it was stored; at the first that could not be (``TelegramBot.not_stored``:
    the disk is full or read-only) polling pauses for ``pause`` seconds and then asks Telegram again from that
    update on, which it keeps until confirmed. It goes on by itself once the database can be written again.

    Telegram out of reach is reported once (``report``) and waited out, longer each time; a token Telegram refuses
    ends polling (``Refused``)."""

    def __init__(self, app: Application[Any, Any, Any, Any, Any, Any], bot: TelegramBot, *,
                 timeout: float = 50.0, pause: float = 5.0,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
                 report: Callable[[Problem | None], None] = lambda problem: None) -> None:
        self.app = app
        self.bot = bot
        self.timeout = timeout
        self.pause = pause
        self.sleep = sleep
        self.report = report
        self.offset: int | None = None
        """The first update not yet confirmed (Telegram's ``offset``)."""
        self.paused = False
        self.away = False
        """Telegram could not be reached at the last try (reported; the next answer is reported too)."""
        self.wait = RETRY_FIRST
        self.refusing = False

    async def poll(self) -> bool:
        """One ``getUpdates`` and its updates handled in order; False if one could not be stored (it and those
        after it stay unconfirmed)."""
        updates = await self.app.bot.get_updates(offset=self.offset, timeout=timedelta(seconds=self.timeout),
                                                 allowed_updates=Update.ALL_TYPES)
        for update in updates:
            await self.app.process_update(update)
            if update.update_id in self.bot.not_stored:
                self.bot.not_stored.discard(update.update_id)
                return False
            self.offset = update.update_id + 1
        return True

    async def step(self) -> None:
        """One poll, then the wait its outcome asks for: a pause while storage fails, Telegram's ``retry_after``,
        a wait growing from ``RETRY_FIRST`` to ``RETRY_MOST`` while Telegram cannot be reached. Raises
        ``Refused`` if Telegram refuses the token."""
        try:
            stored = await self.poll()
        except TelegramError as exc:
            await self._failed(exc)
            return
        self._reached()
        if not stored:
            if not self.paused:  # the store said it, once for every connection: this is detail
                log.debug("telegram: the database cannot be written; polling pauses (updates stay with Telegram)")
            self.paused = True
            await self.sleep(self.pause)
        elif self.paused:
            log.debug("telegram: the database can be written again; polling goes on")
            self.paused = False

    async def _failed(self, exc: TelegramError) -> None:
        """A call to Telegram failed: the wait it asks for. Out of reach is reported once; anything else Telegram
        refuses (another instance polls) is said once until polling works again."""
        if isinstance(exc, RetryAfter):
            await self.sleep(retry_seconds(exc))
            return
        problem = provider_problem(exc)
        if isinstance(problem, Refused):
            raise problem from None
        if isinstance(problem, Unreachable):
            if not self.away:
                self.away = True
                self.report(problem)
            await self.sleep(self.wait)
            self.wait = min(self.wait * 2, RETRY_MOST)
            return
        if not self.refusing:
            self.refusing = True
            log.warning("telegram: polling refused: %s", exc)
        await self.sleep(self.pause)

    def _reached(self) -> None:
        self.wait, self.refusing = RETRY_FIRST, False
        if self.away:
            self.away = False
            self.report(None)

    async def run(self) -> None:
        """Poll until cancelled (no webhook may be set while polling); ends with ``Refused`` if Telegram refuses
        the token."""
        while True:
            try:
                await self.app.bot.delete_webhook()
                break
            except TelegramError as exc:
                await self._failed(exc)
        self._reached()
        while True:
            await self.step()

    async def confirm(self) -> None:
        """(At a clean stop.) Confirm what was handled, so the next start does not fetch it again."""
        if self.offset is None:
            return
        with contextlib.suppress(TelegramError):
            await self.app.bot.get_updates(offset=self.offset, timeout=timedelta(0), limit=1)
