"""Guards for the web server that no route has to remember: bounded bodies, security headers, an Origin check,
rate limits, event-stream slots, the client's address behind a trusted proxy, and log lines that carry no secret.

Each is standalone (plain ASGI middleware or a small class); ``app.create_app`` wires them in, and a channel's
routes may use the small classes (the browser channel's join, open and event-stream routes do). The order that
works, outermost first (uvicorn's ``ProxyHeadersMiddleware`` is outside all of them, so ``scope["scheme"]`` and
``scope["client"]`` already say what the trusted proxy said)::

    SecurityHeaders(OriginCheck(StreamingBodyLimit(app, webhook_limits), exempt=webhook_paths, public_url=...))

The webhooks' paths and limits come from the channels (``ChannelSpec.webhooks``).

Nothing here reads a body it does not bound, and nothing here logs a query string, a cookie or a token.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import math
import os
import re
import sys
import threading
import time
import traceback
from collections import OrderedDict
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from http import HTTPStatus
from types import TracebackType
from typing import Final
from urllib.parse import urlsplit

from starlette.requests import ClientDisconnect
from starlette.responses import PlainTextResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .limits import JOIN_GUESSES_AT_ONCE as JOIN_GUESSES_AT_ONCE
from .limits import JOIN_GUESSES_PER_MINUTE as JOIN_GUESSES_PER_MINUTE
from .limits import Clock as Clock
from .limits import JoinGuard as JoinGuard
from .limits import OpenGate as OpenGate
from .limits import RateLimiter as RateLimiter
from .limits import join_guesses as join_guesses
from .limits import pin_guesses as pin_guesses
from .limits import table_openings as table_openings

log = logging.getLogger("moderator.guard")


# --- paths ------------------------------------------------------------------------------------------------


def path_matches(path: str, prefix: str) -> bool:
    """True if ``path`` is ``prefix`` or lies under it, segment by segment (``/sms`` covers ``/sms/status``, not
    ``/smsx``)."""
    prefix = prefix.rstrip("/")
    return not prefix or path == prefix or path.startswith(prefix + "/")


def longest_match(path: str, table: Mapping[str, int]) -> int | None:
    """The value of the longest prefix of ``path`` in ``table`` (segment-wise), or None."""
    best: tuple[int, int] | None = None
    for prefix, value in table.items():
        if path_matches(path, prefix) and (best is None or len(prefix.rstrip("/")) > best[0]):
            best = (len(prefix.rstrip("/")), value)
    return None if best is None else best[1]


def _header(scope: Scope, name: bytes) -> bytes | None:
    for key, value in scope.get("headers", ()):
        if key == name:
            return bytes(value)
    return None


async def _answer(send: Send, status: int, text: str | None = None,
                  headers: Iterable[tuple[bytes, bytes]] = ()) -> None:
    """A short plain-text answer (``text``, else the status's own phrase) that also closes the connection, so
    nothing more of the request is read."""
    body = (HTTPStatus(status).phrase if text is None else text).encode()
    head = [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode()),
            (b"connection", b"close"), *headers]
    await send({"type": "http.response.start", "status": status, "headers": head})
    await send({"type": "http.response.body", "body": body})


# --- bounded bodies ---------------------------------------------------------------------------------------

KB: Final = 1024
DEFAULT_BODY_LIMIT: Final = 16 * KB
"""A page's form (a name, a nonce, a button's token) is well under 1 KB; 16 KB leaves room and nothing more.
A channel's webhooks say their own limits (``ChannelSpec.webhooks``: Telegram's updates, Twilio's forms)."""


