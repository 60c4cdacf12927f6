"""The browser channel while it runs (what its routes find in ``app.state.channels``): its settings, its inputs
to the service, the live parts of its pages, and what it keeps between requests (event streams, board images)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from starlette.requests import Request

from ...channels import Delivery, JoinWay, Pages, Receipt, TableView, Vouched
from ...commands import Command, Inbound, Press
from ...guard import DEFAULT_TRUSTED_PROXIES, JoinGuard, OpenGate, StreamSlots, TrustedProxies, client_key, pin_guesses
from . import views
from .boards import BoardImages
from .channel import CHANNEL, local_seats
from .live import Live
from .templating import render


class WebTables:
    """The browser channel: who a request counts as, its inputs, the live parts of every page, and their event
    streams."""

    def __init__(self, pages: Pages, *, public_url: str | None = None,
                 ways: Callable[[str], list[JoinWay]] = lambda code: [], delivery: Delivery | None = None,
                 gate: OpenGate | None = None, trusted: TrustedProxies | None = None,
                 pins: JoinGuard | None = None,
                 vouch: Callable[[str], Vouched | None] = lambda signed: None) -> None:
        self.pages = pages
        self.vouch = vouch
        """Who a messenger's app vouches for on the seat's page it opened (``Runtime.vouch``)."""
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
        self.live = Live()
        self.boards = BoardImages(pages)
        pages.watch(self._changed)

    def client(self, request: Request) -> str:
        """Who a request counts as for rate limits: its address behind the trusted proxies (IPv6: its /64)."""
        return client_key(request.scope, self.trusted)

    def handle(self, address: str, command: Command, *, nonce: str | None = None, lang: str | None = None,
               table: str | None = None, channel: str = CHANNEL, press: Press | None = None) -> Receipt:
        """One input from a page (a repeated ``nonce``, a double tap or a retry, is dropped); ``channel``: the seat's
        own, for a page another channel's app opened (``apps``), whose choice its chat shows (``press``)."""
        external = f"web:{nonce}" if nonce else None
        return self.pages.handle(Inbound(channel, address, command, external_id=external, language=lang, table=table,
                                         press=press))

    # --- change notification ------------------------------------------------------------------------------

    def bind(self, loop: asyncio.AbstractEventLoop) -> None:
        self.live.bind(loop)

    def _changed(self, table_id: str) -> None:
        if self.delivery is not None:
            self.delivery.kick()  # pages read the outbox themselves; this only marks their messages delivered
        self.live.changed(table_id)

    def close(self) -> None:
        """End every event stream now (the server is stopping: it need not wait for them). Any thread."""
        self.live.close()

    # --- the live parts -----------------------------------------------------------------------------------

    def join_base(self, base_url: str) -> str:
        """Where phones reach this server, for the links and QR codes a page shows."""
        return (self.public_url or base_url).rstrip("/")

    def seat_view(self, table: TableView, position: int, lang: str, *, cover: str | None = None) -> dict[str, Any]:
        """One seat's live part, as its template is given it (``views.seat_part``)."""
        return views.seat_part(self.pages, self.boards, table, position, lang, cover=cover)

    def seat_part(self, table: TableView, position: int, lang: str, *, cover: str | None = None) -> str:
        """One seat's live part: the decision it owes (buttons), what it knows, the board, and its messages."""
        return render("seat_part.html", self.seat_view(table, position, lang, cover=cover))

    def screen_view(self, table: TableView, base_url: str, lang: str) -> dict[str, Any]:
        """The table screen's live part, as its template is given it (``views.screen_part``)."""
        return views.screen_part(self.pages, self.boards, table, lang, join_base=self.join_base(base_url),
                                 ways=self.ways)

    def screen_part(self, table: TableView, base_url: str, lang: str) -> str:
        """The table screen's live part, laid out for a TV across the room: public information only."""
        return render("screen_part.html", self.screen_view(table, base_url, lang))

    def host_view(self, table: TableView, base_url: str, lang: str) -> dict[str, Any]:
        """The host's live part, as its template is given it (``views.host_part``)."""
        return views.host_part(self.pages, self.boards, table, lang, local=local_seats(table),
                               join_base=self.join_base(base_url), ways=self.ways)

    def host_part(self, table: TableView, base_url: str, lang: str) -> str:
        """The host's device: lobby controls, the pass-and-play names, and host controls."""
        return render("host_part.html", self.host_view(table, base_url, lang))
