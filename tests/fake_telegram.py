"""An in-process fake of the Telegram Bot API behind python-telegram-bot's ``BaseRequest``, and updates shaped
exactly as Telegram sends them.

``FakeBotAPI`` answers getMe, getUpdates, sendMessage, sendPhoto, editMessageText, editMessageMedia,
answerCallbackQuery, setMyCommands, setChatMenuButton, deleteWebhook and deleteMessage, records every call with
the fake clock's time, keeps every chat's messages as a phone would show them (edits applied) and its menu button,
holds updates for long polling until an ``offset`` confirms them (as Telegram does), parses ``parse_mode=HTML`` as
strictly as Telegram (an unescaped ``<`` or ``&`` is a 400), answers a press only within Telegram's answer window
(later: 400 "query is too old"), and fails on request: a 403 for a chat that never opened the bot, a one-off 429
with ``retry_after``, a 400 with ``migrate_to_chat_id``.
"""

from __future__ import annotations

import html
import itertools
import json
import re
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from telegram.request import BaseRequest, RequestData

BOT_ID = 7000
BOT_USERNAME = "ModeratorTestBot"
TOKEN = f"{BOT_ID}:TEST-token"

_TAGS = {"b": "bold", "strong": "bold", "i": "italic", "em": "italic", "u": "underline", "s": "strikethrough",
         "ins": "underline", "del": "strikethrough", "strike": "strikethrough", "code": "code", "pre": "pre",
         "tg-spoiler": "spoiler", "blockquote": "blockquote", "a": "text_link", "span": "spoiler"}
_ENTITIES = {"lt": "<", "gt": ">", "amp": "&", "quot": '"'}
_TOKEN = re.compile(
    r'<(/?)([a-z-]+)((?:\s+[a-z-]+="[^"<>]*")*)\s*>|&(lt|gt|amp|quot|#\d+|#x[0-9a-f]+);|[<>&]', re.IGNORECASE
)
_ATTRIBUTE = re.compile(r'([a-z-]+)="([^"]*)"', re.IGNORECASE)


class ParseError(ValueError):
    """What Telegram answers 400 "can't parse entities" for."""


def parse_html(text: str) -> tuple[str, list[dict[str, Any]]]:
    """Telegram's HTML: the plain text and its entities (offsets in UTF-16 code units)."""
    out: list[str] = []
    entities: list[dict[str, Any]] = []
    open_tags: list[tuple[str, int, dict[str, Any]]] = []
    position = 0

    def units() -> int:
        return len("".join(out).encode("utf-16-le")) // 2

    for match in _TOKEN.finditer(text):
        out.append(text[position : match.start()])
        position = match.end()
        closing, tag, attributes, entity = match.group(1), match.group(2), match.group(3), match.group(4)
        if entity:
            if entity.startswith("#"):
                digits = entity[1:]
                out.append(chr(int("0" + digits, 0) if digits[:1].lower() == "x" else int(digits)))
            else:
                out.append(_ENTITIES[entity.lower()])
        elif tag is not None:
            tag = tag.lower()
            attrs = {k.lower(): html.unescape(v) for k, v in _ATTRIBUTE.findall(attributes or "")}
            if tag not in _TAGS:
                raise ParseError(f"unsupported start tag \"{tag}\"")
            if closing:
                if attributes or not open_tags or open_tags[-1][0] != tag:
                    raise ParseError(f"unmatched end tag \"{tag}\"")
                _, start, extra = open_tags.pop()
                if units() > start:
                    entities.append({"type": _TAGS[tag], "offset": start, "length": units() - start, **extra})
            else:
                extra = {}
                if tag == "a":
                    if "href" not in attrs:
                        raise ParseError("a link without href")
                    extra = {"url": attrs["href"]}
                elif tag == "span" and attrs.get("class") != "tg-spoiler":
                    raise ParseError("a span that is not a spoiler")
                elif tag != "span" and attrs:
                    raise ParseError(f"unexpected attributes on \"{tag}\"")
                open_tags.append((tag, units(), extra))
        else:
            raise ParseError(f"unescaped {match.group(0)!r}")
    out.append(text[position:])
    if open_tags:
        raise ParseError("unclosed tag")
    return "".join(out), sorted(entities, key=lambda e: (e["offset"], -e["length"]))


