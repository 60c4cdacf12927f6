"""A seat's page inside a messenger's app (a Telegram Mini App): the page a browser seat has, for a seat of another
channel, whose person the app vouches for.

The address holds no secret (``/app/<table>``: the chat's button and menu open it). Its script posts what the app
signed once (``POST .../session``, never in an address: addresses reach logs), the channel that signed it says
whose it is (``WebTables.vouch``), and the seat that person holds at the table gets a session for a while: an
HttpOnly cookie for this route only, signed with the server's key (``Secure; SameSite=None``, as a page framed by
the app's web client is another site's frame). Its taps and its live part go with that cookie; each tap is the
seat's own channel's input, and its chat shows the choice as a press would have (``seats.choose``).
"""

from __future__ import annotations

import hashlib
import hmac
import time
from typing import Final

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

from ...catalog import DEFAULT_THEME
from ...channels import TableView
from ...commands import number
from . import views
from .channel import APP_PATH
from .requests import form_of, not_found, saved, table_of, web_of
from .seats import choose
from .templating import NO_STORE, language, page, words

FRAMED: Final = {APP_PATH: "https://web.telegram.org"}
"""The pages an app may show in a frame, and whose: Telegram's web client opens a Mini App in one
(``guard.SecurityHeaders``); every other page may be framed by nobody."""
APP_COOKIE: Final = "app-"
SESSION_SECONDS: Final = 3 * 60 * 60
"""How long a session lasts (a game takes an hour or so); the page signs in again whenever it is opened, with what
the app signed (good for a day)."""


def _mac(key: bytes, channel: str, address: str, table_id: str, until: int) -> str:
    return hmac.new(key, f"app|{channel}|{address}|{table_id}|{until}".encode(), hashlib.sha256).hexdigest()


def session_value(key: bytes, channel: str, address: str, table_id: str, until: int) -> str:
    """The session cookie's value: whose seat at the table, until when, signed with the server's key."""
    return f"{channel}.{address}.{until}.{_mac(key, channel, address, table_id, until)}"


def app_seat(request: Request, table: TableView) -> int | None:
    """The seat this request's session stands for at the table, if it is signed, fresh and still that seat."""
    parts = request.cookies.get(APP_COOKIE + table.id, "").split(".")
    if len(parts) != 4 or number(parts[2], 12) is None:
        return None
    channel, address, until, mac = parts[0], parts[1], int(parts[2]), parts[3]
    right = _mac(web_of(request).cookie_key, channel, address, table.id, until)
    if not hmac.compare_digest(mac, right) or until < time.time():
        return None
    return table.seat_of(channel, address)


def _refused(table: TableView | None, request: Request, message_id: str, status: int) -> Response:
    """The sign-in refused, with the words the page shows instead of the seat."""
    catalog = words(table.theme if table else DEFAULT_THEME, language(request))
    return JSONResponse({"ok": False, "reply": catalog.text(message_id)}, status_code=status, headers=NO_STORE)


async def app_page(request: Request) -> Response:
    """``GET /app/<table>``: the seat's page, empty until its script has signed in (``app_session``)."""
    table = table_of(request)
    if table is None:
        return not_found()
    lang = language(request, table.theme)
    return page(request, "app.html", views.app(table, lang))


async def app_session(request: Request) -> Response:
    """``POST /app/<table>/session``: the app's signed data (``init_data``) for a session at this table: the seat
    of the person it vouches for (403 with words to show: signed by no channel of ours, or no seat here)."""
    table = table_of(request)
    if table is None:
        return not_found()
    web = web_of(request)
    signed = (await form_of(request)).get("init_data", "")
    vouched = web.vouch(signed) if signed else None
    if vouched is None:
        return _refused(table, request, "web-app-not-signed", 403)
    seat = table.seat_of(vouched.channel, vouched.address)
    if seat is None:
        return _refused(table, request, "web-app-no-seat", 403)
    until = int(time.time()) + SESSION_SECONDS
    response = JSONResponse({"ok": True}, headers=NO_STORE)
    # SameSite=None: in Telegram's web client the page is a frame of another site, where a Lax or Strict cookie
    # is not sent; Secure, as SameSite=None requires (a browser keeps it on http://localhost too).
    response.set_cookie(APP_COOKIE + table.id, session_value(web.cookie_key, vouched.channel, vouched.address,
                                                              table.id, until),
                        max_age=SESSION_SECONDS, httponly=True, secure=True, samesite="none", path=APP_PATH)
    return response


def _seat(request: Request) -> tuple[TableView, int] | Response:
    table = table_of(request)
    if table is None:
        return not_found()
    seat = app_seat(request, table)
    if seat is None:
        return _refused(table, request, "web-app-not-signed", 403)
    return table, seat


async def app_live(request: Request) -> Response:
    """``GET /app/<table>/live``: the session's seat's live part (as ``/play/<table>/live`` is a browser seat's)."""
    found = _seat(request)
    if isinstance(found, Response):
        return found
    table, seat = found
    return HTMLResponse(web_of(request).seat_part(table, seat, table.seats[seat].language), headers=NO_STORE)


async def app_decide(request: Request) -> Response:
    """``POST /app/<table>``: a tap on the session's seat's page, the seat's own channel's input."""
    found = _seat(request)
    if isinstance(found, Response):
        return found
    table, seat = found
    answer = await choose(request, table, seat, in_app=True)
    return answer if answer is not None else RedirectResponse(f"{APP_PATH}{table.id}", status_code=303)


decide = saved(app_decide)
