"""Computer players: they fill empty seats and drive tests, deciding only from what their seat may know.

A computer player sees exactly what a person in that seat would: the engine's ``PlayerView`` and a
``Memory`` of the events shown to that seat. It never sees the ``GameState``. Every choice is a pure
function of the view, the memory and the ``random.Random`` it is given, so a seeded game replays exactly.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import assert_never

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
    InvestigateLoyalty,
    NominateChancellor,
    Party,
    Phase,
    PlayerView,
    Policy,
    ProposeVeto,
    Role,
    Seat,
    apply,
    awaiting,
    opening_events,
    view_for,
)
from .engine.events import (
    ElectionDecided,
    LegislativeSessionStarted,
    PlayerExecuted,
    PolicyEnacted,
    SpecialElectionCalled,
    TopPoliciesSeen,
)
from .engine.types import FASCIST_POLICIES_TO_WIN, HITLER_ZONE, LIBERAL_POLICIES_TO_WIN, ROLE_COUNTS

_F, _L = Policy.FASCIST, Policy.LIBERAL

# --- memory ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Election:
    """One decided election as the whole table saw it: the government, who voted Ja and Nein, the outcome."""

    president: Seat
    chancellor: Seat
    ja: tuple[Seat, ...]
    nein: tuple[Seat, ...]
    elected: bool


@dataclass(frozen=True, slots=True)
class Memory:
    """What one seat remembers of the events it was shown that its ``PlayerView`` does not keep.

    A small value of ints, bools and tuples: after a restart it is rebuilt by replaying, in order, the
    events whose audience included the seat.
    """

    seat: Seat
    elections: tuple[Election, ...] = ()
    """Every decided election, in order; the elected ones match ``PublicView.sessions`` one to one."""
    executions: tuple[tuple[Seat, Seat], ...] = ()
    """(President, target) for every execution."""
    special_elections: tuple[tuple[Seat, Seat], ...] = ()
    """(President, target) for every special election."""
    sessions_started: int = 0
    peeks: tuple[tuple[int, tuple[Policy, ...]], ...] = ()
    """(index of the session that draws them, top three) for this seat's Policy Peeks still worth knowing."""

    def observe(self, event: Event) -> Memory:
        """This memory after seeing ``event``; raises ``ValueError`` for an event the seat may not see."""
        if not event.audience.includes(self.seat):
            raise ValueError(f"seat {self.seat} may not see {event.kind}")
        if type(event) not in _REMEMBERED:
            # Most events (votes, hands, progress) are already in the view or tell nothing lasting.
            return self
        match event:
            case ElectionDecided(president=president, chancellor=chancellor, votes=votes, elected=elected):
                ja = tuple(seat for seat, vote in votes if vote)
                nein = tuple(seat for seat, vote in votes if not vote)
                return replace(
                    self, elections=self.elections + (Election(president, chancellor, ja, nein, elected),)
                )
            case LegislativeSessionStarted():
                return replace(self, sessions_started=self.sessions_started + 1)
            case PlayerExecuted(president=president, target=target):
                return replace(self, executions=self.executions + ((president, target),))
            case SpecialElectionCalled(president=president, target=target):
                return replace(self, special_elections=self.special_elections + ((president, target),))
            case TopPoliciesSeen(policies=policies):
                # The peek happens after its session started, so the next session is the one that draws them.
                return replace(self, peeks=self.peeks + ((self.sessions_started, policies),))
            case PolicyEnacted(by_chaos=True):
                # Chaos takes the top policy: an undrawn peek no longer tells what the next President drew.
                kept = tuple(peek for peek in self.peeks if peek[0] < self.sessions_started)
                return self if kept == self.peeks else replace(self, peeks=kept)
            case _:
                return self


_REMEMBERED: frozenset[type[Event]] = frozenset(
    (
        ElectionDecided,
        LegislativeSessionStarted,
        PlayerExecuted,
        SpecialElectionCalled,
        TopPoliciesSeen,
        PolicyEnacted,
    )
)


# --- judgement ------------------------------------------------------------------------------------------

