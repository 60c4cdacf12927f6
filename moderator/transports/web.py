"""The browser channel: phone pages with no app, the table screen, and pass-and-play on one device.

It translates and nothing else. A browser seat is a seat like any other (channel ``web``); its address is a
hash of an unguessable token that only that browser holds, in a cookie. Pages are drawn from what the
service already knows and renders: the seat's messages in the outbox (its feed), ``render.prompt`` for the
decision it owes (buttons), ``render.knowledge_messages`` for its recap, and the public board. Nothing else.

Routes (``add_routes``):

- ``GET /`` and ``POST /new``: open a table from this browser, which becomes its host.
- ``POST /join/<code>``: "play in this browser" on ``serve``'s join page takes a seat and sets its cookie.
- ``GET /play/<table>``: that seat's page; ``POST`` the same path decides (a button: token and decision id).
- ``GET /table/<table>``: the table screen for a laptop or TV: join QR codes and seats in the lobby, then the
  board, who the table waits for and the latest results, then the roles and the truth timeline. Public only.
- ``GET /host/<table>``: the host's device: lobby controls, and pass-and-play: every seat taken on this device is
  a name to tap; ``/host/<table>/seat/<n>`` shows that seat behind a cover and decides for it.
- ``GET /table/<table>/events``: server-sent events, one ``data:`` line per committed change of the table and
  nothing else (no content, so no secret); every page listens and fetches its own part again
  (``.../live``), so nothing needs a reload. ``GET /table/<table>/board.png``: the board image.

Cookies are ``HttpOnly`` and ``SameSite=Strict`` (no other site can post as a seat). The service runs on the
event loop's thread, as in ``serve``; so do these routes.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import html
import logging
import re
import secrets
import string
from collections.abc import AsyncIterator, Callable
from functools import cache
from importlib import resources
from typing import Any, Final

from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response, StreamingResponse
from starlette.routing import Route

from .. import render
from ..catalog import DEFAULT_LANGUAGE, DEFAULT_THEME, Catalog, UnknownCatalog, languages, themes
from ..commands import (
    AddComputers,
    Choose,
    Command,
    Host,
    HostCommand,
    Inbound,
    Join,
    MoveSeat,
    OpenTable,
    RemoveSeat,
    Start,
)
from ..engine import awaiting, public_view, view_for
from ..engine.events import GameEnded, VoteProgressed
from ..service import CODE_ALPHABET, ID_ALPHABET, Sender, Service, Table, action_token

log = logging.getLogger(__name__)

CHANNEL: Final = "web"
SEAT_COOKIE: Final = "seat-"
HOST_COOKIE: Final = "host-"
FEED_LENGTH: Final = 40
"""Messages of its own a seat's page shows, newest first."""
LATEST: Final = 6
"""Public messages the table screen shows as the latest results."""
STREAM_SECONDS: Final = 20.0
"""An event stream ends after this long and the browser opens a new one at once: a server shutting down never
waits on an idle stream for long."""
KEEP_ALIVE: Final = 10.0

WEB_MESSAGES: Final = (
    "web-open-title",
    "web-your-name",
    "web-plays-too",
    "web-open",
    "web-play-here",
    "web-take-seat",
    "web-reveal",
    "web-nothing-owed",
    "web-messages",
    "web-seats",
    "web-scan-to-join",
    "web-add-player",
    "web-add",
    "web-add-computers",
    "web-start",
    "web-remove",
    "web-pass-title",
    "web-owes",
    "web-only-you",
    "web-done-pass",
    "web-pause",
    "web-resume",
    "web-end",
    "web-rematch",
    "web-not-your-seat",
    "web-latest",
    "web-table-screen",
    "web-host-page",
    "web-theme",
    "web-end-confirm",
)
"""Message ids the browser pages use (a test checks the catalogs have them)."""

_TABLE_ID: Final = re.compile(f"[{ID_ALPHABET}]{{12}}")
_CODE: Final = re.compile(f"[{CODE_ALPHABET}]{{3,12}}")
_HOST_ACTIONS: Final[dict[str, Command]] = {
    "computers": AddComputers(),
    "start": Start(),
    "pause": Host(HostCommand.PAUSE),
    "resume": Host(HostCommand.RESUME),
    "end": Host(HostCommand.END),
    "rematch": Host(HostCommand.REMATCH),
}


def _number(text: str, digits: int = 12) -> int | None:
    """A form's or path's number: ASCII digits, at most ``digits`` of them; else None."""
    return int(text) if text.isascii() and text.isdecimal() and len(text) <= digits else None


def address_of(token: str) -> str:
    """The seat address a browser token stands for (the token itself is never stored)."""
    return "w" + hashlib.sha256(token.encode()).hexdigest()[:32]


