"""The Telegram channel: python-telegram-bot v22 updates in, the outbox out.

Usage::

    TELEGRAM_TOKEN=123456:ABC... moderator telegram     # long polling; MODERATOR_DB names the database

It translates and nothing else. An update becomes an ``Inbound`` for ``Service.handle`` (the address is the
person's private chat, ``chat`` the group it was typed in); the outbox's messages become Bot API calls through
``TelegramChannel``, which the service's ``Sender`` drives. The channel folds what it delivers so a game stays
cheap: everything due for one chat goes out as one message, the vote counter and the lobby are single messages
edited in place, a confirmation of a pressed button is shown by editing the prompt it answers, and a group
gets at most one send or edit every ``GROUP_INTERVAL`` seconds (Telegram allows 20 a minute per group).

Threads: PTB runs on the asyncio loop, and so does the service (its SQLite connection belongs to that thread).
The ``Sender`` runs on one worker thread with its own ``Store`` connection; the channel, called there, hands each
Bot API call back to the loop and waits for it. Nothing else crosses: button presses reach the channel and
reports (unreachable players, migrated groups) come back through thread-safe queues.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import io
import json
import logging
import os
import time
import warnings
import zlib
from collections import OrderedDict, deque
from collections.abc import Callable, Coroutine, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any, Final

import qrcode
from qrcode.image.pil import PilImage
from telegram import (
    Bot,
    BotCommand,
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    InputMediaPhoto,
    Message,
    MessageEntity,
    Update,
    User,
)
from telegram.constants import ChatType, ParseMode
from telegram.error import BadRequest, ChatMigrated, Forbidden, NetworkError, RetryAfter, TelegramError
from telegram.ext import (
    AIORateLimiter,
    Application,
    CallbackQueryHandler,
    ContextTypes,
    MessageHandler,
    filters,
)
from telegram.helpers import create_deep_linked_url
from telegram.request import BaseRequest

from ..board import BOARD_MESSAGE, Board, catalog_for, render_png
from ..catalog import DEFAULT_LANGUAGE, DEFAULT_THEME, Catalog, UnknownCatalog, languages, themes
from ..commands import (
    AddComputers,
    Ask,
    Choose,
    Command,
    Decide,
    Host,
    HostCommand,
    Inbound,
    Join,
    MovePhone,
    MoveSeat,
    OpenTable,
    Query,
    Seating,
    SetLanguage,
    SetReminders,
    SetTheme,
    Start,
)
from ..service import PermanentFailure, Sender, Service, Table, TemporaryFailure
from ..store import BoardMessage, Store, default_path

log = logging.getLogger(__name__)

CHANNEL: Final = "telegram"

GROUP_INTERVAL: Final = 3.0
"""Seconds between two sends or edits into one group: at most 20 a minute, Telegram's limit per group."""
GROUP_PER_MINUTE: Final = 20
PRIVATE_INTERVAL: Final = 1.0
"""Seconds between two sends or edits into one private chat (Telegram asks for about one a second)."""
COUNTER_INTERVAL: Final = 10.0
"""Seconds between two edits of a group's vote counter: it is folded, not edited on every vote."""
PRIVATE_COUNTER_INTERVAL: Final = 60.0
"""The same in a private chat (a table without a group): every phone would buzz through the vote otherwise."""
TEXT_LIMIT: Final = 4096
CAPTION_LIMIT: Final = 1024
CALLBACK_LIMIT: Final = 64
"""Bytes of callback data Telegram keeps for a button."""
API_TIMEOUT: Final = 60.0
"""Seconds the sender thread waits for one Bot API call."""
KNOWN_MESSAGES: Final = 5000
"""Sent messages whose text the channel remembers, to edit them in place (older ones are edited from the update)."""

COMMANDS: Final = (
    "newgame",
    "startgame",
    "board",
    "whoami",
    "waiting",
    "pause",
    "resume",
    "nudge",
    "endgame",
    "rematch",
    "language",
    "theme",
    "rules",
    "help",
)
"""The command menu, registered with ``set_my_commands`` in every language that has a catalog."""
CATALOG_IDS: Final = frozenset(f"command-{c}" for c in COMMANDS)
"""Catalog ids this module renders itself (the menu's descriptions); the catalog test counts them as used."""

_QUERIES: Final = {
    "board": Query.BOARD,
    "whoami": Query.WHOAMI,
    "waiting": Query.WAITING,
    "rules": Query.RULES,
    "help": Query.HELP,
}
_PUBLIC_QUERIES: Final = frozenset({"board", "waiting", "rules", "help"})
"""Asked in a group, these are answered in the group; ``whoami`` is always answered privately."""
_HOST: Final = {
    "pause": HostCommand.PAUSE,
    "resume": HostCommand.RESUME,
    "nudge": HostCommand.NUDGE,
    "endgame": HostCommand.END,
    "rematch": HostCommand.REMATCH,
}
_VOTES: Final = {"ja": "ja", "nein": "nein", "yes": "ja", "no": "nein", "j": "ja", "n": "nein"}

# Catalog ids the channel folds specially.
_ECHOES: Final = frozenset({"vote-recorded", "vote-changed", "policy-discarded", "party-membership-seen"})
"""Replies to a pressed button: shown by editing the prompt that was pressed, not as a new message."""
_LOBBY: Final = frozenset({"seat-taken", "seats-list", "computers-added"})
"""The seat list: one message per chat, edited in place as people join."""
_COUNTER: Final = "vote-progress"
_NOMINATION: Final = "chancellor-nominated"
"""A message holding a nomination becomes the home of that vote's counter."""
_RESULTS: Final = frozenset({"election-elected", "election-rejected"})