# Suspicion weights, tuned by self-play (tests/test_bots.py measures the win rates they give).
_FASCIST_ENACTED = 1.0
"""Each member of a government that enacted a fascist policy."""
_LIBERAL_ENACTED = -0.6
"""Each member of a government that enacted a liberal policy (a fascist may do it for cover, so less)."""
_JA_FOR_FASCIST = 0.3
"""Each Ja voter for a government that then enacted a fascist policy."""
_NEIN_AGAINST_LIBERAL = 0.3
"""Each Nein voter against a government that then enacted a liberal policy."""
_JA_FOR_KNOWN_FASCIST = 0.7
"""Each Ja voter for a government including a player this seat knows is fascist."""
_HANDED_TWO_FASCIST = 1.5
"""A President who handed this Chancellor two fascist policies (he may claim three were drawn)."""
_HANDED_A_LIBERAL = -0.5
_REFUSED_VETO = 0.8
"""A President who refused a veto and then saw a fascist policy enacted."""
_VETO_WITH_LIBERAL = 1.5
"""A Chancellor who proposed to veto while holding a liberal policy."""
_EXECUTED_LIBERAL = 2.0
_CALLED_FASCIST = 1.5
_CERTAIN = 100.0


@dataclass(frozen=True, slots=True)
class Judgement:
    """What one seat believes about the others: parties it is certain of and a suspicion score per seat."""

    fascists: frozenset[Seat]
    """Seats known to be of the fascist party (teammates, investigations, caught lying)."""
    liberals: frozenset[Seat]
    suspicion: tuple[float, ...]
    """Higher is more likely fascist; certain fascists score +100, certain liberals -100."""


def judge(view: PlayerView, memory: Memory, *, private: bool = True) -> Judgement:
    """What this seat concludes from its view and memory; with ``private=False``, what the table concludes."""
    public = view.public
    n = public.players
    score = [0.0] * n
    fascists: set[Seat] = set()
    liberals: set[Seat] = set()
    if private:
        (liberals if view.party is Party.LIBERAL else fascists).add(view.seat)
        fascists.update(seat for seat, _ in view.known_roles)
        if view.role is Role.FASCIST or view.known_roles:
            # Whoever is told the fascists' names is told all of them: everyone else is liberal.
            liberals.update(seat for seat in range(n) if seat not in fascists)
        for target, party in view.investigations:
            (liberals if party is Party.LIBERAL else fascists).add(target)
        for known in view.sessions:
            if known.president == view.seat and _L in known.received and known.enacted is _F:
                # Handed a liberal policy, the Chancellor chose the fascist one: no liberal does that.
                fascists.add(known.chancellor)
    liberals -= fascists

    def add(seat: Seat, amount: float) -> None:
        score[seat] += amount

    sessions = public.sessions
    for session in sessions:
        if session.enacted is _F:
            add(session.president, _FASCIST_ENACTED)
            add(session.chancellor, _FASCIST_ENACTED)
        elif session.enacted is _L:
            add(session.president, _LIBERAL_ENACTED)
            add(session.chancellor, _LIBERAL_ENACTED)
        if session.veto_proposed and session.enacted is _F:
            add(session.president, _REFUSED_VETO)
        elif session.veto_proposed and session.enacted is _L:
            add(session.chancellor, _VETO_WITH_LIBERAL)
    elected = [election for election in memory.elections if election.elected]
    for election, session in zip(elected, sessions, strict=False):  # the last election may be mid-session
        if session.enacted is _F:
            for seat in election.ja:
                add(seat, _JA_FOR_FASCIST)
        elif session.enacted is _L:
            for seat in election.nein:
                add(seat, _NEIN_AGAINST_LIBERAL)
    if private:
        # Hitler counts himself among the fascists, but his own supporters tell him nothing.
        others = fascists - {view.seat}
        for election in memory.elections:
            if election.president in others or election.chancellor in others:
                for seat in election.ja:
                    add(seat, _JA_FOR_KNOWN_FASCIST)
        for president, target in memory.executions:
            if target in liberals:
                add(president, _EXECUTED_LIBERAL)
        for president, target in memory.special_elections:
            if target in others:
                add(president, _CALLED_FASCIST)
        for known in view.sessions:
            if known.chancellor == view.seat and known.president != view.seat:
                add(known.president, _HANDED_TWO_FASCIST if _L not in known.received else _HANDED_A_LIBERAL)
            if known.president == view.seat and known.veto_proposed and _L in known.received:
                add(known.chancellor, _VETO_WITH_LIBERAL)
        for index, top in memory.peeks:
            if index >= len(sessions):
                continue
            session = sessions[index]
            if view.seat in (session.president, session.chancellor) or session.enacted is not _F:
                continue
            drawn_liberals = top.count(_L)
            if drawn_liberals >= 2:
                # From two liberals a liberal President hands over at least one, and a liberal Chancellor
                # enacts it; with two it is the President who must have thrown one away.
                fascists.add(session.president)
            elif drawn_liberals == 1:
                add(session.president, _HANDED_TWO_FASCIST)
                add(session.chancellor, _HANDED_TWO_FASCIST)
    liberals -= fascists
    for seat in fascists:
        score[seat] = _CERTAIN
    for seat in liberals:
        score[seat] = -_CERTAIN
    return Judgement(frozenset(fascists), frozenset(liberals), tuple(score))


