"""The rules: ``apply(state, action) -> (state, events)``, ``legal_actions`` and who owes a decision.

Rulings follow the project's rules checklist (docs/rules.md). ``apply`` works on a shallow copy of the state
and raises a ``RuleViolation`` before anything observable changes, so a rejected action changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields
from functools import cache, lru_cache, partial
from typing import assert_never

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
from .errors import (
    AlreadyInvestigated,
    CannotNominateSelf,
    CannotTargetSelf,
    ExecutedPlayersCannotAct,
    GameIsOver,
    IneligibleChancellor,
    InvalidReshuffle,
    NotTheChancellor,
    NotThePresident,
    OutOfTurn,
    PolicyNotInHand,
    TargetIsExecuted,
    UnknownSeat,
    VetoAlreadyRefused,
    VetoNotUnlocked,
)
from .events import (
    ChancellorNominated,
    ChancellorNotHitler,
    DeckReshuffled,
    DrawPileShuffled,
    ElectionDecided,
    ElectionTrackerAdvanced,
    Event,
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
from .state import Core, GameState, History, Session, known_roles, shuffled
from .types import (
    CHAOS_AT,
    FASCIST_POLICIES_TO_WIN,
    FEW_ALIVE,
    HITLER_ZONE,
    LIBERAL_POLICIES_TO_WIN,
    MAX_PLAYERS,
    VETO_ZONE,
    Party,
    Phase,
    Policy,
    Power,
    Role,
    Seat,
    WinReason,
    power_for,
)

# Events are immutable values, so the frequent ones are made once per distinct content and then shared:
# building a frozen dataclass costs more than a dictionary lookup.
_chancellor_nominated = cache(ChancellorNominated)
_election_tracker_advanced = cache(ElectionTrackerAdvanced)
_presidential_candidate_chosen = cache(PresidentialCandidateChosen)
_legislative_session_started = cache(LegislativeSessionStarted)
_policies_drawn = cache(PoliciesDrawn)
_policy_discarded = cache(PolicyDiscarded)
_policies_handed_over = cache(PoliciesHandedOver)
_policies_received = cache(PoliciesReceived)
_policy_enacted_event = cache(PolicyEnacted)
_chancellor_not_hitler = cache(ChancellorNotHitler)
_policy_peek_used = cache(PolicyPeekUsed)
_top_policies_seen = cache(TopPoliciesSeen)
_presidential_power_granted = cache(PresidentialPowerGranted)
_veto_proposed = cache(VetoProposed)
_veto_answered = cache(VetoAnswered)
_deck_reshuffled = cache(DeckReshuffled)
_loyalty_investigated = cache(LoyaltyInvestigated)
_party_membership_seen = cache(PartyMembershipSeen)
_special_election_called = cache(SpecialElectionCalled)
_player_executed = cache(PlayerExecuted)
_TERM_LIMITS_CLEARED = TermLimitsCleared()
_VETO_UNLOCKED = VetoUnlocked()
# Sessions are immutable values too, and a table meets few distinct ones (seats, cards, outcome).
_session = cache(Session)

_new = object.__new__
_F, _L = Policy.FASCIST, Policy.LIBERAL
_HITLER = Role.HITLER
_POLICY_PEEK = Power.POLICY_PEEK
# Enum member lookups cost about 150 ns each in CPython 3.11; the hot paths use these module aliases.
_PHASE_NOMINATION = Phase.NOMINATION
_PHASE_ELECTION = Phase.ELECTION
_PHASE_LEGISLATIVE_PRESIDENT = Phase.LEGISLATIVE_PRESIDENT
_PHASE_LEGISLATIVE_CHANCELLOR = Phase.LEGISLATIVE_CHANCELLOR
_PHASE_VETO = Phase.VETO
_PHASE_INVESTIGATE = Phase.INVESTIGATE
_PHASE_SPECIAL_ELECTION = Phase.SPECIAL_ELECTION
_PHASE_EXECUTION = Phase.EXECUTION
_PHASE_GAME_OVER = Phase.GAME_OVER


# The slot descriptors' setters of the frozen History, by name.
_SET_SESSIONS = History.__dict__["sessions"].__set__
_SET_INVESTIGATIONS = History.__dict__["investigations"].__set__
_SET_PEEKS = History.__dict__["peeks"].__set__
_SET_NOT_HITLER = History.__dict__["not_hitler"].__set__
_SET_RESHUFFLES = History.__dict__["reshuffles"].__set__


def _history(
    sessions: tuple[Session, ...],
    investigations: tuple[tuple[Seat, Seat], ...],
    peeks: tuple[tuple[Seat, tuple[Policy, ...]], ...],
    not_hitler: tuple[Seat, ...],
    reshuffles: tuple[tuple[Policy, ...], ...],
) -> History:
    # History(...) itself: a frozen dataclass's __init__ sets each slot through object.__setattr__, which
    # costs nearly twice as much as these slot setters. The result is the same frozen value.
    h = _new(History)
    _SET_SESSIONS(h, sessions)
    _SET_INVESTIGATIONS(h, investigations)
    _SET_PEEKS(h, peeks)
    _SET_NOT_HITLER(h, not_hitler)
    _SET_RESHUFFLES(h, reshuffles)
    return h


def _make_copy() -> Callable[[Core], Core]:
    # A shallow copy that names every slot: about 0.4 us against 3 us for dataclasses.replace or copy.copy.
    # Generated from the field list (as dataclasses generates __init__) so a new field cannot be forgotten.
    names = [f.name for f in fields(Core)]
    body = "".join(f"    c.{n} = s.{n}\n" for n in names)
    namespace: dict[str, object] = {"_new": _new, "Core": Core}
    exec(f"def _copy(s):\n    c = _new(Core)\n{body}    return c\n", namespace)
    return namespace["_copy"]  # type: ignore[return-value]


_copy = _make_copy()


# --- the public API -------------------------------------------------------------------------------------


def opening_events(state: GameState) -> tuple[Event, ...]:
    """The events of the deal: the game started, each seat's role (to that seat only), the first candidate."""
    roles = state.roles
    dealt = tuple(RoleDealt(seat, roles[seat], known_roles(roles, seat)) for seat in range(state.players))
    assert state.president is not None
    return (
        GameStarted(state.players),
        *dealt,
        _presidential_candidate_chosen(state.president, False),
    )


