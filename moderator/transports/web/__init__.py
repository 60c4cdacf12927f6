"""The browser channel: phone pages with no app, the table screen, and pass-and-play on one device.

It translates and nothing else. A browser seat is a seat like any other (channel ``web``); its address is a
hash of an unguessable token that only that browser holds, in a cookie. Pages draw what the service tells them
(``screens.Pages``: a seat's view, the table screen's, the host's) as HTML; every input goes to the service.

Routes (``routes``):

- ``GET /`` and ``POST /new``: open a table from this browser, which becomes its host.
- ``POST /join/<code>``: "play in this browser" on the join page takes a seat and sets its cookie.
- ``GET /play/<table>``: that seat's page; ``POST`` the same path decides (a button: token and decision id).
- ``GET /table/<table>``: the table screen for a laptop or TV: join QR codes and seats in the lobby, then the
  board, who the table waits for and the latest results, then the roles and the truth timeline. Public only.
- ``GET /host/<table>``: the host's device: lobby controls, and pass-and-play: every seat taken on this device is
  a name to tap; ``/host/<table>/seat/<n>`` shows that seat behind a cover and decides for it (``.../pin`` sets
  its PIN, ``.../open`` opens it with the PIN, under a guessing rule per seat; ``/host/<table>/pass/<n>``: "pass
  the device to Bob").
- ``GET /tv/<join code>``: the table screen's short address.
- ``GET /move/<code>`` and ``POST``: a seat's one-time code (the host page shows it as a QR code) opened on a new
  device, which then takes that seat over.
- ``GET /table/<table>/events``: server-sent events, one ``data:`` line per committed change of the table and
  nothing else (no content, so no secret); every page listens and fetches its own part again
  (``.../live``), so nothing needs a reload. ``GET /table/<table>/board.png``: the board image.

A page's forms are posted in the background by its script (``X-Send: 1``; the answer is JSON and the page stays
put); without the script they are plain form posts that load the next page.

Cookies are ``HttpOnly`` and ``SameSite=Strict`` (no other site can post as a seat). The service runs on the
event loop's thread; so do these routes.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import html
import json
import logging
import math
import mimetypes
import re
import secrets
import string
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from functools import cache, partial, wraps
from importlib import resources
from typing import Any, Final

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import (
    HTMLResponse,
    JSONResponse,
    PlainTextResponse,
    RedirectResponse,
    Response,
    StreamingResponse,
)
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import Receive, Scope, Send

from ...board import Board, catalog_for, layout, render_png
from ...catalog import DEFAULT_LANGUAGE, DEFAULT_THEME, Catalog, UnknownCatalog, languages, themes
from ...channels import (
    Capabilities,
    Delivered,
    Delivery,
    HostView,
    JoinWay,
    Limits,
    NotStored,
    Outbound,
    Pages,
    PromptView,
    Receipt,
    Result,
    RevealView,
    Running,
    Runtime,
    SeatView,
    Status,
    TableView,
)
from ...commands import (
    AddComputers,
    Choose,
    Command,
    Host,
    HostCommand,
    Inbound,
    Join,
    Leave,
    MovePhone,
    MoveSeat,
    OpenTable,
    RecordVotes,
    RemoveSeat,
    Rename,
    SetLanguage,
    SetReminders,
    SetTableVoting,
    SetTheme,
    Speak,
    StandIn,
    Start,
    number,
)
from ...grammar import Verb, grammar
from ...guard import (
    DEFAULT_TRUSTED_PROXIES,
    JoinGuard,
    OpenGate,
    StreamSlots,
    TrustedProxies,
    client_key,
    join_guesses,
    pin_guesses,
    retry_after,
    table_openings,
    trusted_proxies_setting,
)
from ...qr import qr_element
from ...settings import Settings

log = logging.getLogger(__name__)

CHANNEL: Final = "web"
CAPABILITIES: Final = Capabilities(buttons=True, forms=True)
"""Buttons on the page; a page shows every message it is sent (its feed), so it needs nothing more."""
SEAT_COOKIE: Final = "seat-"
HOST_COOKIE: Final = "host-"
FEED_LENGTH: Final = 40
"""Messages of its own a seat's page shows, newest first."""
STREAM_SECONDS: Final = 20.0
"""An event stream ends after this long and the browser opens a new one at once: a server shutting down never
waits on an idle stream for long."""
KEEP_ALIVE: Final = 10.0
STREAM_RETRY: Final = 15.0
"""The ``Retry-After`` of a stream refused for want of a slot (503). An ``EventSource`` cannot read it: live.js
opens the stream again after 2.5-5 s, then after longer each time, up to a minute."""

NOT_SAVED_RETRY: Final = 5
"""The ``Retry-After`` of a tap that could not be stored (503, ``NotStored``): the database was locked or could not
be written for a moment; the page says "not saved — tap again" and keeps the player where they were."""
NOT_SAVED_HEADER: Final = "X-Not-Saved"
"""Set on every answer that says nothing of a request was stored (here, and ``app.Durable``'s): live.js and seat.js
tell it from a network blip (which they send again by themselves)."""

COVER_SECONDS: Final = 60
"""A cover opened on a seat's page closes by itself after this long (time for a President to read three cards
and choose), and at once when the page is hidden or the network goes."""

ROLES_IN_A_ROW: Final = 6
"""The end screen shows up to this many seats in one row, the name under each card; more in two rows of five,
each name beside its card, so that ten long names fit a TV."""

LONG_WAITING: Final = 80
"""A "waiting for …" line longer than this (characters) is set smaller on the table screen, so that it fits
beside the last vote's ten ballots."""

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
    "web-nudge",
    "web-end",
    "web-rematch",
    "web-not-your-seat",
    "web-latest",
    "web-table-screen",
    "web-host-page",
    "web-theme",
    "web-end-confirm",
    "web-open-try-again",
    "web-open-password",
    "web-open-refused",
    "web-computers-count",
    "web-reminders",
    "web-reminders-off",
    "web-reminders-after",
    "web-set",
    "web-phone-votes",
    "web-hand-votes",
    "web-players",
    "web-stand-in",
    "web-give-back",
    "web-new-device",
    "web-move-to",
    "web-move-title",
    "web-move-take",
    "web-record-votes",
    "web-record",
    "web-you",
    "web-rename",
    "web-language",
    "web-table-language",
    "web-leave",
    "web-leave-confirm",
    "web-rules",
    "web-speak",
    "web-speak-example",
    "web-say",
    "web-executed",
    "web-cover-role",
    "web-cover-knowledge",
    "web-cover-investigation",
    "web-cover-peek",
    "web-cover-cards",
    "web-cover-vote",
    "web-cover-secret",
    "web-sending",
    "web-sent",
    "web-offline",
    "web-not-saved",
    "web-moved-on",
    "web-your-turn",
    "web-chosen",
    "web-pass-to",
    "web-pass-ready",
    "web-pin-offer",
    "web-pin",
    "web-pin-save",
    "web-pin-ask",
    "web-pin-open",
    "web-pin-wrong",
    "web-pin-wait",
    "web-this-screen",
    "web-vote-elected",
    "web-vote-rejected",
    "web-narrate",
)
"""Message ids the browser pages use (a test checks the catalogs have them)."""

_ID: Final = re.compile(r"[A-Za-z0-9]{3,40}")
"""What a table id or join code can look like: anything else is not looked up."""
_HOST_ACTIONS: Final[dict[str, Command]] = {
    "computers": AddComputers(),
    "start": Start(),
    "nudge": Host(HostCommand.NUDGE),
    "pause": Host(HostCommand.PAUSE),
    "resume": Host(HostCommand.RESUME),
    "end": Host(HostCommand.END),
    "rematch": Host(HostCommand.REMATCH),
}


def _number(text: str, digits: int = 12) -> int | None:
    """A form's or path's number: ASCII digits, at most ``digits`` of them; else None."""
    return number(text, digits)


def address_of(token: str) -> str:
    """The seat address a browser token stands for (the token itself is never stored)."""
    return "w" + hashlib.sha256(token.encode()).hexdigest()[:32]


def local_address(host: str, tag: str) -> str:
    """The address of a seat taken on the host's own device (pass-and-play); ``tag`` tells them apart."""
    return f"{host}.{tag}"


# --- pages --------------------------------------------------------------------------------------------------


@cache
def _asset(name: str) -> str:
    return resources.files(__package__).joinpath("assets", name).read_text(encoding="utf-8")


def _e(text: object) -> str:
    return html.escape(str(text))


