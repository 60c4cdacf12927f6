"""``moderator serve`` under a flood of slow clients: do the webhooks still answer at once, in how many files?

Usage::

    python benchmarks/flood.py [--slow 1100] [--files 1024] [--webhooks 40] [--streams 0] [--plain]

It starts ``moderator serve`` itself (``tests/serve_driver.py``: ``app.serve`` with every channel on, only the Bot
API and Twilio's REST API faked in process) in a child process allowed ``--files`` open files (systemd's default
is 1,024; 0 leaves the limit as it is), measures the signed Telegram and Twilio webhooks and ``/healthz`` on an
idle server, then opens ``--slow`` connections that start a request and never finish its headers (slow loris) and
``--streams`` event streams held open by one table's pages, and measures again while they stay: each webhook's
latency (p50, p99, max; an answer other than 200, or none within 5 s, is an error), the server's open files, what
a page gets, and the lines the server wrote to its log meanwhile. ``--plain`` runs the same app under plain
uvicorn, as ``serve`` did before its guards, for comparison.
"""

from __future__ import annotations

import argparse
import contextlib
import resource
import socket
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.serve_driver import (  # noqa: E402
    Serving,
    http,
    moderator_serve,
    post,
    slow_clients,
    sms_text,
    telegram_update,
)

HEALTH = b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
PAGE = b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"


def measure(served: Serving, count: int, first_id: int) -> tuple[list[float], int]:
    """``count`` Telegram and ``count`` SMS webhooks, one after the other: (latencies of those answered 200,
    errors)."""
    latencies, errors = [], 0
    for n in range(count):
        for raw in (telegram_update(served.port, first_id + n), sms_text(served.port, f"SMbench{first_id + n}")):
            start = time.perf_counter()
            try:
                status = http(served.port, raw, timeout=5.0)[0]
            except OSError:
                status = 0
            if status == 200:
                latencies.append(time.perf_counter() - start)
            else:
                errors += 1
    return latencies, errors


def status_of(served: Serving, raw: bytes) -> str:
    try:
        start = time.perf_counter()
        status = http(served.port, raw, timeout=5.0)[0]
        return f"{status} in {(time.perf_counter() - start) * 1000:.1f} ms"
    except OSError as exc:
        return f"no answer ({type(exc).__name__})"


def report(label: str, latencies: list[float], errors: int) -> None:
    if not latencies:
        print(f"{label}: every webhook failed ({errors})")
        return
    ordered = sorted(latencies)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
    print(f"{label}: {len(latencies)} answered, {errors} errors; p50 {statistics.median(ordered) * 1000:.1f} ms, "
          f"p99 {p99 * 1000:.1f} ms, max {ordered[-1] * 1000:.1f} ms")


def table_streams(served: Serving, count: int) -> list[socket.socket]:
    """``count`` event streams of one table opened from its pages (headers read, then left open)."""
    if not count:
        return []
    _, headers, _ = http(served.port, post(served.port, "/new", b"name=Host", {
        "Content-Type": "application/x-www-form-urlencoded", "Origin": f"http://127.0.0.1:{served.port}"}))
    table_id = headers.get("location", "/x").rsplit("/", 1)[1]
    socks = []
    for _ in range(count):
        sock = socket.create_connection(("127.0.0.1", served.port), timeout=5)
        with contextlib.suppress(OSError):
            sock.sendall(f"GET /table/{table_id}/events HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        socks.append(sock)
    return socks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--slow", type=int, default=1100, help="slow clients that never finish their headers")
    parser.add_argument("--files", type=int, default=1024, help="the server's open-file limit (0: unchanged)")
    parser.add_argument("--webhooks", type=int, default=40, help="Telegram and SMS webhooks measured, each")
    parser.add_argument("--streams", type=int, default=0, help="event streams held open by one table's pages")
    parser.add_argument("--plain", action="store_true", help="plain uvicorn, as before the guards")
    args = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    needed = args.slow + args.streams + 256
    if soft < needed:  # this client holds every slow connection open itself
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, needed), hard))
    with tempfile.TemporaryDirectory() as tmp, moderator_serve(Path(tmp), files=args.files or None,
                                                               plain=args.plain) as served:
        print(f"{'plain uvicorn' if args.plain else 'moderator serve'}, open-file limit "
              f"{args.files or 'unchanged'}")
        idle_files, log_before = served.files(), len(served.lines())
        report("idle", *measure(served, args.webhooks, 1))
        held: list[socket.socket] = []
        try:
            started = time.monotonic()
            held = slow_clients(served.port, args.slow) + table_streams(served, args.streams)
            time.sleep(1.0)  # the server takes in the last of them
            print(f"{args.slow} slow clients and {args.streams} event streams opened in "
                  f"{time.monotonic() - started:.1f} s; server files {idle_files} -> {served.files()}")
            report("flooded", *measure(served, args.webhooks, 10_000))
            print(f"/healthz {status_of(served, HEALTH)}; a page {status_of(served, PAGE)}; "
                  f"server files {served.files()}")
            log = served.lines()[log_before:]
            per_request = sum('HTTP/1.1"' in line or "moderator.actions" in line for line in log)
            print(f"log lines written meanwhile: {len(log)}, of which {per_request} access-log and action lines "
                  f"of the measured requests; {sum('Traceback' in line for line in log)} tracebacks")
        finally:
            for sock in held:
                sock.close()


if __name__ == "__main__":
    main()
