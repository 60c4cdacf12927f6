"""Shared helpers for the rule tests: rigged tables, scripted play and event filters.

Seats are 0-based: the checklist's P1 is seat 0. Every game here is rigged (roles, deck, first President,
reshuffle orders) so a test never waits for randomness to produce the position it needs.

A script passed to ``play`` mixes engine actions with *steps*: small functions of the current state that
return the action(s) to apply (``nominate(3)`` nominates seat 3 on behalf of whoever is the Presidential
Candidate now). Lists of steps are flattened, so ``govern(3, "F")`` can expand to a whole round.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

from moderator.engine import (
    Action,
    AnswerVeto,
    CallSpecialElection,
    CastVote,
    DiscardPolicy,
    EnactPolicy,
    Event,
    ExecutePlayer,
    GameState,
    InvestigateLoyalty,
    NominateChancellor,
    Phase,
    Policy,
    ProposeVeto,
    Role,
    apply,
    awaiting,
    eligible_chancellors,
    legal_actions,
    new_game,
    opening_events,
)

L, F = Policy.LIBERAL, Policy.FASCIST
LIB, FAS, HIT = Role.LIBERAL, Role.FASCIST, Role.HITLER

_ROLE_LETTERS = {"L": Role.LIBERAL, "F": Role.FASCIST, "H": Role.HITLER}

DEFAULT_ROLES = {
    5: "LLLFH",
    6: "LLLLFH",
    7: "LLLLFFH",
    8: "LLLLLFFH",
    9: "LLLLLFFFH",
    10: "LLLLLLFFFH",
}
"""Liberals first, then the fascists, Hitler in the last seat: the early seats are safe liberal governments."""

Step = Action | Callable[[GameState], "Step"] | Iterable["Step"] | None


def policies(cards: str | Iterable[Policy]) -> tuple[Policy, ...]:
    """``"FLF"`` -> (F, L, F)."""
    return tuple(Policy(c) for c in cards)


def roles_of(letters: str) -> tuple[Role, ...]:
    """``"LFH.."`` -> roles, one letter a seat."""
    return tuple(_ROLE_LETTERS[c] for c in letters)


def rigged(
    players: int,
    roles: str | None = None,
    deck: str = "",
    first: int = 0,
    *,
    liberal: int = 0,
    fascist: int = 0,
    tracker: int = 0,
    dead: Iterable[int] = (),
    reshuffles: Iterable[str] = (),
    seed: int = 0,
) -> GameState:
    """A game with the given roles, first President and draw pile, top first.

    ``deck`` is the top of the draw pile; the rest of the pile is filled with the remaining fascist, then
    liberal, policies. ``liberal``/``fascist``/``tracker``/``dead`` start the game from a position as if
    that many policies had already been enacted (they are taken out of the deck), the tracker stood there
    and those seats had been executed: every such position is reachable in a real game.
    """
    top = policies(deck)
    rest_l = 6 - liberal - top.count(L)
    rest_f = 11 - fascist - top.count(F)
    assert rest_l >= 0 and rest_f >= 0, "the rigged deck holds more cards than the box"
    draw = top + (F,) * rest_f + (L,) * rest_l
    assert len(draw) >= 3
    state = new_game(
        players,
        seed=seed,
        roles=roles_of(roles or DEFAULT_ROLES[players]),
        deck=draw + (L,) * liberal + (F,) * fascist,
        first_president=first,
        reshuffles=[policies(r) for r in reshuffles],
    )
    dead = tuple(dead)
    if liberal or fascist or tracker or dead:
        assert first not in dead
        state = state.replace(
            draw_pile=draw,
            liberal_policies=liberal,
            fascist_policies=fascist,
            election_tracker=tracker,
            alive=tuple(seat not in dead for seat in range(players)),
        )
    return state


def play(state: GameState, *steps: Step) -> tuple[GameState, list[Event]]:
    """Apply the actions and steps in order; the final state and every event, in order."""
    events: list[Event] = []
    for step in steps:
        state = _run(state, step, events)
    return state, events


def _run(state: GameState, step: Step, events: list[Event]) -> GameState:
    if step is None:
        return state
    if isinstance(step, Action):
        state, new = apply(state, step)
        events.extend(new)
        return state
    if callable(step):
        return _run(state, step(state), events)
    for inner in step:
        state = _run(state, inner, events)
    return state


# --- what a seat may do now ---------------------------------------------------------------------------------


def nominees(state: GameState, seat: int) -> set[int]:
    """Whom ``seat`` may nominate now: every legal action of theirs is a nomination."""
    found = set()
    for action in legal_actions(state, seat):
        assert isinstance(action, NominateChancellor), action
        found.add(action.chancellor)
    return found


def targets(state: GameState, seat: int) -> set[int]:
    """Whom ``seat`` may investigate, choose or execute now: every legal action of theirs is that power's."""
    found = set()
    for action in legal_actions(state, seat):
        assert isinstance(action, InvestigateLoyalty | CallSpecialElection | ExecutePlayer), action
        found.add(action.target)
    return found


