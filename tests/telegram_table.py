"""A table of people on Telegram, for tests and the traffic benchmark: a real PTB ``Application`` against
``FakeBotAPI``, fed only with updates shaped as Telegram sends them, on a fake clock."""

from __future__ import annotations

import itertools
import random
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

from telegram import Update

from moderator.channels import Channel
from moderator.commands import Choose, Inbound, Press
from moderator.delivery import Worker
from moderator.service import Service
from moderator.store import Store
from moderator.tables import Table
from moderator.transports.telegram import CAPABILITIES, CHANNEL, TelegramBot, build_application
from tests.fake_telegram import (
    TOKEN,
    FakeBotAPI,
    Pressed,
    buttons,
    callback_query_id,
    group_chat,
    private_chat,
    user,
)


class Clock:
    """A clock that moves only when told (shared by the service, the sender and the fake API)."""

    def __init__(self, now: float = 1_800_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


class TelegramTable:
    """One bot (Application + Service + TelegramBot) on a database file, and the people talking to it."""

    def __init__(self, db: Path, *, seed: int = 1, clock: Clock | None = None, api: FakeBotAPI | None = None,
                 chooser: Callable[..., Any] | None = None) -> None:
        self.db = db
        self.seed = seed
        self.clock = clock or Clock()
        self.api = api or FakeBotAPI(self.clock)
        self.updates = itertools.count(1)
        self.message_ids = itertools.count(1)
        self.people: dict[str, dict[str, Any]] = {}
        self.presses = 0
        self.pressed = Pressed(lambda chat, message_id: self.api.chats.get(chat, {}).get(message_id))
        self.typing = 1.5
        """Seconds each update adds to the clock: people do not type or press within the same millisecond."""
        self.running = False
        self.app_url: Callable[[str], str | None] = lambda table: None
        """The seat's page in Telegram (``Runtime.app_url``): none unless a test or benchmark offers one."""

    # --- the bot's life ---------------------------------------------------------------------------------

    async def boot(self) -> None:
        """Start (or restart) the bot: a new Store, Service, Application and TelegramBot on the same file."""
        self.store = Store(self.db)
        self.service = Service(self.store, clock=self.clock, seed=lambda: self.seed,
                               codes=random.Random(self.seed), capabilities={CHANNEL: CAPABILITIES})
        self.app = build_application(TOKEN, request=self.api, rate_limiter=False)
        self.bot = TelegramBot(self.service, clock=self.clock, app_url=self.app_url)
        self.errors: list[BaseException] = []
        self.bot.install(self.app)

        async def record(update: object, context: Any) -> None:
            self.errors.append(context.error)

        self.app.add_error_handler(record)
        await self.app.initialize()
        self.workers: list[Worker] = []

        def delivery(channel: Channel, after: Callable[[], Awaitable[int]]) -> Worker:
            # Delivered by hand (``bot.deliver``), on a thread of its own with its own connection, as under serve.
            worker = Worker(lambda: Store(self.db), {CHANNEL: channel}, clock=self.clock, after_round=after)
            self.workers.append(worker)
            return worker

        await self.bot.start(self.app, delivery)
        self.service.resume_all()
        self.running = True

    async def stop(self) -> None:
        """Stop the bot as its process would end (a bot not running is left as it is)."""
        if not self.running:
            return
        self.running = False
        for worker in self.workers:
            await worker.stop()
        await self.app.shutdown()
        self.store.close()


    # --- people ----------------------------------------------------------------------------------------

    def person(self, name: str, language: str = "en") -> dict[str, Any]:
        if name not in self.people:
            self.people[name] = user(10_000 + len(self.people), name, language)
        return self.people[name]

    async def feed(self, update: dict[str, Any]) -> None:
        """One update through the Application's handlers, then delivery of whatever is due."""
        self.clock.advance(self.typing)
        await self.app.process_update(Update.de_json(update, self.app.bot))
        assert not self.errors, self.errors
        await self.bot.deliver()

    async def say(self, name: str, text: str, chat: dict[str, Any] | None = None) -> None:
        """``name`` types ``text`` in their private chat (or in ``chat``)."""
        person = self.person(name)
        message: dict[str, Any] = {
            "message_id": next(self.message_ids),
            "from": person,
            "chat": chat or private_chat(person),
            "date": int(self.clock()),
            "text": text,
        }
        if text.startswith("/"):
            message["entities"] = [{"type": "bot_command", "offset": 0, "length": len(text.split()[0])}]
        await self.feed({"update_id": next(self.updates), "message": message})

    async def press(self, name: str, chat: int, message_id: int, data: str) -> None:
        """``name`` presses the button with ``data`` under a message the bot sent to ``chat``."""
        message = self.api.chats[chat][message_id]
        query = {"id": callback_query_id(next(self.updates), self.clock()), "from": self.person(name),
                 "message": message, "chat_instance": f"ci{chat}", "data": data}
        self.presses += 1
        await self.feed({"update_id": next(self.updates), "callback_query": query})

    async def wait(self, seconds: float, rounds: float = 2.0) -> None:
        """Let ``seconds`` pass with the sender's rounds in between, as its worker wakes on its own under serve
        (what pacing held back goes out while people think)."""
        while seconds > rounds:
            self.clock.advance(rounds)
            seconds -= rounds
            await self.bot.deliver()
        self.clock.advance(seconds)

    async def settle(self, seconds: float = 120.0) -> None:
        """Let time pass until nothing waits in the outbox (pacing, retries)."""
        for _ in range(int(seconds // 5)):
            self.clock.advance(5.0)
            await self.bot.deliver()
            if not self.store.backlog():
                return

    # --- what phones show --------------------------------------------------------------------------------

    def chat_of(self, name: str) -> int:
        return int(self.person(name)["id"])

    def join_code(self, chat: int) -> str:
        """The code in the Join button of the newest QR message in ``chat``."""
        for message in reversed(self.api.messages(chat)):
            for button in buttons(message):
                if "url" in button:
                    return str(parse_qs(urlparse(button["url"]).query)["start"][0])
        raise AssertionError(f"no join button in chat {chat}")

    def prompt(self, name: str) -> dict[str, Any] | None:
        """The newest message with game buttons in this person's chat that they have not pressed yet."""
        chat = self.chat_of(name)
        for message in reversed(self.api.messages(chat)):
            game = [b for b in buttons(message) if _is_game(b.get("callback_data", ""))]
            if game:
                return None if (chat, message["message_id"]) in self.pressed else message
        return None

    def table(self) -> Table:
        rows = self.store.tables_of(CHANNEL, str(self.chat_of(next(iter(self.people)))))
        table = self.service.table(rows[0].id)
        assert table is not None
        return table

    # --- whole games -------------------------------------------------------------------------------------

    async def open_and_join(self, names: list[str], *, group: dict[str, Any] | None) -> int:
        """The first name opens a table (in ``group`` or privately), everyone joins by the QR code's deep link;
        returns the chat that shows the QR code."""
        host = names[0]
        await self.say(host, "/newgame", chat=group)
        qr_chat = group["id"] if group else self.chat_of(host)
        code = self.join_code(qr_chat)
        for name in names[1:]:
            self.clock.advance(4.0)
            await self.say(name, f"/start {code}")
        return qr_chat

    async def open_and_start(self, names: list[str], *, group: dict[str, Any] | None, pause: float = 0.0) -> None:
        """``open_and_join``, then after ``pause`` seconds the host starts the game where the table was opened."""
        await self.open_and_join(names, group=group)
        self.clock.advance(pause)
        await self.say(names[0], "/startgame", chat=group)

    async def play(self, names: list[str], rng: random.Random, *, think: float = 6.0, limit: int = 3000,
                   presses: int | None = None, on_page: str | None = None) -> None:
        """Everyone presses a random button of their newest prompt until the game is over (or ``presses``);
        ``on_page`` decides on the seat's page in Telegram instead: the button's token handed to the service as the
        page's route hands it (the seat's Telegram address, a ``Press`` without a message)."""
        for _ in range(limit):
            if presses is not None and presses <= 0:
                return
            if self.table().status == "over":
                return
            waiting = [(n, m) for n in names if (m := self.prompt(n)) is not None]
            if not waiting:
                self.clock.advance(30.0)
                await self.bot.deliver()
                continue
            name, message = rng.choice(waiting)
            chat = self.chat_of(name)
            button = rng.choice([b for b in buttons(message) if _is_game(b.get("callback_data", ""))])
            self.pressed.add((chat, message["message_id"]))
            presses = None if presses is None else presses - 1
            await self.wait(think)
            if name == on_page:
                table, decision, token = button["callback_data"].split(":")
                self.service.handle(Inbound(CHANNEL, str(chat), Choose(token, int(decision)), table=table,
                                            external_id=f"web:{chat}.{message['message_id']}.{decision}",
                                            press=Press("", "", button["text"])))
                await self.bot.deliver()
                continue
            await self.press(name, chat, message["message_id"], button["callback_data"])
        raise AssertionError("the game did not end")


def _is_game(data: str) -> bool:
    parts = data.split(":")
    return len(parts) == 3 and (parts[1].isdigit() or parts[1] == "-")


__all__ = ["Clock", "TelegramTable", "group_chat"]