def local_address(host: str, tag: str) -> str:
    """The address of a seat taken on the host's own device (pass-and-play); ``tag`` tells them apart."""
    return f"{host}.{tag}"


# --- pages --------------------------------------------------------------------------------------------------


@cache
def _asset(name: str) -> str:
    return resources.files(__package__).joinpath("web_assets", name).read_text(encoding="utf-8")


def _e(text: object) -> str:
    return html.escape(str(text))


def _page(title: str, body: str, *, lang: str = DEFAULT_LANGUAGE, status: int = 200, kind: str = "") -> HTMLResponse:
    page = string.Template(_asset("page.html")).substitute(
        title=_e(title), body=body, lang=_e(lang), style=_asset("style.css"), script=_asset("live.js"), kind=_e(kind)
    )
    return HTMLResponse(page, status_code=status, headers=_NO_STORE)


_NO_STORE: Final = {"Cache-Control": "no-store", "X-Robots-Tag": "noindex", "Referrer-Policy": "no-referrer"}


def _text(text: str, cls: str = "msg") -> str:
    return f'<p class="{cls}">{_e(text)}</p>'


def _covered(element_id: str, summary: str, inner: str, hint: str = "") -> str:
    """A secret behind a tap-to-reveal cover (tap again to hide); ``hint`` says so under the title."""
    note = f'<small>{_e(hint)}</small>' if hint else ""
    return (f'<details class="secret" id="{_e(element_id)}"><summary><span>{_e(summary)}</span>{note}</summary>'
            f"{inner}</details>")


def _button(label: str, fields: dict[str, object], *, action: str = "", cls: str = "", confirm: str = "") -> str:
    hidden = "".join(f'<input type="hidden" name="{_e(k)}" value="{_e(v)}">' for k, v in fields.items())
    target = f' action="{_e(action)}"' if action else ""
    ask = f' data-confirm="{_e(confirm)}"' if confirm else ""  # live.js asks before posting
    return f'<form method="post"{target} class="inline"{ask}>{hidden}<button class="{cls}">{_e(label)}</button></form>'


def _live(src: str, table_id: str, inner: str) -> str:
    """The part of a page that follows the table's event stream (fetched again from ``src`` on each change)."""
    return f'<div id="live" data-src="{_e(src)}" data-events="/table/{_e(table_id)}/events">{inner}</div>'


def _language(request: Request, theme: str = DEFAULT_THEME) -> str:
    """The browser's preferred language among the catalog's, else English."""
    offered = languages(theme)
    for part in request.headers.get("accept-language", "").split(","):
        lang = part.split(";")[0].strip().lower()[:2]
        if lang in offered:
            return lang
    return DEFAULT_LANGUAGE


def _catalog(theme: str, lang: str) -> Catalog:
    try:
        return Catalog.load(theme, lang)
    except UnknownCatalog:
        return Catalog.load(theme, DEFAULT_LANGUAGE)


# --- the live part of each page -----------------------------------------------------------------------------