ANSWER_WINDOW = 15.0
"""Seconds after a press within which Telegram takes its answer (``answerCallbackQuery``); later it answers 400
"query is too old". (Telegram does not document the figure; bots meet the error after some ten seconds.)"""


def callback_query_id(n: int, pressed: float) -> str:
    """A callback query's id as this fake's Telegram makes them: unique, and saying when the button was pressed,
    which Telegram knows (``pressed_at`` reads it back for the answer window)."""
    return f"{n}.{round(pressed * 1000)}"


def pressed_at(query_id: str) -> float | None:
    """When the press with this id was made, if the id is one of ``callback_query_id``'s."""
    n, dot, millis = query_id.partition(".")
    return int(millis) / 1000 if dot and n.isdigit() and millis.isdigit() else None


@dataclass
class Call:
    """One Bot API request as the fake saw it."""

    method: str
    params: dict[str, Any]
    at: float
    files: list[str] = field(default_factory=list)

    @property
    def chat_id(self) -> int | None:
        value = self.params.get("chat_id")
        return None if value is None else int(value)


def user(user_id: int, first_name: str, language: str = "en") -> dict[str, Any]:
    """A Telegram ``User`` as updates carry it."""
    return {"id": user_id, "is_bot": False, "first_name": first_name, "language_code": language}


def private_chat(person: dict[str, Any]) -> dict[str, Any]:
    return {"id": person["id"], "type": "private", "first_name": person["first_name"]}


def group_chat(chat_id: int, title: str = "Game night", kind: str = "group") -> dict[str, Any]:
    return {"id": chat_id, "type": kind, "title": title}


