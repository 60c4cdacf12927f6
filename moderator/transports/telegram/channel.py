"""The Telegram channel's deliveries (``channels.Channel``, on the sender's thread): what is due for one chat, folded
into few Bot API calls, paced (``pacing.Pacer``), edits in place, and Telegram's errors as the port's failures.

Everything due for one chat goes out as one message, the vote counter and the lobby are single messages edited in
place, the answer to a pressed button is shown by editing the prompt it answers, the board is one photo edited in
place. Each Bot API call is handed to the loop and waited for; the channel's reports (unreachable players,
migrated groups) go back to the loop through a thread-safe queue (``take_notices``).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import Any, Final

from telegram import (
    Bot,
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    InputMediaPhoto,
    MenuButton,
    MenuButtonDefault,
    MenuButtonWebApp,
    Message,
    WebAppInfo,
)
from telegram.constants import ParseMode
from telegram.error import BadRequest, ChatMigrated, Forbidden, InvalidToken, NetworkError, RetryAfter, TelegramError
from telegram.helpers import create_deep_linked_url

from ...board import catalog_for, render_png
from ...catalog import DEFAULT_LANGUAGE
from ...channels import Delivered, Kind, Outbound, PermanentFailure, Result, TemporaryFailure
from ...pacing import Pacer
from ...qr import qr_png
from .config import (
    API_TIMEOUT,
    CAPABILITIES,
    CAPTION_LIMIT,
    KNOWN_MESSAGES,
    PACING,
    TEXT_LIMIT,
    provider_problem,
    refused,
    retry_seconds,
)
from .messages import (
    LOBBY,
    app_button,
    as_repeat,
    callback,
    calls,
    chunks,
    compose,
    cut,
    escape,
    keyboard,
    lobby_keyboard,
    message_html,
    open_seat,
)

log = logging.getLogger(__name__)

_ARROW: Final = "\u27a1\ufe0f "
_SCREEN: Final = "\U0001f4fa"
_SEAT: Final = "\U0001fa91 "


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
                 screen_url: Callable[[str], str | None] = lambda table: None,
                 app_url: Callable[[str], str | None] = lambda table: None) -> None:
        self.bot = bot
        self.screen_url = screen_url
        """The address of a table's screen, if the browser channel serves one."""
        self.app_url = app_url
        """The address of a seat's page at a table as a Mini App, if the server offers one (``Runtime.app_url``)."""
        self._prompts: dict[int, _Live] = {}
        """Each private chat's latest prompt with buttons: where a choice made on the seat's page is shown."""
        self._menus: dict[int, str] = {}
        """Private chats whose menu button opens the seat's page, with the table it opens."""
        self.app_edits = 0
        """Edits that showed in a chat a choice made on the seat's page (each a Bot API call of its own)."""
        self.loop = loop
        self.clock = clock
        self._lobby: dict[int, _Live] = {}
        self._counter: dict[int, tuple[int | None, _Live]] = {}
        """The message of each chat that shows the open vote's counter, with that vote's decision."""
        self._known: OrderedDict[tuple[int, int], _Live] = OrderedDict()
        self.pacer = Pacer(PACING, public=lambda chat: int(chat) < 0, clock=clock, calls=calls)
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
        return self.pacer.batch(str(chat), [as_repeat(m) for m in messages],
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
            seconds = retry_seconds(exc)
            self.pacer.blocked(str(chat), seconds)
            return TemporaryFailure(f"telegram: retry_after={seconds:g}", seconds)
        except InvalidToken:
            return refused()  # the channel stops; this message waits in the outbox
        except (Forbidden, BadRequest) as exc:
            failed = getattr(exc, "moderator_chat", chat)  # the QR code goes to a group, not to ``chat``
            if failed == chat and (isinstance(exc, Forbidden)
                                   or "chat_not_found" in exc.message.lower().replace(" ", "_")):
                self._unreachable(address)
            log.warning("telegram: %s refused: %s", failed, exc.message)
            return PermanentFailure(f"telegram: {failed} refused: {exc.message}")
        except (NetworkError, TimeoutError) as exc:
            outage = provider_problem(exc, connecting_only=True)  # nothing was sent: every chat waits
            return outage if outage is not None else TemporaryFailure(f"telegram: {exc}")
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
        """The calls for one chat's folded messages: join codes, choices shown, the lobby, the counter, the rest.

        The game's start closes the lobby: the seat list, closed, and what follows it (the game's opening lines)
        are edited into the lobby message, one call instead of an edit and a new message."""
        text: list[Outbound] = []
        ended: list[Outbound] = []
        for message in messages:
            match message.kind:
                case Kind.JOIN:
                    self._flush_text(chat, text)
                    self._join_message(chat, message)
                case Kind.LOBBY if message.seating is not None and not message.seating.open and self._closes(chat,
                                                                                                          message):
                    self._flush_text(chat, text)
                    text.append(message)  # the head of the text edited into the lobby message (``_flush_text``)
                case Kind.LOBBY if message.seating is not None and (message.seating.open or chat in self._lobby):
                    self._flush_text(chat, text)
                    self._lobby_message(chat, message)
                case Kind.COUNTER:
                    self._flush_text(chat, text)
                    self._counter_message(chat, message)
                case Kind.ECHO if message.press is not None:
                    if not self._show_choice(chat, message):  # the prompt cannot show it: a message of its own
                        if message.text:
                            text.append(message)
                        if message.follows:
                            text.append(replace(message, kind=Kind.PROMPT, text=message.follows, press=None))
                case Kind.END:
                    text.append(message)
                    ended.append(message)
                case _:
                    text.append(message)
        self._flush_text(chat, text)
        for end in ended:  # the game is over: its players' menus are Telegram's own again (told in a group, or
            # to each seat)
            for seated in [c for c, t in self._menus.items() if t == end.table] if chat < 0 else [chat]:
                self._menu(seated, None, end.table, end.language)

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
                    cut(live.render(), TEXT_LIMIT), chat_id=chat, message_id=live.message_id,
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
                chat, cut(html_text, TEXT_LIMIT), parse_mode=ParseMode.HTML, reply_markup=markup,
                protect_content=secret, disable_web_page_preview=True,
            )
        )
        self.pacer.sent(str(chat), counter=counter)
        live = _Live(message.message_id, html_text, markup, protected=secret)
        self._remember(chat, live)
        return live

    def _closes(self, chat: int, message: Outbound) -> bool:
        """True if ``message`` closes the lobby this chat shows (the game's start: the seat list, closed)."""
        live = self._lobby.get(chat)
        return live is not None and live.table == message.table

    def _flush_text(self, chat: int, messages: list[Outbound]) -> None:
        """Send plain messages as few as their length allows; the last one carries the buttons. Led by a closed
        seat list (``_deliver``), the first of them is edited into the lobby message instead, if nothing in it is
        secret (only a protected message may show a secret) and the lobby message can still be edited."""
        if not messages:
            return
        closing = messages[0] if messages[0].kind is Kind.LOBBY else None
        groups = chunks(messages)
        if closing is not None and compose(groups[0])[1]:
            self._lobby_message(chat, closing)  # a secret follows: the lobby closes on its own, the rest is sent
            groups = chunks(messages[1:])
            closing = None
        for group in groups:
            html_text, secret = compose(group)
            prompts = [m for m in group if m.kind is Kind.PROMPT and m.options]
            prompt = prompts[-1] if prompts else None
            markup = None
            if prompt is not None:
                app = self._app_url(chat, prompt.table)
                markup = keyboard(prompt.options, prompt.table, prompt.decision,
                                  app=app_button(app, prompt.language))
                self._menu(chat, app, prompt.table, prompt.language)
            live = self._edit_lobby(chat, html_text, markup) if closing is not None else None
            closing = None
            if live is None:
                # A person's prompt goes protected: what their choice shows them (an investigation's party) can
                # then be edited into it, one call instead of an edit and a message.
                live = self._send_text(chat, html_text, secret=secret or (prompt is not None and chat > 0),
                                       markup=markup)
            if prompt is not None and chat > 0:
                live.table = prompt.table
                self._prompts[chat] = live
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
        on_page = not press.ref
        if on_page:  # chosen on the seat's page: shown on the chat's prompt, which a press would have answered
            found = self._prompts.get(chat)
            if found is None or found.table != echo.table:
                return False
            live = found
        else:
            live = self._known.get((chat, int(press.ref))) or _Live(int(press.ref), press.text,
                                                                     protected=press.protected)
        before = (live.html, live.markup, live.choice)
        markup = keyboard(echo.options, echo.table, echo.decision,
                          app=app_button(self._app_url(chat, echo.table), echo.language))
        folded = True
        if on_page and echo.text and echo.secret and not live.protected:
            # The words would say the secret in a message anyone may forward: the choice alone, in a spoiler.
            live.choice = _ARROW + f"<tg-spoiler>{escape(press.label)}</tg-spoiler>"
        elif echo.text and echo.secret and not live.protected:
            folded = False
            if markup is not None:
                return False  # nothing changes on the prompt: its buttons stay, the echo goes on its own
            live.choice = ""  # the choice itself is the secret: the prompt only loses its buttons
        elif echo.text:
            live.choice = message_html(echo)[0]
        else:
            label = escape(press.label)
            live.choice = _ARROW + (f"<tg-spoiler>{label}</tg-spoiler>" if echo.secret else label)
        if echo.follows:
            # The presser's next question, under the choice: its buttons are the message's now, and the choice and
            # the question stay when that question's answer is shown in turn (a vote chosen on the seat's page).
            live.html = "\n\n".join(p for p in (live.html, live.choice, escape(echo.follows)) if p)
            live.choice = ""
        live.markup = markup
        try:
            self._edit(chat, live)
        except BadRequest as exc:
            log.info("telegram: could not show a choice in %s: %s", chat, exc.message)
            live.html, live.markup, live.choice = before
            return False
        self._remember(chat, live)
        if on_page:
            self.app_edits += 1
        if echo.follows:
            live.table = echo.table
            self._prompts[chat] = live  # it asks again: the chat's latest prompt
        elif markup is None and self._prompts.get(chat) is live:
            del self._prompts[chat]  # answered for good: nothing more to show on it
        return folded

    def _app_url(self, chat: int, table: str | None) -> str | None:
        """The seat's page at ``table`` as a Mini App, for a private chat (Telegram offers one nowhere else)."""
        return self.app_url(table) if chat > 0 and table else None

    def _menu(self, chat: int, url: str | None, table: str | None, language: str) -> None:
        """The chat's menu button: "Open my seat" (``url``) while the chat's person plays at ``table``, Telegram's
        own again once that game ends. A menu that cannot be set changes nothing else: the prompt's own button
        opens the page all the same."""
        current = self._menus.get(chat)
        if chat <= 0 or table is None or (url is not None and current == table):
            return
        if url is None and current != table:
            return  # never set for this table here (the host's chat, another table's seat)
        button: MenuButton = MenuButtonWebApp(open_seat(language), WebAppInfo(url)) if url else MenuButtonDefault()
        try:
            self._call(self.bot.set_chat_menu_button(chat_id=chat, menu_button=button))
        except TelegramError as exc:
            log.info("telegram: could not set the menu button in %s: %s", chat, exc)
            return
        if url:
            self._menus[chat] = table
        else:
            self._menus.pop(chat, None)

    def _join_message(self, chat: int, message: Outbound) -> None:
        """The table's QR code and Join button (deep link ``https://t.me/<bot>?start=<code>``)."""
        assert message.join_code is not None
        target = int(message.shown_in) if message.shown_in else chat
        target = self._moved.get(target, target)
        url = create_deep_linked_url(self.bot.username, message.join_code)
        rows = [[InlineKeyboardButton(_SEAT + message.join_code, url=url)]]
        if message.table:
            # The host can fill seats with computer players and start before the seat list exists.
            rows.append([InlineKeyboardButton(o.label, callback_data=callback(message.table, LOBBY, o.token))
                         for o in message.options])
            screen = self.screen_url(message.table)
            if screen:  # the board for a laptop or TV at the table
                rows.append([InlineKeyboardButton(_SCREEN, url=screen)])
        markup = InlineKeyboardMarkup(rows)
        caption = cut(compose([message])[0], CAPTION_LIMIT)
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

    def _edit_lobby(self, chat: int, html_text: str, markup: InlineKeyboardMarkup | None) -> _Live | None:
        """The lobby message of this chat edited to ``html_text`` (the game's start) and closed; None if it can no
        longer be edited (deleted, too old: the text goes as a new message)."""
        live = self._lobby.pop(chat)
        live.html, live.markup = html_text, markup
        try:
            self._edit(chat, live)
        except BadRequest as exc:
            log.info("telegram: the lobby in %s cannot be edited, sending a new message: %s", chat, exc.message)
            return None
        self._remember(chat, live)
        return live

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