def apply(state: GameState, action: Action) -> tuple[GameState, tuple[Event, ...]]:
    """The state after ``action`` and what happened; raises a ``RuleViolation`` and changes nothing if illegal."""
    core = state.core
    seat = action.seat
    phase = core.phase
    if (
        action.__class__ is CastVote and phase is _PHASE_ELECTION and 0 <= seat < core.players and core.alive[seat]
    ):
        # Most actions are votes, and a vote that is not the last changes only the ballots: the new state
        # shares the core. The last vote decides the election and takes the general path below.
        bit = 1 << seat
        unvoted = state.unvoted
        left = unvoted & ~bit
        if left:
            new = _new(GameState)
            new.core = core
            new.ja = state.ja | bit if action.ja else state.ja & ~bit
            new.unvoted = left
            new.step = state.step + 1
            voters = core.alive.count(True)
            return new, (
                _VOTE_CAST[seat][action.ja][not unvoted & bit],
                _VOTE_PROGRESSED[voters - left.bit_count()][voters],
            )
    if phase is _PHASE_GAME_OVER:
        raise GameIsOver(seat, phase)
    if not 0 <= seat < core.players:
        raise UnknownSeat(seat, phase)
    if not core.alive[seat]:
        raise ExecutedPlayersCannotAct(seat, phase)
    s = _copy(core)
    new = _new(GameState)
    new.core = s
    new.ja = state.ja
    new.unvoted = state.unvoted
    new.step = state.step + 1
    events: list[Event] = []
    match action:
        case CastVote():
            _cast_vote(new, s, action, events)
        case NominateChancellor():
            _nominate(new, s, action, events)
        case DiscardPolicy():
            _discard(s, action, events)
        case EnactPolicy():
            _enact(s, action, events)
        case ProposeVeto():
            _propose_veto(s, action, events)
        case AnswerVeto():
            _answer_veto(s, action, events)
        case InvestigateLoyalty():
            _investigate(s, action, events)
        case CallSpecialElection():
            _special_election(s, action, events)
        case ExecutePlayer():
            _execute(s, action, events)
        case _:
            assert_never(action)
    return new, tuple(events)


