"""Crash safety with a real process: scripted games in a subprocess, SIGKILLed at random moments and restarted.

Two tests. The first kills the service itself, the second kills ``moderator serve`` while its webhooks are played
over HTTP.

The first: ``tests/crash_driver.py`` plays several scripted 7-player tables (every seat a human whose decisions are a
seeded pure function of the prompts delivered to it) through the real ``Service`` on a database file, and
journals every delivered message (fsync'd before the outbox marks it sent). This test runs it once without
crashes for the reference, then again on a fresh database while a seeded killer sends 5-10 ``SIGKILL``s at
random moments (a random point of progress plus a random delay, or a random moment of start-up and resume),
restarting the driver after every kill until it reports ``DONE``. Then:

* every table finished with the reference's winner, reason and action list, and rebuilds by replay;
* the action and event logs of every game are numbered 0..n-1 with no gap or duplicate;
* the outbox holds exactly the reference's messages (no input was applied twice or lost), all sent;
* every message of the reference reached its address at least once, and no address received a message the
  reference did not send to it. The outbox is at-least-once: a kill between delivery and its record
  (``Sender.flush``) delivers a message twice; those duplicates are counted and printed (run with ``-s``).

The second: ``crash_driver.py --serve`` runs ``moderator serve``'s app under uvicorn with the fake Bot API and the
fake Twilio, which journal every message they accept; ``HttpPlayers`` plays scripted 7-player tables, Telegram,
SMS and browser seats at each, through ``POST /telegram`` (messages and button presses), ``POST /sms`` and the
browser's join form and background taps (``POST /play/<table>`` with ``X-Send``), while a seeded killer SIGKILLs the
server at random moments and starts it again; a request left unanswered is sent again (the same update, the same
MessageSid, a tap with the same nonce, as seat.js does). Against a run without kills: the same winner, reason and
action list for every table, every input answered 200 in the database, the same outbox, all of it sent,
every line of every message that reached a phone or chat in the reference reaches it again, nothing else, no text
reaches a phone twice (Twilio is asked first), and no more Telegram messages are sent again, marked as a repeat,
than there were kills.

Environment: ``MODERATOR_CRASH_ROUNDS`` (default 1) runs that many rounds, each with its own seed, tables and
kill schedule (e.g. ``MODERATOR_CRASH_ROUNDS=20 python -m pytest tests/test_crash.py -s`` for a long run);
``MODERATOR_CRASH_TABLES`` (default 4) sets the number of tables per round. One round takes about 10 s.
``MODERATOR_CRASH_HTTP_TABLES`` (default 1) and ``MODERATOR_CRASH_HTTP_KILLS`` (default 3) size the HTTP test;
one round of it takes about 12 s. The README gives the long run.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from moderator.catalog import DEFAULT_THEME, Catalog
from moderator.channels import REPEAT_MESSAGE
from moderator.service import Service
from moderator.store import Store
from tests.crash_driver import CHANNEL, PLAYERS, HttpPlayers, address, deliveries, play_while_killed, read_journal

DRIVER = Path(__file__).resolve().parent / "crash_driver.py"
ROUNDS = int(os.environ.get("MODERATOR_CRASH_ROUNDS", "1"))
TABLES = int(os.environ.get("MODERATOR_CRASH_TABLES", "4"))
RUN_TIMEOUT = 120.0

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")


@dataclass
class Outcome:
    """What a finished run left behind, with run-specific ids (table ids, join codes) normalised away."""

    results: dict[int, tuple[str, str, list[dict[str, Any]]]]
    """table -> (winner, reason, actions)"""
    outbox: Counter[tuple[str, str]]
    """(address, message) of every outbox row"""
    delivered: dict[str, Counter[str]]
    """address -> messages delivered there (journal), with multiplicity"""
    journal_lines: int


def _driver(db: Path, seed: int) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(DRIVER), str(db), str(seed), "--tables", str(TABLES)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )


def _finish(proc: subprocess.Popen[str], timeout: float) -> str:
    """Wait for a driver to end on its own; its stdout, which must say DONE. A driver that hangs is killed."""
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        raise AssertionError(f"driver still running after {timeout:.0f} s:\n{out}\n{err}") from None
    finally:
        if proc.poll() is None:  # interrupted: leave no driver behind
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0 and "DONE" in out, f"driver failed (exit {proc.returncode}):\n{out}\n{err}"
    return out


# After a restart the votes of one election may come in another order, so another voter's vote is the last one
# (its echo says so, and carries the decision step the last vote opened).
def _order_free(body: dict[str, Any]) -> dict[str, Any]:
    """A vote's echo without what depends on the order of the votes (whether it was the last one)."""
    if body.get("message_id") in ("vote-recorded", "vote-recorded-last"):
        body = {**body, "message_id": "vote-recorded", "text": body["text"].rsplit(". ", 1)[0], "decision": None}
    return body