def _page(title: str, body: str, *, lang: str = DEFAULT_LANGUAGE, status: int = 200, kind: str = "",
          style: str = "") -> HTMLResponse:
    page = string.Template(_asset("page.html")).substitute(
        title=_e(title), body=body, lang=_e(lang), style=_asset("style.css") + style, script=_asset("live.js"),
        kind=_e(kind)
    )
    return HTMLResponse(page, status_code=status, headers=_NO_STORE)


def page(request: Request, title: str, body: str, theme: str = DEFAULT_THEME) -> HTMLResponse:
    """A page of this server (the join page, say) with the house style, in the browser's language."""
    return _page(title, body, lang=_language(request, theme), kind="join-page")


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


def _said(catalog: Catalog, said: Mapping[str, str], extra: str = "") -> str:
    """The words live.js and seat.js show for a post's moments (``data-<moment>``: a message id of ``catalog``),
    and the line they show them in."""
    data = "".join(f' data-{k}="{_e(catalog.text(v))}"' for k, v in said.items())
    return (f'<div id="words" hidden{extra}{data}></div>'
            f'<p id="sending" class="sending" role="status" aria-live="polite" hidden></p>')


def _seat_script(catalog: Catalog) -> str:
    """What a seat's page adds to the live part: seat.js, its words, and the line that says "sending… / sent"."""
    said = {"sending": "web-sending", "sent": "web-sent", "offline": "web-offline", "moved-on": "web-moved-on",
            "turn": "web-your-turn", "not-saved": "web-not-saved"}
    return _said(catalog, said, f' data-cover-seconds="{COVER_SECONDS}"') + f"<script>{_asset('seat.js')}</script>"


