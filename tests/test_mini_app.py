"""The seat's page inside Telegram (a Mini App), as a Telegram player meets it, through ``moderator serve``'s app
with the browser pages on and a public https address, only Telegram's Bot API faked.

Ann plays on Telegram. Under each prompt in her private chat is "Open my seat" (an inline ``web_app`` button to
``/app/<table>``, no secret in it), and her chat's menu button opens the same page while the game runs. The page
posts what Telegram signed for her (``initData``) and gets a session for her seat; anything else Telegram did not
sign for her is refused and changes nothing. What she decides there is her chat's decision too: the chat's
prompt shows it. (The whole game in Chromium is in test_mini_app_browser.)
"""

from __future__ import annotations

import json
import logging
import re
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode

import pytest

from moderator.app import create_app
from moderator.catalog import Catalog
from moderator.settings import Settings
from tests.fake_telegram import BOT_ID, buttons, init_data, user
from tests.fake_twilio import PUBLIC_URL, FakeTwilio
from tests.serve_app import SECRET, TestClient, Updates, WebhookBotAPI, env

EN = Catalog.load("classic", "en")
ANN = user(501, "Ann")
BOB = user(502, "Bob")


@dataclass
class Served:
    """``serve``'s app (Telegram and the browser pages on, a public https address) under a TestClient that is a
    browser at that address."""

    client: TestClient
    api: WebhookBotAPI
    db: Path
    updates: Updates

    def say(self, person: dict[str, Any], text: str) -> None:
        body = self.updates.say(person, text)
        assert self.client.post("/telegram", json=body, headers={"X-Telegram-Bot-Api-Secret-Token": SECRET}
                                ).status_code == 200

    def rows(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        with sqlite3.connect(self.db) as conn:
            return conn.execute(sql, params).fetchall()

    def game_state(self) -> tuple[Any, ...]:
        return tuple(self.rows(f"SELECT * FROM {t} ORDER BY rowid") for t in ("game_tables", "seats", "actions"))

    def table_id(self) -> str:
        [(table_id,)] = self.rows("SELECT id FROM game_tables")
        return str(table_id)

    def sign_in(self, signed: str) -> Any:
        return self.client.post(f"/app/{self.table_id()}/session", data={"init_data": signed})

    def until(self, check: Callable[[], Any], seconds: float = 15.0) -> Any:
        deadline = time.monotonic() + seconds
        while not (found := check()):
            assert time.monotonic() < deadline, "the chat never showed it"
            time.sleep(0.05)
        return found


@contextmanager
def served(tmp_path: Path, *, deliver: bool = False, **extra: str) -> Iterator[Served]:
    db = tmp_path / "m.db"
    api = WebhookBotAPI(clock=time.time)
    settings = Settings.load(env(db, MODERATOR_WEB="on", **extra), cwd=tmp_path)
    app = create_app(settings, network={"telegram": api, "sms": FakeTwilio()}, deliver=deliver, deliver_every=0.05)
    with TestClient(app, base_url=PUBLIC_URL, headers={"Origin": PUBLIC_URL}) as client:
        yield Served(client, api, db, Updates())


def started(s: Served) -> str:
    """Ann opens a table on Telegram, four computer players join, the game starts; the table's id."""
    s.say(ANN, "/newgame")
    s.say(ANN, "/computers 4")
    s.say(ANN, "/startgame")
    return s.table_id()


def now() -> int:
    return int(time.time())


# --- who the page is for: what Telegram signed, and nothing else ------------------------------------------------


def test_what_telegram_signed_for_a_seated_player_opens_their_seat_for_a_while_on_this_route_only(
        tmp_path: Path) -> None:
    with served(tmp_path) as s:
        table_id = started(s)
        assert s.client.get(f"/app/{table_id}/live").status_code == 403  # before: nobody's
        answer = s.sign_in(init_data(ANN, auth_date=now()))
        assert answer.status_code == 200 and answer.json() == {"ok": True}
        cookie = answer.headers["set-cookie"]
        assert cookie.startswith(f"app-{table_id}=")
        for attribute in ("HttpOnly", "Secure", "SameSite=none", "Path=/app/"):
            assert attribute.lower() in cookie.lower(), attribute
        assert int(re.search(r"Max-Age=(\d+)", cookie).group(1)) <= 6 * 3600  # type: ignore[union-attr]
        page = s.client.get(f"/app/{table_id}/live")
        assert page.status_code == 200
        assert "<h1><bdi>Ann</bdi></h1>" in page.text and EN.text("knowledge-title") in page.text
        # The session is for this route: the browser seat's pages do not take it.
        assert s.client.get(f"/play/{table_id}/live").status_code == 403


def _forged(data: str) -> str:
    fields = dict(parse_qsl(data))
    fields["hash"] = ("0" if fields["hash"][0] != "0" else "1") + fields["hash"][1:]
    return urlencode(fields)


def _altered(data: str) -> str:
    fields = dict(parse_qsl(data))
    fields["user"] = fields["user"].replace(str(ANN["id"]), str(BOB["id"]))  # Bob's seat, Ann's signature
    return urlencode(fields)


def _without_user(data: str) -> str:
    return init_data({}, auth_date=now()).replace("user=%7B%7D&", "")


REFUSED = {
    "a forged hash": lambda: _forged(init_data(ANN, auth_date=now())),
    "another bot's token": lambda: init_data(ANN, token=f"{BOT_ID + 1}:another-bots-token", auth_date=now()),
    "a changed field": lambda: _altered(init_data(ANN, auth_date=now())),
    "a date over a day old": lambda: init_data(ANN, auth_date=now() - 24 * 3600 - 60),
    "no user": lambda: _without_user(""),
    "nothing at all": lambda: "",
    "a field twice": lambda: init_data(ANN, auth_date=now()) + f"&auth_date={now()}",
}


@pytest.mark.parametrize("what", list(REFUSED))
def test_anything_telegram_did_not_sign_for_this_player_lately_is_refused_and_changes_nothing(
        tmp_path: Path, what: str) -> None:
    with served(tmp_path) as s:
        table_id = started(s)
        s.say(BOB, "/start")  # Bob talks to the bot, but has no seat
        before = s.game_state()
        signed = REFUSED[what]()
        if what == "no user":
            assert "user=" not in signed and "hash=" in signed
        answer = s.sign_in(signed)
        assert answer.status_code == 403
        assert answer.json() == {"ok": False, "reply": EN.text("web-app-not-signed")}
        assert "set-cookie" not in answer.headers
        assert s.client.get(f"/app/{table_id}/live").status_code == 403
        assert s.client.post(f"/app/{table_id}", data={"do": "rename", "name": "Mallory", "nonce": "n"},
                             headers={"X-Send": "1"}).status_code == 403
        assert s.game_state() == before


def test_a_telegram_player_without_a_seat_at_the_table_is_told_so(tmp_path: Path) -> None:
    with served(tmp_path) as s:
        table_id = started(s)
        answer = s.sign_in(init_data(BOB, auth_date=now()))
        assert answer.status_code == 403 and answer.json()["reply"] == EN.text("web-app-no-seat")
        assert s.client.get(f"/app/{table_id}/live").status_code == 403


def test_neither_the_signed_data_nor_its_hash_reaches_a_log_line(tmp_path: Path,
                                                                 caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    with served(tmp_path) as s:
        started(s)
        good = init_data(ANN, auth_date=now())
        s.sign_in(good)
        s.sign_in(_forged(good))
    digest = dict(parse_qsl(good))["hash"]
    for record in caplog.records:
        line = record.getMessage()
        assert digest not in line and good not in line and "AAHdF6IQ" not in line, line


def test_the_seat_page_in_telegram_is_framed_by_telegrams_web_client_only_and_carries_no_secret(
        tmp_path: Path) -> None:
    with served(tmp_path) as s:
        table_id = started(s)
        page = s.client.get(f"/app/{table_id}")
        assert page.status_code == 200
        assert page.headers["content-security-policy"] == "frame-ancestors https://web.telegram.org"
        assert "x-frame-options" not in page.headers
        assert "Ann" not in page.text  # nobody's until what Telegram signed comes: the address says nothing
        for path in (f"/table/{table_id}", "/"):
            assert s.client.get(path).headers["x-frame-options"] == "DENY"


# --- the chat: its button, its menu, and what the page decided shown there ---------------------------------------


def _prompt(s: Served, person: dict[str, Any]) -> dict[str, Any] | None:
    for message in reversed(s.api.messages(person["id"])):
        if any(re.fullmatch(r"\w+:\d+:.+", b.get("callback_data", "")) for b in buttons(message)):
            found: dict[str, Any] = message  # a prompt of the game (not the lobby's controls)
            return found
    return None


def test_a_choice_on_the_page_is_the_chats_choice_shown_on_its_prompt_and_the_menu_opens_the_seat_while_the_game_runs(
        tmp_path: Path) -> None:
    with served(tmp_path, deliver=True) as s:
        table_id = started(s)
        url = f"{PUBLIC_URL}/app/{table_id}"
        prompt = s.until(lambda: _prompt(s, ANN))
        prompt_protected = bool(prompt.get("has_protected_content"))
        app_buttons = [b for b in buttons(prompt) if "web_app" in b]
        assert app_buttons == [{"text": EN.text("web-open-seat"), "web_app": {"url": url}}]
        menu = s.until(lambda: s.api.menus.get(ANN["id"]))
        assert menu == {"type": "web_app", "text": EN.text("web-open-seat"), "web_app": {"url": url}}

        assert s.sign_in(init_data(ANN, auth_date=now())).status_code == 200
        part = s.client.get(f"/app/{table_id}/live").text
        forms = re.findall(r'<form method="post" class="inline">(.*?)</form>', part, re.S)
        fields = dict(re.findall(r'name="(\w+)" value="([^"]*)"', forms[0]))
        label = re.search(r'<button class="choice"[^>]*>([^<]*)', forms[0]).group(1)  # type: ignore[union-attr]
        actions = len(s.rows("SELECT * FROM actions"))
        answer = s.client.post(f"/app/{table_id}", data=fields, headers={"X-Send": "1"})
        assert answer.json()["counted"] is True
        again = s.client.post(f"/app/{table_id}", data=fields, headers={"X-Send": "1"})  # a retry: once
        assert again.json()["repeat"] is True
        # The chat's prompt is edited to show what the page decided (never a toast: nobody pressed in the chat).
        telegram = s.client.app.state.channels["telegram"].state  # type: ignore[attr-defined]
        s.until(lambda: telegram.bot.channel.app_edits >= 1)
        [echo] = [json.loads(b) for (b,) in s.rows("SELECT body FROM outbox WHERE address = ?", (str(ANN["id"]),))
                  if json.loads(b)["kind"] == "echo"]
        assert echo["press"] == {"ref": "", "text": "", "label": label.strip(), "protected": False}
        shown = next(m for m in s.api.messages(ANN["id"]) if m["message_id"] == prompt["message_id"])
        words = echo["text"].split("\n", 1)[-1] if echo.get("secret") else echo["text"]
        assert (words if prompt_protected or not echo.get("secret") else label.strip()) in shown["text"]
        edits = [c for c in s.api.of("editMessageText", ANN["id"]) if c.params["message_id"] == prompt["message_id"]]
        assert (edits and "web_app" in json.dumps(edits[-1].params.get("reply_markup", {}))) or not echo.get("options")
        assert s.api.of("answerCallbackQuery") == []
        assert len(s.rows("SELECT * FROM actions")) > actions

        s.say(ANN, "/endgame")
        s.until(lambda: s.api.menus.get(ANN["id"]) == {"type": "default"})


def test_without_a_public_https_address_the_chat_offers_no_seat_page(tmp_path: Path) -> None:
    with served(tmp_path, deliver=True, MODERATOR_PUBLIC_URL="http://moderator.example.org") as s:
        started(s)
        prompt = s.until(lambda: _prompt(s, ANN))
        assert all("web_app" not in b for b in buttons(prompt))
        assert ANN["id"] not in s.api.menus
        assert json.dumps(prompt).count("/app/") == 0