class StreamingBodyLimit:
    """ASGI middleware: no route ever receives more of a request body than its path's limit, chunked or not.

    A declared ``Content-Length`` over the limit is answered 413 before anything is read; a body without one is
    counted as its ``http.request`` messages stream, and the message that crosses the limit is never passed on:
    the client gets 413 (connection closed, so the server stops reading) and the route gets ``http.disconnect``.
    ``multipart/form-data`` is answered 415 except under ``multipart`` paths (no channel sends it today), so
    Starlette never spools a temporary file. A client that goes away mid-body is no traceback in the log.
    """

    def __init__(self, app: ASGIApp, limits: Mapping[str, int] | None = None, *, default: int = DEFAULT_BODY_LIMIT,
                 multipart: Collection[str] = ()) -> None:
        self.app = app
        self.limits = dict(limits or {})
        self.default = default
        self.multipart = tuple(multipart)

    def limit_for(self, path: str) -> int:
        """The most bytes of body a request to ``path`` may carry."""
        found = longest_match(path, self.limits)
        return self.default if found is None else found

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = str(scope.get("path", ""))
        limit = self.limit_for(path)
        kind = (_header(scope, b"content-type") or b"").split(b";")[0].strip().lower()
        if kind == b"multipart/form-data" and not any(path_matches(path, p) for p in self.multipart):
            await _answer(send, 415)
            return
        declared = _header(scope, b"content-length")
        if declared is not None:
            if not declared.strip().isdigit():
                await _answer(send, 400)
                return
            if int(declared) > limit:
                await _answer(send, 413)
                return
        received = 0
        refused = started = False

        async def bounded_receive() -> Message:
            nonlocal received, refused
            if refused:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    refused = True
                    if not started:
                        await _answer(send, 413)
                    return {"type": "http.disconnect"}
            return message

        async def guarded_send(message: Message) -> None:
            nonlocal started
            if refused:
                return  # the 413 is the answer; whatever the route says after its disconnect goes nowhere
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, bounded_receive, guarded_send)
        except ClientDisconnect:
            # Our refusal, or a client gone mid-body (a malformed chunk ends the same way): nobody to answer.
            if not refused:
                log.debug("a client went away before its request body ended")


# --- security headers -------------------------------------------------------------------------------------

PAGE_HEADERS: Final = (
    (b"content-security-policy", b"frame-ancestors 'none'"),
    (b"x-frame-options", b"DENY"),
    # same-origin, not no-referrer: under no-referrer a browser sends "Origin: null" with a same-origin form
    # POST (Fetch, "append a request Origin header"), which OriginCheck must refuse. Other sites still get
    # nothing: no join code, no table id in a Referer.
    (b"referrer-policy", b"same-origin"),
)


class SecurityHeaders:
    """ASGI middleware: ``X-Content-Type-Options: nosniff`` on every response; on HTML pages also no framing by
    anyone (CSP ``frame-ancestors 'none'`` and ``X-Frame-Options: DENY``) and ``Referrer-Policy: same-origin``,
    which replace whatever the route set, so every page has the one policy. The one exception is ``framed``: pages
    under these paths may be framed by the origin given (a messenger's web client that opens a seat's page in a
    frame, and nobody else), with no ``X-Frame-Options``, which can name no origin."""

    def __init__(self, app: ASGIApp, framed: Mapping[str, str] | None = None) -> None:
        self.app = app
        self.framed = dict(framed or {})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [(bytes(k).lower(), bytes(v)) for k, v in message.get("headers", ())]
                html = any(k == b"content-type" and v.lower().startswith(b"text/html") for k, v in headers)
                ours = dict(PAGE_HEADERS) if html else {}
                framer = next((origin for prefix, origin in self.framed.items()
                               if path_matches(str(scope.get("path", "")), prefix)), None)
                if html and framer is not None:
                    ours[b"content-security-policy"] = f"frame-ancestors {framer}".encode()
                    del ours[b"x-frame-options"]
                    headers = [(k, v) for k, v in headers if k != b"x-frame-options"]
                ours[b"x-content-type-options"] = b"nosniff"
                message["headers"] = [(k, v) for k, v in headers if k not in ours] + list(ours.items())
            await send(message)

        await self.app(scope, receive, with_headers)


# --- the Origin check -------------------------------------------------------------------------------------

STATE_CHANGING: Final = frozenset({"POST", "PUT", "PATCH", "DELETE"})
_DEFAULT_PORTS: Final = {"http": 80, "https": 443}


