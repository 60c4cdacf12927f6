"""What every route of the browser channel shares: the running channel a request reaches, the table its path
names (or the code in it, under the guessing rule every way in shares), its form, and the answers any route may
give: 404, 403 (not your seat), 429 (try again in …), 503 (not saved: tap again)."""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Awaitable, Callable
from functools import wraps
from typing import Final

from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response

from ...catalog import DEFAULT_THEME
from ...channels import NotStored, Running, TableView
from ...guard import retry_after
from . import views
from .channel import CHANNEL
from .tables import WebTables
from .templating import NO_STORE, language, page, words

log = logging.getLogger("moderator.transports.web")

NOT_SAVED_RETRY: Final = 5
"""The ``Retry-After`` of a tap that could not be stored (503, ``NotStored``): the database was locked or could not
be written for a moment; the page says "not saved — tap again" and keeps the player where they were."""
NOT_SAVED_HEADER: Final = "X-Not-Saved"
"""Set on every answer that says nothing of a request was stored (here, and ``app.Durable``'s): live.js and seat.js
tell it from a network blip (which they send again by themselves)."""

_ID: Final = re.compile(r"[A-Za-z0-9]{3,40}")
"""What a table id or join code can look like: anything else is not looked up."""


def web_of(request: Request) -> WebTables:
    """The browser channel the request reached (its event streams bound to this event loop)."""
    running: Running = request.app.state.channels[CHANNEL]
    web: WebTables = running.state
    if web.live.loop is None:
        web.bind(asyncio.get_running_loop())
    return web


def table_of(request: Request) -> TableView | None:
    """The table the path names, if there is one (an id of another form is not looked up)."""
    table_id = str(request.path_params.get("table", ""))
    if not _ID.fullmatch(table_id):
        return None
    return web_of(request).pages.table_info(table_id)


def not_found() -> Response:
    """404: no such table, code or seat, and nothing more said."""
    return PlainTextResponse("Not Found", status_code=404, headers=NO_STORE)


def forbidden(table: TableView | None, request: Request) -> Response:
    """403: "this is not your seat", in the browser's language."""
    theme = table.theme if table is not None else DEFAULT_THEME
    catalog = words(theme, language(request, theme))
    return page(request, "message.html", views.message(catalog, [catalog.text("web-not-your-seat")]), status=403)


async def form_of(request: Request) -> dict[str, str]:
    """The request's form fields (a malformed body, or one with files: none)."""
    try:
        form = await request.form(max_files=0, max_fields=20)
    except Exception:  # a malformed body: treated as an empty form
        return {}
    return {k: v for k, v in form.items() if isinstance(v, str)}


def try_again(request: Request, seconds: float, message_id: str = "try-again") -> Response:
    """429 with ``Retry-After``: the catalog's "try again in …" in the browser's language."""
    lang = language(request)
    wait = retry_after(seconds)
    catalog = words(DEFAULT_THEME, lang)
    response = page(request, "message.html", views.message(catalog, [catalog.text(message_id, seconds=int(wait))],
                                                             lang=lang), status=429)
    response.headers["Retry-After"] = wait
    return response


def not_saved(request: Request) -> Response:
    """503 with ``Retry-After``: the tap could not be stored (nothing of it happened). To a tap sent in the
    background (``X-Send``) JSON like every answer to one (``saved`` false, ``reply`` the words to show); else a
    page that says so, with the way back to tap again."""
    lang = language(request)
    catalog = words(DEFAULT_THEME, lang)
    text = catalog.text("web-not-saved")
    headers = {**NO_STORE, "Retry-After": str(NOT_SAVED_RETRY), NOT_SAVED_HEADER: "1"}
    if request.headers.get("x-send") == "1":
        answer = {"counted": False, "repeat": False, "saved": False, "reply": text}
        return JSONResponse(answer, status_code=503, headers=headers)
    back = request.url.path if request.url.path != "/new" else "/"  # each form's page is at its own address
    response = page(request, "message.html", views.message(catalog, [text], lang=lang, back=(back, text)),
                    status=503)
    response.headers.update(headers)
    return response


def saved(endpoint: Callable[[Request], Awaitable[Response]]) -> Callable[[Request], Awaitable[Response]]:
    """A form's endpoint whose input may not be stored (``NotStored``): then ``not_saved`` answers, not a 500."""
    @wraps(endpoint)
    async def run(request: Request) -> Response:
        try:
            return await endpoint(request)
        except NotStored as exc:
            log.error("a tap in a browser could not be stored (%s); it is asked to tap again", exc)
            return not_saved(request)

    return run


def by_code(request: Request, find: Callable[[str], TableView | None]) -> tuple[TableView, str] | Response:
    """The table a code in the path names (``find``), under the guessing rule every way in shares: a try with an
    unknown code costs one of the client's tries, and an empty bucket answers the same, known code or not."""
    web = web_of(request)
    code = str(request.path_params.get("code", "")).strip().upper()
    table = find(code) if _ID.fullmatch(code) else None
    wait = web.pages.join_attempt(web.client(request), table is not None)
    if wait > 0:
        return try_again(request, wait)
    return not_found() if table is None else (table, code)
