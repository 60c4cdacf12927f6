"""What the browser channel is: its name, what it can do, how its addresses are made, and its delivery (a page
reads its own messages)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Final

from ...channels import Capabilities, Delivered, Outbound, Result, TableView

CHANNEL: Final = "web"
CAPABILITIES: Final = Capabilities(buttons=True, forms=True)
"""Buttons on the page; a page shows every message it is sent (its feed), so it needs nothing more."""
APP_PATH: Final = "/app/"
"""Where a seat's page in a messenger's app lives: ``/app/<table>`` (``Runtime.app_url``, ``apps``)."""


def address_of(token: str) -> str:
    """The seat address a browser token stands for (the token itself is never stored)."""
    return "w" + hashlib.sha256(token.encode()).hexdigest()[:32]


def local_address(host: str, tag: str) -> str:
    """The address of a seat taken on the host's own device (pass-and-play); ``tag`` tells them apart."""
    return f"{host}.{tag}"


def local_seats(table: TableView) -> list[int]:
    """Seats taken on the host's device (the host's own among them, if the host plays), in seating order."""
    host = table.host_address
    if table.host_channel != CHANNEL:
        return []
    return [s.position for s in table.seats
            if s.channel == CHANNEL and (s.address == host or s.address.startswith(host + "."))]


class ReadByPage:
    """The browser channel's delivery: a page reads its messages itself, so delivering one only marks it read."""

    capabilities: Final = CAPABILITIES

    def send_batch(self, address: str, messages: Sequence[Outbound]) -> list[Result]:
        return [Delivered() for _ in messages]
