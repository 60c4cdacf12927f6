"""Stand-ins for Telegram's Bot API and Twilio's REST API on a real port of this machine, and a ``moderator`` command
run as a real process against them.

``StandIn`` answers over HTTP as the providers do, to whoever reaches it through their real clients (PTB's httpx,
twilio's requests): the Bot API with ``FakeBotAPI``'s answers, Twilio's account and messages. It knows the right
credentials: a request with any other token or account key is answered 401, as the providers answer a revoked or
mistyped one, and ``revoke`` makes the right one wrong while it runs. It can start listening only after a delay (a
network that comes up), and a port nobody listens on is a provider out of reach.

``Moderator`` runs ``python -m moderator COMMAND`` with its output on pipes (every byte kept, read as it comes), so
a test reads the lines it wrote, waits for one, and stops it as systemd does.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from email.parser import BytesParser
from email.policy import HTTP
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from tests.fake_telegram import FakeBotAPI

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    """A loopback port nobody listens on (now)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class BotAPI(FakeBotAPI):
    """The fake Bot API's answers, also to ``setWebhook``."""

    def _result(self, api: str, params: dict[str, Any], chat: int | None) -> Any:
        if api == "setWebhook":
            return True
        return super()._result(api, params, chat)


class StandIn:
    """Telegram's Bot API (``/bot<token>/<method>``) and Twilio's REST API (``/2010-04-01/Accounts/...``) on
    ``127.0.0.1:port``, taking only ``token`` and (``account``, ``key``); from ``up_after`` seconds after
    ``start`` on."""

    def __init__(self, *, token: str, account: str = "", key: str = "", port: int | None = None) -> None:
        self.token = token
        self.account = account
        self.key = key
        self.port = port or free_port()
        self.bot = BotAPI(clock=time.time)
        self.texts: list[dict[str, str]] = []
        """Every SMS Twilio was asked to send (its form)."""
        self.requests: list[str] = []
        """Every request's method and path (the token in it cut out)."""
        self.lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._stopped = threading.Event()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def revoke(self, *, telegram: bool = True, twilio: bool = True) -> None:
        """The bot's token, the account's key or both are revoked: requests with them are refused from now on."""
        with self.lock:
            if telegram:
                self.token = "revoked"
            if twilio:
                self.key = "revoked"

    def start(self, up_after: float = 0.0) -> StandIn:
        """Listen now, or only after ``up_after`` seconds (nothing listens meanwhile)."""
        self._stopped.clear()

        def serve() -> None:
            if self._stopped.wait(up_after):
                return
            server = _Server(("127.0.0.1", self.port), _handler(self))
            server.daemon_threads = True
            self._server = server
            server.serve_forever(poll_interval=0.05)

        self._thread = threading.Thread(target=serve, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop listening (a network that goes away); what it holds stays, for ``start`` again."""
        self._stopped.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)

    def calls(self, method: str) -> int:
        """How many Bot API calls of this method it answered (refused ones included)."""
        with self.lock:
            return sum(1 for r in self.requests if r.endswith("/" + method))

    # --- answers -------------------------------------------------------------------------------------------

    def answer(self, method: str, path: str, form: dict[str, str], auth: str) -> tuple[int, dict[str, Any]]:
        with self.lock:
            self.requests.append(f"{method} {re.sub(r'^/bot[^/]*', '/bot', path)}")
            if path.startswith("/bot"):
                return self._telegram(path, form)
            if path.startswith("/2010-04-01/Accounts/"):
                return self._twilio(method, path, form, auth)
        return 404, {"message": "not here"}

    def _telegram(self, path: str, form: dict[str, str]) -> tuple[int, dict[str, Any]]:
        token, _, api = path[len("/bot"):].partition("/")
        if token != self.token:
            return 401, {"ok": False, "error_code": 401, "description": "Unauthorized"}
        params: dict[str, Any] = {}
        for name, value in form.items():
            try:
                params[name] = json.loads(value) if value[:1] in "[{" else value
            except ValueError:
                params[name] = value
        chat = params.get("chat_id")
        status, body = self.bot._answer(api, params, None if chat is None else int(chat))
        return status, body

    def _twilio(self, method: str, path: str, form: dict[str, str], auth: str) -> tuple[int, dict[str, Any]]:
        if auth != "Basic " + base64.b64encode(f"{self.account}:{self.key}".encode()).decode():
            return 401, {"code": 20003, "message": "Authenticate", "more_info": "https://www.twilio.com/docs/errors/20003",
                         "status": 401}
        if path == f"/2010-04-01/Accounts/{self.account}.json":
            return 200, {"sid": self.account, "status": "active", "friendly_name": "stand-in"}
        if path == f"/2010-04-01/Accounts/{self.account}/Messages.json" and method == "POST":
            self.texts.append(form)
            sid = f"SM{len(self.texts):032x}"
            return 201, {"sid": sid, "status": "queued", "to": form.get("To"), "body": form.get("Body"),
                         "num_segments": "1", "account_sid": self.account}
        if path == f"/2010-04-01/Accounts/{self.account}/Messages.json":
            return 200, {"messages": [], "next_page_uri": None, "page": 0, "page_size": 20, "uri": path}
        return 404, {"code": 20404, "message": "not found", "status": 404}

    def long_poll(self, path: str, form: dict[str, str]) -> None:
        """``getUpdates`` waits (up to half a second here) for an update, as Telegram's long polling does."""
        if not path.endswith("/getUpdates"):
            return
        deadline = time.monotonic() + min(float(form.get("timeout") or 0), 0.5)
        while time.monotonic() < deadline and not self.bot.updates and not self._stopped.is_set():
            time.sleep(0.05)


class _Server(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that went away mid-answer (the process under test stopped) is no error of the stand-in's."""
        if not isinstance(sys.exc_info()[1], OSError):
            super().handle_error(request, client_address)


def _handler(stand_in: StandIn) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _form(self) -> dict[str, str]:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            kind = self.headers.get("Content-Type", "")
            form = dict(parse_qsl(urlsplit(self.path).query))
            if kind.startswith("application/x-www-form-urlencoded"):
                form.update(parse_qsl(body.decode(), keep_blank_values=True))
            elif kind.startswith("application/json") and body:
                form.update({k: v if isinstance(v, str) else json.dumps(v) for k, v in json.loads(body).items()})
            elif kind.startswith("multipart/form-data"):  # a photo: its fields, the file's bytes left out
                parsed = BytesParser(policy=HTTP).parsebytes(f"Content-Type: {kind}\r\n\r\n".encode() + body)
                for part in parsed.iter_parts():
                    name, filename = part.get_param("name", header="content-disposition"), part.get_filename()
                    if isinstance(name, str) and filename is None:
                        form[name] = part.get_content().strip() if part.get_content_maintype() == "text" else ""
            return form

        def _answer(self, method: str) -> None:
            form = self._form()
            path = urlsplit(self.path).path
            stand_in.long_poll(path, form)
            if stand_in._stopped.is_set():  # gone: a connection kept alive from before gets no answer either
                self.close_connection = True
                return
            status, body = stand_in.answer(method, path, form, self.headers.get("Authorization", ""))
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            self._answer("GET")

        def do_POST(self) -> None:
            self._answer("POST")

    return Handler


# --- a moderator command as a process -----------------------------------------------------------------------------


class Moderator:
    """``python -m moderator <command>`` in a process of its own, its standard output and error kept whole."""

    def __init__(self, command: str, env: dict[str, str], cwd: Path) -> None:
        environ = {"PATH": os.environ.get("PATH", ""), "HOME": str(cwd), "PYTHONPATH": str(ROOT), **env}
        self.process = subprocess.Popen([sys.executable, "-m", "moderator", *command.split()], env=environ,
                                        cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE)
        self.out = bytearray()
        self.err = bytearray()
        self._lock = threading.Lock()
        self._readers = [threading.Thread(target=self._read, args=(stream, into), daemon=True)
                         for stream, into in ((self.process.stdout, self.out), (self.process.stderr, self.err))]
        for reader in self._readers:
            reader.start()

    def _read(self, stream: Any, into: bytearray) -> None:
        while chunk := stream.read1(65536):
            with self._lock:
                into.extend(chunk)

    @property
    def pid(self) -> int:
        return self.process.pid

    def written(self) -> bytes:
        """Every byte it wrote so far, standard output then standard error."""
        with self._lock:
            return bytes(self.out) + bytes(self.err)

    def lines(self) -> list[str]:
        """Every line it wrote so far (both streams)."""
        return self.written().decode(errors="replace").splitlines()

    def wait_for(self, pattern: str, timeout: float = 20.0, *, after: int = 0) -> str:
        """The first line from the ``after``-th on that matches ``pattern``, waiting for it."""
        deadline = time.monotonic() + timeout
        found = re.compile(pattern)
        while True:
            for line in self.lines()[after:]:
                if found.search(line):
                    return line
            if self.process.poll() is not None or time.monotonic() > deadline:
                lines = "\n".join(self.lines())
                raise AssertionError(f"no line matching {pattern!r} (exit {self.process.poll()}):\n{lines}")
            time.sleep(0.05)

    def exit_code(self, timeout: float = 20.0) -> int:
        """Its exit status, once it ends by itself."""
        code = self.process.wait(timeout=timeout)
        for reader in self._readers:
            reader.join(timeout=5)
        return code

    def stop(self, timeout: float = 20.0) -> int:
        """SIGTERM, as systemd stops it; its exit status."""
        with contextlib.suppress(ProcessLookupError):
            self.process.send_signal(signal.SIGTERM)
        try:
            return self.exit_code(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return self.exit_code(timeout)


@contextlib.contextmanager
def moderator(command: str, env: dict[str, str], cwd: Path) -> Iterator[Moderator]:
    """A ``Moderator`` that is stopped (SIGTERM, then SIGKILL) at the end whatever happened."""
    running = Moderator(command, env, cwd)
    try:
        yield running
    finally:
        if running.process.poll() is None:
            running.stop()
