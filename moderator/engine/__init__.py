"""The rules of Secret Hitler as pure functions: no I/O, no clock, no global randomness; stdlib only.

``apply(state, action) -> (state, events)`` is the whole game; ``legal_actions``, ``awaiting``, ``view_for``
and ``public_view`` answer every question about a state without changing it.
"""

from .actions import (
    Action,
    AnswerVeto,
    CallSpecialElection,
    CastVote,
    DiscardPolicy,
    EnactPolicy,
    ExecutePlayer,
    InvestigateLoyalty,
    NominateChancellor,
    ProposeVeto,
)
from .errors import InvalidReshuffle, InvalidSetup, RuleViolation
from .events import EVERYONE, NOBODY, Audience, Event
from .rules import apply, awaiting, eligible_chancellors, legal_actions, opening_events
from .state import Core, GameState, History, Session, Setup, known_roles, new_game, new_seed, shuffled
from .types import Party, Phase, Policy, Power, Role, Seat, WinReason, power_for
from .views import KnownSession, PlayerView, PublicSession, PublicView, public_view, view_for

__all__ = [
    "EVERYONE",
    "NOBODY",
    "Action",
    "AnswerVeto",
    "Audience",
    "CallSpecialElection",
    "CastVote",
    "Core",
    "DiscardPolicy",
    "EnactPolicy",
    "Event",
    "ExecutePlayer",
    "GameState",
    "History",
    "InvalidReshuffle",
    "InvalidSetup",
    "InvestigateLoyalty",
    "KnownSession",
    "NominateChancellor",
    "Party",
    "Phase",
    "PlayerView",
    "Policy",
    "Power",
    "ProposeVeto",
    "PublicSession",
    "PublicView",
    "Role",
    "RuleViolation",
    "Seat",
    "Session",
    "Setup",
    "WinReason",
    "apply",
    "awaiting",
    "eligible_chancellors",
    "known_roles",
    "legal_actions",
    "new_game",
    "new_seed",
    "opening_events",
    "power_for",
    "public_view",
    "shuffled",
    "view_for",
]
