"""The one wiring point: the channels, the service, delivery and the web server, for every command.

``CHANNELS`` lists every channel module's spec; a new channel (Discord, Signal, Matrix) is one module under
``moderator/transports/`` that exports ``SPEC`` and one line here (docs/channels.md). ``create_app`` builds the web
server for ``moderator serve`` (and ``sms``, and ``play --web``) from the channels that are on: their routes, the
join page, ``/healthz``; in its lifespan one ``Service`` on the event loop's thread takes every input, and each
channel's outbox is delivered on a thread of its own with its own store connection.

Routes of the wiring itself:

- ``GET /healthz``: database reachable and writable, catalogs and fonts loaded, outbox backlog, version, channels
  on (for this machine; anyone else learns only ok or not).
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
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TextIO

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import BaseRoute, Route

from . import record as records
from .board import font_problems
from .catalog import problems as catalog_problems
from .channels import Channel, ChannelSpec, Delivery, JoinWay, Pages, Receipt, Running, Status
from .commands import Inbound
from .delivery import Sender, Worker
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
    trusted_proxies_setting,
)
from .qr import qr_text
from .service import Service
from .settings import Settings
from .store import SerialStore, Store
from .transports import console, sms, telegram, web

if TYPE_CHECKING:
    from .httpserver import GuardedServer  # imported when serving: it brings uvicorn

log = logging.getLogger("moderator.serve")
actions_log = logging.getLogger("moderator.actions")

CHANNELS: Final[tuple[ChannelSpec, ...]] = (telegram.SPEC, sms.SPEC, web.SPEC)
"""Every channel a server can run (the console is the terminal's own, for ``moderator play``)."""
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
    running: dict[str, Running] = field(default_factory=dict)
    workers: list[Worker] = field(default_factory=list)

    @property
    def port(self) -> Service:
        return self.service

    def clock(self) -> float:
        return self.time()

    @property
    def pages(self) -> Pages:
        return self.service.pages

    def delivery(self, name: str, channel: Channel, *,
                 after_round: Callable[[], Awaitable[int]] | None = None) -> Delivery:
        worker = Worker(self.store_factory, {name: channel}, clock=self.time, after_round=after_round,
                        interval=self.deliver_every, name=f"{name}-sender", not_sent=self.service.not_sent)
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

    def network(self, name: str) -> Any:
        return self.networks.get(name)

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
    **service_options: Any,
) -> Starlette:
    """The web server of every channel that is on. ``network`` replaces a channel's network in tests (by channel
    name: a PTB ``BaseRequest`` for Telegram, a twilio ``HttpClient`` for SMS); ``deliver=False`` starts no
    delivery (the outbox waits)."""
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
        store = factory()
        service = Service(store, clock=clock, capabilities={s.name: s.capabilities for s in on}, **service_options)
        service.handled.append(log_action)
        if isinstance(store, SerialStore):
            store.group_commits(service.forget)
        wiring = Wiring(service, settings, factory, time=clock, deliver=deliver, deliver_every=deliver_every,
                        networks=network or {})
        state = app.state
        state.store, state.service, state.settings, state.channels = store, service, settings, wiring.running
        state.wiring = wiring
        stack = contextlib.AsyncExitStack()
        try:
            for spec in on:
                wiring.running[spec.name] = await stack.enter_async_context(spec.start(settings, wiring))
            service.resume_all()
            service.returned()
            stack.push_async_callback(_cancel, asyncio.get_running_loop().create_task(_ticks(service, tick_every)))
            where = settings.public_url or f"http://{settings.host}:{settings.port} (MODERATOR_PUBLIC_URL not set)"
            log.info("moderator %s serving on %s; channels on: %s", version(), where,
                     ", ".join(s.name for s in on) or "none")
            for spec in channels:
                reason = spec.off(settings)
                if reason is not None:
                    log.info("%s is off: %s", spec.name, reason)
            yield
        finally:
            await stack.aclose()
            await wiring.stop()
            with contextlib.suppress(Exception):  # a disk that cannot be written: the next start re-prompts
                service.stopping()
            store.close()
            log.info("stopped; %d messages wait in the outbox for the next start", _backlog(factory))

    from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware  # here: a console game needs no uvicorn

    hooks = webhook_limits(settings, on)
    trusted = trusted_proxies_setting(settings.env)
    app = Starlette(routes=routes, lifespan=lifespan, middleware=[
        # Outermost, so every guard sees the client and the scheme the trusted proxy reported (and only its).
        Middleware(ProxyHeadersMiddleware, trusted_hosts=trusted),
        Middleware(SecurityHeaders),
        Middleware(OriginCheck, exempt=tuple(hooks), public_url=settings.public_url),
        Middleware(StreamingBodyLimit, limits=hooks),
        Middleware(Durable),
    ])
    app.state.trusted = TrustedProxies.parse(trusted)
    return app