def _live(src: str, table_id: str, inner: str, *, send: bool = False) -> str:
    """The part of a page that follows the table's event stream (fetched again from ``src`` on each change);
    ``send``: its forms are posted in the background by live.js (the host's page), never loading a page."""
    sends = ' data-send="1"' if send else ""
    return f'<div id="live" data-src="{_e(src)}" data-events="/table/{_e(table_id)}/events"{sends}>{inner}</div>'


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
    """The browser channel: who a cookie is, the live parts of every page, and their event streams."""

    def __init__(self, pages: Pages, *, public_url: str | None = None,
                 ways: Callable[[str], list[JoinWay]] = lambda code: [], delivery: Delivery | None = None,
                 gate: OpenGate | None = None, trusted: TrustedProxies | None = None,
                 pins: JoinGuard | None = None) -> None:
        self.pages = pages
        self.public_url = public_url
        """Where phones reach this server (join links and QR codes); else the address a page was asked for."""
        self.ways = ways
        """The other ways to join with a code (Telegram, SMS), shown beside the page's."""
        self.delivery = delivery
        self.gate = gate or OpenGate()
        """Who may open a table at ``/new`` (``MODERATOR_OPEN_PASSWORD``, else one a minute per client)."""
        self.trusted = trusted or TrustedProxies.parse(DEFAULT_TRUSTED_PROXIES)
        """The proxies whose ``X-Forwarded-For`` names the client (``MODERATOR_TRUSTED_PROXIES``)."""
        self.pins = pins or pin_guesses()
        """Wrong PINs per pass-and-play seat (``limits.pin_guesses``): a seat's PIN cannot be tried through."""
        self.cookie_key = pages.cookie_key()
        """The key a pass-and-play seat's PIN cookie is signed with (``Pages.cookie_key``): never shown or logged."""
        self.slots = StreamSlots()
        """Event streams open at once, per table and in all."""
        self._boards: dict[tuple[str, bool], tuple[str, bytes]] = {}
        self._listeners: dict[str, set[asyncio.Queue[None]]] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._closing = False
        pages.watch(self._changed)

    # identity

    def seat_address(self, request: Request, table_id: str) -> str | None:
        token = request.cookies.get(SEAT_COOKIE + table_id)
        return address_of(token) if token else None

    def client(self, request: Request) -> str:
        """Who a request counts as for rate limits: its address behind the trusted proxies (IPv6: its /64)."""
        return client_key(request.scope, self.trusted)

    def is_host(self, request: Request, table: TableView) -> bool:
        token = request.cookies.get(HOST_COOKIE + table.id)
        if not token or table.host_channel != CHANNEL:
            return False
        return hmac.compare_digest(address_of(token), table.host_address)

    @staticmethod
    def local_seats(table: TableView) -> list[int]:
        """Seats taken on the host's device (the host's own among them, if the host plays), in seating order."""
        host = table.host_address
        if table.host_channel != CHANNEL:
            return []
        return [s.position for s in table.seats
                if s.channel == CHANNEL and (s.address == host or s.address.startswith(host + "."))]

    # input

    def handle(self, address: str, command: Command, *, nonce: str | None = None, lang: str | None = None,
               table: str | None = None) -> Receipt:
        """One input from a page (a repeated ``nonce``, a double tap or a retry, is dropped)."""
        external = f"web:{nonce}" if nonce else None
        return self.pages.handle(Inbound(CHANNEL, address, command, external_id=external, language=lang, table=table))

    # change notification

    def bind(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop

    def _changed(self, table_id: str) -> None:
        if self.delivery is not None:
            self.delivery.kick()  # pages read the outbox themselves; this only marks their messages delivered
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

    def seat_part(self, table: TableView, position: int, lang: str, *, cover: str | None = None) -> str:
        """One seat's live part: the decision it owes (buttons), what it knows, the board, and its messages."""
        view = self.pages.seat_view(table.id, position, lang)
        catalog = _catalog(table.theme, lang)
        parts = [f'<h1>{_e(view.name)}</h1>']
        if view.in_game:
            if view.prompt is not None:
                parts.append(_prompt(catalog, view.prompt))
            elif view.record_votes:
                parts.append(_record_votes(catalog, view))
            elif view.owes_nothing:
                parts.append(_text(catalog.text("web-nothing-owed"), "quiet"))
            if table.status is Status.PLAYING:
                parts.append(_speak(catalog, self.pages.limits()))
            # The seat's role card leads what it knows, behind the same cover (the words say it too).
            card = _art(table.theme, f"role-{view.role}", catalog.term(view.role), "role") if view.role else ""
            knowledge = card + "".join(_text(line) for line in view.knowledge)
            parts.append(_covered("know", catalog.text("knowledge-title"), knowledge, catalog.text("web-reveal")))
            parts.append("".join(_text(line, "status") for line in view.status))
            parts.append(self._board(table, catalog, view.board.lines if view.board else ()))
            if view.latest is not None:  # results go to a group chat this browser cannot read
                parts.append(_latest(catalog, view.latest))
        else:
            parts.append(_seats(catalog, view.seats))
        items = []
        for line in reversed(view.feed):
            text = _text(line.text)
            title = catalog.text(f"web-cover-{line.cover or 'secret'}")
            items.append(_covered(f"m{line.id}", title, text, catalog.text("web-reveal")) if line.secret else text)
        parts.append(f'<section class="feed"><h2>{_e(catalog.text("web-messages"))}</h2>{"".join(items)}</section>')
        parts.append(_yourself(catalog, view, table))
        parts.append(_rules(catalog))
        body = "".join(parts)
        return _covered(f"cover-{position}", cover, body) if cover is not None else body

    def screen_part(self, table: TableView, base_url: str, lang: str) -> str:
        """The table screen's live part, laid out for a TV across the room: public information only."""
        catalog = _catalog(table.theme, lang)
        view = self.pages.screen_view(table.id, lang)
        if view.lobby:
            join = self._join_qr(table, catalog, base_url, big=True) if table.code else ""
            own = self._own_address(table, catalog, base_url) if table.code else ""
            return f'<div class="tv lobby">{join}<aside class="side">{_seats(catalog, view.seats)}{own}</aside></div>'
        board = self._board(table, catalog, view.board.lines if view.board else ())
        # Each public result once, newest first; the page reads the newest aloud if narration is on. What players
        # claim is set apart from the results (its own look, under its own header): it is speech, not fact.
        claimed = view.claimed or (False,) * len(view.latest)
        latest = "".join(f'<p class="msg{" claim" if said else ""}" data-say="{_e(t)}">{_e(t)}</p>'
                         for t, said in zip(view.latest, claimed, strict=True))
        status = "".join(f'<p class="status">{_e(line)}</p>' for line in view.status)
        if view.roles:
            cards = "".join(
                f'<li class="role-{_e(s.role)}{"" if s.alive else " dead"}">'
                f'{_art(table.theme, "role-" + s.role, s.role_name)}'
                f'<span class="name">{_e(s.name)}</span><span class="role">{_e(s.role_name)}</span></li>'
                for s in view.roles)
            ended = (f'<h1 class="ended" data-say="{_e(view.ended)}">{_e(view.ended)}</h1>' if view.ended else "")
            truth = ('<section class="truth" id="truth">' + "".join(_text(t) for t in view.truth) + "</section>"
                     if view.truth else "")
            many = " many" if len(view.roles) > ROLES_IN_A_ROW else ""  # two rows, each name beside its card
            return (f'<div class="tv over">{ended}{status}<ul class="roles{many}">{cards}</ul>'
                    f'<div class="end-row">{board}{truth}</div></div>')
        # A vote of ten names waited for, under the last vote's ten ballots: smaller (still read across a room).
        long = " long" if len(view.waiting) > LONG_WAITING else ""
        waiting = f'<p class="waiting{long}">{_e(view.waiting)}</p>' if view.waiting else ""
        reveal = _reveal(table.theme, view.reveal) if view.reveal is not None else ""
        return (f'<div class="tv game"><div class="main">{board}<section class="latest">'
                f'<h2>{_e(catalog.text("web-latest"))}</h2>{latest}</section></div>'
                f'<aside class="side">{status}{waiting}{reveal}</aside></div>')

    def host_part(self, table: TableView, base_url: str, lang: str) -> str:
        """The host's device: lobby controls, the pass-and-play names, and host controls."""
        catalog = _catalog(table.theme, lang)
        view = self.pages.host_view(table.id, lang, self.local_seats(table))
        nonce = secrets.token_hex(8)
        parts: list[str] = []
        if table.status is Status.LOBBY:
            if table.code:
                parts.append(self._join_qr(table, catalog, base_url))
            rows = []
            for seat in view.seats:
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
            if view.free_seats:
                count = (f'<label>{_e(catalog.text("web-computers-count"))} <input type="number" name="count" '
                         f'min="1" max="{view.free_seats}" value="1" required></label>')
                parts.append(_control("computers-n", nonce, count, catalog.text("web-add")))
            parts.append(_button(catalog.text("web-start"), {"do": "start", "nonce": nonce}, cls="primary"))
            parts.append(_lobby_settings(catalog, view, table, nonce))
        else:
            if view.local:
                names = []
                for local in view.local:
                    mark = f' <span class="owes">{_e(catalog.text("web-owes"))}</span>' if local.owes else ""
                    names.append(f'<li><a class="name" href="/host/{table.id}/seat/{local.position}">'
                                 f"{_e(local.name)}</a>{mark}</li>")
                parts.append(f'<h2>{_e(catalog.text("web-pass-title"))}</h2><ul class="pass">{"".join(names)}</ul>')
                parts.append(_latest(catalog, self.pages.screen_view(table.id, lang).latest))  # what the table saw
            parts.append("".join(
                _button(catalog.text(f"web-{do}"), {"do": do, "nonce": nonce},
                        confirm=catalog.text("web-end-confirm") if do == "end" else "")
                for do in view.controls))
            if view.seat_controls:
                parts.append(_game_seats(catalog, view, table, nonce, base_url=self.public_url or base_url))
                parts.append(_reminders(catalog, view, nonce) + _theme(catalog, table, nonce)
                             + _table_language(catalog, table, nonce))
            if view.board is not None:
                parts.append(self._board(table, catalog, view.board.lines))
        # The replies to the host's own commands (a refused start, say).
        parts.append('<section class="feed">' + "".join(_text(r) for r in reversed(view.replies)) + "</section>")
        parts.append(_rules(catalog))
        return "".join(parts)

    # pieces

    async def board_image(self, table: TableView, lang: str, *, narrow: bool = False) -> bytes:
        """The board as a PNG (``narrow``: the phone's), drawn once per picture (every page shows the same
        image), off the event loop's thread (a drawing takes tens of milliseconds; inputs go on meanwhile)."""
        board = self.pages.board(table.id)  # here, on the loop: the table may change meanwhile
        assert board is not None
        version = _picture(board, lang)
        cached = self._boards.get((table.id, narrow))
        if cached is None or cached[0] != version:
            image = await run_in_threadpool(partial(render_png, board, catalog_for(board, lang), narrow=narrow))
            cached = version, image
            self._boards[(table.id, narrow)] = cached
        return cached[1]

    def board_address(self, table: TableView, lang: str) -> str:
        """The board image's address: the same while the picture is the same (a vote leaves it alone), so a page
        fetches it again only when it changed."""
        board = self.pages.board(table.id)
        return f"/table/{table.id}/board.png?v={_picture(board, lang) if board else ''}&lang={lang}"

    def _board(self, table: TableView, catalog: Catalog, lines: Sequence[str]) -> str:
        # Its size is reserved (width and height) so nothing moves while a new picture loads; the words are the
        # image's text for whoever cannot see it.
        # A phone gets the narrow board, whose words are twice as large on its screen.
        players, limits = len(table.seats), self.pages.limits()
        fits = limits.min_players <= players <= limits.max_players  # a game's board, whose size is known
        wide, narrow = (layout(players), layout(players, True)) if fits else (None, None)
        address = self.board_address(table, catalog.lang)
        words = "\n".join(lines)
        phone = (f'<source media="(max-width: 44rem)" srcset="{_e(address)}&amp;narrow=1" width="{narrow.width}" '
                 f'height="{narrow.height}">' if narrow else "")
        size = f' width="{wide.width}" height="{wide.height}"' if wide else ""
        return (f'<section class="board"><picture>{phone}<img alt="{_e(words)}"{size} src="{_e(address)}">'
                "</picture>" + "".join(_text(line) for line in lines) + "</section>")

    def _join_qr(self, table: TableView, catalog: Catalog, base_url: str, *, big: bool = False) -> str:
        code = table.code
        assert code is not None
        url = f"{(self.public_url or base_url).rstrip('/')}/join/{code}"
        codes = [JoinWay("", url, url), *self.ways(code)]
        figures = "".join(
            f"<figure>{qr_element(way.link)}"
            f'<figcaption>{_e(way.title)} <a href="{_e(way.link)}">{_e(way.label)}</a></figcaption></figure>'
            for way in codes
        )
        heading = "h1" if big else "h2"
        return (f'<section class="join"><{heading}>{_e(catalog.text("web-scan-to-join"))}</{heading}>'
                f'<div class="codes">{figures}</div><p class="code">{_e(code)}</p></section>')

    def _own_address(self, table: TableView, catalog: Catalog, base_url: str) -> str:
        """The table screen's own short address (``/tv/<join code>``) and its QR, to open it on another screen."""
        url = f"{(self.public_url or base_url).rstrip('/')}/tv/{table.code}"
        shown = url.split("://", 1)[-1]
        return (f'<section class="own"><h2>{_e(catalog.text("web-this-screen"))}</h2>'
                f'<figure>{qr_element(url)}<figcaption><a href="{_e(url)}">{_e(shown)}</a></figcaption></figure>'
                "</section>")


def _art(theme: str, card: str, alt: str, cls: str = "") -> str:
    """One of the project's cards (``assets/art``), named in the table's words (``alt``; empty where the words
    stand beside it)."""
    more = f" {_e(cls)}" if cls else ""
    return f'<img class="card{more}" src="/static/art/{_e(theme)}/{_e(card)}.svg" alt="{_e(alt)}">'


def _reveal(theme: str, reveal: RevealView) -> str:
    """Every name's ballot in the latest decided election, Ja first."""
    ballots = sorted(reveal.ballots, key=lambda b: not b.ja)
    items = "".join(
        f'<li class="{"ja" if b.ja else "nein"}">{_art(theme, "vote-ja" if b.ja else "vote-nein", b.word)}'
        f'<span class="name">{_e(b.name)}</span> <span class="vote">{_e(b.word)}</span></li>'
        for b in ballots)
    result = "elected" if reveal.elected else "rejected"
    many = " many" if len(ballots) > ROLES_IN_A_ROW else ""  # the card's tick or cross says it; the word is its alt
    return (f'<section class="reveal {result}"><h2>{_e(reveal.title)}</h2><ul class="ballots{many}">{items}</ul>'
            "</section>")


def _picture(board: Board, lang: str) -> str:
    """A name for what the board image shows in ``lang``: the same exactly when the picture is."""
    drawn = json.dumps(board.drawn(), sort_keys=True)
    return hashlib.sha256(f"{drawn}|{lang}".encode()).hexdigest()[:16]


_REMINDER_MINUTES: Final = (0, 1, 2, 3, 5, 10)
"""The reminder delays the host page offers (0: off); typed, any number of minutes works."""


def _control(do: str, nonce: str, inner: str, label: str) -> str:
    """A host form: its fields (``inner``) and one button."""
    return (f'<form method="post" class="control"><input type="hidden" name="do" value="{_e(do)}">'
            f'<input type="hidden" name="nonce" value="{_e(nonce)}">{inner} <button>{_e(label)}</button></form>')


def _select(name: str, choices: Sequence[tuple[str, str]], selected: str) -> str:
    items = "".join(f'<option value="{_e(v)}"{" selected" if v == selected else ""}>{_e(label)}</option>'
                    for v, label in choices)
    return f'<select name="{_e(name)}">{items}</select>'


def _reminders(catalog: Catalog, view: HostView, nonce: str) -> str:
    """Reminders: off, or after N minutes without a decision."""
    choices = [(str(m), catalog.text("web-reminders-after", minutes=m) if m else catalog.text("web-reminders-off"))
               for m in sorted({*_REMINDER_MINUTES, view.reminder_minutes})]
    minutes = _select("minutes", choices, str(view.reminder_minutes))
    field = f'<label>{_e(catalog.text("web-reminders"))} {minutes}</label>'
    return _control("reminders", nonce, field, catalog.text("web-set"))


def _theme(catalog: Catalog, table: TableView, nonce: str) -> str:
    """The table's theme (its words and colours) from now on."""
    theme = _select("theme", [(t, t) for t in themes()], table.theme)
    return _control("theme", nonce, f'<label>{_e(catalog.text("web-theme"))} {theme}</label>', catalog.text("web-set"))


def _table_language(catalog: Catalog, table: TableView, nonce: str) -> str:
    """The table's language: the table screen's (and a host's own, at their seat)."""
    langs = _select("language", [(lang, lang) for lang in languages(table.theme)], table.language)
    return _control("language", nonce, f'<label>{_e(catalog.text("web-table-language"))} {langs}</label>',
                    catalog.text("web-set"))


def _lobby_settings(catalog: Catalog, view: HostView, table: TableView, nonce: str) -> str:
    """How the table plays: votes on the phones or at the table, reminders, the theme."""
    votes = catalog.text("table-votes-on" if view.table_votes else "table-votes-off")
    switch = _button(catalog.text("web-phone-votes" if view.table_votes else "web-hand-votes"),
                     {"do": "tablevotes", "on": "0" if view.table_votes else "1", "nonce": nonce})
    return (f'<section class="settings"><p class="quiet">{_e(votes)}</p>{switch}'
            + _reminders(catalog, view, nonce) + _theme(catalog, table, nonce) + _table_language(catalog, table, nonce)
            + "</section>")


def _game_seats(catalog: Catalog, view: HostView, table: TableView, nonce: str, *, base_url: str) -> str:
    """Every player's seat during a game: a computer stands in or gives it back; a new device takes it over."""
    rows = []
    for seat in view.seats:
        if seat.computer and not seat.stand_in:
            continue
        stood_in = seat.stand_in
        stand = _button(catalog.text("web-give-back" if stood_in else "web-stand-in"),
                        {"do": "return" if stood_in else "standin", "name": seat.name, "nonce": nonce})
        device = _button(catalog.text("web-new-device"), {"do": "newdevice", "name": seat.name, "nonce": nonce})
        rows.append(f"<li>{_e(seat.name)} {stand}{device}</li>")
    moves = "".join(
        f'<figure class="move">{qr_element(url)}<figcaption>{_e(catalog.text("web-move-to", name=m.name))} '
        f'<a href="{_e(url)}">{_e(url)}</a> <span class="code">{_e(m.code)}</span></figcaption></figure>'
        for m in view.moves for url in [f"{base_url.rstrip('/')}/move/{m.code}"]
    )
    return f'<h2>{_e(catalog.text("web-players"))}</h2><ol class="seats">{"".join(rows)}</ol>{moves}'


def _record_votes(catalog: Catalog, view: SeatView) -> str:
    """The President records the table's vote: a box for every player who voted Ja."""
    boxes = "".join(f'<label class="voter"><input type="checkbox" name="ja-{i}" value="{_e(name)}"> {_e(name)}</label>'
                    for i, name in enumerate(view.record_votes))
    return (f'<section class="prompt record"><p class="msg">{_e(catalog.text("web-record-votes"))}</p>'
            f'<form method="post"><input type="hidden" name="do" value="votes">'
            f'<input type="hidden" name="nonce" value="{secrets.token_hex(8)}">{boxes}'
            f'<button class="primary">{_e(catalog.text("web-record"))}</button></form></section>')


_SPEAK: Final = (Verb.CLAIM, Verb.ACCUSE, Verb.TRUST)


def _speak(catalog: Catalog, limits: Limits) -> str:
    """Say something to the table that the game records with the next result: a claim, an accusation, trust."""
    kinds = _select("kind", [(v.value, grammar().shown(v, catalog.lang) or v.value) for v in _SPEAK], Verb.CLAIM.value)
    field = (f'{kinds} <input name="text" maxlength="{limits.claim_length}" required '
             f'placeholder="{_e(catalog.text("web-speak-example"))}">')
    return (f'<details class="speak"><summary>{_e(catalog.text("web-speak"))}</summary>'
            f'{_control("speak", secrets.token_hex(8), field, catalog.text("web-say"))}</details>')


def _yourself(catalog: Catalog, view: SeatView, table: TableView) -> str:
    """The seat's own settings: its name, its language, and leaving a lobby."""
    nonce = secrets.token_hex(8)
    name = (f'<label>{_e(catalog.text("web-your-name"))} <input name="name" maxlength="20" required '
            f'value="{_e(view.name)}"></label>')
    langs = _select("language", [(lang, lang) for lang in languages(table.theme)], view.language)
    parts = [_control("rename", nonce, name, catalog.text("web-rename")),
             _control("language", nonce, f'<label>{_e(catalog.text("web-language"))} {langs}</label>',
                      catalog.text("web-set"))]
    if table.status is Status.LOBBY:
        parts.append(_button(catalog.text("web-leave"), {"do": "leave", "nonce": nonce},
                             confirm=catalog.text("web-leave-confirm")))
    return f'<details class="yourself"><summary>{_e(catalog.text("web-you"))}</summary>{"".join(parts)}</details>'


def _rules(catalog: Catalog) -> str:
    """The rules in short, folded away until asked for."""
    return (f'<details class="rules"><summary>{_e(catalog.text("web-rules"))}</summary>'
            f'{_text(catalog.text("rules-summary"))}</details>')


def _prompt(catalog: Catalog, prompt: PromptView) -> str:
    """The decision a seat owes, its buttons sent in the background by seat.js (a plain post without it); the
    answer already given (a vote, which may change until the last one is in) is marked."""
    nonce = secrets.token_hex(8)
    buttons = []
    cards = prompt.cards or ("",) * len(prompt.options)
    for o, card in zip(prompt.options, cards, strict=True):
        chosen = o.label == prompt.chosen
        mark = f' <span class="mark">({_e(catalog.text("web-chosen"))})</span>' if chosen else ""
        hidden = "".join(f'<input type="hidden" name="{k}" value="{_e(v)}">'
                         for k, v in (("token", o.token), ("decision", prompt.decision), ("nonce", nonce)))
        pressed = ' aria-pressed="true"' if chosen else ""
        art = _art(catalog.theme, card, "") if card else ""  # (after the words, which a reader of the page takes)
        buttons.append(f'<form method="post" class="inline">{hidden}'
                       f'<button class="choice"{pressed}>{_e(o.label)}{mark}{art}</button></form>')
    inner = _text(prompt.text) + f'<div class="choices">{"".join(buttons)}</div>'
    if prompt.secret:
        title = catalog.text(f"web-cover-{prompt.cover or 'secret'}")
        inner = _covered(f"prompt-{prompt.decision}", title, inner, catalog.text("web-reveal"))
    waiting = ' data-waiting="1"' if prompt.waiting else ""
    return (f'<section class="prompt" id="owed" data-decision="{prompt.decision}"{waiting}>{inner}</section>')


def _seats(catalog: Catalog, names: Sequence[str]) -> str:
    items = "".join(f"<li>{_e(n)}</li>" for n in names)
    return f'<h2>{_e(catalog.text("web-seats"))}</h2><ol class="seats">{items}</ol>'


def _latest(catalog: Catalog, latest: Sequence[str]) -> str:
    return (f'<section class="latest"><h2>{_e(catalog.text("web-latest"))}</h2>'
            + "".join(_text(t) for t in latest) + "</section>")


class ReadByPage:
    """The browser channel's delivery: a page reads its messages itself, so delivering one only marks it read."""

    capabilities: Final = CAPABILITIES

    def send_batch(self, address: str, messages: Sequence[Outbound]) -> list[Result]:
        return [Delivered() for _ in messages]


# --- routes -------------------------------------------------------------------------------------------------


def _web(request: Request) -> WebTables:
    running: Running = request.app.state.channels[CHANNEL]
    web: WebTables = running.state
    if web._loop is None:
        web.bind(asyncio.get_running_loop())
    return web


def _table(request: Request) -> TableView | None:
    table_id = str(request.path_params.get("table", ""))
    if not _ID.fullmatch(table_id):
        return None
    return _web(request).pages.table_info(table_id)


def _not_found() -> Response:
    return PlainTextResponse("Not Found", status_code=404, headers=_NO_STORE)


def _forbidden(table: TableView | None, request: Request) -> Response:
    theme = table.theme if table is not None else DEFAULT_THEME
    catalog = _catalog(theme, _language(request, theme))
    text = catalog.text("web-not-your-seat")
    return _page(text, _text(text), lang=catalog.lang, status=403)


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
    return _home(request)


def _home(request: Request, *, status: int = 200, note: str | None = None) -> Response:
    """The "open a table" form (with the operator's password field if one is set), after ``note`` if any."""
    lang = _language(request)
    catalog = _catalog(DEFAULT_THEME, lang)
    options = "".join(f'<option value="{_e(t)}">{_e(_catalog(t, lang).term("game"))}</option>' for t in themes())
    password = (f'<label>{_e(catalog.text("web-open-password"))} <input type="password" name="password" '
                f'maxlength="200" required></label>' if _web(request).gate.password else "")
    body = (
        f"<h1>{_e(catalog.text('web-open-title'))}</h1>"
        + (_text(catalog.text(note)) if note else "")
        + f'<form method="post" action="/new" class="open">'
        f'<label>{_e(catalog.text("web-your-name"))} <input name="name" maxlength="20" required></label>'
        f'<label><input type="checkbox" name="play" value="1" checked> {_e(catalog.text("web-plays-too"))}</label>'
        f'<label>{_e(catalog.text("web-theme"))} <select name="theme">{options}</select></label>'
        f"{password}"
        f'<button class="primary">{_e(catalog.text("web-open"))}</button></form>'
    )
    return _page(catalog.text("web-open-title"), body, lang=lang, status=status)


def try_again(request: Request, seconds: float, message_id: str = "try-again") -> Response:
    """429 with ``Retry-After``: the catalog's "try again in …" in the browser's language."""
    lang = _language(request)
    wait = retry_after(seconds)
    text = _catalog(DEFAULT_THEME, lang).text(message_id, seconds=int(wait))
    response = _page(text, _text(text), lang=lang, status=429)
    response.headers["Retry-After"] = wait
    return response


def not_saved(request: Request) -> Response:
    """503 with ``Retry-After``: the tap could not be stored (nothing of it happened). To a tap sent in the
    background (``X-Send``) JSON like every answer to one (``saved`` false, ``reply`` the words to show); else a
    page that says so, with the way back to tap again."""
    lang = _language(request)
    text = _catalog(DEFAULT_THEME, lang).text("web-not-saved")
    headers = {**_NO_STORE, "Retry-After": str(NOT_SAVED_RETRY), NOT_SAVED_HEADER: "1"}
    if request.headers.get("x-send") == "1":
        answer = {"counted": False, "repeat": False, "saved": False, "reply": text}
        return JSONResponse(answer, status_code=503, headers=headers)
    back = request.url.path if request.url.path != "/new" else "/"  # each form's page is at its own address
    response = _page(text, _text(text) + f'<p><a href="{_e(back)}">{_e(text)}</a></p>', lang=lang, status=503)
    response.headers.update(headers)
    return response


def _saved(endpoint: Callable[[Request], Awaitable[Response]]) -> Callable[[Request], Awaitable[Response]]:
    """A form's endpoint whose input may not be stored (``NotStored``): then ``not_saved`` answers, not a 500."""
    @wraps(endpoint)
    async def run(request: Request) -> Response:
        try:
            return await endpoint(request)
        except NotStored as exc:
            log.error("a tap in a browser could not be stored (%s); it is asked to tap again", exc)
            return not_saved(request)

    return run


async def new_table(request: Request) -> Response:
    """``POST /new``: a new table hosted by this browser; the host's seat (if playing) is this browser's too.
    Only with a name, and only as ``WebTables.gate`` allows (the operator's password, or one a minute)."""
    web = _web(request)
    form = await _form(request)
    name = form.get("name", "").strip()
    if not name:  # a malformed form (or none): no table without its host's name
        return _home(request, status=400)
    wait = web.gate.check(web.client(request), form.get("password"))
    if wait == math.inf:
        return _home(request, status=403, note="web-open-refused")
    if wait > 0:
        return try_again(request, wait, "web-open-try-again")
    theme = form.get("theme") if form.get("theme") in themes() else DEFAULT_THEME
    lang = _language(request, theme or DEFAULT_THEME)
    opened = open_table(web.pages, name=name, play=bool(form.get("play")),
                        theme=theme or DEFAULT_THEME, lang=lang)
    if opened is None:
        return _not_found()
    table_id, token = opened
    response = RedirectResponse(f"/host/{table_id}", status_code=303)
    _cookie(response, HOST_COOKIE + table_id, token, request)
    if form.get("play"):
        _cookie(response, SEAT_COOKIE + table_id, token, request)
    return response


async def join(request: Request) -> Response:
    """``POST /join/<code>``: take a seat in this browser; its token goes in a cookie, its page follows."""
    web = _web(request)
    code = str(request.path_params.get("code", "")).strip().upper()
    table = web.pages.table_by_code(code) if _ID.fullmatch(code) else None
    wait = web.pages.join_attempt(web.client(request), table is not None)
    if wait > 0:  # too many unknown codes from this client: the same answer, known code or not
        return try_again(request, wait)
    if table is None or table.status is not Status.LOBBY:
        return _not_found()
    form = await _form(request)
    token = request.cookies.get(SEAT_COOKIE + table.id) or secrets.token_urlsafe(24)
    address = address_of(token)
    lang = _language(request, table.theme)
    web.handle(address, Join(code, form.get("name", "").strip()), nonce=form.get("nonce"), lang=lang)
    after = web.pages.table_info(table.id)
    if after is None or after.seat_of(CHANNEL, address) is None:
        # Refused (the table is full, say): the reason, and the way back to the join page.
        replies = [line for line in web.pages.feed(CHANNEL, address, 1, this_game=False, table_id=table.id)
                   if not line.secret]
        reason = "".join(_text(line.text) for line in replies)
        back = f'<p><a href="/join/{_e(code)}">{_e(_catalog(table.theme, lang).text("web-play-here"))}</a></p>'
        return _page(code, reason + back, lang=lang)
    response = RedirectResponse(f"/play/{table.id}", status_code=303)
    _cookie(response, SEAT_COOKIE + table.id, token, request)
    return response


def join_section(request: Request, code: str, theme: str) -> str:
    """The "play in this browser" form for the join page."""
    catalog = _catalog(theme, _language(request, theme))
    return (
        f'<section><h2>{_e(catalog.text("web-play-here"))}</h2>'
        f'<form method="post" action="/join/{_e(code)}">'
        f'<input type="hidden" name="nonce" value="{secrets.token_hex(8)}">'
        f'<label>{_e(catalog.text("web-your-name"))} <input name="name" maxlength="20" required></label> '
        f'<button class="primary">{_e(catalog.text("web-take-seat"))}</button></form></section>'
    )


def _own_seat(request: Request, table: TableView) -> int | None:
    address = _web(request).seat_address(request, table.id)
    return table.seat_of(CHANNEL, address) if address else None


def _seat_for(request: Request, *, local: bool) -> tuple[TableView, int] | Response:
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
    inner = _live(f"/play/{table.id}/live", table.id, web.seat_part(table, seat, lang), send=True)
    return _page(table.seats[seat].name, inner + _seat_script(_catalog(table.theme, lang)), lang=lang, kind="seat")


async def decide(request: Request) -> Response:
    """``POST /play/<table>``: a button of the seat's prompt (sent in the background: the answer is JSON)."""
    found = _seat_for(request, local=False)
    if isinstance(found, Response):
        return found
    table, seat = found
    leaving = (await _form(request)).get("do") == "leave" and table.code
    answer = await _choose(request, table, seat, then=f"/join/{table.code}" if leaving else None)
    if answer is not None:
        return answer
    after = _web(request).pages.table_info(table.id)
    if table.code and (after is None or after.seat_of(CHANNEL, table.seats[seat].address) is None):
        return RedirectResponse(f"/join/{table.code}", status_code=303)  # left the lobby: back to its join page
    return RedirectResponse(f"/play/{table.id}", status_code=303)


async def move_page(request: Request) -> Response:
    """``GET /move/<code>``: a seat's one-time code, opened on its new device: one button takes the seat over."""
    theme = DEFAULT_THEME
    catalog = _catalog(theme, _language(request, theme))
    form = (f'<form method="post"><input type="hidden" name="nonce" value="{secrets.token_hex(8)}">'
            f'<button class="primary">{_e(catalog.text("web-move-take"))}</button></form>')
    return _page(catalog.text("web-move-title"), f'<h1>{_e(catalog.text("web-move-title"))}</h1>{form}',
                 lang=catalog.lang)


def _by_code(request: Request, find: Callable[[str], TableView | None]) -> tuple[TableView, str] | Response:
    """The table a code in the path names (``find``), under the guessing rule every way in shares: a try with an
    unknown code costs one of the client's tries, and an empty bucket answers the same, known code or not."""
    web = _web(request)
    code = str(request.path_params.get("code", "")).strip().upper()
    table = find(code) if _ID.fullmatch(code) else None
    wait = web.pages.join_attempt(web.client(request), table is not None)
    if wait > 0:
        return try_again(request, wait)
    return _not_found() if table is None else (table, code)


async def move_seat(request: Request) -> Response:
    """``POST /move/<code>``: this browser takes over the seat the code was given for; its page follows."""
    web = _web(request)
    found = _by_code(request, web.pages.table_by_move_code)
    if isinstance(found, Response):
        return found
    table, code = found
    form = await _form(request)
    token = secrets.token_urlsafe(24)
    address = address_of(token)
    web.handle(address, Join(code, ""), nonce=form.get("nonce"), lang=_language(request, table.theme))
    after = web.pages.table_info(table.id)
    if after is None or after.seat_of(CHANNEL, address) is None:
        return _not_found()
    response = RedirectResponse(f"/play/{table.id}", status_code=303)
    _cookie(response, SEAT_COOKIE + table.id, token, request)
    return response


async def _choose(request: Request, table: TableView, seat: int, *, then: str | None = None) -> Response | None:
    """Hand a button's choice (or a seat's own control) to the service. Sent by seat.js (``X-Send: 1``), the
    answer is JSON for the page to show: ``counted`` (this time or, a retry, before) or not, and the service's reply
    if not; else None."""
    form = await _form(request)
    web, address, nonce = _web(request), table.seats[seat].address, form.get("nonce")
    decision = _number(form.get("decision", ""))
    token = form.get("token", "")
    do = form.get("do", "")
    name = form.get("name", "").strip()
    receipt = None
    if token and decision is not None:
        receipt = web.handle(address, Choose(token[:64], decision), nonce=nonce, table=table.id)
    elif do == "votes":
        ja = tuple(v for k, v in form.items() if k.startswith("ja-"))
        receipt = web.handle(address, RecordVotes(ja), nonce=nonce, table=table.id)
    elif do == "rename" and name:
        receipt = web.handle(address, Rename(name), nonce=nonce, table=table.id)
    elif do == "language" and form.get("language") in languages(table.theme):
        receipt = web.handle(address, SetLanguage(form["language"]), nonce=nonce, table=table.id)
    elif do == "leave":
        receipt = web.handle(address, Leave(), nonce=nonce, table=table.id)
    elif do == "speak" and form.get("kind") in {v.value for v in _SPEAK} and form.get("text", "").strip():
        receipt = web.handle(address, Speak(form["kind"], form["text"].strip()), nonce=nonce, table=table.id)
    if request.headers.get("x-send") != "1":
        return None
    # A decision counts when the game took it; a seat's own control (a rename, a claim) once the service has it.
    decides = bool(token and decision is not None) or do == "votes"
    counted = receipt is not None and (receipt.applied or receipt.duplicate or not decides)
    reply = ""
    if not counted:  # the service said why (too late, say): its newest reply to this seat
        lines = web.pages.feed(CHANNEL, address, 1, this_game=False, table_id=table.id)
        reply = receipt.notice if receipt is not None and receipt.notice else \
            "".join(line.text for line in lines if not line.secret)
    answer: dict[str, object] = {"counted": counted, "repeat": bool(receipt and receipt.duplicate), "reply": reply}
    if then is not None and counted:
        answer["next"] = then  # pass-and-play: the device goes on to the next player
    return JSONResponse(answer, headers=_NO_STORE)


async def screen(request: Request) -> Response:
    """The table screen (public only)."""
    table = _table(request)
    if table is None:
        return _not_found()
    web = _web(request)
    lang = table.language if table.language in languages(table.theme) else DEFAULT_LANGUAGE  # the table's, not the TV's
    part = web.screen_part(table, str(request.base_url), lang)
    if request.url.path.endswith("/live"):
        return HTMLResponse(part, headers=_NO_STORE)
    catalog = _catalog(table.theme, lang)
    # Narration stays off until someone turns it on at this screen (screen.js keeps the choice in the browser).
    narrate = (f'<label class="narrate"><input type="checkbox" id="narrate"> {_e(catalog.text("web-narrate"))}'
               "</label>")
    body = _live(f"/table/{table.id}/live", table.id, part) + narrate + f"<script>{_asset('screen.js')}</script>"
    return _page(catalog.text("web-table-screen"), body, lang=lang, kind=f"screen {table.theme}",
                 style=_asset("screen.css"))


async def short_screen(request: Request) -> Response:
    """``GET /tv/<join code>``: the table screen's short address, easy to type on a TV's remote."""
    # A guess costs as a wrong join code does: the short address is no way to try codes faster.
    found = _by_code(request, _web(request).pages.table_by_code)
    return found if isinstance(found, Response) else RedirectResponse(f"/table/{found[0].id}", status_code=303)


async def board_png(request: Request) -> Response:
    """The board image of the game under way."""
    table = _table(request)
    if table is None or table.status is Status.LOBBY or not table.game:
        return _not_found()
    web = _web(request)
    lang = request.query_params.get("lang", DEFAULT_LANGUAGE)
    lang = lang if lang in languages(table.theme) else DEFAULT_LANGUAGE
    image = await web.board_image(table, lang, narrow=request.query_params.get("narrow") == "1")
    # The address names the picture, so a changed board is a new address and the same one may be kept; an old
    # address answers with today's picture, not to be kept.
    current = request.query_params.get("v") == web.board_address(table, lang).split("v=", 1)[1].split("&", 1)[0]
    cache = "private, max-age=86400" if current else "no-store"
    return Response(image, media_type="image/png", headers={"Cache-Control": cache})


async def events(request: Request) -> Response:
    """Server-sent events of the table's changes (no content); 503 with ``Retry-After`` when the table or the
    server has as many streams open as ``WebTables.slots`` allows."""
    table = _table(request)
    if table is None:
        return _not_found()
    web = _web(request)
    if not web.slots.acquire(table.id):
        return StreamSlots.busy(STREAM_RETRY)
    table_id = table.id
    return _HeldStream(web.stream(table_id), lambda: web.slots.release(table_id), media_type="text/event-stream",
                       headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})


