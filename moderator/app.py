"""The one wiring point: the channels, the service, delivery and the web server, for every command.

``CHANNELS`` lists every channel module's spec; a new channel (Discord, Signal, Matrix) is one module under
``moderator/transports/`` that exports ``SPEC`` and one line here (docs/channels.md). Every command that runs
channels is the same machinery (``run``) with its own ``Entry``: which channels of the list it may start (each
starts only if the settings turn it on), whether a web server runs, what it changes in the settings.
``running`` is that machinery: one ``Service`` on the event loop's thread takes every input, each channel that is
on starts, the tables resume, reminders tick, and each channel's outbox is delivered on a thread of its own with
its own store connection. Under a web server (``serve``, ``sms``, ``play --web``) it is ``create_app``'s lifespan,
with the channels' routes, the join page and ``/healthz``; without one (``telegram``, ``play``) the command lasts as
long as its channels' foreground (``Running.main``: long polling, the game at the terminal).

Routes of the wiring itself:

- ``GET /healthz``: database reachable and writable, catalogs and fonts loaded, outbox backlog, version, each
  channel's state (up, retrying, refused; for this machine; anyone else learns only ok or not).
- ``GET /join/<code>``: every way to take a seat at a table (links and QR codes; the browser's form if it is on),
  under the service's guessing limit per client.

Every request passes the guards of ``moderator.guard`` first (``create_app``'s middleware): the trusted proxy's
headers, security headers, the Origin check for pages, body limits as bodies stream. ``serve`` runs it under
``moderator.httpserver``'s guarded uvicorn (connection limits and timeouts that never refuse a webhook).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
import signal
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from . import record as records
from .board import font_problems
from .catalog import problems as catalog_problems
from .channels import (
    Channel,
    ChannelSpec,
    ChannelState,
    Delivery,
    JoinWay,
    Pages,
    Problem,
    Receipt,
    Running,
    Status,
    Vouched,
)
from .commands import Inbound
from .delivery import Inline, Sender, Worker
from .guard import (
    OriginCheck,
    SecurityHeaders,
    StreamingBodyLimit,
    TrustedProxies,
    client_key,
    install_redaction,
    install_throttle,
    public_health,
    quiet_third_party_loggers,
    secret_values,
    trusted_proxies_setting,
)
from .qr import qr_text
from .service import Service
from .settings import Settings
from .store import SerialStore, Store, WriteWatch, storage_fault
from .supervisor import Supervisor
from .transports import console, sms, telegram, web, whatsapp

if TYPE_CHECKING:
    from .httpserver import GuardedServer  # imported when serving: it brings uvicorn

log = logging.getLogger("moderator.serve")
actions_log = logging.getLogger("moderator.actions")

CHANNELS: Final[tuple[ChannelSpec, ...]] = (telegram.SPEC, sms.SPEC, whatsapp.SPEC, web.SPEC, console.SPEC)
"""Every channel, for every command (each ``Entry`` selects from it; the settings turn each on or off)."""
KEEP_ALIVE: Final = 75
"""Seconds an idle HTTP connection stays open (``httpserver.Limits.keep_alive`` under ``serve``)."""
HEALTH_PATH: Final = "/healthz"
_CODE: Final = re.compile(r"[A-Z0-9]{3,12}")


def version() -> str:
    """The installed package's version."""
    try:
        return metadata.version("moderator")
    except metadata.PackageNotFoundError:  # run from a checkout without installing: read pyproject.toml
        import tomllib

        try:
            project = tomllib.loads((Path(__file__).resolve().parent.parent / "pyproject.toml").read_text())
            return str(project["project"]["version"])
        except (OSError, KeyError, tomllib.TOMLDecodeError):
            return "unknown"


