"""What happened, in the past tense. Every event says who may see it through its ``audience``.

The service filters events per recipient by ``audience`` before anything is rendered, so a secret (a role, a
card, an investigation result, the deck order) only ever travels in an event whose audience is entitled to it.
"""

from __future__ import annotations

from dataclasses import dataclass

from .types import Party, Policy, Power, Role, Seat, WinReason


@dataclass(frozen=True, slots=True)
class Audience:
    """Who may see an event: everyone, only some seats, or nobody (kept in the log only)."""

    everyone: bool
    seats: frozenset[Seat]

    def includes(self, seat: Seat) -> bool:
        """True if this seat may see the event."""
        return self.everyone or seat in self.seats


EVERYONE = Audience(True, frozenset())
NOBODY = Audience(False, frozenset())
_ONLY: dict[Seat, Audience] = {seat: Audience(False, frozenset((seat,))) for seat in range(10)}


def only(seat: Seat) -> Audience:
    """The audience of one seat."""
    return _ONLY.get(seat) or Audience(False, frozenset((seat,)))


@dataclass(frozen=True, slots=True)
class Event:
    """Base of all events; public unless a subclass says otherwise."""

    @property
    def audience(self) -> Audience:
        """Who may see this event."""
        return EVERYONE

    @property
    def kind(self) -> str:
        """A stable kebab-case id, e.g. ``chancellor-nominated``; message ids build on it."""
        return _kind(type(self))


def _kind(cls: type) -> str:
    name = cls.__name__
    return "".join("-" + c.lower() if c.isupper() else c for c in name).lstrip("-")


# --- the deal -------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class GameStarted(Event):
    """The roles were dealt; the game begins with this many players."""

    players: int


@dataclass(frozen=True, slots=True)
class RoleDealt(Event):
    """A seat learned its secret role, its party and the roles the rules let it know."""

    seat: Seat
    role: Role
    known: tuple[tuple[Seat, Role], ...]

    @property
    def party(self) -> Party:
        """The seat's party membership."""
        return self.role.party

    @property
    def audience(self) -> Audience:
        return only(self.seat)


# --- elections ------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PresidentialCandidateChosen(Event):
    """The presidency passed to a new Presidential Candidate (by rotation or by special election)."""

    president: Seat
    special_election: bool


@dataclass(frozen=True, slots=True)
class ChancellorNominated(Event):
    """The Presidential Candidate nominated a Chancellor Candidate; the vote is open."""

    president: Seat
    chancellor: Seat


@dataclass(frozen=True, slots=True)
class VoteCast(Event):
    """A seat's own vote was recorded (a change replaces the earlier vote); only the voter sees how."""

    seat: Seat
    ja: bool
    changed: bool

    @property
    def audience(self) -> Audience:
        return only(self.seat)


@dataclass(frozen=True, slots=True)
class VoteProgressed(Event):
    """Anonymous progress of the open vote: ``votes_cast`` of ``voters`` have voted."""

    votes_cast: int
    voters: int


@dataclass(frozen=True, slots=True)
class ElectionDecided(Event):
    """The last vote came in: every vote by seat, and whether the government was elected."""

    president: Seat
    chancellor: Seat
    votes: tuple[tuple[Seat, bool], ...]
    elected: bool


@dataclass(frozen=True, slots=True)
class ElectionTrackerAdvanced(Event):
    """A government was rejected or vetoed; the election tracker moved to ``election_tracker``."""

    election_tracker: int


@dataclass(frozen=True, slots=True)
class ChancellorNotHitler(Event):
    """An elected Chancellor with three or more fascist policies on the track is publicly not Hitler."""

    chancellor: Seat


@dataclass(frozen=True, slots=True)
class TermLimitsCleared(Event):
    """Chaos: every player is eligible for Chancellor until the next successful election."""


# --- the legislative session ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LegislativeSessionStarted(Event):
    """An elected government begins its session; President and Chancellor may not talk until it ends."""

    president: Seat
    chancellor: Seat
    veto_unlocked: bool


