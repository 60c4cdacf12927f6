"""Board image speed: milliseconds per ``render_png`` (PNG encoding included), by player count and theme.

Usage: python benchmarks/board.py [--repeat 20]

Each board is a mid-game board with policies on both tracks, a dead player and term limits, the most there is
to draw. The best of ``--repeat`` renders is printed (a shared machine only ever makes a run slower), with the
PNG's size. The Telegram channel renders one per public change of a table, on its sender thread.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from moderator.board import Board, render_png
from moderator.board_view import board_of
from moderator.catalog import Catalog
from moderator.engine import Phase, new_game, public_view
from moderator.render import TableInfo

NAMES = ("Ann", "Maximilian-Alexander", "Cy", "Dee", "Eve", "Fay", "Gus", "Hal", "Ivy", "Jo")


def board(players: int, theme: str) -> Board:
    """A busy mid-game board."""
    base = board_of(public_view(new_game(players, seed=1)), TableInfo(NAMES[:players], theme))
    return dataclasses.replace(base, phase=Phase.LEGISLATIVE_PRESIDENT, candidates=False, liberal_policies=3,
                               fascist_policies=4, election_tracker=2, president=2, chancellor=3, term_limited=(1, 4),
                               alive=(False,) + (True,) * (players - 1), veto_unlocked=False)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    for theme in ("classic", "corporate"):
        catalog = Catalog.load(theme, "en")
        for players in (5, 7, 10):
            b = board(players, theme)
            render_png(b, catalog)  # fonts and layout are cached after the first render
            best = float("inf")
            for _ in range(args.repeat):
                start = time.perf_counter()
                png = render_png(b, catalog)
                best = min(best, time.perf_counter() - start)
            print(f"{theme:9} {players:2d} players: {best * 1000:6.1f} ms per render, {len(png) / 1024:5.1f} KB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