class WebTables:
    """The browser channel's view of the service: who a cookie is, and the live parts of every page."""

    def __init__(self, service: Service, *, public_url: str | None = None,
                 ways: Callable[[str], list[tuple[str, str, str]]] | None = None) -> None:
        self.service = service
        self.public_url = public_url
        """Where phones reach this server (join links and QR codes); else the address a page was asked for."""
        self.ways = ways
        """(channel, link, label) of the other ways to join with a code (Telegram, SMS), shown beside the page's."""
        self._boards: dict[str, tuple[str, bytes]] = {}
        self.store = service.store
        self._listeners: dict[str, set[asyncio.Queue[None]]] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._closing = False
        # The outbox's browser messages are read by the pages, not pushed: delivering one only marks it sent.
        self._sender = Sender(service.store, {CHANNEL: _ReadByPage()})
        service.observers.append(self._changed)

    # identity

    def seat_address(self, request: Request, table_id: str) -> str | None:
        token = request.cookies.get(SEAT_COOKIE + table_id)
        return address_of(token) if token else None

    def is_host(self, request: Request, table: Table) -> bool:
        token = request.cookies.get(HOST_COOKIE + table.row.id)
        if not token or table.row.host_channel != CHANNEL or table.row.host_address is None:
            return False
        return hmac.compare_digest(address_of(token), table.row.host_address)

    def local_seats(self, table: Table) -> list[int]:
        """Seats taken on the host's device (the host's own among them, if the host plays), in seating order."""
        host = table.row.host_address
        if table.row.host_channel != CHANNEL or host is None:
            return []
        return [s.position for s in table.seats
                if s.channel == CHANNEL and (s.address == host or s.address.startswith(host + "."))]

    # input

    def handle(self, address: str, command: Command, *, nonce: str | None = None, lang: str | None = None) -> None:
        """One input from a page (a repeated ``nonce``, a double tap, is dropped)."""
        external = f"web:{nonce}" if nonce else None
        self.service.handle(Inbound(CHANNEL, address, command, external_id=external, language=lang))

    # change notification

    def bind(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop

    def _changed(self, table_id: str) -> None:
        try:
            self._sender.deliver_due()
        except Exception:  # the input is committed; the pages read the outbox whatever its marks say
            log.exception("web: marking browser messages delivered failed")
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._wake, table_id)

    def close(self) -> None:
        """End every event stream now (the server is stopping: it need not wait for them). Any thread."""
        self._closing = True
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._wake_all)

    def _wake_all(self) -> None:
        for table_id in list(self._listeners):
            self._wake(table_id)

    def _wake(self, table_id: str) -> None:
        for queue in self._listeners.get(table_id, ()):
            if queue.empty():
                queue.put_nowait(None)

    async def stream(self, table_id: str) -> AsyncIterator[str]:
        """Server-sent events: one ``data:`` line per change of the table, for ``STREAM_SECONDS``."""
        queue: asyncio.Queue[None] = asyncio.Queue(maxsize=1)
        self._listeners.setdefault(table_id, set()).add(queue)
        loop = asyncio.get_running_loop()
        end = loop.time() + STREAM_SECONDS
        try:
            yield "retry: 500\n\n"
            while (left := end - loop.time()) > 0 and not self._closing:
                try:
                    await asyncio.wait_for(queue.get(), min(KEEP_ALIVE, left))
                except TimeoutError:
                    yield ":\n\n"
                    continue
                if not self._closing:
                    yield "data: changed\n\n"
        finally:
            listeners = self._listeners.get(table_id)
            if listeners is not None:
                listeners.discard(queue)
                if not listeners:
                    del self._listeners[table_id]

    # the parts

    def seat_part(self, table: Table, position: int, lang: str, *, cover: str | None = None) -> str:
        """One seat's live part: the decision it owes (buttons), what it knows, the board, and its messages."""
        seat = table.seats[position]
        catalog = _catalog(table.row.theme, lang)
        info = table.info()
        state = table.state
        parts = [f'<h1>{_e(seat.name)}</h1>']
        if state is not None and table.row.game and table.row.status in ("playing", "paused", "over"):
            view = view_for(state, position)
            owed = (table.row.status == "playing" and position in awaiting(state)
                    and not table.row.options.get("physical_voting"))
            prompt = render.prompt(view, info, catalog) if owed else None
            if prompt is not None:
                decision = table.row.decision_step
                nonce = secrets.token_hex(8)
                buttons = "".join(
                    _button(
                        c.label, {"token": action_token(c.action), "decision": decision, "nonce": nonce}, cls="choice"
                    )
                    for c in prompt.choices
                )
                inner = _text(prompt.text) + f'<div class="choices">{buttons}</div>'
                reveal = catalog.text("web-reveal")
                block = _covered(f"prompt-{decision}", reveal, inner) if prompt.secret else inner
                parts.append(f'<section class="prompt" data-decision="{decision}">{block}</section>')
            elif table.row.status == "playing":
                parts.append(_text(catalog.text("web-nothing-owed"), "quiet"))
            knowledge = "".join(_text(m.text) for m in render.knowledge_messages(view, info, catalog))
            parts.append(_covered("know", catalog.text("knowledge-title"), knowledge, catalog.text("web-reveal")))
            parts.append(self._status(table, catalog))
            parts.append(self._board(table, catalog))
            if table.row.public_channel is not None:  # results go to a group chat this browser cannot read
                parts.append(self._latest(table, catalog))
        else:
            parts.append(self._seats(table, catalog))
        since = float(table.row.options.get("started", 0.0)) if table.row.status != "lobby" else 0.0
        feed = [(i, mid, body) for i, mid, body in self.store.messages_to(CHANNEL, seat.address, FEED_LENGTH, since)
                if not body.get("choices")]  # old prompts: the live prompt above has the buttons
        items = []
        for outbox_id, _mid, body in reversed(feed):
            text = _text(str(body.get("text", "")))
            items.append(_covered(f"m{outbox_id}", catalog.text("web-reveal"), text) if body.get("secret") else text)
        parts.append(f'<section class="feed"><h2>{_e(catalog.text("web-messages"))}</h2>{"".join(items)}</section>')
        body = "".join(parts)
        return _covered(f"cover-{position}", cover, body) if cover is not None else body

    def screen_part(self, table: Table, base_url: str, lang: str) -> str:
        """The table screen's live part: public information only."""
        catalog = _catalog(table.row.theme, lang)
        state = table.state
        parts: list[str] = []
        if table.row.status == "lobby" or state is None:
            if table.row.code:
                parts.append(self._join_qr(table, catalog, base_url))
            parts.append(self._seats(table, catalog))
            return "".join(parts)
        parts.append(self._status(table, catalog))
        parts.append(self._board(table, catalog))
        info = table.info()
        if table.row.status == "over" and any(isinstance(e, GameEnded) for e in table.log):
            timeline = render.truth_timeline(table.log, info, catalog)
            parts.append('<section class="truth">' + "".join(_text(m.text) for m in timeline) + "</section>")
        parts.append(self._latest(table, catalog))
        return "".join(parts)

    def _latest(self, table: Table, catalog: Catalog) -> str:
        """The latest public results (the running vote count is on the board, not here)."""
        assert table.state is not None
        info, view = table.info(), public_view(table.state)
        latest: list[str] = []
        for event in reversed(table.log):
            if len(latest) >= LATEST:
                break
            if event.audience.everyone and not isinstance(event, VoteProgressed):
                messages = render.event_messages(event, None, info, catalog, board=view)
                latest.extend(reversed([m.text for m in messages]))
        return (f'<section class="latest"><h2>{_e(catalog.text("web-latest"))}</h2>'
                + "".join(_text(t) for t in latest[:LATEST]) + "</section>")

    def host_part(self, table: Table, base_url: str, lang: str) -> str:
        """The host's device: lobby controls, the pass-and-play names, and host controls."""
        catalog = _catalog(table.row.theme, lang)
        nonce = secrets.token_hex(8)
        parts: list[str] = []
        status = table.row.status
        if status == "lobby":
            if table.row.code:
                parts.append(self._join_qr(table, catalog, base_url))
            rows = []
            for seat in table.seats:
                up = (_button("\u2191", {"do": "move", "name": seat.name, "position": seat.position, "nonce": nonce})
                      if seat.position else "")
                remove = _button(catalog.text("web-remove"), {"do": "remove", "name": seat.name, "nonce": nonce})
                rows.append(f"<li>{_e(seat.name)} {up}{remove}</li>")
            parts.append(f'<h2>{_e(catalog.text("web-seats"))}</h2><ol class="seats">{"".join(rows)}</ol>')
            parts.append(
                f'<form method="post" class="add"><input type="hidden" name="do" value="add">'
                f'<input type="hidden" name="nonce" value="{nonce}">'
                f'<label>{_e(catalog.text("web-add-player"))} <input name="name" maxlength="20" required></label>'
                f'<button>{_e(catalog.text("web-add"))}</button></form>'
            )
            parts.append(_button(catalog.text("web-add-computers"), {"do": "computers", "nonce": nonce}))
            parts.append(_button(catalog.text("web-start"), {"do": "start", "nonce": nonce}, cls="primary"))
        else:
            local = self.local_seats(table)
            owing = set(awaiting(table.state)) if table.state is not None and status == "playing" else set()
            if local:
                names = []
                for position in local:
                    seat = table.seats[position]
                    mark = f' <span class="owes">{_e(catalog.text("web-owes"))}</span>' if position in owing else ""
                    names.append(f'<li><a class="name" href="/host/{table.row.id}/seat/{position}">'
                                 f"{_e(seat.name)}</a>{mark}</li>")
                parts.append(f'<h2>{_e(catalog.text("web-pass-title"))}</h2><ul class="pass">{"".join(names)}</ul>')
            controls = {"playing": ("pause", "end"), "paused": ("resume", "end"), "over": ("rematch",)}
            parts.append("".join(
                _button(catalog.text(f"web-{do}"), {"do": do, "nonce": nonce},
                        confirm=catalog.text("web-end-confirm") if do == "end" else "")
                for do in controls.get(status, ())))
            if table.state is not None:
                parts.append(self._board(table, catalog))
        host = table.row.host_address
        if host is not None:  # the replies to the host's own commands (a refused start, say)
            replies = [body for _i, _m, body in self.store.messages_to(CHANNEL, host, 3) if not body.get("secret")
                       and not body.get("choices")]
            parts.append('<section class="feed">' + "".join(_text(str(b.get("text", ""))) for b in reversed(replies))
                         + "</section>")
        return "".join(parts)

    # pieces

    @staticmethod
    def _status(table: Table, catalog: Catalog) -> str:
        """A paused game, or one the host ended before it was decided, says so (the board alone would not)."""
        if table.row.status == "paused":
            return _text(catalog.text("game-paused"), "status")
        if table.row.status == "over" and not any(isinstance(e, GameEnded) for e in table.log):
            assert table.state is not None
            roles = render.roles_message(table.state.roles, table.info(), catalog).text
            return _text(catalog.text("game-ended-by-host"), "status") + _text(roles, "status")
        return ""

    async def board_image(self, table: Table, lang: str) -> bytes:
        """The board as a PNG, drawn once per version of the table (every page shows the same image), off the
        event loop's thread (a drawing takes tens of milliseconds; inputs go on meanwhile)."""
        from starlette.concurrency import run_in_threadpool

        from ..board import Board, render_png

        assert table.state is not None
        version = f"{_version(table)}.{lang}"
        cached = self._boards.get(table.row.id)
        if cached is None or cached[0] != version:
            board = Board.of(public_view(table.state), table.info())  # here: the table may change meanwhile
            catalog = _catalog(table.row.theme, lang)
            cached = version, await run_in_threadpool(render_png, board, catalog)
            self._boards[table.row.id] = cached
        return cached[1]

    def _board(self, table: Table, catalog: Catalog) -> str:
        assert table.state is not None
        view = public_view(table.state)
        lines = "".join(_text(m.text) for m in render.board_messages(view, table.info(), catalog))
        version = _version(table)
        return (f'<section class="board"><img alt="" src="/table/{table.row.id}/board.png?v={version}'
                f'&amp;lang={_e(catalog.lang)}">'
                f"{lines}</section>")

    def _seats(self, table: Table, catalog: Catalog) -> str:
        names = "".join(f"<li>{_e(s.name)}</li>" for s in table.seats)
        return f'<h2>{_e(catalog.text("web-seats"))}</h2><ol class="seats">{names}</ol>'

    def _join_qr(self, table: Table, catalog: Catalog, base_url: str) -> str:
        from ..serve import _inline_svg
        from .sms import qr_svg

        code = table.row.code
        assert code is not None
        url = f"{(self.public_url or base_url).rstrip('/')}/join/{code}"
        codes = [("", url, url), *(self.ways(code) if self.ways is not None else [])]
        figures = "".join(
            f"<figure>{_inline_svg(qr_svg(link))}"
            f'<figcaption>{_e(title)} <a href="{_e(link)}">{_e(label)}</a></figcaption></figure>'
            for title, link, label in codes
        )
        return (f'<section class="join"><h2>{_e(catalog.text("web-scan-to-join"))}</h2>'
                f'<div class="codes">{figures}</div><p class="code">{_e(code)}</p></section>')


