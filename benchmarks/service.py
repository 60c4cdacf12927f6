"""Service speed: game decisions per second through ``Service.handle``, durable commits, 1,000 tables open.

Usage: python benchmarks/service.py [--tables 1000] [--actions 20000] [--seed 1] [--profile [--sort tottime]]

A temporary database file in WAL mode with ``synchronous=FULL`` (as in production: a committed action survives
a power cut). The benchmark opens ``--tables`` tables with seven human seats each (open, six joins, start: not
timed), then times ``Service.handle`` for a stream of real decisions spread round-robin over the tables: each is
a button press (``Choose`` with the action's token and the prompt's decision, a fresh external id) by a seat
the game waits for, picked at random among its legal actions. Each call is one transaction holding the
dedupe row, the action, its events and its outbox messages. The outbox is not delivered (delivery is the
``Sender``'s separate work). Printed: actions per second, p50 and p99 time per action, outbox rows per action,
CPU per action, and a yardstick: one-row commits per second of SQLite alone on the same disk (a shared or busy
machine is slower at both; compare the figures with it).

Target (issue): at least 1,500 actions per second and p99 under 5 ms on one core of a 2-core CI machine.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import os
import pstats
import random
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from moderator.commands import Choose, Inbound, Join, OpenTable, Start
from moderator.engine import Phase, awaiting, view_for
from moderator.moves import token as action_token
from moderator.service import Service
from moderator.store import Store

CHANNEL = "bench"
PLAYERS = 7


def address(table: int, seat: int) -> str:
    """The private address of a benchmark seat."""
    return f"t{table}-p{seat}"


def open_tables(service: Service, tables: int) -> list[str]:
    """Open, fill and start ``tables`` tables of seven humans; their ids."""
    ids = []
    for t in range(tables):
        host = address(t, 0)
        service.handle(Inbound(CHANNEL, host, OpenTable("P0"), external_id=f"t{t}/open"))
        row = service.store.tables_of(CHANNEL, host)[0]
        for seat in range(1, PLAYERS):
            service.handle(Inbound(CHANNEL, address(t, seat), Join(row.code or "", f"P{seat}"),
                                   external_id=f"t{t}/join/{seat}"))
        service.handle(Inbound(CHANNEL, host, Start(), external_id=f"t{t}/start"))
        ids.append(row.id)
    return ids


def sqlite_commits_per_second(path: Path, commits: int = 2000) -> float:
    """One-row transactions per second of SQLite alone on this disk (WAL, synchronous=FULL): the yardstick."""
    conn = sqlite3.connect(str(path), isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=FULL")
    conn.execute("CREATE TABLE t (x INTEGER)")
    start = time.perf_counter()
    for i in range(commits):
        conn.execute("BEGIN")
        conn.execute("INSERT INTO t VALUES (?)", (i,))
        conn.execute("COMMIT")
    rate = commits / (time.perf_counter() - start)
    conn.close()
    return rate


def outbox_rows(store: Store) -> int:
    return int(store.execute("SELECT count(*) FROM outbox").fetchone()[0])


def run(service: Service, ids: list[str], actions: int, seed: int) -> list[float]:
    """Time ``actions`` decisions spread over the tables; the time of each ``handle`` call, in seconds."""
    rng = random.Random(seed)
    times: list[float] = []
    clock = time.perf_counter
    n = 0
    while len(times) < actions:
        progressed = False
        for t, table_id in enumerate(ids):
            if len(times) >= actions:
                break
            table = service.table(table_id)
            assert table is not None and table.state is not None
            state = table.state
            if state.phase is Phase.GAME_OVER:
                continue
            seat = rng.choice(awaiting(state))
            action = rng.choice(view_for(state, seat).legal_actions)
            n += 1
            inbound = Inbound(CHANNEL, address(t, seat), Choose(action_token(action), table.row.decision_step),
                              external_id=f"a{n}")
            start = clock()
            service.handle(inbound)
            times.append(clock() - start)
            assert table.state.step == state.step + 1, "the decision was not applied"
            progressed = True
        if not progressed:
            raise RuntimeError(f"every game ended before {actions} actions: use more tables")
    return times


def percentile(sorted_times: list[float], p: float) -> float:
    return sorted_times[min(len(sorted_times) - 1, int(p / 100 * len(sorted_times)))]


def main() -> None:
    """Print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=1000)
    parser.add_argument("--actions", type=int, default=20000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--profile", action="store_true", help="print a cProfile of the timed part")
    parser.add_argument("--sort", default="cumulative", help="profile order (cumulative, tottime...)")
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # one core, as the target says
    with tempfile.TemporaryDirectory(prefix="moderator-bench-") as tmp:
        yardstick = sqlite_commits_per_second(Path(tmp) / "yardstick.db")
        store = Store(Path(tmp) / "bench.db")
        seeds = iter(range(1, 1 << 62))
        service = Service(store, seed=lambda: next(seeds))
        started = time.perf_counter()
        ids = open_tables(service, args.tables)
        setup = time.perf_counter() - started
        rows_before = outbox_rows(store)
        gc.collect()
        profiler = cProfile.Profile() if args.profile else None
        if profiler:
            profiler.enable()
        started, cpu = time.perf_counter(), time.process_time()
        times = run(service, ids, args.actions, args.seed)
        elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
        if profiler:
            profiler.disable()
        rows = outbox_rows(store) - rows_before
        store.close()
    times.sort()
    total = sum(times)
    print(f"python {sys.version.split()[0]}, one core, WAL + synchronous=FULL, {args.tables} tables of {PLAYERS} open"
          f" (set up in {setup:.1f} s)")
    print(f"{len(times):,} actions in {elapsed:.2f} s ({total:.2f} s inside Service.handle)")
    print(f"actions per second: {len(times) / total:,.0f}")
    print(f"p50 per action: {percentile(times, 50) * 1e3:.2f} ms   p99: {percentile(times, 99) * 1e3:.2f} ms"
          f"   max: {times[-1] * 1e3:.2f} ms")
    print(f"outbox rows per action: {rows / len(times):.2f}   CPU per action (choosing included): "
          f"{cpu / len(times) * 1e3:.2f} ms")
    print(f"yardstick: SQLite alone commits {yardstick:,.0f} one-row transactions per second on this disk")
    if profiler:
        pstats.Stats(profiler).sort_stats(args.sort).print_stats(40)


if __name__ == "__main__":
    main()