def log_action(inbound: Inbound, receipt: Receipt, seconds: float) -> None:
    """One structured line per handled input: channel, table, kind, outcome, ms. Never a secret: no address,
    text, role, card or token, only the kind of command."""
    outcome = "duplicate" if receipt.duplicate else "applied" if receipt.applied else "answered"
    fields = {
        "channel": inbound.channel,
        "table": receipt.tables[0] if receipt.tables else None,
        "kind": type(inbound.command).__name__,
        "outcome": outcome,
        "ms": round(seconds * 1000, 1),
    }
    actions_log.info("action %s", json.dumps(fields, separators=(",", ":")))


# --- the runtime channels see --------------------------------------------------------------------------------


@dataclass
class Wiring:
    """What channels get while they run (``channels.Runtime``): the service, delivery, each other's ways in."""

    service: Service
    settings: Settings
    store_factory: Callable[[], Store]
    time: Callable[[], float] = time.time
    deliver: bool = True
    """False: nothing is delivered in the background (tests deliver by hand)."""
    deliver_every: float = 0.5
    """Seconds between two delivery rounds when nothing new was queued (retries, paced messages)."""
    networks: Mapping[str, Any] = field(default_factory=dict)
    inline: bool = False
    """Every delivery runs inline (``Runtime.delivery``): the store is in memory, no second connection sees it."""
    running: dict[str, Running] = field(default_factory=dict)
    workers: list[Worker] = field(default_factory=list)
    supervisor: Supervisor | None = None
    """Each channel's start, foreground, state and stop (``running`` makes it)."""

    @property
    def port(self) -> Service:
        return self.service

    def clock(self) -> float:
        return self.time()

    @property
    def pages(self) -> Pages:
        return self.service.pages

    def delivery(self, name: str, channel: Channel, *,
                 after_round: Callable[[], Awaitable[int]] | None = None, inline: bool = False) -> Delivery:
        if inline or self.inline:
            return Inline(Sender(self.service.store, {name: channel}, clock=self.time),
                          not_sent=self.service.not_sent)
        worker = Worker(self.store_factory, {name: channel}, clock=self.time, after_round=after_round,
                        interval=self.deliver_every, name=f"{name}-sender", not_sent=self.service.not_sent,
                        report=self.report)
        self.workers.append(worker)
        if self.deliver:
            worker.start()
            self.service.observers.append(lambda table_id: worker.kick())
        return worker

    def join_ways(self, code: str) -> list[JoinWay]:
        return [way for running in self.running.values() for way in running.join_ways(code)]

    def screen_url(self, table_id: str) -> str | None:
        if not self.settings.web or not self.settings.public_url:
            return None
        return f"{self.settings.public_url}/table/{table_id}"

    def app_url(self, table_id: str) -> str | None:
        public = self.settings.public_url
        if not self.settings.web or not public or not public.startswith("https://"):
            return None
        return f"{public}{web.APP_PATH}{table_id}"

    def vouch(self, signed: str) -> Vouched | None:
        for running in list(self.running.values()):
            if running.vouch is not None and (vouched := running.vouch(signed)) is not None:
                return vouched
        return None

    def network(self, name: str) -> Any:
        return self.networks.get(name)

    def report(self, name: str, problem: Problem | None) -> None:
        if self.supervisor is not None:
            self.supervisor.report(name, problem)

    def states(self) -> dict[str, ChannelState]:
        """Each channel the settings turn on, with its state."""
        return self.supervisor.states() if self.supervisor is not None else {}

    async def stop(self) -> None:
        for worker in self.workers:
            await worker.stop()


# --- the web server ------------------------------------------------------------------------------------------


