"""SQLite persistence (sqlite-utils): tables, seats, actions and events (append-only), outbox, dedupe, deadlines.

One file in WAL mode with ``synchronous=FULL``: a committed action survives a power cut. The schema is built
by numbered migrations, so a newer version opens an older file. Only this module writes SQL.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import errno
import json
import logging
import secrets
import sqlite3
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any, Final

from sqlite_utils import Database
from sqlite_utils.migrations import Migrations

from .settings import default_path

log = logging.getLogger(__name__)

migrations = Migrations("moderator")


@migrations()
def m001_initial(db: Database) -> None:
    """Tables, seats, the append-only action and event logs, the outbox and the dedupe table."""
    db.executescript(
        """
        CREATE TABLE game_tables (
            id TEXT PRIMARY KEY,
            code TEXT,
            status TEXT NOT NULL,
            theme TEXT NOT NULL,
            host_channel TEXT NOT NULL,
            host_address TEXT NOT NULL,
            public_channel TEXT,
            public_address TEXT,
            options TEXT NOT NULL DEFAULT '{}',
            game INTEGER NOT NULL DEFAULT 0,
            setup TEXT,
            decision_step INTEGER NOT NULL DEFAULT 0,
            created REAL NOT NULL,
            updated REAL NOT NULL
        ) STRICT;
        CREATE UNIQUE INDEX game_tables_code ON game_tables(code) WHERE code IS NOT NULL;

        CREATE TABLE seats (
            table_id TEXT NOT NULL REFERENCES game_tables(id),
            position INTEGER NOT NULL,
            name TEXT NOT NULL,
            channel TEXT NOT NULL,
            address TEXT NOT NULL,
            language TEXT NOT NULL,
            computer INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (table_id, position)
        ) STRICT;
        CREATE INDEX seats_address ON seats(channel, address);

        CREATE TABLE actions (
            table_id TEXT NOT NULL,
            game INTEGER NOT NULL,
            n INTEGER NOT NULL,
            action TEXT NOT NULL,
            created REAL NOT NULL,
            PRIMARY KEY (table_id, game, n)
        ) STRICT;

        CREATE TABLE events (
            table_id TEXT NOT NULL,
            game INTEGER NOT NULL,
            n INTEGER NOT NULL,
            step INTEGER NOT NULL,
            kind TEXT NOT NULL,
            payload TEXT NOT NULL,
            PRIMARY KEY (table_id, game, n)
        ) STRICT;

        CREATE TABLE outbox (
            id INTEGER PRIMARY KEY,
            table_id TEXT,
            channel TEXT NOT NULL,
            address TEXT NOT NULL,
            message_id TEXT NOT NULL,
            body TEXT NOT NULL,
            status TEXT NOT NULL DEFAULT 'pending',
            attempts INTEGER NOT NULL DEFAULT 0,
            not_before REAL NOT NULL DEFAULT 0,
            created REAL NOT NULL,
            sent REAL,
            last_error TEXT
        ) STRICT;
        CREATE INDEX outbox_pending ON outbox(status, not_before);

        CREATE TABLE inbound (
            channel TEXT NOT NULL,
            external_id TEXT NOT NULL,
            received REAL NOT NULL,
            PRIMARY KEY (channel, external_id)
        ) STRICT;

        CREATE TABLE deadlines (
            table_id TEXT NOT NULL,
            kind TEXT NOT NULL,
            due REAL NOT NULL,
            PRIMARY KEY (table_id, kind)
        ) STRICT;

        -- The logs are append-only: a game is its actions, so rewriting one would rewrite history.
        CREATE TRIGGER actions_append_only_update BEFORE UPDATE ON actions
            BEGIN SELECT RAISE(ABORT, 'actions are append-only'); END;
        CREATE TRIGGER actions_append_only_delete BEFORE DELETE ON actions
            BEGIN SELECT RAISE(ABORT, 'actions are append-only'); END;
        CREATE TRIGGER events_append_only_update BEFORE UPDATE ON events
            BEGIN SELECT RAISE(ABORT, 'events are append-only'); END;
        CREATE TRIGGER events_append_only_delete BEFORE DELETE ON events
            BEGIN SELECT RAISE(ABORT, 'events are append-only'); END;
        """
    )


@migrations()
def m002_address_indexes(db: Database) -> None:
    """Find a table by its host's or its public channel's address without scanning every table."""
    db.executescript(
        """
        CREATE INDEX game_tables_host ON game_tables(host_channel, host_address);
        CREATE INDEX game_tables_public ON game_tables(public_channel, public_address)
            WHERE public_channel IS NOT NULL;
        """
    )


@migrations()
def m003_sms_status(db: Database) -> None:
    """Every SMS text sent (by Twilio's message SID): its table, phone and segments, and its delivery status as
    Twilio's status callbacks report it."""
    db.executescript(
        """
        CREATE TABLE sms_texts (
            sid TEXT PRIMARY KEY,
            table_id TEXT,
            address TEXT NOT NULL,
            segments INTEGER NOT NULL,
            status TEXT NOT NULL,
            error_code TEXT,
            sent REAL NOT NULL,
            updated REAL NOT NULL
        ) STRICT;
        CREATE INDEX sms_texts_table ON sms_texts(table_id, sent);
        CREATE INDEX sms_texts_address ON sms_texts(table_id, address, status);
        """
    )


@migrations()
def m004_board_messages(db: Database) -> None:
    """The message that shows a table's board image in a chat, edited in place: its id survives a restart."""
    db.executescript(
        """
        CREATE TABLE board_messages (
            channel TEXT NOT NULL,
            address TEXT NOT NULL,
            table_id TEXT NOT NULL,
            game INTEGER NOT NULL,
            message_id TEXT NOT NULL,
            drawn TEXT NOT NULL,
            updated REAL NOT NULL,
            PRIMARY KEY (channel, address, table_id)
        ) STRICT;
        """
    )


@migrations()
def m005_outbox_address_index(db: Database) -> None:
    """Find an address's newest messages (``last_prompt``, every typed answer asks) without scanning the outbox."""
    db.executescript("CREATE INDEX outbox_address ON outbox(channel, address, id);")


_LEGACY_KINDS: dict[str, str] = {
    # How the channels told message ids apart before the outbox said each message's kind (m006 reads old rows).
    "vote-recorded": "echo", "vote-changed": "echo", "policy-discarded": "echo", "party-membership-seen": "echo",
    "vote-progress": "counter", "election-elected": "result", "election-rejected": "result",
    "presidential-candidate": "call", "presidential-candidate-special": "call", "chancellor-nominated": "call",
    "seat-taken": "lobby", "seats-list": "lobby", "computers-added": "lobby", "game-starting": "lobby",
    "board": "board",
}


def _typed_body(message_id: str, body: dict[str, Any]) -> dict[str, Any]:
    """An outbox body of the shape before m006 in today's (``channels.Outbound.to_json``)."""
    kind = _LEGACY_KINDS.get(message_id, "note")
    if body.get("choices"):
        kind = "prompt"
    elif body.get("join_code"):
        kind = "join"

    out: dict[str, Any] = {"kind": kind, "text": str(body.get("text", ""))}
    if body.get("secret"):
        out["secret"] = True
    if body.get("choices"):
        out["options"] = [[c["label"], c["token"]] for c in body["choices"]]
    for key in ("decision", "table", "join_code", "board", "game", "language"):
        if body.get(key) is not None:
            out[key] = body[key]
    if body.get("public"):
        out["shown_in"] = body["public"]
    if kind == "lobby" and body.get("seats") is not None:
        out["seating"] = {"names": body["seats"], "controls": [], "open": message_id != "game-starting"}
    return out


@migrations()
def m006_deliveries_and_typed_outbox(db: Database) -> None:
    """What a channel reports back about a message (its id there, its cost, its delivery status) is kept for every
    channel, not only SMS; and every waiting outbox message says its kind."""
    db.executescript(
        """
        CREATE TABLE deliveries (
            channel TEXT NOT NULL,
            ref TEXT NOT NULL,
            table_id TEXT,
            address TEXT NOT NULL,
            units INTEGER NOT NULL,
            status TEXT NOT NULL,
            error_code TEXT,
            sent REAL NOT NULL,
            updated REAL NOT NULL,
            PRIMARY KEY (channel, ref)
        ) STRICT;
        INSERT INTO deliveries (channel, ref, table_id, address, units, status, error_code, sent, updated)
            SELECT 'sms', sid, table_id, address, segments, status, error_code, sent, updated FROM sms_texts;
        DROP TABLE sms_texts;
        CREATE INDEX deliveries_table ON deliveries(table_id, sent);
        CREATE INDEX deliveries_address ON deliveries(table_id, address, status);
        """
    )
    pending = db.execute("SELECT id, message_id, body FROM outbox WHERE status = 'pending'"
                         " AND json_extract(body, '$.kind') IS NULL").fetchall()
    db.conn.executemany(
        "UPDATE outbox SET body = ? WHERE id = ?",
        [(json.dumps(_typed_body(mid, json.loads(body)), ensure_ascii=False), i) for i, mid, body in pending],
    )



@migrations()
def m007_lifecycle_and_handed(db: Database) -> None:
    """When the server was last alive and whether it stopped cleanly (a restart after a crash or a long stop
    prompts again whoever owes a decision); and when each waiting message was handed to its channel (after a
    crash it may have gone out: the channel checks or says it is a repeat)."""
    db.executescript(
        """
        CREATE TABLE lifecycle (
            key TEXT PRIMARY KEY,
            at REAL NOT NULL
        ) STRICT;
        ALTER TABLE outbox ADD COLUMN handed REAL;
        """
    )


@migrations()
def m009_claims(db: Database) -> None:
    """What players said at the table (claims: public speech, never actions), in the order said, per game."""
    db.executescript(
        """
        CREATE TABLE claims (
            table_id TEXT NOT NULL,
            game INTEGER NOT NULL,
            n INTEGER NOT NULL,
            step INTEGER NOT NULL,
            logged INTEGER NOT NULL,
            shown INTEGER,
            claim TEXT NOT NULL,
            PRIMARY KEY (table_id, game, n)
        ) STRICT;
        """
    )


@migrations()
def m015_pacing(db: Database) -> None:
    """How fast each chat of a paced channel was last written to (Telegram's 20 a minute in a group), so a
    restart goes on at that pace instead of starting afresh."""
    db.executescript(
        """
        CREATE TABLE pacing (
            channel TEXT NOT NULL,
            address TEXT NOT NULL,
            pace TEXT NOT NULL,
            updated REAL NOT NULL,
            PRIMARY KEY (channel, address)
        ) STRICT;
        """
    )


@migrations()
def m019_game_setups(db: Database) -> None:
    """Every game's setup (seats, roles, deck, seed), kept per game: a rematch no longer overwrites the last one,
    so every game a table played stays exportable. A table's current game is copied in."""
    db.executescript(
        """
        CREATE TABLE game_setups (
            table_id TEXT NOT NULL,
            game INTEGER NOT NULL,
            setup TEXT NOT NULL,
            started REAL NOT NULL,
            PRIMARY KEY (table_id, game)
        ) STRICT;
        CREATE TRIGGER game_setups_append_only_update BEFORE UPDATE ON game_setups
            BEGIN SELECT RAISE(ABORT, 'game setups are append-only'); END;
        CREATE TRIGGER game_setups_append_only_delete BEFORE DELETE ON game_setups
            BEGIN SELECT RAISE(ABORT, 'game setups are append-only'); END;
        INSERT INTO game_setups (table_id, game, setup, started)
            SELECT id, game, setup, coalesce(json_extract(options, '$.started'), created) FROM game_tables
            WHERE setup IS NOT NULL AND game > 0;
        """
    )


@migrations()
def m024_server_secret(db: Database) -> None:
    """A secret of this server's own, made once with the database and kept with it (never shown or logged): the
    key that signs what a browser keeps for it (a pass-and-play seat's PIN cookie), so a cookie cannot be made
    or tried through without it, across restarts."""
    db.executescript(
        """
        CREATE TABLE server_secret (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            secret BLOB NOT NULL CHECK (length(secret) = 32)
        ) STRICT;
        """
    )
    db.execute("INSERT INTO server_secret (id, secret) VALUES (1, ?)", (secrets.token_bytes(32),))


@migrations()
def m025_kept_answers(db: Database) -> None:
    """An input's answer shown at once (a toast for a pressed vote), kept with the input's id: a channel too late
    to show it (a restart between the press and its answer) has it sent as a message after all."""
    db.execute("ALTER TABLE inbound ADD COLUMN answer TEXT")


_COSMETIC: Final = "('counter', 'board', 'aside')"
"""The kinds of outbox row that hold no later message back: a counter and a board show again what a later one shows
better (``channels.Kind.cosmetic``), an aside (``Kind.ASIDE``) leads to nothing; each comes along with a later one."""

_ASKS: Final = "(json_extract(body, '$.kind') = 'prompt' OR json_extract(body, '$.follows') IS NOT NULL)"
"""An outbox row that asks its recipient to decide: a prompt, or a press's answer with the next question under it."""

_TABLES_OF = (
    # Three index searches (every input asks this): a join with OR would scan every table.
    " FROM game_tables t WHERE t.status != 'closed' AND t.id IN ("
    "SELECT table_id FROM seats WHERE channel = ? AND address = ?"
    " UNION ALL SELECT id FROM game_tables WHERE host_channel = ? AND host_address = ?"
    " UNION ALL SELECT id FROM game_tables WHERE public_channel = ? AND public_address = ?)"
    " ORDER BY t.updated DESC, t.rowid"
)
"""The tables of (channel, address) x 3, newest first: ``SELECT`` what you need, then this."""

def _dumper(ensure_ascii: bool) -> Callable[[dict[str, Any]], str]:
    """``json.dumps(obj, ensure_ascii=...)`` for a dict, the same text, with the C encoder built once.

    ``json.dumps`` builds a new encoder for every call, which costs more than encoding a short message; the
    arguments below are the ones ``JSONEncoder.iterencode`` passes (no circular check: our dicts are trees).
    """
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:  # no C speedups: the pure-Python path, as json.dumps would take
        return json.JSONEncoder(ensure_ascii=ensure_ascii).encode
    quote = json.encoder.encode_basestring_ascii if ensure_ascii else json.encoder.encode_basestring
    encode = make(None, json.JSONEncoder().default, quote, None, ": ", ", ", False, False, True)
    return lambda obj: "".join(encode(obj, 0))


_BODY_JSON = _dumper(ensure_ascii=False)
"""``json.dumps(body, ensure_ascii=False)`` for the outbox (about ten rows for every action)."""
_ACTION_JSON = _dumper(ensure_ascii=True)
"""``json.dumps(action)`` for the action log."""


@dataclass(frozen=True, slots=True)
class SeatRow:
    """A seat at a table: who sits there and how to reach them."""

    position: int
    name: str
    channel: str
    address: str
    language: str
    computer: bool


class TableStatus(StrEnum):
    """Where a table is in its life."""

    LOBBY = "lobby"
    """Taking seats; the join code works."""
    PLAYING = "playing"
    PAUSED = "paused"
    """The host paused the game: no decision is taken until they resume it."""
    OVER = "over"
    """The game is decided or the host ended it; a rematch starts the next game at this table."""
    CLOSED = "closed"
    """Done with: no input reaches it any more."""


@dataclass(frozen=True, slots=True)
class TableRow:
    """A table as stored."""

    id: str
    code: str | None
    status: TableStatus
    theme: str
    host_channel: str
    host_address: str
    public_channel: str | None
    public_address: str | None
    options: dict[str, Any]
    game: int
    setup: dict[str, Any] | None
    decision_step: int


@dataclass(frozen=True, slots=True)
class BoardMessage:
    """The message a chat shows a table's board in: for which game, its id, and what it shows (a fingerprint)."""

    game: int
    message_id: str
    drawn: str


@dataclass(frozen=True, slots=True)
class Delivery:
    """A message a channel took, by the channel's id for it: its table, address and last reported status."""

    channel: str
    ref: str
    table_id: str | None
    address: str
    status: str


@dataclass(frozen=True, slots=True)
class OutboxRow:
    """One message waiting to be delivered."""

    id: int
    table_id: str | None
    channel: str
    address: str
    message_id: str
    body: dict[str, Any]
    attempts: int
    handed: float | None = None
    """When it was last handed to its channel without the answer being recorded (it may have gone out)."""


_FAULT_CODES: Final = frozenset({sqlite3.SQLITE_FULL, sqlite3.SQLITE_IOERR, sqlite3.SQLITE_READONLY,
                                  sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED})
"""SQLite's (primary) codes for a database that cannot be written now: a full disk, an I/O error, a read-only file or
disk, a file that cannot be opened, a lock held too long."""
_FAULT_ERRNOS: Final = frozenset({errno.ENOSPC, errno.EROFS, errno.EDQUOT, errno.EIO, errno.EFBIG})


def storage_fault(exc: BaseException | None) -> bool:
    """Whether ``exc`` (or what it was raised from) says the database cannot be written now (a full or read-only
    disk, an I/O error, a lock held too long) rather than that something is wrong with the code."""
    for _ in range(4):
        if exc is None:
            return False
        if isinstance(exc, sqlite3.Error) and getattr(exc, "sqlite_errorcode", -1) & 0xFF in _FAULT_CODES:
            return True
        if isinstance(exc, OSError) and exc.errno in _FAULT_ERRNOS:
            return True
        exc = exc.__cause__
    return False


WRITES_SETTLE: Final = 2.0
"""Seconds without a failed write before a write that commits ends a storage fault: a nearly full disk that takes
a small write between two that fail is still one fault, said once."""


class WriteWatch:
    """Whether the database can be written, as every connection that shares it finds it (``app.running`` gives all
    of its connections one). The first write that fails for the disk's sake (``storage_fault``) begins a fault, said
    in one line; a write that commits ``WRITES_SETTLE`` seconds after the last failure ends it, said in one line
    with how long it lasted and how many inputs were refused meanwhile. In between, nothing is logged: a failed
    write is noted, a refused input counted. Without a logger (a ``Store`` on its own) it only keeps count."""

    def __init__(self, logger: logging.Logger | None = None, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.logger = logger
        self.clock = clock
        self._lock = threading.Lock()
        self._since: float | None = None
        self._last = float("-inf")
        self._refused = 0

    @property
    def failing(self) -> bool:
        """True from the first failed write until the fault ends."""
        return self._since is not None

    @property
    def refused_meanwhile(self) -> int:
        """Inputs refused since the fault began (0 without one)."""
        return self._refused if self._since is not None else 0

    def failed(self, exc: BaseException) -> bool:
        """(Any thread.) A write failed with ``exc``; True if that is the disk's fault (noted; the first one said)."""
        if not storage_fault(exc):
            return False
        with self._lock:
            now = self.clock()
            self._last = now
            if self._since is not None:
                return True
            self._since, self._refused = now, 0
        if self.logger is not None:
            self.logger.error("the database cannot be written (%s): every input is refused and asked for again, "
                              "and nothing is sent, until it can", _fault_words(exc))
        return True

    def committed(self) -> None:
        """(Any thread.) A write committed: that ends a fault once no write has failed for ``WRITES_SETTLE`` s."""
        if self._since is None:
            return
        with self._lock:
            now = self.clock()
            if self._since is None or now - self._last < WRITES_SETTLE:
                return
            lasted, refused, self._since = now - self._since, self._refused, None
        if self.logger is not None:
            self.logger.warning("the database can be written again after %.0f s; %d %s refused meanwhile", lasted,
                                refused, "input was" if refused == 1 else "inputs were")

    def refused(self) -> None:
        """(Any thread.) An input was refused because it could not be stored (counted while a fault lasts)."""
        with self._lock:
            if self._since is not None:
                self._refused += 1


def _fault_words(exc: BaseException) -> str:
    """SQLite's (or the system's) words for a storage fault: "database or disk is full", never a statement."""
    while exc.__cause__ is not None and not isinstance(exc, (sqlite3.Error, OSError)):
        exc = exc.__cause__
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


class Store:
    """The moderator's database. Not thread-safe: use one Store per thread (asyncio code uses one)."""

    def __init__(self, path: str | Path | None = None, *, memory: bool = False) -> None:
        if memory:
            self.db = Database(memory=True)
        else:
            target = Path(path) if path is not None else default_path()
            target.parent.mkdir(parents=True, exist_ok=True)
            self.db = Database(sqlite3.connect(str(target), isolation_level=None))
            self.db.enable_wal()
            # FULL: a committed action survives a power cut, not just a crash of this process.
            self.db.execute("PRAGMA synchronous=FULL")
            self.db.execute("PRAGMA busy_timeout=5000")
        self.db.execute("PRAGMA foreign_keys=ON")
        migrations.apply(self.db)
        self.writes = WriteWatch()
        """Told of every write that fails or commits (the wiring gives every connection of a database one)."""

    def close(self) -> None:
        """Close the connection."""
        self.db.close()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """All writes inside commit together or not at all (a failure for the disk's sake told to ``writes``)."""
        outer = not self.db.conn.in_transaction
        try:
            with self.db.atomic():
                yield
        except sqlite3.Error as exc:
            self.writes.failed(exc)
            raise
        if outer:
            self.writes.committed()

    def execute(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> sqlite3.Cursor:
        """Run one statement (inside a ``transaction`` for writes)."""
        return self.db.execute(sql, params)

    # --- inbound dedupe ---------------------------------------------------------------------------------

    def seen(self, channel: str, external_id: str, now: float) -> bool:
        """Record an inbound message id; True if it was already processed (then nothing else is done)."""
        cursor = self.execute(
            "INSERT OR IGNORE INTO inbound (channel, external_id, received) VALUES (?, ?, ?)",
            (channel, external_id, now),
        )
        return cursor.rowcount == 0

    def keep_answer(self, channel: str, external_id: str, answer: Mapping[str, Any] | None) -> None:
        """Keep (or, None, forget) the message an input's answer at once stood for (``Outbound.to_json`` and its
        ``message_id``)."""
        self.execute("UPDATE inbound SET answer = ? WHERE channel = ? AND external_id = ?",
                     (None if answer is None else _BODY_JSON(dict(answer)), channel, external_id))

    def kept_answer(self, channel: str, external_id: str) -> dict[str, Any] | None:
        """The message kept for an input's answer (``keep_answer``), if one is."""
        row = self.execute("SELECT answer FROM inbound WHERE channel = ? AND external_id = ?",
                           (channel, external_id)).fetchone()
        return None if row is None or row[0] is None else dict(json.loads(row[0]))

    # --- the server's life ------------------------------------------------------------------------------

    def starting(self, now: float) -> tuple[float | None, float | None]:
        """(When the last run was last alive, when it stopped cleanly or None) as this run starts; from now on
        this run is alive and has not stopped."""
        marks = dict(self.execute("SELECT key, at FROM lifecycle").fetchall())
        with self.transaction():
            self.execute("DELETE FROM lifecycle WHERE key = 'stopped'")
            self.alive(now)
        return marks.get("alive"), marks.get("stopped")

    def check_writable(self) -> None:
        """Raise (``sqlite3.Error``) unless a write commits; it leaves nothing behind (a start-up check)."""
        with self.transaction():
            self.execute("INSERT INTO lifecycle (key, at) VALUES ('write-check', 0) ON CONFLICT (key) DO NOTHING")
            self.execute("DELETE FROM lifecycle WHERE key = 'write-check'")

    def alive(self, now: float) -> None:
        """This run is alive at ``now`` (a heartbeat: a crash is known by its silence)."""
        self.execute("INSERT INTO lifecycle (key, at) VALUES ('alive', ?)"
                     " ON CONFLICT (key) DO UPDATE SET at = excluded.at", (now,))

    def stopped(self, now: float) -> None:
        """This run stops cleanly at ``now``."""
        with self.transaction():
            self.alive(now)
            self.execute("INSERT INTO lifecycle (key, at) VALUES ('stopped', ?)"
                         " ON CONFLICT (key) DO UPDATE SET at = excluded.at", (now,))

    def waiting_prompts(self, table_id: str, decision: int) -> frozenset[tuple[str, str]]:
        """(channel, address) of every prompt for this decision of a table still waiting in the outbox (a question
        shown under a press's answer, ``Outbound.follows``, is one)."""
        rows = self.execute(
            "SELECT DISTINCT channel, address FROM outbox WHERE table_id = ? AND status = 'pending'"
            f" AND {_ASKS} AND json_extract(body, '$.decision') = ?",
            (table_id, decision)).fetchall()
        return frozenset((str(channel), str(address)) for channel, address in rows)

    def server_secret(self) -> bytes:
        """This server's secret (32 random bytes made with the database, m024): a key, never to be shown."""
        return bytes(self.execute("SELECT secret FROM server_secret WHERE id = 1").fetchone()[0])

    # --- tables and seats -------------------------------------------------------------------------------

    def insert_table(self, row: TableRow, now: float) -> None:
        """Create a table."""
        self.execute(
            "INSERT INTO game_tables (id, code, status, theme, host_channel, host_address, public_channel,"
            " public_address, options, game, setup, decision_step, created, updated)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                row.id,
                row.code,
                row.status,
                row.theme,
                row.host_channel,
                row.host_address,
                row.public_channel,
                row.public_address,
                json.dumps(row.options),
                row.game,
                None if row.setup is None else json.dumps(row.setup),
                row.decision_step,
                now,
                now,
            ),
        )

    def update_table(self, table_id: str, now: float, **fields: Any) -> None:
        """Change some columns of a table."""
        columns = []
        values: list[Any] = []
        for key, value in fields.items():
            columns.append(f"{key} = ?")
            values.append(json.dumps(value) if key in ("options", "setup") and value is not None else value)
        self.execute(
            f"UPDATE game_tables SET {', '.join(columns)}, updated = ? WHERE id = ?", (*values, now, table_id)
        )

    def table(self, table_id: str) -> TableRow | None:
        """A table by id."""
        row = self.execute("SELECT * FROM game_tables WHERE id = ?", (table_id,)).fetchone()
        return None if row is None else _table(row)

    def table_by_code(self, code: str) -> TableRow | None:
        """The table whose lobby takes this join code."""
        row = self.execute("SELECT * FROM game_tables WHERE code = ?", (code,)).fetchone()
        return None if row is None else _table(row)

    def tables_of(self, channel: str, address: str) -> list[TableRow]:
        """Unfinished tables this address sits at, hosts, or is the public channel of, newest first."""
        rows = self.execute("SELECT t.*" + _TABLES_OF, (channel, address) * 3).fetchall()
        return [_table(r) for r in rows]

    def table_ids_of(self, channel: str, address: str) -> list[str]:
        """The ids of ``tables_of`` (every input asks: the rows' JSON need not be read)."""
        return [r[0] for r in self.execute("SELECT t.id" + _TABLES_OF, (channel, address) * 3).fetchall()]

    def close_idle(self, before: float) -> list[str]:
        """Close every finished table and unstarted lobby last changed before ``before``; returns their ids."""
        ids = [r[0] for r in self.execute(
            "SELECT id FROM game_tables WHERE status IN ('over', 'lobby') AND updated < ?", (before,)
        ).fetchall()]
        # The change time stays as it was: it says when the table was last used, which the list in export shows.
        self.execute("UPDATE game_tables SET status = 'closed' WHERE status IN ('over', 'lobby') AND updated < ?",
                     (before,))
        return ids

    def open_tables(self) -> list[str]:
        """Ids of every table whose game is under way (to resume after a restart)."""
        rows = self.execute("SELECT id FROM game_tables WHERE status IN ('playing', 'paused')").fetchall()
        return [r[0] for r in rows]

    def tables_with_move_code(self, code: str) -> list[str]:
        """Ids of unclosed tables (lobby, game, or between games) holding this one-time code to move a seat."""
        rows = self.execute(
            "SELECT id FROM game_tables WHERE status != 'closed'"
            " AND EXISTS (SELECT 1 FROM json_each(options, '$.move_codes') WHERE key = ?)",
            (code,),
        ).fetchall()
        return [r[0] for r in rows]

    def seats(self, table_id: str) -> list[SeatRow]:
        """The seats of a table in seating order."""
        rows = self.execute(
            "SELECT position, name, channel, address, language, computer FROM seats"
            " WHERE table_id = ? ORDER BY position",
            (table_id,),
        ).fetchall()
        return [SeatRow(r[0], r[1], r[2], r[3], r[4], bool(r[5])) for r in rows]

    def replace_seats(self, table_id: str, seats: Sequence[SeatRow]) -> None:
        """Store the seats of a table, in this order."""
        self.execute("DELETE FROM seats WHERE table_id = ?", (table_id,))
        self.db.conn.executemany(
            "INSERT INTO seats (table_id, position, name, channel, address, language, computer)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            [
                (table_id, i, s.name, s.channel, s.address, s.language, int(s.computer))
                for i, s in enumerate(seats)
            ],
        )

    # --- the logs ---------------------------------------------------------------------------------------

    def append_action(self, table_id: str, game: int, n: int, action: dict[str, Any], now: float) -> None:
        """Append the n-th action of a game (append-only)."""
        self.execute(
            "INSERT INTO actions (table_id, game, n, action, created) VALUES (?, ?, ?, ?, ?)",
            (table_id, game, n, _ACTION_JSON(action), now),
        )

    def append_setup(self, table_id: str, game: int, setup: dict[str, Any], now: float) -> None:
        """Keep the setup a game of this table starts from (append-only: one per game)."""
        self.execute("INSERT INTO game_setups (table_id, game, setup, started) VALUES (?, ?, ?, ?)",
                     (table_id, game, json.dumps(setup), now))

    def setup(self, table_id: str, game: int) -> dict[str, Any] | None:
        """The setup game ``game`` of this table started from, if it was kept."""
        row = self.execute("SELECT setup FROM game_setups WHERE table_id = ? AND game = ?",
                           (table_id, game)).fetchone()
        return None if row is None else dict(json.loads(row[0]))

    def games(self, limit: int) -> list[tuple[str, int, str, int, float, float]]:
        """The latest games of every table, newest first: (table id, game, the table's status, seats, when the
        game started, when the table last changed)."""
        rows = self.execute(
            "SELECT g.table_id, g.game, t.status, json_array_length(g.setup, '$.players'), g.started, t.updated"
            " FROM game_setups g JOIN game_tables t ON t.id = g.table_id ORDER BY g.started DESC, g.game DESC"
            " LIMIT ?", (limit,)
        ).fetchall()
        return [(r[0], r[1], r[2], r[3], r[4], r[5]) for r in rows]

    def actions(self, table_id: str, game: int) -> list[dict[str, Any]]:
        """Every action of a game, in order."""
        rows = self.execute(
            "SELECT action FROM actions WHERE table_id = ? AND game = ? ORDER BY n", (table_id, game)
        ).fetchall()
        return [json.loads(r[0]) for r in rows]

    def append_events(self, table_id: str, game: int, first: int, rows: Sequence[tuple[int, str, str]]) -> None:
        """Append (step, kind, payload) events numbered from ``first`` (append-only)."""
        self.db.conn.executemany(
            "INSERT INTO events (table_id, game, n, step, kind, payload) VALUES (?, ?, ?, ?, ?, ?)",
            [(table_id, game, first + i, step, kind, payload) for i, (step, kind, payload) in enumerate(rows)],
        )

    def event_after(self, table_id: str, game: int, kind: str, step: int) -> dict[str, Any] | None:
        """The payload of a game's first event of ``kind`` logged after ``step``, if there is one."""
        row = self.execute(
            "SELECT payload FROM events WHERE table_id = ? AND game = ? AND kind = ? AND step > ? ORDER BY n LIMIT 1",
            (table_id, game, kind, step),
        ).fetchone()
        return None if row is None else dict(json.loads(row[0]))

    def event_count(self, table_id: str, game: int) -> int:
        """How many events a game has logged."""
        row = self.execute(
            "SELECT count(*) FROM events WHERE table_id = ? AND game = ?", (table_id, game)
        ).fetchone()
        return int(row[0])

    def append_claims(self, table_id: str, game: int, first: int,
                      rows: Sequence[tuple[int, int, int | None, dict[str, Any]]]) -> None:
        """Append (step, events logged when said, events logged when shown or None, claim JSON) claims numbered
        from ``first``."""
        self.db.conn.executemany(
            "INSERT INTO claims (table_id, game, n, step, logged, shown, claim) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [(table_id, game, first + i, step, logged, shown, _ACTION_JSON(claim))
             for i, (step, logged, shown, claim) in enumerate(rows)],
        )

    def show_claims(self, table_id: str, game: int, numbers: Sequence[int], shown: int) -> None:
        """Claims held back until a result (a person's, said between results) are shown with it now."""
        self.db.conn.executemany(
            "UPDATE claims SET shown = ? WHERE table_id = ? AND game = ? AND n = ?",
            [(shown, table_id, game, n) for n in numbers],
        )

    def claims(self, table_id: str, game: int) -> list[tuple[int, int, int | None, dict[str, Any]]]:
        """Every claim of a game, in the order said: (step, events logged when said, when shown, claim JSON)."""
        rows = self.execute(
            "SELECT step, logged, shown, claim FROM claims WHERE table_id = ? AND game = ? ORDER BY n",
            (table_id, game),
        ).fetchall()
        return [(int(step), int(logged), None if shown is None else int(shown), json.loads(claim))
                for step, logged, shown, claim in rows]

    # --- the outbox -------------------------------------------------------------------------------------

    def enqueue(self, rows: Sequence[tuple[str | None, str, str, str, dict[str, Any]]], now: float) -> None:
        """Queue (table_id, channel, address, message_id, body) messages for delivery."""
        self.db.conn.executemany(
            "INSERT INTO outbox (table_id, channel, address, message_id, body, created) VALUES (?, ?, ?, ?, ?, ?)",
            [(t, c, a, m, _BODY_JSON(b), now) for t, c, a, m, b in rows],
        )

    def due(self, now: float, limit: int = 100, channels: Sequence[str] | None = None,
            public_first: Sequence[str] = ()) -> list[OutboxRow]:
        """Pending messages whose time has come, oldest first.

        Nothing overtakes an earlier message to the same address that waits for a retry, unless that one is
        cosmetic (a counter, a board) or an aside: such a one comes along with the later message instead (the
        channel folds it away, holds it again or sends the two as one). On a ``public_first`` channel a message
        of a table to anyone but its public chat waits while an earlier, not cosmetic message to that public chat
        is pending (the group hears a result before the prompt it leads to; an aside leads to none); the answer
        to a press never waits, nor another echo to an address that waits for nothing else."""
        sql = "SELECT id, table_id, channel, address, message_id, body, attempts, handed FROM outbox"
        sql += " WHERE status = 'pending' AND (not_before <= ?"
        sql += (
            f" OR (json_extract(body, '$.kind') IN {_COSMETIC} AND EXISTS (SELECT 1 FROM outbox AS later"
            " WHERE later.status = 'pending' AND later.not_before <= ? AND later.channel = outbox.channel"
            " AND later.address = outbox.address AND later.id > outbox.id)))"
        )
        sql += (
            " AND NOT EXISTS (SELECT 1 FROM outbox AS earlier WHERE earlier.status = 'pending'"
            " AND earlier.not_before > ? AND earlier.channel = outbox.channel AND earlier.address = outbox.address"
            f" AND earlier.id < outbox.id AND json_extract(earlier.body, '$.kind') NOT IN {_COSMETIC})"
        )
        params: list[Any] = [now, now, now]
        if public_first:
            # Through the pending rows' index: a group's sent history is long, what it still waits for is short.
            sql += (
                f" AND NOT (outbox.channel IN ({', '.join('?' for _ in public_first)}) AND outbox.table_id IS NOT NULL"
                " AND EXISTS (SELECT 1 FROM outbox AS lead INDEXED BY outbox_pending"
                " JOIN game_tables AS t ON t.id = lead.table_id WHERE lead.status = 'pending'"
                " AND lead.table_id = outbox.table_id AND lead.channel = outbox.channel AND lead.id < outbox.id"
                " AND t.public_channel = lead.channel AND t.public_address = lead.address"
                f" AND lead.address != outbox.address AND json_extract(lead.body, '$.kind') NOT IN {_COSMETIC})"
                # The answer to a press edits the pressed message: it never waits. Another echo waits only
                # behind what its own address still waits for, so an address's order holds.
                " AND (json_extract(outbox.body, '$.kind') != 'echo' OR (json_extract(outbox.body, '$.press') IS NULL"
                " AND EXISTS (SELECT 1 FROM outbox AS before INDEXED BY outbox_pending WHERE before.status = 'pending'"
                " AND before.channel = outbox.channel AND before.address = outbox.address"
                " AND before.id < outbox.id))))"
            )
            params.extend(public_first)
        if channels is not None:
            sql += f" AND channel IN ({', '.join('?' for _ in channels)})"
            params.extend(channels)
        sql += " ORDER BY id LIMIT ?"
        params.append(limit)
        rows = self.execute(sql, params).fetchall()
        return [OutboxRow(r[0], r[1], r[2], r[3], r[4], json.loads(r[5]), r[6], r[7]) for r in rows]

    def hand(self, ids: Sequence[int], now: float) -> None:
        """These messages are being handed to their channel now (committed before they are)."""
        with self.transaction():
            self.db.conn.executemany("UPDATE outbox SET handed = coalesce(handed, ?) WHERE id = ?",
                                     [(now, i) for i in ids])

    def unhand(self, ids: Sequence[int]) -> None:
        """These messages were handed for the first time and the channel did not take them: a retry is no repeat."""
        self.db.conn.executemany("UPDATE outbox SET handed = NULL WHERE id = ?", [(i,) for i in ids])

    def quick_commits(self) -> None:
        """Commits on this connection survive a crash of this process but not a power cut (no fsync): for what a
        sender records, which at worst is sent once more (the outbox is at-least-once) and is written often."""
        if not self.db.conn.in_transaction:
            self.execute("PRAGMA synchronous=NORMAL")

    def mark_sent(self, outbox_id: int, now: float) -> None:
        """The channel accepted this message."""
        with self.transaction():
            self.execute("UPDATE outbox SET status = 'sent', sent = ? WHERE id = ?", (now, outbox_id))

    def settle(
        self,
        sent: Sequence[tuple[int, float]] = (),
        retries: Sequence[tuple[int, float, str]] = (),
        failed: Sequence[tuple[int, str]] = (),
        held: Sequence[tuple[int, float]] = (),
    ) -> None:
        """Record a delivery round in one transaction: (id, sent time) delivered, (id, not_before, error) to try
        again, (id, error) failed for good, (id, not_before) held back by the channel's pacing (no attempt spent).
        One commit instead of one per message, which each cost an fsync."""
        if not (sent or retries or failed or held):
            return
        with self.transaction():
            conn = self.db.conn
            conn.executemany("UPDATE outbox SET not_before = ? WHERE id = ?", [(t, i) for i, t in held])
            conn.executemany("UPDATE outbox SET status = 'sent', sent = ? WHERE id = ?", [(t, i) for i, t in sent])
            conn.executemany(
                "UPDATE outbox SET attempts = attempts + 1, not_before = ?, last_error = ? WHERE id = ?",
                [(t, e, i) for i, t, e in retries],
            )
            conn.executemany(
                "UPDATE outbox SET status = 'failed', attempts = attempts + 1, last_error = ? WHERE id = ?",
                [(e, i) for i, e in failed],
            )

    def mark_retry(self, outbox_id: int, not_before: float, error: str) -> None:
        """Delivery failed for now; try again after ``not_before``."""
        with self.transaction():
            self.execute(
                "UPDATE outbox SET attempts = attempts + 1, not_before = ?, last_error = ? WHERE id = ?",
                (not_before, error, outbox_id),
            )

    def mark_failed(self, outbox_id: int, error: str) -> None:
        """Delivery failed for good (the recipient blocked the bot, opted out, …)."""
        with self.transaction():
            self.execute(
                "UPDATE outbox SET status = 'failed', attempts = attempts + 1, last_error = ? WHERE id = ?",
                (error, outbox_id),
            )

    def failed_before(self, channel: str, address: str, table_id: str, before: int, error: str) -> bool:
        """True if a message of this table to this address before outbox id ``before`` failed for good with an
        error that starts with ``error`` (``delivery.CRASHED``: its host was told then)."""
        row = self.execute(
            "SELECT 1 FROM outbox INDEXED BY outbox_address WHERE channel = ? AND address = ? AND id < ?"
            " AND status = 'failed' AND table_id = ? AND substr(last_error, 1, ?) = ? LIMIT 1",
            (channel, address, before, table_id, len(error), error),
        ).fetchone()
        return row is not None

    def last_prompt(self, channel: str, address: str) -> tuple[str, dict[str, Any]] | None:
        """(message id, body) of the newest prompt delivered to an address (what a typed number answers; a question
        shown under a press's answer, ``Outbound.follows``, is one: its options and decision are the body's)."""
        row = self.execute(
            "SELECT message_id, body FROM outbox WHERE channel = ? AND address = ? AND status = 'sent'"
            f" AND {_ASKS} ORDER BY id DESC LIMIT 1",
            (channel, address),
        ).fetchone()
        return None if row is None else (str(row[0]), dict(json.loads(row[1])))


    def messages_to(self, channel: str, address: str, limit: int = 60,
                    since: float = 0.0) -> list[tuple[int, str, dict[str, Any]]]:
        """(outbox id, message id, body) of the newest messages queued for an address since ``since``, oldest
        first; cancelled and failed ones are left out. A channel read rather than pushed (a web page) shows these."""
        rows = self.execute(
            "SELECT id, message_id, body FROM outbox WHERE channel = ? AND address = ? AND created >= ?"
            " AND status IN ('pending', 'sent') ORDER BY id DESC LIMIT ?",
            (channel, address, since, limit),
        ).fetchall()
        return [(int(r[0]), str(r[1]), dict(json.loads(r[2]))) for r in reversed(rows)]

    def drop_pending(self, channel: str, address: str) -> int:
        """Cancel every pending message to an address (it opted out); returns how many."""
        with self.transaction():
            cursor = self.execute(
                "UPDATE outbox SET status = 'cancelled' WHERE status = 'pending' AND channel = ? AND address = ?",
                (channel, address),
            )
        return cursor.rowcount

    def outbox_texts(self, table_id: str, channels: Sequence[str], since: float) -> list[tuple[str, float | None, str]]:
        """(address, sent time or None if still pending, text) of a table's messages on these channels, queued
        since ``since``, oldest first; cancelled and failed ones are left out (they cost nothing)."""
        rows = self.execute(
            "SELECT address, sent, body FROM outbox WHERE table_id = ? AND created >= ?"
            f" AND status IN ('pending', 'sent') AND channel IN ({', '.join('?' for _ in channels)}) ORDER BY id",
            (table_id, since, *channels),
        ).fetchall()
        return [(r[0], r[1], str(json.loads(r[2]).get("text", ""))) for r in rows]

    def checkpoint(self) -> None:
        """Copy the write-ahead log into the database file as far as no reader needs it (never waits)."""
        self.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()

    def backlog(self) -> int:
        """How many messages wait for delivery."""
        return int(self.execute("SELECT count(*) FROM outbox WHERE status = 'pending'").fetchone()[0])

    # --- what channels reported back ----------------------------------------------------------------------

    def record_deliveries(self, channel: str, taken: Sequence[tuple[str, str | None, str, int, str]],
                          now: float) -> None:
        """Record messages a channel took: (its id for it, table id, address, units it cost, first status)."""
        self.db.conn.executemany(
            "INSERT OR IGNORE INTO deliveries (channel, ref, table_id, address, units, status, sent, updated)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [(channel, ref, table, address, units, status, now, now) for ref, table, address, units, status in taken],
        )

    def delivery(self, channel: str, ref: str) -> Delivery | None:
        """A message a channel took, by its id there; None if it is not ours."""
        row = self.execute("SELECT table_id, address, status FROM deliveries WHERE channel = ? AND ref = ?",
                           (channel, ref)).fetchone()
        return None if row is None else Delivery(channel, ref, row[0], row[1], row[2])

    def set_delivery_status(self, channel: str, ref: str, status: str, error_code: str | None, now: float) -> None:
        """The delivery status a channel reported for a message it took."""
        self.execute(
            "UPDATE deliveries SET status = ?, error_code = ?, updated = ? WHERE channel = ? AND ref = ?",
            (status, error_code, now, channel, ref),
        )

    def delivery_statuses(self, table_id: str, since: float, address: str | None = None) -> dict[str, int]:
        """Units (SMS segments) of a table's messages taken since ``since`` (to one address, if given), by status."""
        sql = "SELECT status, sum(units) FROM deliveries WHERE table_id = ? AND sent >= ?"
        params: list[Any] = [table_id, since]
        if address is not None:
            sql += " AND address = ?"
            params.append(address)
        return {r[0]: int(r[1]) for r in self.execute(sql + " GROUP BY status", params).fetchall()}


    # --- deadlines --------------------------------------------------------------------------------------

    def set_deadline(self, table_id: str, kind: str, due: float | None) -> None:
        """Set (or clear, with None) a table's deadline of this kind."""
        if due is None:
            self.execute("DELETE FROM deadlines WHERE table_id = ? AND kind = ?", (table_id, kind))
        else:
            self.execute(
                "INSERT INTO deadlines (table_id, kind, due) VALUES (?, ?, ?)"
                " ON CONFLICT (table_id, kind) DO UPDATE SET due = excluded.due",
                (table_id, kind, due),
            )

    def deadlines_due(self, now: float) -> list[tuple[str, str]]:
        """(table_id, kind) of every deadline that has passed."""
        rows = self.execute("SELECT table_id, kind FROM deadlines WHERE due <= ?", (now,)).fetchall()
        return [(r[0], r[1]) for r in rows]

    # --- board images -----------------------------------------------------------------------------------

    def paces(self, channel: str, since: float) -> dict[str, str]:
        """The pace of every address of a channel updated since ``since`` (``channels.Paced``)."""
        rows = self.execute("SELECT address, pace FROM pacing WHERE channel = ? AND updated >= ?",
                            (channel, since)).fetchall()
        return {str(a): str(p) for a, p in rows}

    def set_paces(self, channel: str, paces: dict[str, str], now: float, *, forget_before: float | None = None) -> None:
        """Keep the pace of these addresses (the newest wins); with ``forget_before``, forget every pace of the
        channel last updated before it (it no longer matters: the table holds the chats of the last while only)."""
        with self.transaction():
            if forget_before is not None:
                self.execute("DELETE FROM pacing WHERE channel = ? AND updated < ?", (channel, forget_before))
            self.db.conn.executemany(
                "INSERT INTO pacing (channel, address, pace, updated) VALUES (?, ?, ?, ?)"
                " ON CONFLICT (channel, address) DO UPDATE SET pace = excluded.pace, updated = excluded.updated",
                [(channel, a, p, now) for a, p in paces.items()],
            )

    def board_message(self, channel: str, address: str, table_id: str) -> BoardMessage | None:
        """The message showing this table's board in a chat, if one was sent."""
        row = self.execute(
            "SELECT game, message_id, drawn FROM board_messages WHERE channel = ? AND address = ? AND table_id = ?",
            (channel, address, table_id),
        ).fetchone()
        return None if row is None else BoardMessage(int(row[0]), str(row[1]), str(row[2]))

    def set_board_message(self, channel: str, address: str, table_id: str, shown: BoardMessage, now: float) -> None:
        """Remember the message showing this table's board in a chat, and what it shows."""
        with self.transaction():
            self.execute(
                "INSERT INTO board_messages (channel, address, table_id, game, message_id, drawn, updated)"
                " VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (channel, address, table_id) DO UPDATE SET"
                " game = excluded.game, message_id = excluded.message_id, drawn = excluded.drawn,"
                " updated = excluded.updated",
                (channel, address, table_id, shown.game, shown.message_id, shown.drawn, now),
            )