def origin_of(url: str) -> str | None:
    """``scheme://host[:port]`` of a URL, lower-cased, the default port left out; None if it has none."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return None
    scheme, host = parts.scheme.lower(), (parts.hostname or "").lower()
    if scheme not in _DEFAULT_PORTS or not host:
        return None
    host = f"[{host}]" if ":" in host else host
    return f"{scheme}://{host}" if port in (None, _DEFAULT_PORTS[scheme]) else f"{scheme}://{host}:{port}"


def request_origin(scope: Scope) -> str | None:
    """The origin this request was addressed to: its scheme (as the trusted proxy told uvicorn) and Host."""
    host = _header(scope, b"host")
    if not host:
        return None
    return origin_of(f"{scope.get('scheme', 'http')}://{host.decode('latin-1')}")


class OriginCheck:
    """ASGI middleware: a POST, PUT, PATCH or DELETE from a page must say where it comes from, and that must be
    here. Its ``Origin`` (or, without one, its ``Referer``'s origin) must equal the request's own origin or
    ``public_url``'s; else 403. ``exempt`` paths (the signed webhooks, which no browser sends and which carry no
    Origin) pass untouched. ``Origin: null`` (a sandboxed frame, a ``data:`` page) is refused."""

    def __init__(self, app: ASGIApp, *, exempt: Collection[str], public_url: str | None = None) -> None:
        self.app = app
        self.exempt = tuple(exempt)
        self.public = origin_of(public_url) if public_url else None

    def allowed(self, scope: Scope) -> bool:
        """True if this request may go on to the route."""
        if scope.get("method", "GET") not in STATE_CHANGING or any(
                path_matches(str(scope.get("path", "")), p) for p in self.exempt):
            return True
        given = _header(scope, b"origin")
        if given is None:
            given = _header(scope, b"referer")
        if given is None:
            return False
        claimed = origin_of(given.decode("latin-1"))
        return claimed is not None and claimed in {request_origin(scope), self.public}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not self.allowed(scope):
            _refusal_log.warning("origin", "refused a %s to %s from another origin", scope.get("method"),
                              scope.get("path"))
            await _answer(send, 403)
            return
        await self.app(scope, receive, send)


# --- rate limits ------------------------------------------------------------------------------------------


# The buckets themselves are in ``moderator.limits`` (the service uses them too); re-exported here.


def retry_after(seconds: float) -> str:
    """A ``Retry-After`` value: whole seconds, at least 1."""
    return str(max(1, math.ceil(seconds)))


async def try_again(send: Send, seconds: float, text: str | None = None) -> None:
    """Answer 429 with ``Retry-After`` and ``text`` (the catalog's "try again in …" for the client's language;
    without it, the status's phrase)."""
    await _answer(send, 429, text, [(b"retry-after", retry_after(seconds).encode())])


def too_many(seconds: float, text: str | None = None) -> Response:
    """The same 429 as a Starlette response, for a route (``/join/<code>``) that has looked the code up."""
    return PlainTextResponse(HTTPStatus.TOO_MANY_REQUESTS.phrase if text is None else text, status_code=429,
                             headers={"Retry-After": retry_after(seconds), "Cache-Control": "no-store"})


async def pace(started: float, minimum: float, clock: Clock = time.monotonic) -> None:
    """Sleep until ``minimum`` seconds after ``started``: answers that must not differ in time (a known and an
    unknown code) all take at least this long."""
    left = started + minimum - clock()
    if left > 0:
        await asyncio.sleep(left)


# --- event streams ------------------------------------------------------------------------------------------


class StreamSlots:
    """Server-sent event streams open at once: at most ``per_table`` for one table and ``total`` in all, so open
    pages cost a bounded number of files. (Ten phones, a screen and a host device are a dozen.)"""

    def __init__(self, per_table: int = 40, total: int = 800) -> None:
        self.per_table, self.total = per_table, total
        self._open: dict[str, int] = {}
        self._count = 0

    def acquire(self, table_id: str) -> bool:
        """Take a slot for a stream of this table; False (nothing taken) when the table or the server is full."""
        held = self._open.get(table_id, 0)
        if self._count >= self.total or held >= self.per_table:
            return False
        self._open[table_id] = held + 1
        self._count += 1
        return True

    def release(self, table_id: str) -> None:
        """Give back a slot ``acquire`` gave."""
        held = self._open.get(table_id, 0)
        if held <= 0:
            return
        self._count -= 1
        if held == 1:
            del self._open[table_id]
        else:
            self._open[table_id] = held - 1

    def open(self, table_id: str | None = None) -> int:
        """Streams open for this table, or in all."""
        return self._count if table_id is None else self._open.get(table_id, 0)

    @staticmethod
    async def refuse(send: Send, seconds: float = 15.0) -> None:
        """Answer a stream that has no slot: 503 with ``Retry-After``. (A browser's ``EventSource`` does not retry
        after a 503 by itself: the page's script must open it again after that many seconds.)"""
        body = HTTPStatus.SERVICE_UNAVAILABLE.phrase.encode()
        await send({"type": "http.response.start", "status": 503, "headers": [
            (b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode()),
            (b"retry-after", retry_after(seconds).encode()), (b"cache-control", b"no-store")]})
        await send({"type": "http.response.body", "body": body})

    @staticmethod
    def busy(seconds: float = 15.0) -> Response:
        """The same refusal as a Starlette response, for a route that looked its table up first."""
        return PlainTextResponse(HTTPStatus.SERVICE_UNAVAILABLE.phrase, status_code=503,
                                 headers={"Retry-After": retry_after(seconds), "Cache-Control": "no-store"})


# --- the client's address ---------------------------------------------------------------------------------

DEFAULT_TRUSTED_PROXIES: Final = "127.0.0.1,::1"
"""A proxy on the same machine (systemd behind Caddy or nginx). Docker's image adds its bridges (172.16.0.0/12)."""

IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


@dataclass(frozen=True, slots=True)
class TrustedProxies:
    """The addresses whose ``X-Forwarded-For`` and ``X-Forwarded-Proto`` are believed (addresses or CIDRs; ``*``
    for any), written as uvicorn's ``forwarded_allow_ips`` takes them."""

    networks: tuple[IPNetwork, ...] = ()
    anyone: bool = False

    @classmethod
    def parse(cls, text: str) -> TrustedProxies:
        items = [item.strip() for item in text.split(",") if item.strip()]
        if "*" in items:
            return cls(anyone=True)
        networks = []
        for item in items:
            try:
                networks.append(ipaddress.ip_network(item, strict=False))
            except ValueError:
                log.warning("ignored %r in the trusted proxies: not an address or a network", item)
        return cls(tuple(networks))

    def __contains__(self, host: object) -> bool:
        if self.anyone:
            return True
        try:
            ip = ipaddress.ip_address(str(host).strip().strip("[]"))
        except ValueError:
            return False
        return any(ip in net for net in self.networks)


def trusted_proxies_setting(env: Mapping[str, str] | None = None) -> str:
    """``MODERATOR_TRUSTED_PROXIES``, else uvicorn's own ``FORWARDED_ALLOW_IPS``, else ``127.0.0.1,::1``: the one
    setting, to pass to uvicorn as ``forwarded_allow_ips`` and to ``TrustedProxies.parse``."""
    env = os.environ if env is None else env
    return env.get("MODERATOR_TRUSTED_PROXIES") or env.get("FORWARDED_ALLOW_IPS") or DEFAULT_TRUSTED_PROXIES


def _bare(host: str) -> str:
    """An ``X-Forwarded-For`` item without its port (``1.2.3.4:5``, ``[::1]:5``)."""
    host = host.strip()
    if host.startswith("["):
        return host[1:host.find("]")] if "]" in host else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def client_address(scope: Scope, trusted: TrustedProxies) -> str:
    """The client's IP: the peer, or, if the peer is a trusted proxy, the nearest untrusted hop of
    ``X-Forwarded-For`` (read from the right, as each proxy appends). Safe to apply after uvicorn's
    ``ProxyHeadersMiddleware``: an untrusted peer's headers are never read."""
    peer = scope.get("client")
    host = str(peer[0]) if peer else ""
    if host not in trusted:
        return host
    hops = [_bare(h) for v in (value for key, value in scope.get("headers", ()) if key == b"x-forwarded-for")
            for h in bytes(v).decode("latin-1").split(",") if h.strip()]
    for hop in reversed(hops):
        if hop not in trusted:
            return hop
    return hops[0] if hops else host


def rate_key(ip: str) -> str:
    """The key a client's tries are counted under: its IPv4 address, or its IPv6 /64 (one subscriber has them
    all)."""
    try:
        address = ipaddress.ip_address(ip)
    except ValueError:
        return ip
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.ip_network(f"{address}/64", strict=False))
    return str(address)


