"""Crash-test driver: scripted 7-player tables played through the real service, restartable at any point.

Usage: python tests/crash_driver.py DB_FILE SEED [--tables N] [--journal FILE]

Every seat is a human on the ``crash`` channel (address ``t{table}-p{seat}``). Each decision is a seeded
choice among the options of the prompt the seat was delivered, so the whole script is a pure function of
what was delivered. Inputs carry stable external ids derived from (table, seat, decision, option): an input
resent after a crash is deduplicated by the service.

The outbox is delivered through a channel that appends every message to a journal (one JSON line each,
fsync'd before the service marks it sent): after a crash a message may appear twice, never zero times.

The driver can be killed at any moment (``tests/test_crash.py`` does so with SIGKILL) and started again with
the same arguments: it reads what is already decided from the database (tables, the inputs it has handled)
and what was delivered from the journal, resends the answers still owed, and continues. When every table's
game is over and the outbox is empty it prints ``DONE`` and exits 0; a table that stops owing anything
before its game ends is a bug (exit 2).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from moderator.commands import Choose, Inbound, Join, OpenTable, Start  # noqa: E402
from moderator.service import Sender, Service  # noqa: E402
from moderator.store import Store  # noqa: E402

CHANNEL = "crash"
PLAYERS = 7


def address(table: int, seat: int) -> str:
    """The private address of a seat of scripted table ``table``."""
    return f"t{table}-p{seat}"


def parse_address(text: str) -> tuple[int, int]:
    """(table, seat) of a scripted address."""
    table, seat = text[1:].split("-p")
    return int(table), int(seat)


def game_seed(seed: int, table: int) -> int:
    """The fixed engine seed of scripted table ``table`` in run ``seed``."""
    digest = hashlib.sha256(f"crash/{seed}/{table}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def answer(seed: int, to: str, body: dict[str, Any]) -> tuple[str, str, int] | None:
    """The scripted reply to a delivered message: (token, external id, decision), or None if it asks nothing."""
    choices = body.get("choices") or []
    decision = body.get("decision")
    if not choices or decision is None:
        return None
    table, seat = parse_address(to)
    rng = random.Random(f"{seed}/{table}/{seat}/{decision}")
    token = choices[rng.randrange(len(choices))]["token"]
    return token, f"t{table}/p{seat}/d{decision}/{token}", int(decision)


def read_journal(path: Path) -> list[dict[str, Any]]:
    """Every complete line of the journal; a line cut short by a kill is dropped (its message is redelivered)."""
    if not path.exists():
        return []
    data = path.read_bytes()
    end = data.rfind(b"\n") + 1
    if end != len(data):
        with open(path, "r+b") as f:
            f.truncate(end)
            f.flush()
            os.fsync(f.fileno())
    return [json.loads(line) for line in data[:end].splitlines()]


class JournalChannel:
    """A channel that appends every delivered message to the journal, durably, before it counts as sent."""

    def __init__(self, path: Path) -> None:
        self.file = open(path, "ab")  # noqa: SIM115 - open for the driver's lifetime
        self.fresh: list[dict[str, Any]] = []

    def send(self, to: str, body: dict[str, Any]) -> None:
        """Journal one message (fsync'd), and remember it for the driver to act on."""
        entry = {"address": to, "body": body}
        self.file.write((json.dumps(entry, ensure_ascii=False, sort_keys=True) + "\n").encode())
        self.file.flush()
        os.fsync(self.file.fileno())
        self.fresh.append(entry)


class Driver:
    """Plays the scripted tables to their end, from whatever point the database and journal are at."""

    def __init__(self, db: Path, seed: int, tables: int, journal: Path) -> None:
        self.seed = seed
        self.tables = tables
        self.next_seed = 0
        self.store = Store(db)
        self.service = Service(self.store, seed=lambda: self.next_seed)
        self.service.resume_all()
        self.delivered = read_journal(journal)
        self.channel = JournalChannel(journal)
        self.sender = Sender(self.store, {CHANNEL: self.channel})
        rows = self.store.execute("SELECT external_id FROM inbound WHERE channel = ?", (CHANNEL,)).fetchall()
        self.handled = {r[0] for r in rows}
        self.resent = 0

    def send(self, to: str, command: Any, external_id: str) -> None:
        self.service.handle(Inbound(CHANNEL, to, command, external_id=external_id, language="en"))
        self.handled.add(external_id)

    def table_row(self, table: int) -> Any:
        rows = self.store.tables_of(CHANNEL, address(table, 0))
        return rows[0] if rows else None

    def set_up(self, table: int) -> None:
        """Open, fill and start a table, skipping whatever an earlier run already did."""
        host = address(table, 0)
        self.send(host, OpenTable("P0"), f"t{table}/open")
        row = self.table_row(table)
        assert row is not None, f"table {table} was not opened"
        if row.status == "lobby":
            for seat in range(1, PLAYERS):
                self.send(address(table, seat), Join(row.code, f"P{seat}"), f"t{table}/join/{seat}")
        self.next_seed = game_seed(self.seed, table)
        self.send(host, Start(), f"t{table}/start")

    def act_on(self, entry: dict[str, Any], *, resend: bool = False) -> None:
        """Answer a delivered prompt, unless the database says it was answered (``resend``: answer anyway)."""
        reply = answer(self.seed, entry["address"], entry["body"])
        if reply is None:
            return
        token, external_id, decision = reply
        if external_id in self.handled and not resend:
            return
        if resend:
            self.resent += 1
        self.send(entry["address"], Choose(token, decision), external_id)

    def run(self) -> int:
        """Play every table to its end; 0 when done, 2 if a game stopped owing anything before its end."""
        for table in range(self.tables):
            self.set_up(table)
        # Answers owed for prompts delivered before a crash, in delivery order. The last answered prompt is
        # sent once more, as a transport redelivering an update would: the service must drop it.
        last_answered = None
        for entry in self.delivered:
            reply = answer(self.seed, entry["address"], entry["body"])
            if reply is not None and reply[1] in self.handled:
                last_answered = entry
            self.act_on(entry)
        if last_answered is not None:
            self.act_on(last_answered, resend=True)
        while True:
            self.channel.fresh.clear()
            if not self.sender.deliver_due(limit=50):
                break
            for entry in list(self.channel.fresh):
                self.act_on(entry)
        unfinished = [t for t in range(self.tables) if self.table_row(t).status != "over"]
        if unfinished:
            print(f"STUCK tables {unfinished}", flush=True)
            return 2
        print(f"DONE resent={self.resent}", flush=True)
        return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("db", type=Path)
    parser.add_argument("seed", type=int)
    parser.add_argument("--tables", type=int, default=4)
    parser.add_argument("--journal", type=Path, default=None, help="default: DB_FILE with .journal appended")
    args = parser.parse_args()
    journal = args.journal or args.db.with_name(args.db.name + ".journal")
    return Driver(args.db, args.seed, args.tables, journal).run()


if __name__ == "__main__":
    sys.exit(main())
