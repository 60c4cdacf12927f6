"""A database made at any earlier schema opens and migrates, and keeps everything it held.

The reference is a database at today's schema holding a finished game, a game under way, queued and sent
messages (one handed to its channel), dedupe ids, a reminder, SMS delivery records, a board message and the
server's last clean stop. For every earlier schema a file is
built by applying the migrations up to it and given the rows that schema can hold; ``Store`` then opens it.
"""

from __future__ import annotations

import json
import random
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from sqlite_utils import Database

from moderator.channels import Kind, Option, Outbound
from moderator.claims import Accusation
from moderator.commands import SetReminders
from moderator.engine import awaiting
from moderator.service import Service
from moderator.store import BoardMessage, Store, migrations
from tests.fakes import Harness

NAMES = ("Ann", "Bob", "Cy", "Dee", "Eve", "Fay", "Gus")
MIGRATIONS = [m.name for m in migrations.pending(Database(memory=True))]
"""Every migration, oldest first."""


SUCCESSORS = {
    # m006 made SMS delivery records every channel's: sms_texts rows became deliveries rows of channel 'sms'.
    "sms_texts": ("deliveries", "SELECT ref, table_id, address, units, status, error_code, sent, updated"
                                " FROM deliveries WHERE channel = 'sms'"),
}
"""Tables a later migration replaced, their successor, and the successor's rows as the old table held them."""


def schema_before(path: Path, migration: str) -> Database:
    """A new database file at the schema just before ``migration``, open (its caller adds rows and closes it)."""
    db = Database(sqlite3.connect(path, isolation_level=None))
    migrations.apply(db, stop_before=migration)
    return db


@contextmanager
def one_transaction(db: sqlite3.Connection) -> Iterator[None]:
    """The rows a test adds go in as one commit, not one commit (and one fsync) per row as autocommit would."""
    db.execute("BEGIN")
    try:
        yield
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def user_tables(db: sqlite3.Connection) -> list[str]:
    found = db.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").fetchall()
    return [name for (name,) in found if not name.startswith(("sqlite_", "_sqlite_"))]


def schema(db: sqlite3.Connection) -> set[tuple[str, str, str]]:
    """Every table, index and trigger as SQLite keeps it (the migrations' own bookkeeping aside)."""
    found = db.execute("SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL").fetchall()
    return {(kind, name, " ".join(sql.split())) for kind, name, sql in found if not name.startswith("_sqlite_")}


def columns(db: sqlite3.Connection, table: str) -> list[str]:
    return [row[1] for row in db.execute(f"PRAGMA table_info({table})")]


def rows(db: sqlite3.Connection, table: str, names: list[str]) -> list[tuple[object, ...]]:
    return sorted(db.execute(f"SELECT {', '.join(names)} FROM {table}").fetchall(), key=repr)


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, tuple[int, str]]]:
    """A database at today's schema with rows in every table; and each table's game as (step, phase)."""
    path = tmp_path_factory.mktemp("reference") / "moderator.db"
    store = Store(path)
    store.execute("PRAGMA synchronous=OFF")  # a fixture need not survive a power cut: no fsync per action
    harness = Harness(store, seed=7)
    finished, _, _ = harness.seat_table(NAMES, prefix="a")
    harness.start(finished, "a0")
    harness.play_out(finished, random.Random(1))
    game = harness.table(finished).row.game
    store.append_claims(finished, game, 0, [(12, 40, 40, {"claim": "accusation", "player": 0, "target": 1})])
    running, _, _ = harness.seat_table(NAMES, prefix="b")
    harness.start(running, "b0")
    harness.send("b0", SetReminders(5))
    rng = random.Random(2)
    for _ in range(12):  # the first election and into the legislative session
        table = harness.table(running)
        assert table.state is not None
        harness.press(table.seats[rng.choice(awaiting(table.state))].address, rng)
    now = harness.clock()
    store.enqueue([(running, "fake", "b1", "nudge", {"kind": "note", "text": "queued, not sent yet"})], now)
    store.record_deliveries("sms", [("SM0001", running, "+15550100", 1, "queued")], now)
    store.set_delivery_status("sms", "SM0001", "delivered", None, now)
    store.set_board_message("telegram", "-100", running, BoardMessage(1, "42", "drawn"), now)
    store.set_paces("telegram", {"-100": '{"free": 1.0, "window": [1.0]}'}, now)  # m015: a group's pace
    store.stopped(now)  # m007: this run stopped cleanly
    store.execute("UPDATE outbox SET handed = ? WHERE id = (SELECT max(id) FROM outbox)", (now,))
    games = {}
    for table_id in (finished, running):
        state = harness.table(table_id).state
        assert state is not None
        games[table_id] = (state.step, state.phase.value)
    store.close()
    return path, games