_ARROW: Final = "\u27a1\ufe0f "
_UP: Final = "\u2b06\ufe0f "
_COMPUTER: Final = "\U0001f916 +1"
_GO: Final = "\u25b6\ufe0f"
_SCREEN: Final = "\U0001f4fa"
_SEAT: Final = "\U0001fa91 "


# --- configuration ----------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Settings:
    """What ``moderator telegram`` reads from the environment (or a ``.env`` file in the working directory)."""

    token: str | None
    api_url: str | None
    db_path: Path

    @classmethod
    def load(cls, environ: dict[str, str] | None = None, cwd: Path | None = None) -> Settings:
        """The environment wins over ``.env``; ``MODERATOR_DB`` names the database."""
        env = dict(os.environ if environ is None else environ)
        dotenv = read_dotenv((cwd or Path.cwd()) / ".env")
        merged = {**dotenv, **{k: v for k, v in env.items() if v}}
        db = merged.get("MODERATOR_DB")
        return cls(
            token=merged.get("TELEGRAM_TOKEN") or None,
            api_url=merged.get("TELEGRAM_API_URL") or None,
            db_path=Path(db).expanduser() if db else default_path(),
        )


def read_dotenv(path: Path) -> dict[str, str]:
    """``KEY=value`` lines of a ``.env`` file (comments, blank lines and ``export`` allowed; quotes stripped)."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return {}
    out: dict[str, str] = {}
    for line in lines:
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, value = line.removeprefix("export ").partition("=")
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        out[key.strip()] = value
    return out


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
) -> Application[Any, Any, Any, Any, Any, Any]:
    """A PTB ``Application``: our Bot API URL, and ``AIORateLimiter`` under our own pacing."""
    builder = Application.builder().token(token)
    if api_url:
        base = bot_api_url(api_url)
        builder = builder.base_url(base).base_file_url(base.removesuffix("/bot") + "/file/bot")
    if request is not None:
        builder = builder.request(request).get_updates_request(updates_request or request)
    if rate_limiter:
        # PTB paces the bot's calls overall but never retries a 429 itself (max_retries=0): it would sleep in the
        # one sender thread and stall every table. ``RetryAfter`` comes back to the outbox as TemporaryFailure.
        return builder.rate_limiter(AIORateLimiter(max_retries=0)).build()
    return builder.build()


# --- rendering --------------------------------------------------------------------------------------------


def escape(text: str) -> str:
    """Text for ``parse_mode=HTML``: every ``<``, ``>`` and ``&`` escaped (names may hold any of them)."""
    return html.escape(text, quote=False)


def qr_png(url: str) -> bytes:
    """A QR code of ``url`` as PNG bytes."""
    code = qrcode.QRCode(error_correction=qrcode.constants.ERROR_CORRECT_M, box_size=10, border=4,
                         image_factory=PilImage)
    code.add_data(url)
    image = code.make_image()
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def _part(body: dict[str, Any]) -> tuple[str, str | None]:
    """One body as HTML, and its neutral first line if it carries a secret (the secret goes in a spoiler)."""
    text = str(body.get("text", ""))
    if not body.get("secret"):
        return escape(text), None
    header, _, secret = text.partition("\n")
    return (f"<tg-spoiler>{escape(secret)}</tg-spoiler>" if secret else ""), header


def compose(bodies: Sequence[dict[str, Any]]) -> tuple[str, bool]:
    """Several bodies as one message's HTML, and whether it carries a secret.

    A secret message starts with the neutral line (so a lock-screen preview shows nothing) and hides every
    secret part in spoiler formatting; public parts in the same message stay plain.
    """
    parts: list[str] = []
    header: str | None = None
    for body in bodies:
        part, neutral = _part(body)
        header = header or neutral
        if part:
            parts.append(part)
    text = "\n\n".join(parts)
    if header is not None:
        text = escape(header) + ("\n\n" + text if text else "")
    return text, header is not None


def callback(table: str | None, decision: int | None, token: str) -> str:
    """Callback data ``<table>:<decision>:<token>``; at most 64 bytes."""
    data = f"{table or ''}:{'-' if decision is None else decision}:{token}"
    assert len(data.encode()) <= CALLBACK_LIMIT, data
    return data


def _rows(buttons: list[InlineKeyboardButton], longest: int) -> list[list[InlineKeyboardButton]]:
    per_row = 3 if longest <= 10 else 2 if longest <= 18 else 1
    return [buttons[i : i + per_row] for i in range(0, len(buttons), per_row)]


def prompt_keyboard(body: dict[str, Any]) -> InlineKeyboardMarkup | None:
    """The buttons of a prompt: one per choice, carrying table, decision and action token."""
    choices = body.get("choices") or []
    if not choices:
        return None
    table, decision = body.get("table"), body.get("decision")
    buttons = [InlineKeyboardButton(c["label"], callback_data=callback(table, decision, c["token"])) for c in choices]
    return InlineKeyboardMarkup(_rows(buttons, max(len(c["label"]) for c in choices)))


def seating_version(names: Sequence[str]) -> str:
    """A short fingerprint of a seating order: a move button made for another order is no longer current."""
    return f"{zlib.crc32(chr(31).join(names).encode()) & 0xFFFF:04x}"


def lobby_keyboard(body: dict[str, Any]) -> InlineKeyboardMarkup | None:
    """The host's seating controls: move a seat up one place, add a computer player, start."""
    table, seats = body.get("table"), body.get("seats")
    if not body.get("host") or not table or seats is None:
        return None
    version = seating_version(seats)
    moves = [
        InlineKeyboardButton(_UP + name, callback_data=f"{table}:L:u{i}.{version}")
        for i, name in enumerate(seats)
        if i > 0
    ]
    rows = _rows(moves, max((len(n) for n in seats), default=0) + 2)
    rows.append(
        [
            InlineKeyboardButton(_COMPUTER, callback_data=f"{table}:L:cpu"),
            InlineKeyboardButton(_GO, callback_data=f"{table}:L:go"),
        ]
    )
    return InlineKeyboardMarkup(rows)


