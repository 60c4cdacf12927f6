"""``moderator serve``: every channel in one process, one Starlette app under uvicorn.

Usage::

    MODERATOR_PUBLIC_URL=https://moderator.example.org TELEGRAM_TOKEN=... TWILIO_ACCOUNT_SID=... moderator serve

Routes:

- ``POST /telegram`` (``TELEGRAM_WEBHOOK_PATH``): the Bot API's webhook. The request must carry
  ``X-Telegram-Bot-Api-Secret-Token`` (``TELEGRAM_WEBHOOK_SECRET``, by default derived from the token); the
  update is processed before the answer, so an update Telegram saw answered is in the database. The webhook is
  registered with ``setWebhook`` on start.
- ``POST /sms``: Twilio's webhook, the very route of ``transports.sms`` (signature checked there).
- ``GET /healthz``: database reachable, catalogs and fonts loaded, outbox backlog, version, channels on.
- ``GET /join/<code>``: the ways to take a seat at a table, as links and QR codes.

One ``Service`` on the event loop thread takes every input (one input, one transaction); each channel's
sender runs on its own thread with its own store connection. A channel without credentials stays off, and the
log says which are on. On SIGTERM uvicorn stops taking requests and lets the request in hand finish; what
is still in the outbox is delivered after the next start.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import html
import json
import logging
import os
import re
import threading
import time
from collections import OrderedDict, deque
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any, Final

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from .board import font_problems
from .catalog import problems as catalog_problems
from .commands import Inbound
from .service import CODE_ALPHABET, Outgoing, Service
from .store import Store, default_path

log = logging.getLogger("moderator.serve")
actions_log = logging.getLogger("moderator.actions")

TELEGRAM_PATH: Final = "/telegram"
SECRET_HEADER: Final = "X-Telegram-Bot-Api-Secret-Token"
MAX_BODY: Final = 256 * 1024
"""Bytes of a webhook body we read at most (a Telegram update or a Twilio form is a few kilobytes)."""
KEEP_ALIVE: Final = 75
"""Seconds an idle HTTP connection stays open."""
REMEMBERED_UPDATES: Final = 10_000
"""Telegram update ids the webhook remembers, to drop a redelivered update before it reaches the handlers."""
_CODE: Final = re.compile(f"[{CODE_ALPHABET}]{{3,12}}")


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


# --- configuration ----------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Settings:
    """What ``moderator serve`` reads from the environment, then ``./.env`` (the environment wins)."""

    env: Mapping[str, str]
    db_path: Path
    host: str
    port: int
    public_url: str | None
    telegram_token: str | None
    telegram_api_url: str | None
    telegram_secret: str | None
    telegram_path: str
    web: bool = False
    """The browser channel (``MODERATOR_WEB=on``): phone pages, the table screen and pass-and-play."""

    @classmethod
    def load(cls, environ: Mapping[str, str] | None = None, cwd: Path | None = None) -> Settings:
        from .transports.telegram import read_dotenv

        env = {k: v for k, v in (os.environ if environ is None else environ).items() if v}
        merged = {**read_dotenv((cwd or Path.cwd()) / ".env"), **env}
        merged = {k: v for k, v in merged.items() if v}
        db = merged.get("MODERATOR_DB")
        token = merged.get("TELEGRAM_TOKEN")
        secret = merged.get("TELEGRAM_WEBHOOK_SECRET")
        if token and not secret:
            # Stable across restarts, unknown to anyone without the token.
            secret = hashlib.sha256(f"moderator-webhook:{token}".encode()).hexdigest()
        path = "/" + merged.get("TELEGRAM_WEBHOOK_PATH", TELEGRAM_PATH).strip("/")
        return cls(
            env=merged,
            db_path=Path(db).expanduser() if db else default_path(),
            host=merged.get("MODERATOR_HOST", "127.0.0.1"),
            port=int(merged.get("MODERATOR_PORT", "8000")),
            public_url=merged["MODERATOR_PUBLIC_URL"].rstrip("/") if "MODERATOR_PUBLIC_URL" in merged else None,
            telegram_token=token,
            telegram_api_url=merged.get("TELEGRAM_API_URL"),
            telegram_secret=secret,
            telegram_path=path,
            web=merged.get("MODERATOR_WEB", "off").strip().lower() in ("on", "1", "true", "yes"),
        )

    @property
    def telegram_on(self) -> bool:
        """Telegram needs its token and a public URL to register the webhook at."""
        return bool(self.telegram_token and self.public_url)

    def sms(self) -> Any:
        """The SMS channel's settings (``transports.sms.Settings``) from the same values."""
        from .transports import sms

        return sms.Settings.load(self.env)


