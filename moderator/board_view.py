"""The board the port hands a channel (``board.Board``), built from the engine's public view: the service's side
of the picture, so that the channel which draws it never reaches the engine."""

from __future__ import annotations

from typing import Protocol

from .board import Board
from .engine import Phase, PublicView
from .engine.types import FASCIST_TRACK

_CANDIDATES = frozenset({Phase.NOMINATION, Phase.ELECTION})
"""Phases in which President and Chancellor are candidates, not yet elected."""


class NamedTable(Protocol):
    """What the board needs of a table besides its public view: the names in seat order and the theme
    (``render.TableInfo`` is one)."""

    @property
    def names(self) -> tuple[str, ...]: ...

    @property
    def theme(self) -> str: ...


def board_of(view: PublicView, table: NamedTable) -> Board:
    """The board of a public view, with the table's names and theme."""
    if len(table.names) != view.players:
        raise ValueError(f"{len(table.names)} names for {view.players} players")
    over = view.phase is Phase.GAME_OVER
    return Board(
        players=view.players,
        names=tuple(table.names),
        theme=table.theme,
        step=view.step,
        phase=view.phase.value,
        liberal_policies=view.liberal_policies,
        fascist_policies=view.fascist_policies,
        election_tracker=view.election_tracker,
        draw_pile=view.draw_pile,
        discard_pile=view.discard_pile,
        president=view.president,
        chancellor=view.chancellor,
        alive=tuple(view.alive),
        term_limited=tuple(view.term_limited),
        veto_unlocked=view.veto_unlocked,
        winner=view.winner.value if over and view.winner is not None else None,
        powers=tuple(None if p is None else p.value for p in FASCIST_TRACK[view.players]),
        candidates=view.phase in _CANDIDATES,
    )
