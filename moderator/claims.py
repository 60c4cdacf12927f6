"""Claims: what players say at the table about what they drew, passed, saw and suspect.

A claim is public speech (docs/rules.md item 58): anyone may claim anything, and nothing a claim says is
taken as true by the service or the engine. Claims are not actions: they change no state. This module is the
pure, typed model of them and their JSON form; who says what, and what a listener makes of it, is
``moderator.bots``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, TypeVar, assert_never

from .engine import GameState, Party, Policy, Seat


class Office(StrEnum):
    """The office a session claim speaks from."""

    PRESIDENT = "president"
    CHANCELLOR = "chancellor"


class ClaimKind(StrEnum):
    """A stable id for each kind of claim; the JSON form's ``claim`` field and message ids build on it."""

    SESSION = "session"
    INVESTIGATION = "investigation"
    PEEK = "peek"
    ACCUSATION = "accusation"
    CLEARANCE = "clearance"


class ClaimError(ValueError):
    """A malformed claim (wrong hand sizes, an unknown kind, a missing or wrongly typed JSON field)."""


def hand(policies: Iterable[Policy]) -> tuple[Policy, ...]:
    """Policies in the order session claims keep them, fascist first: a hand claim tells counts, not order."""
    # Policy values are "F" and "L", so sorting puts the fascist policies first.
    return tuple(sorted(policies))


def _letters(policies: Sequence[Policy]) -> str:
    return "".join(policy.value for policy in policies)


def _contains(outer: Sequence[Policy], inner: Sequence[Policy]) -> bool:
    return all(inner.count(policy) <= outer.count(policy) for policy in Policy)


@dataclass(frozen=True, slots=True)
class SessionClaim:
    """What a member of a government says about a legislative session after it ended.

    The President claims the three policies drawn (``hand``) and the two handed over (``passed``); the
    Chancellor claims the two received (``hand``) and the one enacted (``passed``; empty after a veto).
    Hands are kept fascist first, whatever order they are given in.
    """

    speaker: Seat
    office: Office
    session: int
    """Index of the session in ``PublicView.sessions`` (0-based)."""
    hand: tuple[Policy, ...]
    passed: tuple[Policy, ...]

    def __post_init__(self) -> None:
        held, passed = hand(self.hand), hand(self.passed)
        # Normalised here so that two claims saying the same thing compare equal.
        object.__setattr__(self, "hand", held)
        object.__setattr__(self, "passed", passed)
        sizes = (3, (2,)) if self.office is Office.PRESIDENT else (2, (0, 1))
        if len(held) != sizes[0] or len(passed) not in sizes[1] or not _contains(held, passed):
            raise ClaimError(
                f"a {self.office.value} claims {sizes[0]} policies held and passes on some of them, "
                f"not {_letters(held)} passing {_letters(passed)}"
            )
        if self.session < 0:
            raise ClaimError(f"no session {self.session}")

    @property
    def kind(self) -> ClaimKind:
        """``ClaimKind.SESSION``."""
        return ClaimKind.SESSION

    @property
    def discarded(self) -> tuple[Policy, ...]:
        """The policies this claim says the speaker threw away (the President's one, the Chancellor's)."""
        rest = list(self.hand)
        for policy in self.passed:
            rest.remove(policy)
        return tuple(rest)


@dataclass(frozen=True, slots=True)
class InvestigationClaim:
    """What an investigating President says the target's party membership card showed."""

    speaker: Seat
    target: Seat
    party: Party

    @property
    def kind(self) -> ClaimKind:
        """``ClaimKind.INVESTIGATION``."""
        return ClaimKind.INVESTIGATION


@dataclass(frozen=True, slots=True)
class PeekClaim:
    """What a President who used the Policy Peek says the top three policies are, top first."""

    speaker: Seat
    session: int
    """Index of the session that will draw them (the number of sessions started at the peek)."""
    policies: tuple[Policy, ...]

    def __post_init__(self) -> None:
        if len(self.policies) != 3 or self.session < 0:
            raise ClaimError(f"a peek claims the top three policies, not {_letters(self.policies)}")

    @property
    def kind(self) -> ClaimKind:
        """``ClaimKind.PEEK``."""
        return ClaimKind.PEEK


@dataclass(frozen=True, slots=True)
class Accusation:
    """A player says another is a fascist (no evidence is attached; it is only speech); or, not ``sure``, only
    that they do not trust them ("I do not trust Bob")."""

    speaker: Seat
    target: Seat
    sure: bool = True
    """False: a suspicion, not a claim of fact ("I do not trust Bob" rather than "Bob is a fascist")."""

    @property
    def kind(self) -> ClaimKind:
        """``ClaimKind.ACCUSATION``."""
        return ClaimKind.ACCUSATION


@dataclass(frozen=True, slots=True)
class Clearance:
    """A player says another is a liberal; or, not ``sure``, only that they trust them ("I trust Bob")."""

    speaker: Seat
    target: Seat
    sure: bool = True
    """False: trust, not a claim of fact ("I trust Bob" rather than "Bob is a liberal")."""

    @property
    def kind(self) -> ClaimKind:
        """``ClaimKind.CLEARANCE``."""
        return ClaimKind.CLEARANCE


_E = TypeVar("_E", bound=StrEnum)

Claim = SessionClaim | InvestigationClaim | PeekClaim | Accusation | Clearance
"""Anything a player may say at the table."""


