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

from . import claims as claimed
from . import moves, render
from .catalog import Catalog
from .claims import Claim, ClaimError, Spoken
from .engine import (
    Action,
    Event,
    GameState,
    InvalidReshuffle,
    InvalidSetup,
    Phase,
    Policy,
    Role,
    RuleViolation,
    apply,
    eligible_chancellors,
    known_roles,
    new_game,
    opening_events,
)
from .engine.events import PresidentialCandidateChosen
from .engine.types import MAX_PLAYERS, MIN_PLAYERS, POLICY_DECK, ROLE_COUNTS
from .moves import Move, MoveKind

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
    claims: tuple[Spoken, ...] | None = None
    """What players said (the optional ``claims`` field; None when the record has none): speech, never applied,
    each with ``step``, how many actions had been applied when it was said."""

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
    marks: tuple[int, ...] = ()
    """How many events there were after k actions had been applied, for k from 0 to ``applied``."""

    def claims(self) -> tuple[Spoken, ...]:
        """The record's claims said after actions that applied (the rest speak of a game that did not happen)."""
        return tuple(spoken for spoken in self.record.claims or () if spoken.step <= self.applied)


# --- parsing and validation -----------------------------------------------------------------------------

_ACTION_KINDS = frozenset(k.value for k in MoveKind)


def loads(text: str | bytes) -> Record:
    """Parse and validate a record from JSON text; raises ``RecordError`` with a one-line reason."""
    try:
        data = json.loads(text)
    except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        raise RecordError(f"invalid JSON: {exc}") from None
    except RecursionError:
        raise RecordError("invalid JSON: nested too deeply") from None
    return parse(data)


def parse(data: Any) -> Record:
    """Validate a decoded record (a dict); raises ``RecordError`` naming the first problem."""
    if not isinstance(data, dict):
        raise RecordError("a game record must be a JSON object")
    if "format" in data and data["format"] != FORMAT:
        raise RecordError(f"unknown format {data['format']!r}; expected {FORMAT!r}")
    for required in ("players", "roles", "deck"):
        if required not in data:
            raise RecordError(f"the record needs '{required}'")
    players = data["players"]
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

    roles = data["roles"]
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
            f"{len(names)} players need {liberals} liberals, {fascists} fascist{'s' if fascists > 1 else ''} "
            "and 1 hitler, "
            f"not {counts[0]}, {counts[1]} and {counts[2]}"
        )

    first = data.get("first_president", names[0])
    if not isinstance(first, str) or first not in names:
        raise RecordError(f"'first_president' {first!r} is not a player")

    deck = _cards(data["deck"], "'deck'")
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
    said = _claims(names, len(parsed), data["claims"]) if "claims" in data else None
    return Record(names, tuple(seat_roles), names.index(first), deck, orders, seed, parsed, said)


def _claims(names: tuple[str, ...], actions: int, data: Any) -> tuple[Spoken, ...]:
    """The optional ``claims`` field: each entry's form is checked, never what it says (claims are speech)."""
    if not isinstance(data, list):
        raise RecordError("'claims' must be a list")
    said: list[Spoken] = []
    for index, entry in enumerate(data):
        where = f"claim {index}"
        if not isinstance(entry, dict):
            raise RecordError(f"{where} must be an object")
        after = entry.get("after")
        if type(after) is not int or not 0 <= after <= actions:
            raise RecordError(f"{where} 'after' must be a whole number from 0 to {actions} (the actions applied)")
        if said and after < said[-1].step:
            raise RecordError(f"{where} is said after {after} actions, before the claim ahead of it")
        try:
            claim = claimed.from_json({k: v for k, v in entry.items() if k != "after"}, names)
        except ClaimError as exc:
            raise RecordError(f"{where}: {exc}") from None
        said.append(Spoken(after, claim))
    return tuple(said)


_TYPE_NAMES = {str: "a string", bool: "true or false"}


def _cards(value: Any, what: str) -> tuple[Policy, ...]:
    if not isinstance(value, str) or any(c not in "LF" for c in value):
        raise RecordError(f"{what} must be a string of L and F")
    return tuple(Policy(c) for c in value)


def _action(names: tuple[str, ...], index: int, data: Any) -> Action:
    where = f"action {index}"
    if not isinstance(data, dict):
        raise RecordError(f"{where} must be an object")
    if "action" not in data:
        raise RecordError(f"{where} needs 'action'")
    kind = data["action"]
    if not isinstance(kind, str):
        raise RecordError(f"{where} 'action' must be a string")
    if kind not in _ACTION_KINDS:
        raise RecordError(f"{where} has unknown action kind {kind!r}")
    if "player" not in data:
        raise RecordError(f"{where} ({kind}) needs 'player'")
    seat = _player(names, data["player"], f"{where} ({kind}) 'player'")

    def field(name: str, kind_of: type) -> Any:
        if name not in data:
            raise RecordError(f"{where} ({kind}) needs '{name}'")
        value = data[name]
        if not isinstance(value, kind_of) or (kind_of is not bool and isinstance(value, bool)):
            raise RecordError(f"{where} ({kind}) '{name}' must be {_TYPE_NAMES[kind_of]}")
        return value

    def target() -> int:
        return _player(names, field("target", str), f"{where} ({kind}) 'target'")

    def card() -> Policy:
        value = field("card", str)
        if value not in ("L", "F"):
            raise RecordError(f"{where} ({kind}) 'card' must be L or F")
        return Policy(value)

    move = MoveKind(kind)
    if move in moves.TARGETED:
        return moves.action(seat, Move(move, target=target()))
    if move in moves.CARDS:
        return moves.action(seat, Move(move, card=card()))
    if move is MoveKind.VOTE:
        vote = field("vote", str)
        if vote not in ("ja", "nein"):
            raise RecordError(f"{where} (vote) 'vote' must be ja or nein")
        return moves.action(seat, Move(move, yes=vote == "ja"))
    if move is MoveKind.VETO_REPLY:
        return moves.action(seat, Move(move, yes=field("accept", bool)))
    return moves.action(seat, Move(move))