def chunks(bodies: Sequence[dict[str, Any]], limit: int = TEXT_LIMIT) -> list[list[dict[str, Any]]]:
    """Bodies grouped so that each group composes to at most ``limit`` characters (a long body alone)."""
    out: list[list[dict[str, Any]]] = [[]]
    for body in bodies:
        if out[-1] and len(compose(out[-1] + [body])[0]) > limit:
            out.append([])
        out[-1].append(body)
    return [c for c in out if c]


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


# --- the channel --------------------------------------------------------------------------------------------


@dataclass
class _Live:
    """A message the channel may edit in place: its text, buttons, and what was appended to it."""

    message_id: int
    html: str
    markup: InlineKeyboardMarkup | None = None
    choice: str = ""
    counter: str = ""
    table: str | None = None
    protected: bool = False
    """Sent with ``protect_content``: only such a message may have a secret edited into it."""

    def render(self) -> str:
        return "\n\n".join(p for p in (self.html, self.choice, self.counter) if p)


@dataclass(frozen=True, slots=True)
class Pressed:
    """A button press the service accepted: its prompt is edited to show the choice."""

    chat: int
    message_id: int
    html: str
    """The prompt's text as the update showed it (used when the channel does not remember the message)."""
    label: str
    secret: bool
    keep: InlineKeyboardMarkup | None
    """Buttons to keep (a vote can be changed until the last vote is in); None removes them."""
    protected: bool = False
    """The prompt was sent with ``protect_content`` (used when the channel does not remember the message)."""


@dataclass
class _Pace:
    last: float = float("-inf")
    counter: float = float("-inf")
    blocked_until: float = float("-inf")
    window: deque[float] = field(default_factory=deque)