# --- one writer at a time -----------------------------------------------------------------------------------

class FairLock:
    """A re-entrant lock granted in the order it was asked for. (``threading.RLock`` lets a thread that releases
    it and asks again at once overtake one that has been waiting: the event loop, which writes again as soon as
    it has committed, would starve the senders.)"""

    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._owner: int | None = None
        self._depth = 0
        self._queue: deque[object] = deque()

    def acquire(self, timeout: float | None = None) -> bool:
        """Take the lock after every earlier asker; False if ``timeout`` seconds passed first."""
        me = threading.get_ident()
        with self._cond:
            if self._owner == me:
                self._depth += 1
                return True
            ticket = object()
            self._queue.append(ticket)
            if not self._cond.wait_for(lambda: self._owner is None and self._queue[0] is ticket, timeout):
                self._queue.remove(ticket)
                self._cond.notify_all()
                return False
            self._queue.popleft()
            self._owner, self._depth = me, 1
            return True

    def release(self) -> None:
        with self._cond:
            assert self._owner == threading.get_ident(), "released by a thread that does not hold it"
            self._depth -= 1
            if not self._depth:
                self._owner = None
                self._cond.notify_all()


_WRITE: Final = FairLock()


WRITE_WAIT: Final = 5.0
"""Seconds a sender thread waits for the lock before it leaves the wait to SQLite's busy handler (never forever:
the event loop must not be able to block on a thread that waits for the loop's commit)."""


class SerialStore(Store):
    """A ``Store`` whose writes take one lock shared by every connection of this process (the service's and the
    senders'). SQLite lets one writer in at a time anyway; a waiting writer otherwise sleeps in SQLite's busy
    handler (1, 2, 5, 10 ... 100 ms), which under load costs far more than the writes themselves. Every write of
    ``Store`` (the senders' ``settle`` too) goes through ``transaction``.

    The event loop's store groups commits (``group_commits``): each input is a savepoint of one transaction that
    commits at the end of the loop's iteration, so the inputs handled in one iteration share one fsync, which on
    a busy disk costs more than handling them; ``durable`` waits for that commit before a request is answered.
    """

    CHECKPOINT_EVERY: Final = 50
    """A sender thread's commits between two checkpoints of the log into the database file."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Checkpoints copy the log into the database file, with fsyncs: never inside a commit (SQLite's default,
        # every 1,000 pages), which holds the write lock, but by a sender thread after it (``transaction``).
        self.execute("PRAGMA wal_autocheckpoint=0")
        self._commits = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._committed: asyncio.Future[None] | None = None
        """Resolved when the open group of inputs is committed; None while no group is open."""
        self._forget: Callable[[], None] = lambda: None

    def group_commits(self, forget: Callable[[], None]) -> None:
        """(On the event loop.) From now on commit at the end of the loop's iteration; ``forget`` is called when a
        commit fails, so whatever cached the rolled-back inputs reloads from the database."""
        self._loop = asyncio.get_running_loop()
        self._forget = forget

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        if self._loop is None:
            locked = _WRITE.acquire(timeout=WRITE_WAIT)
            try:
                with super().transaction():
                    yield
            finally:
                if locked:
                    _WRITE.release()
            self._commits += 1
            if self._commits % self.CHECKPOINT_EVERY == 0:
                self.checkpoint()  # PASSIVE: writers go on meanwhile
            return
        if self._committed is None:
            _WRITE.acquire()
            try:
                self.execute("BEGIN IMMEDIATE")
            except BaseException:
                _WRITE.release()
                raise
            self._committed = self._loop.create_future()
            self._loop.call_soon(self.commit)
        with super().transaction():  # a savepoint in the open group: an input that fails rolls back alone
            yield

    def commit(self) -> None:
        """Commit the open group of inputs, if any, and wake whoever waits in ``durable``."""
        committed, self._committed = self._committed, None
        if committed is None:
            return
        try:
            self.execute("COMMIT")
        except Exception as exc:
            log.error("a commit failed; %s", type(exc).__name__)
            with contextlib.suppress(Exception):
                self.execute("ROLLBACK")
            self._forget()
            committed.set_exception(exc)
        else:
            committed.set_result(None)
        finally:
            _WRITE.release()

    async def durable(self) -> None:
        """Return once everything written so far is committed (raise if that commit failed)."""
        if self._committed is not None:
            await asyncio.shield(self._committed)

    def close(self) -> None:
        self.commit()
        super().close()


# --- one log line per action ------------------------------------------------------------------------------


class LoggedService(Service):
    """The service, writing one structured line per handled input: channel, table, step, kind, outcome, ms.

    Never a secret: no address, text, role, card or token, only the kind of command."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._last: Outgoing | None = None
        self._applied: int | None = None
        self._moves = 0

    def _dispatch(self, inbound: Inbound, out: Outgoing, now: float, touched: set[str]) -> None:
        self._last, self._applied = out, 0
        try:
            super()._dispatch(inbound, out, now, touched)
        finally:
            self._applied, applied = None, self._applied
        self._moves = applied or 0

    def _play(self, table: Any, actions: Any, out: Outgoing, now: float) -> None:
        if self._applied is not None:  # the input's own moves, not the computer players' after it
            self._applied += len(actions)
        super()._play(table, actions, out, now)

    def forget(self) -> None:
        """Drop every cached table (a commit failed: they hold what the database does not); each reloads."""
        self._tables.clear()

    def handle(self, inbound: Inbound) -> None:
        start = time.perf_counter()
        self._last, self._moves = None, 0
        outcome = "error"
        try:
            super().handle(inbound)
            # applied: the game moved; answered: a reply only (a question, a refusal, a lobby change)
            outcome = "duplicate" if self._last is None else "applied" if self._moves else "answered"
        finally:
            out, self._last = self._last, None
            table_id = out.table_id if out is not None else None
            table = self._tables.get(table_id) if table_id else None
            fields = {
                "channel": inbound.channel,
                "table": table_id,
                "step": len(table.actions) if table is not None else None,
                "kind": type(inbound.command).__name__,
                "outcome": outcome,
                "ms": round((time.perf_counter() - start) * 1000, 1),
            }
            actions_log.info("action %s", json.dumps(fields, separators=(",", ":")))


