"""``moderator serve``: the real Starlette app (Telegram webhook, Twilio webhook, /healthz, /join/<code>) with the
fake Bot API and the fake Twilio; security (secret token, signatures, replays, another user's button) and fuzz
(hostile bodies never give a 5xx and never change state); ``moderator backup`` and ``moderator export``."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import shutil
import sqlite3
import threading
import time
import warnings
from pathlib import Path
from types import SimpleNamespace
from typing import Any
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from moderator import cli
from moderator.app import Durable, create_app
from moderator.catalog import Catalog
from moderator.settings import Settings
from moderator.store import FairLock, SerialStore, Store
from moderator.transports.telegram import SECRET_HEADER, TelegramSettings, callback
from moderator.transports.telegram import SPEC as TELEGRAM
from tests.fake_telegram import TOKEN, private_chat
from tests.fake_twilio import ACCOUNT_SID, AUTH_TOKEN, OUR_NUMBER, PUBLIC_URL, FakeTwilio, incoming, signature
from tests.serve_app import ANN, BOB, HOOK, LOCAL, SECRET, SMS_URL, Server, WebhookBotAPI, env, open_table
from tests.web_table import text_of

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # Starlette 1.x asks for httpx2; httpx works the same here
    from starlette.testclient import TestClient

pytestmark = pytest.mark.anyio
SHORT_AND_LONG = [pytest.param(False, id="short"), pytest.param(True, id="long", marks=pytest.mark.long)]
"""The reliability tests short, and long (200 tables for 60 s under load, 60 s of random SIGKILLs): ``--long``."""
# --- the routes -------------------------------------------------------------------------------------------


def test_start_registers_the_webhook_with_its_secret(server: Server) -> None:
    assert server.api.webhook is not None
    assert server.api.webhook["url"] == f"{PUBLIC_URL}{HOOK}"
    assert server.api.webhook["secret_token"] == SECRET


def test_healthz_reports_database_backlog_and_version(server: Server) -> None:
    response = server.client.get("/healthz")
    assert response.status_code == 200
    body = response.json()
    assert body["ok"] is True and body["database"] == "ok" and body["outbox_backlog"] == 0
    assert body["version"] and body["channels"] == {"sms": "up", "telegram": "up"}
    open_table(server)
    assert server.client.get("/healthz").json()["outbox_backlog"] > 0  # deliver=False: the reply waits


@pytest.mark.parametrize("missing", ["catalogs", "fonts", "a font that is not one"])
def test_healthz_fails_when_the_catalogs_or_the_fonts_do_not_load(
    server: Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, missing: str
) -> None:
    from moderator import board, catalog

    if missing == "catalogs":
        monkeypatch.setenv("MODERATOR_MESSAGES", str(tmp_path))  # an empty folder: no theme at all
    else:
        copy = tmp_path / "messages"
        shutil.copytree(catalog.BUNDLED, copy, ignore=shutil.ignore_patterns("*.ttf"))
        monkeypatch.setenv("MODERATOR_MESSAGES", str(copy))
        monkeypatch.setattr(board, "_BUNDLED_FONTS", tmp_path)
        if missing == "a font that is not one":  # as a checkout without Git LFS leaves it: the file, not the font
            # on a machine with no fonts of its own (the slim Docker image): Pillow finds none of the same name
            monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "no-fonts"))
            monkeypatch.setenv("XDG_DATA_DIRS", str(tmp_path / "no-fonts"))
            (copy / board.FONT_FOLDER / board.FONT_FILES[1]).write_text(
                "version https://git-lfs.github.com/spec/v1\noid sha256:0\nsize 1\n")
            shutil.copy(catalog.BUNDLED / board.FONT_FOLDER / board.FONT_FILES[0], copy / board.FONT_FOLDER)
    response = server.client.get("/healthz")
    assert response.status_code == 503
    assert response.json()["ok"] is False and response.json()["messages"] == "missing"


def test_healthz_and_the_start_up_log_say_when_the_board_lays_text_out_without_raqm(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Pillow without FriBiDi (no Raqm): Persian names would draw unjoined and backwards, which the operator
    hears at start-up and from every health check, as for a missing font."""
    from starlette.testclient import TestClient

    from tests.test_board_persian import no_raqm

    no_raqm(monkeypatch)
    caplog.set_level(logging.WARNING)
    network = {"telegram": WebhookBotAPI(clock=lambda: 1_800_000_000.0), "sms": FakeTwilio()}
    app = create_app(Settings.load(env(tmp_path / "m.db"), cwd=tmp_path), network=network, deliver=False)
    with TestClient(app, raise_server_exceptions=False, client=LOCAL) as client:
        started = [r.getMessage() for r in caplog.records]
        response = client.get("/healthz")
    assert any("start-up" in line and "no Raqm text layout" in line for line in started), started
    assert response.status_code == 503 and response.json()["ok"] is False
    assert any("no Raqm text layout" in r.getMessage() for r in caplog.records
               if r.getMessage().startswith("health check"))


