"""Rule violations: an action the rules do not allow now. Each is named after the rule it breaks.

A violation carries the offending seat and never a secret (no role, no card in a hand), so it can be shown
to the player who caused it. Its docstring is the rule, in words.
"""

from __future__ import annotations

from .types import Phase, Seat


class RuleViolation(Exception):
    """The rules do not allow this action now."""

    def __init__(self, seat: Seat | None = None, phase: Phase | None = None) -> None:
        self.seat = seat
        self.phase = phase
        super().__init__(self.rule)

    @property
    def code(self) -> str:
        """A stable kebab-case id for this violation, e.g. ``ineligible-chancellor``."""
        name = type(self).__name__
        return "".join("-" + c.lower() if c.isupper() else c for c in name).lstrip("-")

    @property
    def rule(self) -> str:
        """The broken rule as one sentence (a docstring wrapped over lines reads as one line)."""
        return " ".join((type(self).__doc__ or "").split())


class UnknownSeat(RuleViolation):
    """There is no such seat at this table."""


class GameIsOver(RuleViolation):
    """The game is over; nothing more can be done."""


class OutOfTurn(RuleViolation):
    """The game is not waiting for this kind of decision now."""


class NotThePresident(RuleViolation):
    """Only the President (or Presidential Candidate) may make this decision."""


class NotTheChancellor(RuleViolation):
    """Only the Chancellor may make this decision."""


class ExecutedPlayersCannotAct(RuleViolation):
    """Executed players may not speak, vote, or run for office."""


class CannotNominateSelf(RuleViolation):
    """The Presidential Candidate must nominate another player as Chancellor."""


class IneligibleChancellor(RuleViolation):
    """The last elected President and Chancellor are term-limited and cannot be nominated Chancellor (with five
    or fewer players alive, only the last Chancellor)."""


class PolicyNotInHand(RuleViolation):
    """Only a policy you are holding can be discarded or enacted."""


class VetoNotUnlocked(RuleViolation):
    """Veto power is only unlocked once five fascist policies have been enacted."""


class VetoAlreadyRefused(RuleViolation):
    """After the President refuses a veto, the Chancellor must enact a policy."""


class CannotTargetSelf(RuleViolation):
    """A President cannot use a presidential power on themselves."""


class TargetIsExecuted(RuleViolation):
    """Executed players are out of the game and cannot be chosen."""


class AlreadyInvestigated(RuleViolation):
    """No player may be investigated twice in the same game."""


class InvalidReshuffle(ValueError):
    """A prescribed reshuffle does not hold exactly the cards being shuffled (a bad game record, not a move)."""


class InvalidSetup(ValueError):
    """The game cannot be set up this way (player count, role counts or deck)."""