# --- the app ------------------------------------------------------------------------------------------------


async def _read_body(request: Request, limit: int = MAX_BODY) -> bytes | None:
    """The request body, or None if it is larger than ``limit``."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        return None
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            return None
    return body


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
                        await send({"type": "http.response.start", "status": 503,
                                    "headers": [(b"content-length", b"0")]})
                        await send({"type": "http.response.body", "body": b""})
                        return
            await send(message)

        await self.app(scope, receive, durable_send)


class BodyLimit:
    """ASGI middleware: a request that declares a body over ``limit`` bytes gets 413 before anything reads it.
    (A chunked body without a length is read by the routes, which cap it themselves or fail its signature.)"""

    def __init__(self, app: Any, limit: int = MAX_BODY) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            for name, value in scope.get("headers", ()):
                if name == b"content-length" and (not value.isdigit() or int(value) > self.limit):
                    await Response(status_code=413)(scope, receive, send)
                    return
        await self.app(scope, receive, send)


def create_app(
    settings: Settings,
    *,
    store_factory: Callable[[], Store] | None = None,
    telegram_request: Any = None,
    twilio_http: Any = None,
    clock: Callable[[], float] = time.time,
    deliver: bool = True,
    tick_every: float = 5.0,
    **service_options: Any,
) -> Starlette:
    """The app. ``telegram_request`` (a PTB ``BaseRequest``) and ``twilio_http`` (a twilio ``HttpClient``)
    replace the network in tests; ``deliver=False`` starts no sender (the outbox waits)."""
    from .transports import sms as sms_transport

    factory = store_factory or (lambda: SerialStore(settings.db_path))
    sms_settings = settings.sms()
    sms_on = bool(sms_settings.complete)
    routes: list[Any] = [
        Route("/healthz", healthz, methods=["GET"]),
        Route("/join/{code}", join_page, methods=["GET"]),
    ]
    if settings.telegram_on:
        routes.append(Route(settings.telegram_path, telegram_webhook, methods=["POST"]))
    if settings.web:
        from .transports import web

        routes.extend(web.routes())
    if sms_on:
        # The SMS webhook's own route (signature check, dedupe, TwiML); it reads ``app.state.gateway``.
        routes.extend(sms_transport.create_app(sms_settings, factory).routes)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        store = factory()
        service = LoggedService(store, clock=clock, **service_options)
        if isinstance(store, SerialStore):
            store.group_commits(service.forget)
        state = app.state
        state.store, state.service, state.settings = store, service, settings
        state.telegram = state.bot = None
        state.sms_number = sms_settings.sender if sms_on else None
        state.seen_updates = OrderedDict()
        state.web = None
        on = []
        if settings.web:
            from .transports.web import WebTables

            state.web = WebTables(service, public_url=settings.public_url, ways=lambda code: join_ways(state, code))
            state.web.bind(asyncio.get_running_loop())
            on.append("web (this server's pages)")
        stack = contextlib.AsyncExitStack()
        try:
            if settings.telegram_on:
                await stack.enter_async_context(
                    _telegram(app, settings, service, telegram_request, clock, deliver, factory))
                on.append(f"telegram (webhook {settings.public_url}{settings.telegram_path})")
            else:
                service.resume_all()
            if sms_on:
                state.gateway = sms_transport.SmsGateway(service, region=sms_settings.region)
                if deliver:
                    client = sms_settings.client(twilio_http)
                    channel = sms_transport.SmsChannel(client, sms_settings.sender,
                                                       sms_settings.messaging_service_sid,
                                                       status_callback=sms_settings.status_callback)
                    worker = sms_transport.SenderThread(factory, channel)
                    worker.start()
                    stack.callback(worker.stop)
                on.append(f"sms (webhook {sms_settings.webhook_url})")
            if not settings.telegram_on:
                stack.push_async_callback(_cancel, asyncio.get_running_loop().create_task(_ticks(service, tick_every)))
            log.info("moderator %s serving on %s; channels on: %s", version(), settings.public_url or "-",
                     ", ".join(on) or "none")
            if not settings.telegram_on:
                log.info("telegram is off: it needs TELEGRAM_TOKEN and MODERATOR_PUBLIC_URL")
            if not sms_on:
                log.info("sms is off: it needs TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN, and TWILIO_FROM or "
                         "TWILIO_MESSAGING_SERVICE_SID")
            yield
        finally:
            await stack.aclose()
            store.close()
            log.info("stopped; %d messages wait in the outbox for the next start", _backlog(settings, factory))

    return Starlette(routes=routes, lifespan=lifespan, middleware=[Middleware(BodyLimit), Middleware(Durable)])


def _backlog(settings: Settings, factory: Callable[[], Store]) -> int:
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
    """Reminders for tables when no Telegram loop does it."""
    while True:
        await asyncio.sleep(every)
        try:
            service.tick()
        except Exception:
            log.exception("reminders failed; trying again")


@contextlib.asynccontextmanager
async def _telegram(app: Starlette, settings: Settings, service: Service, request: Any,
                    clock: Callable[[], float], deliver: bool,
                    factory: Callable[[], Store]) -> AsyncIterator[None]:
    """The PTB application without an updater: updates come from the webhook route."""
    from telegram import Update

    from .transports.telegram import TelegramBot, build_application

    assert settings.telegram_token and settings.public_url
    ptb = build_application(settings.telegram_token, api_url=settings.telegram_api_url, request=request,
                            rate_limiter=request is None)
    # The sender's connection shares this process's write lock: the event loop never waits in SQLite's busy handler.
    bot = TelegramBot(service, settings.db_path, clock=clock, store_factory=factory,
                      screen_url=settings.public_url if settings.web else None)
    bot.install(ptb)
    await ptb.initialize()
    try:
        await bot.start(ptb)
        await ptb.bot.set_webhook(settings.public_url + settings.telegram_path, secret_token=settings.telegram_secret,
                                  allowed_updates=Update.ALL_TYPES)
        if deliver:
            bot.run_sender()
        app.state.telegram, app.state.bot = ptb, bot
        yield
    finally:
        await bot.stop()
        await ptb.shutdown()


async def telegram_webhook(request: Request) -> Response:
    """One update from the Bot API, processed before the answer (so a crash before it means a redelivery)."""
    from telegram import Update

    settings: Settings = request.app.state.settings
    given = request.headers.get(SECRET_HEADER, "")
    if not settings.telegram_secret or not hmac.compare_digest(given.encode(), settings.telegram_secret.encode()):
        log.warning("refused a Telegram webhook request without the right secret token")
        return Response(status_code=403)
    body = await _read_body(request)
    if body is None:
        return Response(status_code=413)
    try:
        data = json.loads(body)
        if not isinstance(data, dict) or not isinstance(data.get("update_id"), int):
            raise ValueError("not an update")
        ptb = request.app.state.telegram
        update = Update.de_json(data, ptb.bot)
    except Exception:  # any malformed update: Telegram never sends one, so nobody waits for it
        log.info("ignored a Telegram webhook body that is not an update")
        return Response(status_code=400)
    seen: OrderedDict[int, None] = request.app.state.seen_updates
    if update.update_id in seen:
        return Response(status_code=200)  # a redelivery: the service has it already
    seen[update.update_id] = None
    if len(seen) > REMEMBERED_UPDATES:
        seen.popitem(last=False)
    try:
        await ptb.process_update(update)
    except Exception:  # logged; answering 200 stops Telegram from redelivering an update that cannot work
        log.exception("a Telegram update failed")
    return Response(status_code=200)


async def healthz(request: Request) -> Response:
    """Database reachable, words and fonts loaded, outbox backlog, version and channels."""
    state = request.app.state
    missing = catalog_problems() + font_problems()
    if missing:
        # Every message would fail (no catalog) or the board would lose its accents (no font): not healthy.
        log.error("health check: %s", "; ".join(missing))
        return JSONResponse({"ok": False, "messages": "missing", "version": version()}, status_code=503)
    channels = [name for name, up in (("telegram", state.telegram is not None),
                                      ("sms", getattr(state, "gateway", None) is not None),
                                      ("web", state.web is not None)) if up]
    try:
        store: Store = state.store
        store.execute("SELECT 1").fetchone()
        backlog = store.backlog()
    except Exception as exc:
        log.error("health check: database unreachable: %s", exc)
        return JSONResponse({"ok": False, "database": "unreachable", "version": version()}, status_code=503)
    return JSONResponse({"ok": True, "database": "ok", "outbox_backlog": backlog, "version": version(),
                         "channels": channels})


_PAGE: Final = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex"><title>{code}</title>
<style>body{{font-family:system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem}}
section{{margin:2rem 0}} svg{{width:14rem;height:14rem}}</style></head>
<body><h1>\U0001fa91 {code}</h1>
{ways}
</body></html>
"""