@dataclass(frozen=True, slots=True)
class Spoken:
    """A claim and when it was said: after ``step`` actions of the game had been applied."""

    step: int
    claim: Claim


def is_true(claim: Claim, end: GameState) -> bool:
    """Whether ``claim`` tells the truth about ``end``, a state of its game (a session not yet had is false)."""
    # Only what the claim says is checked against the truth, not whether the speaker could know it: who speaks
    # of a session's hand or a membership card is the listener's question (``moderator.bots``), not this one.
    # "I do not trust Bob" and "I trust Bob" say what the speaker thinks, no fact of the game: never false.
    history = end.history
    match claim:
        case SessionClaim(speaker=speaker, office=office, session=index):
            if index >= len(history.sessions):
                return False
            session = history.sessions[index]
            match office:
                case Office.PRESIDENT:
                    truth = SessionClaim(speaker, office, index, session.drawn, session.received)
                case Office.CHANCELLOR:
                    passed = () if session.enacted is None else (session.enacted,)
                    truth = SessionClaim(speaker, office, index, session.received, passed)
                case _:
                    assert_never(office)
            return claim == truth
        case InvestigationClaim(target=target, party=party):
            return end.roles[target].party is party
        case PeekClaim(speaker=speaker, policies=policies):
            return (speaker, policies) in history.peeks
        case Accusation(target=target, sure=sure):
            return not sure or end.roles[target].party is Party.FASCIST
        case Clearance(target=target, sure=sure):
            return not sure or end.roles[target].party is Party.LIBERAL
        case _:
            assert_never(claim)


# --- JSON -----------------------------------------------------------------------------------------------


def to_json(claim: Claim, names: Sequence[str] | None = None) -> dict[str, Any]:
    """The JSON object of a claim; seats are numbers, or the given players' names (as game records use)."""

    def who(seat: Seat) -> int | str:
        return seat if names is None else names[seat]

    match claim:
        case SessionClaim(speaker=speaker, office=office, session=session, hand=held, passed=passed):
            return {
                "claim": claim.kind.value,
                "player": who(speaker),
                "office": office.value,
                "session": session,
                "hand": _letters(held),
                "passed": _letters(passed),
            }
        case InvestigationClaim(speaker=speaker, target=target, party=party):
            return {
                "claim": claim.kind.value,
                "player": who(speaker),
                "target": who(target),
                "party": party.value,
            }
        case PeekClaim(speaker=speaker, session=session, policies=policies):
            return {
                "claim": claim.kind.value,
                "player": who(speaker),
                "session": session,
                "policies": _letters(policies),
            }
        case Accusation(speaker=speaker, target=target, sure=sure) | Clearance(
            speaker=speaker, target=target, sure=sure
        ):
            # "sure" is written only when false: a record of plain accusations reads as it always did.
            return {"claim": claim.kind.value, "player": who(speaker), "target": who(target)} | (
                {} if sure else {"sure": False}
            )
        case _:
            assert_never(claim)


def from_json(data: Mapping[str, Any], names: Sequence[str] | None = None) -> Claim:
    """The claim a JSON object describes (the inverse of ``to_json``); raises ``ClaimError`` if malformed."""
    if not isinstance(data, Mapping):
        raise ClaimError("a claim is a JSON object")
    seats = None if names is None else {name: seat for seat, name in enumerate(names)}

    def field(key: str) -> Any:
        if key not in data:
            raise ClaimError(f"a claim needs '{key}'")
        return data[key]

    def seat(key: str) -> Seat:
        value = field(key)
        if seats is None:
            if type(value) is not int or value < 0:
                raise ClaimError(f"'{key}' must be a seat number")
            return value
        if not isinstance(value, str) or value not in seats:
            raise ClaimError(f"'{key}' must be a player's name")
        return seats[value]

    def number(key: str) -> int:
        value = field(key)
        if type(value) is not int:
            raise ClaimError(f"'{key}' must be a whole number")
        return value

    def policies(key: str) -> tuple[Policy, ...]:
        value = field(key)
        if not isinstance(value, str) or any(letter not in "LF" for letter in value):
            raise ClaimError(f"'{key}' must be a string of L and F")
        return tuple(Policy(letter) for letter in value)

    def choice(key: str, enum: type[_E]) -> _E:
        value = field(key)
        try:
            return enum(value)
        except ValueError:
            raise ClaimError(f"'{key}' must be one of {', '.join(member.value for member in enum)}") from None

    def flag(key: str) -> bool:
        value = data.get(key, True)
        if type(value) is not bool:
            raise ClaimError(f"'{key}' must be true or false")
        return value

    kind = choice("claim", ClaimKind)
    match kind:
        case ClaimKind.SESSION:
            return SessionClaim(
                seat("player"),
                choice("office", Office),
                number("session"),
                policies("hand"),
                policies("passed"),
            )
        case ClaimKind.INVESTIGATION:
            return InvestigationClaim(seat("player"), seat("target"), choice("party", Party))
        case ClaimKind.PEEK:
            return PeekClaim(seat("player"), number("session"), policies("policies"))
        case ClaimKind.ACCUSATION:
            return Accusation(seat("player"), seat("target"), flag("sure"))
        case ClaimKind.CLEARANCE:
            return Clearance(seat("player"), seat("target"), flag("sure"))
        case _:
            assert_never(kind)
