"""``moderator.httpserver``: with no proxy in front, a flood of slow clients costs a bounded number of files and never
the webhooks; headers, bodies and writes that stall are cut off; page requests over their cap get 503 while the
webhooks go through; event streams are capped per table and in all. The server runs in its own process
(``tests.guarded_app``) so its files can be counted; everything is on loopback and bounded in time."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import resource
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from moderator.guard import RateLimitedLog, StreamSlots
from moderator.httpserver import quiet_accept_errors
from tests.serve_driver import http, timed

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Served:
    port: int
    pid: int

    def files(self) -> int:
        """The server process's open files."""
        return len(os.listdir(f"/proc/{self.pid}/fd"))

    def stats(self) -> dict[str, Any]:
        status, _, body = http(self.port, b"GET /stats HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        assert status == 200
        return dict(json.loads(body))


@contextlib.contextmanager
def serving(*, files: int | None = None, log: Path | None = None, **limits: Any) -> Iterator[Served]:
    """``tests.guarded_app`` with these ``Limits``, in a process allowed ``files`` open files (soft and hard),
    writing its log to ``log``."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}

    def limit_files() -> None:
        if files is not None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (files, files))

    stderr = log.open("w") if log is not None else None
    process = subprocess.Popen([sys.executable, "-m", "tests.guarded_app", json.dumps(limits)],
                               stdout=subprocess.PIPE, stderr=stderr, env=env, cwd=ROOT, text=True,
                               preexec_fn=limit_files)
    try:
        assert process.stdout is not None
        served = Served(int(process.stdout.readline()), process.pid)
        deadline = time.monotonic() + 10
        while True:  # the port is listening; wait until the app answers
            try:
                served.stats()
                break
            except OSError:
                assert time.monotonic() < deadline, "the server did not start"
                time.sleep(0.05)
        yield served
    finally:
        process.kill()
        process.wait(timeout=10)
        if stderr is not None:
            stderr.close()


WEBHOOK = (b"POST /telegram HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: 15\r\n"
           b"Connection: close\r\n\r\n{\"update_id\":1}")
HEALTH = b"GET /healthz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n"
PAGE = b"GET /page HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n"


def closed_after(sock: socket.socket, limit: float, dribble: bytes = b"", every: float = 0.1) -> float:
    """Seconds until the server closes ``sock`` (sending ``dribble`` a byte at a time meanwhile); fails past
    ``limit``."""
    start = time.monotonic()
    sock.settimeout(every)
    sent = 0
    while time.monotonic() - start < limit:
        try:
            if sock.recv(65536) == b"":
                return time.monotonic() - start
        except TimeoutError:
            pass
        except OSError:  # reset: closed too
            return time.monotonic() - start
        if sent < len(dribble):
            with contextlib.suppress(OSError):
                sock.sendall(dribble[sent:sent + 1])
            sent += 1
    raise AssertionError(f"still open after {limit} s")


# --- a flood of slow clients ------------------------------------------------------------------------------------


def test_300_slow_loris_connections_cost_bounded_files_and_neither_the_webhook_nor_the_health_check_waits() -> None:
    # The header timeout is long here: what keeps the server alive is the cap and the eviction, not the timers.
    with serving(max_connections=100, header_timeout=30) as served:
        before = served.files()
        loris = []
        try:
            for _ in range(300):
                sock = socket.create_connection(("127.0.0.1", served.port), timeout=5)
                loris.append(sock)
                with contextlib.suppress(OSError):  # evicted already: the flood evicts itself
                    sock.sendall(b"GET /page HTTP/1.1\r\nHost: t\r\nX-Slow: ")  # and never the rest
            deadline = time.monotonic() + 5
            while served.stats()["evicted"] < 200:  # until the server has taken in the whole flood
                assert time.monotonic() < deadline
                time.sleep(0.05)
            flooded = served.files()
            webhook, webhook_s = timed(served.port, WEBHOOK)
            health, health_s = timed(served.port, HEALTH)
            page, _ = timed(served.port, PAGE)
            stats = served.stats()
        finally:
            for sock in loris:
                sock.close()
    assert webhook == 200 and health == 200 and page == 200
    assert webhook_s < 1.0 and health_s < 1.0, (webhook_s, health_s)
    assert flooded <= before + 100 + 5, (before, flooded)  # the cap, and the listener's and the loop's own
    assert stats["evicted"] >= 200 and stats["open"] <= 100
    print(f"\nfiles {before} -> {flooded} under 300 slow clients; webhook {webhook_s * 1000:.1f} ms, "
          f"/healthz {health_s * 1000:.1f} ms; evicted {stats['evicted']}")


def test_out_of_files_the_server_fits_its_connections_to_the_limit_and_logs_a_few_lines(tmp_path: Path) -> None:
    # systemd's default soft limit would be 1,024; here 512, and the default of 2,000 connections must shrink.
    log = tmp_path / "server.log"
    with serving(files=512, log=log) as served:
        loris = []
        try:
            for _ in range(700):
                sock = socket.create_connection(("127.0.0.1", served.port), timeout=5)
                loris.append(sock)
                with contextlib.suppress(OSError):
                    sock.sendall(b"GET /page HTTP/1.1\r\nHost: t\r\nX-Slow: ")
            time.sleep(0.3)
            flooded = served.files()
            webhook, webhook_s = timed(served.port, WEBHOOK)
        finally:
            for sock in loris:
                sock.close()
    text = log.read_text()
    assert webhook == 200 and webhook_s < 1.0
    assert flooded <= 512 - 128  # the connections fit beside an accept batch and the reserve
    assert "at most 128 connections" in text
    assert "Traceback" not in text and len(text.splitlines()) < 20, text[-2000:]


def test_when_every_connection_is_working_a_newcomer_is_closed_at_once() -> None:
    with serving(max_connections=3, max_browser_requests=10) as served:
        slow = [threading.Thread(target=http, args=(served.port, b"GET /slow?s=1.5 HTTP/1.1\r\nHost: t\r\n"
                                                       b"Connection: close\r\n\r\n")) for _ in range(3)]
        for thread in slow:
            thread.start()
        time.sleep(0.4)
        with socket.create_connection(("127.0.0.1", served.port), timeout=5) as sock:
            assert closed_after(sock, 1.0) < 0.5
        for thread in slow:
            thread.join(5)
        assert served.stats()["refused"] == 1


# --- what stalls is cut off -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def strict() -> Iterator[Served]:
    with serving(header_timeout=0.5, body_idle_timeout=0.5, body_timeout=1.5, write_timeout=0.5, keep_alive=5,
                 max_browser_requests=2) as served:
        yield served


def test_headers_dribbled_a_byte_at_a_time_are_cut_off_after_the_header_timeout(strict: Served) -> None:
    with socket.create_connection(("127.0.0.1", strict.port), timeout=5) as sock:
        waited = closed_after(sock, 3.0, dribble=b"GET /page HTTP/1.1\r\nHost: t\r\nX-Slow: " + b"a" * 100)
    assert 0.4 <= waited < 1.5


def test_a_connection_that_sends_nothing_is_cut_off_after_the_header_timeout(strict: Served) -> None:
    with socket.create_connection(("127.0.0.1", strict.port), timeout=5) as sock:
        assert 0.4 <= closed_after(sock, 3.0) < 1.5


def test_a_kept_alive_connection_that_dribbles_its_next_request_is_cut_off(strict: Served) -> None:
    # uvicorn alone cancels its keep-alive timer on any byte and never arms another: this would stay open.
    with socket.create_connection(("127.0.0.1", strict.port), timeout=5) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n")
        assert sock.recv(65536).startswith(b"HTTP/1.1 200")
        waited = closed_after(sock, 3.0, dribble=b"GET /page HTTP/1.1\r\nX-Slow: " + b"a" * 100)
    assert 0.4 <= waited < 1.5


def test_a_body_that_stalls_is_cut_off(strict: Served) -> None:
    with socket.create_connection(("127.0.0.1", strict.port), timeout=5) as sock:
        sock.sendall(b"POST /telegram HTTP/1.1\r\nHost: t\r\nContent-Length: 100\r\n\r\n0123456789")
        assert 0.4 <= closed_after(sock, 3.0) < 1.5


def test_a_body_that_trickles_is_cut_off_after_the_body_timeout(strict: Served) -> None:
    with socket.create_connection(("127.0.0.1", strict.port), timeout=5) as sock:
        sock.sendall(b"POST /telegram HTTP/1.1\r\nHost: t\r\nContent-Length: 1000\r\n\r\n")
        waited = closed_after(sock, 4.0, dribble=b"x" * 1000, every=0.2)  # never idle 0.5 s, but slow
    assert 1.3 <= waited < 2.5


def test_a_client_that_reads_nothing_is_cut_off_after_the_write_timeout(strict: Served) -> None:
    before = strict.stats()["timed_out"]
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # before connecting: a small window
    try:
        sock.connect(("127.0.0.1", strict.port))
        sock.sendall(b"GET /big HTTP/1.1\r\nHost: t\r\n\r\n")
        deadline = time.monotonic() + 3
        while strict.stats()["timed_out"] == before:
            assert time.monotonic() < deadline, "a stalled response was never cut off"
            time.sleep(0.1)
    finally:
        sock.close()


def test_page_requests_over_their_cap_get_503_while_webhooks_and_the_health_check_go_through(
        strict: Served) -> None:
    slow = [threading.Thread(target=http, args=(strict.port, b"GET /slow?s=1.2 HTTP/1.1\r\nHost: t\r\n"
                                                   b"Connection: close\r\n\r\n")) for _ in range(2)]
    for thread in slow:
        thread.start()
    time.sleep(0.3)
    try:
        status, headers, _ = http(strict.port, PAGE)
        assert status == 503 and headers["retry-after"] == "5"
        assert timed(strict.port, WEBHOOK)[0] == 200
        assert timed(strict.port, HEALTH)[0] == 200
    finally:
        for thread in slow:
            thread.join(5)
    assert http(strict.port, PAGE)[0] == 200


def test_refused_connections_are_a_few_log_lines_not_a_flood(caplog: pytest.LogCaptureFixture) -> None:
    loop = asyncio.new_event_loop()
    try:
        quiet_accept_errors(loop, RateLimitedLog(logging.getLogger("moderator.test.accept"), burst=3))
        caplog.set_level(logging.DEBUG)
        for _ in range(1000):
            loop.call_exception_handler({"message": "socket.accept() out of system resource",
                                         "exception": OSError(24, "Too many open files")})
    finally:
        loop.close()
    lines = [r for r in caplog.records if r.name == "moderator.test.accept"]
    assert len(lines) == 3 and all(r.exc_info is None for r in lines)


# --- event streams ----------------------------------------------------------------------------------------------


def test_event_streams_are_capped_per_table_and_in_all() -> None:
    slots = StreamSlots(per_table=3, total=5)
    assert [slots.acquire("A") for _ in range(4)] == [True, True, True, False]
    assert [slots.acquire("B") for _ in range(3)] == [True, True, False]  # 5 in all
    slots.release("A")
    assert slots.open("A") == 2 and slots.open() == 4
    assert slots.acquire("B") and not slots.acquire("C")
    slots.release("Z")  # never acquired: nothing happens
    assert slots.open() == 5


def test_a_refused_stream_is_503_with_retry_after() -> None:
    sent: list[dict[str, Any]] = []

    async def send(message: Any) -> None:
        sent.append(message)

    asyncio.run(StreamSlots.refuse(send, 15))
    assert sent[0]["status"] == 503 and (b"retry-after", b"15") in sent[0]["headers"]
