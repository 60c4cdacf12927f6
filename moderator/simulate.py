"""Complete games between computer players: players that choose uniformly among the legal actions, or the
heuristic computer players of ``moderator.bots`` in every seat, saying what they claim."""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field

from .bots import ComputerPlayer, play
from .claims import Spoken
from .engine import Action, GameState, Party, Phase, WinReason, apply, awaiting, legal_actions, new_game


@dataclass(frozen=True, slots=True)
class PlayedGame:
    """One finished game: its last state, every action and everything claimed, in order."""

    state: GameState
    actions: tuple[Action, ...]
    claims: tuple[Spoken, ...] = ()


def random_game(players: int, seed: int, *, keep_actions: bool = True) -> PlayedGame:
    """Play one game to the end; every decision is a uniform choice among the legal actions.

    Everything, the deal and the shuffles included, follows from ``seed``.
    """
    state = new_game(players, seed=seed)
    pick = random.Random(seed).random
    actions: list[Action] = []
    over = Phase.GAME_OVER
    while state.phase is not over:
        # Everyone who owes a decision decides once; during a vote that is every living player.
        for seat in awaiting(state):
            choices = legal_actions(state, seat)
            action = choices[int(pick() * len(choices))]
            state, _ = apply(state, action)
            if keep_actions:
                actions.append(action)
    return PlayedGame(state, tuple(actions))


def computer_game(players: int, seed: int, *, keep_actions: bool = True) -> PlayedGame:
    """Play one game to the end with a computer player (``bots.ComputerPlayer``) in every seat, claims on: each
    decides from what its seat may know and says what it has to say after each result.

    Everything, the deal, the shuffles and every choice and claim included, follows from ``seed``.
    """
    actions: list[Action] = []
    said: list[Spoken] = []
    end = play(new_game(players, seed=seed), [ComputerPlayer()] * players, seed, claims=True, transcript=said,
               actions=actions if keep_actions else None)
    return PlayedGame(end, tuple(actions), tuple(said) if keep_actions else ())


def random_games(players: int, games: int, seed: int, *, keep_actions: bool = True,
                 computers: bool = False) -> Iterator[PlayedGame]:
    """``games`` games, random ones (or, with ``computers``, ``computer_game``s); game i uses a seed derived from
    ``seed`` and i."""
    one = computer_game if computers else random_game
    for i in range(games):
        yield one(players, seed * 1_000_003 + i, keep_actions=keep_actions)


@dataclass
class Tally:
    """Wins by side and reason, governments formed, and time taken over many games."""

    games: int = 0
    wins: Counter[tuple[Party, WinReason]] = field(default_factory=Counter)
    governments: int = 0
    seconds: float = 0.0

    def add(self, state: GameState) -> None:
        """Count one finished game."""
        assert state.winner is not None and state.win_reason is not None
        self.games += 1
        self.wins[state.winner, state.win_reason] += 1
        self.governments += len(state.history.sessions)

    def report(self) -> str:
        """The figures as lines for a terminal."""
        lines = [f"games: {self.games}"]
        for side in Party:
            won = sum(n for (party, _), n in self.wins.items() if party is side)
            reasons = ", ".join(
                f"{reason.value} {self.wins[side, reason]}" for reason in WinReason if self.wins[side, reason]
            )
            share = 100 * won / self.games if self.games else 0.0
            lines.append(f"{side.value} wins: {won} ({share:.1f}%){': ' + reasons if reasons else ''}")
        average = self.governments / self.games if self.games else 0.0
        lines.append(f"average governments per game: {average:.2f}")
        rate = self.games / self.seconds if self.seconds else 0.0
        lines.append(f"games per second: {rate:.0f}")
        return "\n".join(lines)


def tally(games: Iterator[PlayedGame]) -> Tally:
    """Play and count the given games, timing them."""
    result = Tally()
    start = time.perf_counter()
    for game in games:
        result.add(game.state)
    result.seconds = time.perf_counter() - start
    return result