@dataclass(frozen=True, slots=True)
class PoliciesDrawn(Event):
    """The President drew the top three policies."""

    president: Seat
    policies: tuple[Policy, ...]

    @property
    def audience(self) -> Audience:
        return only(self.president)


@dataclass(frozen=True, slots=True)
class PolicyDiscarded(Event):
    """A seat discarded a policy face down; only that seat knows which."""

    seat: Seat
    policy: Policy

    @property
    def audience(self) -> Audience:
        return only(self.seat)


@dataclass(frozen=True, slots=True)
class PoliciesHandedOver(Event):
    """The President passed two policies to the Chancellor (the table sees this, not the cards)."""

    president: Seat
    chancellor: Seat


@dataclass(frozen=True, slots=True)
class PoliciesReceived(Event):
    """The Chancellor received two policies and whether a veto may be proposed."""

    chancellor: Seat
    policies: tuple[Policy, ...]
    veto_allowed: bool

    @property
    def audience(self) -> Audience:
        return only(self.chancellor)


@dataclass(frozen=True, slots=True)
class VetoProposed(Event):
    """The Chancellor proposed to veto this agenda."""

    chancellor: Seat


@dataclass(frozen=True, slots=True)
class VetoAnswered(Event):
    """The President consented to or refused the veto."""

    president: Seat
    accepted: bool


@dataclass(frozen=True, slots=True)
class PolicyEnacted(Event):
    """A policy was enacted by the government or, in chaos, from the top of the deck; the tracker reset."""

    policy: Policy
    by_chaos: bool
    liberal_policies: int
    fascist_policies: int


@dataclass(frozen=True, slots=True)
class VetoUnlocked(Event):
    """The fifth fascist policy unlocked veto power for every later session."""


@dataclass(frozen=True, slots=True)
class DeckReshuffled(Event):
    """Fewer than three policies were left: the draw and discard piles were shuffled into a new draw pile."""

    draw_pile: int


@dataclass(frozen=True, slots=True)
class DrawPileShuffled(Event):
    """The secret order of a reshuffled draw pile, top first; kept in the log, shown to nobody."""

    order: tuple[Policy, ...]

    @property
    def audience(self) -> Audience:
        return NOBODY


# --- presidential powers --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PresidentialPowerGranted(Event):
    """The enacted fascist policy covered a power; the President must use it before play goes on."""

    president: Seat
    power: Power


@dataclass(frozen=True, slots=True)
class LoyaltyInvestigated(Event):
    """The President investigated a player's loyalty (the table knows who, not what was seen)."""

    president: Seat
    target: Seat


@dataclass(frozen=True, slots=True)
class PartyMembershipSeen(Event):
    """What the investigating President saw: the target's party membership."""

    president: Seat
    target: Seat
    party: Party

    @property
    def audience(self) -> Audience:
        return only(self.president)


@dataclass(frozen=True, slots=True)
class SpecialElectionCalled(Event):
    """The President chose the next Presidential Candidate."""

    president: Seat
    target: Seat


@dataclass(frozen=True, slots=True)
class PolicyPeekUsed(Event):
    """The President looked at the top three policies (the table knows that, not what)."""

    president: Seat


@dataclass(frozen=True, slots=True)
class TopPoliciesSeen(Event):
    """What the peeking President saw: the top three policies, top first, order unchanged."""

    president: Seat
    policies: tuple[Policy, ...]

    @property
    def audience(self) -> Audience:
        return only(self.president)


@dataclass(frozen=True, slots=True)
class PlayerExecuted(Event):
    """The President executed a player; unless the game ends, nothing about their role is revealed."""

    president: Seat
    target: Seat


# --- the end --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class GameEnded(Event):
    """The game is over: the winning party, how, and every role."""

    winner: Party
    reason: WinReason
    roles: tuple[Role, ...]
