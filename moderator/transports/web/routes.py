"""The browser channel's route table: which address is answered by which room."""

from __future__ import annotations

import mimetypes
from importlib import resources
from typing import Final

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from . import apps
from .apps import app_live, app_page, app_session
from .channel import APP_PATH
from .host_device import host_action, host_page, local_decide, local_pin, local_seat, pass_on
from .requests import saved
from .screen import board_png, events, screen, short_screen
from .seats import decide, home, join, move_page, move_seat, new_table, seat_page

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
        Route("/join/{code}", saved(join), methods=["POST"]),
        Route("/play/{table}", seat_page, methods=["GET"]),
        Route("/play/{table}/live", seat_page, methods=["GET"]),
        Route("/play/{table}", saved(decide), methods=["POST"]),
        Route("/table/{table}", screen, methods=["GET"]),
        Route("/table/{table}/live", screen, methods=["GET"]),
        Route("/table/{table}/events", events, methods=["GET"]),
        Route("/table/{table}/board.png", board_png, methods=["GET"]),
        Route("/tv/{code}", short_screen, methods=["GET"]),
        Route("/favicon.ico", favicon, methods=["GET"]),
        Mount("/static/art", app=StaticFiles(directory=str(_ART), html=False), name="art"),
        Route("/host/{table}", host_page, methods=["GET"]),
        Route("/host/{table}/live", host_page, methods=["GET"]),
        Route("/host/{table}", saved(host_action), methods=["POST"]),
        Route("/move/{code}", move_page, methods=["GET"]),
        Route("/move/{code}", saved(move_seat), methods=["POST"]),
        Route("/host/{table}/seat/{seat}", local_seat, methods=["GET"]),
        Route("/host/{table}/seat/{seat}/live", local_seat, methods=["GET"]),
        Route("/host/{table}/seat/{seat}", saved(local_decide), methods=["POST"]),
        Route("/host/{table}/seat/{seat}/pin", local_pin, methods=["POST"]),
        Route("/host/{table}/seat/{seat}/open", local_pin, methods=["POST"]),
        Route("/host/{table}/pass/{seat}", pass_on, methods=["GET"]),
        Route(APP_PATH + "{table}", app_page, methods=["GET"]),
        Route(APP_PATH + "{table}/session", app_session, methods=["POST"]),
        Route(APP_PATH + "{table}/live", app_live, methods=["GET"]),
        Route(APP_PATH + "{table}", apps.decide, methods=["POST"]),
    ]
    if open_tables:
        out += [Route("/", home, methods=["GET"]), Route("/new", saved(new_table), methods=["POST"])]
    return out
