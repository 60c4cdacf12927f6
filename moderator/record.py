"""Game records (``moderator.game-record/1``, docs/game-record.md): parse, validate, replay, summarise, export.

A record names players; the engine numbers seats. This module is the only place that maps one to the other
for records. Everything is checked before the first action is applied: a malformed record raises
``RecordError`` (one line, exit status 2); an action the rules reject stops the replay (exit status 1).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, assert_never

from . import claims as claimed
from . import moves
from .claims import Accusation, ClaimError, Clearance, InvestigationClaim, Office, PeekClaim, SessionClaim, Spoken
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
    power_for,
)
from .engine.events import (
    ChancellorNominated,
    ChancellorNotHitler,
    DeckReshuffled,
    DrawPileShuffled,
    ElectionDecided,
    ElectionTrackerAdvanced,
    GameEnded,
    GameStarted,
    LegislativeSessionStarted,
    LoyaltyInvestigated,
    PartyMembershipSeen,
    PlayerExecuted,
    PoliciesDrawn,
    PoliciesHandedOver,
    PoliciesReceived,
    PolicyDiscarded,
    PolicyEnacted,
    PolicyPeekUsed,
    PresidentialCandidateChosen,
    PresidentialPowerGranted,
    RoleDealt,
    SpecialElectionCalled,
    TermLimitsCleared,
    TopPoliciesSeen,
    VetoAnswered,
    VetoProposed,
    VetoUnlocked,
    VoteCast,
    VoteProgressed,
)
from .engine.types import MAX_PLAYERS, MIN_PLAYERS, POLICY_DECK, ROLE_COUNTS, Party, Seat, WinReason
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
    """A sentence for people: who tried to do what, and the rule it breaks.

    For example ``Bob cannot investigate Dee: No player may be investigated twice in the same game.``
    """
    action = record.actions[error.index]
    names = record.players
    return f"{names[action.seat]} cannot {_doing(names, action)}: {error.violation.rule}"


def _doing(names: Sequence[str], action: Action) -> str:
    """What an action tries to do, as a verb phrase: ``nominate Cy as Chancellor``."""
    m = moves.move(action)
    target = "" if m.target is None else names[m.target]
    match m.kind:
        case MoveKind.NOMINATE:
            return f"nominate {target} as Chancellor"
        case MoveKind.VOTE:
            return f"vote {'ja' if m.yes else 'nein'}"
        case MoveKind.DISCARD | MoveKind.ENACT:
            assert m.card is not None
            return f"{m.kind.value} {m.card.value}"
        case MoveKind.VETO:
            return "propose a veto"
        case MoveKind.VETO_REPLY:
            return f"{'accept' if m.yes else 'refuse'} the veto"
        case MoveKind.INVESTIGATE:
            return f"investigate {target}"
        case MoveKind.SPECIAL_ELECTION:
            return f"call a special election on {target}"
        case MoveKind.EXECUTE:
            return f"execute {target}"
        case _:
            assert_never(m.kind)


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


def timeline(result: Replay) -> str:
    """The game as a readable timeline for the table: the after-game truth, one event per line, by round.

    Every event is told, private ones too (roles, hands, discards, investigation results, peeks, reshuffled
    orders): this is for reading once the game is over. A vote's anonymous progress is folded into the line
    of the vote it follows. The record's claims come where they were said, each as a person's words in quotes
    (``Ann claims: "I drew F, F, L and handed over F, L."``), never as facts. If the replay stopped on a
    rejected action, the last line says which and why.
    """
    return "\n".join(_Timeline(result.record.players).lines(result))


def claim_line(names: Sequence[str], spoken: Spoken) -> str:
    """A claim as the timeline tells it: who claims what, in their words (quoted: it may be a lie)."""
    claim = spoken.claim
    match claim:
        case SessionClaim(office=Office.PRESIDENT, hand=held, passed=passed):
            words = f"I drew {_cards_text(held)} and handed over {_cards_text(passed)}."
        case SessionClaim(hand=held, passed=passed):
            done = f"enacted {_cards_text(passed)}" if passed else "vetoed them"
            words = f"I received {_cards_text(held)} and {done}."
        case InvestigationClaim(target=target, party=party):
            words = f"{names[target]} is a member of the {party.value} party."
        case PeekClaim(policies=policies):
            words = f"The top three policies are {_cards_text(policies)} (top first)."
        case Accusation(target=target, sure=sure):
            words = f"{names[target]} is a fascist." if sure else f"I do not trust {names[target]}."
        case Clearance(target=target, sure=sure):
            words = f"{names[target]} is a liberal." if sure else f"I trust {names[target]}."
        case _:
            assert_never(claim)
    return f'{names[claim.speaker]} claims: "{words}"'


_WINS = {
    (Party.LIBERAL, WinReason.POLICIES): "the liberals win: five liberal policies are enacted",
    (Party.FASCIST, WinReason.POLICIES): "the fascists win: six fascist policies are enacted",
    (Party.LIBERAL, WinReason.HITLER_EXECUTED): "the liberals win: Hitler was executed",
    (Party.FASCIST, WinReason.HITLER_ELECTED): "the fascists win: Hitler was elected Chancellor",
}
_POLICY_NAMES = {Policy.LIBERAL: "liberal", Policy.FASCIST: "fascist"}


def _cards_text(policies: Sequence[Policy]) -> str:
    return ", ".join(p.value for p in policies)


class _Timeline:
    """Renders events into lines; remembers what a line needs that its event does not say."""

    def __init__(self, names: Sequence[str]) -> None:
        self.names = names
        self.out: list[str] = []
        self.round = 0
        self.players = len(names)
        self.roles: tuple[Role, ...] = ()
        self.chancellor: Seat | None = None  # of the session under way
        self.tracker = 0
        self.veto_refused = False

    def lines(self, result: Replay) -> list[str]:
        said: dict[int, list[Spoken]] = {}
        for spoken in result.claims():
            # Said after ``step`` actions: told after the results of the last of them, before the next round
            # they may have started (a claim about a session belongs to that session's round).
            start = result.marks[spoken.step - 1] if spoken.step else 0
            end = result.marks[spoken.step]
            turn = (i for i in range(start, end) if isinstance(result.events[i], PresidentialCandidateChosen))
            said.setdefault(next(turn, end), []).append(spoken)
        for count, event in enumerate(result.events, start=1):
            self.event(event)
            for spoken in said.get(count, ()):
                self.say(claim_line(self.names, spoken))
        if result.error is not None:
            self.out.append("")
            self.out.append(
                f"Action {result.error.index} rejected: {error_message(result.record, result.error)}"
            )
        return self.out

    def say(self, line: str) -> None:
        self.out.append(f"  {line}" if self.round else line)

    def event(self, event: Event) -> None:
        n = self.names
        match event:
            case GameStarted(players=players):
                self.players = players
                self.out.append(f"A game of Secret Hitler for {players} players. Seats and roles:")
            case RoleDealt(seat=seat, role=role, known=known):
                self.roles += (role,)
                knows = ", ".join(f"{n[other]} ({r.value})" for other, r in known)
                knowing = f"; knows {knows}" if knows else ""
                self.out.append(f"  {seat + 1}. {n[seat]}: {role.value}{knowing}")
            case PresidentialCandidateChosen(president=president, special_election=special):
                self.round += 1
                self.out.append("")
                how = " (special election)" if special else ""
                self.out.append(f"Round {self.round}: {n[president]} is the Presidential Candidate{how}.")
            case ChancellorNominated(president=president, chancellor=chancellor):
                self.say(f"{n[president]} nominates {n[chancellor]} as Chancellor.")
            case VoteCast(seat=seat, ja=ja, changed=changed):
                vote = "ja" if ja else "nein"
                if changed:
                    self.say(f"{n[seat]} changes their vote to {vote}.")
                else:
                    self.say(f"{n[seat]} votes {vote}.")
            case VoteProgressed(votes_cast=cast, voters=voters):
                if self.out and self.out[-1].endswith("."):
                    self.out[-1] = f"{self.out[-1][:-1]} ({cast} of {voters} have voted)."
                else:
                    self.say(f"{cast} of {voters} have voted.")
            case ElectionDecided(votes=votes, elected=elected):
                yes = sum(1 for _, v in votes if v)
                each = ", ".join(f"{n[seat]} {'ja' if v else 'nein'}" for seat, v in votes)
                verdict = "elected" if elected else "rejected"
                self.say(f"Votes: {each}. The government is {verdict} ({yes} ja, {len(votes) - yes} nein).")
            case ElectionTrackerAdvanced(election_tracker=tracker):
                self.tracker = tracker
                chaos = ": the country is thrown into chaos" if tracker >= 3 else ""
                self.say(f"The election tracker moves to {tracker}{chaos}.")
            case ChancellorNotHitler(chancellor=chancellor):
                self.say(f"{n[chancellor]} is not Hitler (three or more fascist policies are enacted).")
            case TermLimitsCleared():
                self.say("Term limits are forgotten until the next successful election.")
            case LegislativeSessionStarted(president=president, chancellor=chancellor, veto_unlocked=veto):
                self.chancellor = chancellor
                self.veto_refused = False
                unlocked = " (veto power unlocked)" if veto else ""
                government = f"President {n[president]}, Chancellor {n[chancellor]}"
                self.say(f"Legislative session: {government}{unlocked}.")
            case PoliciesDrawn(president=president, policies=policies):
                self.say(f"{n[president]} draws {_cards_text(policies)}.")
            case PolicyDiscarded(seat=seat, policy=policy):
                self.say(f"{n[seat]} discards {policy.value}.")
            case PoliciesHandedOver(president=president, chancellor=chancellor):
                self.say(f"{n[president]} hands two policies to {n[chancellor]}.")
            case PoliciesReceived(chancellor=chancellor, policies=policies, veto_allowed=veto):
                cards = _cards_text(policies)
                if self.veto_refused:
                    self.say(f"{n[chancellor]} keeps {cards} and must enact one.")
                else:
                    may = " and may propose a veto" if veto else ""
                    self.say(f"{n[chancellor]} receives {cards}{may}.")
            case VetoProposed(chancellor=chancellor):
                self.say(f"{n[chancellor]} proposes to veto this agenda.")
            case VetoAnswered(president=president, accepted=accepted):
                if accepted:
                    self.say(f"{n[president]} accepts the veto: both policies are discarded.")
                else:
                    self.veto_refused = True
                    self.say(f"{n[president]} refuses the veto.")
            case PolicyEnacted(
                policy=policy, by_chaos=chaos, liberal_policies=liberal, fascist_policies=fascist
            ):
                track = f"(liberal {liberal}, fascist {fascist})"
                reset = f"; the election tracker goes back from {self.tracker} to 0" if self.tracker else ""
                self.tracker = 0
                what = f"a {_POLICY_NAMES[policy]} policy"
                if chaos:
                    power = power_for(self.players, fascist) if policy is Policy.FASCIST else None
                    ignored = f"; its power ({power.value.replace('_', ' ')}) is ignored" if power else ""
                    self.say(f"Chaos: the top policy is enacted, {what} {track}{reset}{ignored}.")
                else:
                    who = n[self.chancellor] if self.chancellor is not None else "The government"
                    self.say(f"{who} enacts {what} {track}{reset}.")
                self.chancellor = None
            case VetoUnlocked():
                self.say("Veto power is unlocked for every later legislative session.")
            case DeckReshuffled(draw_pile=size):
                self.say(
                    "Fewer than three policies left: the draw and discard piles are shuffled into a new draw "
                    f"pile of {size}."
                )
            case DrawPileShuffled(order=order):
                self.say(f"The new draw pile, top first: {''.join(p.value for p in order)}.")
            case PresidentialPowerGranted(president=president, power=power):
                self.say(f"{n[president]} gains a presidential power: {power.value.replace('_', ' ')}.")
            case LoyaltyInvestigated(president=president, target=target):
                self.say(f"{n[president]} investigates {n[target]}'s loyalty.")
            case PartyMembershipSeen(president=president, target=target, party=party):
                self.say(f"{n[president]} sees that {n[target]} is a member of the {party.value} party.")
            case SpecialElectionCalled(president=president, target=target):
                next_one = f"{n[target]} is the next Presidential Candidate"
                self.say(f"{n[president]} calls a special election: {next_one}.")
            case PolicyPeekUsed(president=president):
                self.say(f"{n[president]} peeks at the top three policies.")
            case TopPoliciesSeen(president=president, policies=policies):
                self.say(f"{n[president]} sees {_cards_text(policies)} (top first).")
            case PlayerExecuted(president=president, target=target):
                executed = self.roles[target] if target < len(self.roles) else None
                if executed is Role.HITLER:
                    self.say(f"{n[president]} executes {n[target]}, who was Hitler.")
                elif executed is None:
                    self.say(f"{n[president]} executes {n[target]}.")
                else:
                    self.say(f"{n[president]} executes {n[target]}, who was not Hitler ({executed.value}).")
            case GameEnded(winner=winner, reason=reason):
                self.out.append("")
                how = _WINS.get((winner, reason), f"the {winner.value}s win ({reason.value})")
                self.out.append(f"Game over: {how}.")
            case _:
                self.say(f"{event.kind}.")