def client_key(scope: Scope, trusted: TrustedProxies) -> str:
    """Who a request counts as for rate limits: ``rate_key`` of its ``client_address``."""
    return rate_key(client_address(scope, trusted))


def is_local(scope: Scope) -> bool:
    """True for a request from this machine itself (a health check in the container, ``curl`` on the host): a
    loopback peer with no ``X-Forwarded-For``, since whatever a proxy on this machine forwards carries one."""
    peer = scope.get("client")
    if not peer:
        return False
    try:
        loopback = ipaddress.ip_address(str(peer[0])).is_loopback
    except ValueError:
        return False
    return loopback and _header(scope, b"x-forwarded-for") is None


def public_health(report: Mapping[str, object], scope: Scope) -> dict[str, object]:
    """What ``/healthz`` may tell this client: the whole report on this machine, else only ``{"ok": …}`` (no version,
    channels or backlog for strangers)."""
    return dict(report) if is_local(scope) else {"ok": bool(report.get("ok"))}


# --- logs ---------------------------------------------------------------------------------------------------

_SECRET_QUERY: Final = re.compile(r"(?i)([?&;](?:key|token|secret|password|signature|auth)=)[^&;\s\"']*")
_BOT_TOKEN: Final = re.compile(r"/bot\d+:[A-Za-z0-9_-]+")
_SECRET_SEGMENT: Final = re.compile(r"(/move/)[^/?#;\s\"']+")
"""A path whose next segment is a one-time secret: ``/move/<code>``, a seat's move code (whoever sends it first takes
the seat, and sees its role)."""