def _normalise(body: dict[str, Any], codes: set[str]) -> str:
    """A message as comparable text: the table id and the join code differ from run to run, and a vote's echo
    may or may not be the last one."""
    body = _order_free(dict(body))
    if "table" in body:
        body["table"] = "<table>"
    if "join_code" in body:
        codes.add(body["join_code"])
        body["text"] = body["text"].replace(body["join_code"], "<code>")
        body["join_code"] = "<code>"
    return json.dumps(body, sort_keys=True, ensure_ascii=False)


def _outcome(db: Path) -> Outcome:
    """Read a finished run from its database (rebuilding every game by replay) and its journal."""
    store = Store(db)
    try:
        service = Service(store, drive_computers=False)
        results = {}
        for table in range(TABLES):
            rows = store.tables_of(CHANNEL, address(table, 0))
            assert len(rows) == 1, f"table {table}: {len(rows)} rows"
            row = rows[0]
            assert row.status == "over", f"table {table} is {row.status}"
            # No gap, no duplicate: the logs are numbered 0..n-1.
            for log in ("actions", "events"):
                numbers = [r[0] for r in store.execute(
                    f"SELECT n FROM {log} WHERE table_id = ? AND game = ? ORDER BY n", (row.id, row.game))]
                assert numbers == list(range(len(numbers))), f"table {table}: {log} numbered {numbers}"
            assert store.execute("SELECT count(*) FROM actions WHERE table_id = ? AND game != ?",
                                 (row.id, row.game)).fetchone()[0] == 0
            game = service.table(row.id)  # a fresh service: the game is rebuilt from its stored actions
            assert game is not None and game.state is not None
            assert game.state.winner is not None and game.state.win_reason is not None
            results[table] = (game.state.winner.value, game.state.win_reason.value, store.actions(row.id, row.game))
        statuses = dict(store.execute("SELECT status, count(*) FROM outbox GROUP BY status").fetchall())
        assert set(statuses) == {"sent"}, f"outbox not fully delivered: {statuses}"
        codes: set[str] = set()
        outbox: Counter[tuple[str, str]] = Counter(
            (addr, _normalise({**json.loads(body), "message_id": mid}, codes))
            for addr, mid, body in store.execute("SELECT address, message_id, body FROM outbox ORDER BY id")
        )
    finally:
        store.close()
    delivered: dict[str, Counter[str]] = {}
    journal = read_journal(db.with_name(db.name + ".journal"))
    for entry in journal:
        delivered.setdefault(entry["address"], Counter())[_normalise(entry["body"], codes)] += 1
    return Outcome(results, outbox, delivered, len(journal))