# --- the players ----------------------------------------------------------------------------------------

Chooser = Callable[[PlayerView, Memory, random.Random], Action]
"""Anything that decides for a seat: its view, memory and seeded random source in, a legal action out."""


def random_choice(view: PlayerView, rng: random.Random) -> Action:
    """A uniform choice among the legal actions (for simulations and baselines)."""
    if not view.legal_actions:
        raise ValueError(f"seat {view.seat} has no decision to make")
    return view.legal_actions[int(rng.random() * len(view.legal_actions))]


def random_player(view: PlayerView, memory: Memory, rng: random.Random) -> Action:
    """``random_choice`` with the ``Chooser`` signature: ignores its memory."""
    return random_choice(view, rng)


def _least(candidates: Sequence[Seat], key: Sequence[float], rng: random.Random) -> Seat:
    # Ties are broken by the seeded rng, so equal-looking players are not always chosen by seat order.
    best = min(key[seat] for seat in candidates)
    return rng.choice([seat for seat in candidates if key[seat] <= best + 1e-9])


def _most(candidates: Sequence[Seat], key: Sequence[float], rng: random.Random) -> Seat:
    return _least(candidates, [-value for value in key], rng)


@dataclass(frozen=True, slots=True)
class ComputerPlayer:
    """A heuristic player: liberals hunt fascists by suspicion; fascists hide, blame the draw, elect Hitler.

    The fascist knobs are probabilities, so that a fascist does not give itself away by always doing the
    same thing; the liberal knobs are suspicion thresholds. The defaults were tuned by self-play.
    """

    cover: float = 0.15
    """A fascist President holding F, F, L hands a liberal Chancellor the liberal policy (cover)."""
    hitler_cover: float = 0.8
    """A fascist President hands Hitler (before the Hitler zone) a liberal policy to build his record."""
    bold: float = 0.7
    """A fascist Chancellor handed one of each by a liberal enacts the fascist policy anyway."""
    teammate_nomination: float = 0.2
    """A fascist President nominates a fellow fascist (before the Hitler zone)."""
    blend: float = 0.4
    """A fascist votes Ja on an all-liberal government, to look like everyone else."""
    threshold: float = 0.5
    """A liberal votes Ja while both members of the government score below this."""
    tracker_threshold: float = 2.0
    """The same, when one more failed election means chaos."""
    zone_threshold: float = 0.5
    """In the Hitler zone, an unconfirmed Chancellor must score below this to get a liberal's Ja."""

    def choose(self, view: PlayerView, memory: Memory, rng: random.Random) -> Action:
        """One of ``view.legal_actions``, chosen from what this seat may know."""
        actions = view.legal_actions
        if not actions:
            raise ValueError(f"seat {view.seat} has no decision to make")
        if len(actions) == 1:
            return actions[0]
        side = _Side.of(view)
        phase = view.public.phase
        match phase:
            case Phase.NOMINATION:
                return self._nominate(view, memory, rng, side)
            case Phase.ELECTION:
                return self._vote(view, memory, rng, side)
            case Phase.LEGISLATIVE_PRESIDENT:
                return self._discard(view, rng, side)
            case Phase.LEGISLATIVE_CHANCELLOR:
                return self._enact(view, rng, side)
            case Phase.VETO:
                return self._answer_veto(view, side)
            case Phase.INVESTIGATE:
                return self._investigate(view, memory, rng, side)
            case Phase.SPECIAL_ELECTION:
                return self._special_election(view, memory, rng, side)
            case Phase.EXECUTION:
                return self._execute(view, memory, rng, side)
            case Phase.GAME_OVER:
                raise ValueError("the game is over")
            case _:
                assert_never(phase)

    def __call__(self, view: PlayerView, memory: Memory, rng: random.Random) -> Action:
        """``choose``, so a ComputerPlayer is a ``Chooser``."""
        return self.choose(view, memory, rng)

    # --- elections ---

    def _nominate(self, view: PlayerView, memory: Memory, rng: random.Random, side: _Side) -> Action:
        eligible = [a.chancellor for a in view.legal_actions if isinstance(a, NominateChancellor)]
        zone = view.public.fascist_policies >= HITLER_ZONE
        if side.liberal_minded:
            belief = judge(view, memory)
            trusted = [seat for seat in eligible if seat not in belief.fascists] or eligible
            key = list(belief.suspicion)
            if zone:
                # Electing Hitler now loses the game: prefer Chancellors known not to be Hitler.
                for seat in trusted:
                    if not _cleared(view, belief, seat):
                        key[seat] += 1.0
            return NominateChancellor(view.seat, _least(trusted, key, rng))
        table = judge(view, memory, private=False)
        hitler = side.hitler
        if zone and hitler in eligible:
            return NominateChancellor(view.seat, hitler)
        teammates = [seat for seat in eligible if seat in side.team]
        if teammates and rng.random() < self.teammate_nomination:
            return NominateChancellor(view.seat, _least(teammates, table.suspicion, rng))
        others = [seat for seat in eligible if seat not in side.team] or eligible
        return NominateChancellor(view.seat, _least(others, table.suspicion, rng))

    def _vote(self, view: PlayerView, memory: Memory, rng: random.Random, side: _Side) -> Action:
        public = view.public
        president, chancellor = public.president, public.chancellor
        assert president is not None and chancellor is not None
        government = (president, chancellor)
        zone = public.fascist_policies >= HITLER_ZONE
        if side.liberal_minded:
            if view.role is Role.HITLER and chancellor == view.seat:
                return CastVote(view.seat, True)
            belief = judge(view, memory)
            if any(s in belief.fascists for s in government if s != view.seat):
                return CastVote(view.seat, False)
            if view.seat in government:
                return CastVote(view.seat, True)
            suspects = _suspects(view, belief)
            doubted = chancellor in suspects or belief.suspicion[chancellor] >= self.zone_threshold
            if zone and doubted and not _cleared(view, belief, chancellor):
                return CastVote(view.seat, False)
            # One more failure means chaos and a random policy: only a very suspicious government is worse.
            limit = self.tracker_threshold if public.election_tracker == 2 else self.threshold
            doubtful = [s for s in government if s in suspects and belief.suspicion[s] >= limit]
            return CastVote(view.seat, not doubtful)
        if zone and chancellor == side.hitler:
            return CastVote(view.seat, True)
        if president in side.team or chancellor in side.team:
            return CastVote(view.seat, True)
        if zone:
            # Every government without a fascist brings liberals closer; chaos mostly deals fascist policies.
            return CastVote(view.seat, rng.random() < self.blend / 2)
        return CastVote(view.seat, rng.random() < self.blend)

    # --- the legislative session ---

    def _discard(self, view: PlayerView, rng: random.Random, side: _Side) -> Action:
        hand = view.hand
        public = view.public
        if side.liberal_minded and not _hitler_wins_next(view):
            return DiscardPolicy(view.seat, _F if _F in hand else _L)
        chancellor = public.chancellor
        liberal_wins_next = public.liberal_policies == LIBERAL_POLICIES_TO_WIN - 1
        fascist_wins_next = public.fascist_policies == FASCIST_POLICIES_TO_WIN - 1
        if liberal_wins_next or fascist_wins_next:
            return DiscardPolicy(view.seat, _L)
        # Handing a liberal Chancellor one of each earns trust: he enacts the liberal and vouches for us.
        if hand.count(_F) == 2 and chancellor not in side.team and rng.random() < self.cover:
            return DiscardPolicy(view.seat, _F)
        # Hitler, before the Hitler zone, needs liberal policies to his name to be trusted later.
        if (
            chancellor == side.hitler
            and public.fascist_policies < HITLER_ZONE
            and rng.random() < self.hitler_cover
        ):
            return DiscardPolicy(view.seat, _F)
        # Otherwise keep the fascist policies: two fascists can be blamed on the draw.
        return DiscardPolicy(view.seat, _L)

    def _enact(self, view: PlayerView, rng: random.Random, side: _Side) -> Action:
        hand = view.hand
        public = view.public
        if side.liberal_minded:
            if _L in hand:
                return EnactPolicy(view.seat, _L)
            if view.may_veto:
                return ProposeVeto(view.seat)
            return EnactPolicy(view.seat, _F)
        if _F not in hand:
            # Two liberal policies: only a veto keeps them off the board.
            return ProposeVeto(view.seat) if view.may_veto else EnactPolicy(view.seat, _L)
        if _L not in hand:
            return EnactPolicy(view.seat, _F)
        # One of each: the President knows what he handed over.
        fascist_wins = public.fascist_policies == FASCIST_POLICIES_TO_WIN - 1
        liberal_wins = public.liberal_policies == LIBERAL_POLICIES_TO_WIN - 1
        if fascist_wins or liberal_wins or public.president in side.team:
            return EnactPolicy(view.seat, _F)
        if view.role is Role.HITLER:
            # Hitler needs a clean record to be elected Chancellor later.
            return EnactPolicy(view.seat, _L)
        bold = public.fascist_policies >= HITLER_ZONE or rng.random() < self.bold
        return EnactPolicy(view.seat, _F if bold else _L)

    def _answer_veto(self, view: PlayerView, side: _Side) -> Action:
        if side.liberal_minded and not _hitler_wins_next(view):
            # Consent only when the agenda could only have been fascist.
            return AnswerVeto(view.seat, _L not in view.passed)
        return AnswerVeto(view.seat, _F not in view.passed)

    # --- presidential powers ---

    def _investigate(self, view: PlayerView, memory: Memory, rng: random.Random, side: _Side) -> Action:
        targets = [a.target for a in view.legal_actions if isinstance(a, InvestigateLoyalty)]
        if side.liberal_minded:
            belief = judge(view, memory)
            unknown = [s for s in targets if s not in belief.fascists and s not in belief.liberals] or targets
            return InvestigateLoyalty(view.seat, _most(unknown, belief.suspicion, rng))
        # The result tells a fascist nothing new; look at a liberal, as a liberal would.
        liberals = [s for s in targets if s not in side.team] or targets
        return InvestigateLoyalty(view.seat, rng.choice(liberals))

    def _special_election(self, view: PlayerView, memory: Memory, rng: random.Random, side: _Side) -> Action:
        targets = [a.target for a in view.legal_actions if isinstance(a, CallSpecialElection)]
        if side.liberal_minded:
            belief = judge(view, memory)
            trusted = [s for s in targets if s not in belief.fascists] or targets
            return CallSpecialElection(view.seat, _least(trusted, belief.suspicion, rng))
        table = judge(view, memory, private=False)
        # A fellow fascist President can nominate Hitler; Hitler cannot nominate himself.
        helpers = [s for s in targets if s in side.team and s != side.hitler]
        if helpers:
            return CallSpecialElection(view.seat, _least(helpers, table.suspicion, rng))
        others = [s for s in targets if s not in side.team] or targets
        return CallSpecialElection(view.seat, _least(others, table.suspicion, rng))

    def _execute(self, view: PlayerView, memory: Memory, rng: random.Random, side: _Side) -> Action:
        targets = [a.target for a in view.legal_actions if isinstance(a, ExecutePlayer)]
        if side.liberal_minded:
            belief = judge(view, memory)
            if view.role is Role.HITLER:
                # Hitler knows nobody, but whoever he trusts most is the likeliest liberal.
                others = [s for s in targets if s not in belief.fascists] or targets
                return ExecutePlayer(view.seat, _least(others, belief.suspicion, rng))
            return ExecutePlayer(view.seat, _most(targets, belief.suspicion, rng))
        table = judge(view, memory, private=False)
        # Never Hitler or a teammate: the liberal the table trusts most is the one worth removing.
        liberals = [s for s in targets if s not in side.team] or targets
        return ExecutePlayer(view.seat, _least(liberals, table.suspicion, rng))


