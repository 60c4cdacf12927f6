"""Computer players' strength on fresh seeds: liberal win rates with their intervals, what listening to claims is
worth, and whether the targets hold.

Usage: python benchmarks/bots.py [--games 2000] [--first-seed 10000] [--players 5 7 10] [--jobs 2]

Each cell plays ``--games`` seeded games (seed s deals game s, the same deals in every cell: seeds first-seed to
first-seed + games - 1, by default 10,000 to 11,999, which no tuning ever used; tune on others) for one player
count, one line-up and claims off or on. Line-ups: every seat a computer player; computer liberals against random
fascists; random liberals against computer fascists (random players say nothing and ignore what they hear).

Every liberal win rate is printed with its 95 % Wilson interval. Listening is what claims are worth to the
liberals: the win rate with claims on less the rate with them off, over the same deals, with a 95 % interval for
that paired difference. With claims on, every claim is checked against the game's end: how often the fascists
(Hitler included) lie in what they say they drew, passed, saw and found, how often their accusations and clearances
said as facts are false, and that no liberal ever says anything false.

Targets (the computer players issue), with every seat a computer player and claims on, on the point estimates:
a liberal win rate of 0.40 to 0.58 at every count; listening makes liberals stronger (the paired interval above
0) at every count.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from moderator.bots import Chooser, ComputerPlayer, play, random_player
from moderator.claims import Accusation, Clearance, InvestigationClaim, PeekClaim, SessionClaim, Spoken, is_true
from moderator.engine import Party, Role, new_game

LINEUPS = ("computer", "computer liberals vs random fascists", "random liberals vs computer fascists")
BALANCE = (0.40, 0.58)
Z = 1.959964
"""The normal quantile of a two-sided 95 % interval."""


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
"""Claims about what the speaker drew, passed, saw or found (the others accuse, distrust, trust or clear)."""


@dataclass
class Cell:
    """One cell's figures: each seed's outcome, and with claims, the fascists' claims and lies, the liberals' lies."""

    won: dict[int, bool] = field(default_factory=dict)
    """Whether the liberals won, by seed."""
    facts: int = 0
    fact_lies: int = 0
    verdicts: int = 0
    verdict_lies: int = 0
    opinions: int = 0
    liberal_claims: int = 0
    liberal_lies: int = 0

    def add(self, other: Cell) -> None:
        """Count another chunk of the same cell."""
        self.won.update(other.won)
        for name in ("facts", "fact_lies", "verdicts", "verdict_lies", "opinions", "liberal_claims", "liberal_lies"):
            setattr(self, name, getattr(self, name) + getattr(other, name))


def liberal_wins(players: int, lineup: str, claims: bool, seeds: range) -> Cell:
    """The liberals' wins in the seeded games, and what the claims said."""
    liberal, fascist = _choosers(lineup)
    cell = Cell()
    for seed in seeds:
        state = new_game(players, seed=seed)
        choosers = [liberal if role is Role.LIBERAL else fascist for role in state.roles]
        transcript: list[Spoken] = []
        end = play(state, choosers, seed, claims=claims, transcript=transcript)
        cell.won[seed] = end.winner is Party.LIBERAL
        for spoken in transcript:
            claim, true = spoken.claim, is_true(spoken.claim, end)
            if end.roles[claim.speaker] is Role.LIBERAL:
                cell.liberal_claims += 1
                cell.liberal_lies += not true
            elif isinstance(claim, FACTS):
                cell.facts += 1
                cell.fact_lies += not true
            elif isinstance(claim, (Accusation, Clearance)) and not claim.sure:
                cell.opinions += 1
            else:
                cell.verdicts += 1
                cell.verdict_lies += not true
    return cell


def _cell(job: tuple[int, str, bool, int, int]) -> tuple[int, str, bool, Cell]:
    players, lineup, claims, start, stop = job
    return players, lineup, claims, liberal_wins(players, lineup, claims, range(start, stop))


def wilson(wins: int, games: int) -> tuple[float, float]:
    """The 95 % Wilson score interval of a rate of ``wins`` in ``games``."""
    if not games:
        return 0.0, 1.0
    p = wins / games
    centre = (p + Z * Z / (2 * games)) / (1 + Z * Z / games)
    half = Z * math.sqrt(p * (1 - p) / games + Z * Z / (4 * games * games)) / (1 + Z * Z / games)
    return centre - half, centre + half