class _HeldStream(StreamingResponse):
    """A stream that gives its slot back however it ends: finished, the client gone, the server stopping."""

    def __init__(self, content: AsyncIterator[str], release: Callable[[], None], **options: Any) -> None:
        super().__init__(content, **options)
        self._release = release

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self._release()


async def host_page(request: Request) -> Response:
    """The host's device. ``?key=`` (printed by ``moderator play --web``) sets the host's cookie once."""
    table = _table(request)
    if table is None:
        return _not_found()
    key = request.query_params.get("key")
    if key and table.host_channel == CHANNEL and hmac.compare_digest(address_of(key), table.host_address):
        response = RedirectResponse(f"/host/{table.id}", status_code=303)
        _cookie(response, HOST_COOKIE + table.id, key, request)
        if table.seat_of(CHANNEL, table.host_address) is not None:
            _cookie(response, SEAT_COOKIE + table.id, key, request)
        return response
    web = _web(request)
    if not web.is_host(request, table):
        return _forbidden(table, request)
    lang = _language(request, table.theme)
    part = web.host_part(table, str(request.base_url), lang)
    if request.url.path.endswith("/live"):
        return HTMLResponse(part, headers=_NO_STORE)
    catalog = _catalog(table.theme, lang)
    title = catalog.text("web-host-page")
    links = (f'<p class="links"><a href="/table/{table.id}" target="_blank">'
             f'{_e(catalog.text("web-table-screen"))}</a></p>')
    # live.js's words for a post that got no answer or was not stored (an empty 503 from ``app.Durable`` too).
    said = _said(catalog, {"not-saved": "web-not-saved", "offline": "web-offline"})
    return _page(title, links + said + _live(f"/host/{table.id}/live", table.id, part, send=True), lang=lang)