class Durable:
    """ASGI middleware: a response starts only once what its request wrote is committed (``SerialStore.durable``),
    so an answered webhook survives a crash; if that commit failed the answer is 503 and the sender retries."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        failed = False

        async def durable_send(message: Any) -> None:
            nonlocal failed
            if failed:
                return
            if message["type"] == "http.response.start":
                store = getattr(scope["app"].state, "store", None)
                if isinstance(store, SerialStore):
                    try:
                        await store.durable()
                    except Exception:
                        failed = True
                        if scope.get("method") == "POST" and message.get("status", 200) < 500:
                            store.writes.refused()  # an input refused: counted in the fault's last line
                        # Said as the browser channel says a tap was not saved (``web.not_saved``): its pages
                        # ask the player to tap again; a webhook's sender retries by itself.
                        await send({"type": "http.response.start", "status": 503,
                                    "headers": [(b"content-length", b"0"), (b"cache-control", b"no-store"),
                                                (b"retry-after", str(web.NOT_SAVED_RETRY).encode()),
                                                (web.NOT_SAVED_HEADER.lower().encode(), b"1")]})
                        await send({"type": "http.response.body", "body": b""})
                        return
            await send(message)

        await self.app(scope, receive, durable_send)


@contextlib.asynccontextmanager
async def running(
    settings: Settings,
    channels: Sequence[ChannelSpec],
    *,
    store_factory: Callable[[], Store],
    clock: Callable[[], float] = time.time,
    deliver: bool = True,
    deliver_every: float = 0.5,
    tick_every: float = 5.0,
    network: Mapping[str, Any] | None = None,
    inline: bool = False,
    needed: bool = False,
    **service_options: Any,
) -> AsyncIterator[Wiring]:
    """The machinery of every command, while the context is open: the service on this loop, each of ``channels``
    that the settings turn on started (``Supervisor``: one whose provider cannot be reached is started again later,
    one whose provider refuses its credentials stays off, the others go on), the tables resumed, reminders ticking,
    then each channel's foreground (``Running.main``) begun; at the end all of it stopped, foregrounds first.
    ``inline``: the store is in memory, so every delivery runs inline. ``needed``: the command is for these
    channels only, and is over (``Supervisor.over``, exit 2) once every one of them is refused."""
    on = [spec for spec in channels if spec.off(settings) is None]
    writes = WriteWatch(logging.getLogger("moderator.store"))
    """Every connection of this run says how writing goes to the same watch: a full disk is one fault, said once."""

    def watched() -> Store:
        store = store_factory()
        store.writes = writes
        return store

    store = watched()
    service = Service(store, clock=clock, capabilities={s.name: s.capabilities for s in on}, **service_options)
    service.handled.append(log_action)
    if isinstance(store, SerialStore):
        store.group_commits(service.forget)
    wiring = Wiring(service, settings, watched, time=clock, deliver=deliver, deliver_every=deliver_every,
                    networks=network or {}, inline=inline)
    supervisor = wiring.supervisor = Supervisor(wiring, log, needed=needed)
    loop = asyncio.get_running_loop()
    stack = contextlib.AsyncExitStack()
    try:
        stack.push_async_callback(supervisor.stop)
        for spec in on:
            await supervisor.start(spec)
        resumed = service.resume_all()
        service.returned()
        stack.push_async_callback(_cancel, loop.create_task(_ticks(service, tick_every)))
        supervisor.begin()
        if not supervisor.over.is_set():
            states = supervisor.states()
            up = ", ".join(name for name, state in states.items() if state is ChannelState.UP) or "none"
            others = "".join(f"; {state.value}: {', '.join(n for n, s in states.items() if s is state)}"
                             for state in (ChannelState.RETRYING, ChannelState.REFUSED) if state in states.values())
            if settings.server:
                where = settings.public_url or f"http://{settings.host}:{settings.port} (MODERATOR_PUBLIC_URL not set)"
                log.info("moderator %s serving on %s; channels on: %s%s", version(), where, up, others)
            else:
                log.info("moderator %s running without a web server; channels on: %s%s; %d tables under way; "
                         "Ctrl-C stops", version(), up, others, len(resumed))
            for spec in channels:
                reason = spec.off(settings)
                if reason is not None:
                    log.info("%s is off: %s", spec.name, reason)
        yield wiring
    finally:
        await stack.aclose()
        await wiring.stop()
        with contextlib.suppress(Exception):  # a disk that cannot be written: the next start re-prompts
            service.stopping()
        if settings.record is not None:
            keep_record(service, store, settings.record)
        backlog = -1
        with contextlib.suppress(Exception):
            backlog = store.backlog()
        store.close()
        log.info("stopped; %d messages wait in the outbox for the next start", backlog)


def keep_record(service: Service, store: Store, path: Path) -> None:
    """Write the record of the latest game there is to ``path`` (``moderator replay`` reads it), if that game is
    over: a game under way holds every secret."""
    games = store.games(1)
    if not games:
        return
    table_id, game = games[0][0], games[0][1]
    exported = service.export(table_id, game) if service.game_over(table_id) else None
    if exported is not None:
        try:
            path.write_text(records.dumps(exported), encoding="utf-8")
        except OSError as exc:  # its folder went away during the game: said in a line, never a traceback
            log.error("could not write the game's record to %s: %s", path, exc.strerror or exc)


def create_app(
    settings: Settings,
    *,
    channels: Sequence[ChannelSpec] = CHANNELS,
    store_factory: Callable[[], Store] | None = None,
    network: Mapping[str, Any] | None = None,
    clock: Callable[[], float] = time.time,
    deliver: bool = True,
    deliver_every: float = 0.5,
    tick_every: float = 5.0,
    needed: bool = False,
    **service_options: Any,
) -> Starlette:
    """The web server of every channel that is on, ``running`` in its lifespan. ``network`` replaces a channel's
    network in tests (by channel name: a PTB ``BaseRequest`` for Telegram, a twilio ``HttpClient`` for SMS);
    ``deliver=False`` starts no delivery (the outbox waits). ``needed``: once every channel is refused the server
    stops by itself, through ``app.state.shutdown`` if the server set one, and ``app.state.status`` is 2."""
    factory = store_factory or (lambda: SerialStore(settings.db_path))
    on = [spec for spec in channels if spec.off(settings) is None]
    routes: list[BaseRoute] = [
        Route(HEALTH_PATH, healthz, methods=["GET"]),
        Route("/join/{code}", join_page, methods=["GET"]),
    ]
    for spec in on:
        routes.extend(spec.routes(settings))

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        missing = catalog_problems() + font_problems()
        if missing:  # said at start, then by every health check: a board without its fonts or Raqm draws worse
            log.error("start-up: %s", "; ".join(missing))
        async with running(settings, channels, store_factory=factory, clock=clock, deliver=deliver,
                           deliver_every=deliver_every, tick_every=tick_every, network=network, needed=needed,
                           **service_options) as wiring:
            state = app.state
            state.store, state.service, state.settings = wiring.service.store, wiring.service, settings
            state.channels, state.wiring = wiring.running, wiring
            assert wiring.supervisor is not None
            over = asyncio.get_running_loop().create_task(_stop_when_over(app, wiring.supervisor))
            try:
                yield
            finally:
                await _cancel(over)

    from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware  # here: a console game needs no uvicorn

    hooks = webhook_limits(settings, on)
    trusted = trusted_proxies_setting(settings.env)
    app = Starlette(routes=routes, lifespan=lifespan, middleware=[
        # Outermost, so every guard sees the client and the scheme the trusted proxy reported (and only its).
        Middleware(ProxyHeadersMiddleware, trusted_hosts=trusted),
        # Only a seat's page in Telegram may be framed, and by Telegram's web client only.
        Middleware(SecurityHeaders, framed=web.FRAMED if web.SPEC.off(settings) is None else {}),
        Middleware(OriginCheck, exempt=tuple(hooks), public_url=settings.public_url),
        Middleware(StreamingBodyLimit, limits=hooks),
        Middleware(Standby, webhooks={spec.name: tuple(spec.webhooks(settings)) for spec in on}),
        Middleware(Durable),
    ])
    app.state.trusted = TrustedProxies.parse(trusted)
    app.state.status = 0
    return app


async def _stop_when_over(app: Starlette, supervisor: Supervisor) -> None:
    """A server for some channels only (``moderator sms``) stops by itself once every one of them is refused."""
    await supervisor.over.wait()
    app.state.status = supervisor.status
    shutdown: Callable[[], None] | None = getattr(app.state, "shutdown", None)
    if shutdown is not None:
        shutdown()


class Standby:
    """ASGI middleware: a provider's webhook for a channel that is not running now (its provider cannot be reached
    yet, or refused its credentials) is answered 503 with ``Retry-After``, which a provider retries, rather than
    reaching a route whose channel is not there."""

    def __init__(self, app: Any, webhooks: Mapping[str, Sequence[str]]) -> None:
        self.app = app
        self.owner = {path: name for name, paths in webhooks.items() for path in paths}

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        name = self.owner.get(scope.get("path", "")) if scope["type"] == "http" else None
        if name is not None and name not in getattr(scope["app"].state, "channels", {}):
            await send({"type": "http.response.start", "status": 503,
                        "headers": [(b"content-length", b"0"), (b"retry-after", b"30"),
                                    (b"cache-control", b"no-store")]})
            await send({"type": "http.response.body", "body": b""})
            return
        await self.app(scope, receive, send)


def webhook_limits(settings: Settings, channels: Sequence[ChannelSpec]) -> dict[str, int]:
    """The webhooks of the channels that are on (``ChannelSpec.webhooks``), each with its body limit."""
    return {path: limit for spec in channels if spec.off(settings) is None
            for path, limit in spec.webhooks(settings).items()}


async def _cancel(task: asyncio.Task[Any]) -> None:
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)


async def _ticks(service: Service, every: float) -> None:
    """Reminders that fall due."""
    while True:
        await asyncio.sleep(every)
        try:
            service.tick()
        except Exception as exc:
            if not storage_fault(exc):  # a disk that cannot be written is said once, by the store
                log.exception("reminders failed; trying again")


async def healthz(request: Request) -> Response:
    """Database reachable and writable, words and fonts loaded, outbox backlog, version and each channel's state (up,
    retrying, refused): all of it for a request from this machine, only ``{"ok": ...}`` for anyone else
    (``guard.public_health``). Ok means all of it works: any of them not is 503."""
    state = request.app.state
    wiring: Wiring = state.wiring
    channels = {name: value.value for name, value in sorted(wiring.states().items())}
    report: dict[str, object] = {"ok": False, "version": version(), "channels": channels}
    missing = catalog_problems() + font_problems()
    if missing:
        # Every message would fail (no catalog), or the board would lose its accents (no font) or draw Persian
        # unjoined (no Raqm): not healthy.
        log.error("health check: %s", "; ".join(missing))
        return _health(request, {**report, "messages": "missing"}, 503)
    store: Store = state.store
    try:
        store.execute("SELECT 1").fetchone()
        backlog = store.backlog()
    except Exception as exc:
        if not store.writes.failed(exc):  # a disk's fault is said once, when it begins
            log.error("health check: database unreachable: %s", exc)
        return _health(request, {**report, "database": "unreachable"}, 503)
    report["outbox_backlog"] = backlog
    # Every check says it while writes fail, whatever its own write found (that stands for a moment).
    if not await _writable(state) or store.writes.failing:
        return _health(request, {**report, "database": "not writable",
                                 "inputs_refused": store.writes.refused_meanwhile}, 503)
    report["database"] = "ok"
    if any(value != ChannelState.UP.value for value in channels.values()):
        return _health(request, report, 503)
    return _health(request, {**report, "ok": True})


WRITE_CHECK_EVERY: Final = 2.0
"""Seconds a health check's write stands for: a flood of ``/healthz`` costs at most one commit per this."""


