"""Nothing lost, nothing doubled (issue 14): a press that cannot be acknowledged still counts, a redelivered update
counts once, an input that could not be stored is asked for again, and storage failures send nothing twice."""

from __future__ import annotations

import json
import sqlite3
import time
import warnings
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from moderator.app import create_app
from moderator.settings import Settings
from moderator.transports.telegram import Poller, callback
from tests.fake_telegram import private_chat
from tests.fake_twilio import FakeTwilio
from tests.serve_app import ANN, LOCAL, SMS_URL, Server, Updates, WebhookBotAPI, env, open_table
from tests.telegram_table import TelegramTable

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # Starlette 1.x asks for httpx2; httpx works the same here
    from starlette.testclient import TestClient

pytestmark = pytest.mark.anyio

def _unwritable(server: Server, on: bool) -> None:
    """The database as a full or read-only disk leaves it (SQLite's own switch: tests run as root)."""
    store = server.app_state().store
    portal = server.client.portal
    assert portal is not None  # the app is running
    portal.call(lambda: store.execute(f"PRAGMA query_only={'ON' if on else 'OFF'}"))  # the loop's connection


def test_an_update_that_could_not_be_stored_is_answered_503_and_its_redelivery_is_applied(server: Server) -> None:
    open_table(server)
    update = server.say(ANN, "/computers 4", update_id=777)
    _unwritable(server, True)
    assert server.update(update) == 503
    assert server.rows("SELECT count(*) FROM seats") == [(1,)]
    _unwritable(server, False)
    assert server.update(update) == 200  # Telegram retries: not swallowed by any memory of the first try
    assert server.rows("SELECT count(*) FROM seats") == [(5,)]
    assert server.update(update) == 200  # and once applied, a redelivery changes nothing
    assert server.rows("SELECT count(*) FROM seats") == [(5,)]


def test_healthz_is_unhealthy_while_the_database_cannot_be_written_and_healthy_again_after(
        server: Server, monkeypatch: pytest.MonkeyPatch) -> None:
    from moderator import app

    monkeypatch.setattr(app, "WRITE_CHECK_EVERY", 0.0)  # each request checks (else one answer stands for 2 s)
    assert server.client.get("/healthz").status_code == 200
    _unwritable(server, True)
    answer = server.client.get("/healthz")
    assert answer.status_code == 503 and answer.json()["database"] == "not writable"
    _unwritable(server, False)
    assert server.client.get("/healthz").status_code == 200


def test_an_sms_that_could_not_be_stored_is_answered_send_it_again_and_its_resend_counts(server: Server) -> None:
    from tests.fake_twilio import incoming, signature

    phone = "+4915112345678"  # a German number: the answer is in German

    def text(body: str, sid: str) -> Any:
        form = incoming(phone, body, sid)
        return server.client.post("/sms", data=form,
                                  headers={"X-Twilio-Signature": signature(SMS_URL, form)})

    _unwritable(server, True)
    answer = text("NEWGAME Ann", "SM-full-1")
    assert answer.status_code == 200
    assert "Nicht gespeichert" in answer.text and "noch einmal senden" in answer.text
    assert server.rows("SELECT count(*) FROM game_tables") == [(0,)]
    _unwritable(server, False)
    answer = text("NEWGAME Ann", "SM-full-2")  # sent again by the person: a new text, and it counts
    assert answer.status_code == 200 and "Nicht gespeichert" not in answer.text
    assert server.rows("SELECT count(*) FROM game_tables") == [(1,)]