async def host_action(request: Request) -> Response:
    """``POST /host/<table>``: a lobby or host control from the host's device. Sent by live.js (``X-Send: 1``),
    the answer is JSON (``counted``: handed to the service, this time or, ``repeat``, before; a refusal is its reply
    on the page) and the page fetches its part again; else the host page follows."""
    table = _table(request)
    if table is None:
        return _not_found()
    web = _web(request)
    if not web.is_host(request, table):
        return _forbidden(table, request)
    host = table.host_address
    form = await _form(request)
    nonce = form.get("nonce")
    do = form.get("do", "")
    name = form.get("name", "").strip()
    receipt: Receipt | None = None
    if do in _HOST_ACTIONS:
        receipt = web.handle(host, _HOST_ACTIONS[do], nonce=nonce, table=table.id)
    elif do == "add" and name and table.code:
        receipt = web.handle(local_address(host, secrets.token_hex(4)), Join(table.code, name), nonce=nonce,
                             lang=_language(request, table.theme))
    elif do == "move" and (position := _number(form.get("position", ""), 2)) is not None:
        receipt = web.handle(host, MoveSeat(name, position), nonce=nonce, table=table.id)  # 1-based: one place up
    elif do == "remove" and name:
        receipt = web.handle(host, RemoveSeat(name), nonce=nonce, table=table.id)
    elif do == "computers-n" and (count := _number(form.get("count", ""), 2)) is not None:
        receipt = web.handle(host, AddComputers(count), nonce=nonce, table=table.id)
    elif do == "tablevotes" and form.get("on") in ("0", "1"):
        receipt = web.handle(host, SetTableVoting(form.get("on") == "1"), nonce=nonce, table=table.id)
    elif do == "reminders" and (minutes := _number(form.get("minutes", ""), 3)) is not None:
        receipt = web.handle(host, SetReminders(minutes or None), nonce=nonce, table=table.id)
    elif do == "theme" and form.get("theme") in themes():
        receipt = web.handle(host, SetTheme(form["theme"]), nonce=nonce, table=table.id)
    elif do == "language" and form.get("language") in languages(table.theme):
        receipt = web.handle(host, SetLanguage(form["language"]), nonce=nonce, table=table.id)
    elif do in ("standin", "return") and name:
        receipt = web.handle(host, StandIn(name, back=do == "return"), nonce=nonce, table=table.id)
    elif do == "newdevice" and name:
        receipt = web.handle(host, MovePhone(name), nonce=nonce, table=table.id)
    if request.headers.get("x-send") == "1":  # a refusal is the service's reply, which the part shows
        answer = {"counted": receipt is not None, "repeat": bool(receipt and receipt.duplicate)}
        return JSONResponse(answer, headers=_NO_STORE)
    return RedirectResponse(f"/host/{table.id}", status_code=303)


