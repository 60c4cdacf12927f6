"""``moderator serve`` under load: many tables played at once by text message over real HTTP on loopback.

Usage::

    python benchmarks/serve.py [--tables 200] [--seconds 60] [--think 1.0] [--burst] [--browser]

It starts ``moderator serve``'s app under uvicorn in a child process (SMS on, Twilio replaced by the in-process
fake, a fresh database), then plays ``--tables`` tables at once through the signed ``POST /sms`` webhook: each
host opens a table, four players join, two computer players fill it, the host starts, and then the five humans
answer whatever they were last asked (a seeded pick of ``1``, ``2``, ``ja``, ``nein``, ``status``), each table
waiting ``--think`` seconds (at random, up to twice that) between two texts, as people at a table do. It prints
the actions per second, the p50 and p99 latency of the webhook, errors (any answer but 200, or none), games
finished and messages sent, and the CPU time the server used while the tables played (on a shared machine
the latency says as much about the neighbours as about the server), and the largest the database's write-ahead log
grew (sampled every 100 ms). ``BENCH_ACTIONS_LOG=FILE`` makes the server write its one line per handled input (with
its milliseconds) to FILE. Target: p99 under 50 ms with 200 tables on a 2-core machine, and a WAL that stays
bounded (the store checkpoints it on the write path; issue 14).

``--browser`` plays browser seats only (the SMS channel off, the browser's on): each host opens its table with
``POST /new``, four players take a seat with the join form, the host adds two computer players and starts, and then
a random human's page reads its part (``GET /play/<table>/live``, as a page does after every change) and taps one of
the buttons it shows (``POST /play/<table>`` with ``X-Send``, as seat.js does), or, owing nothing, waits. The
latency figures are then those of the posts (the taps and the lobby's forms); the page reads are printed apart.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import re
import secrets
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.fake_twilio import ACCOUNT_SID, AUTH_TOKEN, OUR_NUMBER, FakeTwilio, incoming, signature  # noqa: E402

HUMANS = 5
ANSWERS = ("1", "1", "2", "ja", "nein", "status")
OPEN_PASSWORD = "bench-open"
"""The operator's password in ``--browser`` mode: with it, one client may open every table."""
_CHOICE = re.compile(r'name="token" value="([^"]*)"><input type="hidden" name="decision" value="(\d+)"')


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def server_env(db: Path, port: int, browser: bool = False) -> dict[str, str]:
    if browser:  # the browser's channel alone
        return {**server_env(db, port), "MODERATOR_WEB": "on", "MODERATOR_OPEN_PASSWORD": OPEN_PASSWORD,
                "TWILIO_ACCOUNT_SID": "", "TWILIO_AUTH_TOKEN": "", "TWILIO_FROM": ""}
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
        "PYTHONPATH": os.environ.get("BENCH_EXTRA_PATH", "") + os.pathsep + str(ROOT),
    }


def run_server() -> None:
    """(Child process.) The real app under uvicorn, Twilio's REST API replaced by the fake."""
    import uvicorn

    from moderator.app import KEEP_ALIVE, create_app
    from moderator.settings import Settings

    settings = Settings.load(cwd=Path(tempfile.gettempdir()))
    if log := os.environ.get("BENCH_ACTIONS_LOG"):  # one line per handled input, with its milliseconds
        import logging

        logging.basicConfig(filename=log, level=logging.INFO, format="%(created).3f %(name)s %(message)s")
    uvicorn.run(create_app(settings, network={"sms": FakeTwilio()}), host=settings.host, port=settings.port,
                log_level="warning", timeout_keep_alive=KEEP_ALIVE)


@dataclass
class Result:
    latencies: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    started: int = 0
    accepted: list[str] = field(default_factory=list)
    """MessageSids the server answered 200."""
    lobby: list[float] = field(default_factory=list)
    """Of the latencies, those of the lobby's texts (NEWGAME, JOIN, BOTS, GO)."""
    game: list[float] = field(default_factory=list)
    """Of the latencies, those of the texts after GO."""
    server_cpu: float = float("nan")
    """CPU seconds the server used while the tables played (the machine is shared: latency alone says little)."""
    loop_cpu: float = float("nan")
    """Of which the event loop's thread (HTTP and the service; the rest is the SMS sender)."""
    client_cpu: float = float("nan")
    wall: float = float("nan")
    reads: list[float] = field(default_factory=list)
    """``--browser``: the latencies of the pages' reads of their part."""
    wal_max: int = 0
    """The largest size of the write-ahead log seen while the tables played, in bytes."""


def phone(table: int, seat: int) -> str:
    return f"+1202555{1000 + table * HUMANS + seat:04d}"


