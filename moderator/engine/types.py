"""The rulebook's vocabulary and the fixed tables of Secret Hitler, as data."""

from __future__ import annotations

from enum import StrEnum
from typing import Final

Seat = int
"""A seat at the table, 0-based, in clockwise order: the presidency passes from seat i to seat i+1."""

MIN_PLAYERS: Final = 5
MAX_PLAYERS: Final = 10
LIBERAL_POLICIES_TO_WIN: Final = 5
FASCIST_POLICIES_TO_WIN: Final = 6
HITLER_ZONE: Final = 3
"""From this many fascist policies on, electing Hitler Chancellor wins for the fascists."""
VETO_ZONE: Final = 5
"""From this many fascist policies on, every legislative session may veto."""
CHAOS_AT: Final = 3
"""Three rejected or vetoed governments in a row throw the country into chaos."""
FEW_ALIVE: Final = 5
"""With this many players alive or fewer, only the last elected Chancellor is term-limited."""


class Role(StrEnum):
    """A secret role card."""

    LIBERAL = "liberal"
    FASCIST = "fascist"
    HITLER = "hitler"

    @property
    def party(self) -> Party:
        """The party membership card packed with this role (Hitler's says Fascist)."""
        return Party.LIBERAL if self is Role.LIBERAL else Party.FASCIST


class Party(StrEnum):
    """A party membership card, which is all an investigation reveals."""

    LIBERAL = "liberal"
    FASCIST = "fascist"


class Policy(StrEnum):
    """A policy tile; the values are the letters game records use."""

    LIBERAL = "L"
    FASCIST = "F"


class Phase(StrEnum):
    """What the game is waiting for; the values are the phases game records report."""

    NOMINATION = "nomination"
    ELECTION = "election"
    LEGISLATIVE_PRESIDENT = "legislative_president"
    LEGISLATIVE_CHANCELLOR = "legislative_chancellor"
    VETO = "veto"
    INVESTIGATE = "investigate"
    SPECIAL_ELECTION = "special_election"
    EXECUTION = "execution"
    GAME_OVER = "game_over"


class Power(StrEnum):
    """A presidential power printed on a fascist track slot."""

    INVESTIGATE_LOYALTY = "investigate_loyalty"
    SPECIAL_ELECTION = "special_election"
    POLICY_PEEK = "policy_peek"
    EXECUTION = "execution"


class WinReason(StrEnum):
    """How a game was won; the values are the reasons game records report."""

    POLICIES = "policies"
    HITLER_EXECUTED = "hitler_executed"
    HITLER_ELECTED = "hitler_elected"


ROLE_COUNTS: Final[dict[int, tuple[int, int]]] = {
    5: (3, 1),
    6: (4, 1),
    7: (4, 2),
    8: (5, 2),
    9: (5, 3),
    10: (6, 3),
}
"""Players -> (liberals, ordinary fascists); every table also has exactly one Hitler."""

POLICY_DECK: Final[tuple[Policy, ...]] = (Policy.LIBERAL,) * 6 + (Policy.FASCIST,) * 11
"""The 17 policy tiles: 6 liberal and 11 fascist."""

_I, _S, _P, _E = Power.INVESTIGATE_LOYALTY, Power.SPECIAL_ELECTION, Power.POLICY_PEEK, Power.EXECUTION
_SMALL: Final = (None, None, _P, _E, _E)
_MEDIUM: Final = (None, _I, _S, _E, _E)
_LARGE: Final = (_I, _I, _S, _E, _E)
FASCIST_TRACK: Final[dict[int, tuple[Power | None, ...]]] = {
    5: _SMALL,
    6: _SMALL,
    7: _MEDIUM,
    8: _MEDIUM,
    9: _LARGE,
    10: _LARGE,
}
"""Players -> the power on fascist slots 1..5 (slot 6 wins the game)."""


def power_for(players: int, fascist_policies: int) -> Power | None:
    """The power the board grants when the given fascist slot (1-based) is covered."""
    track = FASCIST_TRACK[players]
    return track[fascist_policies - 1] if 1 <= fascist_policies <= len(track) else None


def hitler_knows_fascists(players: int) -> bool:
    """In 5-6 player games Hitler knows who the fascist is; in 7-10 Hitler knows nobody."""
    return players <= 6
