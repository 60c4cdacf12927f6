"""Computer players' strength: side win rates with and without claims, and whether the claims targets hold.

Usage: python benchmarks/bots.py [--games 1000] [--players 5 7 10] [--jobs 2]

Each cell plays ``--games`` seeded games (seed i deals game i, the same deals in every cell) for one player
count, one line-up and claims off or on. Line-ups: every seat a computer player; computer liberals against
random fascists; random liberals against computer fascists (random players say nothing and ignore what they
hear). With claims on, every claim is checked against the game's end: how often the fascists (Hitler
included) lie in what they say they drew, passed, saw and found, and in whom they accuse or clear; and that
no liberal ever says anything false. Targets (the claims issue): with every seat a computer, listening to
claims raises the liberals' win rate by at least 0.03 at every count, and with claims on it stays between
0.35 and 0.60.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from moderator.bots import Chooser, ComputerPlayer, play, random_player
from moderator.claims import InvestigationClaim, PeekClaim, SessionClaim, Spoken, is_true
from moderator.engine import Party, Role, new_game

LINEUPS = ("computer", "computer liberals vs random fascists", "random liberals vs computer fascists")
GAIN = 0.03
BALANCE = (0.35, 0.60)


def _choosers(lineup: str) -> tuple[Chooser, Chooser]:
    bot = ComputerPlayer()
    match lineup:
        case "computer":
            return bot, bot
        case "computer liberals vs random fascists":
            return bot, random_player
        case "random liberals vs computer fascists":
            return random_player, bot
    raise ValueError(lineup)


FACTS = (SessionClaim, InvestigationClaim, PeekClaim)
"""Claims about what the speaker drew, passed, saw or found (the others accuse or clear)."""


@dataclass
class Cell:
    """One cell's figures: liberal wins, and with claims, the fascists' claims and lies, the liberals' lies."""

    won: int = 0
    facts: int = 0
    fact_lies: int = 0
    verdicts: int = 0
    verdict_lies: int = 0
    liberal_claims: int = 0
    liberal_lies: int = 0

    def add(self, other: Cell) -> None:
        """Count another chunk of the same cell."""
        for name, value in vars(other).items():
            setattr(self, name, getattr(self, name) + value)


def liberal_wins(players: int, lineup: str, claims: bool, seeds: range) -> Cell:
    """The liberals' wins in the seeded games, and what the claims said."""
    liberal, fascist = _choosers(lineup)
    cell = Cell()
    for seed in seeds:
        state = new_game(players, seed=seed)
        choosers = [liberal if role is Role.LIBERAL else fascist for role in state.roles]
        transcript: list[Spoken] = []
        end = play(state, choosers, seed, claims=claims, transcript=transcript)
        cell.won += end.winner is Party.LIBERAL
        for spoken in transcript:
            claim, true = spoken.claim, is_true(spoken.claim, end)
            if end.roles[claim.speaker] is Role.LIBERAL:
                cell.liberal_claims += 1
                cell.liberal_lies += not true
            elif isinstance(claim, FACTS):
                cell.facts += 1
                cell.fact_lies += not true
            else:
                cell.verdicts += 1
                cell.verdict_lies += not true
    return cell


def _cell(job: tuple[int, str, bool, int, int]) -> tuple[int, str, bool, Cell]:
    players, lineup, claims, start, stop = job
    return players, lineup, claims, liberal_wins(players, lineup, claims, range(start, stop))


def _share(part: int, whole: int) -> str:
    return f"{part / whole:.3f}" if whole else "-"


def main() -> None:
    """Print the table and the targets."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--players", type=int, nargs="+", default=[5, 7, 10])
    parser.add_argument(
        "--jobs", type=int, default=len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 2
    )
    args = parser.parse_args()
    games, chunk = args.games, 100
    jobs = [
        (players, lineup, claims, start, min(start + chunk, games))
        for players in args.players
        for lineup in LINEUPS
        for claims in (False, True)
        for start in range(0, games, chunk)
    ]
    began = time.perf_counter()
    wins: dict[tuple[int, str, bool], Cell] = {}
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        for players, lineup, claims, chunk_cell in pool.map(_cell, jobs):
            wins.setdefault((players, lineup, claims), Cell()).add(chunk_cell)
    seconds = time.perf_counter() - began

    def rate(players: int, lineup: str, claims: bool) -> float:
        return float(wins[players, lineup, claims].won / games)

    print(f"liberal win rate (fascist = 1 - liberal), {games} seeded games per cell")
    print(f"{'players':>7}  {'line-up':<38} {'claims off':>10} {'claims on':>10} {'change':>7}")
    for players in args.players:
        for lineup in LINEUPS:
            off, on = rate(players, lineup, False), rate(players, lineup, True)
            print(f"{players:>7}  {lineup:<38} {off:>10.3f} {on:>10.3f} {on - off:>+7.3f}")
    print("what the fascists (Hitler included) say with claims on: claims of what they drew, passed, saw or found,")
    print("the share of them that are lies; accusations and clearances, the share of them that are false")
    print(f"{'players':>7}  {'line-up':<38} {'facts':>7} {'lies':>6} {'verdicts':>8} {'false':>6} {'liberal lies':>12}")
    for players in args.players:
        for lineup in LINEUPS:
            c = wins[players, lineup, True]
            print(f"{players:>7}  {lineup:<38} {c.facts:>7} {_share(c.fact_lies, c.facts):>6} {c.verdicts:>8} "
                  f"{_share(c.verdict_lies, c.verdicts):>6} {f'{c.liberal_lies} of {c.liberal_claims}':>12}")
    print("targets (every seat a computer player):")
    held = True
    for players in args.players:
        off, on = rate(players, "computer", False), rate(players, "computer", True)
        gain_ok = on - off >= GAIN
        balance_ok = BALANCE[0] <= on <= BALANCE[1]
        held = held and gain_ok and balance_ok
        print(
            f"  {players} players: listening {on - off:+.3f} (>= +{GAIN:.2f}: {'yes' if gain_ok else 'NO'}), "
            f"liberal win rate with claims {on:.3f} (in {BALANCE[0]:.2f}-{BALANCE[1]:.2f}: "
            f"{'yes' if balance_ok else 'NO'})"
        )
    print(
        f"targets {'hold' if held else 'do NOT hold'}; {len(wins)} cells, {args.jobs} processes, {seconds:.0f} s wall"
    )


if __name__ == "__main__":
    main()