def parse_action(names: Sequence[str], data: Any) -> Action:
    """One record action entry as an engine action; raises ``RecordError`` if it is malformed."""
    return _action(tuple(names), 0, data)


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
    marks = [len(events)]
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
        marks.append(len(events))
    return Replay(record, state, applied, error, tuple(events), tuple(marks))


def error_message(record: Record, error: RuleError) -> str:
    """A sentence for people, in English (standard error, the ``--json`` summary): who tried to do what, and
    the rule it breaks.

    For example ``Bob cannot investigate Dee: No player may be investigated twice in the same game.``
    """
    return render.replay_rejection(_rejected(record, error), render.TableInfo(record.players), Catalog.load())


def _rejected(record: Record, error: RuleError) -> render.Rejected:
    return render.Rejected(error.index, record.actions[error.index], error.violation)


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
    # Only a record that has claims gets them back, so a record without them replays to the same JSON as before.
    said = {} if record.claims is None else {"claims": claims_to_json(names, result.claims())}
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
        "alive": [n for n, alive in zip(names, state.alive, strict=True) if alive],
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
        **said,
    }


# --- export ---------------------------------------------------------------------------------------------


def action_to_json(names: Sequence[str], action: Action) -> dict[str, Any]:
    """One action as a record entry."""
    return moves.record_entry(tuple(names), action)


def claims_to_json(names: Sequence[str], said: Sequence[Spoken]) -> list[dict[str, Any]]:
    """Claims as the record's ``claims`` entries: ``after`` (the actions applied when said), then the claim."""
    return [{"after": spoken.step, **claimed.to_json(spoken.claim, names)} for spoken in said]


def to_json(
    names: Sequence[str], state: GameState, actions: Sequence[Action], said: Sequence[Spoken] | None = None
) -> dict[str, Any]:
    """The record of a game: its setup, every reshuffle it made and the actions applied to reach ``state``,
    with what the players claimed if ``said`` is given (a game with no claims gives none).

    The record holds every secret of the game, the seed included: export it once the game is over.
    """
    talk = {"claims": claims_to_json(names, said)} if said else {}
    return {
        "format": FORMAT,
        "players": list(names),
        "roles": {names[seat]: role.value for seat, role in enumerate(state.roles)},
        "first_president": names[state.setup.first_president],
        "deck": "".join(p.value for p in state.setup.deck),
        "reshuffles": ["".join(p.value for p in order) for order in state.history.reshuffles],
        "seed": state.setup.seed,
        "actions": [action_to_json(names, a) for a in actions],
        **talk,
    }


def dumps(record_json: Mapping[str, Any]) -> str:
    """A record as JSON text: one field, one action and one claim per line, so records read and diff well."""
    fields = [
        f"  {json.dumps(key)}: {json.dumps(value, ensure_ascii=False)}"
        for key, value in record_json.items()
        if key not in ("actions", "claims")
    ]
    lists = ["actions"] + (["claims"] if "claims" in record_json else [])
    for key in lists:
        entries = ",\n".join(f"    {json.dumps(e, ensure_ascii=False)}" for e in record_json.get(key, []))
        fields.append(f'  "{key}": [\n{entries}\n  ]' if entries else f'  "{key}": []')
    return "{\n" + ",\n".join(fields) + "\n}\n"


def timeline(result: Replay, catalog: Catalog | None = None) -> str:
    """The game as a readable timeline for the table: the after-game truth, one event per line, by round, in
    ``catalog``'s words (classic English by default).

    Every event is told, private ones too (roles, hands, discards, investigation results, peeks, reshuffled
    orders): this is for reading once the game is over. A vote's anonymous progress is folded into the line
    of the vote it follows. The record's claims come where they were said, each as a person's words in quotes
    (``Ann claims: "I drew F, F, L and handed over F, L."``), never as facts. If the replay stopped on a
    rejected action, the last line says which and why.
    """
    words = catalog or Catalog.load()
    said: dict[int, list[Claim]] = {}
    for spoken in result.claims():
        # Said after ``step`` actions: told after the results of the last of them, before the next round
        # they may have started (a claim about a session belongs to that session's round).
        start = result.marks[spoken.step - 1] if spoken.step else 0
        end = result.marks[spoken.step]
        turn = (i for i in range(start, end) if isinstance(result.events[i], PresidentialCandidateChosen))
        said.setdefault(next(turn, end), []).append(spoken.claim)
    rejected = None if result.error is None else _rejected(result.record, result.error)
    table = render.TableInfo(result.record.players, words.theme)
    return "\n".join(render.replay_timeline(result.events, table, words, said=said, rejected=rejected))