class FakeBotAPI(BaseRequest):
    """The Bot API in process: answers, records, and keeps what every chat shows."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self.clock = clock
        self.calls: list[Call] = []
        self.chats: dict[int, dict[int, dict[str, Any]]] = defaultdict(dict)
        self.never_opened: set[int] = set()
        """Private chats that answer 403, as for a user who never pressed Start."""
        self.fail_once: dict[tuple[str, int], tuple[int, dict[str, Any]]] = {}
        self.deletable = True
        self.answer_window = ANSWER_WINDOW
        self.migrated: dict[int, int] = {}
        """Groups upgraded to a supergroup: every send there answers 400 with ``migrate_to_chat_id``."""
        self._ids = itertools.count(100)
        self.menus: dict[int, dict[str, Any]] = {}
        """Each private chat's menu button, as the bot last set it (``setChatMenuButton``)."""
        self.updates: list[dict[str, Any]] = []
        """Updates waiting for ``getUpdates``: each stays until a later call's ``offset`` is past its id."""

    # --- BaseRequest ----------------------------------------------------------------------------------

    async def initialize(self) -> None:
        pass

    async def shutdown(self) -> None:
        pass

    @property
    def read_timeout(self) -> float:
        return 1.0

    async def do_request(self, url: str, method: str, request_data: RequestData | None = None,
                         *args: Any, **kwargs: Any) -> tuple[int, bytes]:
        api = url.rsplit("/", 1)[-1]
        params = dict(request_data.parameters) if request_data else {}
        files = list(request_data.multipart_data or {}) if request_data and request_data.contains_files else []
        call = Call(api, params, self.clock(), files)
        self.calls.append(call)
        status, body = self._answer(api, params, call.chat_id)
        return status, json.dumps(body).encode()

    # --- answers --------------------------------------------------------------------------------------

    def _answer(self, api: str, params: dict[str, Any], chat: int | None) -> tuple[int, dict[str, Any]]:
        if chat is not None and (api, chat) in self.fail_once:
            status, body = self.fail_once.pop((api, chat))
            return status, {"ok": False, "error_code": status, **body}
        if chat is not None and chat in self.migrated and api in ("sendMessage", "sendPhoto", "editMessageText",
                                                                    "editMessageMedia"):
            return 400, {"ok": False, "error_code": 400,
                         "description": "Bad Request: group chat was upgraded to a supergroup chat",
                         "parameters": {"migrate_to_chat_id": self.migrated[chat]}}
        if chat is not None and chat in self.never_opened and api in ("sendMessage", "sendPhoto"):
            return 403, {"ok": False, "error_code": 403,
                         "description": "Forbidden: bot can't initiate conversation with a user"}
        try:
            result = self._result(api, params, chat)
        except ParseError as exc:
            return 400, {"ok": False, "error_code": 400, "description": f"Bad Request: can't parse entities: {exc}"}
        except LookupError as exc:
            return 400, {"ok": False, "error_code": 400, "description": f"Bad Request: {exc}"}
        return 200, {"ok": True, "result": result}

    def _result(self, api: str, params: dict[str, Any], chat: int | None) -> Any:
        match api:
            case "getMe":
                return {"id": BOT_ID, "is_bot": True, "first_name": "Moderator", "username": BOT_USERNAME,
                        "can_join_groups": True, "can_read_all_group_messages": False,
                        "supports_inline_queries": False}
            case "getUpdates":
                offset = int(params.get("offset") or 0)
                self.updates = [u for u in self.updates if u["update_id"] >= offset]  # confirmed: gone for good
                return self.updates[: int(params.get("limit") or 100)]
            case "sendMessage" | "sendPhoto":
                assert chat is not None
                message = self._message(chat, params, photo=api == "sendPhoto")
                self.chats[chat][message["message_id"]] = message
                return message
            case "editMessageText":
                assert chat is not None
                found = self.chats[chat].get(int(params["message_id"]))
                if found is None or "text" not in found:
                    raise LookupError("message to edit not found")
                message = found
                text, entities = self._text(params)
                if text == message["text"] and params.get("reply_markup") == message.get("reply_markup"):
                    raise LookupError("message is not modified: specified new message content and reply markup"
                                      " are exactly the same as a current content and reply markup of the message")
                message.update(text=text, entities=entities, edit_date=int(self.clock()))
                if params.get("reply_markup"):
                    message["reply_markup"] = params["reply_markup"]
                else:
                    message.pop("reply_markup", None)
                return message
            case "editMessageMedia":
                assert chat is not None
                found = self.chats[chat].get(int(params["message_id"]))
                if found is None or "photo" not in found:
                    raise LookupError("message to edit not found")
                message = found
                media = params["media"]
                media = json.loads(media) if isinstance(media, str) else media
                if media.get("type") != "photo":
                    raise LookupError("this fake edits photos only")
                n = len(self.calls)  # a new upload: a new file
                message["photo"] = [{"file_id": f"P{n}", "file_unique_id": f"P{n}", "width": 1200, "height": 1000}]
                message["edit_date"] = int(self.clock())
                return message
            case "deleteMessage":
                if not self.deletable:
                    raise LookupError("message can't be deleted")
                assert chat is not None
                self.chats[chat].pop(int(params["message_id"]), None)
                return True
            case "answerCallbackQuery":
                pressed = pressed_at(str(params.get("callback_query_id", "")))
                if pressed is not None and self.clock() - pressed > self.answer_window:
                    raise LookupError("query is too old and response timeout expired or query ID is invalid")
                return True
            case "setMyCommands" | "deleteWebhook":
                return True
            case "setChatMenuButton":
                assert chat is not None
                button = params.get("menu_button") or {"type": "default"}
                self.menus[chat] = json.loads(button) if isinstance(button, str) else button
                return True
        raise LookupError(f"method {api} is not in this fake")

    def _text(self, params: dict[str, Any], key: str = "text") -> tuple[str, list[dict[str, Any]]]:
        raw = str(params.get(key, ""))
        if params.get("parse_mode") == "HTML":
            return parse_html(raw)
        return raw, []

    def _message(self, chat: int, params: dict[str, Any], *, photo: bool) -> dict[str, Any]:
        message: dict[str, Any] = {
            "message_id": next(self._ids),
            "from": {"id": BOT_ID, "is_bot": True, "first_name": "Moderator", "username": BOT_USERNAME},
            "chat": {"id": chat, "type": "private", "first_name": "x"} if chat > 0
            else {"id": chat, "type": "group", "title": "Game night"},
            "date": int(self.clock()),
        }
        if photo:
            text, entities = self._text(params, "caption")
            message.update(photo=[{"file_id": "QR", "file_unique_id": "QR", "width": 330, "height": 330}],
                           caption=text, caption_entities=entities)
        else:
            text, entities = self._text(params)
            message.update(text=text, entities=entities)
        if params.get("protect_content"):
            message["has_protected_content"] = True
        if params.get("reply_markup"):
            message["reply_markup"] = params["reply_markup"]
        return message

    # --- what a test reads --------------------------------------------------------------------------

    def messages(self, chat: int) -> list[dict[str, Any]]:
        """Every message a chat shows now, oldest first."""
        return [self.chats[chat][k] for k in sorted(self.chats[chat])]

    def texts(self, chat: int) -> list[str]:
        return [m.get("text", m.get("caption", "")) for m in self.messages(chat)]

    def of(self, method: str, chat: int | None = None) -> list[Call]:
        return [c for c in self.calls if c.method == method and (chat is None or c.chat_id == chat)]

    def sends(self) -> list[Call]:
        """The calls Telegram's limits count: messages, photos and edits."""
        return [c for c in self.calls
                if c.method in ("sendMessage", "sendPhoto", "editMessageText", "editMessageMedia")]

    def max_per_minute(self, chat: int) -> int:
        """The most sends and edits into ``chat`` within any 60 seconds."""
        times = sorted(c.at for c in self.sends() if c.chat_id == chat)
        best = 0
        for i, start in enumerate(times):
            best = max(best, sum(1 for t in times[i:] if t < start + 60.0))
        return best