# --- steps: actions on behalf of whoever holds the office now --------------------------------------------


def president(s: GameState) -> int:
    """The seat of the President (or Presidential Candidate) now; a step that needs one has one."""
    assert s.president is not None, "no President now"
    return s.president


def chancellor(s: GameState) -> int:
    """The seat of the Chancellor (or Chancellor nominee) now."""
    assert s.chancellor is not None, "no Chancellor now"
    return s.chancellor


def nominate(chancellor: int) -> Step:
    return lambda s: NominateChancellor(president(s), chancellor)


def vote(*ja: int) -> Step:
    """The given seats vote Ja, every other living seat Nein (in seat order)."""
    return lambda s: [CastVote(seat, seat in ja) for seat in range(s.players) if s.alive[seat]]


def all_vote(ja: bool) -> Step:
    return lambda s: [CastVote(seat, ja) for seat in range(s.players) if s.alive[seat]]


def discard(policy: str | Policy) -> Step:
    return lambda s: DiscardPolicy(president(s), Policy(policy))


def enact(policy: str | Policy) -> Step:
    return lambda s: EnactPolicy(chancellor(s), Policy(policy))


def propose_veto() -> Step:
    return lambda s: ProposeVeto(chancellor(s))


def answer_veto(accept: bool) -> Step:
    return lambda s: AnswerVeto(president(s), accept)


def investigate(target: int) -> Step:
    return lambda s: InvestigateLoyalty(president(s), target)


def special_election(target: int) -> Step:
    return lambda s: CallSpecialElection(president(s), target)


def execute(target: int) -> Step:
    return lambda s: ExecutePlayer(president(s), target)


def elect(chancellor: int | None = None) -> Step:
    """Nominate ``chancellor`` (default: the first eligible non-Hitler seat) and elect the government unanimously."""

    def step(s: GameState) -> Step:
        target = chancellor if chancellor is not None else _safe_chancellor(s)
        return [nominate(target), all_vote(True)]

    return step


def reject(chancellor: int | None = None) -> Step:
    """Nominate ``chancellor`` (default: the first eligible non-Hitler seat) and vote it down unanimously."""

    def step(s: GameState) -> Step:
        target = chancellor if chancellor is not None else _safe_chancellor(s)
        return [nominate(target), all_vote(False)]

    return step


def keep(policy: str | Policy) -> Step:
    """The President discards a card so that the Chancellor still holds ``policy`` (a different one if any)."""
    wanted = Policy(policy)

    def step(s: GameState) -> Step:
        assert wanted in s.hand, f"the President holds {s.hand}, not {wanted}"
        others = [p for p in s.hand if p is not wanted]
        return DiscardPolicy(president(s), others[0] if others else wanted)

    return step


def legislate(policy: str | Policy) -> Step:
    """The elected government passes ``policy``: the President keeps it, the Chancellor enacts it."""
    return [keep(policy), enact(policy)]


def govern(chancellor: int | None, policy: str | Policy) -> Step:
    """Elect a government with ``chancellor`` (None: the first eligible non-Hitler seat) and enact ``policy``."""

    def step(s: GameState) -> Step:
        target = chancellor if chancellor is not None else _safe_chancellor(s)
        return [elect(target), legislate(policy)]

    return step


def chaos() -> Step:
    """Three rejected governments in a row, from a tracker at 0."""
    return [reject(), reject(), reject()]


def _safe_chancellor(s: GameState) -> int:
    return next(seat for seat in eligible_chancellors(s) if s.roles[seat] is not Role.HITLER)