def awaiting(state: GameState) -> tuple[Seat, ...]:
    """The seats that owe a decision now (several during a vote; none once the game is over)."""
    core = state.core
    phase = core.phase
    if phase is _PHASE_ELECTION:
        return _SEATS_IN_MASK[state.unvoted]
    if phase is _PHASE_LEGISLATIVE_CHANCELLOR:
        assert core.chancellor is not None
        return (core.chancellor,)
    if phase is _PHASE_GAME_OVER:
        return ()
    assert core.president is not None
    return (core.president,)


def eligible_chancellors(state: GameState) -> tuple[Seat, ...]:
    """The players the Presidential Candidate may nominate: living, not themselves, not term-limited."""
    s = state.core
    return _eligible_chancellors(s.alive, s.president, s.last_president, s.last_chancellor)


# The hot paths below avoid comprehensions and generator expressions that read local variables: those
# variables become cells, and every call of the function then allocates and frees one object per cell.


@lru_cache(maxsize=1 << 16)
def _eligible_chancellors(
    alive: tuple[bool, ...], president: Seat | None, last_president: Seat | None, last_chancellor: Seat | None
) -> tuple[Seat, ...]:
    # Cached: a game meets few distinct term-limit positions, and this runs at every nomination.
    if alive.count(True) <= FEW_ALIVE:
        # With five or fewer players alive only the last elected Chancellor is term-limited.
        last_president = None
    eligible = []
    for seat, living in enumerate(alive):
        if living and seat != president and seat != last_chancellor and seat != last_president:
            eligible.append(seat)
    return tuple(eligible)


@lru_cache(maxsize=1 << 16)
def _nominations(alive: tuple[bool, ...], president: Seat, last_president: Seat | None,
                 last_chancellor: Seat | None) -> tuple[NominateChancellor, ...]:
    eligible = _eligible_chancellors(alive, president, last_president, last_chancellor)
    return tuple(map(_NOMINATE[president].__getitem__, eligible))


def legal_actions(state: GameState, seat: Seat) -> tuple[Action, ...]:
    """Every action ``apply`` accepts from this seat now; empty if the seat owes nothing.

    A voter who has voted may still change the vote until the last vote is in, so both votes stay legal.
    """
    s = state.core
    phase = s.phase
    if phase is _PHASE_GAME_OVER or not 0 <= seat < s.players or not s.alive[seat]:
        return ()
    if phase is _PHASE_ELECTION:
        return _VOTES[seat]
    if phase is _PHASE_LEGISLATIVE_CHANCELLOR:
        if seat != s.chancellor:
            return ()
        hand = s.hand
        if s.fascist_policies >= VETO_ZONE and not s.veto_refused:
            return _ENACT_OR_VETO[seat][_F in hand][_L in hand]
        return _ENACT[seat][_F in hand][_L in hand]
    if seat != s.president:
        return ()
    if phase is _PHASE_NOMINATION:
        return _nominations(s.alive, seat, s.last_president, s.last_chancellor)
    if phase is _PHASE_LEGISLATIVE_PRESIDENT:
        hand = s.hand
        return _DISCARD[seat][_F in hand][_L in hand]
    if phase is _PHASE_VETO:
        return _ANSWER_VETO[seat]
    if phase is _PHASE_INVESTIGATE:
        targets = _others_alive(s, seat)
        for _, target in s.history.investigations:
            if target in targets:
                targets.remove(target)
        return tuple(map(_INVESTIGATE_LOYALTY[seat].__getitem__, targets))
    if phase is _PHASE_SPECIAL_ELECTION:
        return tuple(map(_CALL_SPECIAL_ELECTION[seat].__getitem__, _others_alive(s, seat)))
    if phase is _PHASE_EXECUTION:
        return tuple(map(_EXECUTE[seat].__getitem__, _others_alive(s, seat)))
    return ()


# --- legal-action tables (actions are immutable, so one instance each serves every game) ---------------


def _by_cards(
    make: Callable[[Policy], Action], extra: tuple[Action, ...] = ()
) -> tuple[tuple[tuple[Action, ...], ...], ...]:
    # Indexed [hand holds F][hand holds L]; two policies of one kind are the same choice, F first.
    return (
        ((), (make(_L),) + extra),
        ((make(_F),) + extra, (make(_F), make(_L)) + extra),
    )


