"""WhatsApp through Twilio, as players and a host meet it: ``moderator serve``'s app with Telegram, SMS and WhatsApp
on, the fakes only at the network edge (the fake Bot API, the fake Twilio, extended for ``whatsapp:`` addresses,
profile names, the 24-hour window's error, blocks and the sandbox), each channel's outbox delivered by its own
worker thread as under ``serve``. A whole mixed game with a restart in the middle, a player whose window closed
(also across a restart), a number that blocked the bot, a phone that left the sandbox, forged requests, the join
link and the logs."""

from __future__ import annotations

import json
import logging
import random
import re
import sqlite3
import time
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from moderator.app import create_app
from moderator.catalog import Catalog
from moderator.engine import awaiting
from moderator.settings import Settings
from moderator.transports import whatsapp
from moderator.transports.telegram.messages import callback
from tests.fake_telegram import private_chat, user
from tests.fake_twilio import (
    AUTH_TOKEN,
    OUR_NUMBER,
    OUR_WHATSAPP,
    PUBLIC_URL,
    FakeTwilio,
    incoming,
    incoming_whatsapp,
    signature,
)
from tests.serve_app import SECRET, WebhookBotAPI, env

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # Starlette 1.x asks for httpx2; httpx works the same here
    from starlette.testclient import TestClient

EN = Catalog.load()
DAY = 24 * 3600.0
HEADER = EN.text("private-header")


def phone(i: int) -> str:
    return f"whatsapp:+1202555{3000 + i:04d}"


def text_phone(i: int) -> str:
    return f"+1202555{2000 + i:04d}"


class Clock:
    """The time as the server counts it: the real time (pacing and retries go on as under ``serve``), moved on
    by whole hours when a test lets a day pass."""

    def __init__(self) -> None:
        self.offset = 0.0

    def __call__(self) -> float:
        return time.time() + self.offset

    def advance(self, seconds: float) -> None:
        self.offset += seconds


