"""The Telegram channel: python-telegram-bot v22 updates in, the outbox out.

Usage::

    TELEGRAM_TOKEN=123456:ABC... moderator telegram     # long polling; MODERATOR_DB names the database

It translates and nothing else. An update becomes an ``Inbound`` for the service (the address is the person's
private chat, ``chat`` the group it was typed in, ``press`` the button pressed); the outbox's messages become Bot
API calls through ``TelegramChannel``. Its rooms, one job each (docs/architecture.md, "The Telegram channel"):

- ``config``: its settings, capabilities and limits, the PTB application, the command menu;
- ``messages``: outbox messages as Telegram HTML, and the buttons of prompts and of the lobby;
- ``channel``: deliveries (folding, edits in place, pacing through ``moderator.pacing``, Telegram's errors as the
  port's failures), on the sender's thread;
- ``handlers``: updates in, on the loop: one ``Inbound`` each, and the service's answer applied;
- ``polling`` and ``webhook``: how updates arrive (long polling under ``moderator telegram``, the webhook under
  ``moderator serve``);
- this module: the channel's entry (``SPEC``), which ``moderator.app.CHANNELS`` lists.

Threads: PTB runs on the asyncio loop, and so does the service. The channel's deliveries run on a worker thread
(``Runtime.delivery``); it hands each Bot API call back to the loop and waits for it. Its reports (unreachable
players, migrated groups) come back to the loop through a thread-safe queue.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Final

from starlette.routing import BaseRoute
from telegram import Update
from telegram.helpers import create_deep_linked_url

from ...channels import JoinWay, Problem, Running, Runtime
from ...settings import Settings
from .channel import TelegramChannel
from .config import (
    API_TIMEOUT,
    ASIDE_PATIENCE,
    BOARD_PATIENCE,
    CALLBACK_LIMIT,
    CAPABILITIES,
    CAPTION_LIMIT,
    CHANNEL,
    COSMETIC_RESERVE,
    COUNTER_INTERVAL,
    GROUP_INTERVAL,
    GROUP_PER_MINUTE,
    KNOWN_MESSAGES,
    MAX_BODY,
    MENU,
    PACING,
    PRIVATE_COUNTER_INTERVAL,
    PRIVATE_INTERVAL,
    SECRET_HEADER,
    TELEGRAM_PATH,
    TEXT_LIMIT,
    TelegramSettings,
    bot_api_url,
    build_application,
    menu,
    reaching,
)
from .handlers import TelegramBot
from .messages import callback, chunks, compose, escape, keyboard, lobby_keyboard
from .polling import Poller
from .webapp import voucher
from .webhook import Webhook, webhook_route

log = logging.getLogger(__name__)

__all__ = [
    "API_TIMEOUT", "ASIDE_PATIENCE", "BOARD_PATIENCE", "CALLBACK_LIMIT", "CAPABILITIES", "CAPTION_LIMIT", "CHANNEL",
    "COSMETIC_RESERVE",
    "COUNTER_INTERVAL", "GROUP_INTERVAL", "GROUP_PER_MINUTE", "KNOWN_MESSAGES", "MAX_BODY", "MENU", "PACING",
    "PRIVATE_COUNTER_INTERVAL", "PRIVATE_INTERVAL", "SECRET_HEADER", "SPEC", "TELEGRAM_PATH", "TEXT_LIMIT", "Poller",
    "TelegramBot", "TelegramChannel", "TelegramSettings", "TelegramSpec", "Webhook", "bot_api_url",
    "build_application", "callback", "chunks", "compose", "escape", "keyboard", "lobby_keyboard", "menu",
    "webhook_route",
]


class TelegramSpec:
    """Telegram: a bot, its webhook under a web server (``moderator serve``), long polling without one
    (``moderator telegram``)."""

    name: Final = CHANNEL
    capabilities: Final = CAPABILITIES

    def off(self, settings: Settings) -> str | None:
        token = TelegramSettings.of(settings).token
        if not settings.server:
            return None if token else "it needs TELEGRAM_TOKEN"
        if token and settings.public_url and not settings.lan:
            return None
        return "it needs TELEGRAM_TOKEN and MODERATOR_PUBLIC_URL"

    def routes(self, settings: Settings) -> Sequence[BaseRoute]:
        return [webhook_route(TelegramSettings.of(settings))]

    def webhooks(self, settings: Settings) -> Mapping[str, int]:
        return {TelegramSettings.of(settings).path: MAX_BODY}

    @contextlib.asynccontextmanager
    async def start(self, settings: Settings, runtime: Runtime) -> AsyncIterator[Running]:
        """The PTB application without its own updater: updates come from the webhook route under a web server,
        else from ``Poller`` (the command's foreground). A token Telegram refuses raises ``Refused``, Telegram out
        of reach ``Unreachable`` (the wiring starts it again later); either leaves nothing open behind."""
        telegram = TelegramSettings.of(settings)
        assert telegram.token
        request = runtime.network(CHANNEL)

        def report(problem: Problem | None) -> None:
            runtime.report(CHANNEL, problem)

        with reaching():  # a token PTB itself finds malformed is refused as Telegram would
            ptb = build_application(telegram.token, api_url=telegram.api_url, request=request,
                                    rate_limiter=request is None, updater=False)
        bot = TelegramBot(runtime.port, clock=runtime.clock, screen_url=runtime.screen_url,
                          app_url=runtime.app_url if settings.server else lambda table: None, report=report)
        bot.install(ptb)
        try:
            with reaching():
                await ptb.initialize()  # getMe: the token checked
        except BaseException:
            await ptb.bot.shutdown()  # the HTTP clients the try opened
            raise
        try:
            with reaching():
                await bot.start(ptb, lambda channel, after: runtime.delivery(CHANNEL, channel, after_round=after))
                if settings.server:
                    assert settings.public_url
                    await ptb.bot.set_webhook(settings.public_url + telegram.path, secret_token=telegram.secret,
                                              allowed_updates=Update.ALL_TYPES)
            username = ptb.bot.username

            def ways(code: str) -> list[JoinWay]:
                return [JoinWay("Telegram", create_deep_linked_url(username, code), f"@{username}")]

            if settings.server:
                log.info("telegram: webhook at %s%s", settings.public_url, telegram.path)
                # The seat's page in Telegram (``Runtime.app_url``) comes with the person signed by Telegram.
                yield Running(Webhook(ptb, bot), ways, vouch=voucher(telegram.token, runtime.clock))
                return
            poller = Poller(ptb, bot, report=report)
            log.info("telegram: @%s polls for updates", username)
            try:
                yield Running(poller, ways, main=poller.run)
            finally:
                await poller.confirm()  # what was handled is not fetched again at the next start
        finally:
            await ptb.shutdown()


SPEC: Final = TelegramSpec()