def _table(row: Sequence[Any]) -> TableRow:
    return TableRow(
        id=row[0],
        code=row[1],
        status=TableStatus(row[2]),

        theme=row[3],
        host_channel=row[4],
        host_address=row[5],
        public_channel=row[6],
        public_address=row[7],
        options=json.loads(row[8]),
        game=row[9],
        setup=None if row[10] is None else json.loads(row[10]),
        decision_step=row[11],
    )


# --- one writer at a time -----------------------------------------------------------------------------------

class FairLock:
    """A re-entrant lock granted in the order it was asked for. (``threading.RLock`` lets a thread that releases
    it and asks again at once overtake one that has been waiting: the event loop, which writes again as soon as
    it has committed, would starve the senders.)"""

    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._owner: int | None = None
        self._depth = 0
        self._queue: deque[object] = deque()

    def acquire(self, timeout: float | None = None) -> bool:
        """Take the lock after every earlier asker; False if ``timeout`` seconds passed first."""
        me = threading.get_ident()
        with self._cond:
            if self._owner == me:
                self._depth += 1
                return True
            ticket = object()
            self._queue.append(ticket)
            if not self._cond.wait_for(lambda: self._owner is None and self._queue[0] is ticket, timeout):
                self._queue.remove(ticket)
                self._cond.notify_all()
                return False
            self._queue.popleft()
            self._owner, self._depth = me, 1
            return True

    def release(self) -> None:
        with self._cond:
            assert self._owner == threading.get_ident(), "released by a thread that does not hold it"
            self._depth -= 1
            if not self._depth:
                self._owner = None
                self._cond.notify_all()


