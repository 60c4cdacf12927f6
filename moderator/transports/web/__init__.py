"""The browser channel: phone pages with no app, the table screen, and pass-and-play on one device.

It translates and nothing else. A browser seat is a seat like any other (channel ``web``); its address is a
hash of an unguessable token that only that browser holds, in a cookie. Pages draw what the service tells them
(``channels.Pages``: a seat's view, the table screen's, the host's, the limits every input is held to) from
templates; every input goes to the service.

Its rooms, each with one job (docs/architecture.md follows a tap through them):

- ``channel``: what the channel is: its name, capabilities, addresses, and delivery (a page reads its messages).
- ``routes``: the routes; each reads who the request is, hands its input to the service, and answers.
- ``auth``: who a request is: a seat's cookie, the host's cookie and key, pass-and-play's PINs.
- ``tables``: the channel while it runs (``WebTables``): its settings, inputs and the live parts of its pages.
- ``views``: what each template is given; ``templating``: the Jinja2 templates (``templates/``) and the words.
- ``live``: the event stream every page listens to; ``boards``: the board image, drawn once per picture.

Routes (``routes.routes``):

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
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Final

from starlette.routing import BaseRoute

from ...channels import Running, Runtime
from ...guard import OpenGate, TrustedProxies, join_guesses, pin_guesses, table_openings, trusted_proxies_setting
from ...settings import Settings
from .apps import APP_COOKIE, FRAMED
from .auth import OPEN_COOKIE, PIN_COOKIE, PIN_MAC, SEAT_COOKIE
from .channel import APP_PATH, CAPABILITIES, CHANNEL, ReadByPage, address_of
from .requests import NOT_SAVED_HEADER, NOT_SAVED_RETRY, not_saved, stale_code, try_again
from .routes import routes
from .seats import join_page, open_table
from .tables import WebTables
from .templating import WEB_MESSAGES

__all__ = [
    "APP_COOKIE",
    "APP_PATH",
    "CAPABILITIES",
    "CHANNEL",
    "FRAMED",
    "NOT_SAVED_HEADER",
    "NOT_SAVED_RETRY",
    "OPEN_COOKIE",
    "PIN_COOKIE",
    "PIN_MAC",
    "SEAT_COOKIE",
    "SPEC",
    "WEB_MESSAGES",
    "WebSpec",
    "WebTables",
    "address_of",
    "join_page",
    "not_saved",
    "open_table",
    "routes",
    "stale_code",
    "try_again",
]


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
                        pins=pin_guesses(runtime.clock), vouch=runtime.vouch)
        web.bind(asyncio.get_running_loop())
        try:
            yield Running(web)
        finally:
            web.close()


SPEC: Final = WebSpec()