async def _writable(state: Any) -> bool:
    """True if the heartbeat, written and committed, went in (a full or read-only disk says no here); the answer
    stands for ``WRITE_CHECK_EVERY`` seconds."""
    checked: tuple[float, bool] | None = getattr(state, "write_checked", None)
    now = time.monotonic()
    if checked is not None and now - checked[0] < WRITE_CHECK_EVERY:
        return checked[1]
    store: Store = state.store
    try:
        with store.transaction():
            store.alive(state.wiring.time())
        if isinstance(store, SerialStore):
            await store.durable()
        ok = True
    except Exception as exc:
        if not store.writes.failed(exc):  # a disk's fault is said once, when it begins
            log.error("health check: the database cannot be written: %s", exc)
        ok = False
    state.write_checked = (now, ok)
    return ok


def _health(request: Request, report: dict[str, object], status: int = 200) -> Response:
    return JSONResponse(public_health(report, request.scope), status_code=status)


async def join_page(request: Request) -> Response:
    """The ways to take a seat at the table with this join code; for any other code (or one that takes nobody
    now) 404, a page that says what to do in the browser's language; 429 for every code once this client has
    tried too many unknown ones (``Pages.join_attempt``)."""
    code = str(request.path_params.get("code", "")).strip().upper()
    state = request.app.state
    wiring: Wiring = state.wiring
    table = wiring.pages.table_by_code(code) if _CODE.fullmatch(code) else None
    wait = wiring.pages.join_attempt(client_key(request.scope, state.trusted), table is not None)
    if wait > 0:
        return web.try_again(request, wait)
    if table is None:
        return web.stale_code(request, "join")
    ways = [way for name, running in wiring.running.items() if name != web.CHANNEL for way in running.join_ways(code)]
    browser = web.CHANNEL in wiring.running and table.status is Status.LOBBY
    if not ways and not browser:
        return web.stale_code(request, "join")
    return web.join_page(request, code, table.theme, ways, wiring.pages.limits(), browser=browser)