async def test_long_polling_pauses_while_the_database_cannot_be_written_and_takes_the_update_again_after(
        telegram: TelegramTable) -> None:
    table = telegram
    table.seed = 1
    await table.boot()
    await table.say("Ann", "/newgame")
    pauses: list[float] = []

    async def sleep(seconds: float) -> None:
        pauses.append(seconds)

    poller = Poller(table.app, table.bot, timeout=0, sleep=sleep)
    ann = table.person("Ann")

    def typed(update_id: int, text: str) -> dict[str, Any]:
        return {"update_id": update_id, "message": {
            "message_id": update_id, "from": ann, "chat": private_chat(ann), "date": 1_800_000_000,
            "text": text, "entities": [{"type": "bot_command", "offset": 0, "length": len(text.split()[0])}]}}

    table.api.updates += [typed(500, "/computers 4"), typed(501, "/status")]
    seats = "SELECT count(*) FROM seats"
    table.store.execute("PRAGMA query_only=ON")  # the disk is full
    for tries in (1, 2):
        await poller.step()
        assert pauses == [poller.pause] * tries  # paused, not polling on
        assert [u["update_id"] for u in table.api.updates] == [500, 501]  # nothing confirmed
        assert all((c.params.get("offset") or 0) <= 500 for c in table.api.of("getUpdates"))
        assert table.store.execute(seats).fetchone()[0] == 1
    table.store.execute("PRAGMA query_only=OFF")  # space is back: it goes on by itself
    await poller.step()
    assert len(pauses) == 2 and not poller.paused
    assert table.store.execute(seats).fetchone()[0] == 5
    await poller.step()
    assert table.api.updates == []  # both confirmed once stored
    assert table.store.execute(seats).fetchone()[0] == 5  # and applied once


class TooLateBotAPI(WebhookBotAPI):
    """Every press's acknowledgement comes too late (the bot was down longer than Telegram's answer window)."""

    def _answer(self, api: str, params: dict[str, Any], chat: int | None) -> tuple[int, dict[str, Any]]:
        if api == "answerCallbackQuery":
            return 400, {"ok": False, "error_code": 400,
                         "description": "Bad Request: query is too old and response timeout expired"}
        return super()._answer(api, params, chat)


