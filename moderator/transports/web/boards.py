"""The board image: drawn once per picture (every page shows the same image) off the event loop's thread, kept
while the picture stays the same, and named by what it shows so that a browser keeps it exactly that long."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial

from starlette.concurrency import run_in_threadpool

from ...board import Board, catalog_for, layout, render_png
from ...channels import Limits, Pages, TableView


@dataclass(frozen=True, slots=True)
class Size:
    """An image's size in pixels."""

    width: int
    height: int


@dataclass(frozen=True, slots=True)
class ShownBoard:
    """The board as a page shows it (``partials/board.html``): the image's address, its sizes (reserved, so
    nothing moves while a new picture loads; None: unknown) and its words, which are also the image's text."""

    address: str
    lines: tuple[str, ...]
    wide: Size | None
    narrow: Size | None
    """The phone's board, whose words are twice as large on its screen."""

    @property
    def text(self) -> str:
        """The board in words, for whoever cannot see the image."""
        return "\n".join(self.lines)


class BoardImages:
    """The board pictures of every table, kept per table and width until the picture changes."""

    def __init__(self, pages: Pages) -> None:
        self.pages = pages
        self._kept: dict[tuple[str, bool], tuple[str, bytes]] = {}

    async def image(self, table: TableView, lang: str, *, narrow: bool = False) -> bytes:
        """The board as a PNG (``narrow``: the phone's), drawn once per picture, off the event loop's thread (a
        drawing takes tens of milliseconds; inputs go on meanwhile)."""
        board = self.pages.board(table.id)  # here, on the loop: the table may change meanwhile
        assert board is not None
        version = picture(board, lang)
        kept = self._kept.get((table.id, narrow))
        if kept is None or kept[0] != version:
            image = await run_in_threadpool(partial(render_png, board, catalog_for(board, lang), narrow=narrow))
            kept = version, image
            self._kept[(table.id, narrow)] = kept
        return kept[1]

    def version(self, table: TableView, lang: str) -> str:
        """The name of the picture the table's board shows now in ``lang`` (empty before a game)."""
        board = self.pages.board(table.id)
        return picture(board, lang) if board else ""

    def address(self, table: TableView, lang: str) -> str:
        """The board image's address: the same while the picture is the same (a vote leaves it alone), so a page
        fetches it again only when it changed."""
        return f"/table/{table.id}/board.png?v={self.version(table, lang)}&lang={lang}"

    def shown(self, table: TableView, lang: str, lines: Sequence[str], limits: Limits) -> ShownBoard:
        """The board of ``table`` as a page shows it, with ``lines``, its words."""
        players = len(table.seats)
        if not limits.min_players <= players <= limits.max_players:  # no game's board: its size is not known
            return ShownBoard(self.address(table, lang), tuple(lines), None, None)
        wide, narrow = layout(players), layout(players, True)
        return ShownBoard(self.address(table, lang), tuple(lines), Size(wide.width, wide.height),
                          Size(narrow.width, narrow.height))


def picture(board: Board, lang: str) -> str:
    """A name for what the board image shows in ``lang``: the same exactly when the picture is."""
    drawn = json.dumps(board.drawn(), sort_keys=True)
    return hashlib.sha256(f"{drawn}|{lang}".encode()).hexdigest()[:16]