def _logging() -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    # httpx logs every request's URL at INFO, and a Bot API URL holds the bot's token.
    logging.getLogger("httpx").setLevel(logging.WARNING)


def safe_logs(settings: Settings) -> None:
    """Once logging is set up (uvicorn's included): no key or token in any line (the settings' keys hidden wherever
    they appear, tracebacks too), the libraries at WARNING (``MODERATOR_LOG_LEVEL=debug`` for everything), and lines
    a stranger can cause at most a few a minute."""
    quiet_third_party_loggers(settings.env)
    install_redaction(secrets=secret_values(settings.env))
    install_throttle()


def guarded(app: Starlette, settings: Settings, channels: Sequence[ChannelSpec] = CHANNELS,
            **options: Any) -> GuardedServer:
    """``app`` under ``httpserver.GuardedServer`` at the settings' address: connection limits and timeouts, the
    webhooks of the channels that are on and ``/healthz`` never refused for load, and the logs made safe
    (``options`` go to uvicorn's ``Config``). The proxy headers are ``create_app``'s to read, from the trusted
    proxies only."""
    from .httpserver import guarded_server

    exempt = (*webhook_limits(settings, channels), HEALTH_PATH)
    server = guarded_server(app, host=settings.host, port=settings.port, exempt=exempt, proxy_headers=False,
                            trusted_proxies=trusted_proxies_setting(settings.env), **options)
    safe_logs(settings)  # uvicorn's Config has just set up its loggers
    return server


