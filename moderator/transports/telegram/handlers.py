"""Updates in (on the loop): PTB's handlers turn each update into one ``Inbound`` for the service, and apply the
service's answer (a toast for a press, a vote it withdraws deleted from the group)."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from telegram import BotCommand, InlineKeyboardButton, InlineKeyboardMarkup, Message, Update, User
from telegram.constants import ChatType
from telegram.error import TelegramError
from telegram.ext import Application, CallbackQueryHandler, ContextTypes, MessageHandler, filters

from ...catalog import DEFAULT_LANGUAGE, DEFAULT_THEME, languages, themes
from ...channels import Channel, Delivery, NotStored, Port, Problem, Receipt
from ...commands import (
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
from ...grammar import Verb, grammar
from .channel import TelegramChannel
from .config import CAPABILITIES, CHANNEL, menu, provider_problem
from .messages import LOBBY, pressed_label

log = logging.getLogger(__name__)

def _language(user: User | None) -> str | None:
    code = (user.language_code or "").split("-")[0].lower() if user is not None else ""
    return code if code in languages(DEFAULT_THEME) else None


class TelegramBot:
    """Updates in (handlers on the loop thread); the channel's deliveries out, with their reports applied."""

    def __init__(self, port: Port, *, clock: Callable[[], float] = time.time,
                 screen_url: Callable[[str], str | None] = lambda table: None,
                 app_url: Callable[[str], str | None] = lambda table: None,
                 report: Callable[[Problem | None], None] = lambda problem: None) -> None:
        self.port = port
        self.clock = clock
        self.screen_url = screen_url
        self.app_url = app_url
        """The seat's page at a table as a Mini App (``Runtime.app_url``), offered under every private prompt."""
        self.report = report
        """What a call made while handling an update found of Telegram as a whole (``Runtime.report``)."""
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
        """After ``initialize``: the menu, then the channel and its delivery (``delivery(channel, after_round)``)."""
        for language in languages(DEFAULT_THEME):
            commands = [BotCommand(c, description) for c, description in menu(language)]
            await app.bot.set_my_commands(commands, language_code=None if language == DEFAULT_LANGUAGE else language)
        self.channel = TelegramChannel(app.bot, asyncio.get_running_loop(), clock=self.clock,
                                       screen_url=self.screen_url, app_url=self.app_url)
        self.delivery = delivery(self.channel, self._apply_notices)
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
        """A pressed button: handed to the service first, then answered (a failed answer never drops a press: the
        service is told, and shows what the press did another way)."""
        query = update.callback_query
        if query is None or query.data is None:
            return
        table_id, _, rest = query.data.partition(":")
        kind, _, arg = rest.partition(":")
        if kind == LOBBY:
            inbound = self._inbound(update, LobbyControl(arg), external_id=f"cb:{query.id}", table=table_id)
        elif kind in ("lang", "theme"):
            command = SetLanguage(arg) if kind == "lang" else SetTheme(arg)
            inbound = self._inbound(update, command, external_id=f"cb:{query.id}")
        else:
            decision = int(kind) if number(kind.removeprefix("-")) is not None else None
            label = pressed_label(query.message, query.data) or arg
            message = query.message
            press = None
            if isinstance(message, Message):
                press = Press(str(message.message_id), message.text_html if message.text else "", label,
                              bool(message.has_protected_content))
            inbound = self._inbound(update, Choose(arg, decision), raw=label, external_id=f"cb:{query.id}",
                                    press=press, table=table_id)
        receipt = await self._handle(inbound)
        try:
            await query.answer(receipt.notice)  # a refused lobby control says why, as a refused choice does
        except TelegramError as exc:
            # Too late to answer ("query is too old": the bot was down past Telegram's answer window), or the
            # network failed: the press counted all the same, and the presser must see that it did.
            log.info("telegram: could not answer a press: %s", exc)
            if receipt.notice is not None:
                self.port.unanswered(inbound)
                if self.delivery is not None:
                    self.delivery.kick()

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
            error = context.error
            log.log(logging.DEBUG if error.said else logging.ERROR,
                    "telegram: an update could not be stored (%s); it is asked for again", error)
            if isinstance(update, Update):
                self.not_stored.add(update.update_id)
            return
        problem = provider_problem(context.error, connecting_only=True) if context.error is not None else None
        if problem is not None:  # its input was stored: only an answer to it (a toast, a deletion) did not go
            self.report(problem)
            return
        log.error("telegram: an update failed", exc_info=context.error)

    async def _picker(self, update: Update, kind: str, options: Iterable[str]) -> None:
        """Buttons to choose a language or a theme (no words: the options are their own labels)."""
        message = update.effective_message
        assert message is not None
        buttons = [InlineKeyboardButton(o, callback_data=f":{kind}:{o}") for o in options]
        await message.reply_text("\U0001f310" if kind == "lang" else "\U0001f3a8",
                                 reply_markup=InlineKeyboardMarkup([buttons]))


async def _delete(message: Message) -> None:
    try:
        await message.delete()
    except TelegramError as exc:  # not an admin, or too old: the vote is still not counted
        log.info("telegram: could not delete a vote typed in the group: %s", exc)