class TelegramChannel:
    """The service's ``Channel`` for Telegram: folds the outbox into few Bot API calls (runs on the sender thread)."""

    def __init__(self, bot: Bot, loop: asyncio.AbstractEventLoop, *, clock: Callable[[], float] = time.time,
                 store: Store | None = None, screen_url: str | None = None) -> None:
        self.bot = bot
        self.screen_url = screen_url
        """Where the browser channel serves table screens (``<url>/table/<id>``), if it is on."""
        self.loop = loop
        self.clock = clock
        self.store = store
        """The sender thread's database connection: where the board message of each chat is remembered."""
        self._boards: dict[tuple[str, str], BoardMessage] = {}
        """Board messages by (chat, table) when there is no ``store``."""
        self._lobby: dict[int, _Live] = {}
        self._counter: dict[int, _Live] = {}
        self._voting: dict[int, bool] = {}
        self._known: OrderedDict[tuple[int, int], _Live] = OrderedDict()
        self._pace: dict[int, _Pace] = {}
        self._moved: dict[int, int] = {}
        self._reported: set[str] = set()
        self._pending: dict[int, list[Pressed]] = {}
        # Thread-safe hand-overs between the loop thread and the sender thread.
        self._pressed: deque[Pressed] = deque()
        self._back: deque[str] = deque()
        self._notices: deque[tuple[str, str, str]] = deque()

    # --- hand-overs -----------------------------------------------------------------------------------

    def pressed(self, press: Pressed) -> None:
        """(Loop thread.) A press was accepted: its prompt shows the choice with the next delivery."""
        self._pressed.append(press)

    def reachable(self, address: str) -> None:
        """(Loop thread.) This person wrote to us: report them again if they become unreachable later."""
        self._back.append(address)

    def take_notices(self) -> list[tuple[str, str, str]]:
        """(Loop thread.) ``("unreachable", address, "")`` and ``("moved", old, new)`` since the last call."""
        out = []
        while self._notices:
            out.append(self._notices.popleft())
        return out

    # --- the Channel protocol ---------------------------------------------------------------------------

    def send(self, address: str, body: dict[str, Any]) -> None:
        """Deliver one message (see ``send_batch``)."""
        result = self.send_batch(address, [body])[0]
        if result is not None:
            raise result

    def send_batch(self, address: str, bodies: Sequence[dict[str, Any]]) -> list[Exception | None]:
        """Deliver everything due for one chat, folded into as few calls as pacing and Telegram allow."""
        self._drain()
        chat = self._moved.get(int(address), int(address))
        keep = _relevant(bodies)
        results: list[Exception | None] = [None] * len(bodies)
        if not keep:
            return results  # only superseded vote counters: the newer count says it all
        kept = [bodies[i] for i in keep]
        wait = self._wait(chat, kept)
        if wait > 0:
            for i in keep:
                results[i] = TemporaryFailure("paced", wait)
            return results
        # The board image gets its own result: a board that fails must not send the text before it again.
        boards = [i for i in keep if bodies[i].get("message_id") == BOARD_MESSAGE]
        failure = self._attempt(address, chat, [bodies[i] for i in keep if i not in boards])
        for i in keep:
            results[i] = failure
        for i in boards:
            results[i] = failure or self._attempt(address, chat, [bodies[i]])
        return results

    def flush(self) -> int:
        """Show accepted presses whose chat got nothing else to fold them into; returns how many edits."""
        self._drain()
        done = 0
        for chat in list(self._pending):
            # A press is shown at once in a private chat (a person presses no faster than Telegram allows).
            if chat < 0:
                paced = self._wait(chat, [])
            else:
                paced = self._pace.setdefault(chat, _Pace()).blocked_until - self.clock()
            if paced > 0:
                continue
            if self._attempt(str(chat), chat, []) is None:
                done += 1
        return done

    # --- internals --------------------------------------------------------------------------------------

    def _drain(self) -> None:
        while self._pressed:
            press = self._pressed.popleft()
            self._pending.setdefault(press.chat, []).append(press)
        while self._back:
            self._reported.discard(self._back.popleft())

    def _wait(self, chat: int, bodies: Sequence[dict[str, Any]]) -> float:
        """Seconds until this chat may get another send or edit (0: now)."""
        now = self.clock()
        pace = self._pace.setdefault(chat, _Pace())
        wait = pace.blocked_until - now
        if chat < 0:
            while pace.window and pace.window[0] <= now - 60.0:
                pace.window.popleft()
            if len(pace.window) >= GROUP_PER_MINUTE:
                wait = max(wait, pace.window[0] + 60.0 - now)
            wait = max(wait, pace.last + GROUP_INTERVAL - now)
        else:
            wait = max(wait, pace.last + PRIVATE_INTERVAL - now)
        board = chat < 0 and any(b.get("message_id") == BOARD_MESSAGE for b in bodies) and len(bodies) > 1
        # The board image is a call of its own after the text: leave room for both in this minute.
        if board and len(pace.window) >= GROUP_PER_MINUTE - 1:
            wait = max(wait, pace.window[-(GROUP_PER_MINUTE - 1)] + 60.0 - now)
        shown = [b for b in bodies if b.get("message_id") != BOARD_MESSAGE]  # a vote leaves the board as it was
        if shown and all(b.get("message_id") == _COUNTER for b in shown):
            interval = COUNTER_INTERVAL if chat < 0 else PRIVATE_COUNTER_INTERVAL
            wait = max(wait, pace.counter + interval - now)
        return max(wait, 0.0)

    def _sent(self, chat: int, *, counter: bool = False) -> None:
        now = self.clock()
        pace = self._pace.setdefault(chat, _Pace())
        pace.last = now
        if chat < 0:
            pace.window.append(now)
        if counter:
            pace.counter = now

    def _attempt(self, address: str, chat: int, bodies: list[dict[str, Any]], *,
                 retry: bool = True) -> Exception | None:
        """Deliver, translating Telegram's errors into the outbox's failures."""
        try:
            self._deliver(chat, bodies)
        except ChatMigrated as exc:
            # Only sends into ``chat`` get here (the QR code's own target is handled in ``_join_message``).
            new = self._migrate(chat, exc)
            if not retry or new == chat:
                return TemporaryFailure(f"telegram: {chat} moved to {new}")
            return self._attempt(address, new, bodies, retry=False)  # once: the new chat is where it goes
        except RetryAfter as exc:
            seconds = _seconds(exc)
            self._pace.setdefault(chat, _Pace()).blocked_until = self.clock() + seconds
            return TemporaryFailure(f"telegram: retry_after={seconds:g}", seconds)
        except (Forbidden, BadRequest) as exc:
            failed = getattr(exc, "moderator_chat", chat)  # the QR code goes to a group, not to ``chat``
            if failed == chat and (isinstance(exc, Forbidden)
                                   or "chat_not_found" in exc.message.lower().replace(" ", "_")):
                self._unreachable(address)
            log.warning("telegram: %s refused: %s", failed, exc.message)
            return PermanentFailure(f"telegram: {failed} refused: {exc.message}")
        except (NetworkError, TimeoutError) as exc:
            return TemporaryFailure(f"telegram: {exc}")
        except TelegramError as exc:
            log.warning("telegram: %s: %s", chat, exc)
            return TemporaryFailure(f"telegram: {exc}")
        return None

    def _migrate(self, chat: int, exc: ChatMigrated) -> int:
        """``chat`` (the chat that raised) became the supergroup ``exc`` names: map it and report it."""
        new = int(exc.new_chat_id)
        if new != chat:
            log.info("telegram: chat %s moved to %s", chat, new)
            self._moved[chat] = new
            self._notices.append(("moved", str(chat), str(new)))
        return new

    def _unreachable(self, address: str) -> None:
        self._pending.pop(int(address), None)
        if int(address) > 0 and address not in self._reported:
            self._reported.add(address)
            self._notices.append(("unreachable", address, ""))

    def _deliver(self, chat: int, bodies: list[dict[str, Any]]) -> None:
        """The calls for one chat's folded bodies: join codes, choices shown, the lobby, the counter, the rest."""
        presses = self._pending.pop(chat, [])
        echoes = [b for b in bodies if b.get("message_id") in _ECHOES] if presses else []
        folded: list[dict[str, Any]] = []
        try:
            for i, press in enumerate(presses):
                folded = self._show_choice(chat, press, echoes if i == len(presses) - 1 else [])
        except TelegramError:
            self._pending[chat] = presses  # not shown yet (flood, network): the next attempt shows them
            raise
        rest = [b for b in bodies if not any(b is e for e in folded)]  # echoes not shown go as new messages
        text: list[dict[str, Any]] = []
        boards = [b for b in rest if b.get("message_id") == BOARD_MESSAGE]
        for body in rest:
            mid = body.get("message_id")
            if mid == BOARD_MESSAGE:
                continue  # drawn after the text it follows (only the latest: ``_relevant``)
            if body.get("join_code"):
                self._flush_text(chat, text)
                self._join_message(chat, body)
            elif mid in _LOBBY or (mid == "game-starting" and chat in self._lobby):
                self._flush_text(chat, text)
                self._lobby_message(chat, body)
            elif mid == _COUNTER:
                self._flush_text(chat, text)
                self._counter_message(chat, body)
            else:
                text.append(body)
        self._flush_text(chat, text)
        if boards:
            self._board_message(chat, boards[-1])

    def _call(self, coroutine: Coroutine[Any, Any, Any]) -> Any:
        """Run one Bot API call on the loop and wait for it (never call this on the loop's own thread).

        A call that takes longer than ``API_TIMEOUT`` is cancelled before the outbox retries it, so a slow call
        cannot land after its retry (a message sent twice).
        """
        future = asyncio.run_coroutine_threadsafe(coroutine, self.loop)
        try:
            return future.result(API_TIMEOUT)
        except TimeoutError:
            future.cancel()
            raise

    def _remember(self, chat: int, live: _Live) -> None:
        self._known[(chat, live.message_id)] = live
        self._known.move_to_end((chat, live.message_id))
        while len(self._known) > KNOWN_MESSAGES:
            self._known.popitem(last=False)

    def _edit(self, chat: int, live: _Live, *, counter: bool = False) -> None:
        try:
            self._call(
                self.bot.edit_message_text(
                    _cut(live.render(), TEXT_LIMIT), chat_id=chat, message_id=live.message_id,
                    parse_mode=ParseMode.HTML, reply_markup=live.markup,
                )
            )
        except BadRequest as exc:
            if "not modified" not in exc.message.lower():
                raise
        self._sent(chat, counter=counter)

    def _send_text(self, chat: int, html_text: str, *, secret: bool, markup: InlineKeyboardMarkup | None) -> _Live:
        message: Message = self._call(
            self.bot.send_message(
                chat, _cut(html_text, TEXT_LIMIT), parse_mode=ParseMode.HTML, reply_markup=markup,
                protect_content=secret, disable_web_page_preview=True,
            )
        )
        self._sent(chat)
        live = _Live(message.message_id, html_text, markup, protected=secret)
        self._remember(chat, live)
        return live

    def _flush_text(self, chat: int, bodies: list[dict[str, Any]]) -> None:
        """Send plain bodies as few messages as their length allows; the last one carries the buttons."""
        if not bodies:
            return
        groups = chunks(bodies)
        for group in groups:
            html_text, secret = compose(group)
            prompts = [b for b in group if b.get("choices")]
            markup = prompt_keyboard(prompts[-1]) if prompts else None
            live = self._send_text(chat, html_text, secret=secret, markup=markup)
            ids = [b.get("message_id") for b in group]
            if any(m in _RESULTS for m in ids):
                self._counter.pop(chat, None)
                self._voting[chat] = False
            if _NOMINATION in ids and not any(m in _RESULTS for m in ids[ids.index(_NOMINATION) :]):
                self._counter[chat] = live  # this vote's counter is shown here
                self._voting[chat] = True
        bodies.clear()

    def _show_choice(self, chat: int, press: Pressed, echoes: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Edit the pressed prompt to show the choice (best effort); returns the echoes it shows.

        A prompt that cannot be edited (deleted, too old) is left as it is: the press is dropped, never retried,
        and its echoes go out as ordinary messages; it never decides the fate of the rest of the batch.
        """
        live = self._known.get((chat, press.message_id)) or _Live(
            press.message_id, press.html, protected=press.protected)
        before = (live.markup, live.choice)
        # A secret echo is folded only into a protected prompt; otherwise it goes as its own protected message.
        shown = [e for e in echoes if live.protected or not e.get("secret")]
        live.markup = press.keep
        if shown:
            live.choice = "\n\n".join(_part(e)[0] for e in shown)
        elif len(shown) < len(echoes):
            live.choice = ""  # the choice itself is the secret: the prompt only loses its buttons
            if press.keep is not None:
                return []  # nothing changes on the prompt
        else:
            label = escape(press.label)
            live.choice = _ARROW + (f"<tg-spoiler>{label}</tg-spoiler>" if press.secret else label)
        try:
            self._edit(chat, live)
        except BadRequest as exc:
            log.info("telegram: could not show a choice in %s: %s", chat, exc.message)
            live.markup, live.choice = before
            return []
        self._remember(chat, live)
        return shown

    def _join_message(self, chat: int, body: dict[str, Any]) -> None:
        """The table's QR code and Join button (deep link ``https://t.me/<bot>?start=<code>``)."""
        code = str(body["join_code"])
        target = int(body["public"]) if body.get("public") else chat
        target = self._moved.get(target, target)
        url = create_deep_linked_url(self.bot.username, code)
        rows = [[InlineKeyboardButton(_SEAT + code, url=url)]]
        if body.get("table"):
            # The host can fill seats with computer players and start before the seat list exists.
            table = body["table"]
            rows.append([InlineKeyboardButton(_COMPUTER, callback_data=f"{table}:L:cpu"),
                         InlineKeyboardButton(_GO, callback_data=f"{table}:L:go")])
            if self.screen_url:  # the board for a laptop or TV at the table
                rows.append([InlineKeyboardButton(_SCREEN, url=f"{self.screen_url}/table/{table}")])
        markup = InlineKeyboardMarkup(rows)
        caption = _cut(compose([body])[0], CAPTION_LIMIT)
        png = qr_png(url)
        try:
            self._call(self.bot.send_photo(target, photo=png, caption=caption, parse_mode=ParseMode.HTML,
                                           reply_markup=markup))
        except ChatMigrated as exc:  # the group became a supergroup: the group moves, not the host's chat
            target = self._migrate(target, exc)
            try:
                self._call(self.bot.send_photo(target, photo=png, caption=caption, parse_mode=ParseMode.HTML,
                                               reply_markup=markup))
            except ChatMigrated as again:  # never map ``chat`` for what its target did: retried later
                raise TelegramError(f"{target} moved again to {again.new_chat_id}") from again
            except (Forbidden, BadRequest) as exc:
                setattr(exc, "moderator_chat", target)  # noqa: B010  # blame the group, not the host
                raise
        except (Forbidden, BadRequest) as exc:
            setattr(exc, "moderator_chat", target)  # noqa: B010  # blame the group, not the host
            raise
        self._sent(target)

    def _lobby_message(self, chat: int, body: dict[str, Any]) -> None:
        """The seat list, edited in place; the game's start closes it (its buttons go)."""
        html_text = compose([body])[0]
        starting = body.get("message_id") == "game-starting"
        markup = None if starting else lobby_keyboard(body)
        live = self._lobby.get(chat)
        if live is not None and live.table == body.get("table"):
            live.html, live.markup = html_text, markup
            try:
                self._edit(chat, live)
            except BadRequest:
                live = None  # deleted or too old to edit: send a new one
        if live is None or live.table != body.get("table"):
            live = self._send_text(chat, html_text, secret=False, markup=markup)
            live.table = body.get("table")
        if starting:
            self._lobby.pop(chat, None)
        else:
            self._lobby[chat] = live

    def _counter_message(self, chat: int, body: dict[str, Any]) -> None:
        """'4 of 7 have voted': appended to the nomination's message and edited there, or a message of its own."""
        if self._voting.get(chat) is False:
            return  # a count that was waiting for its turn, overtaken by the result: nothing left to say
        counter = compose([body])[0]
        live = self._counter.get(chat)
        if live is not None:
            live.counter = counter
            try:
                self._edit(chat, live, counter=True)
                return
            except BadRequest:
                pass
        live = self._send_text(chat, counter, secret=False, markup=None)
        self._sent(chat, counter=True)
        self._counter[chat] = _Live(live.message_id, "", None, counter=counter)

    def _board_message(self, chat: int, body: dict[str, Any]) -> None:
        """The board image: sent as a photo once per game, then that one message is edited to the latest board.

        A board that looks like the one shown (a vote changed only the step) costs no call. A message that can
        no longer be edited (deleted, too old) is replaced by a new photo; its id is kept in the database, so a
        restart edits the same message.
        """
        board = Board.from_json(body["board"])
        table, game = str(body.get("table") or ""), int(body.get("game") or 0)
        drawn = json.dumps(board.drawn(), sort_keys=True, ensure_ascii=False)
        shown = self._board_shown(chat, table)
        if shown is not None and shown.game == game and shown.drawn == drawn:
            return
        png = render_png(board, catalog_for(board, str(body.get("language") or DEFAULT_LANGUAGE)))
        if shown is not None and shown.game == game:
            try:
                self._call(self.bot.edit_message_media(
                    InputMediaPhoto(png, filename="board.png"), chat_id=chat, message_id=int(shown.message_id)))
                self._sent(chat)
                self._remember_board(chat, table, BoardMessage(game, shown.message_id, drawn))
                return
            except BadRequest as exc:
                if "not modified" in exc.message.lower():
                    self._remember_board(chat, table, BoardMessage(game, shown.message_id, drawn))
                    return
                log.info("telegram: the board in %s cannot be edited, sending a new one: %s", chat, exc.message)
        message: Message = self._call(self.bot.send_photo(chat, photo=png, filename="board.png"))
        self._sent(chat)
        self._remember_board(chat, table, BoardMessage(game, str(message.message_id), drawn))

    def _board_shown(self, chat: int, table: str) -> BoardMessage | None:
        if self.store is None:
            return self._boards.get((str(chat), table))
        return self.store.board_message(CHANNEL, str(chat), table)

    def _remember_board(self, chat: int, table: str, shown: BoardMessage) -> None:
        if self.store is None:
            self._boards[(str(chat), table)] = shown
        else:
            self.store.set_board_message(CHANNEL, str(chat), table, shown, self.clock())


def _relevant(bodies: Sequence[dict[str, Any]]) -> list[int]:
    """Indexes of the bodies worth delivering: a vote counter is superseded by any later message but a board
    image, a board image by a later board image."""
    counters = [i for i, b in enumerate(bodies) if b.get("message_id") == _COUNTER]
    boards = [i for i, b in enumerate(bodies) if b.get("message_id") == BOARD_MESSAGE]
    drop = set(counters[:-1]) | set(boards[:-1])
    if counters and any(i not in boards for i in range(counters[-1] + 1, len(bodies))):
        drop.add(counters[-1])
    return [i for i in range(len(bodies)) if i not in drop]


def _seconds(exc: RetryAfter) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PTB 22 warns that this becomes a timedelta
        value = exc.retry_after
    return value.total_seconds() if isinstance(value, timedelta) else float(value)


# --- updates in ---------------------------------------------------------------------------------------------


def _language(user: User | None) -> str | None:
    code = (user.language_code or "").split("-")[0].lower() if user is not None else ""
    return code if code in languages(DEFAULT_THEME) else None


def _progress(table: Table | None) -> tuple[int, int] | None:
    """How far a table's game has come: it changes exactly when an action was applied."""
    return None if table is None else (table.row.game, len(table.actions))


class TelegramBot:
    """Updates in (handlers on the loop thread), the outbox out (the ``Sender`` on one worker thread)."""

    def __init__(self, service: Service, db_path: Path, *, clock: Callable[[], float] = time.time,
                 screen_url: str | None = None, store_factory: Callable[[], Store] | None = None) -> None:
        self.service = service
        self.screen_url = screen_url
        self.store_factory = store_factory or (lambda: Store(db_path))
        """The sender thread's own connection (``serve`` gives one that shares its process's write lock)."""
        self.db_path = db_path
        self.clock = clock
        self.channel: TelegramChannel | None = None
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="telegram-sender")
        self._sender: Sender | None = None
        self._sender_store: Store | None = None
        self._kick = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    # --- set-up -------------------------------------------------------------------------------------------

    def install(self, app: Application) -> None:  # type: ignore[type-arg]
        """Register the handlers on an application."""
        app.add_handler(MessageHandler(filters.StatusUpdate.MIGRATE, self.on_migrated))
        app.add_handler(MessageHandler(filters.COMMAND, self.on_command))
        app.add_handler(MessageHandler(filters.TEXT & filters.ChatType.PRIVATE, self.on_text))
        app.add_handler(CallbackQueryHandler(self.on_button))
        app.add_error_handler(self.on_error)

    async def start(self, app: Application) -> None:  # type: ignore[type-arg]
        """After ``initialize``: the channel, the command menu, the tables under way; then deliver."""
        self.channel = TelegramChannel(app.bot, asyncio.get_running_loop(), clock=self.clock,
                                       screen_url=self.screen_url)
        for language in languages(DEFAULT_THEME):
            catalog = Catalog.load(DEFAULT_THEME, language)
            menu = [BotCommand(c, catalog.text(f"command-{c}")) for c in COMMANDS]
            await app.bot.set_my_commands(menu, language_code=None if language == DEFAULT_LANGUAGE else language)
        resumed = self.service.resume_all()
        log.info("telegram: @%s ready; resumed %d tables", app.bot.username, len(resumed))
        await self.deliver()

    async def stop(self) -> None:
        """Stop delivering and release the sender thread."""
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None
        if self._sender_store is not None:
            store, self._sender_store = self._sender_store, None
            await asyncio.get_running_loop().run_in_executor(self._executor, store.close)
        self._executor.shutdown(wait=True)

    # --- delivery -----------------------------------------------------------------------------------------

    def _round(self) -> int:
        """(Sender thread.) Deliver what is due, then show presses nothing else carried."""
        assert self.channel is not None
        if self._sender is None:
            self._sender_store = self.store_factory()
            self._sender = Sender(self._sender_store, {CHANNEL: self.channel}, clock=self.clock)
            self.channel.store = self._sender_store  # board message ids, on the thread that sends
        return self._sender.deliver_due() + self.channel.flush()

    async def deliver(self) -> int:
        """Deliver until nothing more is due now; apply the channel's reports in between."""
        assert self.channel is not None
        loop = asyncio.get_running_loop()
        total = 0
        for _ in range(1000):
            delivered = await loop.run_in_executor(self._executor, self._round)
            notices = self.channel.take_notices()
            for kind, first, second in notices:
                if kind == "unreachable":
                    self.service.unreachable(CHANNEL, first)
                else:
                    self.service.public_moved(CHANNEL, first, second)
            total += delivered
            if not delivered and not notices:
                break
        return total

    def run_sender(self, interval: float = 0.5) -> None:
        """Deliver in the background: after every input, and every ``interval`` seconds for retries."""

        async def loop() -> None:
            while True:
                try:
                    self.service.tick()  # reminders the host turned on (/reminders N), if any fell due
                    await self.deliver()
                except Exception:  # keep delivering: one bad message must not stop the table
                    log.exception("telegram: delivery failed")
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._kick.wait(), interval)
                self._kick.clear()

        self._task = asyncio.get_running_loop().create_task(loop())

    def _handle(self, inbound: Inbound) -> None:
        self.service.handle(inbound)
        self._kick.set()

    # --- handlers -----------------------------------------------------------------------------------------

    def _inbound(self, update: Update, command: Command, *, raw: str = "", public: bool = False,
                 external_id: str | None = None) -> Inbound:
        user, chat = update.effective_user, update.effective_chat
        assert user is not None and chat is not None
        group = chat.type != ChatType.PRIVATE
        if self.channel is not None:
            self.channel.reachable(str(user.id))
        return Inbound(
            CHANNEL,
            str(chat.id) if public and group else str(user.id),
            command,
            external_id=external_id or str(update.update_id),
            language=_language(user),
            chat=str(chat.id) if group else None,
            raw=raw,
        )

    async def on_command(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """A ``/command``: one of the menu, ``/start <code>`` from the QR code, or ``/ja`` ``/nein``."""
        message, user, chat = update.effective_message, update.effective_user, update.effective_chat
        if message is None or user is None or chat is None or not message.text:
            return
        head, *args = message.text.split()
        name, _, bot = head[1:].partition("@")
        if bot and bot.lower() != (context.bot.username or "").lower():
            return  # addressed to another bot in this group
        name = name.lower()
        group = chat.type != ChatType.PRIVATE
        first = user.first_name or str(user.id)
        command: Command | None = None
        public = False
        match name:
            case "start" if not group:
                command = Join(args[0], first) if args else Ask(Query.WHOAMI)
            case "join" if args:
                command = Join(args[0], first)
            case "newgame":
                theme = args[0] if args else None
                command = OpenTable(first, theme=theme, public=group)
            case "startgame":
                command = Start()
            case _ if name in _QUERIES:
                command, public = Ask(_QUERIES[name]), name in _PUBLIC_QUERIES
            case _ if name in _HOST:
                command = Host(_HOST[name])
            case "ja" | "nein":
                if group:
                    await _delete(message)  # a vote is secret: off the group's screen, where the bot may
                command = Decide("vote", name)
            case "language":
                if not args:
                    await self._picker(update, "lang", languages(DEFAULT_THEME))
                    return
                command = SetLanguage(args[0].lower())
            case "theme":
                if not args:
                    await self._picker(update, "theme", themes())
                    return
                command = SetTheme(args[0].lower())
            case "computers":
                command = AddComputers(int(args[0]) if args and _number(args[0]) else None)
            case "seating" if args:
                command = Seating(tuple(n.strip() for n in " ".join(args).split(",") if n.strip()))
            case "movephone" if args:
                command = MovePhone(" ".join(args))
            case "reminders":
                command = SetReminders(int(args[0]) if args and _number(args[0]) else None)
            case _:
                if group:
                    return
                command = Decide("?", message.text)
        self._handle(self._inbound(update, command, raw=message.text, public=public))

    async def on_text(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """Typed words in the private chat: ``ja``/``nein``, an option's number, a join code, a name."""
        message = update.effective_message
        if message is None or not message.text:
            return
        text = message.text.strip()
        word = text.casefold()
        command: Command
        if word in _VOTES:
            command = Decide("vote", _VOTES[word])
        elif _number(word):
            command = Choose(word, None)
        elif word in _QUERIES:
            command = Ask(_QUERIES[word])
        else:
            head, _, rest = text.partition(" ")
            if head.casefold() in ("nominate", "investigate", "execute", "special_election", "discard", "enact"):
                command = Decide(head.casefold(), rest)
            else:
                command = Decide("?", text)
        self._handle(self._inbound(update, command, raw=text))

    async def on_button(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """A pressed button, answered at once: a choice, a lobby control, or a language or theme."""
        query = update.callback_query
        if query is None or query.data is None:
            return
        table_id, _, rest = query.data.partition(":")
        kind, _, arg = rest.partition(":")
        table = self.service.table(table_id) if table_id else None
        if kind == "L":
            await query.answer()
            command = _lobby_command(table, arg)
            if command is not None:
                self._handle(self._inbound(update, command, external_id=f"cb:{query.id}"))
            return
        if kind in ("lang", "theme"):
            await query.answer()
            command = SetLanguage(arg) if kind == "lang" else SetTheme(arg)
            self._handle(self._inbound(update, command, external_id=f"cb:{query.id}"))
            return
        decision = int(kind) if _number(kind.removeprefix("-")) else None
        current = table is None or (
            table.row.status in ("playing", "paused") and (decision is None or decision == table.row.decision_step)
        )
        if not current:
            assert table is not None
            await query.answer(_text(table.row.theme, _language(query.from_user), "input-stale"))
            return
        await query.answer()
        label = _label(query.message, query.data) or arg
        before = _progress(table)
        self._handle(self._inbound(update, Choose(arg, decision), raw=label, external_id=f"cb:{query.id}"))
        after = _progress(self.service.table(table_id)) if table_id else None
        message = query.message
        if after != before and isinstance(message, Message) and self.channel is not None:
            markup = message.reply_markup if arg in ("vj", "vn") else None
            text_html = message.text_html if message.text else ""
            secret = bool(message.has_protected_content) or any(  # PTB renders spoilers as <span class=...>
                e.type == MessageEntity.SPOILER for e in message.entities)
            protected = bool(message.has_protected_content)
            self.channel.pressed(
                Pressed(message.chat.id, message.message_id, text_html, label, secret, markup, protected))
            self._kick.set()

    async def on_migrated(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """A group became a supergroup: its tables move to the new chat id."""
        message = update.effective_message
        if message is None:
            return
        if message.migrate_to_chat_id:
            old, new = message.chat.id, message.migrate_to_chat_id
        elif message.migrate_from_chat_id:
            old, new = message.migrate_from_chat_id, message.chat.id
        else:
            return
        self.service.public_moved(CHANNEL, str(old), str(new))

    async def on_error(self, update: object, context: ContextTypes.DEFAULT_TYPE) -> None:
        """Log first; a player is never shown the error."""
        log.error("telegram: an update failed", exc_info=context.error)

    async def _picker(self, update: Update, kind: str, options: Iterable[str]) -> None:
        """Buttons to choose a language or a theme (no words: the options are their own labels)."""
        message = update.effective_message
        assert message is not None
        buttons = [InlineKeyboardButton(o, callback_data=f":{kind}:{o}") for o in options]
        await message.reply_text("\U0001f310" if kind == "lang" else "\U0001f3a8",
                                 reply_markup=InlineKeyboardMarkup([buttons]))


def _number(text: str) -> bool:
    """Digits ``int()`` reads: ASCII 0-9 only (``"²".isdigit()`` is true, and ``int("²")`` raises)."""
    return text.isdecimal() and text.isascii()


def _lobby_command(table: Table | None, op: str) -> Command | None:
    if table is None:
        return None
    if op == "go":
        return Start()
    if op == "cpu":
        return AddComputers(1)
    place, _, version = op[1:].partition(".")
    if op.startswith("u") and _number(place) and 0 < int(place) < len(table.seats):
        if version != seating_version(table.names):
            return None  # made for an older seating order: moving "seat i" now would move someone else
        position = int(place)
        return MoveSeat(table.seats[position].name, position)  # one place up (positions are 1-based)
    return None


def _label(message: object, data: str) -> str | None:
    """The text of the pressed button."""
    if not isinstance(message, Message) or message.reply_markup is None:
        return None
    for row in message.reply_markup.inline_keyboard:
        for button in row:
            if button.callback_data == data:
                return button.text
    return None


def _text(theme: str, language: str | None, message_id: str) -> str:
    try:
        catalog = Catalog.load(theme, language or DEFAULT_LANGUAGE)
    except UnknownCatalog:
        catalog = Catalog.load(DEFAULT_THEME, DEFAULT_LANGUAGE)
    return catalog.text(message_id)


async def _delete(message: Message) -> None:
    try:
        await message.delete()
    except TelegramError as exc:  # not an admin, or too old: the vote is still not counted
        log.info("telegram: could not delete a vote typed in the group: %s", exc)


# --- running it ----------------------------------------------------------------------------------------------


def run(settings: Settings) -> int:
    """Long polling until interrupted; returns the exit status."""
    assert settings.token is not None
    store = Store(settings.db_path)
    service = Service(store)
    bot = TelegramBot(service, settings.db_path)
    app = build_application(settings.token, api_url=settings.api_url)
    bot.install(app)

    async def post_init(application: Application) -> None:  # type: ignore[type-arg]
        await bot.start(application)
        bot.run_sender()

    async def post_shutdown(application: Application) -> None:  # type: ignore[type-arg]
        await bot.stop()
        store.close()

    app.post_init = post_init
    app.post_shutdown = post_shutdown
    app.run_polling(allowed_updates=Update.ALL_TYPES)
    return 0


__all__ = [
    "CHANNEL",
    "Settings",
    "TelegramBot",
    "TelegramChannel",
    "build_application",
    "compose",
    "qr_png",
    "run",
]