_WRITE: Final = FairLock()


WRITE_WAIT: Final = 5.0
"""Seconds a sender thread waits for the lock before it leaves the wait to SQLite's busy handler (never forever:
the event loop must not be able to block on a thread that waits for the loop's commit)."""


class SerialStore(Store):
    """A ``Store`` whose writes take one lock shared by every connection of this process (the service's and the
    senders'). SQLite lets one writer in at a time anyway; a waiting writer otherwise sleeps in SQLite's busy
    handler (1, 2, 5, 10 ... 100 ms), which under load costs far more than the writes themselves. Every write of
    ``Store`` (the senders' ``settle`` too) goes through ``transaction``.

    The event loop's store groups commits (``group_commits``): each input is a savepoint of one transaction that
    commits at the end of the loop's iteration, so the inputs handled in one iteration share one fsync, which on
    a busy disk costs more than handling them; ``durable`` waits for that commit before a request is answered.
    """

    CHECKPOINT_EVERY: Final = 50
    """Commits of one connection between two checkpoints of the log into the database file."""
    WAL_LIMIT: Final = 64 * 1024 * 1024
    """Bytes the write-ahead log is cut back to once it has been copied (it grows past this only in a burst)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Checkpoints copy the log into the database file, with fsyncs: never inside a commit (SQLite's default,
        # every 1,000 pages), which holds the write lock, but after it: a sender thread itself, the event loop's
        # group commits on a thread of their own (``commit``), so whatever channels play, the log stays bounded.
        self.execute("PRAGMA wal_autocheckpoint=0")
        self.execute(f"PRAGMA journal_size_limit={self.WAL_LIMIT}")
        self._commits = 0
        self._checkpointer: concurrent.futures.ThreadPoolExecutor | None = None
        self._checkpointing = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._committed: asyncio.Future[None] | None = None
        """Resolved when the open group of inputs is committed; None while no group is open."""
        self._forget: Callable[[], None] = lambda: None

    def group_commits(self, forget: Callable[[], None]) -> None:
        """(On the event loop.) From now on commit at the end of the loop's iteration; ``forget`` is called when a
        commit fails, so whatever cached the rolled-back inputs reloads from the database."""
        self._loop = asyncio.get_running_loop()
        self._forget = forget

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        if self._loop is None:
            locked = _WRITE.acquire(timeout=WRITE_WAIT)
            try:
                with super().transaction():
                    yield
            finally:
                if locked:
                    _WRITE.release()
            if self.db.conn.in_transaction:
                return  # an inner transaction: the outer one commits
            self._commits += 1
            if self._commits % self.CHECKPOINT_EVERY == 0:
                self.checkpoint()  # PASSIVE: writers go on meanwhile
            return
        if self._committed is None:
            _WRITE.acquire()
            try:
                self.execute("BEGIN IMMEDIATE")
            except BaseException as exc:
                _WRITE.release()
                if isinstance(exc, sqlite3.Error):
                    self.writes.failed(exc)
                raise
            self._committed = self._loop.create_future()
            self._loop.call_soon(self.commit)
        with super().transaction():  # a savepoint in the open group: an input that fails rolls back alone
            yield

    def commit(self) -> None:
        """Commit the open group of inputs, if any, and wake whoever waits in ``durable``."""
        committed, self._committed = self._committed, None
        if committed is None:
            return
        try:
            self.execute("COMMIT")
        except Exception as exc:
            if not self.writes.failed(exc):  # the disk's fault is said once, when it begins
                log.error("a commit failed; %s", type(exc).__name__)
            with contextlib.suppress(Exception):
                self.execute("ROLLBACK")
            self._forget()
            committed.set_exception(exc)
            committed.exception()  # whoever waits (``durable``) is told; nobody waiting is no error of its own
        else:
            committed.set_result(None)
            self._commits += 1
            self.writes.committed()
        finally:
            _WRITE.release()
        if self._commits % self.CHECKPOINT_EVERY == 0 and not self._checkpointing:
            self._checkpoint_aside()

    def _checkpoint_aside(self) -> None:
        """(On the event loop.) A PASSIVE checkpoint on a thread and connection of its own: the loop never waits
        for its fsyncs, and one runs at a time."""
        path = self.execute("PRAGMA database_list").fetchone()[2]
        if not path:
            return  # in memory: no log
        if self._checkpointer is None:
            self._checkpointer = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="checkpoint")
        self._checkpointing = True

        def run() -> None:
            try:
                with contextlib.closing(sqlite3.connect(path, timeout=0.1)) as conn:
                    conn.execute(f"PRAGMA journal_size_limit={self.WAL_LIMIT}")
                    conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
            except sqlite3.Error as exc:
                log.info("a checkpoint was put off: %s", exc)
            finally:
                self._checkpointing = False

        self._checkpointer.submit(run)

    async def durable(self) -> None:
        """Return once everything written so far is committed (raise if that commit failed)."""
        if self._committed is not None:
            await asyncio.shield(self._committed)

    def close(self) -> None:
        self.commit()
        if self._checkpointer is not None:
            self._checkpointer.shutdown(wait=True)
        super().close()
