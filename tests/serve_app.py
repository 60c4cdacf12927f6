"""``serve``'s app under Starlette's TestClient, with only the network edge faked (the fake Bot API and the fake
Twilio): its settings, the requests Telegram and Twilio send it, and what its database holds. The ``server``
fixture (tests/conftest.py) is one of these on a fresh database."""

from __future__ import annotations

import hashlib
import itertools
import sqlite3
import warnings
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.datastructures import State

from moderator.transports.telegram import SECRET_HEADER
from tests.fake_telegram import TOKEN, FakeBotAPI, private_chat, user
from tests.fake_twilio import ACCOUNT_SID, AUTH_TOKEN, OUR_NUMBER, PUBLIC_URL, FakeTwilio, incoming, signature

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # Starlette 1.x asks for httpx2; httpx works the same here
    from starlette.testclient import TestClient as TestClient  # (re-exported: conftest takes it from here)

SECRET = "webhook-secret_0123456789"
HOOK = "/telegram"
SMS_URL = f"{PUBLIC_URL}/sms"
LOCAL = ("127.0.0.1", 50000)
"""A client on this machine (``curl`` on the host, the container's health check): ``/healthz`` tells it everything."""


class WebhookBotAPI(FakeBotAPI):
    """The fake Bot API, also answering setWebhook (and remembering what it was told)."""

    webhook: dict[str, Any] | None = None

    def _result(self, api: str, params: dict[str, Any], chat: int | None) -> Any:
        if api == "setWebhook":
            self.webhook = params
            return True
        return super()._result(api, params, chat)


def env(db: Path, **extra: str) -> dict[str, str]:
    return {
        "MODERATOR_DB": str(db),
        "MODERATOR_PUBLIC_URL": PUBLIC_URL,
        "TELEGRAM_TOKEN": TOKEN,
        "TELEGRAM_WEBHOOK_SECRET": SECRET,
        "TWILIO_ACCOUNT_SID": ACCOUNT_SID,
        "TWILIO_AUTH_TOKEN": AUTH_TOKEN,
        "TWILIO_FROM": OUR_NUMBER,
        **extra,
    }


class Updates:
    """The updates Telegram sends for people typing to the bot, numbered as Telegram numbers them."""

    def __init__(self) -> None:
        self.ids = itertools.count(1)

    def say(self, person: dict[str, Any], text: str, update_id: int | None = None) -> dict[str, Any]:
        message: dict[str, Any] = {"message_id": next(self.ids), "from": person, "chat": private_chat(person),
                                   "date": 1_800_000_000, "text": text}
        if text.startswith("/"):
            message["entities"] = [{"type": "bot_command", "offset": 0, "length": len(text.split()[0])}]
        return {"update_id": update_id if update_id is not None else next(self.ids) + 1000, "message": message}


class Server(Updates):
    """The app under a TestClient, with handles on the fakes and the database file."""

    def __init__(self, client: TestClient, api: WebhookBotAPI, twilio: FakeTwilio, db: Path) -> None:
        super().__init__()
        self.client, self.api, self.twilio, self.db = client, api, twilio, db

    def update(self, body: dict[str, Any], *, secret: str | None = SECRET) -> int:
        headers = {SECRET_HEADER: secret} if secret is not None else {}
        return int(self.client.post(HOOK, json=body, headers=headers).status_code)

    def text(self, sender: str, body: str, sid: str, *, token: str = AUTH_TOKEN) -> int:
        form = incoming(sender, body, sid)
        headers = {"X-Twilio-Signature": signature(SMS_URL, form, token)}
        return int(self.client.post("/sms", data=form, headers=headers).status_code)

    def app_state(self) -> State:
        app = self.client.app
        assert isinstance(app, Starlette)  # create_app's, which the TestClient runs as it is
        return app.state

    def rows(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        with sqlite3.connect(self.db) as conn:
            return conn.execute(sql, params).fetchall()

    def snapshot(self) -> str:
        """Everything the database holds."""
        with sqlite3.connect(self.db) as conn:
            return hashlib.sha256("\n".join(conn.iterdump()).encode()).hexdigest()

    def game_state(self) -> tuple[Any, ...]:
        """Tables, seats and actions: what a refused input must not change."""
        return tuple(self.rows(f"SELECT * FROM {t} ORDER BY rowid") for t in ("game_tables", "seats", "actions"))


ANN = user(501, "Ann")
BOB = user(502, "Bob")


def open_table(s: Server) -> str:
    assert s.update(s.say(ANN, "/newgame")) == 200
    [(code,)] = s.rows("SELECT code FROM game_tables")
    return str(code)
