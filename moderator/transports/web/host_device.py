"""The host's device: its page (the lobby's controls, the game's, every seat's), its controls posted, and
pass-and-play: every seat played on that device behind a cover (and a PIN, if it has one), the device passed from
one player to the next."""

from __future__ import annotations

import secrets
from typing import Final

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

from ...catalog import languages, themes
from ...channels import Receipt, TableView
from ...commands import (
    AddComputers,
    Command,
    Host,
    HostCommand,
    Join,
    MovePhone,
    MoveSeat,
    RemoveSeat,
    SetLanguage,
    SetReminders,
    SetTableVoting,
    SetTheme,
    StandIn,
    Start,
    number,
)
from ...guard import retry_after
from . import auth, views
from .channel import local_address, local_seats
from .requests import forbidden, form_of, not_found, table_of, web_of
from .seats import choose, seat_for
from .templating import NO_STORE, language, page, render, words

_HOST_ACTIONS: Final[dict[str, Command]] = {
    "computers": AddComputers(),
    "start": Start(),
    **{control.value: Host(control) for control in (HostCommand.NUDGE, HostCommand.PAUSE, HostCommand.RESUME,
                                                     HostCommand.END, HostCommand.REMATCH)},
}
"""The host's buttons that post nothing but what they are (the game's controls are named as the service names
them: ``HostView.controls``)."""


def _hosted(request: Request) -> TableView | Response:
    """The table in the path, if the request comes from its host's device; else the answer (404, 403)."""
    table = table_of(request)
    if table is None:
        return not_found()
    return table if auth.is_host(request, table) else forbidden(table, request)


async def host_page(request: Request) -> Response:
    """The host's device. ``?key=`` (printed by ``moderator play --web``) sets the host's cookie once."""
    table = table_of(request)
    if table is None:
        return not_found()
    keyed = auth.host_key(request, table)
    if keyed is not None:
        return keyed
    web = web_of(request)
    if not auth.is_host(request, table):
        return forbidden(table, request)
    lang = language(request, table.theme)
    part = web.host_view(table, str(request.base_url), lang)
    if request.url.path.endswith("/live"):
        return HTMLResponse(render("host_part.html", part), headers=NO_STORE)
    return page(request, "host.html", views.host(part, lang))


async def host_action(request: Request) -> Response:
    """``POST /host/<table>``: a lobby or host control from the host's device. Sent by live.js (``X-Send: 1``),
    the answer is JSON (``counted``: handed to the service, this time or, ``repeat``, before; a refusal is its reply
    on the page) and the page fetches its part again; else the host page follows."""
    table = _hosted(request)
    if isinstance(table, Response):
        return table
    web = web_of(request)
    host = table.host_address
    form = await form_of(request)
    nonce = form.get("nonce")
    do = form.get("do", "")
    name = form.get("name", "").strip()
    receipt: Receipt | None = None
    if do in _HOST_ACTIONS:
        receipt = web.handle(host, _HOST_ACTIONS[do], nonce=nonce, table=table.id)
    elif do == "add" and name and table.code:
        receipt = web.handle(local_address(host, secrets.token_hex(4)), Join(table.code, name), nonce=nonce,
                             lang=language(request, table.theme))
    elif do == "move" and (position := number(form.get("position", ""), 2)) is not None:
        receipt = web.handle(host, MoveSeat(name, position), nonce=nonce, table=table.id)  # 1-based: one place up
    elif do == "remove" and name:
        receipt = web.handle(host, RemoveSeat(name), nonce=nonce, table=table.id)
    elif do == "computers-n" and (count := number(form.get("count", ""), 2)) is not None:
        receipt = web.handle(host, AddComputers(count), nonce=nonce, table=table.id)
    elif do == "tablevotes" and form.get("on") in ("0", "1"):
        receipt = web.handle(host, SetTableVoting(form.get("on") == "1"), nonce=nonce, table=table.id)
    elif do == "reminders" and (minutes := number(form.get("minutes", ""), 3)) is not None:
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
        return JSONResponse(answer, headers=NO_STORE)
    return RedirectResponse(f"/host/{table.id}", status_code=303)


# --- pass-and-play: seats played on the host's device -------------------------------------------------------


def pass_url(table: TableView, seat: int) -> str:
    return f"/host/{table.id}/pass/{seat}"