class Loopback:
    """One keep-alive HTTP/1.1 connection to the server, as one phone company's webhook client would hold.

    Deliberately minimal (a request written, a ``Content-Length`` answer read): a general client costs more CPU
    per request than the server's handler, on the same two cores, and its queueing would be measured as the
    server's latency (httpx's pool scans every connection on every request: with 200 it saturated a core)."""

    def __init__(self, port: int, timeout: float = 30.0) -> None:
        self.port = port
        self.timeout = timeout
        self._streams: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None

    async def post_form(self, path: str, form: dict[str, str], headers: dict[str, str]) -> int:
        """POST a form; the answer's status. OSError (a TimeoutError too) if there was no complete answer."""
        return (await self.request("POST", path, form, headers))[0]

    async def request(self, method: str, path: str, form: dict[str, str] | None, headers: dict[str, str]
                      ) -> tuple[int, list[tuple[str, str]], bytes]:
        """One request (a form's body if ``form``); the answer's status, header lines and body."""
        body = urlencode(form).encode() if form is not None else b""
        head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        kind = "Content-Type: application/x-www-form-urlencoded\r\n" if form is not None else ""
        request = (f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\n{head}"
                   f"{kind}Content-Length: {len(body)}\r\n\r\n").encode() + body
        try:
            return await asyncio.wait_for(self._exchange(request), self.timeout)
        except (OSError, asyncio.IncompleteReadError, ValueError, KeyError) as exc:
            self.close()
            raise ConnectionError(str(exc) or type(exc).__name__) from exc

    async def _exchange(self, request: bytes) -> tuple[int, list[tuple[str, str]], bytes]:
        if self._streams is None:
            self._streams = await asyncio.open_connection("127.0.0.1", self.port)
        reader, writer = self._streams
        writer.write(request)
        await writer.drain()
        head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
        status = int(head[0].split()[1])
        lines = [(k.lower(), v) for k, _, v in (line.partition(": ") for line in head[1:] if ": " in line)]
        fields = dict(lines)
        body = await reader.readexactly(int(fields["content-length"]))
        if fields.get("connection") == "close":
            self.close()
        return status, lines, body

    def close(self) -> None:
        if self._streams is not None:
            self._streams[1].close()
            self._streams = None


