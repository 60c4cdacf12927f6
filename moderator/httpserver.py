"""uvicorn with no proxy in front: a flood of slow clients costs a bounded number of files and never the webhooks.

The design: one listener, and a small subclass of uvicorn's h11 protocol that knows what each connection is
doing. A connection is either *waiting* (for its request line and headers, for the rest of its body, idle between
two requests, or stalled writing to a client that does not read) or *working* (its request is in, the app is
answering). Waiting is cheap to end and costs only the client who waits, so:

- a request's headers must be complete within ``header_timeout`` of the connection (or of the request's first
  byte on a kept-alive connection), and its body may stall ``body_idle_timeout`` and take ``body_timeout`` in
  all; a response that cannot be written for ``write_timeout`` ends the connection (uvicorn has none of these:
  its keep-alive timer is cancelled by any byte, so one byte every few seconds holds a connection forever);
- at most ``max_connections`` connections are open; one more evicts the connection that has been waiting the
  longest (a slow-loris client, usually), and only if every connection is working is the new one closed;
- requests to anything but ``exempt`` paths (the webhooks and ``/healthz``) are answered 503 with
  ``Retry-After`` while ``max_browser_requests`` of them are in hand (uvicorn's ``limit_concurrency`` would
  answer the webhooks 503 too).

A webhook's request arrives whole in one or two packets, so it is working within milliseconds and never evicted:
the flood evicts itself. Why not a second listener for the webhooks: Telegram calls only ports 443, 80, 88 and
8443, anyone can find the other port, and then its connections fill up just the same.

What it does not bound: TLS handshakes under way when uvicorn terminates TLS itself (the protocol exists only
once the handshake is done). ``handshake_timeout`` bounds how long each lasts; behind a flood of those, terminate
TLS in a proxy. ``backlog`` bounds how many connections asyncio accepts in one go, before any is counted.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import sys
from collections import OrderedDict
from collections.abc import Collection
from dataclasses import dataclass, replace
from http import HTTPStatus
from typing import Any, Final, cast

import h11
import uvicorn
from starlette.types import ASGIApp, Receive, Scope, Send
from uvicorn.config import STARTUP_FAILURE
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.server import ServerState

from .guard import DEFAULT_TRUSTED_PROXIES, RateLimitedLog, path_matches, retry_after

log = logging.getLogger("moderator.http")

WEBHOOK_PATHS: Final = ("/telegram", "/sms", "/healthz")
"""Never refused for load: the signed webhooks (``/sms`` covers ``/sms/status``) and the health check a container
runtime restarts the server over. (The default; ``app.guarded`` passes the webhooks of the channels that are on.)"""


@dataclass(frozen=True, slots=True)
class Limits:
    """How many connections and how long each may wait."""

    max_connections: int = 2000
    """Open client connections at most (each one file). Keep well under ``LimitNOFILE`` (8,192 in the unit)."""
    max_browser_requests: int = 1000
    """Requests in hand outside ``exempt`` paths (event streams among them: ``StreamSlots`` caps those at 800)."""
    header_timeout: float = 10.0
    """Seconds from the connection (or a kept-alive request's first byte) to its last header line."""
    body_idle_timeout: float = 10.0
    """Seconds a request body may stall."""
    body_timeout: float = 30.0
    """Seconds a request body may take in all (a webhook's takes milliseconds; a phone's form, a few)."""
    write_timeout: float = 30.0
    """Seconds a response may wait for a client that reads nothing."""
    keep_alive: int = 75
    """Seconds an idle connection stays open (more than a proxy's 60 s, so a proxy never reuses a closed one)."""
    handshake_timeout: float = 10.0
    """Seconds a TLS handshake may take, when uvicorn terminates TLS (asyncio's default is 60)."""
    backlog: int = 256
    """The listen queue, and the connections asyncio accepts in one go before any is counted."""
    retry_after: float = 5.0
    """What a 503 for load tells the browser."""


FILE_RESERVE: Final = 128
"""Open files kept for everything but client connections: the database with its journal, the senders' connections to
Telegram and Twilio, the logs, the listener, the event loop's own."""


def raise_file_limit(ceiling: int = 65_536) -> int:
    """Raise this process's soft limit on open files to its hard one (at most ``ceiling``; no privilege needed:
    systemd's default is 1,024 soft and 524,288 hard); returns the soft limit now in force."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = ceiling if hard == resource.RLIM_INFINITY else min(hard, ceiling)
    if soft != resource.RLIM_INFINITY and soft < target:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    return ceiling if soft == resource.RLIM_INFINITY else int(soft)


def fit_to_files(limits: Limits, files: int) -> Limits:
    """``limits`` with as many connections as fit in ``files`` open files beside one accept batch (``backlog``) and
    ``FILE_RESERVE``: out of files, asyncio could accept nobody, and no waiting connection could be evicted."""
    room = files - FILE_RESERVE - limits.backlog
    if limits.max_connections <= room:
        return limits
    connections = max(16, room)
    return replace(limits, max_connections=connections,
                   max_browser_requests=min(limits.max_browser_requests, max(1, connections // 2)))


class ConnectionGuard:
    """The state the connections of one server share: who is open, who waits (oldest first), what was refused."""

    def __init__(self, limits: Limits = Limits(), exempt: Collection[str] = WEBHOOK_PATHS) -> None:
        self.limits = limits
        self.exempt = tuple(exempt)
        self.open: set[GuardedH11Protocol] = set()
        self.waiting: OrderedDict[GuardedH11Protocol, None] = OrderedDict()
        """The connections that may be evicted, the one waiting longest first."""
        self.browser_requests = 0
        self.evicted = self.refused = self.timed_out = self.busy = 0
        """Counts since the start (for tests and a future /healthz for localhost)."""
        self.log = RateLimitedLog(log)
        self._gated: tuple[ASGIApp, ASGIApp] | None = None

    def admit(self, connection: GuardedH11Protocol) -> bool:
        """Count a new connection in; at the limit evict the longest-waiting one. False: every one is working, so
        this one must close."""
        self.open.add(connection)
        while len(self.open) > self.limits.max_connections:
            if not self.waiting:
                self.forget(connection)
                self.refused += 1
                self.log.warning("refused", "refused a connection: %d are open and all working", len(self.open))
                return False
            victim = next(iter(self.waiting))
            self.forget(victim)
            self.evicted += 1
            self.log.warning("evicted", "closed a waiting connection to make room: %d are open", len(self.open))
            victim.end()
        return True

    def wait(self, connection: GuardedH11Protocol) -> None:
        """``connection`` waits (for its client) from now: it may be evicted, after those waiting longer."""
        if connection in self.open:
            self.waiting[connection] = None
            self.waiting.move_to_end(connection)

    def work(self, connection: GuardedH11Protocol) -> None:
        """``connection`` is answering a request: it is not to be evicted."""
        self.waiting.pop(connection, None)

    def forget(self, connection: GuardedH11Protocol) -> None:
        self.open.discard(connection)
        self.waiting.pop(connection, None)

    def is_exempt(self, path: str) -> bool:
        return any(path_matches(path, p) for p in self.exempt)

    def gate(self, app: ASGIApp) -> ASGIApp:
        """``app`` behind the cap on requests outside ``exempt`` paths (the same wrapper for every connection)."""
        if self._gated is not None and self._gated[0] is app:
            return self._gated[1]

        async def gated(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] != "http" or self.is_exempt(str(scope.get("path", ""))):
                await app(scope, receive, send)
                return
            if self.browser_requests >= self.limits.max_browser_requests:
                self.busy += 1
                self.log.warning("busy", "answered 503: %d page requests are in hand", self.browser_requests)
                body = HTTPStatus.SERVICE_UNAVAILABLE.phrase.encode()
                await send({"type": "http.response.start", "status": 503, "headers": [
                    (b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode()),
                    (b"retry-after", retry_after(self.limits.retry_after).encode()), (b"connection", b"close")]})
                await send({"type": "http.response.body", "body": body})
                return
            self.browser_requests += 1
            try:
                await app(scope, receive, send)
            finally:
                self.browser_requests -= 1

        self._gated = (app, gated)
        return gated


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with header, body and write timeouts, counted in a ``ConnectionGuard``."""

    def __init__(self, config: uvicorn.Config, server_state: ServerState, app_state: dict[str, Any], *,
                 guard: ConnectionGuard, _loop: asyncio.AbstractEventLoop | None = None) -> None:
        super().__init__(config, server_state, app_state, _loop)
        self.guard = guard
        self.app = cast(Any, guard.gate(cast(ASGIApp, self.app)))
        self._phase = "new"
        """new (no request yet), idle (between requests), head (a kept-alive request's headers are coming),
        body (its body is coming), work (the app answers)"""
        self._timer: asyncio.TimerHandle | None = None
        self._write_timer: asyncio.TimerHandle | None = None
        self._body_deadline = 0.0

    # the connection

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if not self.guard.admit(self):
            transport.abort()
            return
        self._arm(self.guard.limits.header_timeout, "its headers")
        self.guard.wait(self)

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)
        self._cancel()
        if self._write_timer is not None:
            self._write_timer.cancel()
        self.guard.forget(self)

    def end(self) -> None:
        """Close now, without flushing what a slow client does not read (evicted, or timed out)."""
        self._cancel()
        if self.transport is not None and not self.transport.is_closing():
            self.transport.abort()

    # what it is doing

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._sync(data=True)

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._sync()

    def send_400_response(self, msg: str) -> None:
        """uvicorn answers a malformed request (a bad chunk in a body) itself, around the app: the request the app
        is answering ends there for the app too. Its ``receive`` says the client is gone and what it sends goes
        nowhere (h11 refuses a second response: the guard's 413 for a body that grew past its limit in the same
        packet was a traceback); a response the app had begun is cut off instead of followed by a 400."""
        cycle = self.cycle
        if cycle is not None and not cycle.response_complete:
            cycle.disconnected = True
            cycle.message_event.set()
            if cycle.response_started:
                self.transport.close()
                return
        super().send_400_response(msg)

    def _sync(self, *, data: bool = False) -> None:
        """Follow h11's view of the client's side: waiting for a request, sending its body, or done."""
        if self.transport is None or self.transport.is_closing():
            return
        limits = self.guard.limits
        their = self.conn.their_state
        if their is h11.IDLE:
            if self._phase == "idle" and data:
                self._phase = "head"  # the next request began: its headers have header_timeout from now
                self._arm(limits.header_timeout, "its headers")
            elif self._phase in ("body", "work"):
                self._phase = "idle"
                self._arm(limits.keep_alive, "a next request")
                self.guard.wait(self)
        elif their is h11.SEND_BODY:
            if self._phase != "body":
                self._phase = "body"
                self._body_deadline = self.loop.time() + limits.body_timeout
                self.guard.wait(self)
            self._arm(min(limits.body_idle_timeout, self._body_deadline - self.loop.time()), "its body")
        elif self._phase != "work":
            self._phase = "work"
            self._cancel()
            if not self.flow.write_paused:
                self.guard.work(self)

    def pause_writing(self) -> None:
        super().pause_writing()
        if self._write_timer is None:
            self._write_timer = self.loop.call_later(self.guard.limits.write_timeout, self._expired, "reading")
        self.guard.wait(self)

    def resume_writing(self) -> None:
        super().resume_writing()
        if self._write_timer is not None:
            self._write_timer.cancel()
            self._write_timer = None
        if self._phase == "work":
            self.guard.work(self)

    # timers

    def _arm(self, seconds: float, what: str) -> None:
        self._cancel()
        self._timer = self.loop.call_later(max(0.0, seconds), self._expired, what)

    def _cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _expired(self, what: str) -> None:
        self._timer = None
        if what == "its body" and self.flow.read_paused and self.loop.time() < self._body_deadline:
            # Reading is paused by us (the app has not taken the last 64 KB yet): not the client's stall.
            self._arm(min(self.guard.limits.body_idle_timeout, self._body_deadline - self.loop.time()), what)
            return
        self.guard.timed_out += 1
        self.guard.log.info("timeout", "closed a connection that waited too long for %s", what)
        self.end()