def test_a_table_opened_on_telegram_is_joined_by_sms(server: Server) -> None:
    code = open_table(server)
    assert server.text("+12025550101", f"JOIN {code} Cleo", "SM1") == 200
    seats = [r[0] for r in server.rows("SELECT name FROM seats ORDER BY position")]
    assert "Cleo" in seats


def test_join_page_lists_telegram_and_sms_as_links_and_qr_codes(server: Server) -> None:
    code = open_table(server)
    response = server.client.get(f"/join/{code.lower()}")
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/html")
    page = response.text
    assert f"https://t.me/ModeratorTestBot?start={code}" in page
    assert f"sms:{OUR_NUMBER}?body=JOIN%20{code}" in page
    assert page.count("<svg") == 2
    assert "Ann" not in page  # nothing about who sits there


@pytest.mark.parametrize("code", ["ZZZZZ", "AAAAA", "x", "%00", "A" * 200, "<script>"])
def test_join_page_for_an_unknown_code_is_a_404_that_says_what_to_do_and_nothing_else(server: Server,
                                                                                       code: str) -> None:
    real = open_table(server)
    response = server.client.get(f"/join/{code}")
    assert response.status_code == 404 and response.headers["content-type"].startswith("text/html")
    text = text_of(response.text)
    assert Catalog.load("classic", "en").text("web-stale-join-todo") in text  # this client asks for no language
    assert real not in text and "Ann" not in text and "<script>" not in text  # nothing of a table, nor the path
    escape = server.client.get("/join/..%2Fhealthz")  # no code: a path that does not exist, not the health check
    assert escape.status_code == 404 and escape.text == "Not Found"


