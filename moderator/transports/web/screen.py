"""The table screen for a laptop or TV (public only), its short address, the board image, and the event stream
every page listens to."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from ...catalog import DEFAULT_LANGUAGE, languages
from ...channels import Status
from ...guard import StreamSlots
from . import views
from .live import STREAM_RETRY, HeldStream
from .requests import by_code, not_found, table_of, web_of
from .templating import NO_STORE, page, render


async def screen(request: Request) -> Response:
    """The table screen (public only)."""
    table = table_of(request)
    if table is None:
        return not_found()
    web = web_of(request)
    lang = table.language if table.language in languages(table.theme) else DEFAULT_LANGUAGE  # the table's, not the TV's
    part = web.screen_view(table, str(request.base_url), lang)
    if request.url.path.endswith("/live"):
        return HTMLResponse(render("screen_part.html", part), headers=NO_STORE)
    return page(request, "screen.html", views.screen(part, lang))


async def short_screen(request: Request) -> Response:
    """``GET /tv/<join code>``: the table screen's short address, easy to type on a TV's remote."""
    # A guess costs as a wrong join code does: the short address is no way to try codes faster.
    found = by_code(request, web_of(request).pages.table_by_code)
    return found if isinstance(found, Response) else RedirectResponse(f"/table/{found[0].id}", status_code=303)


async def board_png(request: Request) -> Response:
    """The board image of the game under way."""
    table = table_of(request)
    if table is None or table.status is Status.LOBBY or not table.game:
        return not_found()
    web = web_of(request)
    lang = request.query_params.get("lang", DEFAULT_LANGUAGE)
    lang = lang if lang in languages(table.theme) else DEFAULT_LANGUAGE
    image = await web.boards.image(table, lang, narrow=request.query_params.get("narrow") == "1")
    # The address names the picture, so a changed board is a new address and the same one may be kept; an old
    # address answers with today's picture, not to be kept.
    current = request.query_params.get("v") == web.boards.version(table, lang)
    cache = "private, max-age=86400" if current else "no-store"
    return Response(image, media_type="image/png", headers={"Cache-Control": cache})


async def events(request: Request) -> Response:
    """Server-sent events of the table's changes (no content); 503 with ``Retry-After`` when the table or the
    server has as many streams open as ``WebTables.slots`` allows."""
    table = table_of(request)
    if table is None:
        return not_found()
    web = web_of(request)
    if not web.slots.acquire(table.id):
        return StreamSlots.busy(STREAM_RETRY)
    table_id = table.id
    return HeldStream(web.live.stream(table_id), lambda: web.slots.release(table_id), media_type="text/event-stream",
                      headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})