_SEATS = range(MAX_PLAYERS)
_VOTES = tuple((CastVote(s, True), CastVote(s, False)) for s in _SEATS)
_NOMINATE = tuple(tuple(NominateChancellor(s, t) for t in _SEATS) for s in _SEATS)
_DISCARD = tuple(_by_cards(partial(DiscardPolicy, s)) for s in _SEATS)
_ENACT = tuple(_by_cards(partial(EnactPolicy, s)) for s in _SEATS)
_ENACT_OR_VETO = tuple(_by_cards(partial(EnactPolicy, s), (ProposeVeto(s),)) for s in _SEATS)
_ANSWER_VETO = tuple((AnswerVeto(s, True), AnswerVeto(s, False)) for s in _SEATS)
_INVESTIGATE_LOYALTY = tuple(tuple(InvestigateLoyalty(s, t) for t in _SEATS) for s in _SEATS)
_CALL_SPECIAL_ELECTION = tuple(tuple(CallSpecialElection(s, t) for t in _SEATS) for s in _SEATS)
_EXECUTE = tuple(tuple(ExecutePlayer(s, t) for t in _SEATS) for s in _SEATS)


def _others_alive(s: Core, seat: Seat) -> list[Seat]:
    others = []
    for other, living in enumerate(s.alive):
        if living and other != seat:
            others.append(other)
    return others


# --- elections ------------------------------------------------------------------------------------------


def _nominate(state: GameState, s: Core, action: NominateChancellor, events: list[Event]) -> None:
    """The Presidential Candidate nominates any other living, eligible player as Chancellor Candidate."""
    if s.phase is not _PHASE_NOMINATION:
        raise OutOfTurn(action.seat, s.phase)
    if action.seat != s.president:
        raise NotThePresident(action.seat, s.phase)
    target = action.chancellor
    _check_target(s, action.seat, target, CannotNominateSelf)
    # The same test as eligible_chancellors, for one seat.
    if target == s.last_chancellor or (target == s.last_president and s.alive.count(True) > FEW_ALIVE):
        raise IneligibleChancellor(action.seat, s.phase)
    s.chancellor = target
    s.phase = _PHASE_ELECTION
    state.ja = 0
    state.unvoted = _ALIVE_MASK[s.alive]
    events.append(_chancellor_nominated(action.seat, target))


def _cast_vote(state: GameState, s: Core, action: CastVote, events: list[Event]) -> None:
    """Every living player votes; a vote may be changed until the last vote is in."""
    if s.phase is not _PHASE_ELECTION:
        raise OutOfTurn(action.seat, s.phase)
    seat, ja = action.seat, action.ja
    bit = 1 << seat
    # A living seat has voted once its bit is out of the unvoted mask.
    changed = not state.unvoted & bit
    state.ja = state.ja | bit if ja else state.ja & ~bit
    events.append(_VOTE_CAST[seat][ja][changed])
    unvoted = state.unvoted = state.unvoted & ~bit
    if unvoted:
        voters = s.alive.count(True)
        events.append(_VOTE_PROGRESSED[voters - unvoted.bit_count()][voters])
    else:
        _decide_election(state, s, events)


# Votes are most of a game's actions; their events are immutable, so they are made once.
_VOTE_CAST = tuple(
    {ja: {changed: VoteCast(s, ja, changed) for changed in (False, True)} for ja in (False, True)}
    for s in range(MAX_PLAYERS)
)
_VOTE_PROGRESSED = tuple(
    tuple(VoteProgressed(cast, voters) for voters in range(MAX_PLAYERS + 1)) for cast in range(MAX_PLAYERS + 1)
)


def _decide_election(state: GameState, s: Core, events: list[Event]) -> None:
    """A strict majority of Ja among the living elects; a tie fails."""
    president, chancellor = s.president, s.chancellor
    assert president is not None and chancellor is not None
    decided = _election_decided(president, chancellor, _ALIVE_MASK[s.alive], state.ja)
    elected = decided.elected
    events.append(decided)
    state.ja = 0
    if not elected:
        _advance_election_tracker(s, events)
        return
    s.last_president, s.last_chancellor = president, chancellor
    if s.fascist_policies >= HITLER_ZONE:
        # The Hitler check runs at election, before any card is drawn.
        if s.roles[chancellor] is _HITLER:
            _end(s, events, Party.FASCIST, WinReason.HITLER_ELECTED)
            return
        h = s.history
        if chancellor not in h.not_hitler:  # elected again, still the one fact: each seat is listed once
            s.history = _history(h.sessions, h.investigations, h.peeks, h.not_hitler + (chancellor,), h.reshuffles)
        events.append(_chancellor_not_hitler(chancellor))
    draw = s.draw_pile
    assert len(draw) >= 3, "the reshuffle rule keeps three cards in the draw pile"
    s.hand = draw[:3]
    s.draw_pile = draw[3:]
    s.president_discard = None
    s.veto_refused = False
    s.phase = _PHASE_LEGISLATIVE_PRESIDENT
    events.append(_legislative_session_started(president, chancellor, s.fascist_policies >= VETO_ZONE))
    events.append(_policies_drawn(president, s.hand))


