"""``moderator serve`` killed (SIGKILL) at random moments while Telegram, SMS and browser seats play: what was lost,
doubled or delivered twice, and how soon a restarted server prompts again.

Usage::

    python benchmarks/crash.py [--kills 10] [--tables 1] [--seed 3000] [--gap 0.2 2.0] [--keep DIR]

It plays ``--tables`` scripted 7-player tables (``tests/crash_driver.py``'s ``HttpPlayers``: Telegram, SMS and
browser seats at every table, the fake Bot API and the fake Twilio journaling every message they accept) through
the real server in a child process, once without kills for the reference and once while a seeded killer SIGKILLs
the server ``--kills`` times, at random moments ``--gap`` seconds apart, starting it again each time. A request the
server did not answer is sent again (the same update or MessageSid, a tap with its nonce). It prints, against the
reference:

- inputs lost: inputs the server answered that are not in the database, and actions of the reference missing;
- inputs doubled: actions applied more often than in the reference;
- messages delivered twice: SMS texts that reached a phone more often than in the reference, and Telegram messages
  sent again, marked as a repeat ("Again, after a restart: ...") or not (an unmarked one counts its lines that
  came more often than in the reference); a restart's reminder and the prompt it repeats are not counted, and a
  vote counter the reference edited in place, which after a restart comes as a message of its own (the process
  forgot which message to edit), is counted apart;
- the time from each restart (the kill) to the first reminder with its prompt handed to a channel, and the time the
  server took to answer ``/healthz`` again.

Targets (issue 14): nothing lost, nothing doubled, no SMS twice, at most one marked repeat per kill on Telegram.
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from moderator.catalog import DEFAULT_THEME, Catalog  # noqa: E402
from moderator.channels import REPEAT_MESSAGE  # noqa: E402
from tests.crash_driver import HttpPlayers, deliveries, play_while_killed, read_journal, wall_time  # noqa: E402


def read(db: Path, players: HttpPlayers) -> dict[str, Any]:
    """What a finished run left: actions, inputs stored, reminders, and what reached each phone or chat."""
    import sqlite3

    conn = sqlite3.connect(db)
    try:
        # The reference and the killed run listen on ports of their own (a text may carry the table screen's link).
        names: dict[str, str] = {f"127.0.0.1:{players.port}": "<server>"}
        actions: Counter[str] = Counter()
        finished = 0
        for table in range(players.tables):
            found = players.table_row(table)
            if found is None:
                continue
            table_id, code, status = found
            finished += status == "over"
            names[table_id] = f"<table {table}>"
            for (join_code,) in conn.execute(
                    "SELECT DISTINCT json_extract(body, '$.join_code') FROM outbox WHERE table_id = ?"
                    " AND json_extract(body, '$.join_code') IS NOT NULL", (table_id,)):
                names[join_code] = f"<code {table}>"
            if code:
                names[code] = f"<code {table}>"
            for (body,) in conn.execute("SELECT action FROM actions WHERE table_id = ?", (table_id,)):
                actions[f"{table} {body}"] += 1
        handled = set(conn.execute("SELECT channel, external_id FROM inbound").fetchall())
        reminders = conn.execute("SELECT created, sent, body FROM outbox WHERE message_id = 'reminder-restart'"
                                 " ORDER BY id").fetchall()
        pending = conn.execute("SELECT count(*) FROM outbox WHERE status != 'sent'").fetchone()[0]
    finally:
        conn.close()

    def same(text: str) -> str:  # table ids and join codes differ from run to run
        for name, placeholder in names.items():
            text = text.replace(name, placeholder)
        return text

    reminder_lines = {line for _, _, body in reminders for line in same(json.loads(body)["text"]).splitlines()}
    return {"actions": actions, "handled": handled, "finished": finished, "pending": pending,
            "reminders": [(wall_time(c), wall_time(s) if s is not None else None) for c, s, _ in reminders],
            "reminder_lines": reminder_lines,
            "journal": [{**e, "text": same(e["text"])} for e in read_journal(db.with_name(db.name + ".journal"))]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kills", type=int, default=10)
    parser.add_argument("--tables", type=int, default=1)
    parser.add_argument("--seed", type=int, default=3000)
    parser.add_argument("--gap", type=float, nargs=2, default=(0.2, 2.0), metavar=("MIN", "MAX"),
                        help="seconds between two kills, at random between MIN and MAX")
    parser.add_argument("--keep", type=Path, default=None,
                        help="a folder to keep the databases, journals and server logs in")
    args = parser.parse_args()
    marker = Catalog.load(DEFAULT_THEME, "en").text(REPEAT_MESSAGE)
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        started = time.perf_counter()
        ref_players, _, _ = play_while_killed(folder / "reference.db", args.seed, args.tables, [])
        reference = read(folder / "reference.db", ref_players)
        rng = random.Random(f"bench-kills/{args.seed}")
        # Each kill ``--gap`` seconds after the last one (or the start), whatever the players have sent by then.
        kills = [(0, rng.uniform(*args.gap)) for _ in range(args.kills)]
        players, server, up = play_while_killed(folder / "crashed.db", args.seed, args.tables, kills)
        crashed = read(folder / "crashed.db", players)
        wall = time.perf_counter() - started

    unstored = len(set(players.accepted) - crashed["handled"])
    missing = sum((reference["actions"] - crashed["actions"]).values())
    doubled = sum((crashed["actions"] - reference["actions"]).values())
    ref_texts, ref_lines, _ = deliveries(reference["journal"], reference["reminder_lines"], marker)
    texts, lines, repeats = deliveries(crashed["journal"], crashed["reminder_lines"], marker)
    sms_twice = sum((texts - ref_texts).values())
    sms_missing = sum((ref_texts - texts).values())
    # A line the reference showed by editing a message in place (a vote counter) comes as a message of its own
    # after a restart (the edit's target is forgotten): counted apart from a message sent again.
    edited = {(e["address"], line) for e in reference["journal"] if e.get("api") == "edit"
              for line in e["text"].splitlines()}
    extra = lines - ref_lines
    anew = sum(n for key, n in extra.items() if key in edited)
    unmarked = sum(extra.values()) - anew
    # The first reminder handed to a channel after each restart: its delay from the kill.
    delays: list[float] = []
    restarts = [*server.restarts, float("inf")]
    for kill, following in itertools.pairwise(restarts):
        sent = [s for c, s in crashed["reminders"] if s is not None and kill <= c < following]
        if sent:
            delays.append(min(sent) - kill)

    def figures(values: list[float]) -> str:
        if not values:
            return "none"
        return (f"median {statistics.median(values) * 1000:.0f} ms, max {max(values) * 1000:.0f} ms "
                f"({len(values)} restarts)")

    print(f"{args.tables} table(s) of Telegram, SMS and browser seats; {len(server.restarts)} kills at random moments "
          f"{args.gap[0]:g}-{args.gap[1]:g} s apart; seed {args.seed}; {wall:.0f} s")
    print(f"games finished: {crashed['finished']} of {args.tables} (reference {reference['finished']}); "
          f"messages left undelivered: {crashed['pending']}")
    print(f"inputs lost: {unstored} answered but not stored, {missing} actions of the reference missing; "
          f"inputs doubled: {doubled}")
    print(f"requests sent again after no answer: {players.retries} ({dict(players.retried)})")
    print(f"messages delivered twice: SMS {sms_twice} ({sms_missing} of the reference's texts never arrived); "
          f"Telegram {repeats} sent again marked as a repeat ({repeats / max(len(server.restarts), 1):.1f} per "
          f"kill), {unmarked} lines sent again unmarked; {anew} vote counters sent anew instead of edited in place")
    print(f"restart to the first reminder and prompt handed to a channel: {figures(delays)} "
          f"of {len(server.restarts)} kills (a kill before the game or after it leaves nobody to remind)")
    print(f"restart to /healthz answering: {figures(up)}")
    bad = unstored or missing or doubled or sms_twice or crashed["pending"] or crashed["finished"] != args.tables
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