def test_a_press_whose_acknowledgement_fails_is_applied_once_even_when_redelivered(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    api = TooLateBotAPI(clock=lambda: 1_800_000_000.0)
    app = create_app(Settings.load(env(db), cwd=tmp_path), network={"telegram": api}, deliver=False)
    with TestClient(app, raise_server_exceptions=False, client=LOCAL) as client:
        s = Server(client, api, FakeTwilio(), db)
        open_table(s)
        assert s.update(s.say(ANN, "/computers 4")) == 200
        assert s.update(s.say(ANN, "/startgame")) == 200
        prompts = [json.loads(b) for (b,) in s.rows(
            "SELECT body FROM outbox WHERE channel = 'telegram' AND address = ? ORDER BY id", (str(ANN["id"]),))]
        prompt = [p for p in prompts if p["kind"] == "prompt"][-1]
        data = callback(prompt["table"], prompt["decision"], prompt["options"][0][1])
        query = {"id": "q1", "from": ANN, "chat_instance": "ci", "data": data,
                 "message": {"message_id": 1, "chat": private_chat(ANN), "date": 1_800_000_000, "text": "?"}}
        before = s.rows("SELECT count(*) FROM actions")
        press = {"update_id": 9001, "callback_query": query}
        assert s.update(press) == 200
        applied = s.rows("SELECT count(*) FROM actions")
        assert applied != before  # the press counted though its acknowledgement failed
        assert s.update(press) == 200  # redelivered after a crash: the same query id
        assert s.rows("SELECT count(*) FROM actions") == applied
        assert len(api.of("answerCallbackQuery")) == 2


# --- prompted again on return -------------------------------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


def _run(tmp_path: Path, clock: Clock, *updates: dict[str, Any]) -> None:
    """One start of the server, the updates handed to it, and a clean stop."""
    db = tmp_path / "m.db"
    api = WebhookBotAPI(clock=clock)
    app = create_app(Settings.load(env(db), cwd=tmp_path), network={"telegram": api}, deliver=False, clock=clock)
    with TestClient(app, raise_server_exceptions=False, client=LOCAL) as client:
        s = Server(client, api, FakeTwilio(), db)
        for update in updates:
            assert s.update(update) == 200


def _reminders(tmp_path: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(tmp_path / "m.db") as conn:
        return conn.execute("SELECT address, message_id FROM outbox WHERE message_id = 'reminder-restart'").fetchall()


def _prompts(tmp_path: Path) -> int:
    with sqlite3.connect(tmp_path / "m.db") as conn:
        return int(conn.execute("SELECT count(*) FROM outbox WHERE json_extract(body, '$.kind') = 'prompt'"
                                " AND address = ?", (str(ANN["id"]),)).fetchone()[0])


def _table_waiting_for_ann(tmp_path: Path, clock: Clock) -> None:
    s = Updates()
    updates = [s.say(ANN, "/newgame"), s.say(ANN, "/computers 4"), s.say(ANN, "/startgame")]
    _run(tmp_path, clock, *updates)
    assert _prompts(tmp_path) >= 1, "the table waits for Ann (computers decide at once)"
    _delivered(tmp_path)


def _delivered(tmp_path: Path) -> None:
    """Every message so far reached its chat (these servers run without a sender)."""
    with sqlite3.connect(tmp_path / "m.db") as conn:
        conn.execute("UPDATE outbox SET status = 'sent', sent = created WHERE status = 'pending'")


def test_a_clean_restart_within_a_minute_prompts_nobody_again(tmp_path: Path) -> None:
    clock = Clock()
    _table_waiting_for_ann(tmp_path, clock)
    before = _prompts(tmp_path)
    clock.now += 30
    _run(tmp_path, clock)
    assert _reminders(tmp_path) == [] and _prompts(tmp_path) == before


def test_after_more_than_a_minute_down_whoever_owes_a_decision_is_prompted_again_as_a_reminder(
        tmp_path: Path) -> None:
    clock = Clock()
    _table_waiting_for_ann(tmp_path, clock)
    before = _prompts(tmp_path)
    clock.now += 90
    _run(tmp_path, clock)
    assert _reminders(tmp_path) == [(str(ANN["id"]), "reminder-restart")]
    assert _prompts(tmp_path) == before + 1
    clock.now += 10
    _run(tmp_path, clock)  # and a quick clean restart after that: quiet again
    assert len(_reminders(tmp_path)) == 1


def test_after_a_crash_whoever_owes_a_decision_is_prompted_again(tmp_path: Path) -> None:
    clock = Clock()
    _table_waiting_for_ann(tmp_path, clock)
    with sqlite3.connect(tmp_path / "m.db") as conn:
        conn.execute("DELETE FROM lifecycle WHERE key = 'stopped'")  # as a SIGKILL leaves it: no clean stop
    clock.now += 5
    _run(tmp_path, clock)
    assert _reminders(tmp_path) == [(str(ANN["id"]), "reminder-restart")]


def test_after_a_crash_a_prompt_still_waiting_to_go_out_is_not_sent_twice(tmp_path: Path) -> None:
    """A prompt the crash kept from going out goes out as it is: no reminder and no second copy beside it."""
    clock = Clock()
    _table_waiting_for_ann(tmp_path, clock)
    with sqlite3.connect(tmp_path / "m.db") as conn:
        conn.execute("DELETE FROM lifecycle WHERE key = 'stopped'")  # as a SIGKILL leaves it: no clean stop
        conn.execute("UPDATE outbox SET status = 'pending', sent = NULL WHERE id = (SELECT max(id) FROM outbox"
                     " WHERE json_extract(body, '$.kind') = 'prompt' AND address = ?)", (str(ANN["id"]),))
    before = _prompts(tmp_path)
    clock.now += 5
    _run(tmp_path, clock)
    assert _reminders(tmp_path) == [] and _prompts(tmp_path) == before


def test_start_pressed_again_brings_the_decision_the_table_waits_for(tmp_path: Path) -> None:
    clock = Clock()
    _table_waiting_for_ann(tmp_path, clock)
    before = _prompts(tmp_path)
    s = Updates()
    _run(tmp_path, clock, s.say(ANN, "/start", update_id=50_000))
    assert _prompts(tmp_path) == before + 1


# --- at most once on screen -----------------------------------------------------------------------------------


def _deliver(server: Server) -> int:
    """One delivery of everything due, by every channel's sender (the fixture delivers nothing by itself)."""
    portal = server.client.portal
    assert portal is not None  # the app is running
    return sum(portal.call(worker.deliver) for worker in server.app_state().wiring.workers)


def _crash_after_handing(server: Server, channel: str) -> None:
    """As a kill between the provider taking the messages and the outbox recording it leaves them."""
    with sqlite3.connect(server.db) as conn:
        conn.execute("UPDATE outbox SET status = 'pending', sent = NULL, handed = coalesce(handed, ?)"
                     " WHERE channel = ?", (server.twilio.clock(), channel))


def test_a_telegram_message_that_may_have_gone_out_before_a_crash_says_it_is_a_repeat(server: Server) -> None:
    assert server.update(server.say(ANN, "/help")) == 200
    chat = int(ANN["id"])
    assert _deliver(server) >= 1
    first = server.api.texts(chat)
    assert first and not any(t.startswith("Again, after a restart:") for t in first)
    _crash_after_handing(server, "telegram")
    deadline = time.monotonic() + 5
    while len(server.api.texts(chat)) == len(first) and time.monotonic() < deadline:
        _deliver(server)  # the chat's pace holds the repeat back a moment (it has just had a message)
        time.sleep(0.05)
    again = server.api.texts(chat)[len(first):]
    assert len(again) == len(first)
    assert all(t.startswith("Again, after a restart:\n") for t in again)
    assert [t.removeprefix("Again, after a restart:\n") for t in again] == first
    _deliver(server)
    assert len(server.api.texts(chat)) == 2 * len(first)  # recorded as sent: no third time


def test_an_sms_twilio_accepted_before_a_crash_is_not_sent_again_and_its_cost_is_counted(server: Server) -> None:
    phone = "+12025550123"
    assert server.text(phone, "NEWGAME Ann", "SM-in-1") == 200
    assert _deliver(server) >= 1
    sent = list(server.twilio.sent)
    with sqlite3.connect(server.db) as conn:
        conn.execute("DELETE FROM deliveries")  # the kill came before the SID was recorded too
    _crash_after_handing(server, "sms")
    assert _deliver(server) >= 1
    assert server.twilio.sent == sent, "a text Twilio had accepted went out again"
    assert server.rows("SELECT ref FROM deliveries") == [(server.twilio.sids_to(phone)[0],)]
    assert server.rows("SELECT status FROM outbox WHERE channel = 'sms'") == [("sent",)] * len(sent)


def test_an_sms_that_never_reached_twilio_is_sent_after_a_crash(server: Server) -> None:
    phone = "+12025550124"
    assert server.text(phone, "NEWGAME Ann", "SM-in-2") == 200
    _crash_after_handing(server, "sms")  # handed, and the kill came before Twilio took it
    assert _deliver(server) >= 1
    assert len(server.twilio.to(phone)) == 1


def test_nothing_is_sent_while_its_sent_mark_cannot_be_written(tmp_path: Path) -> None:
    from moderator.channels import Capabilities, Delivered
    from moderator.delivery import Sender
    from moderator.store import Store

    store = Store(tmp_path / "m.db")
    try:
        store.enqueue([(None, "fake", "a", "m", {"kind": "note", "text": "hello"})], 1.0)
        sent: list[str] = []

        def send_batch(to: str, messages: Any) -> list[Delivered]:
            sent.extend(m.text for m in messages)
            return [Delivered() for _ in messages]

        channel = SimpleNamespace(capabilities=Capabilities(), send_batch=send_batch)
        sender = Sender(store, {"fake": channel}, clock=lambda: 2.0)
        store.execute("PRAGMA query_only=ON")
        for _ in range(3):
            with pytest.raises(sqlite3.OperationalError):
                sender.deliver_due()
        assert sent == []
        store.execute("PRAGMA query_only=OFF")  # space is back: it goes, once
        assert sender.deliver_due() == 1 and sender.deliver_due() == 0
        assert sent == ["hello"]
    finally:
        store.close()


@pytest.mark.parametrize("command", ["serve", "telegram"])
@pytest.mark.parametrize("kind", ["unopenable", "not-a-database"])
def test_a_database_that_cannot_be_opened_or_written_at_start_up_is_named_in_one_line_and_exits_2(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], command: str,
        kind: str) -> None:
    from moderator import cli

    if kind == "unopenable":  # its folder is a file: no one, not even root, can create it
        (tmp_path / "a-file").write_text("")
        db = tmp_path / "a-file" / "m.db"
    else:
        db = tmp_path / "m.db"
        db.write_bytes(b"this is not an SQLite file, " * 100)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MODERATOR_DB", str(db))
    monkeypatch.setenv("TELEGRAM_TOKEN", "7000:TEST-token")
    assert cli.main([command]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(db) in err[0] and "database" in err[0]