@lru_cache(maxsize=1 << 16)
def _election_decided(president: Seat, chancellor: Seat, voters: int, ja: int) -> ElectionDecided:
    # Every living seat (a bit of ``voters``) has voted, and only living seats vote. Cached: the event is an
    # immutable value, and building a frozen dataclass costs more than the lookup.
    ballots = []
    for seat in _SEATS_IN_MASK[voters]:
        ballots.append((seat, ja >> seat & 1 == 1))
    return ElectionDecided(president, chancellor, tuple(ballots), ja.bit_count() * 2 > voters.bit_count())


_SEATS_IN_MASK: tuple[tuple[Seat, ...], ...] = tuple(
    tuple(seat for seat in range(MAX_PLAYERS) if mask >> seat & 1) for mask in range(1 << MAX_PLAYERS)
)
"""The seats whose bits are set, for every mask: who still owes a vote, without a loop per call."""
_ALIVE_MASK: dict[tuple[bool, ...], int] = {
    tuple(mask >> seat & 1 == 1 for seat in range(players)): mask
    for players in range(MAX_PLAYERS + 1)
    for mask in range(1 << players)
}
"""The living seats as a bit mask (bit i: seat i), for every ``alive`` tuple."""


def _advance_election_tracker(s: Core, events: list[Event]) -> None:
    """A rejected or vetoed government advances the tracker; the third in a row enacts the top policy."""
    s.election_tracker += 1
    events.append(_election_tracker_advanced(s.election_tracker))
    if s.election_tracker >= CHAOS_AT:
        draw = s.draw_pile
        s.draw_pile = draw[1:]
        # Chaos: term limits are forgotten until the next successful election.
        s.last_president = s.last_chancellor = None
        if not _policy_enacted(s, events, draw[0], True):
            return
        events.append(_TERM_LIMITS_CLEARED)
    _next_presidency(s, events)


# --- the legislative session ----------------------------------------------------------------------------


def _discard(s: Core, action: DiscardPolicy, events: list[Event]) -> None:
    """The President discards one of three policies in secret and hands the other two to the Chancellor."""
    if s.phase is not _PHASE_LEGISLATIVE_PRESIDENT:
        raise OutOfTurn(action.seat, s.phase)
    if action.seat != s.president:
        raise NotThePresident(action.seat, s.phase)
    hand = s.hand
    if action.policy not in hand:
        raise PolicyNotInHand(action.seat, s.phase)
    i = hand.index(action.policy)
    policy = hand[i]  # the member itself, as in _enact
    # The Chancellor gets the two cards in a fixed order, so their order carries no signal.
    s.hand = tuple(sorted(hand[:i] + hand[i + 1 :]))
    s.discard_pile += (policy,)
    s.president_discard = policy
    s.phase = _PHASE_LEGISLATIVE_CHANCELLOR
    chancellor = s.chancellor
    assert chancellor is not None
    events.append(_policy_discarded(action.seat, policy))
    events.append(_policies_handed_over(action.seat, chancellor))
    events.append(_policies_received(chancellor, s.hand, s.fascist_policies >= VETO_ZONE))


def _enact(s: Core, action: EnactPolicy, events: list[Event]) -> None:
    """The Chancellor enacts one of the two policies and discards the other."""
    if s.phase is not _PHASE_LEGISLATIVE_CHANCELLOR:
        raise OutOfTurn(action.seat, s.phase)
    if action.seat != s.chancellor:
        raise NotTheChancellor(action.seat, s.phase)
    hand = s.hand
    if action.policy not in hand:
        raise PolicyNotInHand(action.seat, s.phase)
    # The card from the hand, not the one in the action: "F" equals Policy.FASCIST but is not the member.
    policy = hand[hand.index(action.policy)]
    other = hand[1] if hand[0] is policy else hand[0]
    s.discard_pile += (other,)
    _end_session(s, policy, s.veto_refused)
    events.append(_policy_discarded(action.seat, other))
    if not _policy_enacted(s, events, policy, False):
        return
    president = s.president
    assert president is not None
    power = power_for(s.players, s.fascist_policies) if policy is _F else None
    if power is None:
        _next_presidency(s, events)
    elif power is _POLICY_PEEK:
        # The peek asks nothing of the President: the top three are shown and play moves on.
        top = s.draw_pile[:3]
        h = s.history
        s.history = _history(h.sessions, h.investigations, h.peeks + ((president, top),), h.not_hitler, h.reshuffles)
        events.append(_policy_peek_used(president))
        events.append(_top_policies_seen(president, top))
        _next_presidency(s, events)
    else:
        s.phase = _POWER_PHASE[power]
        events.append(_presidential_power_granted(president, power))