def _version(table: Table) -> str:
    """Changes whenever the board may have: game, step (every action is one), theme. Public facts only."""
    step = table.state.step if table.state is not None else 0
    return f"{table.row.game}.{step}.{table.row.theme}"


class _ReadByPage:
    """The browser channel's outbox "delivery": the page reads the outbox itself, so there is nothing to push."""

    def send(self, address: str, body: dict[str, Any]) -> None:
        return None


# --- routes -------------------------------------------------------------------------------------------------


def _web(request: Request) -> WebTables:
    web: WebTables = request.app.state.web
    if web._loop is None:
        web.bind(asyncio.get_running_loop())
    return web


def _table(request: Request) -> Table | None:
    table_id = str(request.path_params.get("table", ""))
    if not _TABLE_ID.fullmatch(table_id):
        return None
    table = _web(request).service.table(table_id)
    return table if table is not None and table.row.status != "closed" else None


def _not_found() -> Response:
    return PlainTextResponse("Not Found", status_code=404, headers=_NO_STORE)


def _forbidden(table: Table | None, request: Request) -> Response:
    theme = table.row.theme if table is not None else DEFAULT_THEME
    catalog = _catalog(theme, _language(request, theme))
    text = catalog.text("web-not-your-seat")
    return _page(text, _text(text), status=403)