def buttons(message: dict[str, Any]) -> list[dict[str, Any]]:
    """The inline buttons of a stored message, row by row."""
    markup = message.get("reply_markup") or {}
    return [b for row in markup.get("inline_keyboard", []) for b in row]


def asked(message: dict[str, Any]) -> str | None:
    """The decision a message's game buttons answer (``<table>:<decision>:<token>``), if it has any."""
    for button in buttons(message):
        parts = str(button.get("callback_data", "")).split(":")
        if len(parts) == 3 and (parts[1].isdigit() or parts[1] == "-"):
            return parts[1]
    return None


class Pressed:
    """The prompts a person has pressed, each as the question it asked then: a message the bot edits into a new
    question (the President's ballot under the nomination just pressed) is a prompt again."""

    def __init__(self, message: Callable[[int, int], dict[str, Any] | None]) -> None:
        self._message = message
        self._asked: dict[tuple[int, int], str | None] = {}

    def add(self, key: tuple[int, int]) -> None:
        """``key`` (chat, message id) was pressed: the question it shows now is answered."""
        found = self._message(*key)
        self._asked[key] = asked(found) if found is not None else None

    def __contains__(self, key: object) -> bool:
        """The message (chat, message id) asks nothing its person has not pressed already."""
        if key not in self._asked:
            return False
        assert isinstance(key, tuple)
        found = self._message(*key)
        return found is None or asked(found) == self._asked[key]


def init_data(person: dict[str, Any], *, token: str = TOKEN, auth_date: int = 1_800_000_000,
              **extra: str) -> str:
    """What a Telegram client hands a Mini App opened from an inline ``web_app`` button (``initData``): the user,
    a query id, the date, signed as core.telegram.org/bots/webapps documents it (written here from the docs, not
    from the moderator's code): every field but ``hash``, sorted, as ``key=value`` lines, under HMAC-SHA256 with
    the key HMAC-SHA256("WebAppData", token)."""
    import hashlib
    import hmac
    from urllib.parse import urlencode

    fields = {"query_id": "AAHdF6IQAAAAAN0XohDhrOrc", "auth_date": str(auth_date),
              "user": json.dumps(person, separators=(",", ":"), ensure_ascii=False), **extra}
    check = "\n".join(f"{k}={v}" for k, v in sorted(fields.items()))
    key = hmac.new(b"WebAppData", token.encode(), hashlib.sha256).digest()
    fields["hash"] = hmac.new(key, check.encode(), hashlib.sha256).hexdigest()
    return urlencode(fields)
