"""A player's side: a table opened from this browser, the join page and "play in this browser", a seat moved to a
new device, and a seat's page and what it decides there (its buttons, its own controls).

A page's forms are posted in the background by its script (``X-Send: 1``; the answer is JSON and the page stays
put); without the script they are plain form posts that load the next page. The service runs on the event loop's
thread; so do these routes."""

from __future__ import annotations

import math
import secrets
from collections.abc import Sequence

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

from ...catalog import DEFAULT_LANGUAGE, DEFAULT_THEME, languages, themes
from ...channels import JoinWay, Limits, Pages, Receipt, Status, TableView
from ...commands import (
    Choose,
    Command,
    Inbound,
    Join,
    Leave,
    OpenTable,
    Press,
    RecordVotes,
    Rename,
    SetLanguage,
    Speak,
    number,
)
from . import auth, views
from .channel import CHANNEL, address_of
from .requests import by_code, forbidden, form_of, not_found, stale_code, table_of, try_again, web_of
from .templating import NO_STORE, language, page, words

# --- ways in: a table opened, a seat taken or moved ---------------------------------------------------------


async def home(request: Request) -> Response:
    """Open a table from this browser."""
    return _home(request)


def _home(request: Request, *, status: int = 200, note: str | None = None) -> Response:
    """The "open a table" form (with the operator's password field if one is set), after ``note`` if any."""
    web = web_of(request)
    context = views.home(language(request), web.pages.limits(), password=bool(web.gate.password), note=note)
    return page(request, "home.html", context, status=status)


async def new_table(request: Request) -> Response:
    """``POST /new``: a new table hosted by this browser; the host's seat (if playing) is this browser's too.
    Only with a name, and only as ``WebTables.gate`` allows (the operator's password, or one a minute)."""
    web = web_of(request)
    form = await form_of(request)
    name = form.get("name", "").strip()
    if not name:  # a malformed form (or none): no table without its host's name
        return _home(request, status=400)
    wait = web.gate.check(web.client(request), form.get("password"))
    if wait == math.inf:
        return _home(request, status=403, note="web-open-refused")
    if wait > 0:
        return try_again(request, wait, "web-open-try-again")
    theme = form.get("theme") if form.get("theme") in themes() else DEFAULT_THEME
    lang = language(request, theme or DEFAULT_THEME)
    opened = open_table(web.pages, name=name, play=bool(form.get("play")),
                        theme=theme or DEFAULT_THEME, lang=lang)
    if opened is None:
        return not_found()
    table_id, token = opened
    response = RedirectResponse(f"/host/{table_id}", status_code=303)
    auth.set_cookie(response, auth.HOST_COOKIE + table_id, token, request)
    if form.get("play"):
        auth.set_cookie(response, auth.SEAT_COOKIE + table_id, token, request)
    return response


def open_table(pages: Pages, *, name: str, play: bool, theme: str = DEFAULT_THEME,
               lang: str = DEFAULT_LANGUAGE) -> tuple[str, str] | None:
    """Open a table hosted by a new browser token; returns (table id, host token), None if it could not."""
    token = secrets.token_urlsafe(24)
    receipt = pages.handle(Inbound(CHANNEL, address_of(token), OpenTable(name, theme=theme, seat=play), language=lang))
    return (receipt.tables[0], token) if receipt.tables else None


def join_page(request: Request, code: str, theme: str, ways: Sequence[JoinWay], limits: Limits, *,
              browser: bool) -> Response:
    """The join page (the wiring's route): every way to take a seat with ``code`` (``ways``, each a link and a QR
    code), after "play in this browser" if ``browser``; in the browser's language among the table's, styled as
    every other page."""
    context = views.join(language(request, theme), theme, code, ways, limits, browser=browser)
    return page(request, "join.html", context)


async def join(request: Request) -> Response:
    """``POST /join/<code>``: take a seat in this browser; its token goes in a cookie, its page follows."""
    web = web_of(request)
    found = by_code(request, web.pages.table_by_code, stale="join")  # too many unknown codes: the same answer
    if isinstance(found, Response):
        return found
    table, code = found
    if table.status is not Status.LOBBY:
        return stale_code(request, "join")  # started meanwhile: its code takes nobody now
    form = await form_of(request)
    token = request.cookies.get(auth.SEAT_COOKIE + table.id) or secrets.token_urlsafe(24)
    address = address_of(token)
    lang = language(request, table.theme)
    web.handle(address, Join(code, form.get("name", "").strip()), nonce=form.get("nonce"), lang=lang)
    after = web.pages.table_info(table.id)
    if after is None or after.seat_of(CHANNEL, address) is None:
        # Refused (the table is full, say): the reason, and the way back to the join page.
        replies = [line.text for line in web.pages.feed(CHANNEL, address, 1, this_game=False, table_id=table.id)
                   if not line.secret]
        catalog = words(table.theme, lang)
        context = views.message(catalog, replies, title=code, lang=lang,
                                back=(f"/join/{code}", catalog.text("web-play-here")))
        return page(request, "message.html", context)
    response = RedirectResponse(f"/play/{table.id}", status_code=303)
    auth.set_cookie(response, auth.SEAT_COOKIE + table.id, token, request)
    return response


async def move_page(request: Request) -> Response:
    """``GET /move/<code>``: a seat's one-time code, opened on its new device: one button takes the seat over."""
    return page(request, "move.html", views.move(language(request, DEFAULT_THEME), DEFAULT_THEME))