def test_the_reference_holds_rows_in_every_table(reference: tuple[Path, dict[str, tuple[int, str]]]) -> None:
    with sqlite3.connect(reference[0]) as db:
        empty = [t for t in user_tables(db) if db.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] == 0]
    assert empty == []


@pytest.mark.parametrize("applied", range(1, len(MIGRATIONS)), ids=lambda n: f"after-{MIGRATIONS[n - 1]}")
def test_a_database_at_an_earlier_schema_migrates_with_nothing_lost(
    reference: tuple[Path, dict[str, tuple[int, str]]], tmp_path: Path, applied: int
) -> None:
    source, games = reference
    old = tmp_path / "old.db"
    db = schema_before(old, MIGRATIONS[applied])
    assert [m.name for m in migrations.applied(db)] == MIGRATIONS[:applied]
    kept: dict[str, list[str]] = {}
    with sqlite3.connect(source) as ref, one_transaction(db.conn):
        for table in user_tables(db.conn):
            if table in SUCCESSORS:  # a table a later migration replaced: its rows come from its successor
                successor, query = SUCCESSORS[table]
                names = columns(db.conn, table)
                marks = ", ".join("?" for _ in names)
                db.conn.executemany(f"INSERT INTO {table} VALUES ({marks})", ref.execute(query).fetchall())
                kept[successor] = columns(ref, successor)
                continue
            names = [c for c in columns(db.conn, table) if c in columns(ref, table)]
            kept[table] = names
            marks = ", ".join("?" for _ in names)
            # The append-only triggers allow inserts: the rows go in as the older code wrote them.
            db.conn.executemany(f"INSERT INTO {table} ({', '.join(names)}) VALUES ({marks})", rows(ref, table, names))
    db.close()

    store = Store(old)
    with sqlite3.connect(source) as ref:
        assert schema(store.db.conn) == schema(ref)
        for table, names in kept.items():
            assert rows(store.db.conn, table, names) == rows(ref, table, names), table
    service = Service(store)
    for table_id, (step, phase) in games.items():
        played = service.table(table_id)
        assert played is not None and played.state is not None
        assert (played.state.step, played.state.phase.value) == (step, phase)
    store.close()


def test_opening_a_current_database_again_changes_nothing(reference: tuple[Path, dict[str, tuple[int, str]]],
                                                           tmp_path: Path) -> None:
    copy = tmp_path / "again.db"
    with sqlite3.connect(reference[0]) as ref, sqlite3.connect(copy) as target:
        ref.backup(target)
        before = {t: rows(target, t, columns(target, t)) for t in user_tables(target)}
    store = Store(copy)
    assert [m.name for m in migrations.applied(store.db)] == MIGRATIONS
    assert {t: rows(store.db.conn, t, columns(store.db.conn, t)) for t in user_tables(store.db.conn)} == before
    store.close()


def test_messages_waiting_in_an_old_outbox_are_typed_by_the_migration(tmp_path: Path) -> None:
    """m006: a message queued before the outbox said each message's kind is delivered as the kind it was."""
    old = tmp_path / "old.db"
    db = schema_before(old, "m006_deliveries_and_typed_outbox")
    queued = [
        ("prompt-vote", {"text": "Vote?", "choices": [{"label": "Ja", "token": "vj"}], "decision": 7, "table": "t"}),
        ("vote-progress", {"text": "3 of 7 have voted."}),
        ("table-opened", {"text": "Open.", "join_code": "ACDEF", "table": "t", "public": "-100"}),
        ("seats-list", {"text": "1. Ann", "seats": ["Ann"], "host": True, "table": "t"}),
        ("deal-role", {"text": "Private\nYou are a Liberal.", "secret": True, "decision": 3}),
    ]
    for message_id, body in queued:
        db.execute("INSERT INTO outbox (channel, address, message_id, body, created) VALUES ('fake', 'a', ?, ?, 0)",
                   (message_id, json.dumps(body)))
    db.close()
    store = Store(old)
    messages = [Outbound.from_json(json.loads(body), mid) for mid, body in
                store.execute("SELECT message_id, body FROM outbox ORDER BY id").fetchall()]
    store.close()
    assert [m.kind for m in messages] == [Kind.PROMPT, Kind.COUNTER, Kind.JOIN, Kind.LOBBY, Kind.NOTE]
    assert messages[0].options == (Option("Ja", "vj"),) and messages[0].decision == 7
    assert (messages[2].join_code, messages[2].shown_in) == ("ACDEF", "-100")
    assert messages[3].seating is not None and messages[3].seating.names == ("Ann",)
    assert messages[4].secret and messages[4].text == "Private\nYou are a Liberal."