def _crash_run(db: Path, seed: int, journal_bytes: int, restart_seconds: float) -> tuple[int, int]:
    """Run the driver to completion while killing it at seeded random moments; (kills, runs).

    A moment is a seeded point of progress (a size the journal reaches: machine speed does not matter) plus a
    seeded random delay of up to 50 ms; when the journal is past the point already, the kill lands at a random
    moment of start-up and resume instead.
    """
    rng = random.Random(f"crash-kills/{seed}")
    planned = rng.randint(5, 10)
    points = sorted(rng.uniform(0, journal_bytes) for _ in range(planned))
    journal = db.with_name(db.name + ".journal")
    kills = runs = 0
    while True:
        runs += 1
        proc = _driver(db, seed)
        try:
            if kills < planned:
                point = points[kills]
                if journal.exists() and journal.stat().st_size >= point:
                    delay = rng.uniform(0.0, restart_seconds)
                else:
                    delay = rng.uniform(0.0, 0.05)
                    deadline = time.monotonic() + RUN_TIMEOUT
                    while proc.poll() is None and time.monotonic() < deadline:
                        if journal.exists() and journal.stat().st_size >= point:
                            break
                        time.sleep(0.002)
                try:
                    proc.wait(timeout=delay)
                except subprocess.TimeoutExpired:
                    proc.send_signal(signal.SIGKILL)
                    proc.communicate()
                    kills += 1
                    continue
            _finish(proc, RUN_TIMEOUT)
            return kills, runs
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()


def _votes_unordered(actions: list[Any]) -> list[Any]:
    """The actions with each election's run of votes sorted (their order does not matter to the game)."""
    out: list[Any] = []
    run: list[Any] = []
    for action in [*actions, None]:
        if isinstance(action, dict) and action.get("action") == "vote":
            run.append(action)
            continue
        out.extend(sorted(run, key=repr))
        run = []
        if action is not None:
            out.append(action)
    return out


@pytest.mark.parametrize("round_", range(ROUNDS))
def test_killed_and_restarted_games_finish_the_same(tmp_path: Path, round_: int) -> None:
    seed = 1000 + round_
    started = time.perf_counter()

    reference_db = tmp_path / "reference.db"
    _finish(_driver(reference_db, seed), RUN_TIMEOUT)
    restart = time.perf_counter()
    _finish(_driver(reference_db, seed), RUN_TIMEOUT)  # a restart with nothing left to do changes nothing
    restart_seconds = time.perf_counter() - restart
    reference = _outcome(reference_db)
    assert reference.journal_lines == sum(reference.outbox.values()), "no crash, so each message exactly once"

    crashed_db = tmp_path / "crashed.db"
    journal_bytes = reference_db.with_name(reference_db.name + ".journal").stat().st_size
    kills, runs = _crash_run(crashed_db, seed, journal_bytes, restart_seconds)
    crashed = _outcome(crashed_db)

    for table, (winner, reason, actions) in reference.results.items():
        got = crashed.results[table]
        assert (got[0], got[1]) == (winner, reason), f"table {table}: {got[:2]} != {(winner, reason)}"
        # A prompt sent again after a restart may be answered before another voter's: the votes of one election
        # may come in another order (which changes nothing); every other action keeps its place.
        assert _votes_unordered(got[2]) == _votes_unordered(actions), f"table {table}: the actions differ"
    assert crashed.outbox == reference.outbox, "the outbox differs: an input was lost or applied twice"

    addresses = {address(t, s) for t in range(TABLES) for s in range(PLAYERS)}
    assert set(crashed.delivered) <= addresses
    duplicates = 0
    for to, messages in crashed.delivered.items():
        expected = reference.delivered.get(to, Counter())
        strangers = set(messages) - set(expected)
        assert not strangers, f"{to} received messages not meant for it: {sorted(strangers)[:3]}"
        duplicates += sum((messages - expected).values())
    for to, expected in reference.delivered.items():
        lost = expected - crashed.delivered.get(to, Counter())
        assert not lost, f"{to} never received {sum(lost.values())} message(s): {sorted(lost)[:3]}"
    assert duplicates == crashed.journal_lines - reference.journal_lines

    actions_played = sum(len(a) for _, _, a in reference.results.values())
    print(
        f"\ncrash round {round_} (seed {seed}): {TABLES} tables, {actions_played} actions, {reference.journal_lines} "
        f"messages; {kills} kills over {runs} runs; {duplicates} duplicate deliveries, 0 lost; "
        f"{time.perf_counter() - started:.1f} s"
    )