def webhook_limits(settings: Settings, channels: Sequence[ChannelSpec]) -> dict[str, int]:
    """The webhooks of the channels that are on (``ChannelSpec.webhooks``), each with its body limit."""
    return {path: limit for spec in channels if spec.off(settings) is None
            for path, limit in spec.webhooks(settings).items()}


def _backlog(factory: Callable[[], Store]) -> int:
    try:
        store = factory()
    except Exception:
        return -1
    try:
        return store.backlog()
    finally:
        store.close()


async def _cancel(task: asyncio.Task[None]) -> None:
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)


async def _ticks(service: Service, every: float) -> None:
    """Reminders that fall due."""
    while True:
        await asyncio.sleep(every)
        try:
            service.tick()
        except Exception:
            log.exception("reminders failed; trying again")


async def healthz(request: Request) -> Response:
    """Database reachable and writable, words and fonts loaded, outbox backlog, version and channels: all of it for a
    request from this machine, only ``{"ok": ...}`` for anyone else (``guard.public_health``)."""
    state = request.app.state
    missing = catalog_problems() + font_problems()
    if missing:
        # Every message would fail (no catalog) or the board would lose its accents (no font): not healthy.
        log.error("health check: %s", "; ".join(missing))
        return _health(request, {"ok": False, "messages": "missing", "version": version()}, 503)
    try:
        store: Store = state.store
        store.execute("SELECT 1").fetchone()
        backlog = store.backlog()
    except Exception as exc:
        log.error("health check: database unreachable: %s", exc)
        return _health(request, {"ok": False, "database": "unreachable", "version": version()}, 503)
    if not await _writable(state):
        return _health(request, {"ok": False, "database": "not writable", "version": version()}, 503)
    return _health(request, {"ok": True, "database": "ok", "outbox_backlog": backlog, "version": version(),
                             "channels": sorted(state.channels)})


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
        log.error("health check: the database cannot be written: %s", exc)
        ok = False
    state.write_checked = (now, ok)
    return ok


def _health(request: Request, report: dict[str, object], status: int = 200) -> Response:
    return JSONResponse(public_health(report, request.scope), status_code=status)


async def join_page(request: Request) -> Response:
    """The ways to take a seat at the table with this join code; 404 (and nothing else) for any other code; 429
    for every code once this client has tried too many unknown ones (``Pages.join_attempt``)."""
    code = str(request.path_params.get("code", "")).strip().upper()
    state = request.app.state
    wiring: Wiring = state.wiring
    table = wiring.pages.table_by_code(code) if _CODE.fullmatch(code) else None
    wait = wiring.pages.join_attempt(client_key(request.scope, state.trusted), table is not None)
    if wait > 0:
        return web.try_again(request, wait)
    if table is None:
        return PlainTextResponse("Not Found", status_code=404)
    ways = [way for name, running in wiring.running.items() if name != web.CHANNEL for way in running.join_ways(code)]
    browser = web.CHANNEL in wiring.running and table.status is Status.LOBBY
    if not ways and not browser:
        return PlainTextResponse("Not Found", status_code=404)
    return web.join_page(request, code, table.theme, ways, wiring.pages.limits(), browser=browser)


def _logging() -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    # httpx logs every request's URL at INFO, and a Bot API URL holds the bot's token.
    logging.getLogger("httpx").setLevel(logging.WARNING)


def safe_logs(settings: Settings) -> None:
    """Once logging is set up (uvicorn's included): no key or token in any line, the libraries at WARNING
    (``MODERATOR_LOG_LEVEL=debug`` for everything), and lines a stranger can cause at most a few a minute."""
    quiet_third_party_loggers(settings.env)
    install_redaction()
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


def serve(settings: Settings, *, channels: Sequence[ChannelSpec] = CHANNELS) -> int:
    """``moderator serve``: the guarded uvicorn until SIGTERM or Ctrl-C (the request in hand finishes first)."""
    _logging()
    app = create_app(settings, channels=channels)
    server = guarded(app, settings, channels, log_level="info", timeout_graceful_shutdown=30)
    stop_streams_on_exit(server, app)
    log.info("listening on %s port %d", settings.host, settings.port)  # uvicorn's own line is below WARNING
    server.run()
    return 0


def serve_sms(settings: Settings) -> int:
    """``moderator sms``: the SMS channel alone, printing each table's join QR code as it opens."""
    return serve(settings.but(print_join_codes=True), channels=(sms.SPEC,))


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


# --- ``moderator telegram``: long polling ----------------------------------------------------------------------


