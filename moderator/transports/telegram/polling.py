"""Long polling under ``moderator telegram``: an update is confirmed to Telegram only once its input is stored."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any

from telegram import Update
from telegram.error import NetworkError, RetryAfter, TelegramError
from telegram.ext import Application

from .config import retry_seconds
from .handlers import TelegramBot

log = logging.getLogger(__name__)

class Poller:
    """Long polling that confirms an update to Telegram only once its input is stored.

    PTB's own updater confirms every update it fetches before it is handled. Here updates are handled in order and
    the offset moves past one only after it was stored; at the first that could not be (``TelegramBot.not_stored``:
    the disk is full or read-only) polling pauses for ``pause`` seconds and then asks Telegram again from that
    update on, which it keeps until confirmed. It goes on by itself once the database can be written again."""

    def __init__(self, app: Application[Any, Any, Any, Any, Any, Any], bot: TelegramBot, *,
                 timeout: float = 50.0, pause: float = 5.0,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> None:
        self.app = app
        self.bot = bot
        self.timeout = timeout
        self.pause = pause
        self.sleep = sleep
        self.offset: int | None = None
        """The first update not yet confirmed (Telegram's ``offset``)."""
        self.paused = False

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
        a short wait on a network error."""
        try:
            stored = await self.poll()
        except RetryAfter as exc:
            await self.sleep(retry_seconds(exc))
            return
        except NetworkError as exc:  # a timeout too: Telegram or the network is away for a moment
            log.info("telegram: polling failed (%s); trying again", exc)
            await self.sleep(1.0)
            return
        except TelegramError as exc:  # another instance polls, or a webhook is set: say so and wait
            log.warning("telegram: polling refused: %s", exc)
            await self.sleep(self.pause)
            return
        if not stored:
            if not self.paused:
                log.error("telegram: the database cannot be written; polling pauses (updates stay with Telegram)")
            self.paused = True
            await self.sleep(self.pause)
        elif self.paused:
            log.warning("telegram: the database can be written again; polling goes on")
            self.paused = False

    async def run(self) -> None:
        """Poll until cancelled (no webhook may be set while polling)."""
        await self.app.bot.delete_webhook()
        while True:
            await self.step()

    async def confirm(self) -> None:
        """(At a clean stop.) Confirm what was handled, so the next start does not fetch it again."""
        if self.offset is None:
            return
        with contextlib.suppress(TelegramError):
            await self.app.bot.get_updates(offset=self.offset, timeout=timedelta(0), limit=1)