class GuardedServer(uvicorn.Server):
    """``uvicorn.Server`` whose listeners make ``GuardedH11Protocol`` connections (with a TLS handshake timeout
    and a bounded accept batch) and whose accept errors (EMFILE) are rate-limited log lines, not a flood."""

    def __init__(self, config: uvicorn.Config, guard: ConnectionGuard | None = None) -> None:
        super().__init__(config)
        self.guard = guard or ConnectionGuard()

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await self.lifespan.startup()
        if self.lifespan.should_exit:
            sys.exit(STARTUP_FAILURE)
        config, loop = self.config, asyncio.get_running_loop()
        quiet_accept_errors(loop, self.guard.log)
        files = raise_file_limit()
        fitted = fit_to_files(self.guard.limits, files)
        if fitted != self.guard.limits:
            log.warning("this process may open %d files: at most %d connections (LimitNOFILE= allows more)", files,
                        fitted.max_connections)
            self.guard.limits = fitted

        def connection() -> asyncio.Protocol:
            return GuardedH11Protocol(config, self.server_state, self.lifespan.state, guard=self.guard, _loop=loop)

        tls: dict[str, Any] = (
            {"ssl": config.ssl, "ssl_handshake_timeout": self.guard.limits.handshake_timeout} if config.ssl else {}
        )
        listeners = sockets if sockets is not None else [config.bind_socket()]  # bind_socket logs the address
        self.servers = [await loop.create_server(connection, sock=sock, backlog=config.backlog, **tls)
                        for sock in listeners]
        self.started = True

    @property
    def port(self) -> int:
        """The port of the first listener (a test binds port 0)."""
        return int(self.servers[0].sockets[0].getsockname()[1])


