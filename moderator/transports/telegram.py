"""The Telegram channel: python-telegram-bot v22 updates in, the outbox out.

Usage::

    TELEGRAM_TOKEN=123456:ABC... moderator telegram     # long polling; MODERATOR_DB names the database

It translates and nothing else. An update becomes an ``Inbound`` for the service (the address is the person's
private chat, ``chat`` the group it was typed in, ``press`` the button pressed); the outbox's messages become Bot
API calls through ``TelegramChannel``. The channel folds what it delivers by each message's kind so a game stays
cheap: everything due for one chat goes out as one message, the vote counter and the lobby are single messages
edited in place, the answer to a pressed button is shown by editing the prompt it answers, the board is one
photo edited in place, and a group gets at most one send or edit every ``GROUP_INTERVAL`` seconds and never more
than 20 in a minute (Telegram's limit per group), across restarts too (``pacing``: the sender keeps it). In a
group a result goes first: the counter and the board are edited only in a slot of their own, when nothing else
waits and the minute has room to spare; a later one folds an earlier one away.

Threads: PTB runs on the asyncio loop, and so does the service. The channel's deliveries run on a worker thread
(``Runtime.delivery``); it hands each Bot API call back to the loop and waits for it. Its reports (unreachable
players, migrated groups) come back to the loop through a thread-safe queue.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import html
import json
import logging
import re
import time
import warnings
from collections import OrderedDict, deque
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import timedelta
from functools import partial
from typing import Any, Final

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route
from telegram import (
    Bot,
    BotCommand,
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    InputMediaPhoto,
    Message,
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

from ..board import catalog_for, render_png
from ..catalog import DEFAULT_LANGUAGE, DEFAULT_THEME, Catalog, languages, themes
from ..channels import (
    REPEAT_MESSAGE,
    Capabilities,
    Channel,
    Delivered,
    Delivery,
    JoinWay,
    Kind,
    NotStored,
    Option,
    Outbound,
    Pacing,
    PermanentFailure,
    Port,
    Receipt,
    Result,
    Running,
    Runtime,
    TemporaryFailure,
    WordStyle,
)
from ..commands import (
    Ask,
    Choose,
    Command,
    Decide,
    Inbound,
    Join,
    LobbyControl,
    OpenTable,
    Press,
    Query,
    SetLanguage,
    SetTheme,
    number,
)
from ..grammar import Verb, fold, grammar
from ..pacing import Pacer
from ..qr import qr_png
from ..settings import Settings

log = logging.getLogger(__name__)

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
                       board_patience=BOARD_PATIENCE, counter_interval=COUNTER_INTERVAL,
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


_ARROW: Final = "\u27a1\ufe0f "
_SCREEN: Final = "\U0001f4fa"
_SEAT: Final = "\U0001fa91 "
_LOBBY: Final = "L"
"""The callback data's kind of the lobby's controls (``<table>:L:<token>``)."""


# --- configuration ----------------------------------------------------------------------------------------


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


# --- rendering --------------------------------------------------------------------------------------------


def escape(text: str) -> str:
    """Text for ``parse_mode=HTML``: every ``<``, ``>`` and ``&`` escaped (names may hold any of them)."""
    return html.escape(text, quote=False)


def _part(message: Outbound) -> tuple[str, str | None]:
    """One message as HTML, and its neutral first line if it carries a secret (the secret goes in a spoiler)."""
    if not message.secret:
        return escape(message.text), None
    header, _, secret = message.text.partition("\n")
    return (f"<tg-spoiler>{escape(secret)}</tg-spoiler>" if secret else ""), header


def compose(messages: Sequence[Outbound]) -> tuple[str, bool]:
    """Several messages as one message's HTML, and whether it carries a secret.

    A secret message starts with the neutral line (so a lock-screen preview shows nothing) and hides every
    secret part in spoiler formatting; public parts in the same message stay plain.
    """
    parts: list[str] = []
    header: str | None = None
    for message in messages:
        part, neutral = _part(message)
        header = header or neutral
        if part:
            parts.append(part)
    text = "\n\n".join(parts)
    if header is not None:
        text = escape(header) + ("\n\n" + text if text else "")
    return text, header is not None


def callback(table: str | None, decision: int | str | None, token: str) -> str:
    """Callback data ``<table>:<decision>:<token>``; at most 64 bytes."""
    data = f"{table or ''}:{'-' if decision is None else decision}:{token}"
    assert len(data.encode()) <= CALLBACK_LIMIT, data
    return data


def _rows(buttons: list[InlineKeyboardButton], longest: int) -> list[list[InlineKeyboardButton]]:
    per_row = 3 if longest <= 10 else 2 if longest <= 18 else 1
    return [buttons[i : i + per_row] for i in range(0, len(buttons), per_row)]


def keyboard(options: Sequence[Option], table: str | None, decision: int | None) -> InlineKeyboardMarkup | None:
    """The buttons of a prompt: one per option, carrying table, decision and token."""
    if not options:
        return None
    buttons = [InlineKeyboardButton(o.label, callback_data=callback(table, decision, o.token)) for o in options]
    return InlineKeyboardMarkup(_rows(buttons, max(len(o.label) for o in options)))


def lobby_keyboard(message: Outbound) -> InlineKeyboardMarkup | None:
    """The host's seating controls: move a seat up one place, add a computer player, start (the last two in a
    row of their own)."""
    seating = message.seating
    if seating is None or not seating.controls or not seating.open:
        return None
    *moves, computer, go = seating.controls
    buttons = [InlineKeyboardButton(o.label, callback_data=callback(message.table, _LOBBY, o.token)) for o in moves]
    rows = _rows(buttons, max((len(n) for n in seating.names), default=0) + 2)
    rows.append([InlineKeyboardButton(o.label, callback_data=callback(message.table, _LOBBY, o.token))
                 for o in (computer, go)])
    return InlineKeyboardMarkup(rows)


def chunks(messages: Sequence[Outbound], limit: int = TEXT_LIMIT) -> list[list[Outbound]]:
    """Messages grouped so that each group composes to at most ``limit`` characters (a long one alone)."""
    out: list[list[Outbound]] = [[]]
    for message in messages:
        if out[-1] and len(compose([*out[-1], message])[0]) > limit:
            out.append([])
        out[-1].append(message)
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


class _Moved(Exception):
    """The chat became a supergroup (``new``): deliver there."""

    def __init__(self, new: int) -> None:
        super().__init__(new)
        self.new = new


class TelegramChannel:
    """The channel for Telegram: folds what is due for one chat into few Bot API calls (runs on the sender's
    thread)."""

    capabilities: Final = CAPABILITIES

    def __init__(self, bot: Bot, loop: asyncio.AbstractEventLoop, *, clock: Callable[[], float] = time.time,
                 screen_url: Callable[[str], str | None] = lambda table: None) -> None:
        self.bot = bot
        self.screen_url = screen_url
        """The address of a table's screen, if the browser channel serves one."""
        self.loop = loop
        self.clock = clock
        self._lobby: dict[int, _Live] = {}
        self._counter: dict[int, tuple[int | None, _Live]] = {}
        """The message of each chat that shows the open vote's counter, with that vote's decision."""
        self._known: OrderedDict[tuple[int, int], _Live] = OrderedDict()
        self.pacer = Pacer(PACING, public=lambda chat: int(chat) < 0, clock=clock, calls=_calls)
        """Each chat's pace (keyed by its id as text), and the order a group's messages go in."""
        self._moved: dict[int, int] = {}
        self._reported: set[str] = set()
        # Thread-safe hand-overs between the sender's thread and the loop's.
        self._back: deque[str] = deque()
        self._notices: deque[tuple[str, str, str]] = deque()

    # --- hand-overs -----------------------------------------------------------------------------------

    def reachable(self, address: str) -> None:
        """(Loop thread.) This person wrote to us: report them again if they become unreachable later."""
        self._back.append(address)

    def take_notices(self) -> list[tuple[str, str, str]]:
        """(Loop thread.) ``("unreachable", address, "")`` and ``("moved", old, new)`` since the last call."""
        out = []
        while self._notices:
            out.append(self._notices.popleft())
        return out

    # --- the port -------------------------------------------------------------------------------------

    def pacing(self) -> dict[str, str]:
        """(Sender's thread.) The pace of every group written to since the last call (``channels.Paced``)."""
        return self.pacer.pacing()

    def recall(self, paces: Mapping[str, str]) -> None:
        """(Sender's thread.) The groups' paces from before a restart: the minute's calls still count."""
        self.pacer.recall(paces)

    def send_batch(self, address: str, messages: Sequence[Outbound]) -> list[Result]:
        """Deliver everything due for one chat, folded into as few calls as pacing and Telegram allow."""
        while self._back:
            self._reported.discard(self._back.popleft())
        chat = self._moved.get(int(address), int(address))
        # The board image gets its own call and result (``Pacer.batch``): a board that fails must not send the
        # text before it again.
        return self.pacer.batch(str(chat), [_as_repeat(m) for m in messages],
                                lambda texts: self._attempt(address, chat, lambda at: self._deliver(at, texts)),
                                lambda board: self._attempt(address, chat, partial(self._board_message,
                                                                                    message=board)))

    # --- internals --------------------------------------------------------------------------------------

    def _attempt(self, address: str, chat: int, deliver: Callable[[int], str | None], *,
                 retry: bool = True) -> Result:
        """Deliver (``deliver(chat)`` returns the id of the message it leaves showing, if one), translating
        Telegram's errors into the port's failures."""
        try:
            return Delivered(ref=deliver(chat))
        except _Moved as moved:
            return TemporaryFailure(f"telegram: a target moved to {moved.new}")
        except ChatMigrated as exc:
            new = self._migrate(chat, exc)
            if not retry or new == chat:
                return TemporaryFailure(f"telegram: {chat} moved to {new}")
            return self._attempt(address, new, deliver, retry=False)  # once: the new chat is where it goes
        except RetryAfter as exc:
            seconds = _seconds(exc)
            self.pacer.blocked(str(chat), seconds)
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

    def _migrate(self, chat: int, exc: ChatMigrated) -> int:
        """``chat`` (the chat that raised) became the supergroup ``exc`` names: map it and report it."""
        new = int(exc.new_chat_id)
        if new != chat:
            log.info("telegram: chat %s moved to %s", chat, new)
            self._moved[chat] = new
            self._notices.append(("moved", str(chat), str(new)))
        return new

    def _unreachable(self, address: str) -> None:
        if int(address) > 0 and address not in self._reported:
            self._reported.add(address)
            self._notices.append(("unreachable", address, ""))

    def _deliver(self, chat: int, messages: Sequence[Outbound]) -> None:
        """The calls for one chat's folded messages: join codes, choices shown, the lobby, the counter, the rest."""
        text: list[Outbound] = []
        for message in messages:
            match message.kind:
                case Kind.JOIN:
                    self._flush_text(chat, text)
                    self._join_message(chat, message)
                case Kind.LOBBY if message.seating is not None and (message.seating.open or chat in self._lobby):
                    self._flush_text(chat, text)
                    self._lobby_message(chat, message)
                case Kind.COUNTER:
                    self._flush_text(chat, text)
                    self._counter_message(chat, message)
                case Kind.ECHO if message.press is not None:
                    if not self._show_choice(chat, message) and message.text:
                        text.append(message)  # the prompt cannot show it: a message of its own
                case _:
                    text.append(message)
        self._flush_text(chat, text)

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
        self.pacer.sent(str(chat), counter=counter)

    def _send_text(self, chat: int, html_text: str, *, secret: bool, markup: InlineKeyboardMarkup | None,
                   counter: bool = False) -> _Live:
        message: Message = self._call(
            self.bot.send_message(
                chat, _cut(html_text, TEXT_LIMIT), parse_mode=ParseMode.HTML, reply_markup=markup,
                protect_content=secret, disable_web_page_preview=True,
            )
        )
        self.pacer.sent(str(chat), counter=counter)
        live = _Live(message.message_id, html_text, markup, protected=secret)
        self._remember(chat, live)
        return live

    def _flush_text(self, chat: int, messages: list[Outbound]) -> None:
        """Send plain messages as few as their length allows; the last one carries the buttons."""
        if not messages:
            return
        for group in chunks(messages):
            html_text, secret = compose(group)
            prompts = [m for m in group if m.kind is Kind.PROMPT and m.options]
            markup = keyboard(prompts[-1].options, prompts[-1].table, prompts[-1].decision) if prompts else None
            live = self._send_text(chat, html_text, secret=secret, markup=markup)
            for m in group:
                if m.kind is Kind.RESULT:
                    self._counter.pop(chat, None)
                elif m.kind is Kind.CALL:
                    self._counter[chat] = (m.decision, live)  # that vote's counter is shown here
        messages.clear()

    def _show_choice(self, chat: int, echo: Outbound) -> bool:
        """Edit the pressed prompt to show the choice; True if it shows the echo (its text, or the choice).

        A prompt that cannot be edited (deleted, too old) is left as it is; it never decides the fate of the rest
        of the batch. A secret is written only into a prompt that was sent protected.
        """
        press = echo.press
        assert press is not None
        live = self._known.get((chat, int(press.ref))) or _Live(int(press.ref), press.text, protected=press.protected)
        before = (live.markup, live.choice)
        markup = keyboard(echo.options, echo.table, echo.decision)
        folded = True
        if echo.text and echo.secret and not live.protected:
            folded = False
            if markup is not None:
                return False  # nothing changes on the prompt: its buttons stay, the echo goes on its own
            live.choice = ""  # the choice itself is the secret: the prompt only loses its buttons
        elif echo.text:
            live.choice = _part(echo)[0]
        else:
            label = escape(press.label)
            live.choice = _ARROW + (f"<tg-spoiler>{label}</tg-spoiler>" if echo.secret else label)
        live.markup = markup
        try:
            self._edit(chat, live)
        except BadRequest as exc:
            log.info("telegram: could not show a choice in %s: %s", chat, exc.message)
            live.markup, live.choice = before
            return False
        self._remember(chat, live)
        return folded

    def _join_message(self, chat: int, message: Outbound) -> None:
        """The table's QR code and Join button (deep link ``https://t.me/<bot>?start=<code>``)."""
        assert message.join_code is not None
        target = int(message.shown_in) if message.shown_in else chat
        target = self._moved.get(target, target)
        url = create_deep_linked_url(self.bot.username, message.join_code)
        rows = [[InlineKeyboardButton(_SEAT + message.join_code, url=url)]]
        if message.table:
            # The host can fill seats with computer players and start before the seat list exists.
            rows.append([InlineKeyboardButton(o.label, callback_data=callback(message.table, _LOBBY, o.token))
                         for o in message.options])
            screen = self.screen_url(message.table)
            if screen:  # the board for a laptop or TV at the table
                rows.append([InlineKeyboardButton(_SCREEN, url=screen)])
        markup = InlineKeyboardMarkup(rows)
        caption = _cut(compose([message])[0], CAPTION_LIMIT)
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
                raise _Moved(int(again.new_chat_id)) from again
            except (Forbidden, BadRequest) as refused:
                setattr(refused, "moderator_chat", target)  # noqa: B010  # blame the group, not the host
                raise
        except (Forbidden, BadRequest) as exc:
            setattr(exc, "moderator_chat", target)  # noqa: B010  # blame the group, not the host
            raise
        self.pacer.sent(str(target))

    def _lobby_message(self, chat: int, message: Outbound) -> None:
        """The seat list, edited in place; the game's start closes it (its buttons go)."""
        assert message.seating is not None
        html_text = compose([message])[0]
        markup = lobby_keyboard(message)
        live = self._lobby.get(chat)
        if live is not None and live.table == message.table:
            live.html, live.markup = html_text, markup
            try:
                self._edit(chat, live)
            except BadRequest:
                live = None  # deleted or too old to edit: send a new one
        if live is None or live.table != message.table:
            live = self._send_text(chat, html_text, secret=False, markup=markup)
            live.table = message.table
        if message.seating.open:
            self._lobby[chat] = live
        else:
            self._lobby.pop(chat, None)

    def _counter_message(self, chat: int, message: Outbound) -> None:
        """'4 of 7 have voted': appended to the nomination's message and edited there, or a message of its own."""
        counter = compose([message])[0]
        decision, live = self._counter.get(chat, (None, None))
        if live is not None and decision == message.decision:
            live.counter = counter
            try:
                self._edit(chat, live, counter=True)
                return
            except BadRequest:
                pass
        sent = self._send_text(chat, counter, secret=False, markup=None, counter=True)
        self._counter[chat] = (message.decision, _Live(sent.message_id, "", None, counter=counter))

    def _board_message(self, chat: int, message: Outbound) -> str:
        """The board image: a photo, or the photo ``message.edit`` names edited to this board; returns the id of
        the message that shows it. A message that can no longer be edited (deleted, too old) is replaced by a new
        photo."""
        assert message.board is not None
        png = render_png(message.board, catalog_for(message.board, message.language or DEFAULT_LANGUAGE))
        if message.edit is not None:
            try:
                self._call(self.bot.edit_message_media(
                    InputMediaPhoto(png, filename="board.png"), chat_id=chat, message_id=int(message.edit)))
                self.pacer.sent(str(chat))
                return message.edit
            except BadRequest as exc:
                if "not modified" in exc.message.lower():
                    return message.edit
                log.info("telegram: the board in %s cannot be edited, sending a new one: %s", chat, exc.message)
        sent: Message = self._call(self.bot.send_photo(chat, photo=png, filename="board.png"))
        self.pacer.sent(str(chat))
        return str(sent.message_id)