class Table:
    """``serve`` with Telegram, SMS and WhatsApp on, each delivered by its worker; people write through the signed
    webhooks, and Twilio's status callbacks are posted as Twilio posts them."""

    def __init__(self, db: Path, **extra: str) -> None:
        self.db = db
        self.clock = Clock()
        self.twilio = FakeTwilio(clock=self.clock)
        self.api = WebhookBotAPI(clock=self.clock)
        self.extra = extra
        self.sids = iter(range(1, 1_000_000))
        self.http: TestClient | None = None
        self.start()

    def start(self) -> None:
        settings = Settings.load(env(self.db, TWILIO_WHATSAPP_FROM=OUR_WHATSAPP, **self.extra), cwd=self.db.parent)
        rng = random.Random(7)
        app = create_app(settings, network={"telegram": self.api, "sms": self.twilio, "whatsapp": self.twilio},
                         clock=self.clock, deliver_every=0.02, seed=lambda: rng.getrandbits(64))
        self.http = TestClient(app, raise_server_exceptions=True, client=("127.0.0.1", 50000))
        self.http.__enter__()

    def stop(self) -> None:
        """The server stops (its lifespan ends: the workers stop, what waits stays in the outbox)."""
        assert self.http is not None
        self.http.__exit__(None, None, None)
        self.http = None

    @property
    def client(self) -> TestClient:
        assert self.http is not None
        return self.http

    # --- people ---------------------------------------------------------------------------------------------

    def wa(self, address: str, body: str, *, profile: str = "") -> None:
        """A WhatsApp message from ``address`` reaches Twilio, which calls our webhook; then all is delivered."""
        form = incoming_whatsapp(address, body, f"SMw{next(self.sids):030d}", profile=profile)
        self.twilio.heard(form)
        response = self.client.post("/whatsapp", data=form,
                                    headers={"X-Twilio-Signature": signature(f"{PUBLIC_URL}/whatsapp", form)})
        assert response.status_code == 200, response.text
        assert response.text == '<?xml version="1.0" encoding="UTF-8"?><Response />'
        self.settle()

    def sms(self, number: str, body: str) -> None:
        form = incoming(number, body, f"SMs{next(self.sids):030d}")
        response = self.client.post("/sms", data=form,
                                    headers={"X-Twilio-Signature": signature(f"{PUBLIC_URL}/sms", form)})
        assert response.status_code == 200
        self.settle()

    def tg(self, person: dict[str, Any], text: str) -> None:
        message: dict[str, Any] = {"message_id": next(self.sids), "from": person, "chat": private_chat(person),
                                   "date": int(self.clock()), "text": text}
        if text.startswith("/"):
            message["entities"] = [{"type": "bot_command", "offset": 0, "length": len(text.split()[0])}]
        self.update({"update_id": next(self.sids), "message": message})

    def press(self, person: dict[str, Any], data: str) -> None:
        query = {"id": f"q{next(self.sids)}", "from": person, "chat_instance": "ci", "data": data,
                 "message": {"message_id": 1, "chat": private_chat(person), "date": int(self.clock()), "text": "?"}}
        self.update({"update_id": next(self.sids), "callback_query": query})

    def update(self, body: dict[str, Any]) -> None:
        response = self.client.post("/telegram", json=body, headers={"X-Telegram-Bot-Api-Secret-Token": SECRET})
        assert response.status_code == 200
        self.settle()

    def settle(self, timeout: float = 20.0) -> None:
        """Until nothing waits in the outbox (paced Telegram messages go as time passes: seconds of the server's
        clock for each look), and Twilio's status callbacks are posted."""
        deadline = time.monotonic() + timeout
        while True:
            for url, form in self.twilio.take_reports():
                path = url.removeprefix(PUBLIC_URL)
                answer = self.client.post(path, data=form, headers={"X-Twilio-Signature": signature(url, form)})
                assert answer.status_code == 204, (path, answer.status_code)
            if not self.rows("SELECT 1 FROM outbox WHERE status = 'pending' LIMIT 1") and not self.twilio.reports:
                time.sleep(0.05)  # a worker's round may be under way: one more look
                if not self.rows("SELECT 1 FROM outbox WHERE status = 'pending' LIMIT 1") and \
                        not self.twilio.reports:
                    return
            assert time.monotonic() < deadline, self.rows("SELECT channel, message_id, last_error FROM outbox "
                                                          "WHERE status = 'pending'")
            self.clock.advance(5.0)  # Telegram's vote counter waits a minute between showings
            time.sleep(0.01)

    # --- what it shows ------------------------------------------------------------------------------------

    def rows(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        with sqlite3.connect(self.db) as conn:
            return conn.execute(sql, params).fetchall()

    def to(self, address: str) -> list[str]:
        return self.twilio.to(address)

    def seats(self) -> list[tuple[str, str, str]]:
        """(name, channel, address) of each seat, in order."""
        return [(n, c, a) for n, c, a in self.rows("SELECT name, channel, address FROM seats ORDER BY position")]

    def state(self) -> Any:
        [(table_id,)] = self.rows("SELECT id FROM game_tables")
        app = self.client.app
        service = app.state.service  # type: ignore[attr-defined]
        assert self.client.portal is not None
        return self.client.portal.call(lambda: service.table(table_id))

    def code(self) -> str:
        [(code,)] = self.rows("SELECT code FROM game_tables")
        return str(code)


@pytest.fixture
def table(tmp_path: Path) -> Iterator[Callable[..., Table]]:
    opened: list[Table] = []

    def make(**extra: str) -> Table:
        opened.append(Table(tmp_path / "m.db", **extra))
        return opened[-1]

    yield make
    for t in opened:
        if t.http is not None:
            t.stop()


EVE = user(601, "Eve")


def last_prompt(texts: list[str]) -> list[str]:
    """The labels of the newest numbered options a phone was sent (``1. Ann`` and ``2. Bob``, one a line, last)."""
    for text in reversed(texts):
        found = re.findall(r"^(\d+)\. (.+)$", text, re.M)
        if found and [int(n) for n, _ in found] == list(range(1, len(found) + 1)) and \
                text.endswith(f"{found[-1][0]}. {found[-1][1]}"):
            return [label for _, label in found]
        found = re.findall(r"(?:^|, |: )(\d+) ([^,]+)", text.rsplit("\n", 1)[-1])  # an SMS: ``Reply: 1 Ja, 2 Nein``
        if found and [int(n) for n, _ in found] == list(range(1, len(found) + 1)):
            return [label for _, label in found]
    raise AssertionError(texts[-3:])


def open_mixed_table(t: Table) -> None:
    """Ann (WhatsApp, the host, by her profile name), Zoë (WhatsApp, by profile), Cyrus (WhatsApp, typed over his
    profile name), Dan (SMS) and Eve (Telegram)."""
    t.wa(phone(0), "newgame", profile="Ann")
    code = t.code()
    assert any(code in m for m in t.to(phone(0)))
    t.wa(phone(1), f"join {code.lower()}", profile="Zoë")
    t.wa(phone(2), f"JOIN {code} Cyrus", profile="Cy")
    t.sms(text_phone(3), f"JOIN {code} Dan")
    t.tg(EVE, f"/join {code} Eve")
    assert [(n, c) for n, c, _ in t.seats()] == [("Ann", "whatsapp"), ("Zoë", "whatsapp"), ("Cyrus", "whatsapp"),
                                                   ("Dan", "sms"), ("Eve", "telegram")]


def answer(t: Table, seat: int, rng: random.Random) -> None:
    """The seat's player answers its newest prompt, as their channel lets them."""
    _, channel, address = t.seats()[seat]
    if channel == "telegram":
        [(body,)] = t.rows("SELECT body FROM outbox WHERE channel = 'telegram' AND address = ? AND message_id != '' "
                           "AND json_extract(body, '$.kind') = 'prompt' ORDER BY id DESC LIMIT 1", (address,))
        prompt = json.loads(body)
        t.press(EVE, callback(prompt["table"], prompt["decision"], rng.choice(prompt["options"])[1]))
        return
    labels = last_prompt(t.to(address))
    pick = str(rng.randrange(len(labels)) + 1)
    if channel == "sms":
        t.sms(address, pick)
    else:
        t.wa(address, pick)


# --- a whole game -------------------------------------------------------------------------------------------


def test_a_whole_game_with_whatsapp_seats_beside_sms_and_telegram_survives_a_restart(table: Callable[..., Table],
                                                                                    caplog: pytest.LogCaptureFixture
                                                                                    ) -> None:
    caplog.set_level(logging.INFO)
    t = table()
    open_mixed_table(t)
    t.wa(phone(0), "go")
    # The deal: a private message whose first lines say nothing on a lock screen, the role below them.
    for i in range(3):
        deal = next(m for m in t.to(phone(i)) if m.startswith(HEADER))
        preview = deal.split("\n")[:whatsapp.PREVIEW_LINES]
        assert preview == [HEADER, ".", ".", "."], deal
        assert not any(word in " ".join(preview) for word in ("Liberal", "Fascist", "Hitler"))
    rng = random.Random(3)
    restarted = False
    for step in range(400):
        state = t.state().state
        if t.rows("SELECT status FROM game_tables")[0][0] == "over":
            break
        if step == 12 and not restarted:
            sent = len(t.twilio.sent)
            t.stop()
            t.start()
            t.settle()
            # Nothing that was sent goes twice (a prompt still owed may be said again, marked a reminder).
            again = [m["Body"] for m in t.twilio.sent[sent:]]
            assert all(body not in [m["Body"] for m in t.twilio.sent[:sent]] for body in again
                       if not body.startswith(EN.text("reminder-restart").split("{")[0][:20])), again
            restarted = True
            continue
        answer(t, rng.choice(awaiting(state)), rng)
    else:
        raise AssertionError("the game did not end")
    assert restarted
    whole = [m["Body"] for m in t.twilio.sent if m["To"].startswith("whatsapp:")]
    assert all(len(body) <= whatsapp.TEXT_LIMIT for body in whole)
    # The full sentences (not SMS's short forms), names as written (an SMS writes Zoë as Zoe), the decision in bold.
    assert any("Zoë" in body for body in t.to(phone(0)))
    assert any("Zoe" in body and "Zoë" not in body for body in t.to(text_phone(3)))
    assert any(re.search(r"^\*[^*\n]+\*$", body, re.M) for body in t.to(phone(1)))
    # Every WhatsApp phone hears the end: who won and who was who.
    for i in range(3):
        assert "Hitler" in t.to(phone(i))[-1], t.to(phone(i))[-1]
    # Paid per message: no echo of one's own vote, and the host's COST counts messages.
    t.wa(phone(0), "cost")
    assert re.search(r"\d", t.to(phone(0))[-1])
    # No key, no role, no message text in any log line the server writes (it logs at INFO).
    logged = "\n".join(r.getMessage() for r in caplog.records if r.levelno >= logging.INFO)
    assert AUTH_TOKEN not in logged
    assert not any(body[:40] in logged for body in whole if len(body) > 40)
    assert HEADER not in logged


# --- the 24-hour window -------------------------------------------------------------------------------------


def a_game_with_zoe_owing(t: Table) -> None:
    """Ann hosts on WhatsApp, Zoë sits on WhatsApp, three computer players; the table waits for Zoë."""
    t.wa(phone(0), "newgame", profile="Ann")
    t.wa(phone(1), f"join {t.code()}", profile="Zoë")
    t.wa(phone(0), "computers 3")
    t.wa(phone(0), "go")
    rng = random.Random(1)
    for _ in range(20):
        owing = awaiting(t.state().state)
        if 1 in owing:
            return
        answer(t, owing[0], rng)
    raise AssertionError("Zoë never owed a decision")


def test_a_player_silent_for_a_day_is_not_messaged_the_host_is_told_once_and_writing_brings_it_all_back(
        table: Callable[..., Table]) -> None:
    t = table()
    a_game_with_zoe_owing(t)
    t.clock.advance(DAY + 60)
    t.wa(phone(0), "nudge")  # Ann writes: her window opens; Zoë's is closed
    silent = EN.text("player-silent", name="Zoë")
    assert t.to(phone(0)).count(silent) == 1
    before = len(t.to(phone(1)))
    t.wa(phone(0), "nudge")
    t.wa(phone(0), "reminders 1")
    t.clock.advance(120)
    t.wa(phone(0), "board")
    assert len(t.to(phone(1))) == before  # nothing free-form outside the window, no reminder, no nudge
    assert t.to(phone(0)).count(silent) == 1  # told once
    # The window is remembered across a restart: Twilio's log says when Zoë last wrote.
    t.stop()
    t.start()
    t.wa(phone(0), "nudge")
    assert len(t.to(phone(1))) == before
    # Zoë writes anything: what she knows, and the decision the table waits for, then her answer.
    t.wa(phone(1), "board")
    got = t.to(phone(1))[before:]
    assert any(m.startswith(HEADER) for m in got), got
    assert last_prompt(got)
    assert EN.text("player-back", name="Zoë") in t.to(phone(0))


def test_twilios_window_error_in_a_delivery_report_makes_the_seat_wait_for_its_player(
        table: Callable[..., Table]) -> None:
    """The channel thought the window open (Twilio knows better): error 63016 comes back in the status callback."""
    t = table()
    t.twilio.fail_later[phone(1)] = 63016
    a_game_with_zoe_owing(t)
    silent = EN.text("player-silent", name="Zoë")
    assert t.to(phone(0)).count(silent) == 1
    assert EN.text("player-undelivered", name="Zoë") not in t.to(phone(0))  # one line, the one that says why
    del t.twilio.fail_later[phone(1)]
    before = len(t.to(phone(1)))
    t.wa(phone(0), "nudge")
    assert len(t.to(phone(1))) == before
    t.wa(phone(1), "hello")
    assert last_prompt(t.to(phone(1))[before:])


def test_a_template_goes_once_to_a_closed_window_only_where_the_operator_configured_one(
        table: Callable[..., Table]) -> None:
    t = table(TWILIO_WHATSAPP_TEMPLATE_SID="HX" + "1" * 32)
    a_game_with_zoe_owing(t)
    t.clock.advance(DAY + 60)
    t.wa(phone(0), "nudge")
    t.wa(phone(0), "nudge")
    templates = [m for m in t.twilio.sent if m["To"] == phone(1) and "ContentSid" in m]
    assert [m["ContentSid"] for m in templates] == ["HX" + "1" * 32]
    assert all("Body" not in m for m in templates)


# --- a number that blocked the bot, a phone that left the sandbox ---------------------------------------------


@pytest.mark.parametrize(("code", "key"), [(63014, "player-blocked"), (63015, "player-sandbox")])
def test_a_number_twilio_cannot_reach_is_told_to_the_host_once_and_skipped_until_it_writes(
        table: Callable[..., Table], code: int, key: str) -> None:
    t = table()
    t.twilio.fail_later[phone(1)] = code
    a_game_with_zoe_owing(t)
    told = EN.text(key, name="Zoë")
    assert t.to(phone(0)).count(told) == 1
    tried = len([m for m in t.twilio.sent if m["To"] == phone(1)])
    t.wa(phone(0), "nudge")
    t.wa(phone(0), "nudge")
    assert len([m for m in t.twilio.sent if m["To"] == phone(1)]) == tried  # skipped, not tried again
    assert t.to(phone(0)).count(told) == 1
    del t.twilio.fail_later[phone(1)]
    t.wa(phone(1), "whoami")  # unblocked (or back in the sandbox), Zoë writes
    assert last_prompt(t.to(phone(1)))


# --- the webhook --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("forgery", ["missing", "another token", "the sms url", "tampered"])
def test_a_request_not_signed_by_twilio_for_our_whatsapp_url_is_refused_and_changes_nothing(
        table: Callable[..., Table], forgery: str) -> None:
    t = table()
    t.wa(phone(0), "newgame", profile="Ann")
    before = t.rows("SELECT * FROM seats"), t.rows("SELECT count(*) FROM inbound")
    form = incoming_whatsapp(phone(1), f"join {t.code()}", "SMforged", profile="Mallory")
    headers = {
        "missing": {},
        "another token": {"X-Twilio-Signature": signature(f"{PUBLIC_URL}/whatsapp", form, "not-" + AUTH_TOKEN)},
        "the sms url": {"X-Twilio-Signature": signature(f"{PUBLIC_URL}/sms", form)},
        "tampered": {"X-Twilio-Signature": signature(f"{PUBLIC_URL}/whatsapp", {**form, "Body": "newgame"})},
    }[forgery]
    assert t.client.post("/whatsapp", data=form, headers=headers).status_code == 403
    assert t.client.post("/whatsapp/status", data=form, headers=headers).status_code == 403
    assert (t.rows("SELECT * FROM seats"), t.rows("SELECT count(*) FROM inbound")) == before


def test_a_repeated_message_sid_changes_nothing_and_an_sms_sender_is_not_a_whatsapp_one(
        table: Callable[..., Table]) -> None:
    t = table()
    form = incoming_whatsapp(phone(0), "newgame", "SMonce", profile="Ann")
    sign = {"X-Twilio-Signature": signature(f"{PUBLIC_URL}/whatsapp", form)}
    for _ in range(2):
        assert t.client.post("/whatsapp", data=form, headers=sign).status_code == 200
    t.settle()
    assert len(t.rows("SELECT * FROM game_tables")) == 1
    plain = incoming(OUR_NUMBER, "newgame Bob", "SMplain")  # no whatsapp: prefix
    assert t.client.post("/whatsapp", data=plain, headers={
        "X-Twilio-Signature": signature(f"{PUBLIC_URL}/whatsapp", plain)}).status_code == 200
    assert len(t.rows("SELECT * FROM game_tables")) == 1


# --- joining ------------------------------------------------------------------------------------------------


def test_the_join_page_opens_whatsapp_with_the_join_text_typed_and_the_sandbox_join_first(
        table: Callable[..., Table]) -> None:
    t = table(TWILIO_WHATSAPP_SANDBOX_JOIN="join plenty-cat")
    t.wa(phone(0), "newgame", profile="Ann")
    code = t.code()
    page = t.client.get(f"/join/{code}").text
    digits = OUR_WHATSAPP.removeprefix("whatsapp:+")
    assert f"https://wa.me/{digits}?text=JOIN%20{code}" in page
    assert f"https://wa.me/{digits}?text=join%20plenty-cat" in page
    assert page.index("join%20plenty-cat") < page.index(f"wa.me/{digits}?text=JOIN%20{code}")  # the sandbox first
    # A phone that joins by the link without a name takes its profile name.
    t.wa(phone(1), f"JOIN {code}", profile="Zoë")
    assert [n for n, _, _ in t.seats()] == ["Ann", "Zoë"]


def test_whatsapp_is_off_without_its_sender_and_says_why() -> None:
    settings = Settings.load({**env(Path("/nonexistent/m.db")), "TWILIO_WHATSAPP_FROM": "+14155238886"})
    assert whatsapp.SPEC.off(settings) is not None  # a number without whatsapp: is not a WhatsApp sender
    on = Settings.load({**env(Path("/nonexistent/m.db")), "TWILIO_WHATSAPP_FROM": OUR_WHATSAPP})
    assert whatsapp.SPEC.off(on) is None