PIN_COOKIE: Final = "pin-"
"""Pass-and-play: a seat's PIN, as its HMAC under the server's key (``WebTables.cookie_key``), in the host device's
cookie ``pin-<table>-<seat>`` (HttpOnly: the page cannot read it; the device's people cannot see it). Without the
key nobody who reads the cookie can try PINs against it, nor make one for a PIN of their choosing. ``open-<table>``:
the one seat opened with its PIN (an HMAC of that seat and its PIN cookie), until the device is passed on."""
OPEN_COOKIE: Final = "open-"
PIN_MAC: Final = "m1."
"""How a PIN cookie's value starts (the form of its MAC)."""


def _mac(web: WebTables, *parts: str) -> str:
    return hmac.new(web.cookie_key, "|".join(parts).encode(), hashlib.sha256).hexdigest()


def _pin_mac(web: WebTables, table: TableView, seat: int, pin: str) -> str:
    """The value of a seat's PIN cookie for ``pin``: bound to the host's device, the table and the seat."""
    return PIN_MAC + _mac(web, "pin", table.host_address, table.id, str(seat), pin)


def _open_mac(web: WebTables, table: TableView, seat: int, pin_cookie: str) -> str:
    """The value of the ``open-`` cookie for a seat opened with its PIN: only the server can make it."""
    return f"{seat}." + _mac(web, "open", table.id, str(seat), pin_cookie)