def run_telegram(settings: Settings) -> int:
    """Long polling until SIGTERM or Ctrl-C; returns the exit status. An update is confirmed to Telegram only once
    its input is stored (``telegram.Poller``): while the database cannot be written, polling pauses."""
    token = telegram.TelegramSettings.of(settings).token
    assert token is not None
    _logging()
    store = Store(settings.db_path)
    service = Service(store, capabilities={telegram.CHANNEL: telegram.CAPABILITIES})
    service.handled.append(log_action)
    wiring = Wiring(service, settings, lambda: Store(settings.db_path))
    bot = telegram.TelegramBot(service, screen_url=wiring.screen_url)
    app = telegram.build_application(token, api_url=telegram.TelegramSettings.of(settings).api_url, updater=False)
    bot.install(app)

    async def run() -> None:
        loop = asyncio.get_running_loop()
        stop = asyncio.Event()
        for signum in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError):  # no signals off the main thread
                loop.add_signal_handler(signum, stop.set)
        await app.initialize()
        ticker: asyncio.Task[None] | None = None
        poller = telegram.Poller(app, bot)
        polling: asyncio.Task[None] | None = None
        try:
            await bot.start(app, lambda channel, after: wiring.delivery(telegram.CHANNEL, channel,
                                                                        after_round=after))
            resumed = service.resume_all()
            service.returned()
            log.info("telegram: ready as @%s (long polling); %d tables under way; Ctrl-C stops",
                     app.bot.username, len(resumed))
            ticker = loop.create_task(_ticks(service, 5.0))
            polling = loop.create_task(poller.run())
            stopped = loop.create_task(stop.wait())
            await asyncio.wait({polling, stopped}, return_when=asyncio.FIRST_COMPLETED)
            stopped.cancel()
            if polling.done():
                polling.result()  # polling ended by itself: a token Telegram refuses, say
        finally:
            for task in (polling, ticker):
                if task is not None:
                    await _cancel(task)
            await poller.confirm()
            await wiring.stop()
            with contextlib.suppress(Exception):  # a disk that cannot be written: the next start re-prompts
                service.stopping()
            await app.shutdown()
            store.close()

    asyncio.run(run())
    return 0


# --- ``moderator play``: the console, and the local network ----------------------------------------------------


def play_console(*, players: int, name: str | None, theme: str, language: str, seed: int | None, watch: bool,
                 read: Callable[[str], str] = input, output: TextIO = sys.stdout, store: Store | None = None,
                 record: Path | None = None) -> int:
    """A game at the console (you and computer players, no network); returns the exit status. With ``record``,
    the game's record (``moderator replay`` reads it) is written there when it ends."""
    store = store or Store(memory=True)
    options: dict[str, Any] = {} if seed is None else {"seed": lambda: seed}
    service = Service(store, capabilities={console.CHANNEL: console.CAPABILITIES}, **options)
    channel = console.ConsoleChannel(output)
    sender = Sender(store, {console.CHANNEL: channel})

    def deliver() -> None:
        while sender.deliver_due():
            pass

    status = console.play(service, channel, deliver, players=players, name=name, theme=theme, language=language,
                          watch=watch, read=read)
    exported = service.export(channel.table_id) if record is not None and channel.table_id else None
    if record is not None and exported is not None:
        record.write_text(records.dumps(exported), encoding="utf-8")
    return status


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


def play_on_lan(settings: Settings, *, name: str | None, theme: str, lang: str, host: str, port: int) -> int:
    """``moderator play --web``: open a table hosted by this machine and serve every page on the local network.

    Prints the table screen's address, the host's (with its key: keep it to this device) and the join QR code
    for phones. No credentials, no internet: channels that have credentials join in, as with ``serve``."""
    lan = lan_address() if host in ("0.0.0.0", "::") else host
    base = f"http://{lan}:{port}"
    # Phones reach this laptop at its LAN address, whatever address the host's own browser uses. Telegram's
    # webhook needs a public HTTPS address: without one configured it stays off.
    public = settings.public_url or base
    env = settings.env if settings.public_url else {k: v for k, v in settings.env.items() if k != "TELEGRAM_TOKEN"}
    settings = settings.but(web=True, public_url=public, host=host, port=port, env=env)
    store = Store(settings.db_path)
    try:
        service = Service(store, capabilities={web.CHANNEL: web.CAPABILITIES})
        opened = web.open_table(service.pages, name=name or "", play=name is not None, theme=theme, lang=lang)
        if opened is None:
            raise ValueError(f"could not open a table with theme {theme!r}")
        table_id, key = opened
        table = service.pages.table_info(table_id)
        assert table is not None
        code = table.code
    finally:
        store.close()
    join_url = f"{public}/join/{code}"
    print(qr_text(join_url))
    print(f"Phones join: {join_url}   (code {code})")
    print(f"Table screen: {public}/table/{table_id}")
    print(f"Host, on this device only: http://127.0.0.1:{port}/host/{table_id}?key={key}")
    print("Computer players can fill empty seats from the host page. Ctrl-C stops.", flush=True)
    app = create_app(settings)
    server = guarded(app, settings, log_level="warning")
    stop_streams_on_exit(server, app)
    server.run()
    return 0