def stop_streams_on_exit(server: Any, app: Starlette) -> None:
    """Make a uvicorn server end the browser channel's event streams as it begins to stop (else it waits for
    them to end by themselves)."""
    handle_exit = server.handle_exit

    def handle(*args: Any) -> None:
        running = getattr(app.state, "channels", {}).get(web.CHANNEL)
        if running is not None:
            running.state.close()
        handle_exit(*args)
        # uvicorn raises the signal again once it has stopped, so a clean SIGTERM would exit 143; a stop asked
        # for by the service manager is a clean one (exit 0). Ctrl-C still ends as an interrupt.
        captured = getattr(server, "_captured_signals", None)
        if isinstance(captured, list) and signal.SIGTERM in captured:
            captured.remove(signal.SIGTERM)

    server.handle_exit = handle


# --- the commands ----------------------------------------------------------------------------------------------


def _as_they_are(settings: Settings) -> Settings:
    return settings


@dataclass(frozen=True, slots=True)
class Entry:
    """One ``moderator`` command that runs channels: the same machinery for each (``run``), with its own selection
    of ``CHANNELS`` and its own changes to the settings."""

    name: str
    channels: frozenset[str] | None = None
    """The channels it may start (None: every one in the list); each starts only if the settings turn it on."""
    server: bool = True
    """A web server runs the channels' routes (``Settings.server``); False: they reach their providers themselves
    (long polling) or need no network (the terminal), and the command lasts as long as their foreground."""
    memory: bool = False
    """Its games live in memory only: nothing is written to disk (a game at the terminal)."""
    logs: bool = True
    """Log lines go to the terminal (a server's); False: the terminal is the table's, or shows its addresses."""
    prepare: Callable[[Settings], Settings] = _as_they_are
    """What the command changes in the settings (``sms`` prints join codes, ``play --web`` serves the LAN)."""
    opening: Callable[[Settings], None] | None = None
    """Done once before the channels start (``play --web`` opens the table and prints where to find it)."""

    def select(self, channels: Sequence[ChannelSpec]) -> list[ChannelSpec]:
        """The channels of ``channels`` this command may start."""
        return [spec for spec in channels if self.channels is None or spec.name in self.channels]

    def settings(self, settings: Settings) -> Settings:
        """The settings as this command runs with them."""
        return self.prepare(settings).but(server=self.server)