def _pin_cookie(request: Request, table: TableView, seat: int) -> str | None:
    """A seat's PIN cookie on this device, if it has one (today's form or the one before, ``_old_pin``)."""
    return request.cookies.get(f"{PIN_COOKIE}{table.id}-{seat}")


def _old_pin(table: TableView, seat: int, pin: str) -> str:
    """A PIN cookie as it was made before PINs were signed with the server's key (an unsalted hash). A game
    under way across the upgrade keeps its seats locked: such a cookie still asks for its PIN, and the right
    PIN replaces it with today's form."""
    return hashlib.sha256(f"{table.host_address}|{table.id}|{seat}|{pin}".encode()).hexdigest()[:32]


def _locked(request: Request, table: TableView, seat: int) -> bool:
    """A seat with a PIN not opened with it on this device since it was last passed on."""
    pin = _pin_cookie(request, table, seat)
    if pin is None:
        return False
    opened = request.cookies.get(OPEN_COOKIE + table.id, "")
    return not hmac.compare_digest(opened, _open_mac(_web(request), table, seat, pin))


def _local_seat(request: Request, table: TableView, *, unlocked: bool = True) -> int | None:
    """The pass-and-play seat in the path, if the request comes from the host's device and the seat is on it
    (``unlocked``: and opened with its PIN, if it has one)."""
    web = _web(request)
    seat = _number(str(request.path_params.get("seat", "")), 2)
    if not web.is_host(request, table) or seat is None or seat not in web.local_seats(table):
        return None
    return None if unlocked and _locked(request, table, seat) else seat


def _pass_url(table: TableView, seat: int) -> str:
    return f"/host/{table.id}/pass/{seat}"


async def local_seat(request: Request) -> Response:
    """Pass-and-play: one seat of the host's device behind a cover (its PIN first, if it has one); "done", always
    in reach at the foot of the screen, hides it and passes the device on."""
    table = _table(request)
    if table is None:
        return _not_found()
    seat = _local_seat(request, table, unlocked=False)
    if seat is None:
        return _forbidden(table, request)
    lang = table.seats[seat].language
    catalog = _catalog(table.theme, lang)
    name = table.seats[seat].name
    if _locked(request, table, seat):
        if request.url.path.endswith("/live"):
            return _forbidden(table, request)
        return _pin_page(table, seat, "web-pin-wrong" if request.query_params.get("wrong") else "")
    cover = catalog.text("web-only-you", name=name)
    part = _web(request).seat_part(table, seat, lang, cover=cover)
    if request.url.path.endswith("/live"):
        return HTMLResponse(part, headers=_NO_STORE)
    pin = "" if _pin_cookie(request, table, seat) is not None else \
        _pin_form(table, seat, catalog, "web-pin-offer", "web-pin-save", "pin")
    done = (f'<p class="bar"><a class="done" href="{_pass_url(table, seat)}">'
            f'{_e(catalog.text("web-done-pass"))}</a></p>')
    body = _live(f"/host/{table.id}/seat/{seat}/live", table.id, part, send=True) + pin + done
    return _page(name, body + _seat_script(catalog), lang=lang, kind="seat")


def _pin_page(table: TableView, seat: int, note: str, *, seconds: float = 0) -> HTMLResponse:
    """A locked seat: its PIN asked for, after ``note`` if any (a wrong PIN; ``seconds``: too many, wait)."""
    lang = table.seats[seat].language
    catalog = _catalog(table.theme, lang)
    name = table.seats[seat].name
    wait = retry_after(seconds) if seconds else ""
    said = _text(catalog.text(note, seconds=int(wait or 0)), "refused") if note else ""
    ask = _pin_form(table, seat, catalog, "web-pin-ask", "web-pin-open", "open", name=name)
    response = _page(name, f"<h1>{_e(name)}</h1>{said}{ask}", lang=lang, kind="seat", status=429 if wait else 200)
    if wait:
        response.headers["Retry-After"] = wait
    return response


