"""Game records (``moderator.game-record/1``, docs/game-record.md): parse, validate, replay, summarise, export.

A record names players; the engine numbers seats. This module is the only place that maps one to the other
for records. Everything is checked before the first action is applied: a malformed record raises
``RecordError`` (one line, exit status 2); an action the rules reject stops the replay (exit status 1).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .engine import (
    Action,
    AnswerVeto,
    CallSpecialElection,
    CastVote,
    DiscardPolicy,
    EnactPolicy,
    Event,
    ExecutePlayer,
    GameState,
    InvalidReshuffle,
    InvalidSetup,
    InvestigateLoyalty,
    NominateChancellor,
    Phase,
    Policy,
    ProposeVeto,
    Role,
    RuleViolation,
    apply,
    eligible_chancellors,
    known_roles,
    new_game,
    opening_events,
)
from .engine.types import MAX_PLAYERS, MIN_PLAYERS, POLICY_DECK, ROLE_COUNTS

FORMAT = "moderator.game-record/1"
DEFAULT_SEED = 0
"""The seed of a record that gives none, so that replaying it is still repeatable."""


class RecordError(ValueError):
    """The record itself is malformed; the message is one line naming the problem."""


@dataclass(frozen=True, slots=True)
class Record:
    """A validated game record: seats by name, the rigged setup and the actions in order."""

    players: tuple[str, ...]
    roles: tuple[Role, ...]
    first_president: int
    deck: tuple[Policy, ...]
    reshuffles: tuple[tuple[Policy, ...], ...]
    seed: int | None
    actions: tuple[Action, ...]

    def seat(self, name: str) -> int:
        """The seat of a player named in this record."""
        return self.players.index(name)

    def start(self) -> GameState:
        """The game as set up by this record, before any action."""
        return new_game(
            len(self.players),
            seed=DEFAULT_SEED if self.seed is None else self.seed,
            roles=self.roles,
            deck=self.deck,
            first_president=self.first_president,
            reshuffles=self.reshuffles,
        )


@dataclass(frozen=True, slots=True)
class RuleError:
    """The first action the rules rejected."""

    index: int
    violation: RuleViolation


@dataclass(frozen=True, slots=True)
class Replay:
    """The outcome of replaying a record: the last state, how many actions applied, every event in order."""

    record: Record
    state: GameState
    applied: int
    error: RuleError | None
    events: tuple[Event, ...]


# --- parsing and validation -----------------------------------------------------------------------------

_ACTION_KINDS = (
    "nominate",
    "vote",
    "discard",
    "enact",
    "veto",
    "veto_reply",
    "investigate",
    "special_election",
    "execute",
)


def loads(text: str | bytes) -> Record:
    """Parse and validate a record from JSON text; raises ``RecordError`` with a one-line reason."""
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise RecordError(f"invalid JSON: {exc}") from None
    return parse(data)


def parse(data: Any) -> Record:
    """Validate a decoded record (a dict); raises ``RecordError`` naming the first problem."""
    if not isinstance(data, dict):
        raise RecordError("a game record must be a JSON object")
    if "format" in data and data["format"] != FORMAT:
        raise RecordError(f"unknown format {data['format']!r}; expected {FORMAT!r}")
    players = data.get("players")
    if not isinstance(players, list) or not all(isinstance(p, str) for p in players):
        raise RecordError("'players' must be a list of names")
    if not MIN_PLAYERS <= len(players) <= MAX_PLAYERS:
        raise RecordError(f"'players' must hold 5 to 10 players, not {len(players)}")
    if any(not p.strip() for p in players):
        raise RecordError("player names must not be empty")
    if len(set(players)) != len(players):
        duplicate = next(p for p in players if players.count(p) > 1)
        raise RecordError(f"duplicate player name {duplicate!r}")
    names = tuple(players)

    roles = data.get("roles")
    if not isinstance(roles, dict):
        raise RecordError("'roles' must map every player to liberal, fascist or hitler")
    for name in roles:
        if name not in names:
            raise RecordError(f"unknown player {name!r} in 'roles'")
    seat_roles: list[Role] = []
    for name in names:
        if name not in roles:
            raise RecordError(f"'roles' has no role for {name!r}")
        try:
            seat_roles.append(Role(roles[name]))
        except ValueError:
            raise RecordError(f"unknown role {roles[name]!r} for {name!r}") from None
    liberals, fascists = ROLE_COUNTS[len(names)]
    counts = (seat_roles.count(Role.LIBERAL), seat_roles.count(Role.FASCIST), seat_roles.count(Role.HITLER))
    if counts != (liberals, fascists, 1):
        raise RecordError(
            f"{len(names)} players need {liberals} liberals, {fascists} fascists and 1 hitler, "
            f"not {counts[0]}, {counts[1]} and {counts[2]}"
        )

    first = data.get("first_president", names[0])
    if not isinstance(first, str) or first not in names:
        raise RecordError(f"'first_president' {first!r} is not a player")

    deck = _cards(data.get("deck"), "'deck'")
    if sorted(deck) != sorted(POLICY_DECK):
        raise RecordError(
            f"'deck' must hold 6 L and 11 F, not {deck.count(Policy.LIBERAL)} L and "
            f"{deck.count(Policy.FASCIST)} F"
        )

    reshuffles = data.get("reshuffles", [])
    if not isinstance(reshuffles, list):
        raise RecordError("'reshuffles' must be a list of strings")
    orders = tuple(_cards(r, f"reshuffle {i + 1}") for i, r in enumerate(reshuffles))

    seed = data.get("seed")
    if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool)):
        raise RecordError("'seed' must be an integer")

    actions = data.get("actions", [])
    if not isinstance(actions, list):
        raise RecordError("'actions' must be a list")
    parsed = tuple(_action(names, i, a) for i, a in enumerate(actions))
    return Record(names, tuple(seat_roles), names.index(first), deck, orders, seed, parsed)


def _cards(value: Any, what: str) -> tuple[Policy, ...]:
    if not isinstance(value, str) or any(c not in "LF" for c in value):
        raise RecordError(f"{what} must be a string of L and F")
    return tuple(Policy(c) for c in value)


def _action(names: tuple[str, ...], index: int, data: Any) -> Action:
    where = f"action {index}"
    if not isinstance(data, dict):
        raise RecordError(f"{where} must be an object")
    kind = data.get("action")
    if kind not in _ACTION_KINDS:
        raise RecordError(f"{where} has unknown action kind {kind!r}")
    seat = _player(names, data.get("player"), f"{where} 'player'")

    def field(name: str, kind_of: type) -> Any:
        if name not in data:
            raise RecordError(f"{where} ({kind}) needs '{name}'")
        value = data[name]
        if not isinstance(value, kind_of) or (kind_of is not bool and isinstance(value, bool)):
            raise RecordError(f"{where} ({kind}) '{name}' must be a {kind_of.__name__}")
        return value

    def target() -> int:
        return _player(names, field("target", str), f"{where} 'target'")

    def card() -> Policy:
        value = field("card", str)
        if value not in ("L", "F"):
            raise RecordError(f"{where} ({kind}) 'card' must be L or F")
        return Policy(value)

    match kind:
        case "nominate":
            return NominateChancellor(seat, target())
        case "vote":
            vote = field("vote", str)
            if vote not in ("ja", "nein"):
                raise RecordError(f"{where} (vote) 'vote' must be ja or nein")
            return CastVote(seat, vote == "ja")
        case "discard":
            return DiscardPolicy(seat, card())
        case "enact":
            return EnactPolicy(seat, card())
        case "veto":
            return ProposeVeto(seat)
        case "veto_reply":
            return AnswerVeto(seat, field("accept", bool))
        case "investigate":
            return InvestigateLoyalty(seat, target())
        case "special_election":
            return CallSpecialElection(seat, target())
        case "execute":
            return ExecutePlayer(seat, target())
    raise AssertionError(kind)


def _player(names: tuple[str, ...], value: Any, what: str) -> int:
    if not isinstance(value, str):
        raise RecordError(f"{what} must be a player name")
    if value not in names:
        raise RecordError(f"{what} {value!r} is not a player")
    return names.index(value)


# --- replay ---------------------------------------------------------------------------------------------


def replay(record: Record) -> Replay:
    """Apply the record's actions in order, stopping at the first the rules reject.

    Raises ``RecordError`` if a prescribed reshuffle does not hold the cards being shuffled.
    """
    try:
        state = record.start()
    except InvalidSetup as exc:  # parse() already checks all of this; kept for records built in code
        raise RecordError(str(exc)) from None
    events: list[Event] = list(opening_events(state))
    error: RuleError | None = None
    applied = 0
    for index, action in enumerate(record.actions):
        try:
            state, new = apply(state, action)
        except RuleViolation as violation:
            error = RuleError(index, violation)
            break
        except InvalidReshuffle as exc:
            raise RecordError(str(exc)) from None
        events.extend(new)
        applied += 1
    return Replay(record, state, applied, error, tuple(events))


def error_message(record: Record, error: RuleError) -> str:
    """A sentence for people: who did what, and the rule it breaks."""
    action = record.actions[error.index]
    name = record.players[action.seat]
    kind = action_to_json(record.players, action)["action"]
    return f"{name} cannot {kind.replace('_', ' ')} now: {error.violation.rule}"


def summary(result: Replay) -> dict[str, Any]:
    """The ``replay --json`` object the spec defines, describing the game after the last applied action."""
    record, state = result.record, result.state
    names = record.players
    phase = state.phase

    def name(seat: int | None) -> str | None:
        return None if seat is None else names[seat]

    chancellor = (
        state.chancellor
        if phase
        in (Phase.ELECTION, Phase.LEGISLATIVE_PRESIDENT, Phase.LEGISLATIVE_CHANCELLOR, Phase.VETO)
        else None
    )
    hand = (
        [p.value for p in state.hand]
        if phase in (Phase.LEGISLATIVE_PRESIDENT, Phase.LEGISLATIVE_CHANCELLOR, Phase.VETO)
        else None
    )
    error = None
    if result.error is not None:
        error = {"index": result.error.index, "message": error_message(record, result.error)}
    return {
        "applied": result.applied,
        "error": error,
        "phase": phase.value,
        "president": name(state.president),
        "chancellor": name(chancellor),
        "liberal_policies": state.liberal_policies,
        "fascist_policies": state.fascist_policies,
        "election_tracker": state.election_tracker,
        "draw_pile": len(state.draw_pile),
        "discard_pile": len(state.discard_pile),
        "veto_unlocked": state.veto_unlocked,
        "alive": [n for n, alive in zip(names, state.alive) if alive],
        "eligible_chancellors": (
            [names[s] for s in eligible_chancellors(state)] if phase is Phase.NOMINATION else []
        ),
        "hand": hand,
        "known_roles": {
            names[seat]: {names[other]: role.value for other, role in known_roles(state.roles, seat)}
            for seat in range(len(names))
        },
        "investigated": [names[target] for _, target in state.investigations],
        "winner": state.winner.value if state.winner else None,
        "win_reason": state.win_reason.value if state.win_reason else None,
    }


# --- export ---------------------------------------------------------------------------------------------


def action_to_json(names: Sequence[str], action: Action) -> dict[str, Any]:
    """One action as a record entry."""
    out: dict[str, Any] = {"player": names[action.seat]}
    match action:
        case NominateChancellor(chancellor=target):
            out |= {"action": "nominate", "target": names[target]}
        case CastVote(ja=ja):
            out |= {"action": "vote", "vote": "ja" if ja else "nein"}
        case DiscardPolicy(policy=policy):
            out |= {"action": "discard", "card": policy.value}
        case EnactPolicy(policy=policy):
            out |= {"action": "enact", "card": policy.value}
        case ProposeVeto():
            out |= {"action": "veto"}
        case AnswerVeto(accept=accept):
            out |= {"action": "veto_reply", "accept": accept}
        case InvestigateLoyalty(target=target):
            out |= {"action": "investigate", "target": names[target]}
        case CallSpecialElection(target=target):
            out |= {"action": "special_election", "target": names[target]}
        case ExecutePlayer(target=target):
            out |= {"action": "execute", "target": names[target]}
    return out


def to_json(names: Sequence[str], state: GameState, actions: Sequence[Action]) -> dict[str, Any]:
    """The record of a game: its setup, every reshuffle it made and the actions applied to reach ``state``.

    The record holds every secret of the game, the seed included: export it once the game is over.
    """
    return {
        "format": FORMAT,
        "players": list(names),
        "roles": {names[seat]: role.value for seat, role in enumerate(state.roles)},
        "first_president": names[state.setup.first_president],
        "deck": "".join(p.value for p in state.setup.deck),
        "reshuffles": ["".join(p.value for p in order) for order in state.history.reshuffles],
        "seed": state.setup.seed,
        "actions": [action_to_json(names, a) for a in actions],
    }


def dumps(record_json: Mapping[str, Any]) -> str:
    """A record as JSON text: one field, and one action, per line, so records read and diff well."""
    fields = [
        f"  {json.dumps(key)}: {json.dumps(value, ensure_ascii=False)}"
        for key, value in record_json.items()
        if key != "actions"
    ]
    actions = ",\n".join(f"    {json.dumps(a, ensure_ascii=False)}" for a in record_json.get("actions", []))
    fields.append(f'  "actions": [\n{actions}\n  ]' if actions else '  "actions": []')
    return "{\n" + ",\n".join(fields) + "\n}\n"


def timeline(result: Replay) -> str:
    """The game as a readable timeline for the table (placeholder until the full renderer lands)."""
    return json.dumps(summary(result), ensure_ascii=False, indent=2)