def lan_address() -> str:
    """This machine's address on the local network (the one a route to elsewhere would leave from); no packet
    is sent. Loopback when there is no network."""
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("10.255.255.255", 1))
            return str(probe.getsockname()[0])
        except OSError:
            return "127.0.0.1"


def on_the_lan(settings: Settings) -> Settings:
    """``play --web``'s settings: the browser channel on, reached at this machine's LAN address unless
    ``MODERATOR_PUBLIC_URL`` says otherwise (then providers on the internet reach it too)."""
    host = settings.host
    lan = lan_address() if host in ("0.0.0.0", "::") else host
    # Phones reach this laptop at its LAN address, whatever address the host's own browser uses. A provider's
    # webhook needs a public HTTPS address: without one configured, the channels that need one stay off.
    return settings.but(web=True, public_url=settings.public_url or f"http://{lan}:{settings.port}",
                        lan=settings.public_url is None)


def host_on_this_device(settings: Settings) -> None:
    """``play --web``: open the table hosted by this machine's browser and print where to find it: the join QR
    code for phones, the table screen, the host's page (with its key: keep it to this device)."""
    table = settings.table
    assert table is not None and settings.public_url is not None
    store = Store(settings.db_path)
    try:
        service = Service(store, capabilities={web.CHANNEL: web.CAPABILITIES})
        opened = web.open_table(service.pages, name=table.name or "", play=table.name is not None,
                                theme=table.theme, lang=table.language)
        if opened is None:
            raise ValueError(f"could not open a table with theme {table.theme!r}")
        table_id, key = opened
        info = service.pages.table_info(table_id)
        assert info is not None
        code = info.code
    finally:
        store.close()
    public = settings.public_url
    join_url = f"{public}/join/{code}"
    print(qr_text(join_url))
    print(f"Phones join: {join_url}   (code {code})")
    print(f"Table screen: {public}/table/{table_id}")
    print(f"Host, on this device only: http://127.0.0.1:{settings.port}/host/{table_id}?key={key}")
    print("Computer players can fill empty seats from the host page. Ctrl-C stops.", flush=True)


SERVE: Final = Entry("serve")
"""Every channel that is on, in one web server: webhooks, pages, ``/healthz``, ``/join/CODE``."""
SMS: Final = Entry("sms", frozenset({sms.CHANNEL}), prepare=lambda settings: settings.but(print_join_codes=True))
"""The SMS channel alone, printing each table's join QR code as it opens."""
TELEGRAM: Final = Entry("telegram", frozenset({telegram.CHANNEL}), server=False)
"""The Telegram bot alone, without a web server: it polls Telegram for updates."""
PLAY: Final = Entry("play", frozenset({console.CHANNEL}), server=False, memory=True, logs=False)
"""A table in this terminal, with computer players."""
PLAY_WEB: Final = Entry("play --web", logs=False, prepare=on_the_lan, opening=host_on_this_device)
"""A table hosted by this machine, served to browsers on the local network (and every other channel that is on)."""