def paired(on: dict[int, bool], off: dict[int, bool]) -> tuple[float, float, float]:
    """The mean of on - off over the seeds both played, and its 95 % interval (the normal one, of paired
    differences)."""
    seeds = sorted(on.keys() & off.keys())
    diffs = [int(on[s]) - int(off[s]) for s in seeds]
    n = len(diffs)
    mean = sum(diffs) / n
    var = sum((d - mean) ** 2 for d in diffs) / (n - 1) if n > 1 else 0.0
    half = Z * math.sqrt(var / n)
    return mean, mean - half, mean + half


def _share(part: int, whole: int) -> str:
    return f"{part / whole:.3f}" if whole else "-"


def main() -> None:
    """Print the tables and the targets."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=2000)
    parser.add_argument("--first-seed", type=int, default=10_000)
    parser.add_argument("--players", type=int, nargs="+", default=[5, 7, 10])
    parser.add_argument("--lineups", choices=("all", "computer"), default="all",
                        help="every line-up, or only every seat a computer player (the targets' cells)")
    parser.add_argument(
        "--jobs", type=int, default=len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 2
    )
    args = parser.parse_args()
    games, first, chunk = args.games, args.first_seed, 50
    lineups = LINEUPS if args.lineups == "all" else LINEUPS[:1]
    jobs = [
        (players, lineup, claims, start, min(start + chunk, first + games))
        for players in args.players
        for lineup in lineups
        for claims in (False, True)
        for start in range(first, first + games, chunk)
    ]
    began = time.perf_counter()
    cells: dict[tuple[int, str, bool], Cell] = {}
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        for players, lineup, claims, part in pool.map(_cell, jobs):
            cells.setdefault((players, lineup, claims), Cell()).add(part)
    seconds = time.perf_counter() - began

    def rate(players: int, lineup: str, claims: bool) -> str:
        won = cells[players, lineup, claims].won
        wins = sum(won.values())
        low, high = wilson(wins, len(won))
        return f"{wins / len(won):.3f} [{low:.3f}, {high:.3f}]"

    print(f"liberal win rate (fascist = 1 - liberal) with its 95 % interval; {games} games per cell, seeds {first} "
          f"to {first + games - 1}")
    print(f"{'players':>7}  {'line-up':<38} {'claims off':>22} {'claims on':>22} {'listening, paired':>26}")
    for players in args.players:
        for lineup in lineups:
            gain, low, high = paired(cells[players, lineup, True].won, cells[players, lineup, False].won)
            print(f"{players:>7}  {lineup:<38} {rate(players, lineup, False):>22} {rate(players, lineup, True):>22} "
                  f"{f'{gain:+.3f} [{low:+.3f}, {high:+.3f}]':>26}")
    print("what the fascists (Hitler included) say with claims on: claims of what they drew, passed, saw or found,")
    print("the share of them that are lies; accusations and clearances said as facts, the share of them that are")
    print("false; opinions (I do not trust, I trust), how many")
    print(f"{'players':>7}  {'line-up':<38} {'facts':>7} {'lies':>6} {'verdicts':>8} {'false':>6} {'opinions':>8} "
          f"{'liberal lies':>12}")
    for players in args.players:
        for lineup in lineups:
            c = cells[players, lineup, True]
            print(f"{players:>7}  {lineup:<38} {c.facts:>7} {_share(c.fact_lies, c.facts):>6} {c.verdicts:>8} "
                  f"{_share(c.verdict_lies, c.verdicts):>6} {c.opinions:>8} "
                  f"{f'{c.liberal_lies} of {c.liberal_claims}':>12}")
    print("targets (every seat a computer player, claims on):")
    held = True
    for players in args.players:
        won = cells[players, "computer", True].won
        on = sum(won.values()) / len(won)
        gain, low, _ = paired(won, cells[players, "computer", False].won)
        balance_ok = BALANCE[0] <= on <= BALANCE[1]
        gain_ok = low > 0
        held = held and gain_ok and balance_ok
        print(
            f"  {players} players: liberal win rate {on:.3f} (in {BALANCE[0]:.2f}-{BALANCE[1]:.2f}: "
            f"{'yes' if balance_ok else 'NO'}), listening {gain:+.3f} (interval above 0: {'yes' if gain_ok else 'NO'})"
        )
    print(
        f"targets {'hold' if held else 'do NOT hold'}; {len(cells)} cells, {args.jobs} processes, {seconds:.0f} s wall"
    )


if __name__ == "__main__":
    main()
