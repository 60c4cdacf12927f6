"""Helpers for the browser channel's tests: the real ``serve`` app with the browser channel on, and "devices"
(each a client with its own cookies) that read pages and press their buttons."""

from __future__ import annotations

import html
import json
import random
import re
import sqlite3
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from moderator.app import create_app
from moderator.settings import Settings

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # Starlette 1.x asks for httpx2; httpx works the same here
    from starlette.testclient import TestClient as TestClient  # (re-exported: the web tests take it from here)

SAME_ORIGIN = {"Origin": "http://testserver"}
"""What a browser sends with a page's POST (the server refuses a POST from another origin, or from none)."""
_FORM = re.compile(r'<form method="post"[^>]*>(.*?)</form>', re.S)
_HIDDEN = re.compile(r'<input type="hidden" name="([^"]+)" value="([^"]*)">')
_CHOICE = re.compile(r'<button class="choice"[^>]*>([^<]*)')


@dataclass(frozen=True)
class Choice:
    """One button of a prompt on a page: its label and the form's fields."""

    label: str
    fields: dict[str, str]


def choices(page: str) -> list[Choice]:
    """The prompt buttons on a page."""
    out = []
    for form in _FORM.findall(page):
        label = _CHOICE.search(form)
        if label:
            out.append(Choice(html.unescape(label.group(1)),
                              {k: html.unescape(v) for k, v in _HIDDEN.findall(form)}))
    return out


def text_of(page: str) -> str:
    """A page's visible words (tags dropped, entities decoded)."""
    body = re.sub(r"<(script|style)\b.*?</\1>", " ", page, flags=re.S)
    body = re.sub(r"<svg\b.*?</svg>", " ", body, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", "\n", body))


class WebTable:
    """The app under a TestClient; ``device()`` gives another browser (its own cookie jar) on the same app."""

    def __init__(self, db: Path, **options: Any) -> None:
        self.db = db
        settings = Settings.load({"MODERATOR_DB": str(db), "MODERATOR_WEB": "on"}, cwd=db.parent)
        self.app = create_app(settings, deliver=False, **options)
        self.host = TestClient(self.app, headers=SAME_ORIGIN)

    def __enter__(self) -> WebTable:
        self.host.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.host.__exit__(*exc)

    def device(self) -> TestClient:
        """A new browser: its own cookies, the same app and event loop (the service lives on that loop)."""
        return browser_beside(self.host)

    @property
    def service(self) -> Any:
        return self.app.state.service

    def open(self, name: str = "Host", *, play: bool = True, theme: str = "classic") -> tuple[str, str]:
        """The host opens a table from its browser; returns (table id, join code)."""
        form = {"name": name, "theme": theme, **({"play": "1"} if play else {})}
        response = self.host.post("/new", data=form, follow_redirects=False)
        assert response.status_code == 303, response.text
        table_id = response.headers["location"].rsplit("/", 1)[1]
        page = self.host.get(f"/host/{table_id}").text
        code = re.search(r'class="code">(\w+)<', page)
        assert code is not None
        return table_id, code.group(1)

    def host_do(self, table_id: str, do: str, **fields: str) -> None:
        response = self.host.post(f"/host/{table_id}", data={"do": do, "nonce": f"{do}{random.random()}", **fields})
        assert response.status_code == 200, response.status_code

    def join(self, code: str, name: str) -> TestClient:
        """A new phone takes a seat by the join page's "play in this browser"."""
        phone = self.device()
        page = phone.get(f"/join/{code}")
        assert page.status_code == 200
        nonce = re.search(r'name="nonce" value="(\w+)"', page.text)
        assert nonce is not None
        response = phone.post(f"/join/{code}", data={"name": name, "nonce": nonce.group(1)}, follow_redirects=False)
        assert response.status_code == 303
        return phone

    def status(self, table_id: str) -> str:
        with sqlite3.connect(self.db) as db:
            return str(db.execute("SELECT status FROM game_tables WHERE id = ?", (table_id,)).fetchone()[0])

    def bodies(self, *, secret: bool) -> list[tuple[str, str]]:
        """(address, text) of every secret (or every other) message the outbox holds for browsers."""
        with sqlite3.connect(self.db) as db:
            rows = db.execute("SELECT address, body FROM outbox WHERE channel = 'web'").fetchall()
        bodies = [(a, json.loads(b)) for a, b in rows]
        return [(a, b["text"]) for a, b in bodies if bool(b.get("secret")) is secret]


def browser_beside(client: TestClient) -> TestClient:
    """Another browser (its own cookies) on the app and event loop of a running TestClient."""
    other = TestClient(client.app, headers=SAME_ORIGIN)
    other.portal = client.portal
    return other


@contextmanager
def every_channel(tmp_path: Path, *, deliver: bool = False) -> Iterator[Any]:
    """``serve``'s app with Telegram (the fake Bot API), SMS (the fake Twilio) and the browser channel on, running;
    yields ``tests.serve_app.Server`` (``.client.app`` is the app; ``browser_beside(.client)`` a phone)."""
    from tests.fake_twilio import FakeTwilio
    from tests.serve_app import Server, WebhookBotAPI, env

    db = tmp_path / "every.db"
    api, twilio = WebhookBotAPI(clock=lambda: 1_800_000_000.0), FakeTwilio()
    app = create_app(Settings.load(env(db, MODERATOR_WEB="on"), cwd=tmp_path), network={"telegram": api, "sms": twilio},
                     deliver=deliver)
    with TestClient(app, headers=SAME_ORIGIN) as client:
        yield Server(client, api, twilio, db)