def test_claims_said_in_a_game_are_kept_and_heard_again_after_a_restart(
    reference: tuple[Path, dict[str, tuple[int, str]]], tmp_path: Path
) -> None:
    """m009: the claims of a game come back with its table, in the order said, after the events they followed."""
    copy = tmp_path / "claims.db"
    with sqlite3.connect(reference[0]) as ref, sqlite3.connect(copy) as target:
        ref.backup(target)
    store = Store(copy)
    finished = next(table_id for table_id, (_, phase) in reference[1].items() if phase == "game_over")
    table = Service(store).table(finished)
    assert table is not None
    assert [(said.step, said.logged, said.shown, said.claim) for said in table.said] == [(12, 40, 40, Accusation(0, 1))]
    store.close()


def test_m007_an_upgraded_database_knows_no_earlier_run_and_no_message_handed(tmp_path: Path) -> None:
    """m007: the first start after the upgrade prompts nobody again (nothing says the last run crashed), and no
    waiting message counts as handed to its channel (none is marked a repeat)."""
    path = tmp_path / "old.db"
    db = schema_before(path, "m007_lifecycle_and_handed")
    db.execute("INSERT INTO outbox (channel, address, message_id, body, created) VALUES ('sms', '+1', 'x', '{}', 1)")
    db.close()
    store = Store(path)
    try:
        assert store.starting(2.0) == (None, None)
        assert store.execute("SELECT handed FROM outbox").fetchall() == [(None,)]
        assert store.starting(3.0) == (2.0, None)  # this run is alive; it has not stopped
    finally:
        store.close()


def test_m015_an_upgraded_database_keeps_each_groups_pace_from_then_on(tmp_path: Path) -> None:
    """m015: before it no pace was stored (a restart paces every group afresh, as the old code did); after it a
    group's pace comes back to the next process, the newest one kept, an old one no longer handed back."""
    path = tmp_path / "old.db"
    db = schema_before(path, "m015_pacing")
    db.close()
    store = Store(path)
    try:
        assert store.paces("telegram", 0.0) == {}
        store.set_paces("telegram", {"-100": "a", "-200": "b"}, 10.0)
        store.set_paces("telegram", {"-100": "c"}, 20.0)
        assert store.paces("telegram", 0.0) == {"-100": "c", "-200": "b"}
        assert store.paces("telegram", 15.0) == {"-100": "c"}
        assert store.paces("sms", 0.0) == {}
    finally:
        store.close()


def test_m019_an_upgraded_database_keeps_each_tables_current_game_exportable(
    reference: tuple[Path, dict[str, tuple[int, str]]], tmp_path: Path
) -> None:
    """m019: every game's setup is kept apart; a table's game from before the upgrade is copied in, with when
    it started, so it exports as before and a rematch no longer overwrites it."""
    path = tmp_path / "old.db"
    db = schema_before(path, "m019_game_setups")
    with sqlite3.connect(reference[0]) as ref, one_transaction(db.conn):
        for table in ("game_tables", "seats", "actions"):
            names = columns(db.conn, table)
            marks = ", ".join("?" for _ in names)
            db.conn.executemany(f"INSERT INTO {table} ({', '.join(names)}) VALUES ({marks})", rows(ref, table, names))
        kept = rows(ref, "game_setups", ["table_id", "game", "setup", "started"])
    db.close()
    store = Store(path)
    try:
        assert rows(store.db.conn, "game_setups", ["table_id", "game", "setup", "started"]) == kept
        service = Service(store)
        for table_id in reference[1]:
            played = service.table(table_id)
            assert played is not None
            assert played.row.setup is not None and store.setup(table_id, played.row.game) == played.row.setup
    finally:
        store.close()


def test_m024_an_upgraded_database_makes_its_secret_once_and_keeps_it(tmp_path: Path) -> None:
    """m024: the upgrade makes the server's secret (32 random bytes); every later start reads the same one, so a
    PIN cookie signed before a restart still opens its seat; another database has a secret of its own."""
    path = tmp_path / "old.db"
    db = schema_before(path, "m024_server_secret")
    db.close()
    store = Store(path)
    try:
        secret = store.server_secret()
        key = Service(store).pages.cookie_key()
    finally:
        store.close()
    again = Store(path)
    try:
        assert len(secret) == 32 and again.server_secret() == secret
        assert Service(again).pages.cookie_key() == key != secret  # a key made from the secret, not the secret
    finally:
        again.close()
    other = Store(memory=True)
    try:
        assert other.server_secret() != secret
    finally:
        other.close()
