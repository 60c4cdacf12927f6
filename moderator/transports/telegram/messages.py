"""Messages and keyboards for Telegram: outbox messages as one message's HTML (secrets behind spoilers, below a
neutral first line), the buttons of a prompt and of the lobby, and how many calls a batch takes."""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import replace
from typing import Final

from telegram import InlineKeyboardButton, InlineKeyboardMarkup, Message, WebAppInfo

from ...catalog import DEFAULT_THEME, Catalog
from ...channels import REPEAT_MESSAGE, Kind, Option, Outbound
from .config import CALLBACK_LIMIT, TEXT_LIMIT

OPEN_SEAT: Final = "web-open-seat"
"""The catalog's words for opening the seat's page from the chat (the button, the menu button)."""
LOBBY: Final = "L"
"""The callback data's kind of the lobby's controls (``<table>:L:<token>``)."""


def escape(text: str) -> str:
    """Text for ``parse_mode=HTML``: every ``<``, ``>`` and ``&`` escaped (names may hold any of them)."""
    return html.escape(text, quote=False)


def message_html(message: Outbound) -> tuple[str, str | None]:
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
        part, neutral = message_html(message)
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


def keyboard(options: Sequence[Option], table: str | None, decision: int | None, *,
             app: InlineKeyboardButton | None = None) -> InlineKeyboardMarkup | None:
    """The buttons of a prompt: one per option, carrying table, decision and token; ``app`` (the seat's page in
    Telegram, ``app_button``) in a row of its own under them."""
    if not options:
        return None
    buttons = [InlineKeyboardButton(o.label, callback_data=callback(table, decision, o.token)) for o in options]
    rows = _rows(buttons, max(len(o.label) for o in options))
    return InlineKeyboardMarkup([*rows, [app]] if app is not None else rows)


def app_button(url: str | None, language: str) -> InlineKeyboardButton | None:
    """"Open my seat": the seat's page as a Mini App (an inline ``web_app`` button, which Telegram offers in a
    private chat only, and which alone hands the page the person's signed ``initData``)."""
    if url is None:
        return None
    return InlineKeyboardButton(open_seat(language), web_app=WebAppInfo(url))


def open_seat(language: str) -> str:
    """The words of the button and of the chat's menu button that open the seat's page."""
    return Catalog.load(DEFAULT_THEME, language).text(OPEN_SEAT)


def lobby_keyboard(message: Outbound) -> InlineKeyboardMarkup | None:
    """The host's seating controls: move a seat up one place, add a computer player, start (the last two in a
    row of their own)."""
    seating = message.seating
    if seating is None or not seating.controls or not seating.open:
        return None
    *moves, computer, go = seating.controls
    buttons = [InlineKeyboardButton(o.label, callback_data=callback(message.table, LOBBY, o.token)) for o in moves]
    rows = _rows(buttons, max((len(n) for n in seating.names), default=0) + 2)
    rows.append([InlineKeyboardButton(o.label, callback_data=callback(message.table, LOBBY, o.token))
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


def cut(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters, an ellipsis where it was cut."""
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def calls(messages: Sequence[Outbound]) -> int:
    """At most how many Bot API calls these messages take in one chat (a fold of plain texts may take fewer). A
    closed seat list goes with the text after it (edited into the lobby message, or sent with it)."""
    own = [(m.kind in _OWN_CALL and not (m.kind is Kind.LOBBY and m.seating is not None and not m.seating.open))
           or (m.kind is Kind.ECHO and m.press is not None) for m in messages]
    return sum(own) + len(chunks([m for m, alone in zip(messages, own, strict=True) if not alone]))


_OWN_CALL: Final = frozenset({Kind.JOIN, Kind.LOBBY, Kind.COUNTER, Kind.BOARD})
_EDITED_IN_PLACE: Final = frozenset({Kind.COUNTER, Kind.BOARD, Kind.LOBBY})


def as_repeat(message: Outbound) -> Outbound:
    """A message that may have gone out before a crash (``handed``), saying it is a repeat: Telegram cannot tell
    whether it did, and a second "policy enacted" must not read as a second enactment. An edit repeats nothing."""
    if (message.handed is None or message.edit is not None or message.press is not None
            or message.kind in _EDITED_IN_PLACE or not message.text):
        return message
    words = Catalog.load(DEFAULT_THEME, message.language).text(REPEAT_MESSAGE)
    return replace(message, text=f"{words}\n{message.text}")


def pressed_label(message: object, data: str) -> str | None:
    """The text of the pressed button."""
    if not isinstance(message, Message) or message.reply_markup is None:
        return None
    for row in message.reply_markup.inline_keyboard:
        for button in row:
            if button.callback_data == data:
                return button.text
    return None