async def local_seat(request: Request) -> Response:
    """Pass-and-play: one seat of the host's device behind a cover (its PIN first, if it has one); "done", always
    in reach at the foot of the screen, hides it and passes the device on."""
    table = table_of(request)
    if table is None:
        return not_found()
    web = web_of(request)
    seat = auth.local_seat(request, table, web.cookie_key, unlocked=False)
    if seat is None:
        return forbidden(table, request)
    lang = table.seats[seat].language
    if auth.locked(request, table, seat, web.cookie_key):
        if request.url.path.endswith("/live"):
            return forbidden(table, request)
        return _pin_page(request, table, seat, "web-pin-wrong" if request.query_params.get("wrong") else "")
    cover = words(table.theme, lang).text("web-only-you", name=table.seats[seat].name)
    if request.url.path.endswith("/live"):
        return HTMLResponse(web.seat_part(table, seat, lang, cover=cover), headers=NO_STORE)
    offer_pin = auth.pin_cookie(request, table, seat) is None
    context = views.seat(web.seat_view(table, seat, lang, cover=cover), lang, local=True, offer_pin=offer_pin)
    return page(request, "seat.html", context)


def _pin_page(request: Request, table: TableView, seat: int, note: str, *, seconds: float = 0) -> Response:
    """A locked seat: its PIN asked for, after ``note`` if any (a wrong PIN; ``seconds``: too many, wait)."""
    wait = retry_after(seconds) if seconds else ""
    response = page(request, "pin.html", views.pin(table, seat, note, seconds=int(wait or 0)),
                    status=429 if wait else 200)
    if wait:
        response.headers["Retry-After"] = wait
    return response


async def local_pin(request: Request) -> Response:
    """Pass-and-play: ``.../pin`` sets the open seat's PIN (4 digits); ``.../open`` opens a seat with it, under
    the seat's guessing rule (``WebTables.pins``): once its wrong tries are used up, every PIN, the right one too,
    gets the same "try again in …" until the seat may try again."""
    table = table_of(request)
    if table is None:
        return not_found()
    web = web_of(request)
    setting = request.url.path.endswith("/pin")
    seat = auth.local_seat(request, table, web.cookie_key, unlocked=setting)
    if seat is None:
        return forbidden(table, request)
    pin = (await form_of(request)).get("pin", "")
    back = f"/host/{table.id}/seat/{seat}"
    if not (len(pin) == 4 and number(pin, 4) is not None):
        return RedirectResponse(back + ("" if setting else "?wrong=1"), status_code=303)
    signed = auth.pin_mac(web.cookie_key, table, seat, pin)
    cookie = f"{auth.PIN_COOKIE}{table.id}-{seat}"
    if setting:
        response = RedirectResponse(back, status_code=303)
        auth.set_cookie(response, cookie, signed, request)
    else:
        kept = auth.pin_cookie(request, table, seat) or ""
        right = auth.right_pin(kept, signed, table, seat, pin)
        wait = web.pins.attempt(f"{table.id}.{seat}", right)
        if wait > 0:
            return _pin_page(request, table, seat, "web-pin-wait", seconds=wait)
        if not right:
            return RedirectResponse(back + "?wrong=1", status_code=303)
        response = RedirectResponse(back, status_code=303)
        if kept != signed:  # opened with a cookie of the old form: it becomes today's
            auth.set_cookie(response, cookie, signed, request)
    auth.set_cookie(response, auth.OPEN_COOKIE + table.id, auth.open_mac(web.cookie_key, table, seat, signed), request)
    return response


async def pass_on(request: Request) -> Response:
    """Pass-and-play, between two players: "pass the device to Bob" (the next seat on this device that owes a
    decision), nothing of the previous seat on screen; the seat opened with a PIN is closed again."""
    table = _hosted(request)
    if isinstance(table, Response):
        return table
    web = web_of(request)
    after = number(str(request.path_params.get("seat", "")), 2) or 0
    view = web.pages.host_view(table.id, language(request, table.theme), local_seats(table))
    owing = [s for s in view.local if s.owes]
    following = [s for s in owing if s.position > after] + [s for s in owing if s.position <= after]
    nxt = next((s for s in following if s.position != after), following[0] if following else None)
    if nxt is None:
        response: Response = RedirectResponse(f"/host/{table.id}", status_code=303)
    else:
        response = page(request, "pass.html", views.pass_to(table, nxt.position, nxt.name))
    response.delete_cookie(auth.OPEN_COOKIE + table.id, path="/")
    return response


async def local_decide(request: Request) -> Response:
    """Pass-and-play: a decision for the seat on the host's device; then the device is passed on."""
    found = seat_for(request, local=True)
    if isinstance(found, Response):
        return found
    table, seat = found
    answer = await choose(request, table, seat, then=pass_url(table, seat))
    return answer or RedirectResponse(pass_url(table, seat), status_code=303)