@dataclass(frozen=True, slots=True)
class _Side:
    """How a seat plays: as a liberal (so does Hitler when he knows nobody) or for the fascist team."""

    liberal_minded: bool
    team: frozenset[Seat]
    """The fascist party members this seat knows, itself included (empty for the liberal-minded)."""
    hitler: Seat | None

    @staticmethod
    def of(view: PlayerView) -> _Side:
        """The side this view plays for."""
        if view.role is Role.LIBERAL or (view.role is Role.HITLER and not view.known_roles):
            return _Side(True, frozenset(), None)
        team = frozenset(seat for seat, _ in view.known_roles) | {view.seat}
        hitler = (
            view.seat
            if view.role is Role.HITLER
            else next(seat for seat, role in view.known_roles if role is Role.HITLER)
        )
        return _Side(False, team, hitler)


def _suspects(view: PlayerView, belief: Judgement) -> frozenset[Seat]:
    # As many of the most suspicious living players as there are fascists at the table (Hitler included).
    public = view.public
    fascists = ROLE_COUNTS[public.players][1] + 1
    living = [s for s in range(public.players) if public.alive[s] and s not in belief.liberals]
    living.sort(key=lambda s: (-belief.suspicion[s], s))
    return frozenset(living[:fascists])


def _hitler_wins_next(view: PlayerView) -> bool:
    # Hitler's liberal act ends when one more fascist policy wins the game: then he plays to win.
    return view.role is Role.HITLER and view.public.fascist_policies == FASCIST_POLICIES_TO_WIN - 1