# --- over HTTP: ``moderator serve`` killed while Telegram and SMS seats play through its webhooks ---------------

HTTP_TABLES = int(os.environ.get("MODERATOR_CRASH_HTTP_TABLES", "1"))
HTTP_KILLS = int(os.environ.get("MODERATOR_CRASH_HTTP_KILLS", "3"))


def _kills(seed: int, kills: int) -> list[tuple[int, float]]:
    """The seeded kill schedule: each kill a random moment after a random request of the game's first fifty (every
    game sends more), so every kill lands however fast or slow the machine plays."""
    rng = random.Random(f"http-kills/{seed}")
    return [(request, rng.uniform(0.0, 0.3)) for request in sorted(rng.sample(range(3, 50), kills))]


def _http_outcome(db: Path, players: HttpPlayers) -> dict[str, Any]:
    """A finished HTTP run: each table's (winner, reason, actions), the outbox, and what reached each address."""
    store = Store(db)
    try:
        service = Service(store, drive_computers=False)
        # The reference and the killed run listen on ports of their own (a text may carry the table screen's link).
        names: dict[str, str] = {f"127.0.0.1:{players.port}": "<server>"}
        results = {}
        for table in range(HTTP_TABLES):
            found = players.table_row(table)
            row = store.table(found[0]) if found is not None else None
            assert row is not None and row.status == "over", f"table {table} did not finish"
            names[row.id] = f"<table {table}>"
            for (code,) in store.execute("SELECT DISTINCT json_extract(body, '$.join_code') FROM outbox"
                                         " WHERE table_id = ? AND json_extract(body, '$.join_code') IS NOT NULL",
                                         (row.id,)):
                names[code] = f"<code {table}>"
            for log in ("actions", "events"):
                numbers = [r[0] for r in store.execute(
                    f"SELECT n FROM {log} WHERE table_id = ? AND game = ? ORDER BY n", (row.id, row.game))]
                assert numbers == list(range(len(numbers))), f"table {table}: {log} numbered {numbers}"
            game = service.table(row.id)  # a fresh service: the game is rebuilt from its stored actions
            assert game is not None and game.state is not None and game.state.winner is not None
            assert game.state.win_reason is not None
            results[table] = (game.state.winner.value, game.state.win_reason.value, store.actions(row.id, row.game))
        statuses = dict(store.execute("SELECT status, count(*) FROM outbox GROUP BY status").fetchall())
        assert set(statuses) == {"sent"}, f"outbox not fully delivered: {statuses}"

        def same(text: str) -> str:  # table ids and join codes differ from run to run
            for name, placeholder in names.items():
                text = text.replace(name, placeholder)
            return text

        # After a crash whoever owes a decision gets a reminder and its prompt once more (an input that hit the
        # dead server may be lost): each such prompt repeats one the address had; nothing else is new.
        outbox: Counter[str] = Counter()
        prompts: set[tuple[str, str]] = set()
        reminded: set[str] = set()
        reminders: set[str] = set()
        repeats = 0
        for channel, address_, message_id, body in store.execute(
                "SELECT channel, address, message_id, body FROM outbox ORDER BY id"):
            to = f"{channel}:{address_}"
            if message_id == "reminder-restart":
                reminded.add(to)
                reminders.update(same(json.loads(body)["text"]).splitlines())
                continue
            text = same(json.dumps(_order_free({**json.loads(body), "message_id": message_id}), sort_keys=True))
            if to in reminded:
                reminded.discard(to)
                assert (to, text) in prompts, f"{to} was reminded of a prompt it never had: {text[:200]}"
                repeats += 1
                continue
            if json.loads(body).get("kind") == "prompt":
                prompts.add((to, text))
            outbox[f"{to} {text}"] += 1
        handled = {(channel, external_id) for channel, external_id
                   in store.execute("SELECT channel, external_id FROM inbound")}
    finally:
        store.close()
    # What reached each phone or chat, line by line: Telegram edits a message in place (a vote's counter is
    # appended to its nomination) by what the process remembers, which a kill forgets, so after a restart the
    # same line may come in a message of its own. Each message is one or more whole lines.
    # A Telegram message sent again after a kill starts with the repeat marker (counted below, at most one a kill).
    journal = read_journal(db.with_name(db.name + ".journal"))
    marker = Catalog.load(DEFAULT_THEME, "en").text(REPEAT_MESSAGE)
    delivered: Counter[tuple[str, str]] = Counter(
        (entry["address"], line) for entry in journal for line in same(entry["text"]).splitlines()
        if line and line not in reminders and line != marker)
    texts, _, marked = deliveries([{**e, "text": same(e["text"])} for e in journal], reminders, marker)
    return {"results": results, "outbox": outbox, "handled": handled, "delivered": delivered,
            "sends": len(journal), "repeats": repeats, "texts": texts, "marked": marked}