class JoinCodes:
    """The join code of each host's table, read from the database by one poller for every table."""

    def __init__(self, db: Path) -> None:
        self.db = db
        self.codes: dict[str, str] = {}
        self.waiting = 0

    async def of(self, host: str, timeout: float = 60.0) -> str | None:
        """The code of ``host``'s table once the server has written it, or None after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        self.waiting += 1
        try:
            while host not in self.codes and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
        finally:
            self.waiting -= 1
        return self.codes.get(host)

    async def poll(self, until: float) -> None:
        while time.monotonic() < until:
            if self.waiting and self.db.exists():
                with contextlib.closing(sqlite3.connect(f"file:{self.db}?mode=ro", uri=True)) as conn:
                    self.codes.update(conn.execute(
                        "SELECT host_address, code FROM game_tables WHERE code IS NOT NULL").fetchall())
            await asyncio.sleep(0.05)


async def play_table(port: int, codes: JoinCodes, table: int, until: float, think: float,
                     result: Result, retry: bool = False, burst: bool = False) -> None:
    """One table's phones. With ``retry`` a text the server did not answer is sent again, with the same
    MessageSid, until it is answered (as across a restart of the server). Every text comes after a pause of up to
    twice ``think`` seconds, the lobby's too; with ``burst`` the lobby's come at once, every table opening at the
    same moment."""
    url = f"http://127.0.0.1:{port}/sms"
    client = Loopback(port)
    rng = random.Random(table)
    sids = iter(range(10**9))

    async def text(seat: int, body: str, lobby: bool = False) -> None:
        if not (lobby and burst):
            await asyncio.sleep(rng.uniform(0, 2 * think))
        form = incoming(phone(table, seat), body, f"SM{table:06d}{seat}{next(sids):020d}")
        headers = {"X-Twilio-Signature": signature(url, form)}
        while True:
            start = time.perf_counter()
            try:
                status = await client.post_form("/sms", form, headers)
            except ConnectionError as exc:
                if retry and time.monotonic() < until + 60:
                    await asyncio.sleep(0.05)
                    continue
                result.errors.append(f"table {table}: no answer ({exc})")
                return
            result.latencies.append(time.perf_counter() - start)
            (result.lobby if lobby else result.game).append(result.latencies[-1])
            if status != 200:
                result.errors.append(f"table {table}: HTTP {status}")
            else:
                result.accepted.append(form["MessageSid"])
            return

    try:
        await text(0, f"NEWGAME Host{table}", lobby=True)
        code = await codes.of(phone(table, 0))
        if code is None:
            result.errors.append(f"table {table}: no join code")
            return
        for seat in range(1, HUMANS):
            await text(seat, f"JOIN {code} P{table}x{seat}", lobby=True)
        await text(0, "BOTS 2", lobby=True)
        await text(0, "GO", lobby=True)
        result.started += 1
        while time.monotonic() < until:
            await text(rng.randrange(HUMANS), rng.choice(ANSWERS))
    finally:
        client.close()


async def play_browser_table(port: int, db: Path, table: int, until: float, think: float, result: Result,
                             burst: bool = False) -> None:
    """One table of browser seats (see ``--browser`` in the module's text)."""
    client = Loopback(port)
    rng = random.Random(table)
    origin = {"Origin": f"http://127.0.0.1:{port}"}

    async def post(path: str, form: dict[str, str], cookie: str, *, lobby: bool = False, tap: bool = False
                   ) -> tuple[int, list[tuple[str, str]], bytes] | None:
        if not (lobby and burst):
            await asyncio.sleep(rng.uniform(0, 2 * think))
        headers = {**origin, "Cookie": cookie, **({"X-Send": "1"} if tap else {})}
        start = time.perf_counter()
        try:
            answer = await client.request("POST", path, {**form, "nonce": secrets.token_hex(8)}, headers)
        except ConnectionError as exc:
            result.errors.append(f"table {table}: no answer ({exc})")
            return None
        result.latencies.append(time.perf_counter() - start)
        (result.lobby if lobby else result.game).append(result.latencies[-1])
        if answer[0] not in (200, 303):
            result.errors.append(f"table {table}: HTTP {answer[0]} for {path}")
            return None
        return answer

    try:
        opened = await post("/new", {"name": f"Host{table}", "play": "1", "password": OPEN_PASSWORD}, "",
                            lobby=True)
        if opened is None:
            return
        location = dict(opened[1]).get("location", "")
        table_id = location.rsplit("/", 1)[-1]
        cookies = [v.split(";", 1)[0] for k, v in opened[1] if k == "set-cookie"]
        host = "; ".join(c for c in cookies if c.startswith("host-"))
        seats = ["; ".join(c for c in cookies if c.startswith("seat-"))]
        code = await asyncio.to_thread(_code_of, db, table_id)
        if code is None:
            result.errors.append(f"table {table}: no join code")
            return
        for seat in range(1, HUMANS):
            seats.append(f"seat-{table_id}=bench-{table}-{seat}-{secrets.token_hex(8)}")
            await post(f"/join/{code}", {"name": f"P{table}x{seat}"}, seats[-1], lobby=True)
        await post(f"/host/{table_id}", {"do": "computers-n", "count": "2"}, host, lobby=True)
        await post(f"/host/{table_id}", {"do": "start"}, host, lobby=True)
        result.started += 1
        while time.monotonic() < until:
            seat = rng.randrange(HUMANS)
            start = time.perf_counter()
            try:
                status, _, page = await client.request("GET", f"/play/{table_id}/live", None,
                                                       {"Cookie": seats[seat]})
            except ConnectionError as exc:
                result.errors.append(f"table {table}: no answer ({exc})")
                return
            result.reads.append(time.perf_counter() - start)
            if status != 200:
                result.errors.append(f"table {table}: HTTP {status} for its page")
                return
            choices = _CHOICE.findall(page.decode())
            if not choices:
                await asyncio.sleep(rng.uniform(0, 2 * think))
                continue
            token, decision = rng.choice(choices)
            await post(f"/play/{table_id}", {"token": token, "decision": decision}, seats[seat], tap=True)
    finally:
        client.close()


def _code_of(db: Path, table_id: str) -> str | None:
    with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)) as conn:
        row = conn.execute("SELECT code FROM game_tables WHERE id = ?", (table_id,)).fetchone()
    return str(row[0]) if row and row[0] else None


async def watch_wal(db: Path, result: Result, until: float) -> None:
    """The largest size of the write-ahead log, sampled every 100 ms."""
    wal = db.with_name(db.name + "-wal")
    while time.monotonic() < until:
        with contextlib.suppress(OSError):
            result.wal_max = max(result.wal_max, wal.stat().st_size)
        await asyncio.sleep(0.1)


async def drive(port: int, db: Path, tables: int, seconds: float, think: float, retry: bool = False,
                burst: bool = False, browser: bool = False) -> Result:
    result = Result()
    until = time.monotonic() + seconds
    codes = JoinCodes(db)
    loop = asyncio.get_running_loop()
    poller = loop.create_task(codes.poll(until + 60))
    watcher = loop.create_task(watch_wal(db, result, until + 60))
    try:
        if browser:
            await asyncio.gather(*(play_browser_table(port, db, t, until, think, result, burst)
                                   for t in range(tables)))
        else:
            await asyncio.gather(*(play_table(port, codes, t, until, think, result, retry, burst)
                                   for t in range(tables)))
    finally:
        poller.cancel()
        watcher.cancel()
    return result


