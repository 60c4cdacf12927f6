"""Engine speed: complete random-play games per second on one core, and microseconds per ``apply``.

Usage: python benchmarks/engine.py [--players 7] [--games 3000] [--repeat 5]

Random play includes move generation: every decision is ``awaiting`` + ``legal_actions`` + a uniform pick +
``apply``, exactly as ``moderator simulate`` plays. The best of ``--repeat`` runs is printed, because a shared
machine only ever makes a run slower. Target (issue 2): 2,500 7-player games per second on one core.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from moderator.engine import apply, awaiting, legal_actions, new_game
from moderator.simulate import random_game


def games_per_second(players: int, games: int) -> tuple[float, int]:
    """Complete random games per second, and the number of actions they took."""
    start = time.perf_counter()
    for seed in range(games):
        random_game(players, seed, keep_actions=False)
    rate = games / (time.perf_counter() - start)
    return rate, sum(len(random_game(players, seed).actions) for seed in range(games))


def apply_microseconds(players: int, games: int) -> float:
    """Mean time of one ``apply`` over the actions of ``games`` random games (move generation excluded)."""
    pairs = []
    for seed in range(games):
        game = random_game(players, seed)
        state = new_game(players, seed=seed)
        for action in game.actions:
            pairs.append((state, action))
            state, _ = apply(state, action)
    start = time.perf_counter()
    for state, action in pairs:
        apply(state, action)
    return (time.perf_counter() - start) / len(pairs) * 1e6


def move_generation_microseconds(players: int, games: int) -> float:
    """Mean time of ``awaiting`` plus ``legal_actions`` for every waiting seat, per decision point."""
    states = []
    for seed in range(games):
        game = random_game(players, seed)
        state = new_game(players, seed=seed)
        for action in game.actions:
            states.append(state)
            state, _ = apply(state, action)
    start = time.perf_counter()
    for state in states:
        for seat in awaiting(state):
            legal_actions(state, seat)
    return (time.perf_counter() - start) / len(states) * 1e6


def main() -> None:
    """Print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, default=7)
    parser.add_argument("--games", type=int, default=3000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # one core, as the target says
    gc.collect()
    best, actions = 0.0, 0
    for _ in range(args.repeat):
        rate, actions = games_per_second(args.players, args.games)
        best = max(best, rate)
    print(f"python {sys.version.split()[0]}, one core, {args.players} players, {args.games} games x {args.repeat}")
    print(f"random-play games per second (best): {best:,.0f}")
    print(f"actions per game: {actions / args.games:.1f}")
    print(f"apply: {min(apply_microseconds(args.players, 300) for _ in range(args.repeat)):.2f} us per action")
    generation = min(move_generation_microseconds(args.players, 300) for _ in range(args.repeat))
    print(f"awaiting + legal_actions: {generation:.2f} us per decision point")


if __name__ == "__main__":
    main()
