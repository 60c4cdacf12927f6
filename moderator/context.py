"""What every job of the service works with: the store, the tables, the clock, randomness, words and channels."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field

from .bots import ComputerPlayer
from .catalog import DEFAULT_LANGUAGE, Catalog, UnknownCatalog
from .channels import Capabilities
from .limits import JoinGuard, RateLimiter, sender_openings
from .store import Store
from .tables import Tables


@dataclass
class Context:
    """The service's shared parts, handed to each of its jobs (lobby, game, host controls, fan-out)."""

    store: Store
    tables: Tables
    clock: Callable[[], float]
    seed: Callable[[], int]
    codes: random.Random
    """Table ids and join codes: unguessable (``SystemRandom``); tests pass a seeded Random."""
    computer: ComputerPlayer
    drive_computers: bool = True
    vote_pause: float = 0.0
    """Seconds computer players' votes wait at most for the people's in an election (0: they vote at once)."""
    capabilities: dict[str, Capabilities] = field(default_factory=dict)
    """What each channel can do, by its name; a channel not listed can do what ``Capabilities()`` says."""
    guesses: JoinGuard = field(default_factory=JoinGuard)
    """Tries with unknown join and move codes, per client, on every way in (counted by ``clock``)."""
    openings: RateLimiter = field(default_factory=sender_openings)
    """Tables opened, per sender, on every way in (counted by ``clock``)."""

    def caps(self, channel: str) -> Capabilities:
        """What a channel can do."""
        return self.capabilities.get(channel, _PLAIN)

    @staticmethod
    def catalog(theme: str, language: str) -> Catalog:
        """The words of a theme in a language (its English if the language has no file)."""
        try:
            return Catalog.load(theme, language)
        except UnknownCatalog:
            return Catalog.load(theme, DEFAULT_LANGUAGE)


_PLAIN = Capabilities()
