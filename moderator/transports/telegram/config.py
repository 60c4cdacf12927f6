"""The Telegram channel's settings and constants: its capabilities and limits, the webhook's path and secret, the
PTB application, and the command menu (from the grammar's words, in every language)."""

from __future__ import annotations

import contextlib
import hashlib
import re
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Final

import httpx
from telegram.error import BadRequest, InvalidToken, NetworkError, RetryAfter, TelegramError
from telegram.ext import AIORateLimiter, Application
from telegram.request import BaseRequest

from ...catalog import DEFAULT_THEME, Catalog
from ...channels import Capabilities, Pacing, Problem, Refused, Unreachable, WordStyle
from ...grammar import Verb, fold, grammar
from ...settings import Settings

CHANNEL: Final = "telegram"

TELEGRAM_PATH: Final = "/telegram"
SECRET_HEADER: Final = "X-Telegram-Bot-Api-Secret-Token"
MAX_BODY: Final = 1024 * 1024
"""Bytes of a webhook body the server lets through at most (``TelegramSpec.webhooks``; counted as it streams,
before the route reads it). A Bot API update is JSON: a text of at most 4,096 characters (``\\uXXXX``-escaped, up
to 12 bytes each for an emoji: about 48 KB), its entities, and the message it replies to or quotes with theirs.
1 MB is several times the worst case and still bounded; Telegram sends at most 40 at once (``setWebhook``'s
default ``max_connections``)."""
GROUP_INTERVAL: Final = 3.0
"""Seconds between two sends or edits into one group: at most 20 a minute, Telegram's limit per group."""
GROUP_PER_MINUTE: Final = 20
COSMETIC_RESERVE: Final = 4
"""Calls of a group's minute the counter and the board never take: they stay free for results."""
ASIDE_PATIENCE: Final = 5.0
"""Seconds "the President passed two policies" waits for the Chancellor's enactment to go with it: a quick
Chancellor's group gets one message, not two, of its 20 a minute (at a table without a group, each phone buzzes
once); a slow one's table hears who it waits for."""
BOARD_PATIENCE: Final = 30.0
"""Seconds a changed board waits at most for a quiet moment in a busy group; then it goes before the next call."""
PRIVATE_INTERVAL: Final = 1.0
"""Seconds between two sends or edits into one private chat (Telegram asks for about one a second)."""
COUNTER_INTERVAL: Final = 10.0
"""Seconds between two edits of a group's vote counter: it is folded, not edited on every vote."""
PRIVATE_COUNTER_INTERVAL: Final = 60.0
"""The same in a private chat (a table without a group): every phone would buzz through the vote otherwise."""
PACING: Final = Pacing(public_interval=GROUP_INTERVAL, public_per_minute=GROUP_PER_MINUTE,
                       private_interval=PRIVATE_INTERVAL, cosmetic_reserve=COSMETIC_RESERVE,
                       board_patience=BOARD_PATIENCE, aside_patience=ASIDE_PATIENCE, counter_interval=COUNTER_INTERVAL,
                       private_counter_interval=PRIVATE_COUNTER_INTERVAL)
CAPABILITIES: Final = Capabilities(buttons=True, images=True, toasts=True, word_style=WordStyle.SLASH,
                                   public_first=True, pacing=PACING)
"""Buttons, the board as a photo in a group, a press answered at once (``answerCallbackQuery``), and a group
that hears a result before the next prompt reaches a seat (the group is paced to 20 calls a minute)."""
TEXT_LIMIT: Final = 4096
CAPTION_LIMIT: Final = 1024
CALLBACK_LIMIT: Final = 64
"""Bytes of callback data Telegram keeps for a button."""
API_TIMEOUT: Final = 60.0
"""Seconds the sender thread waits for one Bot API call."""
KNOWN_MESSAGES: Final = 5000
"""Sent messages whose text the channel remembers, to edit them in place (older ones are edited from the press)."""

MENU: Final = (
    Verb.OPEN,
    Verb.START,
    Verb.BOARD,
    Verb.WHOAMI,
    Verb.WAITING,
    Verb.PAUSE,
    Verb.RESUME,
    Verb.NUDGE,
    Verb.ENDGAME,
    Verb.REMATCH,
    Verb.LANGUAGE,
    Verb.THEME,
    Verb.RULES,
    Verb.HELP,
)
"""The command menu (``set_my_commands``), in every language that has a catalog, from the grammar's words."""
_BOT_COMMAND: Final = re.compile(r"[a-z0-9_]{1,32}")