def redact(text: str) -> str:
    """``text`` without the value of a secret query parameter (``?key=…``, ``&token=…``), a Bot API token in a
    URL (``/bot123:AA…/``) or a seat's move code in a path (``/move/<code>``)."""
    text = _SECRET_SEGMENT.sub(r"\1[redacted]", _SECRET_QUERY.sub(r"\1[redacted]", text))
    return _BOT_TOKEN.sub("/bot[redacted]", text)


class Redact(logging.Filter):
    """A logging filter that passes every record with its message and string arguments ``redact``-ed (uvicorn's
    access log puts the path with its query string in an argument)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str):
            record.msg = redact(record.msg)
        if isinstance(record.args, tuple):
            record.args = tuple(redact(a) if isinstance(a, str) else a for a in record.args)
        elif isinstance(record.args, dict):
            record.args = {k: redact(v) if isinstance(v, str) else v for k, v in record.args.items()}
        return True


REDACTED_LOGGERS: Final = ("uvicorn.access", "uvicorn.error", "httpx", "httpcore", "telegram", "twilio")
_SECRET_SETTING: Final = re.compile(r"(?:TOKEN|SECRET|PASSWORD|_KEY)$")
"""The settings whose values are keys (``TELEGRAM_TOKEN``, ``TWILIO_AUTH_TOKEN``, ``TELEGRAM_WEBHOOK_SECRET``,
``MODERATOR_OPEN_PASSWORD``, and any later channel's): no output of the process may show them."""
_SHORTEST_SECRET: Final = 8


def secret_values(env: Mapping[str, str]) -> tuple[str, ...]:
    """The values of the settings that are keys, and the secret part of a Bot API token (after its ``:``), longest
    first (a value too short to be a key is left alone: it would cut words out of every line)."""
    values = {value.strip() for name, value in env.items() if _SECRET_SETTING.search(name.upper())}
    values |= {value.split(":", 1)[1] for value in values if ":" in value}
    return tuple(sorted((v for v in values if len(v) >= _SHORTEST_SECRET), key=len, reverse=True))


def hide(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` without any of ``secrets`` and ``redact``-ed."""
    for secret in secrets:
        if secret in text:
            text = text.replace(secret, "[redacted]")
    return redact(text)


class Hiding(logging.Formatter):
    """A handler's formatter whose every finished line, tracebacks included, goes through ``hide``: whatever a
    library put in a message or an exception (PTB's "The token `…` was rejected"), no key reaches the output."""

    def __init__(self, inner: logging.Formatter | None, secrets: Iterable[str]) -> None:
        super().__init__()
        self.inner = inner or logging.Formatter()
        self.secrets = tuple(secrets)

    def format(self, record: logging.LogRecord) -> str:
        return hide(self.inner.format(record), self.secrets)


def install_redaction(loggers: Iterable[str] = REDACTED_LOGGERS, secrets: Iterable[str] = ()) -> Redact:
    """Put one ``Redact`` on these loggers and on every handler of the root logger (a logger's filter sees only the
    records logged on it, a handler's every record it writes), and have every handler there is (uvicorn's too)
    hide ``secrets`` in each line it writes, tracebacks included, as the hooks for an exception nobody caught do
    (``hide_uncaught``); returns the filter."""
    redacting = Redact()
    for name in loggers:
        logger = logging.getLogger(name)
        if not any(isinstance(f, Redact) for f in logger.filters):
            logger.addFilter(redacting)
    for handler in logging.getLogger().handlers:
        if not any(isinstance(f, Redact) for f in handler.filters):
            handler.addFilter(redacting)
    hidden = tuple(secrets)
    for logger in [logging.getLogger(), *(v for v in logging.root.manager.loggerDict.values()
                                          if isinstance(v, logging.Logger))]:
        for handler in logger.handlers:
            formatter = handler.formatter
            if isinstance(formatter, Hiding):
                formatter.secrets = tuple(dict.fromkeys((*formatter.secrets, *hidden)))
            else:
                handler.setFormatter(Hiding(formatter, hidden))
    hide_uncaught(hidden)
    return redacting


def hide_uncaught(secrets: Iterable[str]) -> None:
    """An exception nobody caught (on the main thread, another thread, or where Python can only report it) is
    written to standard error with ``secrets`` hidden."""
    hidden = tuple(secrets)

    def write(kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None,
              what: str = "") -> None:
        lines = traceback.format_exception(kind, value, tb) if kind is not None else []
        sys.stderr.write(hide(what + "".join(lines), hidden))

    sys.excepthook = lambda kind, value, tb: write(kind, value, tb)

    def thread_hook(args: threading.ExceptHookArgs) -> None:
        if args.exc_type is not SystemExit:
            name = args.thread.name if args.thread is not None else "?"
            write(args.exc_type, args.exc_value, args.exc_traceback, f"Exception in thread {name}:\n")

    threading.excepthook = thread_hook

    def unraisable(args: sys.UnraisableHookArgs) -> None:
        what = f"{args.err_msg or 'Exception ignored in'}: {args.object!r}\n"
        write(args.exc_type, args.exc_value, args.exc_traceback, what)

    sys.unraisablehook = unraisable


THIRD_PARTY_LOGGERS: Final = ("twilio", "httpx", "httpcore", "telegram", "apscheduler", "uvicorn.error")


def quiet_third_party_loggers(env: Mapping[str, str] | None = None) -> int:
    """Set the libraries' loggers to WARNING (the twilio library alone writes about 11 INFO lines a text), or to
    DEBUG with ``MODERATOR_LOG_LEVEL=debug``; returns the level set."""
    env = os.environ if env is None else env
    level = logging.DEBUG if env.get("MODERATOR_LOG_LEVEL", "").strip().lower() == "debug" else logging.WARNING
    for name in THIRD_PARTY_LOGGERS:
        logging.getLogger(name).setLevel(level)
    return level


@dataclass
class RateLimitedLog:
    """A logger that writes at most ``burst`` lines of one kind per ``every`` seconds; what it held back is told
    once the next line of that kind goes out ("… and 123 more in the last 60 s"). Kinds are fixed words."""

    logger: logging.Logger
    every: float = 60.0
    burst: int = 5
    clock: Clock = time.monotonic
    _windows: dict[str, list[float]] = field(default_factory=dict)
    """kind -> [window start, lines written, lines held back]"""

    def log(self, level: int, kind: str, msg: str, *args: object) -> bool:
        """Write the line unless this kind is over its share; True if it was written."""
        now = self.clock()
        window = self._windows.setdefault(kind, [now, 0, 0])
        if now - window[0] >= self.every:
            if window[2]:
                self.logger.log(level, "… and %d more like it (%s) in the last %d s", int(window[2]), kind,
                                round(now - window[0]))
            window[:] = [now, 0, 0]
        if window[1] >= self.burst:
            window[2] += 1
            return False
        window[1] += 1
        self.logger.log(level, msg, *args)
        return True

    def warning(self, kind: str, msg: str, *args: object) -> bool:
        return self.log(logging.WARNING, kind, msg, *args)

    def info(self, kind: str, msg: str, *args: object) -> bool:
        return self.log(logging.INFO, kind, msg, *args)

    def held_back(self, kind: str) -> int:
        """Lines of this kind held back in the current window."""
        return int(self._windows.get(kind, [0, 0, 0])[2])


class Throttle(logging.Filter):
    """A logging filter that passes at most ``burst`` records of one message (logger and template) per ``every``
    seconds; the next one passed after a window says how many were dropped. For lines a client can cause at will,
    such as uvicorn's "Invalid HTTP request received."."""

    MAX_KINDS: Final = 256

    def __init__(self, every: float = 60.0, burst: int = 5, clock: Clock = time.monotonic) -> None:
        super().__init__()
        self.every, self.burst, self.clock = every, burst, clock
        self._windows: OrderedDict[tuple[str, str], list[float]] = OrderedDict()

    def filter(self, record: logging.LogRecord) -> bool:
        now = self.clock()
        key = (record.name, str(record.msg))
        window = self._windows.setdefault(key, [now, 0, 0])
        self._windows.move_to_end(key)
        while len(self._windows) > self.MAX_KINDS:
            self._windows.popitem(last=False)
        if now - window[0] >= self.every:
            dropped, since = int(window[2]), round(now - window[0])
            window[:] = [now, 0, 0]
            if dropped:
                record.msg = f"{record.msg} ({dropped} more in {since} s)"
        if window[1] >= self.burst:
            window[2] += 1
            return False
        window[1] += 1
        return True


THROTTLED_LOGGERS: Final = ("uvicorn.error", "moderator.serve", "moderator.transports.sms",
                            "moderator.transports.telegram")
"""Loggers with lines any stranger can cause: a bad request, a refused signature or secret token."""


def install_throttle(loggers: Iterable[str] = THROTTLED_LOGGERS, every: float = 60.0, burst: int = 5) -> Throttle:
    """Put one ``Throttle`` on these loggers; returns it."""
    throttle = Throttle(every, burst)
    for name in loggers:
        logger = logging.getLogger(name)
        if not any(isinstance(f, Throttle) for f in logger.filters):
            logger.addFilter(throttle)
    return throttle


_refusal_log = RateLimitedLog(log)
"""Refused requests (another origin): a flood of them is a handful of lines a minute."""
