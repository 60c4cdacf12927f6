"""Computer players' strength: side win rates with and without claims, and whether the claims targets hold.

Usage: python benchmarks/bots.py [--games 1000] [--players 5 7 10] [--jobs 2]

Each cell plays ``--games`` seeded games (seed i deals game i, the same deals in every cell) for one player
count, one line-up and claims off or on. Line-ups: every seat a computer player; computer liberals against
random fascists; random liberals against computer fascists (random players say nothing and ignore what they
hear). Targets (the claims issue): with every seat a computer, listening to claims raises the liberals' win
rate by at least 0.03 at every count, and with claims on it stays between 0.35 and 0.60.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from moderator.bots import Chooser, ComputerPlayer, play, random_player
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


def liberal_wins(players: int, lineup: str, claims: bool, seeds: range) -> int:
    """How many of the seeded games the liberals win."""
    liberal, fascist = _choosers(lineup)
    won = 0
    for seed in seeds:
        state = new_game(players, seed=seed)
        choosers = [liberal if role is Role.LIBERAL else fascist for role in state.roles]
        won += play(state, choosers, seed, claims=claims).winner is Party.LIBERAL
    return won


def _cell(job: tuple[int, str, bool, int, int]) -> tuple[int, str, bool, int]:
    players, lineup, claims, start, stop = job
    return players, lineup, claims, liberal_wins(players, lineup, claims, range(start, stop))


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
    wins: dict[tuple[int, str, bool], int] = {}
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        for players, lineup, claims, won in pool.map(_cell, jobs):
            wins[players, lineup, claims] = wins.get((players, lineup, claims), 0) + won
    seconds = time.perf_counter() - began

    def rate(players: int, lineup: str, claims: bool) -> float:
        return wins[players, lineup, claims] / games

    print(f"liberal win rate (fascist = 1 - liberal), {games} seeded games per cell")
    print(f"{'players':>7}  {'line-up':<38} {'claims off':>10} {'claims on':>10} {'change':>7}")
    for players in args.players:
        for lineup in LINEUPS:
            off, on = rate(players, lineup, False), rate(players, lineup, True)
            print(f"{players:>7}  {lineup:<38} {off:>10.3f} {on:>10.3f} {on - off:>+7.3f}")
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