def menu(language: str) -> list[tuple[str, str]]:
    """(command, description) of the menu in a language: each verb's first word that Telegram takes as a command."""
    g = grammar()
    catalog = Catalog.load(DEFAULT_THEME, language)
    out = []
    for verb in MENU:
        words = [fold(w) for w in (g.shown(verb, language), *g.words[verb]) if w]
        word = next((w for w in words if _BOT_COMMAND.fullmatch(w)), None)
        if word is not None:
            out.append((word, catalog.text(f"word-{verb.value}")))
    return out


@dataclass(frozen=True, slots=True)
class TelegramSettings:
    """The Telegram channel's part of the settings."""

    token: str | None
    api_url: str | None
    secret: str | None
    """Checked on every webhook request: ``TELEGRAM_WEBHOOK_SECRET``, else derived from the token."""
    path: str

    @classmethod
    def of(cls, settings: Settings) -> TelegramSettings:
        env = settings.env
        token = env.get("TELEGRAM_TOKEN")
        secret = env.get("TELEGRAM_WEBHOOK_SECRET")
        if token and not secret:
            # Stable across restarts, unknown to anyone without the token.
            secret = hashlib.sha256(f"moderator-webhook:{token}".encode()).hexdigest()
        return cls(token=token, api_url=env.get("TELEGRAM_API_URL"), secret=secret,
                   path="/" + env.get("TELEGRAM_WEBHOOK_PATH", TELEGRAM_PATH).strip("/"))


def bot_api_url(api_url: str) -> str:
    """PTB's ``base_url`` for a Bot API server given as ``http://host:8081`` (or already ending in ``/bot``)."""
    url = api_url.rstrip("/")
    return url if url.endswith("/bot") or "{token}" in url else url + "/bot"


def build_application(
    token: str,
    *,
    api_url: str | None = None,
    request: BaseRequest | None = None,
    updates_request: BaseRequest | None = None,
    rate_limiter: bool = True,
    updater: bool = True,
) -> Application[Any, Any, Any, Any, Any, Any]:
    """A PTB ``Application``: our Bot API URL, and ``AIORateLimiter`` under our own pacing (``updater=False``:
    updates come from our webhook route instead of long polling)."""
    builder = Application.builder().token(token)
    if api_url:
        base = bot_api_url(api_url)
        builder = builder.base_url(base).base_file_url(base.removesuffix("/bot") + "/file/bot")
    if request is not None:
        builder = builder.request(request).get_updates_request(updates_request or request)
    if not updater:
        builder = builder.updater(None)
    if rate_limiter:
        # PTB paces the bot's calls overall but never retries a 429 itself (max_retries=0): it would sleep in the
        # one sender thread and stall every table. ``RetryAfter`` comes back to the outbox as TemporaryFailure.
        return builder.rate_limiter(AIORateLimiter(max_retries=0)).build()
    return builder.build()


def retry_seconds(exc: RetryAfter) -> float:
    """The seconds a ``RetryAfter`` asks us to wait."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PTB 22 warns that this becomes a timedelta
        value = exc.retry_after
    return value.total_seconds() if isinstance(value, timedelta) else float(value)


# --- Telegram as a whole: a token it refuses, a server out of reach -----------------------------------------------

PROVIDER: Final = "Telegram"


def refused() -> Refused:
    """Telegram refuses the token (revoked in BotFather, or mistyped): the line names the setting, never its value."""
    return Refused(PROVIDER, "TELEGRAM_TOKEN", "check it with @BotFather")


def provider_problem(exc: BaseException, *, connecting_only: bool = False) -> Problem | None:
    """What a Bot API error says of Telegram as a whole: the token refused (401 or 404 to any call: PTB's
    ``InvalidToken``), Telegram out of reach (a network error, a timeout, a request to wait), or nothing (None: an
    answer about this one call). ``connecting_only``: the call may have reached Telegram before it failed (a message
    sent, a press answered), so only a failure to connect says it is out of reach; a later timeout is the call's."""
    if isinstance(exc, InvalidToken):
        return refused()
    if isinstance(exc, RetryAfter) and not connecting_only:
        seconds = retry_seconds(exc)
        return Unreachable(PROVIDER, f"it asks to wait {seconds:g} s", retry_after=seconds)
    if not isinstance(exc, NetworkError) or isinstance(exc, BadRequest):
        return None
    if connecting_only and not isinstance(exc.__cause__, (httpx.ConnectError, httpx.ConnectTimeout)):
        return None
    return Unreachable(PROVIDER, str(exc) or type(exc).__name__)


@contextlib.contextmanager
def reaching() -> Iterator[None]:
    """Calls to Telegram that the channel cannot go on without (its start, a poll): a token Telegram refuses raised
    as ``Refused``, Telegram out of reach as ``Unreachable`` (neither with the library's words, which may quote
    the token)."""
    try:
        yield
    except TelegramError as exc:
        problem = provider_problem(exc)
        if problem is None:
            raise
        raise problem from None