def start_server(db: Path, port: int, browser: bool = False) -> subprocess.Popen[bytes]:
    """``moderator serve``'s app in a child process (see ``run_server``)."""
    return subprocess.Popen([sys.executable, __file__, "--server"], env=server_env(db, port, browser),
                            stdout=subprocess.DEVNULL)


def wait_healthy(port: int, process: subprocess.Popen[bytes] | subprocess.Popen[str], timeout: float = 30) -> None:
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


def load(tables: int, seconds: float, think: float, db: Path, burst: bool = False,
         browser: bool = False) -> tuple[Result, dict[str, int]]:
    """Start the server, play, stop it with SIGTERM; the result and what the database holds."""
    port = free_port()
    process = start_server(db, port, browser)
    try:
        wait_healthy(port, process)
        server_cpu, loop_cpu = cpu_seconds(process.pid), cpu_seconds(process.pid, process.pid)
        client_cpu, start = time.process_time(), time.perf_counter()
        result = asyncio.run(drive(port, db, tables, seconds, think, burst=burst, browser=browser))
        result.server_cpu = cpu_seconds(process.pid) - server_cpu
        result.loop_cpu = cpu_seconds(process.pid, process.pid) - loop_cpu
        result.client_cpu = time.process_time() - client_cpu
        result.wall = time.perf_counter() - start
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


def cpu_seconds(pid: int, thread: int | None = None) -> float:
    """CPU time (user and system) a process (or one of its threads) has used so far; NaN where /proc is missing."""
    stat = Path(f"/proc/{pid}/stat") if thread is None else Path(f"/proc/{pid}/task/{thread}/stat")
    try:
        fields = stat.read_text().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p * len(ordered)))] if ordered else float("nan")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--think", type=float, default=1.0, help="mean seconds between two texts of one table")
    parser.add_argument("--burst", action="store_true",
                        help="every table opens at the same moment and its lobby texts come without a pause")
    parser.add_argument("--browser", action="store_true", help="browser seats only (the SMS channel off)")
    parser.add_argument("--server", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.server:
        run_server()
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        result, counts = load(args.tables, args.seconds, args.think, Path(tmp) / "load.db", args.burst,
                              args.browser)
        elapsed = time.perf_counter() - start
    ms = [x * 1000 for x in result.latencies]
    seats = "browser seats" if args.browser else "SMS seats"
    print(f"{args.tables} tables of {seats} for {args.seconds:g} s (think {args.think:g} s), {os.cpu_count()} CPUs")
    kind = "posts (taps and the lobby's forms)" if args.browser else "webhook requests"
    print(f"{kind}: {len(ms)} ({len(ms) / args.seconds:.0f}/s); tables started: {result.started}")
    print(f"latency: p50 {percentile(ms, 0.5):.1f} ms, p99 {percentile(ms, 0.99):.1f} ms, "
          f"max {max(ms, default=float('nan')):.1f} ms, mean {statistics.fmean(ms) if ms else float('nan'):.1f} ms")
    lobby = [x * 1000 for x in result.lobby]
    play = [x * 1000 for x in result.game]
    print(f"  the lobby's {len(lobby)} texts: p50 {percentile(lobby, 0.5):.1f} ms,"
          f" p99 {percentile(lobby, 0.99):.1f} ms;"
          f" the game's {len(play)}: p50 {percentile(play, 0.5):.1f} ms, p99 {percentile(play, 0.99):.1f} ms")
    per_request = result.server_cpu / len(ms) * 1000 if ms else float("nan")
    print(f"CPU while playing ({result.wall:.1f} s): server {result.server_cpu:.1f} s ({per_request:.2f} ms per "
          f"request; its event loop {result.loop_cpu:.1f} s, {result.loop_cpu / max(len(ms), 1) * 1000:.2f} ms per "
          f"request), this client {result.client_cpu:.1f} s; load average {os.getloadavg()[0]:.1f}")
    if args.browser:
        reads = [x * 1000 for x in result.reads]
        print(f"page reads: {len(reads)}: p50 {percentile(reads, 0.5):.1f} ms, p99 {percentile(reads, 0.99):.1f} ms")
    print(f"largest write-ahead log: {result.wal_max / 1e6:.1f} MB")
    print(f"errors: {len(result.errors)}" + (f" (first: {result.errors[0]})" if result.errors else ""))
    print("database: " + ", ".join(f"{k} {v}" for k, v in counts.items()) + f"; wall time {elapsed:.1f} s")
    return 1 if result.errors else 0


if __name__ == "__main__":
    sys.exit(main())