_POWER_PHASE = {
    Power.INVESTIGATE_LOYALTY: _PHASE_INVESTIGATE,
    Power.SPECIAL_ELECTION: _PHASE_SPECIAL_ELECTION,
    Power.EXECUTION: _PHASE_EXECUTION,
}


def _end_session(s: Core, enacted: Policy | None, veto_proposed: bool) -> None:
    president, chancellor, discard = s.president, s.chancellor, s.president_discard
    assert president is not None and chancellor is not None and discard is not None
    # Whatever the President drew is what the Chancellor received plus the President's discard.
    drawn = tuple(sorted(s.hand + (discard,)))
    session = _session(president, chancellor, drawn, discard, s.hand, enacted, veto_proposed)
    h = s.history
    s.history = _history(h.sessions + (session,), h.investigations, h.peeks, h.not_hitler, h.reshuffles)
    s.hand = ()


def _propose_veto(s: Core, action: ProposeVeto, events: list[Event]) -> None:
    """With veto power unlocked the Chancellor may propose a veto instead of enacting, once per session."""
    if s.phase is not _PHASE_LEGISLATIVE_CHANCELLOR:
        raise OutOfTurn(action.seat, s.phase)
    if action.seat != s.chancellor:
        raise NotTheChancellor(action.seat, s.phase)
    if s.fascist_policies < VETO_ZONE:
        raise VetoNotUnlocked(action.seat, s.phase)
    if s.veto_refused:
        raise VetoAlreadyRefused(action.seat, s.phase)
    s.phase = _PHASE_VETO
    events.append(_veto_proposed(action.seat))


def _answer_veto(s: Core, action: AnswerVeto, events: list[Event]) -> None:
    """If the President consents both policies are discarded; if not, the Chancellor must enact one."""
    if s.phase is not _PHASE_VETO:
        raise OutOfTurn(action.seat, s.phase)
    if action.seat != s.president:
        raise NotThePresident(action.seat, s.phase)
    events.append(_veto_answered(action.seat, action.accept))
    if not action.accept:
        s.veto_refused = True
        s.phase = _PHASE_LEGISLATIVE_CHANCELLOR
        chancellor = s.chancellor
        assert chancellor is not None
        events.append(_policies_received(chancellor, s.hand, False))
        return
    s.discard_pile += s.hand
    _end_session(s, None, True)
    # The vetoed session has ended: reshuffle first, then the tracker (which may bring chaos).
    _reshuffle_if_needed(s, events)
    _advance_election_tracker(s, events)


def _policy_enacted(s: Core, events: list[Event], policy: Policy, by_chaos: bool) -> bool:
    """Track, tracker, win check, reshuffle check, in that order; False if the game ended."""
    if policy is _F:
        s.fascist_policies += 1
    else:
        s.liberal_policies += 1
    s.election_tracker = 0
    events.append(_policy_enacted_event(policy, by_chaos, s.liberal_policies, s.fascist_policies))
    if s.liberal_policies >= LIBERAL_POLICIES_TO_WIN:
        _end(s, events, Party.LIBERAL, WinReason.POLICIES)
        return False
    if s.fascist_policies >= FASCIST_POLICIES_TO_WIN:
        _end(s, events, Party.FASCIST, WinReason.POLICIES)
        return False
    if policy is _F and s.fascist_policies == VETO_ZONE:
        events.append(_VETO_UNLOCKED)
    _reshuffle_if_needed(s, events)
    return True