def _cleared(view: PlayerView, belief: Judgement, seat: Seat) -> bool:
    # Known not to be Hitler: a confirmed liberal, a Chancellor elected in the Hitler zone, or oneself.
    return (
        seat in belief.liberals
        or seat in view.public.not_hitler
        or (seat == view.seat and view.role is not Role.HITLER)
    )


# --- playing whole games --------------------------------------------------------------------------------


def play(state: GameState, players: Sequence[Chooser], seed: int, *, max_steps: int = 5_000) -> GameState:
    """Play ``state`` to its end: each seat decides through its chooser from ``view_for`` and its memory only.

    Each seat's memory is fed exactly the events whose audience includes it (from the deal on, if ``state``
    is a new game); each seat has its own random source derived from ``seed``, so the game is a function
    of ``state``, the players and ``seed``.
    """
    n = state.players
    if len(players) != n:
        raise ValueError(f"{n} seats need {n} players, not {len(players)}")
    memories = [Memory(seat) for seat in range(n)]
    rngs = [random.Random(f"{seed}/{seat}") for seat in range(n)]

    def show(events: Sequence[Event]) -> None:
        for event in events:
            audience = event.audience
            for seat in range(n) if audience.everyone else sorted(audience.seats):
                memories[seat] = memories[seat].observe(event)

    if state.step == 0:
        show(opening_events(state))
    while state.phase is not Phase.GAME_OVER:
        if state.step >= max_steps:
            raise RuntimeError(f"the game did not end within {max_steps} actions")
        for seat in awaiting(state):
            action = players[seat](view_for(state, seat), memories[seat], rngs[seat])
            state, events = apply(state, action)
            show(events)
    return state