def _cookie(response: Response, name: str, token: str, request: Request) -> None:
    response.set_cookie(name, token, max_age=60 * 60 * 24 * 7, httponly=True, samesite="strict",
                        secure=request.url.scheme == "https", path="/")


async def _form(request: Request) -> dict[str, str]:
    try:
        form = await request.form(max_files=0, max_fields=20)
    except Exception:  # a malformed body: treated as an empty form
        return {}
    return {k: v for k, v in form.items() if isinstance(v, str)}


async def home(request: Request) -> Response:
    """Open a table from this browser."""
    lang = _language(request)
    catalog = _catalog(DEFAULT_THEME, lang)
    options = "".join(f'<option value="{_e(t)}">{_e(_catalog(t, lang).term("game"))}</option>' for t in themes())
    body = (
        f"<h1>{_e(catalog.text('web-open-title'))}</h1>"
        f'<form method="post" action="/new" class="open">'
        f'<label>{_e(catalog.text("web-your-name"))} <input name="name" maxlength="20" required></label>'
        f'<label><input type="checkbox" name="play" value="1" checked> {_e(catalog.text("web-plays-too"))}</label>'
        f'<label>{_e(catalog.text("web-theme"))} <select name="theme">{options}</select></label>'
        f'<button class="primary">{_e(catalog.text("web-open"))}</button></form>'
    )
    return _page(catalog.text("web-open-title"), body, lang=lang)