def quiet_accept_errors(loop: asyncio.AbstractEventLoop, limited_log: RateLimitedLog) -> None:
    """Route asyncio's "socket.accept() out of system resource" (out of files: asyncio retries each second) to a
    rate-limited log line without its traceback; everything else goes where it went."""
    previous = loop.get_exception_handler()

    def handler(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        if str(context.get("message", "")).startswith("socket.accept()"):  # "... out of system resource"
            limited_log.warning("accept", "cannot accept connections: %s", context.get("exception"))
            return
        if previous is not None:
            previous(loop, context)
        else:
            loop.default_exception_handler(context)

    loop.set_exception_handler(handler)


def server_config(app: ASGIApp, *, host: str = "127.0.0.1", port: int = 8000, limits: Limits = Limits(),
                  trusted_proxies: str = DEFAULT_TRUSTED_PROXIES, proxy_headers: bool = True,
                  **options: Any) -> uvicorn.Config:
    """The uvicorn ``Config`` for ``GuardedServer``: h11, proxy headers from ``trusted_proxies`` only (addresses
    and CIDRs, as ``forwarded_allow_ips`` takes them; ``proxy_headers=False`` for an app that reads them itself,
    as ``create_app``'s does), the limits' keep-alive and backlog, no ``limit_concurrency`` (the guard does it
    without refusing webhooks)."""
    return uvicorn.Config(app, host=host, port=port, http="h11", ws="none", proxy_headers=proxy_headers,
                          forwarded_allow_ips=trusted_proxies, timeout_keep_alive=limits.keep_alive,
                          backlog=limits.backlog, limit_concurrency=None, **options)


def guarded_server(app: ASGIApp, *, limits: Limits = Limits(), exempt: Collection[str] = WEBHOOK_PATHS,
                   **options: Any) -> GuardedServer:
    """A ``GuardedServer`` for ``app`` (``options`` go to ``server_config``)."""
    return GuardedServer(server_config(app, limits=limits, **options), ConnectionGuard(limits, exempt))