async def join_page(request: Request) -> Response:
    """The ways to take a seat at the table with this join code; 404 (and nothing else) for any other code."""
    from .transports.sms import qr_svg

    code = str(request.path_params.get("code", "")).strip().upper()
    state = request.app.state
    row = state.store.table_by_code(code) if _CODE.fullmatch(code) else None
    if row is None or row.status == "closed":
        return PlainTextResponse("Not Found", status_code=404)
    ways = join_ways(state, code)
    web = state.web is not None and row.status == "lobby"
    if not ways and not web:
        return PlainTextResponse("Not Found", status_code=404)
    parts = [
        f'<section><h2>{html.escape(title)}</h2><p><a href="{html.escape(link)}">{html.escape(label)}</a></p>'
        f"{_inline_svg(qr_svg(link))}</section>"
        for title, link, label in ways
    ]
    if web:
        from .transports.web import join_section

        parts.insert(0, join_section(request, code, row.theme))
    page = _PAGE.format(code=html.escape(code), ways="\n".join(parts))
    return HTMLResponse(page, headers={"Cache-Control": "no-store", "X-Robots-Tag": "noindex"})


def join_ways(state: Any, code: str) -> list[tuple[str, str, str]]:
    """(channel, link, label) of every way besides the browser to take a seat with this join code."""
    from .transports.sms import join_link

    ways: list[tuple[str, str, str]] = []
    if state.telegram is not None:
        from telegram.helpers import create_deep_linked_url

        link = create_deep_linked_url(state.telegram.bot.username, code)
        ways.append(("Telegram", link, f"@{state.telegram.bot.username}"))
    if state.sms_number:
        # No words of ours (they would need every language): what to text, and where.
        ways.append(("SMS", join_link(state.sms_number, code), f"JOIN {code} \u2192 {state.sms_number}"))
    return ways


def _inline_svg(svg: str) -> str:
    """An SVG document as an element for an HTML page (without its XML declaration)."""
    return re.sub(r"^<\?xml[^>]*>\s*", "", svg)


# --- running it ---------------------------------------------------------------------------------------------


def serve(settings: Settings) -> int:
    """``moderator serve``: uvicorn until SIGTERM or Ctrl-C (the request in hand finishes first)."""
    import uvicorn

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    # httpx logs every request's URL at INFO, and a Bot API URL holds the bot's token.
    logging.getLogger("httpx").setLevel(logging.WARNING)
    app = create_app(settings)
    # Keep-alive longer than a proxy's idle timeout (nginx: 60 s): a connection closed by us while the proxy
    # reuses it is a failed request.
    server = uvicorn.Server(uvicorn.Config(app, host=settings.host, port=settings.port, log_level="info",
                                           proxy_headers=True, timeout_keep_alive=KEEP_ALIVE,
                                           timeout_graceful_shutdown=30))
    if settings.web:
        from .transports.web import stop_streams_on_exit

        stop_streams_on_exit(server, app)
    server.run()
    return 0