async def new_table(request: Request) -> Response:
    """``POST /new``: a new table hosted by this browser; the host's seat (if playing) is this browser's too."""
    web = _web(request)
    form = await _form(request)
    theme = form.get("theme") if form.get("theme") in themes() else DEFAULT_THEME
    token = secrets.token_urlsafe(24)
    address = address_of(token)
    lang = _language(request, theme or DEFAULT_THEME)
    web.handle(address, OpenTable(form.get("name", "").strip(), theme=theme, seat=bool(form.get("play"))), lang=lang)
    tables = web.store.table_ids_of(CHANNEL, address)
    if not tables:
        return _not_found()
    table_id = tables[0]
    response = RedirectResponse(f"/host/{table_id}", status_code=303)
    _cookie(response, HOST_COOKIE + table_id, token, request)
    if form.get("play"):
        _cookie(response, SEAT_COOKIE + table_id, token, request)
    return response


async def join(request: Request) -> Response:
    """``POST /join/<code>``: take a seat in this browser; its token goes in a cookie, its page follows."""
    web = _web(request)
    code = str(request.path_params.get("code", "")).strip().upper()
    row = web.store.table_by_code(code) if _CODE.fullmatch(code) else None
    if row is None or row.status != "lobby":
        return _not_found()
    form = await _form(request)
    token = request.cookies.get(SEAT_COOKIE + row.id) or secrets.token_urlsafe(24)
    address = address_of(token)
    lang = _language(request, row.theme)
    web.handle(address, Join(code, form.get("name", "").strip()), nonce=form.get("nonce"), lang=lang)
    table = web.service.table(row.id)
    if table is None or table.seat_of(CHANNEL, address) is None:
        # Refused (the table is full, say): the reason, and the way back to the join page.
        replies = [b for _i, _m, b in web.store.messages_to(CHANNEL, address, 1) if not b.get("secret")]
        reason = "".join(_text(str(b.get("text", ""))) for b in replies)
        back = f'<p><a href="/join/{_e(code)}">{_e(_catalog(row.theme, lang).text("web-play-here"))}</a></p>'
        return _page(code, reason + back, lang=lang)
    response = RedirectResponse(f"/play/{row.id}", status_code=303)
    _cookie(response, SEAT_COOKIE + row.id, token, request)
    return response


def join_section(request: Request, code: str, theme: str) -> str:
    """The "play in this browser" form for ``serve``'s join page."""
    catalog = _catalog(theme, _language(request, theme))
    return (
        f'<section><h2>{_e(catalog.text("web-play-here"))}</h2>'
        f'<form method="post" action="/join/{_e(code)}">'
        f'<input type="hidden" name="nonce" value="{secrets.token_hex(8)}">'
        f'<label>{_e(catalog.text("web-your-name"))} <input name="name" maxlength="20" required></label> '
        f'<button class="primary">{_e(catalog.text("web-take-seat"))}</button></form></section>'
    )


def _own_seat(request: Request, table: Table) -> int | None:
    address = _web(request).seat_address(request, table.row.id)
    return table.seat_of(CHANNEL, address) if address else None


def _seat_for(request: Request, *, local: bool) -> tuple[Table, int] | Response:
    """The table and the seat this request may see and act for (its cookie's seat; ``local``: a seat on the host's
    device), else the answer: 404 for no such table, 403 for no such right."""
    table = _table(request)
    if table is None:
        return _not_found()
    seat = _local_seat(request, table) if local else _own_seat(request, table)
    return _forbidden(table, request) if seat is None else (table, seat)


async def seat_page(request: Request) -> Response:
    """A seat's page (its cookie), or 403."""
    found = _seat_for(request, local=False)
    if isinstance(found, Response):
        return found
    table, seat = found
    web = _web(request)
    lang = table.seats[seat].language
    if request.url.path.endswith("/live"):
        return HTMLResponse(web.seat_part(table, seat, lang), headers=_NO_STORE)
    inner = _live(f"/play/{table.row.id}/live", table.row.id, web.seat_part(table, seat, lang))
    return _page(table.seats[seat].name, inner, lang=lang)


async def decide(request: Request) -> Response:
    """``POST /play/<table>``: a button of the seat's prompt."""
    found = _seat_for(request, local=False)
    if isinstance(found, Response):
        return found
    table, seat = found
    await _choose(request, table, seat)
    return RedirectResponse(f"/play/{table.row.id}", status_code=303)


async def _choose(request: Request, table: Table, seat: int) -> None:
    form = await _form(request)
    decision = _number(form.get("decision", ""))
    token = form.get("token", "")
    if token and decision is not None:
        _web(request).handle(table.seats[seat].address, Choose(token[:64], decision), nonce=form.get("nonce"))