def test_a_channel_without_credentials_stays_off(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    settings_ = Settings.load({"MODERATOR_DB": str(tmp_path / "m.db")}, cwd=tmp_path)
    caplog.set_level(logging.INFO)
    with TestClient(create_app(settings_, deliver=False), client=LOCAL) as client:
        assert client.get("/healthz").json()["channels"] == {}
        # No such route (and, being no webhook, not even past the Origin check without one).
        same_origin = {"Origin": "http://testserver"}
        assert client.post(HOOK, json={"update_id": 1}, headers=same_origin).status_code == 404
        assert client.post("/sms", data={"Body": "hi"}, headers=same_origin).status_code == 404
        assert client.post("/sms", data={"Body": "hi"}).status_code == 403
    assert any("channels on: none" in r.getMessage() for r in caplog.records)


def test_settings_come_from_dotenv_and_the_environment_wins(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("MODERATOR_PORT=9000\nTELEGRAM_TOKEN=1:abc\nMODERATOR_HOST=0.0.0.0\n")
    loaded = Settings.load({"MODERATOR_PORT": "9100"}, cwd=tmp_path)
    telegram = TelegramSettings.of(loaded)
    assert (loaded.port, loaded.host, telegram.token) == (9100, "0.0.0.0", "1:abc")
    assert telegram.secret and telegram.secret != "1:abc"  # derived, stable, not the token
    again = Settings.load({"MODERATOR_PORT": "9100"}, cwd=tmp_path)
    assert TelegramSettings.of(again).secret == telegram.secret
    assert TELEGRAM.off(loaded) is not None  # no public URL to register the webhook at



def test_with_delivery_the_reply_reaches_the_fake_bot_api(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    api = WebhookBotAPI(clock=lambda: 1_800_000_000.0)
    app = create_app(Settings.load(env(db), cwd=tmp_path), network={"telegram": api, "sms": FakeTwilio()})
    with TestClient(app) as client:
        s = Server(client, api, FakeTwilio(), db)
        open_table(s)
        for _ in range(100):
            if api.of("sendPhoto", ANN["id"]):
                break
            time.sleep(0.05)
        assert api.of("sendPhoto", ANN["id"])  # the join QR code went to the host


# --- security -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("secret", [None, "", "wrong", SECRET + "x", SECRET.upper()])
def test_a_missing_or_wrong_secret_token_is_refused_and_changes_nothing(server: Server, secret: str | None) -> None:
    before = server.snapshot()
    assert server.update(server.say(ANN, "/newgame"), secret=secret) == 403
    assert server.snapshot() == before


def test_a_replayed_update_is_processed_once(server: Server) -> None:
    update = server.say(ANN, "help", update_id=77)
    assert server.update(update) == 200
    after_first = server.snapshot()
    assert server.update(update) == 200
    assert server.snapshot() == after_first


def test_a_replayed_update_after_a_restart_is_processed_once(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    update = {"update_id": 5, "message": {"message_id": 1, "from": ANN, "chat": private_chat(ANN),
                                          "date": 1_800_000_000, "text": "help"}}
    snapshots = []
    for _ in range(2):
        api = WebhookBotAPI(clock=lambda: 1_800_000_000.0)
        app = create_app(Settings.load(env(db), cwd=tmp_path), network={"telegram": api, "sms": FakeTwilio()},
                         deliver=False)
        with TestClient(app) as client:
            assert client.post(HOOK, json=update, headers={SECRET_HEADER: SECRET}).status_code == 200
        with sqlite3.connect(db) as conn:
            snapshots.append(conn.execute("SELECT count(*) FROM outbox").fetchone())
    assert snapshots[0] == snapshots[1]


@pytest.mark.parametrize("forgery", ["other-token", "missing", "tampered"])
def test_a_forged_twilio_signature_is_refused(server: Server, forgery: str) -> None:
    code = open_table(server)
    before = server.snapshot()
    form = incoming("+12025550101", f"JOIN {code} Cleo", "SM9")
    headers = {"X-Twilio-Signature": signature(SMS_URL, form, "not-" + AUTH_TOKEN)}
    if forgery == "missing":
        headers = {}
    elif forgery == "tampered":
        headers = {"X-Twilio-Signature": signature(SMS_URL, form)}
        form = {**form, "Body": f"JOIN {code} Mallory"}
    assert server.client.post("/sms", data=form, headers=headers).status_code == 403
    assert server.snapshot() == before


def test_one_players_button_pressed_by_another_user_is_refused(server: Server,
                                                                caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    open_table(server)
    assert server.update(server.say(ANN, "/computers 4")) == 200
    assert server.update(server.say(ANN, "/startgame")) == 200
    prompts = [json.loads(b) for (b,) in server.rows(
        "SELECT body FROM outbox WHERE channel = 'telegram' AND address = ? ORDER BY id", (str(ANN["id"]),))]
    prompt = [p for p in prompts if p["kind"] == "prompt"][-1]
    data = callback(prompt["table"], prompt["decision"], prompt["options"][0][1])
    before = server.game_state()
    query: dict[str, Any] = {
        "id": "q1", "from": BOB, "chat_instance": "ci", "data": data,
        "message": {"message_id": 1, "chat": private_chat(BOB), "date": 1_800_000_000, "text": "?"}}
    assert server.update({"update_id": 9001, "callback_query": query}) == 200
    assert server.game_state() == before
    query = {**query, "id": "q2", "from": ANN, "message": {**query["message"], "chat": private_chat(ANN)}}
    assert server.update({"update_id": 9002, "callback_query": query}) == 200
    assert server.game_state() != before  # the same button pressed by its player counts
    outcomes = [json.loads(r.getMessage().removeprefix("action "))["outcome"]
                for r in caplog.records if r.name == "moderator.actions"]
    assert outcomes[-2:] == ["answered", "applied"]


def test_logs_one_line_per_action_without_secrets(server: Server, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    open_table(server)
    server.update(server.say(ANN, "/computers 4"))
    server.update(server.say(ANN, "/startgame"))
    lines = [r.getMessage() for r in caplog.records if r.name == "moderator.actions"]
    assert len(lines) == 3
    fields = [json.loads(line.removeprefix("action ")) for line in lines]
    assert [f["kind"] for f in fields] == ["OpenTable", "AddComputers", "Start"]
    assert all(f["outcome"] == "answered" and f["table"] and isinstance(f["ms"], float) for f in fields)
    update = server.say(ANN, "help", update_id=4242)
    server.update(update)
    server.update(update)  # redelivered: the service has its id, and drops it
    lines = [r.getMessage() for r in caplog.records if r.name == "moderator.actions"]
    assert [json.loads(line.removeprefix("action "))["outcome"] for line in lines[3:]] == ["answered", "duplicate"]
    everything = "\n".join(r.getMessage() for r in caplog.records)
    for secret in (TOKEN, SECRET, AUTH_TOKEN, "Fascist", "Liberal", "Hitler", str(ANN["id"])):
        assert secret not in everything


@pytest.mark.parametrize("path", [HOOK, "/sms"])
def test_a_huge_body_is_refused_before_it_is_read(server: Server, path: str) -> None:
    before = server.snapshot()
    body = b"Body=" + b"x" * 3_000_000
    headers = {"content-type": "application/x-www-form-urlencoded", SECRET_HEADER: SECRET}
    assert server.client.post(path, content=body, headers=headers).status_code == 413
    assert server.snapshot() == before


# --- fuzz ---------------------------------------------------------------------------------------------------

HOSTILE = st.one_of(
    st.binary(max_size=2000),
    st.text(max_size=500).map(lambda t: t.encode("utf-8", "surrogatepass")),
    st.just(b"\xff\xfe\x00" * 100),
    st.just(b"{" * 5000),
    st.just(b"x" * 300_000),
    st.dictionaries(st.text(max_size=10), st.one_of(st.integers(), st.text(max_size=20), st.none()),
                    max_size=5).map(lambda d: json.dumps(d).encode()),
    st.builds(lambda i, d: json.dumps({"update_id": i, "callback_query": {
        "id": "f", "from": {"id": 66, "is_bot": False, "first_name": "F"}, "chat_instance": "c", "data": d}}).encode(),
        st.integers(min_value=1, max_value=2**31), st.text(max_size=64)),
)
CONTENT_TYPES = st.sampled_from([
    None, "application/json", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x",
    "text/plain; charset=utf-16", "application/x-www-form-urlencoded; charset=latin-1", "image/png", "garbage",
])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow, HealthCheck.data_too_large])
@given(body=HOSTILE, content_type=CONTENT_TYPES,
       route=st.sampled_from(["tg-secret", "tg-none", "sms-signed-wrong", "sms", "join", "healthz"]))
def test_hostile_requests_never_give_a_5xx_nor_change_the_game(
    server: Server, body: bytes, content_type: str | None, route: str
) -> None:
    before = server.game_state()
    headers = {"content-type": content_type} if content_type else {}
    match route:
        case "tg-secret":
            response = server.client.post(HOOK, content=body, headers={**headers, SECRET_HEADER: SECRET})
        case "tg-none":
            response = server.client.post(HOOK, content=body, headers=headers)
        case "sms-signed-wrong":
            response = server.client.post("/sms", content=body,
                                          headers={**headers, "X-Twilio-Signature": "AAAA" + body.hex()[:20]})
        case "sms":
            response = server.client.post("/sms", content=body, headers=headers)
        case "join":
            response = server.client.get("/join/" + quote(body.decode("latin-1")[:300], safe=""))
        case _:
            response = server.client.get("/healthz")
    assert response.status_code < 500, (route, response.status_code)
    if route not in ("tg-secret",):
        assert route == "healthz" or response.status_code >= 400
    assert server.game_state() == before


# --- backup and export --------------------------------------------------------------------------------------


def test_backup_copies_the_live_database(server: Server, tmp_path: Path) -> None:
    open_table(server)
    target = tmp_path / "copy.db"
    assert cli.main(["backup", str(target), "--db", str(server.db)]) == 0
    with sqlite3.connect(target) as copy:
        assert copy.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert copy.execute("SELECT code FROM game_tables").fetchall() == server.rows("SELECT code FROM game_tables")
    assert cli.main(["backup", str(target), "--db", str(tmp_path / "nothing.db")]) == 2


def test_backup_and_export_find_the_database_that_dotenv_names(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    from moderator.commands import Inbound, OpenTable
    from moderator.service import Service

    db = tmp_path / "from-dotenv.db"
    store = Store(db)
    Service(store).handle(Inbound("console", "host", OpenTable("Host")))
    [(table_id,)] = store.execute("SELECT id FROM game_tables").fetchall()
    store.close()
    (tmp_path / ".env").write_text(f'MODERATOR_DB="{db}"  # as serve reads it\n')
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MODERATOR_DB", raising=False)
    target = tmp_path / "copy.db"
    assert cli.main(["backup", str(target)]) == 0
    with sqlite3.connect(target) as copy:
        assert copy.execute("SELECT id FROM game_tables").fetchall() == [(table_id,)]
    capsys.readouterr()
    assert cli.main(["export", table_id]) == 2  # that database's table, whose game has not started
    assert capsys.readouterr().err.strip() == f"moderator export: no game {table_id}"


def test_export_writes_a_finished_games_record_only(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from moderator.commands import AddComputers, Inbound, OpenTable, Start
    from moderator.service import Service

    db = tmp_path / "m.db"
    store = Store(db)
    service = Service(store, seed=lambda: 3)
    service.handle(Inbound("console", "host", OpenTable("Host")))
    [(table_id,)] = store.execute("SELECT id FROM game_tables").fetchall()
    service.handle(Inbound("console", "host", AddComputers(4)))
    service.handle(Inbound("console", "host", Start()))
    store.close()
    # The host's seat owes a decision: the game is not over, and its record holds every secret.
    assert cli.main(["export", table_id, "--db", str(db)]) == 1
    assert cli.main(["export", "NOPE", "--db", str(db)]) == 2
    capsys.readouterr()
    store = Store(db)
    store.execute("UPDATE game_tables SET status = 'over' WHERE id = ?", (table_id,))  # as the host's END does
    store.close()
    out = tmp_path / "game.json"
    assert cli.main(["export", table_id, "--db", str(db), "--out", str(out)]) == 0
    assert cli.main(["replay", str(out), "--json"]) == 0  # the record replays
    record = json.loads(out.read_text())
    assert record["players"] and isinstance(record["actions"], list)
    capsys.readouterr()
    assert cli.main(["export", "--db", str(db)]) == 0  # without GAME: the latest tables
    assert table_id in capsys.readouterr().out


def test_export_writes_every_game_of_a_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A rematch does not overwrite the game before it: ``--game N`` exports each, and the list names each."""
    from moderator.commands import AddComputers, Host, HostCommand, Inbound, OpenTable, Start
    from moderator.service import Service

    db = tmp_path / "m.db"
    store = Store(db)
    service = Service(store, seed=iter(range(100)).__next__)
    service.handle(Inbound("console", "host", OpenTable("Host")))
    [(table_id,)] = store.execute("SELECT id FROM game_tables").fetchall()
    service.handle(Inbound("console", "host", AddComputers(4)))
    service.handle(Inbound("console", "host", Start()))
    service.handle(Inbound("console", "host", Host(HostCommand.END)))
    service.handle(Inbound("console", "host", Host(HostCommand.REMATCH)))
    store.close()
    capsys.readouterr()
    assert cli.main(["export", table_id, "--db", str(db)]) == 1  # the rematch is under way: its record waits
    assert cli.main(["export", table_id, "--game", "3", "--db", str(db)]) == 2  # no such game
    first = tmp_path / "first.json"
    assert cli.main(["export", table_id, "--game", "1", "--db", str(db), "--out", str(first)]) == 0
    store = Store(db)
    Service(store).handle(Inbound("console", "host", Host(HostCommand.END)))
    store.close()
    second = tmp_path / "second.json"
    assert cli.main(["export", table_id, "--game", "2", "--db", str(db), "--out", str(second)]) == 0
    records = [json.loads(path.read_text()) for path in (first, second)]
    assert records[0]["seed"] != records[1]["seed"]
    assert cli.main(["replay", str(first), "--json"]) == 0 and cli.main(["replay", str(second), "--json"]) == 0
    capsys.readouterr()
    assert cli.main(["export", "--db", str(db)]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert [line.split()[:3] for line in listed] == [[table_id, "--game", "2"], [table_id, "--game", "1"]]


# --- over real HTTP ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("long", SHORT_AND_LONG)
def test_tables_played_at_once_over_http_give_no_errors(tmp_path: Path, long: bool) -> None:
    """The load test, short (``python benchmarks/serve.py`` runs 200 tables for 60 s): the real server in a child
    process on loopback, tables played through the signed SMS webhook, stopped with SIGTERM."""
    from benchmarks.serve import load

    tables, seconds, think = (200, 60.0, 1.0) if long else (8, 3.0, 0.1)
    result, counts = load(tables=tables, seconds=seconds, think=think, db=tmp_path / "load.db")
    assert not result.errors, result.errors[:5]
    assert result.started == tables and counts["actions"] > 0 and counts["messages sent"] > 0


@pytest.mark.parametrize("long", SHORT_AND_LONG)
def test_sigkill_at_random_moments_loses_no_accepted_action_and_no_message(tmp_path: Path, long: bool) -> None:
    """The crash test, short: the server in a child process is killed with SIGKILL at random moments while
    tables play through its webhook, and started again; a text not answered is sent again (same MessageSid).
    Every text answered 200 is in the database, every game still replays, and the outbox drains."""
    import random

    from benchmarks.serve import drive, free_port, start_server, wait_healthy
    from moderator.service import Service

    db = tmp_path / "crash.db"
    port = free_port()
    process = [start_server(db, port)]
    wait_healthy(port, process[0])
    rng = random.Random(6)

    async def killer() -> int:
        kills = 0
        for _ in range(10 if long else 2):  # a fixed number: a restart on a busy machine takes seconds
            await asyncio.sleep(rng.uniform(0.3, 1.0))
            process[0].kill()
            process[0].wait()
            kills += 1
            process[0] = start_server(db, port)
            await asyncio.to_thread(wait_healthy, port, process[0])
        return kills

    async def play() -> tuple[Any, int]:
        tables, seconds = (20, 60.0) if long else (6, 8.0)
        result, kills = await asyncio.gather(drive(port, db, tables, seconds, 0.05, retry=True), killer())
        return result, kills

    try:
        result, kills = asyncio.run(play())
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with sqlite3.connect(db) as conn:
                if not conn.execute("SELECT count(*) FROM outbox WHERE status = 'pending'").fetchone()[0]:
                    break
            time.sleep(0.2)
    finally:
        process[0].terminate()
        process[0].wait(timeout=60)
    assert kills == (10 if long else 2) and not result.errors, result.errors[:5]
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        handled = {r[0] for r in conn.execute("SELECT external_id FROM inbound WHERE channel = 'sms'")}
        statuses = dict(conn.execute("SELECT status, count(*) FROM outbox GROUP BY status").fetchall())
        tables = [r[0] for r in conn.execute("SELECT id FROM game_tables")]
    assert set(result.accepted) <= handled  # no accepted action lost
    assert set(statuses) == {"sent"}, statuses  # no message lost (at least once: a crash may repeat one)
    store = Store(db)
    try:
        service = Service(store)
        # every game replays
        assert len(tables) == (20 if long else 6) and all(service.table(t) is not None for t in tables)
        assert sum(len(table.actions) for t in tables if (table := service.table(t)) is not None) > 0
    finally:
        store.close()


# --- group commit -----------------------------------------------------------------------------------------


def _inbound_ids(db: Path) -> list[str]:
    """What another connection (a sender thread, or the next start after a crash) sees committed."""
    with contextlib.closing(sqlite3.connect(db)) as conn:
        return [r[0] for r in conn.execute("SELECT external_id FROM inbound ORDER BY external_id")]


async def test_inputs_handled_in_one_loop_iteration_share_one_commit(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    store = SerialStore(db)
    try:
        store.group_commits(lambda: None)
        with store.transaction():
            store.seen("sms", "SM1", 1.0)
        with store.transaction():
            store.seen("sms", "SM2", 1.0)
        assert _inbound_ids(db) == []  # written, not yet committed
        await store.durable()
        assert _inbound_ids(db) == ["SM1", "SM2"]
    finally:
        store.close()


async def test_an_input_that_fails_in_a_group_rolls_back_alone(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    store = SerialStore(db)
    try:
        store.group_commits(lambda: None)
        with store.transaction():
            store.seen("sms", "SM1", 1.0)
        with pytest.raises(ZeroDivisionError), store.transaction():
            store.seen("sms", "SM2", 1.0)
            raise ZeroDivisionError
        with store.transaction():
            store.seen("sms", "SM3", 1.0)
        await store.durable()
    finally:
        store.close()
    assert _inbound_ids(db) == ["SM1", "SM3"]


async def test_a_response_starts_only_after_its_writes_are_committed(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    seen_when_answered: list[list[str]] = []
    store = SerialStore(db)
    store.group_commits(lambda: None)

    async def app(scope: Any, receive: Any, send: Any) -> None:
        with store.transaction():
            store.seen("sms", "SM1", 1.0)
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    async def send(message: Any) -> None:
        if message["type"] == "http.response.start":
            seen_when_answered.append(_inbound_ids(db))

    scope = {"type": "http", "app": SimpleNamespace(state=SimpleNamespace(store=store))}
    try:
        await Durable(app)(scope, None, send)
    finally:
        store.close()
    assert seen_when_answered == [["SM1"]]


def test_the_write_lock_goes_to_the_thread_that_waited_longest() -> None:
    lock = FairLock()
    order: list[str] = []
    lock.acquire()

    def other() -> None:
        lock.acquire()
        order.append("other")
        lock.release()

    thread = threading.Thread(target=other)
    thread.start()
    while not lock._queue:  # the other thread waits
        time.sleep(0.001)
    lock.release()
    assert lock.acquire(timeout=5)  # asks again at once, but the waiting thread goes first
    order.append("again")
    lock.release()
    thread.join()
    assert order == ["other", "again"]


def test_each_hand_over_to_a_channel_is_marked_before_and_recorded_right_after(tmp_path: Path) -> None:
    from moderator.channels import Capabilities, Delivered
    from moderator.delivery import Sender

    store = Store(tmp_path / "m.db")
    try:
        store.enqueue([(None, "fake", f"a{i % 3}", "m", {"kind": "note", "text": str(i)}) for i in range(9)], 1.0)
        statements: list[str] = []
        store.db.conn.set_trace_callback(statements.append)
        sent: list[tuple[str, str]] = []

        def send_batch(to: str, messages: Any) -> list[Delivered]:
            sent.extend((to, m.text) for m in messages)
            return [Delivered() for _ in messages]

        channel = SimpleNamespace(capabilities=Capabilities(), send_batch=send_batch)

        assert Sender(store, {"fake": channel}, clock=lambda: 2.0).deliver_due() == 9
        assert len(sent) == 9 and store.backlog() == 0
        # Three addresses, each one hand-over: marked handed (a commit), recorded as sent (a commit).
        assert sum(s.strip().upper() == "COMMIT" for s in statements) == 6
        assert store.execute("SELECT count(*) FROM outbox WHERE handed = 2.0").fetchone()[0] == 9
    finally:
        store.close()


def test_serve_stops_cleanly_on_sigterm_and_says_where_it_serves(tmp_path: Path) -> None:
    """`moderator serve` under a service manager: SIGTERM ends it with exit 0, and its start-up line names an
    address (never "serving on -")."""
    import signal
    import subprocess
    import sys

    from benchmarks.serve import free_port, server_env, wait_healthy
    from tests.stand_in import StandIn

    port = free_port()
    twilio = StandIn(token=TOKEN, account=ACCOUNT_SID, key=AUTH_TOKEN).start()  # Twilio, asked for the account
    env = {k: v for k, v in server_env(tmp_path / "stop.db", port).items() if k != "MODERATOR_PUBLIC_URL"}
    process = subprocess.Popen([sys.executable, "-m", "moderator", "serve"], env={**env, "TWILIO_API_URL": twilio.url},
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        wait_healthy(port, process)
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
        twilio.stop()
    assert process.returncode == 0, err[-2000:]
    line = next(line for line in err.splitlines() if "serving on" in line)
    assert "serving on -" not in line and f":{port}" in line