# --- looking at events ------------------------------------------------------------------------------------

E = TypeVar("E", bound=Event)


def of_type(events: Iterable[Event], cls: type[E]) -> list[E]:
    return [e for e in events if isinstance(e, cls)]


def one(events: Iterable[Event], cls: type[E]) -> E:
    found = of_type(events, cls)
    assert len(found) == 1, f"expected one {cls.__name__}, got {found}"
    return found[0]


def kinds(events: Iterable[Event]) -> list[str]:
    return [type(e).__name__ for e in events]


def public(events: Iterable[Event]) -> list[Event]:
    return [e for e in events if e.audience.everyone]


def values(event: Event) -> list[object]:
    """Every field value of an event, flattened one level into tuples."""
    out: list[object] = []
    for field in dataclasses.fields(event):
        value = getattr(event, field.name)
        if isinstance(value, tuple):
            for item in value:
                out.extend(item if isinstance(item, tuple) else (item,))
        else:
            out.append(value)
    return out


# --- random legal play, for invariants ---------------------------------------------------------------------


def random_game(players: int, seed: int) -> Iterator[tuple[GameState | None, GameState, tuple[Event, ...]]]:
    """Every step of one random legal game (seeded, so always the same game): (before, after, events).

    The first step has ``before`` None and the opening events.
    """
    state = new_game(players, seed=seed)
    rng = random.Random(seed)
    yield None, state, opening_events(state)
    while state.phase is not Phase.GAME_OVER:
        seat = rng.choice(awaiting(state))
        action = rng.choice(legal_actions(state, seat))
        after, events = apply(state, action)
        yield state, after, events
        state = after


def card_count(state: GameState) -> tuple[int, int]:
    """(liberal, fascist) over draw pile, discard pile, hand and the tracks: always (6, 11)."""
    cards = state.draw_pile + state.discard_pile + state.hand
    return (
        cards.count(L) + state.liberal_policies,
        cards.count(F) + state.fascist_policies,
    )


_GAMES: dict[tuple[int, int], list[tuple[GameState | None, GameState, tuple[Event, ...]]]] = {}


def random_games(count: int = 204) -> Iterator[list[tuple[GameState | None, GameState, tuple[Event, ...]]]]:
    """``count`` seeded random legal games spread over 5-10 players, each as the list of its steps (cached)."""
    for i in range(count):
        key = (5 + i % 6, i)
        if key not in _GAMES:
            _GAMES[key] = list(random_game(*key))
        yield _GAMES[key]


# --- a long scripted game: the checklist's "veto at tracker 2 with a small deck" (B18 #3) ------------------

VETO_ROLES = "LLLLFFH"
VETO_DECK = "F" + "FFL" * 4 + "LLF" + "F"
"""Chaos card, four sessions that enact F2-F5, the vetoed hand, and one leftover card (F)."""
VETO_RESHUFFLE = "LLLLLLFFFFFF"
"""The reshuffle after the veto: the leftover F and 11 discards; an L on top."""


def veto_at_tracker_two_with_small_deck() -> tuple[GameState, list[Event]]:
    """7 players, real play up to the moment the Chancellor may veto with the tracker at 2 and 1 card left.

    Chaos enacts F1; P4/P1 enact F2 (P4 investigates P5); P5/P2 enact F3 (P5 calls a special election on
    P6); P6/P1 enact F4 (P6 executes P2); P6/P3 enact F5 (P6 executes P4); P7 and P1 are rejected; P3/P1 are
    elected and P3 discards an L. The draw pile now holds 1 card (an F) and the Chancellor (P1) holds L, F.
    """
    state = rigged(7, VETO_ROLES, VETO_DECK, first=0, reshuffles=[VETO_RESHUFFLE])
    state, events = play(
        state,
        chaos(),
        govern(0, "F"),
        investigate(4),
        govern(1, "F"),
        special_election(5),
        govern(0, "F"),
        execute(1),
        govern(2, "F"),
        execute(3),
        reject(4),
        reject(4),
        elect(0),
        discard("L"),
    )
    assert state.phase is Phase.LEGISLATIVE_CHANCELLOR and state.president == 2 and state.chancellor == 0
    assert state.fascist_policies == 5 and state.election_tracker == 2 and len(state.draw_pile) == 1
    return state, events
