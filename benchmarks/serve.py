"""``moderator serve`` under load: many tables played at once by text message over real HTTP on loopback.

Usage::

    python benchmarks/serve.py [--tables 200] [--seconds 60] [--think 1.0]

It starts ``moderator serve``'s app under uvicorn in a child process (SMS on, Twilio replaced by the in-process
fake, a fresh database), then plays ``--tables`` tables at once through the signed ``POST /sms`` webhook: each
host opens a table, four players join, two computer players fill it, the host starts, and then the five humans
answer whatever they were last asked (a seeded pick of ``1``, ``2``, ``ja``, ``nein``, ``status``), each table
waiting ``--think`` seconds (at random, up to twice that) between two texts, as people at a table do. It prints
the actions per second, the p50 and p99 latency of the webhook, errors (any answer but 200, or none), games
finished and messages sent. Target: p99 under 50 ms with 200 tables on a 2-core machine.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.fake_twilio import ACCOUNT_SID, AUTH_TOKEN, OUR_NUMBER, FakeTwilio, incoming, signature  # noqa: E402

HUMANS = 5
ANSWERS = ("1", "1", "2", "ja", "nein", "status")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def server_env(db: Path, port: int) -> dict[str, str]:
    return {
        **os.environ,
        "MODERATOR_DB": str(db),
        "MODERATOR_HOST": "127.0.0.1",
        "MODERATOR_PORT": str(port),
        "MODERATOR_PUBLIC_URL": f"http://127.0.0.1:{port}",
        "TWILIO_ACCOUNT_SID": ACCOUNT_SID,
        "TWILIO_AUTH_TOKEN": AUTH_TOKEN,
        "TWILIO_FROM": OUR_NUMBER,
        "TELEGRAM_TOKEN": "",
        "PYTHONPATH": str(ROOT),
    }


def run_server() -> None:
    """(Child process.) The real app under uvicorn, Twilio's REST API replaced by the fake."""
    import uvicorn

    from moderator.serve import KEEP_ALIVE, Settings, create_app

    settings = Settings.load(cwd=Path(tempfile.gettempdir()))
    uvicorn.run(create_app(settings, twilio_http=FakeTwilio()), host=settings.host, port=settings.port,
                log_level="warning", timeout_keep_alive=KEEP_ALIVE)


@dataclass
class Result:
    latencies: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    started: int = 0
    accepted: list[str] = field(default_factory=list)
    """MessageSids the server answered 200."""


def phone(table: int, seat: int) -> str:
    return f"+1202555{1000 + table * HUMANS + seat:04d}"


async def play_table(client: object, url: str, db: Path, table: int, until: float, think: float,
                     result: Result, retry: bool = False) -> None:
    """One table's phones. With ``retry`` a text the server did not answer is sent again, with the same
    MessageSid, until it is answered (as across a restart of the server)."""
    import httpx

    assert isinstance(client, httpx.AsyncClient)
    rng = random.Random(table)
    sids = iter(range(10**9))

    async def text(seat: int, body: str) -> None:
        form = incoming(phone(table, seat), body, f"SM{table:06d}{seat}{next(sids):020d}")
        headers = {"X-Twilio-Signature": signature(url, form)}
        while True:
            start = time.perf_counter()
            try:
                response = await client.post(url, data=form, headers=headers)
            except httpx.HTTPError as exc:
                if retry and time.monotonic() < until + 60:
                    await asyncio.sleep(0.05)
                    continue
                result.errors.append(f"table {table}: {type(exc).__name__}")
                return
            result.latencies.append(time.perf_counter() - start)
            if response.status_code != 200:
                result.errors.append(f"table {table}: HTTP {response.status_code}")
            else:
                result.accepted.append(form["MessageSid"])
            return

    await text(0, f"NEWGAME Host{table}")
    code = None
    for _ in range(600):
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
            row = conn.execute("SELECT code FROM game_tables WHERE host_address = ?", (phone(table, 0),)).fetchone()
        if row and row[0]:
            code = row[0]
            break
        await asyncio.sleep(0.05)
    if code is None:
        result.errors.append(f"table {table}: no join code")
        return
    for seat in range(1, HUMANS):
        await text(seat, f"JOIN {code} P{table}x{seat}")
    await text(0, "BOTS 2")
    await text(0, "GO")
    result.started += 1
    while time.monotonic() < until:
        await asyncio.sleep(rng.uniform(0, 2 * think))
        await text(rng.randrange(HUMANS), rng.choice(ANSWERS))


async def drive(port: int, db: Path, tables: int, seconds: float, think: float, retry: bool = False) -> Result:
    import httpx

    url = f"http://127.0.0.1:{port}/sms"
    result = Result()
    limits = httpx.Limits(max_connections=tables, max_keepalive_connections=tables)
    async with httpx.AsyncClient(limits=limits, timeout=30) as client:
        until = time.monotonic() + seconds
        await asyncio.gather(*(play_table(client, url, db, t, until, think, result, retry) for t in range(tables)))
    return result


def start_server(db: Path, port: int) -> subprocess.Popen[bytes]:
    """``moderator serve``'s app in a child process (see ``run_server``)."""
    return subprocess.Popen([sys.executable, __file__, "--server"], env=server_env(db, port),
                            stdout=subprocess.DEVNULL)


def wait_healthy(port: int, process: subprocess.Popen[bytes], timeout: float = 30) -> None:
    import httpx

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError("the server exited")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise RuntimeError("the server did not come up")


def load(tables: int, seconds: float, think: float, db: Path) -> tuple[Result, dict[str, int]]:
    """Start the server, play, stop it with SIGTERM; the result and what the database holds."""
    port = free_port()
    process = start_server(db, port)
    try:
        wait_healthy(port, process)
        result = asyncio.run(drive(port, db, tables, seconds, think))
    finally:
        process.terminate()
        process.wait(timeout=60)
    with sqlite3.connect(db) as conn:
        counts = {
            "actions": conn.execute("SELECT count(*) FROM actions").fetchone()[0],
            "games over": conn.execute("SELECT count(*) FROM events WHERE kind = 'game-ended'").fetchone()[0],
            "messages sent": conn.execute("SELECT count(*) FROM outbox WHERE status = 'sent'").fetchone()[0],
            "messages waiting": conn.execute("SELECT count(*) FROM outbox WHERE status = 'pending'").fetchone()[0],
        }
    return result, counts


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p * len(ordered)))] if ordered else float("nan")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--think", type=float, default=1.0, help="mean seconds between two texts of one table")
    parser.add_argument("--server", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.server:
        run_server()
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        result, counts = load(args.tables, args.seconds, args.think, Path(tmp) / "load.db")
        elapsed = time.perf_counter() - start
    ms = [x * 1000 for x in result.latencies]
    print(f"{args.tables} tables for {args.seconds:g} s (think {args.think:g} s), {os.cpu_count()} CPUs")
    print(f"webhook requests: {len(ms)} ({len(ms) / args.seconds:.0f}/s); tables started: {result.started}")
    print(f"latency: p50 {percentile(ms, 0.5):.1f} ms, p99 {percentile(ms, 0.99):.1f} ms, "
          f"max {max(ms, default=float('nan')):.1f} ms, mean {statistics.fmean(ms) if ms else float('nan'):.1f} ms")
    print(f"errors: {len(result.errors)}" + (f" (first: {result.errors[0]})" if result.errors else ""))
    print("database: " + ", ".join(f"{k} {v}" for k, v in counts.items()) + f"; wall time {elapsed:.1f} s")
    return 1 if result.errors else 0


if __name__ == "__main__":
    sys.exit(main())
