"""Memory per open table: the Python heap one table cached in the process holds, its game under way.

Usage: python benchmarks/memory.py [--tables 200] [--decisions 40]

Opens ``--tables`` tables through ``Service.handle`` on a temporary database file (WAL, as in production), in
two line-ups: seven people (open, six joins, start), and a host with six computer players (each computer player
keeps its memory of the game). ``tracemalloc`` measures the heap the tables hold once opened and started, after
a garbage collection, and the process's resident size is read before and after (it includes SQLite's page
cache, shared by every table, and allocator slack). The seven-people tables then play ``--decisions`` random
decisions each on average (as ``benchmarks/service.py`` presses them; a game that ends stays cached, holding its
whole log) and are measured again. Printed: KiB of heap per table and the RSS growth per table. Delivery is not
run: queued messages wait in the database, not in memory.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import tempfile
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.service import CHANNEL, open_tables, run
from moderator.commands import AddComputers, Inbound, OpenTable, Start
from moderator.service import Service
from moderator.store import Store


def rss_kib() -> int:
    """This process's resident set size, KiB (Linux ``/proc``; 0 elsewhere)."""
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024
    except OSError:
        return 0


def with_computers(service: Service, tables: int) -> list[str]:
    """Open and start ``tables`` tables of a host and six computer players; their ids."""
    ids = []
    for t in range(tables):
        host = f"c{t}"
        service.handle(Inbound(CHANNEL, host, OpenTable("Host"), external_id=f"c{t}/open"))
        service.handle(Inbound(CHANNEL, host, AddComputers(6), external_id=f"c{t}/computers"))
        service.handle(Inbound(CHANNEL, host, Start(), external_id=f"c{t}/start"))
        ids.append(service.store.tables_of(CHANNEL, host)[0].id)
    return ids


def measure(line_up: str, tables: int, decisions: int = 0) -> tuple[float, float]:
    """(KiB of heap, KiB of RSS growth) per open table of this line-up, after ``decisions`` per table."""
    with tempfile.TemporaryDirectory(prefix="moderator-memory-") as tmp:
        store = Store(Path(tmp) / "memory.db")
        seeds = iter(range(1, 1 << 62))
        service = Service(store, seed=lambda: next(seeds))
        opener = open_tables if line_up == "people" else with_computers
        opener(service, 2)  # caches, catalogs and compiled statements: not the tables' own
        gc.collect()
        rss_before = rss_kib()
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        ids = opener(service, tables)
        if decisions:
            run(service, ids, decisions * tables, seed=1)
        gc.collect()
        after = tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
        rss_after = rss_kib()
        assert all(service.tables.cached(table_id) is not None for table_id in ids)
        store.close()
    return (after - before) / 1024 / tables, (rss_after - rss_before) / tables


def main() -> None:
    """Print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=200)
    parser.add_argument("--decisions", type=int, default=40, help="decisions per table for the last line")
    args = parser.parse_args()
    cases = (("people", "seven people, just started", 0),
             ("computers", "a host and six computer players, just started", 0),
             ("people", f"seven people, after {args.decisions} decisions each", args.decisions))
    for line_up, label, decisions in cases:
        heap, rss = measure(line_up, args.tables, decisions)
        print(f"{args.tables} open 7-seat tables, {label}: {heap:.1f} KiB of heap per table "
              f"(tracemalloc), RSS +{rss:.1f} KiB per table", flush=True)


if __name__ == "__main__":
    main()