async def move_seat(request: Request) -> Response:
    """``POST /move/<code>``: this browser takes over the seat the code was given for; its page follows."""
    web = web_of(request)
    found = by_code(request, web.pages.table_by_move_code)
    if isinstance(found, Response):
        return found
    table, code = found
    form = await form_of(request)
    token = secrets.token_urlsafe(24)
    address = address_of(token)
    web.handle(address, Join(code, ""), nonce=form.get("nonce"), lang=language(request, table.theme))
    after = web.pages.table_info(table.id)
    if after is None or after.seat_of(CHANNEL, address) is None:
        return not_found()
    response = RedirectResponse(f"/play/{table.id}", status_code=303)
    auth.set_cookie(response, auth.SEAT_COOKIE + table.id, token, request)
    return response


# --- a seat's page and what it decides ----------------------------------------------------------------------


def seat_for(request: Request, *, local: bool) -> tuple[TableView, int] | Response:
    """The table and the seat this request may see and act for (its cookie's seat; ``local``: a seat on the host's
    device), else the answer: 404 for no such table, 403 for no such right."""
    table = table_of(request)
    if table is None:
        return not_found()
    seat = auth.local_seat(request, table, web_of(request).cookie_key) if local else auth.own_seat(request, table)
    return forbidden(table, request) if seat is None else (table, seat)


async def seat_page(request: Request) -> Response:
    """A seat's page (its cookie), or 403."""
    found = seat_for(request, local=False)
    if isinstance(found, Response):
        return found
    table, seat = found
    web = web_of(request)
    lang = table.seats[seat].language
    if request.url.path.endswith("/live"):
        return HTMLResponse(web.seat_part(table, seat, lang), headers=NO_STORE)
    return page(request, "seat.html", views.seat(web.seat_view(table, seat, lang), lang))


async def decide(request: Request) -> Response:
    """``POST /play/<table>``: a button of the seat's prompt (sent in the background: the answer is JSON)."""
    found = seat_for(request, local=False)
    if isinstance(found, Response):
        return found
    table, seat = found
    leaving = (await form_of(request)).get("do") == "leave" and table.code
    answer = await choose(request, table, seat, then=f"/join/{table.code}" if leaving else None)
    if answer is not None:
        return answer
    after = web_of(request).pages.table_info(table.id)
    if table.code and (after is None or after.seat_of(CHANNEL, table.seats[seat].address) is None):
        return RedirectResponse(f"/join/{table.code}", status_code=303)  # left the lobby: back to its join page
    return RedirectResponse(f"/play/{table.id}", status_code=303)


async def choose(request: Request, table: TableView, seat: int, *, then: str | None = None,
                 in_app: bool = False) -> Response | None:
    """Hand a button's choice (or a seat's own control) to the service, as the seat's own channel's input. Sent by
    seat.js (``X-Send: 1``), the answer is JSON for the page to show: ``counted`` (this time or, a retry, before)
    or not, and the service's reply if not; else None. ``in_app``: the page another channel's app opened
    (``apps``): a choice is shown in that channel's chat too, on its latest prompt (a ``Press`` without a
    message)."""
    form = await form_of(request)
    web, nonce = web_of(request), form.get("nonce")
    channel, address = table.seats[seat].channel, table.seats[seat].address
    decision = number(form.get("decision", ""), 12)
    token = form.get("token", "")
    do = form.get("do", "")
    name = form.get("name", "").strip()
    receipt = None
    def handle(command: Command, press: Press | None = None) -> Receipt:
        return web.handle(address, command, nonce=nonce, table=table.id, channel=channel, press=press)

    if token and decision is not None:
        press = _pressed(web.pages, table, seat, token) if in_app else None
        receipt = handle(Choose(token[:64], decision), press)
    elif do == "votes":
        receipt = handle(RecordVotes(tuple(v for k, v in form.items() if k.startswith("ja-"))))
    elif do == "rename" and name:
        receipt = handle(Rename(name))
    elif do == "language" and form.get("language") in languages(table.theme):
        receipt = handle(SetLanguage(form["language"]))
    elif do == "leave":
        receipt = handle(Leave())
    elif do == "speak" and form.get("kind") in {v.value for v in views.SPEAK} and form.get("text", "").strip():
        receipt = handle(Speak(form["kind"], form["text"].strip()))
    if request.headers.get("x-send") != "1":
        return None
    # A decision counts when the game took it; a seat's own control (a rename, a claim) once the service has it.
    decides = bool(token and decision is not None) or do == "votes"
    counted = receipt is not None and (receipt.applied or receipt.duplicate or not decides)
    reply = ""
    if not counted:  # the service said why (too late, say): its newest reply to this seat
        lines = web.pages.feed(channel, address, 1, this_game=False, table_id=table.id)
        reply = receipt.notice if receipt is not None and receipt.notice else \
            "".join(line.text for line in lines if not line.secret)
    answer: dict[str, object] = {"counted": counted, "repeat": bool(receipt and receipt.duplicate), "reply": reply}
    if then is not None and counted:
        answer["next"] = then  # pass-and-play: the device goes on to the next player
    return JSONResponse(answer, headers=NO_STORE)


def _pressed(pages: Pages, table: TableView, seat: int, token: str) -> Press:
    """A choice on the page of another channel's app, as that channel's chat will show it: the option's label (as
    the seat's prompt offers it) on whichever prompt the chat shows last (no message of its own: ``ref`` empty)."""
    view = pages.seat_view(table.id, seat, table.seats[seat].language)
    options = view.prompt.options if view.prompt is not None else ()
    return Press("", "", next((o.label for o in options if o.token == token), ""))