@pytest.mark.parametrize("round_", range(ROUNDS))
def test_a_killed_server_plays_telegram_sms_and_browser_games_over_http_to_the_same_end(
        tmp_path: Path, round_: int) -> None:
    """The issue's crash test: ``moderator serve`` in a child process, SIGKILLed at random moments while scripted
    7-player tables (Telegram, SMS and browser seats at each) play through its webhooks and pages over loopback
    HTTP, started again each time. Against a run without kills: every game ends the same (winner, reason, every
    action), no input the server answered is lost, the outbox is the same (nothing applied twice), and every message
    reached its phone or chat (a kill between delivering and recording it may deliver it twice; nothing new appears)."""
    seed = 2000 + round_
    started = time.perf_counter()
    reference_players, _, _ = play_while_killed(tmp_path / "reference.db", seed, HTTP_TABLES, [])
    reference = _http_outcome(tmp_path / "reference.db", reference_players)
    players, _, up = play_while_killed(tmp_path / "crashed.db", seed, HTTP_TABLES, _kills(seed, HTTP_KILLS))
    kills = len(up)
    crashed = _http_outcome(tmp_path / "crashed.db", players)

    assert kills == HTTP_KILLS
    for table, (winner, reason, actions) in reference["results"].items():
        got = crashed["results"][table]
        assert (got[0], got[1]) == (winner, reason), f"table {table}: {got[:2]} != {(winner, reason)}"
        # A prompt sent again after a restart may be answered before another voter's: the votes of one election
        # may come in another order (which changes nothing); every other action keeps its place.
        assert _votes_unordered(got[2]) == _votes_unordered(actions), f"table {table}: the actions differ"
    assert set(players.accepted) <= crashed["handled"], "an input the server answered is not in the database"
    assert crashed["outbox"] == reference["outbox"], "the outbox differs: an input was lost or applied twice"
    lost = reference["delivered"].keys() - crashed["delivered"].keys()
    assert not lost, f"never delivered: {sorted(lost)[:3]}"
    strangers = crashed["delivered"].keys() - reference["delivered"].keys()
    assert not strangers, f"delivered but not in the reference: {sorted(strangers)[:3]}"
    # Twilio is asked before a text is sent again: none reaches a phone twice. Telegram cannot be asked: a message
    # sent again says it is a repeat, at most one per kill.
    twice = crashed["texts"] - reference["texts"]
    assert not twice, f"texts delivered twice: {sorted(twice)[:3]}"
    assert crashed["marked"] <= kills, f"{crashed['marked']} Telegram repeats after {kills} kills"
    actions = sum(len(a) for _, _, a in reference["results"].values())
    browser = players.retried["join"] + players.retried["play"]
    print(f"\nhttp crash round {round_} (seed {seed}): {HTTP_TABLES} tables, {actions} actions, "
          f"{reference['sends']} messages sent or edited ({crashed['sends']} with kills); {kills} kills, "
          f"{players.retries} requests sent again ({browser} by browsers), {crashed['repeats']} prompts repeated "
          f"after a restart; 0 texts twice, {crashed['marked']} Telegram messages sent again marked as a repeat; "
          f"0 lost; "
          f"{time.perf_counter() - started:.1f} s")
