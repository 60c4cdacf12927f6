"""``moderator serve`` itself (``app.serve``: the guarded uvicorn, the middleware, the logs) in a process of its own,
with only the network edge faked: Telegram's Bot API and Twilio's REST API answer in process.

``python -m tests.serve_driver`` serves until stopped, with the settings from the environment (``--plain``: the app
under plain uvicorn, as before the guards, for ``benchmarks/flood.py``'s comparison). ``moderator_serve`` starts
it in a child process for a test or a benchmark; the rest are a raw HTTP client's requests to it.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import resource
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlencode

from moderator.transports.telegram import SECRET_HEADER
from tests.fake_telegram import TOKEN, user
from tests.fake_twilio import ACCOUNT_SID, AUTH_TOKEN, OUR_NUMBER, PUBLIC_URL, FakeTwilio, incoming, signature
from tests.serve_app import SECRET, WebhookBotAPI

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    from moderator import app
    from moderator.settings import Settings

    network = {"telegram": WebhookBotAPI(clock=lambda: 1_800_000_000.0), "sms": FakeTwilio()}
    settings = Settings.load()
    if "--plain" in sys.argv:
        import uvicorn

        uvicorn.run(app.create_app(settings, network=network), host=settings.host, port=settings.port,
                    log_level="warning", timeout_keep_alive=app.KEEP_ALIVE)
        return 0
    app.create_app = functools.partial(app.create_app, network=network)
    return app.serve(settings)


# --- driving it from a test or a benchmark ----------------------------------------------------------------------


@dataclass(frozen=True)
class Serving:
    port: int
    pid: int
    log: Path

    def files(self) -> int:
        return len(os.listdir(f"/proc/{self.pid}/fd"))

    def rss_kb(self) -> int:
        status = Path(f"/proc/{self.pid}/status").read_text()
        found = re.search(r"VmRSS:\s+(\d+)", status)
        assert found is not None, status
        return int(found.group(1))

    def lines(self) -> list[str]:
        return self.log.read_text(errors="replace").splitlines()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def moderator_serve(tmp_path: Path, *, files: int | None = None, plain: bool = False,
                    **extra: str) -> Iterator[Serving]:
    """This driver (``moderator serve`` with the fake Bot API and the fake Twilio) in a child process on a free
    loopback port, every channel on, allowed ``files`` open files (soft and hard, as systemd's default would be
    1,024), its log in a file in ``tmp_path``; stopped with SIGTERM as systemd stops it."""
    port = free_port()
    environ = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path), "PYTHONPATH": str(ROOT),
               "MODERATOR_DB": str(tmp_path / "serve.db"), "MODERATOR_HOST": "127.0.0.1",
               "MODERATOR_PORT": str(port), "MODERATOR_PUBLIC_URL": PUBLIC_URL, "MODERATOR_WEB": "on",
               "TELEGRAM_TOKEN": TOKEN, "TELEGRAM_WEBHOOK_SECRET": SECRET, "TWILIO_ACCOUNT_SID": ACCOUNT_SID,
               "TWILIO_AUTH_TOKEN": AUTH_TOKEN, "TWILIO_FROM": OUR_NUMBER, **extra}

    def limit_files() -> None:
        if files is not None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (files, files))

    log = tmp_path / f"serve-{port}.log"
    with log.open("wb") as out:
        process = subprocess.Popen([sys.executable, "-m", "tests.serve_driver", *(["--plain"] if plain else [])],
                                   env=environ, cwd=tmp_path, stdout=out, stderr=subprocess.STDOUT,
                                   preexec_fn=limit_files)
    served = Serving(port, process.pid, log)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if http(port, b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")[0] == 200:
                    break
            except OSError:
                pass
            assert process.poll() is None, log.read_text()
            assert time.monotonic() < deadline, "moderator serve did not start"
            time.sleep(0.1)
        yield served
    finally:
        with contextlib.suppress(ProcessLookupError):
            process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


def http(port: int, raw: bytes, timeout: float = 5.0) -> tuple[int, dict[str, str], bytes]:
    """One raw request (``Connection: close``): (status, headers, body)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(raw)
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    return int(lines[0].split()[1]), headers, body


def post(port: int, path: str, body: bytes, headers: dict[str, str]) -> bytes:
    head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    return (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{head}Content-Length: {len(body)}\r\n"
            f"Connection: close\r\n\r\n").encode() + body


def telegram_update(port: int, update_id: int, text: str = "/help") -> bytes:
    person = user(700 + update_id % 50, "Flo")
    update = {"update_id": update_id, "message": {
        "message_id": update_id, "from": person, "chat": {"id": person["id"], "type": "private", "first_name": "Flo"},
        "date": 1_800_000_000, "text": text,
        "entities": [{"type": "bot_command", "offset": 0, "length": len(text.split()[0])}]}}
    return post(port, "/telegram", json.dumps(update).encode(),
                {"Content-Type": "application/json", SECRET_HEADER: SECRET})


def sms_text(port: int, sid: str, text: str = "?") -> bytes:
    form = incoming("+12025550999", text, sid)
    return post(port, "/sms", urlencode(form).encode(), {
        "Content-Type": "application/x-www-form-urlencoded",
        "X-Twilio-Signature": signature(f"{PUBLIC_URL}/sms", form, AUTH_TOKEN)})


def timed(port: int, raw: bytes) -> tuple[int, float]:
    start = time.perf_counter()
    status = http(port, raw)[0]
    return status, time.perf_counter() - start


def slow_clients(port: int, count: int) -> list[socket.socket]:
    """``count`` connections that start a request and never finish its headers (slow loris)."""
    socks = []
    for _ in range(count):
        sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        socks.append(sock)
        with contextlib.suppress(OSError):  # evicted already: the flood evicts itself
            sock.sendall(b"GET /table/x HTTP/1.1\r\nHost: t\r\nX-Slow: ")
    return socks


if __name__ == "__main__":
    sys.exit(main())