async def screen(request: Request) -> Response:
    """The table screen (public only)."""
    table = _table(request)
    if table is None:
        return _not_found()
    web = _web(request)
    lang = _language(request, table.row.theme)
    part = web.screen_part(table, str(request.base_url), lang)
    if request.url.path.endswith("/live"):
        return HTMLResponse(part, headers=_NO_STORE)
    title = _catalog(table.row.theme, lang).text("web-table-screen")
    return _page(title, _live(f"/table/{table.row.id}/live", table.row.id, part), lang=lang, kind="screen")


async def board_png(request: Request) -> Response:
    """The board image of the game under way."""
    table = _table(request)
    if table is None or table.state is None:
        return _not_found()
    lang = request.query_params.get("lang", DEFAULT_LANGUAGE)
    image = await _web(request).board_image(table, lang if lang in languages(table.row.theme) else DEFAULT_LANGUAGE)
    # The URL carries the version, so a changed board is a new URL; the same one may be cached briefly.
    return Response(image, media_type="image/png", headers={"Cache-Control": "private, max-age=60"})


async def events(request: Request) -> Response:
    """Server-sent events of the table's changes (no content)."""
    table = _table(request)
    if table is None:
        return _not_found()
    return StreamingResponse(_web(request).stream(table.row.id), media_type="text/event-stream",
                             headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})


async def host_page(request: Request) -> Response:
    """The host's device. ``?key=`` (printed by ``moderator play --web``) sets the host's cookie once."""
    table = _table(request)
    if table is None:
        return _not_found()
    key = request.query_params.get("key")
    if key and table.row.host_channel == CHANNEL and table.row.host_address is not None and hmac.compare_digest(
            address_of(key), table.row.host_address):
        response = RedirectResponse(f"/host/{table.row.id}", status_code=303)
        _cookie(response, HOST_COOKIE + table.row.id, key, request)
        if table.seat_of(CHANNEL, table.row.host_address) is not None:
            _cookie(response, SEAT_COOKIE + table.row.id, key, request)
        return response
    web = _web(request)
    if not web.is_host(request, table):
        return _forbidden(table, request)
    lang = _language(request, table.row.theme)
    part = web.host_part(table, str(request.base_url), lang)
    if request.url.path.endswith("/live"):
        return HTMLResponse(part, headers=_NO_STORE)
    title = _catalog(table.row.theme, lang).text("web-host-page")
    links = (f'<p class="links"><a href="/table/{table.row.id}" target="_blank">'
             f'{_e(_catalog(table.row.theme, lang).text("web-table-screen"))}</a></p>')
    return _page(title, links + _live(f"/host/{table.row.id}/live", table.row.id, part), lang=lang)


async def host_action(request: Request) -> Response:
    """``POST /host/<table>``: a lobby or host control from the host's device."""
    table = _table(request)
    if table is None:
        return _not_found()
    web = _web(request)
    if not web.is_host(request, table):
        return _forbidden(table, request)
    host = table.row.host_address
    assert host is not None
    form = await _form(request)
    nonce = form.get("nonce")
    do = form.get("do", "")
    name = form.get("name", "").strip()
    if do in _HOST_ACTIONS:
        web.handle(host, _HOST_ACTIONS[do], nonce=nonce)
    elif do == "add" and name and table.row.code:
        web.handle(local_address(host, secrets.token_hex(4)), Join(table.row.code, name), nonce=nonce,
                   lang=_language(request, table.row.theme))
    elif do == "move" and (position := _number(form.get("position", ""), 2)) is not None:
        web.handle(host, MoveSeat(name, position), nonce=nonce)  # 1-based: one place up
    elif do == "remove" and name:
        web.handle(host, RemoveSeat(name), nonce=nonce)
    return RedirectResponse(f"/host/{table.row.id}", status_code=303)


def _local_seat(request: Request, table: Table) -> int | None:
    """The pass-and-play seat in the path, if the request comes from the host's device and the seat is on it."""
    web = _web(request)
    seat = _number(str(request.path_params.get("seat", "")), 2)
    if not web.is_host(request, table) or seat is None:
        return None
    return seat if seat in web.local_seats(table) else None


async def local_seat(request: Request) -> Response:
    """Pass-and-play: one seat of the host's device behind a cover; "done" hides it and goes back to the names."""
    found = _seat_for(request, local=True)
    if isinstance(found, Response):
        return found
    table, seat = found
    lang = table.seats[seat].language
    catalog = _catalog(table.row.theme, lang)
    cover = catalog.text("web-only-you", name=table.seats[seat].name)
    part = _web(request).seat_part(table, seat, lang, cover=cover)
    if request.url.path.endswith("/live"):
        return HTMLResponse(part, headers=_NO_STORE)
    done = f'<p><a class="done" href="/host/{table.row.id}">{_e(catalog.text("web-done-pass"))}</a></p>'
    return _page(table.seats[seat].name,
                 _live(f"/host/{table.row.id}/seat/{seat}/live", table.row.id, part) + done, lang=lang)


