"""What a player can do: one imperative class per decision, always naming the seat that decides."""

from __future__ import annotations

from dataclasses import dataclass

from .types import Policy, Seat


@dataclass(frozen=True, slots=True)
class NominateChancellor:
    """The Presidential Candidate nominates a Chancellor Candidate."""

    seat: Seat
    chancellor: Seat


@dataclass(frozen=True, slots=True)
class CastVote:
    """A living player votes Ja (True) or Nein (False); a new vote replaces the old until the last is in."""

    seat: Seat
    ja: bool


@dataclass(frozen=True, slots=True)
class DiscardPolicy:
    """The President discards one of the three drawn policies; the other two go to the Chancellor."""

    seat: Seat
    policy: Policy


@dataclass(frozen=True, slots=True)
class EnactPolicy:
    """The Chancellor enacts one of the two policies; the other is discarded."""

    seat: Seat
    policy: Policy


@dataclass(frozen=True, slots=True)
class ProposeVeto:
    """The Chancellor proposes to veto the agenda instead of enacting (veto power only)."""

    seat: Seat


@dataclass(frozen=True, slots=True)
class AnswerVeto:
    """The President consents to (True) or refuses (False) the Chancellor's veto proposal."""

    seat: Seat
    accept: bool


@dataclass(frozen=True, slots=True)
class InvestigateLoyalty:
    """The President looks at another player's party membership."""

    seat: Seat
    target: Seat


@dataclass(frozen=True, slots=True)
class CallSpecialElection:
    """The President chooses the next Presidential Candidate."""

    seat: Seat
    target: Seat


@dataclass(frozen=True, slots=True)
class ExecutePlayer:
    """The President executes a player."""

    seat: Seat
    target: Seat


Action = (
    NominateChancellor
    | CastVote
    | DiscardPolicy
    | EnactPolicy
    | ProposeVeto
    | AnswerVeto
    | InvestigateLoyalty
    | CallSpecialElection
    | ExecutePlayer
)
