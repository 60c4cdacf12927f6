"""Who a request is, from its cookies: a seat's browser (its token), the host's device (its token, or the key
``moderator play --web`` prints), and on the host's device a pass-and-play seat's PIN.

Cookies are ``HttpOnly`` and ``SameSite=Strict`` (no other site can post as a seat). A token is never stored:
a seat's address is its hash (``channel.address_of``).
"""

from __future__ import annotations

import hashlib
import hmac
from typing import Final

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from ...channels import TableView
from ...commands import number
from .channel import CHANNEL, address_of, local_seats

SEAT_COOKIE: Final = "seat-"
HOST_COOKIE: Final = "host-"
COOKIE_SECONDS: Final = 60 * 60 * 24 * 7
PIN_COOKIE: Final = "pin-"
"""Pass-and-play: a seat's PIN, as its HMAC under the server's key (``WebTables.cookie_key``), in the host device's
cookie ``pin-<table>-<seat>`` (HttpOnly: the page cannot read it; the device's people cannot see it). Without the
key nobody who reads the cookie can try PINs against it, nor make one for a PIN of their choosing. ``open-<table>``:
the one seat opened with its PIN (an HMAC of that seat and its PIN cookie), until the device is passed on."""
OPEN_COOKIE: Final = "open-"
PIN_MAC: Final = "m1."
"""How a PIN cookie's value starts (the form of its MAC)."""


def set_cookie(response: Response, name: str, token: str, request: Request) -> None:
    """Keep ``token`` in this browser for a week, for this server's pages only."""
    response.set_cookie(name, token, max_age=COOKIE_SECONDS, httponly=True, samesite="strict",
                        secure=request.url.scheme == "https", path="/")


def seat_address(request: Request, table_id: str) -> str | None:
    """The address of the seat this browser's cookie stands for at the table, if it has one."""
    token = request.cookies.get(SEAT_COOKIE + table_id)
    return address_of(token) if token else None


def own_seat(request: Request, table: TableView) -> int | None:
    """The seat this browser plays at the table, if any."""
    address = seat_address(request, table.id)
    return table.seat_of(CHANNEL, address) if address else None


def is_host(request: Request, table: TableView) -> bool:
    """This browser is the host's device (its host cookie)."""
    token = request.cookies.get(HOST_COOKIE + table.id)
    if not token or table.host_channel != CHANNEL:
        return False
    return hmac.compare_digest(address_of(token), table.host_address)


def host_key(request: Request, table: TableView) -> Response | None:
    """``?key=`` (printed by ``moderator play --web``), if it is the host's: the host page again, the host's cookie
    set (and the seat's, if the host plays); else None."""
    key = request.query_params.get("key")
    if not key or table.host_channel != CHANNEL or not hmac.compare_digest(address_of(key), table.host_address):
        return None
    response = RedirectResponse(f"/host/{table.id}", status_code=303)
    set_cookie(response, HOST_COOKIE + table.id, key, request)
    if table.seat_of(CHANNEL, table.host_address) is not None:
        set_cookie(response, SEAT_COOKIE + table.id, key, request)
    return response


# --- pass-and-play: seats on the host's device --------------------------------------------------------------


def _mac(key: bytes, *parts: str) -> str:
    return hmac.new(key, "|".join(parts).encode(), hashlib.sha256).hexdigest()


def pin_mac(key: bytes, table: TableView, seat: int, pin: str) -> str:
    """The value of a seat's PIN cookie for ``pin``: bound to the host's device, the table and the seat."""
    return PIN_MAC + _mac(key, "pin", table.host_address, table.id, str(seat), pin)


def open_mac(key: bytes, table: TableView, seat: int, pin_cookie: str) -> str:
    """The value of the ``open-`` cookie for a seat opened with its PIN: only the server can make it."""
    return f"{seat}." + _mac(key, "open", table.id, str(seat), pin_cookie)


def pin_cookie(request: Request, table: TableView, seat: int) -> str | None:
    """A seat's PIN cookie on this device, if it has one (today's form or the one before, ``_old_pin``)."""
    return request.cookies.get(f"{PIN_COOKIE}{table.id}-{seat}")


def _old_pin(table: TableView, seat: int, pin: str) -> str:
    """A PIN cookie as it was made before PINs were signed with the server's key (an unsalted hash). A game
    under way across the upgrade keeps its seats locked: such a cookie still asks for its PIN, and the right
    PIN replaces it with today's form."""
    return hashlib.sha256(f"{table.host_address}|{table.id}|{seat}|{pin}".encode()).hexdigest()[:32]


def right_pin(kept: str, signed: str, table: TableView, seat: int, pin: str) -> bool:
    """``pin`` is the one the seat's cookie (``kept``) holds; ``signed`` is its today's form (``pin_mac``)."""
    return hmac.compare_digest(kept, signed) or (
        not kept.startswith(PIN_MAC) and hmac.compare_digest(kept, _old_pin(table, seat, pin)))


def locked(request: Request, table: TableView, seat: int, key: bytes) -> bool:
    """A seat with a PIN not opened with it on this device since it was last passed on."""
    pin = pin_cookie(request, table, seat)
    if pin is None:
        return False
    opened = request.cookies.get(OPEN_COOKIE + table.id, "")
    return not hmac.compare_digest(opened, open_mac(key, table, seat, pin))


def local_seat(request: Request, table: TableView, key: bytes, *, unlocked: bool = True) -> int | None:
    """The pass-and-play seat in the path, if the request comes from the host's device and the seat is on it
    (``unlocked``: and opened with its PIN, if it has one)."""
    seat = number(str(request.path_params.get("seat", "")), 2)
    if not is_host(request, table) or seat is None or seat not in local_seats(table):
        return None
    return None if unlocked and locked(request, table, seat, key) else seat