async def local_decide(request: Request) -> Response:
    """Pass-and-play: a decision for the seat on the host's device; then back to the names (pass it on)."""
    found = _seat_for(request, local=True)
    if isinstance(found, Response):
        return found
    table, seat = found
    await _choose(request, table, seat)
    return RedirectResponse(f"/host/{table.row.id}", status_code=303)


def routes(*, open_tables: bool = True) -> list[Route]:
    """The browser channel's routes (``POST /join/<code>`` included; ``serve`` serves the join page itself).
    ``open_tables=False`` leaves out ``/`` and ``/new`` (a public server whose tables are opened elsewhere)."""
    out = [
        Route("/join/{code}", join, methods=["POST"]),
        Route("/play/{table}", seat_page, methods=["GET"]),
        Route("/play/{table}/live", seat_page, methods=["GET"]),
        Route("/play/{table}", decide, methods=["POST"]),
        Route("/table/{table}", screen, methods=["GET"]),
        Route("/table/{table}/live", screen, methods=["GET"]),
        Route("/table/{table}/events", events, methods=["GET"]),
        Route("/table/{table}/board.png", board_png, methods=["GET"]),
        Route("/host/{table}", host_page, methods=["GET"]),
        Route("/host/{table}/live", host_page, methods=["GET"]),
        Route("/host/{table}", host_action, methods=["POST"]),
        Route("/host/{table}/seat/{seat}", local_seat, methods=["GET"]),
        Route("/host/{table}/seat/{seat}/live", local_seat, methods=["GET"]),
        Route("/host/{table}/seat/{seat}", local_decide, methods=["POST"]),
    ]
    if open_tables:
        out += [Route("/", home, methods=["GET"]), Route("/new", new_table, methods=["POST"])]
    return out


def open_table(service: Service, *, name: str, play: bool, theme: str = DEFAULT_THEME,
               lang: str = DEFAULT_LANGUAGE) -> tuple[str, str]:
    """Open a table hosted by a new browser token (``moderator play --web``); returns (table id, host token)."""
    token = secrets.token_urlsafe(24)
    address = address_of(token)
    service.handle(Inbound(CHANNEL, address, OpenTable(name, theme=theme, seat=play), language=lang))
    tables = service.store.table_ids_of(CHANNEL, address)
    if not tables:
        raise ValueError(f"could not open a table with theme {theme!r}")
    return tables[0], token



# --- ``moderator play --web`` -------------------------------------------------------------------------------


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


def play_on_lan(settings: Any, *, name: str | None, theme: str, lang: str, host: str, port: int) -> int:
    """``moderator play --web``: open a table hosted by this machine and serve every page on the local network.

    Prints the table screen's address, the host's (with its key: keep it to this device) and the join QR code
    for phones. No credentials, no internet: channels that have credentials join in, as with ``serve``."""
    import dataclasses

    import uvicorn

    from ..serve import create_app
    from ..store import Store
    from .sms import qr_text

    lan = lan_address() if host in ("0.0.0.0", "::") else host
    base = f"http://{lan}:{port}"
    # Phones reach this laptop at its LAN address, whatever address the host's own browser uses.
    # (Telegram's webhook needs a public HTTPS address: without one configured it stays off.)
    settings = dataclasses.replace(settings, web=True, public_url=settings.public_url or base,
                                   telegram_token=settings.telegram_token if settings.public_url else None)
    store = Store(settings.db_path)
    try:
        table_id, key = open_table(Service(store), name=name or "", play=name is not None, theme=theme, lang=lang)
        code = store.table(table_id).code  # type: ignore[union-attr]
    finally:
        store.close()
    join_url = f"{settings.public_url}/join/{code}"
    print(qr_text(join_url))
    print(f"Phones join: {join_url}   (code {code})")
    print(f"Table screen: {settings.public_url}/table/{table_id}")
    print(f"Host, on this device only: http://127.0.0.1:{port}/host/{table_id}?key={key}")
    print("Computer players can fill empty seats from the host page. Ctrl-C stops.", flush=True)
    app = create_app(settings)
    server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning"))
    stop_streams_on_exit(server, app)
    server.run()
    return 0


def stop_streams_on_exit(server: Any, app: Any) -> None:
    """Make a uvicorn server end the browser channel's event streams as it begins to stop (else it waits for
    them to end by themselves)."""
    handle_exit = server.handle_exit

    def handle(*args: Any) -> None:
        web = getattr(app.state, "web", None)
        if web is not None:
            web.close()
        handle_exit(*args)

    server.handle_exit = handle