def _calls(messages: Sequence[Outbound]) -> int:
    """At most how many Bot API calls these messages take in one chat (a fold of plain texts may take fewer)."""
    own = [m.kind in _OWN_CALL or (m.kind is Kind.ECHO and m.press is not None) for m in messages]
    return sum(own) + len(chunks([m for m, alone in zip(messages, own, strict=True) if not alone]))


_OWN_CALL: Final = frozenset({Kind.JOIN, Kind.LOBBY, Kind.COUNTER, Kind.BOARD})


def _seconds(exc: RetryAfter) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PTB 22 warns that this becomes a timedelta
        value = exc.retry_after
    return value.total_seconds() if isinstance(value, timedelta) else float(value)


# --- updates in ---------------------------------------------------------------------------------------------


def _language(user: User | None) -> str | None:
    code = (user.language_code or "").split("-")[0].lower() if user is not None else ""
    return code if code in languages(DEFAULT_THEME) else None


class TelegramBot:
    """Updates in (handlers on the loop thread); the channel's deliveries out, with their reports applied."""

    def __init__(self, port: Port, *, clock: Callable[[], float] = time.time,
                 screen_url: Callable[[str], str | None] = lambda table: None) -> None:
        self.port = port
        self.clock = clock
        self.screen_url = screen_url
        self.channel: TelegramChannel | None = None
        self.delivery: Delivery | None = None
        self.not_stored: set[int] = set()
        """Ids of updates whose input could not be stored: the webhook answers them 503 so Telegram retries, long
        polling (``Poller``) leaves them unconfirmed and pauses."""

    # --- set-up -------------------------------------------------------------------------------------------

    def install(self, app: Application[Any, Any, Any, Any, Any, Any]) -> None:
        """Register the handlers on an application."""
        app.add_handler(MessageHandler(filters.StatusUpdate.MIGRATE, self.on_migrated))
        app.add_handler(MessageHandler(filters.COMMAND, self.on_command))
        app.add_handler(MessageHandler(filters.TEXT & filters.ChatType.PRIVATE, self.on_text))
        app.add_handler(MessageHandler(filters.TEXT & filters.ChatType.GROUPS, self.on_group_text))
        app.add_handler(CallbackQueryHandler(self.on_button))
        app.add_error_handler(self.on_error)

    async def start(self, app: Application[Any, Any, Any, Any, Any, Any],
                    delivery: Callable[[Channel, Callable[[], Awaitable[int]]], Delivery]) -> None:
        """After ``initialize``: the channel, its delivery (``delivery(channel, after_round)``), the menu."""
        self.channel = TelegramChannel(app.bot, asyncio.get_running_loop(), clock=self.clock,
                                       screen_url=self.screen_url)
        self.delivery = delivery(self.channel, self._apply_notices)
        for language in languages(DEFAULT_THEME):
            commands = [BotCommand(c, description) for c, description in menu(language)]
            await app.bot.set_my_commands(commands, language_code=None if language == DEFAULT_LANGUAGE else language)
        log.info("telegram: @%s ready", app.bot.username)

    async def deliver(self) -> int:
        """Deliver what is due now (the channel's reports applied in between)."""
        assert self.delivery is not None
        return await self.delivery.deliver()

    async def _apply_notices(self) -> int:
        """(Loop thread, after each round.) Unreachable people and moved groups, to the service."""
        assert self.channel is not None
        notices = self.channel.take_notices()
        for kind, first, second in notices:
            if kind == "unreachable":
                self.port.unreachable(CHANNEL, first)
            else:
                self.port.public_moved(CHANNEL, first, second)
        return len(notices)

    async def _handle(self, inbound: Inbound, message: Message | None = None) -> Receipt:
        """The input to the service; a ``message`` the service withdraws (a vote typed in the group) is deleted."""
        if self.channel is not None and not inbound.overheard:
            self.channel.reachable(inbound.address)
        receipt = self.port.handle(inbound)
        if self.delivery is not None:
            self.delivery.kick()
        if receipt.withdraw and message is not None:
            if self.channel is not None and inbound.overheard:
                self.channel.reachable(inbound.address)
            await _delete(message)  # off the group's screen, where the bot may
        return receipt

    # --- handlers -----------------------------------------------------------------------------------------

    def _inbound(self, update: Update, command: Command, *, raw: str = "", overheard: bool = False,
                 external_id: str | None = None, press: Press | None = None, table: str | None = None) -> Inbound:
        """The person's private chat is the address; the group it was typed in, if any, the ``chat``."""
        user, chat = update.effective_user, update.effective_chat
        assert user is not None and chat is not None
        group = chat.type != ChatType.PRIVATE
        return Inbound(
            CHANNEL,
            str(user.id),
            command,
            external_id=external_id or str(update.update_id),
            language=_language(user),
            chat=str(chat.id) if group else None,
            raw=raw,
            press=press,
            table=table or None,
            overheard=overheard,
        )

    async def on_command(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """A ``/command``: a word of the grammar (``/pause``, ``/seats Ann, Bob``), ``/start <code>`` from the QR
        code, ``/newgame`` (in a group: the group sees the results); in a group the service says what is answered
        there and which vote it withdraws (deleted)."""
        message, user, chat = update.effective_message, update.effective_user, update.effective_chat
        if message is None or user is None or chat is None or not message.text:
            return
        head, *args = message.text.split()
        name, _, bot = head[1:].partition("@")
        if bot and bot.lower() != (context.bot.username or "").lower():
            return  # addressed to another bot in this group
        group = chat.type != ChatType.PRIVATE
        first = user.first_name or str(user.id)
        verb = grammar().verb(name, CAPABILITIES.reserved_words)
        command: Command | None
        if name.lower() == "start":
            if group:
                return
            # Without a code: their seat's secrets and the decision it owes (a player back after blocking the
            # bot), or, at no table, how to open or join one.
            command = Join(args[0], first) if args else Ask(Query.BACK)
        elif verb is Verb.OPEN:
            # ``/newgame [theme] [your name]``: a first word that is a theme picks it; the rest is the host's name.
            theme = args[0].lower() if args and args[0].lower() in themes() else None
            command = OpenTable(" ".join(args[1:] if theme else args) or first, theme=theme, public=group)
        elif verb is Verb.JOIN and args:
            command = Join(args[0], " ".join(args[1:]) or first)
        elif verb in (Verb.LANGUAGE, Verb.THEME) and not args:
            kind = "lang" if verb is Verb.LANGUAGE else "theme"
            await self._picker(update, kind, languages(DEFAULT_THEME) if kind == "lang" else themes())
            return
        else:
            command = grammar().parse(" ".join([name, *args]), CAPABILITIES.reserved_words)
            if command is None:
                if group:
                    return
                command = Decide("?", message.text)
        await self._handle(self._inbound(update, command, raw=message.text), message)

    async def on_text(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """Typed words in the private chat: any word of the grammar, an option's number or name, a vote."""
        message = update.effective_message
        if message is None or not message.text:
            return
        text = message.text.strip()
        command = grammar().parse(text, CAPABILITIES.reserved_words) or Decide("?", text)
        await self._handle(self._inbound(update, command, raw=text))

    async def on_group_text(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """Words typed in a group (the bot sees them as an admin or with privacy mode off), overheard: the service
        takes only what would give a secret away there (a vote, deleted where the bot may and answered
        privately); all other talk is the table's own."""
        message = update.effective_message
        if message is None or not message.text:
            return
        command = grammar().parse(message.text, CAPABILITIES.reserved_words)
        if command is not None:
            await self._handle(self._inbound(update, command, raw=message.text, overheard=True), message)

    async def on_button(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """A pressed button: handed to the service first, then answered (a failed answer never drops a press)."""
        query = update.callback_query
        if query is None or query.data is None:
            return
        table_id, _, rest = query.data.partition(":")
        kind, _, arg = rest.partition(":")
        notice: str | None = None
        if kind == _LOBBY:
            await self._handle(self._inbound(update, LobbyControl(arg), external_id=f"cb:{query.id}",
                                             table=table_id))
        elif kind in ("lang", "theme"):
            command = SetLanguage(arg) if kind == "lang" else SetTheme(arg)
            await self._handle(self._inbound(update, command, external_id=f"cb:{query.id}"))
        else:
            decision = int(kind) if number(kind.removeprefix("-")) is not None else None
            label = _label(query.message, query.data) or arg
            message = query.message
            press = None
            if isinstance(message, Message):
                press = Press(str(message.message_id), message.text_html if message.text else "", label,
                              bool(message.has_protected_content))
            receipt = await self._handle(self._inbound(update, Choose(arg, decision), raw=label,
                                                       external_id=f"cb:{query.id}", press=press, table=table_id))
            notice = receipt.notice
        try:
            await query.answer(notice)
        except TelegramError as exc:  # too late to answer (a redelivered update): the press counted anyway
            log.info("telegram: could not answer a press: %s", exc)

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
        self.port.public_moved(CHANNEL, str(old), str(new))

    async def on_error(self, update: object, context: ContextTypes.DEFAULT_TYPE) -> None:
        """Log first; a player is never shown the error. An update that could not be stored is remembered
        (``not_stored``): the webhook asks Telegram to send it again, long polling stops confirming updates."""
        if isinstance(context.error, NotStored):
            log.error("telegram: an update could not be stored (%s); it is asked for again", context.error)
            if isinstance(update, Update):
                self.not_stored.add(update.update_id)
            return
        log.error("telegram: an update failed", exc_info=context.error)

    async def _picker(self, update: Update, kind: str, options: Iterable[str]) -> None:
        """Buttons to choose a language or a theme (no words: the options are their own labels)."""
        message = update.effective_message
        assert message is not None
        buttons = [InlineKeyboardButton(o, callback_data=f":{kind}:{o}") for o in options]
        await message.reply_text("\U0001f310" if kind == "lang" else "\U0001f3a8",
                                 reply_markup=InlineKeyboardMarkup([buttons]))


_EDITED_IN_PLACE: Final = frozenset({Kind.COUNTER, Kind.BOARD, Kind.LOBBY})


def _as_repeat(message: Outbound) -> Outbound:
    """A message that may have gone out before a crash (``handed``), saying it is a repeat: Telegram cannot tell
    whether it did, and a second "policy enacted" must not read as a second enactment. An edit repeats nothing."""
    if (message.handed is None or message.edit is not None or message.press is not None
            or message.kind in _EDITED_IN_PLACE or not message.text):
        return message
    words = Catalog.load(DEFAULT_THEME, message.language).text(REPEAT_MESSAGE)
    return replace(message, text=f"{words}\n{message.text}")


def _label(message: object, data: str) -> str | None:
    """The text of the pressed button."""
    if not isinstance(message, Message) or message.reply_markup is None:
        return None
    for row in message.reply_markup.inline_keyboard:
        for button in row:
            if button.callback_data == data:
                return button.text
    return None


async def _delete(message: Message) -> None:
    try:
        await message.delete()
    except TelegramError as exc:  # not an admin, or too old: the vote is still not counted
        log.info("telegram: could not delete a vote typed in the group: %s", exc)


# --- long polling (under ``moderator telegram``) -------------------------------------------------------------


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
            await self.sleep(_seconds(exc))
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


# --- the webhook (under ``moderator serve``) ---------------------------------------------------------------


@dataclass
class _Webhook:
    """What the webhook route needs: the application and its handlers."""

    app: Application[Any, Any, Any, Any, Any, Any]
    bot: TelegramBot


def webhook_route(settings: TelegramSettings) -> Route:
    """``POST`` at the webhook path: one update, processed before the answer (a crash before it: a redelivery).

    No update id is remembered here: a redelivered update reaches the service again, which applies its input
    once (its id is stored with it). An update whose input could not be stored is answered 503, which Telegram
    retries; an update that fails for any other reason is answered 200 (it would fail again)."""

    async def webhook(request: Request) -> Response:
        given = request.headers.get(SECRET_HEADER, "")
        if not settings.secret or not hmac.compare_digest(given.encode(), settings.secret.encode()):
            log.warning("refused a Telegram webhook request without the right secret token")
            return Response(status_code=403)
        body = await request.body()  # at most MAX_BODY: the server's body limit counted it as it came
        running: Running = request.app.state.channels[CHANNEL]
        hook: _Webhook = running.state
        try:
            data = json.loads(body)
            if not isinstance(data, dict) or not isinstance(data.get("update_id"), int):
                raise ValueError("not an update")
            update = Update.de_json(data, hook.app.bot)
        except Exception:  # any malformed update: Telegram never sends one, so nobody waits for it
            log.info("ignored a Telegram webhook body that is not an update")
            return Response(status_code=400)
        try:
            await hook.app.process_update(update)
        except Exception:  # logged; answering 200 stops Telegram from redelivering an update that cannot work
            log.exception("a Telegram update failed")
        if update.update_id in hook.bot.not_stored:
            hook.bot.not_stored.discard(update.update_id)
            return Response(status_code=503)
        return Response(status_code=200)

    return Route(settings.path, webhook, methods=["POST"])


# --- the channel module's entry --------------------------------------------------------------------------------


class TelegramSpec:
    """Telegram: a bot, its webhook under ``moderator serve`` (long polling under ``moderator telegram``)."""

    name: Final = CHANNEL
    capabilities: Final = CAPABILITIES

    def off(self, settings: Settings) -> str | None:
        if TelegramSettings.of(settings).token and settings.public_url:
            return None
        return "it needs TELEGRAM_TOKEN and MODERATOR_PUBLIC_URL"

    def routes(self, settings: Settings) -> Sequence[BaseRoute]:
        return [webhook_route(TelegramSettings.of(settings))]

    def webhooks(self, settings: Settings) -> Mapping[str, int]:
        return {TelegramSettings.of(settings).path: MAX_BODY}

    @contextlib.asynccontextmanager
    async def start(self, settings: Settings, runtime: Runtime) -> AsyncIterator[Running]:
        """The PTB application without an updater: updates come from the webhook route."""
        telegram = TelegramSettings.of(settings)
        assert telegram.token and settings.public_url
        request = runtime.network(CHANNEL)
        ptb = build_application(telegram.token, api_url=telegram.api_url, request=request,
                                rate_limiter=request is None, updater=False)
        bot = TelegramBot(runtime.port, clock=runtime.clock, screen_url=runtime.screen_url)
        bot.install(ptb)
        await ptb.initialize()
        try:
            await bot.start(ptb, lambda channel, after: runtime.delivery(CHANNEL, channel, after_round=after))
            await ptb.bot.set_webhook(settings.public_url + telegram.path, secret_token=telegram.secret,
                                      allowed_updates=Update.ALL_TYPES)
            log.info("telegram: webhook at %s%s", settings.public_url, telegram.path)
            username = ptb.bot.username
            yield Running(_Webhook(ptb, bot), lambda code: [
                JoinWay("Telegram", create_deep_linked_url(username, code), f"@{username}")])
        finally:
            await ptb.shutdown()


SPEC: Final = TelegramSpec()