def channels_off(settings: Settings, entry: Entry, channels: Sequence[ChannelSpec] = CHANNELS) -> list[str]:
    """Why each channel the command may start stays off with these settings ("telegram is off: it needs ...")."""
    settings = entry.settings(settings)
    reasons = ((spec.name, spec.off(settings)) for spec in entry.select(channels))
    return [f"{name} is off: {reason}" for name, reason in reasons if reason is not None]


def run(settings: Settings, entry: Entry, *, channels: Sequence[ChannelSpec] = CHANNELS, **options: Any) -> int:
    """Run one command until it is stopped (SIGTERM, Ctrl-C) or, without a web server, until its channels'
    foreground ends; returns the exit status: 2 when the command is for some channels only and every one of them
    was refused (a wrong token: one line says which setting). ``options`` go to ``running`` (and on to the
    ``Service``)."""
    settings = entry.settings(settings)
    chosen = entry.select(channels)
    options.setdefault("needed", entry.channels is not None)
    if entry.opening is not None:
        entry.opening(settings)
    if entry.logs:
        _logging()
    if not entry.server:
        if entry.logs:
            safe_logs(settings)
        return _on_a_loop(_without_server(settings, chosen, memory=entry.memory, **options))
    app = create_app(settings, channels=chosen, **options)
    server = guarded(app, settings, chosen, log_level="info" if entry.logs else "warning",
                     timeout_graceful_shutdown=30)
    stop_streams_on_exit(server, app)
    app.state.shutdown = lambda: setattr(server, "should_exit", True)
    if entry.logs:
        log.info("listening on %s port %d", settings.host, settings.port)  # uvicorn's own line is below WARNING
    server.run()
    return int(app.state.status)


def serve(settings: Settings) -> int:
    """``moderator serve``: the guarded uvicorn until SIGTERM or Ctrl-C (the request in hand finishes first)."""
    return run(settings, SERVE)


async def _without_server(settings: Settings, channels: Sequence[ChannelSpec], *, memory: bool,
                          **options: Any) -> int:
    """The channels run until the first foreground ends (the game at the terminal; polling that fails), every
    channel is refused (exit 2), or SIGTERM; a foreground's failure is the command's. A channel whose provider
    cannot be reached yet is waited for."""
    if memory:
        games = Store(memory=True)
        factory: Callable[[], Store] = lambda: games  # noqa: E731  # one connection: deliveries run inline
    else:
        factory = lambda: Store(settings.db_path)  # noqa: E731  # each delivery thread opens its own
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    with contextlib.suppress(NotImplementedError, RuntimeError):  # no signals off the main thread
        loop.add_signal_handler(signal.SIGTERM, stop.set)
    try:
        async with running(settings, channels, store_factory=factory, inline=memory, **options) as wiring:
            assert wiring.supervisor is not None
            stopped: asyncio.Task[object] = loop.create_task(stop.wait())
            over: asyncio.Task[int] = loop.create_task(wiring.supervisor.wait())
            try:
                await asyncio.wait({over, stopped}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                stopped.cancel()
            if over.done():
                return over.result()  # a foreground that failed fails the command
            await _cancel(over)
    finally:
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.remove_signal_handler(signal.SIGTERM)
    return 0


def _on_a_loop(main: Coroutine[Any, Any, int]) -> int:
    """``main`` on a new event loop. Ctrl-C is an interrupt, as in any program (a terminal's read included):
    ``main`` is cancelled, so that every channel stops cleanly, and the interrupt goes on to the caller."""
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    task = loop.create_task(main)
    try:
        return loop.run_until_complete(task)
    except KeyboardInterrupt:
        task.cancel()
        with contextlib.suppress(BaseException):
            loop.run_until_complete(task)
        raise
    finally:
        with contextlib.suppress(Exception):
            loop.run_until_complete(loop.shutdown_asyncgens())
        asyncio.set_event_loop(None)
        loop.close()
