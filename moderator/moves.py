"""One spelling of every game action, for buttons, labels and records.

An engine ``Action`` is a ``Move`` (what kind, on whom or which card) by a seat. Everything that writes or reads
an action goes through here: the game record's entries (``record``, whose format docs/game-record.md fixes), the
tokens a button carries (``token`` / ``parse_token``), the words typed for one (``typed``) and the labels the
renderer puts on buttons (it asks ``move``).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Final, assert_never

from .commands import number
from .engine import (
    Action,
    AnswerVeto,
    CallSpecialElection,
    CastVote,
    DiscardPolicy,
    EnactPolicy,
    ExecutePlayer,
    InvestigateLoyalty,
    NominateChancellor,
    Policy,
    ProposeVeto,
    Seat,
)


class MoveKind(StrEnum):
    """The kinds of action, named as the game record names them."""

    NOMINATE = "nominate"
    VOTE = "vote"
    DISCARD = "discard"
    ENACT = "enact"
    VETO = "veto"
    VETO_REPLY = "veto_reply"
    INVESTIGATE = "investigate"
    SPECIAL_ELECTION = "special_election"
    EXECUTE = "execute"


TARGETED: Final = frozenset({MoveKind.NOMINATE, MoveKind.INVESTIGATE, MoveKind.SPECIAL_ELECTION, MoveKind.EXECUTE})
"""Moves on another player."""
CARDS: Final = frozenset({MoveKind.DISCARD, MoveKind.ENACT})
"""Moves with a policy card."""
YES_NO: Final = frozenset({MoveKind.VOTE, MoveKind.VETO_REPLY})
"""Moves that are a yes or a no (ja or nein; accept or refuse)."""


@dataclass(frozen=True, slots=True)
class Move:
    """An action without its seat: its kind and its one argument (a target seat, a card, or yes/no)."""

    kind: MoveKind
    target: Seat | None = None
    card: Policy | None = None
    yes: bool | None = None


def move(action: Action) -> Move:
    """What an action does."""
    match action:
        case NominateChancellor(chancellor=target):
            return Move(MoveKind.NOMINATE, target=target)
        case CastVote(ja=ja):
            return Move(MoveKind.VOTE, yes=ja)
        case DiscardPolicy(policy=policy):
            return Move(MoveKind.DISCARD, card=policy)
        case EnactPolicy(policy=policy):
            return Move(MoveKind.ENACT, card=policy)
        case ProposeVeto():
            return Move(MoveKind.VETO)
        case AnswerVeto(accept=accept):
            return Move(MoveKind.VETO_REPLY, yes=accept)
        case InvestigateLoyalty(target=target):
            return Move(MoveKind.INVESTIGATE, target=target)
        case CallSpecialElection(target=target):
            return Move(MoveKind.SPECIAL_ELECTION, target=target)
        case ExecutePlayer(target=target):
            return Move(MoveKind.EXECUTE, target=target)
    raise AssertionError(action)


def action(seat: Seat, m: Move) -> Action:
    """The action of ``seat`` making move ``m``; ``ValueError`` if the move lacks its argument."""
    match m.kind:
        case MoveKind.NOMINATE | MoveKind.INVESTIGATE | MoveKind.SPECIAL_ELECTION | MoveKind.EXECUTE:
            if m.target is None:
                raise ValueError(f"{m.kind} needs a target")
            target = m.target
            if m.kind is MoveKind.NOMINATE:
                return NominateChancellor(seat, target)
            if m.kind is MoveKind.INVESTIGATE:
                return InvestigateLoyalty(seat, target)
            if m.kind is MoveKind.SPECIAL_ELECTION:
                return CallSpecialElection(seat, target)
            return ExecutePlayer(seat, target)
        case MoveKind.DISCARD | MoveKind.ENACT:
            if m.card is None:
                raise ValueError(f"{m.kind} needs a card")
            return DiscardPolicy(seat, m.card) if m.kind is MoveKind.DISCARD else EnactPolicy(seat, m.card)
        case MoveKind.VOTE | MoveKind.VETO_REPLY:
            if m.yes is None:
                raise ValueError(f"{m.kind} needs yes or no")
            return CastVote(seat, m.yes) if m.kind is MoveKind.VOTE else AnswerVeto(seat, m.yes)
        case MoveKind.VETO:
            return ProposeVeto(seat)
        case _:
            assert_never(m.kind)


# --- the game record's entries ------------------------------------------------------------------------------


def record_entry(names: tuple[str, ...] | list[str], a: Action) -> dict[str, Any]:
    """One action as a game-record entry (docs/game-record.md)."""
    m = move(a)
    out: dict[str, Any] = {"player": names[a.seat], "action": m.kind.value}
    if m.target is not None:
        out["target"] = names[m.target]
    if m.card is not None:
        out["card"] = m.card.value
    if m.kind is MoveKind.VOTE:
        out["vote"] = "ja" if m.yes else "nein"
    elif m.kind is MoveKind.VETO_REPLY:
        out["accept"] = m.yes
    return out


# --- what a button carries ------------------------------------------------------------------------------------

_HEADS: Final[dict[MoveKind, str]] = {
    MoveKind.NOMINATE: "n",
    MoveKind.INVESTIGATE: "i",
    MoveKind.SPECIAL_ELECTION: "s",
    MoveKind.EXECUTE: "x",
    MoveKind.DISCARD: "d",
    MoveKind.ENACT: "e",
}
_KINDS_BY_HEAD: Final = {head: kind for kind, head in _HEADS.items()}
_YES_NO_TOKENS: Final[dict[str, Move]] = {
    "vj": Move(MoveKind.VOTE, yes=True),
    "vn": Move(MoveKind.VOTE, yes=False),
    "ay": Move(MoveKind.VETO_REPLY, yes=True),
    "an": Move(MoveKind.VETO_REPLY, yes=False),
    "pv": Move(MoveKind.VETO),
}
_TOKENS_OF_MOVES: Final = {m: token for token, m in _YES_NO_TOKENS.items()}


def token(a: Action) -> str:
    """A short token for a button's callback data: ``n3`` nominate seat 3, ``vj`` vote Ja, ``dF`` discard F…"""
    m = move(a)
    if m.target is not None:
        return f"{_HEADS[m.kind]}{m.target}"
    if m.card is not None:
        return f"{_HEADS[m.kind]}{m.card.value}"
    return _TOKENS_OF_MOVES[m]


def parse_token(seat: Seat, text: str) -> Action | None:
    """The action a button token stands for when pressed by ``seat``; None if it is not a token."""
    if text in _YES_NO_TOKENS:
        return action(seat, _YES_NO_TOKENS[text])
    if len(text) < 2 or text[0] not in _KINDS_BY_HEAD:
        return None
    kind, rest = _KINDS_BY_HEAD[text[0]], text[1:]
    if kind in TARGETED and (target := number(rest)) is not None:
        return action(seat, Move(kind, target=target))
    if kind in CARDS and rest in ("L", "F"):
        return action(seat, Move(kind, card=Policy(rest)))
    return None