def _pin_form(table: TableView, seat: int, catalog: Catalog, label: str, button: str, action: str,
              name: str = "") -> str:
    return (f'<form method="post" action="/host/{table.id}/seat/{seat}/{action}" class="pin">'
            f'<label>{_e(catalog.text(label, name=name))} <input name="pin" inputmode="numeric" pattern="[0-9]{{4}}" '
            f'maxlength="4" autocomplete="off" required></label>'
            f'<button>{_e(catalog.text(button))}</button></form>')


async def local_pin(request: Request) -> Response:
    """Pass-and-play: ``.../pin`` sets the open seat's PIN (4 digits); ``.../open`` opens a seat with it, under
    the seat's guessing rule (``WebTables.pins``): once its wrong tries are used up, every PIN, the right one too,
    gets the same "try again in …" until the seat may try again."""
    table = _table(request)
    if table is None:
        return _not_found()
    setting = request.url.path.endswith("/pin")
    seat = _local_seat(request, table, unlocked=setting)
    if seat is None:
        return _forbidden(table, request)
    pin = (await _form(request)).get("pin", "")
    back = f"/host/{table.id}/seat/{seat}"
    if not (len(pin) == 4 and _number(pin, 4) is not None):
        return RedirectResponse(back + ("" if setting else "?wrong=1"), status_code=303)
    web = _web(request)
    signed = _pin_mac(web, table, seat, pin)
    if setting:
        response = RedirectResponse(back, status_code=303)
        _cookie(response, f"{PIN_COOKIE}{table.id}-{seat}", signed, request)
    else:
        kept = _pin_cookie(request, table, seat) or ""
        right = hmac.compare_digest(kept, signed) or (
            not kept.startswith(PIN_MAC) and hmac.compare_digest(kept, _old_pin(table, seat, pin)))
        wait = web.pins.attempt(f"{table.id}.{seat}", right)
        if wait > 0:
            return _pin_page(table, seat, "web-pin-wait", seconds=wait)
        if not right:
            return RedirectResponse(back + "?wrong=1", status_code=303)
        response = RedirectResponse(back, status_code=303)
        if kept != signed:  # opened with a cookie of the old form: it becomes today's
            _cookie(response, f"{PIN_COOKIE}{table.id}-{seat}", signed, request)
    _cookie(response, OPEN_COOKIE + table.id, _open_mac(web, table, seat, signed), request)
    return response


async def pass_on(request: Request) -> Response:
    """Pass-and-play, between two players: "pass the device to Bob" (the next seat on this device that owes a
    decision), nothing of the previous seat on screen; the seat opened with a PIN is closed again."""
    table = _table(request)
    if table is None:
        return _not_found()
    web = _web(request)
    if not web.is_host(request, table):
        return _forbidden(table, request)
    after = _number(str(request.path_params.get("seat", "")), 2) or 0
    lang = _language(request, table.theme)
    view = web.pages.host_view(table.id, lang, web.local_seats(table))
    owing = [s for s in view.local if s.owes]
    following = [s for s in owing if s.position > after] + [s for s in owing if s.position <= after]
    nxt = next((s for s in following if s.position != after), following[0] if following else None)
    if nxt is None:
        response: Response = RedirectResponse(f"/host/{table.id}", status_code=303)
    else:
        catalog = _catalog(table.theme, table.seats[nxt.position].language)
        body = (f'<section class="pass-to"><h1>{_e(catalog.text("web-pass-to", name=nxt.name))}</h1>'
                f'<p><a class="done" href="/host/{table.id}/seat/{nxt.position}">'
                f'{_e(catalog.text("web-pass-ready", name=nxt.name))}</a></p>'
                f'<p><a href="/host/{table.id}">{_e(catalog.text("web-pass-title"))}</a></p></section>')
        response = _page(catalog.text("web-pass-to", name=nxt.name), body, lang=catalog.lang, kind="seat")
    response.delete_cookie(OPEN_COOKIE + table.id, path="/")
    return response


async def local_decide(request: Request) -> Response:
    """Pass-and-play: a decision for the seat on the host's device; then the device is passed on."""
    found = _seat_for(request, local=True)
    if isinstance(found, Response):
        return found
    table, seat = found
    answer = await _choose(request, table, seat, then=_pass_url(table, seat))
    return answer or RedirectResponse(_pass_url(table, seat), status_code=303)


_ART: Final = resources.files(__package__).joinpath("assets", "art")
"""The project's card art and icons, served at ``/static/art`` (``assets/art/README.md``)."""
mimetypes.add_type("application/manifest+json", ".webmanifest")
mimetypes.add_type("image/svg+xml", ".svg")


async def favicon(request: Request) -> Response:
    """``/favicon.ico``, which browsers ask for on their own: the SVG icon."""
    return RedirectResponse("/static/art/favicon.svg", status_code=301)


def routes(*, open_tables: bool = True) -> list[BaseRoute]:
    """The browser channel's routes (``POST /join/<code>`` included; the join page itself is the wiring's).
    ``open_tables=False`` leaves out ``/`` and ``/new`` (a public server whose tables are opened elsewhere)."""
    out: list[BaseRoute] = [
        Route("/join/{code}", _saved(join), methods=["POST"]),
        Route("/play/{table}", seat_page, methods=["GET"]),
        Route("/play/{table}/live", seat_page, methods=["GET"]),
        Route("/play/{table}", _saved(decide), methods=["POST"]),
        Route("/table/{table}", screen, methods=["GET"]),
        Route("/table/{table}/live", screen, methods=["GET"]),
        Route("/table/{table}/events", events, methods=["GET"]),
        Route("/table/{table}/board.png", board_png, methods=["GET"]),
        Route("/tv/{code}", short_screen, methods=["GET"]),
        Route("/favicon.ico", favicon, methods=["GET"]),
        Mount("/static/art", app=StaticFiles(directory=str(_ART), html=False), name="art"),
        Route("/host/{table}", host_page, methods=["GET"]),
        Route("/host/{table}/live", host_page, methods=["GET"]),
        Route("/host/{table}", _saved(host_action), methods=["POST"]),
        Route("/move/{code}", move_page, methods=["GET"]),
        Route("/move/{code}", _saved(move_seat), methods=["POST"]),
        Route("/host/{table}/seat/{seat}", local_seat, methods=["GET"]),
        Route("/host/{table}/seat/{seat}/live", local_seat, methods=["GET"]),
        Route("/host/{table}/seat/{seat}", _saved(local_decide), methods=["POST"]),
        Route("/host/{table}/seat/{seat}/pin", local_pin, methods=["POST"]),
        Route("/host/{table}/seat/{seat}/open", local_pin, methods=["POST"]),
        Route("/host/{table}/pass/{seat}", pass_on, methods=["GET"]),
    ]
    if open_tables:
        out += [Route("/", home, methods=["GET"]), Route("/new", _saved(new_table), methods=["POST"])]
    return out


def open_table(pages: Pages, *, name: str, play: bool, theme: str = DEFAULT_THEME,
               lang: str = DEFAULT_LANGUAGE) -> tuple[str, str] | None:
    """Open a table hosted by a new browser token; returns (table id, host token), None if it could not."""
    token = secrets.token_urlsafe(24)
    receipt = pages.handle(Inbound(CHANNEL, address_of(token), OpenTable(name, theme=theme, seat=play), language=lang))
    return (receipt.tables[0], token) if receipt.tables else None


# --- the channel module's entry --------------------------------------------------------------------------------


class WebSpec:
    """Browser pages on this server: phones, the table screen, pass-and-play."""

    name: Final = CHANNEL
    capabilities: Final = CAPABILITIES

    def off(self, settings: Settings) -> str | None:
        return None if settings.web else "it is on with MODERATOR_WEB=on"

    def routes(self, settings: Settings) -> Sequence[BaseRoute]:
        return routes()

    def webhooks(self, settings: Settings) -> Mapping[str, int]:
        return {}  # pages only: every POST comes from a page and carries its Origin

    @contextlib.asynccontextmanager
    async def start(self, settings: Settings, runtime: Runtime) -> AsyncIterator[Running]:
        password = settings.env.get("MODERATOR_OPEN_PASSWORD")
        # With a password, a wrong one costs like an unknown code (twenty at once, then ten a minute); without,
        # one table a minute.
        gate = OpenGate(password, limiter=join_guesses(runtime.clock) if password else table_openings(runtime.clock))
        web = WebTables(runtime.pages, public_url=settings.public_url, ways=runtime.join_ways,
                        delivery=runtime.delivery(CHANNEL, ReadByPage()), gate=gate,
                        trusted=TrustedProxies.parse(trusted_proxies_setting(settings.env)),
                        pins=pin_guesses(runtime.clock))
        web.bind(asyncio.get_running_loop())
        try:
            yield Running(web)
        finally:
            web.close()


SPEC: Final = WebSpec()