def _reshuffle_if_needed(s: Core, events: list[Event]) -> None:
    """With fewer than three policies left, the draw pile and the discards are shuffled into a new draw pile."""
    if len(s.draw_pile) >= 3:
        return
    cards = s.draw_pile + s.discard_pile
    history, prescribed = s.history, s.setup.reshuffles
    done = len(history.reshuffles)
    if done < len(prescribed):
        order = prescribed[done]
        if len(order) != len(cards) or order.count(_F) != cards.count(_F):
            raise InvalidReshuffle(
                f"reshuffle {done + 1} must hold the {cards.count(_L)} L and {cards.count(_F)} F being shuffled"
            )
    else:
        # Derived from the secret seed and the reshuffle's number, so a replay from the seed is exact.
        order = shuffled(cards, s.setup.seed, f"reshuffle/{done}")
    s.draw_pile = order
    s.discard_pile = ()
    h = history
    s.history = _history(h.sessions, h.investigations, h.peeks, h.not_hitler, h.reshuffles + (order,))
    events.append(_deck_reshuffled(len(order)))
    events.append(DrawPileShuffled(order))


# --- presidential powers --------------------------------------------------------------------------------


def _check_power(s: Core, seat: Seat, phase: Phase) -> None:
    if s.phase is not phase:
        raise OutOfTurn(seat, s.phase)
    if seat != s.president:
        raise NotThePresident(seat, s.phase)


def _check_target(
    s: Core, seat: Seat, target: Seat, on_self: type[CannotTargetSelf] | type[CannotNominateSelf]
) -> None:
    if not 0 <= target < s.players:
        raise UnknownSeat(seat, s.phase)
    if target == seat:
        raise on_self(seat, s.phase)
    if not s.alive[target]:
        raise TargetIsExecuted(seat, s.phase)


def _investigate(s: Core, action: InvestigateLoyalty, events: list[Event]) -> None:
    """The President alone sees another living player's party; nobody is investigated twice."""
    _check_power(s, action.seat, _PHASE_INVESTIGATE)
    target = action.target
    _check_target(s, action.seat, target, CannotTargetSelf)
    for _, investigated in s.history.investigations:
        if investigated == target:
            raise AlreadyInvestigated(action.seat, s.phase)
    h = s.history
    s.history = _history(h.sessions, h.investigations + ((action.seat, target),), h.peeks, h.not_hitler, h.reshuffles)
    events.append(_loyalty_investigated(action.seat, target))
    events.append(_party_membership_seen(action.seat, target, s.roles[target].party))
    _next_presidency(s, events)


def _special_election(s: Core, action: CallSpecialElection, events: list[Event]) -> None:
    """The President picks any other living player, term-limited ones too, as the next candidate."""
    _check_power(s, action.seat, _PHASE_SPECIAL_ELECTION)
    _check_target(s, action.seat, action.target, CannotTargetSelf)
    events.append(_special_election_called(action.seat, action.target))
    # Afterwards the presidency resumes to the left of the President who called the special election.
    s.rotation = action.seat
    _next_presidency(s, events, special=action.target)


def _execute(s: Core, action: ExecutePlayer, events: list[Event]) -> None:
    """The President executes another living player; if it is Hitler, the liberals win at once."""
    _check_power(s, action.seat, _PHASE_EXECUTION)
    target = action.target
    _check_target(s, action.seat, target, CannotTargetSelf)
    s.alive = s.alive[:target] + (False,) + s.alive[target + 1 :]
    events.append(_player_executed(action.seat, target))
    if s.roles[target] is _HITLER:
        _end(s, events, Party.LIBERAL, WinReason.HITLER_EXECUTED)
        return
    _next_presidency(s, events)


# --- rounds and the end ---------------------------------------------------------------------------------


def _next_presidency(s: Core, events: list[Event], special: Seat | None = None) -> None:
    """The placard passes to the next living player clockwise, or to a special-election candidate."""
    if special is None:
        alive, n = s.alive, s.players
        seat = (s.rotation + 1) % n
        while not alive[seat]:
            seat = (seat + 1) % n
        s.rotation = president = seat
    else:
        president = special
    s.president = president
    s.chancellor = None
    s.phase = _PHASE_NOMINATION
    events.append(_presidential_candidate_chosen(president, special is not None))


def _end(s: Core, events: list[Event], winner: Party, reason: WinReason) -> None:
    s.phase = _PHASE_GAME_OVER
    s.winner, s.win_reason = winner, reason
    s.president = s.chancellor = None
    s.hand = ()
    events.append(GameEnded(winner, reason, s.roles))
