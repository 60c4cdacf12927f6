"""Computer players: they fill empty seats and drive tests, deciding only from what their seat may know.

A computer player sees exactly what a person in that seat would: the engine's ``PlayerView`` and a
``Memory`` of the events shown to that seat. It never sees the ``GameState``. Every choice is a pure
function of the view, the memory and the ``random.Random`` it is given, so a seeded game replays exactly.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Protocol, assert_never, runtime_checkable

from .claims import (
    Accusation,
    Claim,
    ClaimKind,
    Clearance,
    InvestigationClaim,
    Office,
    PeekClaim,
    SessionClaim,
    Spoken,
    hand,
)
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
    KnownSession,
    NominateChancellor,
    Party,
    Phase,
    PlayerView,
    Policy,
    ProposeVeto,
    PublicSession,
    PublicView,
    Role,
    Seat,
    apply,
    awaiting,
    opening_events,
    public_view,
    view_for,
)
from .engine.events import (
    DeckReshuffled,
    ElectionDecided,
    LegislativeSessionStarted,
    LoyaltyInvestigated,
    PlayerExecuted,
    PolicyEnacted,
    PolicyPeekUsed,
    SpecialElectionCalled,
    TopPoliciesSeen,
    VetoAnswered,
)
from .engine.types import (
    CHAOS_AT,
    FASCIST_POLICIES_TO_WIN,
    HITLER_ZONE,
    LIBERAL_POLICIES_TO_WIN,
    POLICY_DECK,
    ROLE_COUNTS,
)

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
    peeked_at: tuple[int, ...] = ()
    """For each of this seat's Policy Peeks, in order, the index of the session meant to draw them."""
    track: tuple[int, int] = (0, 0)
    """(liberal, fascist) policies enacted so far."""
    session_cycles: tuple[int, ...] = ()
    """For each session started, how many reshuffles came before its draw (which deck cycle it drew from)."""
    chaos_draws: tuple[tuple[int, int, Policy], ...] = ()
    """(deck cycle, sessions started before, policy) for every policy chaos took from the top of the pile."""
    cycle_decks: tuple[tuple[int, int], ...] = ()
    """(liberal, fascist) policies in each reshuffled draw pile, in order: every policy not on the board."""
    claims: tuple[Claim, ...] = ()
    """Every claim heard, in the order spoken, this seat's own included."""

    def hear(self, claim: Claim) -> Memory:
        """This memory after hearing ``claim`` (claims are public: every seat hears every claim)."""
        return replace(self, claims=self.claims + (claim,))

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
                return replace(
                    self,
                    sessions_started=self.sessions_started + 1,
                    session_cycles=self.session_cycles + (len(self.cycle_decks),),
                )
            case PlayerExecuted(president=president, target=target):
                return replace(self, executions=self.executions + ((president, target),))
            case SpecialElectionCalled(president=president, target=target):
                return replace(self, special_elections=self.special_elections + ((president, target),))
            case TopPoliciesSeen(policies=policies):
                # The peek happens after its session started, so the next session is the one that draws them.
                return replace(
                    self,
                    peeks=self.peeks + ((self.sessions_started, policies),),
                    peeked_at=self.peeked_at + (self.sessions_started,),
                )
            case PolicyEnacted(
                policy=policy, by_chaos=by_chaos, liberal_policies=liberal, fascist_policies=fascist
            ):
                track = (liberal, fascist)
                if not by_chaos:
                    return replace(self, track=track)
                # Chaos takes the top policy: an undrawn peek no longer tells what the next President drew.
                kept = tuple(peek for peek in self.peeks if peek[0] < self.sessions_started)
                drawn = self.chaos_draws + ((len(self.cycle_decks), self.sessions_started, policy),)
                return replace(self, peeks=kept, track=track, chaos_draws=drawn)
            case DeckReshuffled():
                # Every policy not on the board is shuffled in, so the new pile's make-up is public.
                liberal, fascist = self.track
                deck = (POLICY_DECK.count(_L) - liberal, POLICY_DECK.count(_F) - fascist)
                return replace(self, cycle_decks=self.cycle_decks + (deck,))
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
        DeckReshuffled,
    )
)


# --- judgement ------------------------------------------------------------------------------------------

# Suspicion weights, tuned by self-play (benchmarks/bots.py measures the win rates they give).
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
    if memory.claims:
        _listen(view, memory, private, score, fascists, liberals)
    liberals -= fascists
    for seat in fascists:
        score[seat] = _CERTAIN
    for seat in liberals:
        score[seat] = -_CERTAIN
    return Judgement(frozenset(fascists), frozenset(liberals), tuple(score))


# What claims are worth to a listener (tuned by self-play: benchmarks/bots.py measures them).
_CONFLICT = 1.0
"""Each of a President and Chancellor whose claims about the same session disagree: one of them lied."""
_DENIED_A_LIBERAL = 0.5
"""More for the Chancellor who says no liberal policy came to him where his President says one did (and a
fascist policy was enacted)."""
_CONFESSED = 3.0
"""A claim no liberal would make: it contradicts the enacted policy, or admits throwing a liberal away."""
_SAID_FASCIST = 2.0
"""The target of an investigation claimed to show a fascist party membership."""
_SAID_LIBERAL = -1.0
_ACCUSED = 1.0
"""Each player who says the target is a fascist (an opinion: never a certainty, whoever says it)."""
_DISTRUSTED = 0.5
"""Each player who says they do not trust the target."""
_CLEARED = -0.5
_TRUSTED = -0.5
_SIDED = 2.0
"""Times an opinion's weight, on its speaker, when its target's party is known to this seat: who accused a known
liberal (this liberal himself included) or trusted a known fascist is suspect, who did the opposite less so.
Weighed with the rest, not a certainty: a liberal may be wrong, and a liberal accused does not answer in kind by
reflex."""
_SIDED_SOFT = 0.3
"""Times an opinion's weight and its target's suspicion on the facts alone, against its speaker..."""
_SIDED_CAP = 3.0
"""...that suspicion taken up to this much either way."""
_CREDIT_BASE = 1.0
"""An opinion's weight from a speaker the facts neither point at nor clear..."""
_CREDIT_BASE_TWO_FASCISTS = 0.5
"""...at a table of two fascists and Hitler who does not know them (7 or 8 players), where most opinions are the
fascists' (they accuse liberals and trust their own, Hitler above all): half, so that an unknown speaker's word
counts for little and a suspect's counts against what he says (tuned with benchmarks/bots.py off its seeds)..."""
_CREDIT_SCALE = 2.0
"""An opinion's weight falls by its whole for each this much its speaker is suspected on the facts alone..."""
_CREDIT_MAX = 2.0
"""...and rises to at most this many times for a trusted speaker..."""
_CREDIT_MIN = -1.0
"""...and falls to at least this (below zero: a suspect's word counts against what he says)..."""
_CREDIT_MIN_TWO_FASCISTS = -2.0
"""...or this, at a table of two fascists and Hitler who does not know them."""
_WORD_OF_A_LIBERAL = 2.5
"""How much more an opinion counts from a speaker this seat knows is a liberal."""
_WORD_OF_A_FASCIST = -0.5
"""How an opinion counts from a speaker this seat knows is a fascist (his accusation hints at a liberal)."""
_OFF_THE_DECK = 1.0
"""Each President whose draw claim could be the one that makes a deck cycle's claims impossible."""


def _president_claims(public: PublicView, memory: Memory) -> dict[int, SessionClaim]:
    # The first thing each session's President said about it; later words do not change the record.
    claims: dict[int, SessionClaim] = {}
    sessions = public.sessions
    for claim in memory.claims:
        if (
            isinstance(claim, SessionClaim)
            and claim.office is Office.PRESIDENT
            and claim.session < len(sessions)
            and claim.speaker == sessions[claim.session].president
        ):
            claims.setdefault(claim.session, claim)
    return claims


def _drawn_per_cycle(
    public: PublicView, memory: Memory, presidents: dict[int, SessionClaim], skip: int | None = None
) -> list[tuple[int, int]]:
    """(liberal, fascist) policies claimed or seen drawn in each deck cycle; unclaimed draws count what they
    must have held (the enacted policy), so the tally is a lower bound a truthful table never exceeds."""
    tally = [[0, 0] for _ in range(len(memory.cycle_decks) + 1)]
    sessions = public.sessions
    for index, cycle in enumerate(memory.session_cycles[: len(sessions)]):
        if index == skip:
            continue
        claim = presidents.get(index)
        if claim is not None:
            tally[cycle][0] += claim.hand.count(_L)
            tally[cycle][1] += claim.hand.count(_F)
        elif sessions[index].enacted is not None:
            tally[cycle][sessions[index].enacted is _F] += 1
    for cycle, _, policy in memory.chaos_draws:
        tally[cycle][policy is _F] += 1
    return [(liberal, fascist) for liberal, fascist in tally]


def _cycle_deck(memory: Memory, cycle: int) -> tuple[int, int]:
    # The first pile is the whole deck; every reshuffle's make-up is public.
    if cycle == 0:
        return POLICY_DECK.count(_L), POLICY_DECK.count(_F)
    return memory.cycle_decks[cycle - 1]


def _confesses(claim: SessionClaim, session: PublicSession) -> bool:
    # What no liberal would say: a policy enacted that the claim says was not there, or a liberal thrown away.
    enacted = session.enacted
    if claim.office is Office.PRESIDENT:
        return (enacted is not None and enacted not in claim.passed) or (
            _F in claim.hand and claim.discarded == (_L,)
        )
    if enacted is not None and claim.passed and claim.passed != (enacted,):
        return True
    return (enacted is not None and enacted not in claim.hand) or (_L in claim.hand and enacted is not _L)


def _listen(
    view: PlayerView,
    memory: Memory,
    private: bool,
    score: list[float],
    fascists: set[Seat],
    liberals: set[Seat],
) -> None:
    """Add to ``score``, and with ``private`` to the certain sets, what the claims heard so far tell."""
    public = view.public
    sessions = public.sessions
    presidents = _president_claims(public, memory)
    chancellors: dict[int, SessionClaim] = {}
    peeks: dict[int, PeekClaim] = {}
    opposed: list[tuple[Seat, Seat]] = []
    """Pairs of whom one lied about a fact (unless both are fascists): a liberal in one makes the other a fascist."""
    vouched: list[tuple[Seat, Seat]] = []
    """(speaker, target): the speaker said he found the target's party membership liberal."""
    opinions: dict[tuple[Seat, Seat], float] = {}
    """(speaker, target): the weight of what the speaker last said of the target (an accusation, a distrust,
    trust or a clearance); opinions move suspicion, weighed by who says them, but prove nothing."""
    said: set[tuple[ClaimKind, Seat, Seat]] = set()
    for claim in memory.claims:
        match claim:
            case SessionClaim(speaker=speaker, office=office, session=index):
                if (
                    office is Office.CHANCELLOR
                    and index < len(sessions)
                    and speaker == sessions[index].chancellor
                ):
                    chancellors.setdefault(index, claim)
            case InvestigationClaim(speaker=speaker, target=target, party=party):
                key = (ClaimKind.INVESTIGATION, speaker, target)
                if (speaker, target) not in public.investigations or key in said:
                    continue
                said.add(key)
                if party is Party.FASCIST:
                    score[target] += _SAID_FASCIST
                    opposed.append((speaker, target))
                else:
                    score[target] += _SAID_LIBERAL
                    vouched.append((speaker, target))
            case PeekClaim(speaker=speaker, session=index):
                # Only the President of the session before can have peeked at what the next one draws.
                if 0 < index <= len(sessions) and sessions[index - 1].president == speaker:
                    peeks.setdefault(index, claim)
            case Accusation(speaker=speaker, target=target, sure=sure):
                if speaker != target:
                    opinions[speaker, target] = _ACCUSED if sure else _DISTRUSTED
            case Clearance(speaker=speaker, target=target, sure=sure):
                if speaker != target:
                    opinions[speaker, target] = _CLEARED if sure else _TRUSTED
            case _:
                assert_never(claim)
    for book in (presidents, chancellors):
        for index, claim in book.items():
            if _confesses(claim, sessions[index]):
                score[claim.speaker] += _CONFESSED
    for index, president in presidents.items():
        chancellor = chancellors.get(index)
        if chancellor is not None and chancellor.hand != president.passed:
            score[president.speaker] += _CONFLICT
            score[chancellor.speaker] += _CONFLICT
            if _L in president.passed and _L not in chancellor.hand and sessions[index].enacted is _F:
                # "He handed me no liberal policy": more often the Chancellor's lie than the President's.
                score[chancellor.speaker] += _DENIED_A_LIBERAL
            opposed.append((president.speaker, chancellor.speaker))
    chaos_after = {before for _, before, _ in memory.chaos_draws}
    for index, peek in peeks.items():
        if index >= len(sessions) or index in chaos_after:
            # Not drawn yet, or chaos took the top policy first: the peek no longer says what was drawn.
            continue
        drew = presidents.get(index)
        if drew is not None and drew.speaker != peek.speaker and drew.hand != hand(peek.policies):
            score[drew.speaker] += _CONFLICT
            score[peek.speaker] += _CONFLICT
            opposed.append((drew.speaker, peek.speaker))
        elif drew is None and sessions[index].enacted is _F and _L in peek.policies:
            score[sessions[index].president] += _HANDED_TWO_FASCIST / 2
            score[sessions[index].chancellor] += _HANDED_TWO_FASCIST / 2
    for cycle, (liberal, fascist) in enumerate(_drawn_per_cycle(public, memory, presidents)):
        deck_liberal, deck_fascist = _cycle_deck(memory, cycle)
        if liberal <= deck_liberal and fascist <= deck_fascist:
            continue
        over = _L if liberal > deck_liberal else _F
        cycle_claims = [c for i, c in presidents.items() if memory.session_cycles[i] == cycle]
        # Whoever claimed any policy of the kind counted too often may have claimed one too many of it...
        possible = {c.speaker for c in cycle_claims if over in c.hand}
        # ...but a liar hiding a liberal says he drew at least two fascist policies (a fascist with one
        # fascist policy in three can only hand over a liberal, and has nothing to hide).
        likely = possible if over is _L else {c.speaker for c in cycle_claims if c.hand.count(_F) >= 2}
        for seat in likely:
            score[seat] += _OFF_THE_DECK
        if private:
            unknown = {seat for seat in possible if seat not in liberals or seat in fascists}
            if len(unknown) == 1:
                # A claim in this cycle is false and everyone else who could have made it is a known liberal.
                fascists.update(unknown)
    if private:
        changed = True
        while changed:
            changed = False
            for a, b in opposed:
                for x, y in ((a, b), (b, a)):
                    if x in liberals and x not in fascists and y not in fascists:
                        fascists.add(y)
                        changed = True
            for speaker, target in vouched:
                if (
                    speaker in liberals
                    and speaker not in fascists
                    and target not in liberals
                    and target not in fascists
                ):
                    liberals.add(target)
                    changed = True
                if target in fascists and speaker not in fascists:
                    fascists.add(speaker)
                    changed = True
    me = view.seat
    # An opinion counts as much as its speaker is trusted on the facts alone: more from one whose governments
    # enacted liberal policies, nothing from one the facts already point at.
    standing = list(score)
    two_fascists = ROLE_COUNTS[public.players][1] == 2
    base, lowest = (
        (_CREDIT_BASE_TWO_FASCISTS, _CREDIT_MIN_TWO_FASCISTS) if two_fascists else (_CREDIT_BASE, _CREDIT_MIN)
    )
    for (speaker, target), weight in opinions.items():
        if speaker == me:
            continue
        if not (two_fascists and private and speaker in fascists | liberals):
            # At a table of two fascists a speaker this seat is sure of counts by what he is, not by his record.
            weight *= min(_CREDIT_MAX, max(lowest, base - standing[speaker] / _CREDIT_SCALE))
        if not private:
            score[target] += weight
        elif speaker in fascists:
            score[target] += weight * _WORD_OF_A_FASCIST
        elif speaker in liberals and speaker != me:
            score[target] += weight * _WORD_OF_A_LIBERAL
        else:
            score[target] += weight
            # An opinion tells of its speaker too: who accuses a likely liberal, or trusts a likely fascist, is
            # suspect; all the more if this seat knows the target's party.
            if target in liberals:
                score[speaker] += _SIDED * weight
            elif target in fascists:
                score[speaker] -= _SIDED * weight
            else:
                score[speaker] -= _SIDED_SOFT * weight * max(-_SIDED_CAP, min(_SIDED_CAP, standing[target]))


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
    same thing; the liberal knobs are suspicion thresholds. The defaults were tuned by self-play on seeds that
    ``benchmarks/bots.py`` and ``benchmarks/tells.py`` never play (those measure them on fresh seeds).
    """

    cover: float = 0.3
    """A fascist President holding F, F, L hands a liberal Chancellor the liberal policy (cover): this often with
    Hitler his only teammate, half as often with two teammates, a third with three."""
    hitler_cover: float = 0.8
    """A fascist President hands Hitler (before the Hitler zone) a liberal policy to build his record."""
    bold: float = 0.7
    """A fascist Chancellor handed one of each by a liberal enacts the fascist policy anyway."""
    teammate_nomination: float = 0.05
    """A fascist President nominates a fellow fascist (before the Hitler zone)."""
    blend: float = 0.4
    """A fascist who does not vote as his persona would votes Ja on a government without a teammate with this
    probability (half in the Hitler zone)."""
    mimic: float = 0.6
    """A fascist votes on a government without a teammate as the liberal he plays would (``_posing``)."""
    loyal: float = 0.7
    """A fascist votes Ja for a government with a teammate that the liberal he plays would vote down."""
    threshold: float = 0.5
    """A liberal votes Ja while both members of the government score below this."""
    tracker_threshold: float = 2.0
    """The same, when one more failed election means chaos."""
    zone_threshold: float = 1.0
    """In the Hitler zone, an unconfirmed Chancellor's risk (``_hitler_risk``) must be below this for a liberal's
    Ja."""
    zone_unknown: float = 1.0
    """In the Hitler zone, what a player not known to be Hitler's opposite adds to his risk."""
    zone_marked: float = 3.0
    """In the Hitler zone, what a mark (an investigation claim that found a fascist, a conflicting session
    claim) adds to a player's risk."""
    zone_likeliest: float = 2.0
    """In the Hitler zone, what being the likeliest fascist among the uncleared adds to a player's risk."""
    frame: float = 0.1
    """A fascist President whose liberal Chancellor enacted a fascist policy says he handed over a liberal."""
    frame_investigation: float = 0.6
    """A fascist President says the liberal he investigated showed a fascist party membership (often, so that
    a liberal's true finding is not taken on trust: tuned with benchmarks/bots.py to keep the game balanced)."""
    frame_backed: float = 0.3
    """How much more often he does so for each fascist teammate beyond one (besides Hitler)."""
    peek_lie: float = 0.5
    """A fascist President lies about a Policy Peek: all fascist for a teammate, one liberal more otherwise."""
    distrust: float = 2.5
    """A seat says it does not trust the likeliest fascist once he scores at least this."""
    pushy: float = 1.0
    """How much less a fascist's persona needs to say it does not trust someone."""
    trust: float = 0.0
    """A seat says it trusts a player others accuse if he scores at most this and is no likely fascist."""
    kinder: float = 1.5
    """How much less a fascist's persona suspects his own teammates (so he speaks for them when accused)."""
    expose: float = 3.0
    """A fascist says he does not trust a teammate (never Hitler) whom the facts point at this much."""

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

    # --- speech ---

    def claims(self, view: PlayerView, memory: Memory, rng: random.Random) -> tuple[Claim, ...]:
        """What this seat says now of what it did, saw or concluded and has not said yet; often nothing.

        Only from the seat's view and memory. A liberal's claims are true. The others speak as the liberal they
        play (``_persona``): where the truth would give them away they lie, consistently with the enacted
        policies, the claims heard and the deck's arithmetic, or say nothing where no lie would hold; and they
        accuse, distrust, trust and clear by the liberals' rule, from what they would believe had their lies been
        true, never against their own team. The memory hears the seat's own claims, so asking again says
        nothing new.
        """
        public = view.public
        seat = view.seat
        if public.phase is Phase.GAME_OVER or not public.alive[seat]:
            return ()
        side = _Side.of(view)
        said = [claim for claim in memory.claims if claim.speaker == seat]
        out: list[Claim] = []
        claimed = {claim.session for claim in said if isinstance(claim, SessionClaim)}
        known = iter(view.sessions)
        last = len(public.sessions) - 1
        for index, session in enumerate(public.sessions):
            if seat != session.president and seat != session.chancellor:
                continue
            mine = next(known)
            # A government speaks of its session until the next one's result: later, silence has been kept.
            if index == last and index not in claimed:
                claim = self._session_claim(view, memory, index, mine, side, rng)
                if claim is not None:
                    out.append(claim)
        investigated = {claim.target for claim in said if isinstance(claim, InvestigationClaim)}
        for target, party in view.investigations:
            if target not in investigated:
                out.append(
                    InvestigationClaim(
                        seat, target, self._investigation_party(view, target, party, side, rng)
                    )
                )
        peeked = sum(isinstance(claim, PeekClaim) for claim in said)
        for index, top in zip(memory.peeked_at[peeked:], view.peeks[peeked:], strict=False):
            out.append(PeekClaim(seat, index, self._peek_policies(view, top, side, rng)))
        # What this seat has just said counts for what it concludes: its own claim can expose a liar.
        heard = replace(memory, claims=memory.claims + tuple(out))
        verdicts = self._verdicts(view, heard, said + out, side)
        for found in out:
            # Every investigator, of either side, says what his finding makes of the target (again, if need be).
            if isinstance(found, InvestigationClaim):
                verdict: Claim = (
                    Accusation(seat, found.target) if found.party is Party.FASCIST else Clearance(seat, found.target)
                )
                if verdict not in verdicts:
                    verdicts.insert(0, verdict)
        return tuple(out + verdicts)

    def _session_claim(
        self,
        view: PlayerView,
        memory: Memory,
        index: int,
        known: KnownSession,
        side: _Side,
        rng: random.Random,
    ) -> SessionClaim | None:
        seat = view.seat
        if seat == known.president:
            assert known.drawn is not None
            truth = SessionClaim(seat, Office.PRESIDENT, index, known.drawn, known.received)
        else:
            truth = SessionClaim(
                seat,
                Office.CHANCELLOR,
                index,
                known.received,
                () if known.enacted is None else (known.enacted,),
            )
        if view.role is Role.LIBERAL:
            return truth
        if seat == known.president:
            lies = self._president_lies(truth, known, side, rng)
        else:
            lies = _chancellor_lies(truth, known, memory, side)
        lie = next((lie for lie in lies if _plausible(lie, truth, view, memory)), None)
        if lie is not None:
            return lie
        if _confesses(truth, view.public.sessions[index]):
            # No lie would hold and the truth gives the seat away: silence is safer.
            return None
        return truth

    def _president_lies(
        self, truth: SessionClaim, known: KnownSession, side: _Side, rng: random.Random
    ) -> list[SessionClaim]:
        # In order of preference; the truth is told when none is wanted or plausible.
        seat, index, passed, enacted = truth.speaker, truth.session, truth.passed, known.enacted
        liberal_looking = truth.discarded == (_F,) or _F not in truth.hand
        # "I drew one more fascist than I did": what a liberal handing over these two would have drawn.
        cover = SessionClaim(seat, Office.PRESIDENT, index, passed + (_F,), passed)
        framed: SessionClaim | None = None
        if (
            _F in passed
            and known.chancellor not in side.team
            and not side.liberal_minded
            and enacted is not _L
        ):
            # "I handed over a liberal": puts the fascist policy on the Chancellor's conscience.
            rest = list(passed)
            rest.remove(_F)
            framed = SessionClaim(seat, Office.PRESIDENT, index, (*rest, _L, _F), (*rest, _L))
        if framed is not None and rng.random() < self.frame:
            return [framed] + ([] if liberal_looking else [cover])
        if known.chancellor in side.team and enacted is _F and _L in truth.hand:
            # A fascist government: both say only fascist policies came to them.
            return [SessionClaim(seat, Office.PRESIDENT, index, (_F, _F, _F), (_F, _F))]
        if liberal_looking:
            return []
        return [cover] + ([framed] if framed is not None else [])

    def _investigation_party(
        self, view: PlayerView, target: Seat, party: Party, side: _Side, rng: random.Random
    ) -> Party:
        if view.role is Role.LIBERAL:
            return party
        if side.liberal_minded or target in side.team:
            # Hitler who knows nobody has found a teammate: he covers for him, as the team covers for its own.
            return Party.LIBERAL
        # A frame is safer the more teammates there are to back it.
        frame = self.frame_investigation + self.frame_backed * max(0, len(side.team) - 3)
        return Party.FASCIST if rng.random() < frame else party

    def _peek_policies(
        self, view: PlayerView, top: tuple[Policy, ...], side: _Side, rng: random.Random
    ) -> tuple[Policy, ...]:
        if side.liberal_minded:
            return top
        following = view.public.president
        if following in side.team and _L in top:
            if rng.random() < self.peek_lie:
                # The next President, a teammate, can then throw the liberal away and blame the draw.
                return (_F, _F, _F)
        elif following not in side.team and _F in top and rng.random() < self.peek_lie:
            # A liberal who draws these and says so will seem to be lying.
            first = top.index(_F)
            return top[:first] + (_L,) + top[first + 1 :]
        return top

    def _verdicts(self, view: PlayerView, memory: Memory, said: list[Claim], side: _Side) -> list[Claim]:
        """What this seat says of the others, by one rule for every seat: who it is sure of (accused or cleared,
        as facts), whom among the likeliest fascists it distrusts, and whom, accused by others, it trusts. A
        liberal speaks from what he believes; anyone else from what his persona would (``_posing``): never
        against his own team, whom he sees in a kinder light (but for a teammate the facts expose, never Hitler),
        and a little sooner against anyone else."""
        seat = view.seat
        alive = view.public.alive
        belief = judge(view, memory) if view.role is Role.LIBERAL else self._posing(view, memory, side)[2]
        accused = {c.target for c in said if isinstance(c, Accusation)}
        sure_of = {c.target for c in said if isinstance(c, (Accusation, Clearance)) and c.sure}
        trusted = {c.target for c in said if isinstance(c, Clearance)}
        out: list[Claim] = []
        others = [s for s in range(view.public.players) if s != seat and alive[s]]
        out.extend(Accusation(seat, s) for s in others if s in belief.fascists and s not in sure_of)
        out.extend(Clearance(seat, s) for s in others if s in belief.liberals and s not in sure_of)
        certain = belief.fascists | belief.liberals
        suspects = _suspects(view, belief)
        # A teammate the facts expose (never Hitler) is given up, as a liberal would give him up; the others,
        # never.
        kinder = self.kinder if side.team else 0.0
        exposed = {s for s in side.team if s != side.hitler and belief.suspicion[s] + kinder >= self.expose}
        # One opinion at a time, as a person voices one: the likeliest fascist, once he is clearly suspect...
        # (A fascist is the quicker to voice it: a word against a liberal is never wasted.)
        threshold = self.distrust - (self.pushy if side.team else 0.0)
        doubted = [
            s
            for s in others
            if (s in suspects - side.team or s in exposed)
            and s not in certain
            and belief.suspicion[s] + kinder * (s in side.team) >= threshold
        ]
        # (Once two others have said it, a third adds nothing: a table does not say it in chorus.)
        blamers: dict[Seat, set[Seat]] = {}
        vouchers: dict[Seat, set[Seat]] = {}
        for c in memory.claims:
            if isinstance(c, (Accusation, Clearance)) and c.speaker != seat:
                (blamers if isinstance(c, Accusation) else vouchers).setdefault(c.target, set()).add(c.speaker)
        if doubted:
            top = max(doubted, key=lambda s: (belief.suspicion[s], -s))
            if top not in accused and len(blamers.get(top, ())) < _CHORUS:
                out.append(Accusation(seat, top, sure=False))
        # ...and, for a player others accuse whom this seat does not suspect, trust.
        defended = [
            s
            for s in others
            if s in blamers
            and s not in suspects | certain | accused | trusted
            and belief.suspicion[s] <= self.trust
            and len(vouchers.get(s, ())) < _CHORUS
        ]
        if defended:
            out.append(Clearance(seat, min(defended, key=lambda s: (belief.suspicion[s], s)), sure=False))
        return out

    # --- elections ---

    def _nominate(self, view: PlayerView, memory: Memory, rng: random.Random, side: _Side) -> Action:
        eligible = [a.chancellor for a in view.legal_actions if isinstance(a, NominateChancellor)]
        zone = view.public.fascist_policies >= HITLER_ZONE
        if side.liberal_minded:
            belief = judge(view, memory)
            trusted = [seat for seat in eligible if seat not in belief.fascists] or eligible
            key = self._hitler_risk(view, memory, belief) if zone else list(belief.suspicion)
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
        zone = public.fascist_policies >= HITLER_ZONE
        if side.liberal_minded:
            if view.role is Role.HITLER and chancellor == view.seat:
                return CastVote(view.seat, True)
            return CastVote(view.seat, self._liberal_vote(view, memory, judge(view, memory)))
        if zone and chancellor == side.hitler:
            return CastVote(view.seat, True)
        # Votes are public: a fascist votes as the liberal he plays would, mostly, with a kinder eye for his own.
        persona, heard, belief = self._posing(view, memory, side)
        liberal = self._liberal_vote(persona, heard, belief)
        if president in side.team or chancellor in side.team:
            return CastVote(view.seat, liberal or rng.random() < self.loyal)
        if rng.random() < self.mimic:
            return CastVote(view.seat, liberal)
        if zone:
            # Every government without a fascist brings liberals closer; chaos mostly deals fascist policies.
            return CastVote(view.seat, rng.random() < self.blend / 2)
        return CastVote(view.seat, rng.random() < self.blend)

    def _liberal_vote(self, view: PlayerView, memory: Memory, belief: Judgement) -> bool:
        """The vote of a liberal who believes ``belief`` on the government up for election."""
        public = view.public
        president, chancellor = public.president, public.chancellor
        assert president is not None and chancellor is not None
        government = (president, chancellor)
        if any(s in belief.fascists for s in government if s != view.seat):
            return False
        if view.seat in government or _chaos_can_lose(public):
            # A third failed election would enact the top policy, which may be the fascists' sixth.
            return True
        suspects = _suspects(view, belief)
        if public.fascist_policies >= HITLER_ZONE and not _cleared(view, belief, chancellor):
            # Electing Hitler now loses the game: weigh who is marked, and who is likeliest Hitler.
            risk = self._hitler_risk(view, memory, belief)
            likeliest = _suspects(view, replace(belief, suspicion=tuple(risk)))
            if chancellor in likeliest or risk[chancellor] >= self.zone_threshold:
                return False
        # One more failure means chaos and a random policy: only a very suspicious government is worse.
        limit = self.tracker_threshold if public.election_tracker == 2 else self.threshold
        return not [s for s in government if s in suspects and belief.suspicion[s] >= limit]

    def _posing(self, view: PlayerView, memory: Memory, side: _Side) -> tuple[PlayerView, Memory, Judgement]:
        """The liberal a seat of the other side plays (``_persona``) and what he believes, his own team seen in a
        kinder light and never among the certain fascists."""
        persona, heard = _persona(view, memory)
        belief = judge(persona, heard)
        if side.team:
            kinder = [score - self.kinder * (s in side.team) for s, score in enumerate(belief.suspicion)]
            belief = replace(belief, suspicion=tuple(kinder), fascists=belief.fascists - side.team)
        return persona, heard, belief

    def _hitler_risk(self, view: PlayerView, memory: Memory, belief: Judgement) -> list[float]:
        """Suspicion as it counts once electing Hitler loses the game: a player known not to be Hitler is safe;
        anyone else is a risk, the more so if an investigation claim or a conflicting session claim marks him,
        and the likeliest fascist most of all."""
        risk = list(belief.suspicion)
        marked = _marked(view.public, memory)
        uncleared = [s for s in range(view.public.players) if not _cleared(view, belief, s)]
        for seat in uncleared:
            risk[seat] += self.zone_unknown + self.zone_marked * (seat in marked)
        living = [s for s in uncleared if view.public.alive[s] and s not in belief.fascists and s != view.seat]
        if living:
            likeliest = max(living, key=lambda s: (risk[s], -s))
            risk[likeliest] += self.zone_likeliest
        return risk

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
        # Handing a liberal Chancellor one of each earns trust: he enacts the liberal and vouches for us (the more
        # readily, the fewer teammates there are to carry the team).
        cover = self.cover / max(1, len(side.team) - 1)
        if hand.count(_F) == 2 and chancellor not in side.team and rng.random() < cover:
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
        if fascist_wins or liberal_wins:
            return EnactPolicy(view.seat, _F)
        if public.president == side.hitler and not _hitler_knows_his_team(public):
            # Hitler, who does not know us, tells the truth of what he handed over: a fascist policy now would
            # set our word against his, and Hitler needs a clean record.
            return EnactPolicy(view.seat, _L)
        if public.president in side.team:
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


def _chancellor_lies(
    truth: SessionClaim, known: KnownSession, memory: Memory, side: _Side
) -> list[SessionClaim]:
    # A liberal Chancellor enacts a liberal policy when he has one, and vetoes only two fascist policies.
    seat, index, enacted = truth.speaker, truth.session, known.enacted
    fascist_looking = _L in truth.hand and enacted is not _L
    heard = next(
        (
            c
            for c in memory.claims
            if isinstance(c, SessionClaim)
            and c.session == index
            and c.speaker == known.president
            and c.office is Office.PRESIDENT
        ),
        None,
    )
    if (
        known.president in side.team
        and heard is not None
        and heard.passed != truth.hand
        and (enacted is None or enacted in heard.passed)
        and not (_L in heard.passed and enacted is not _L)
    ):
        # Agree with a teammate's story when it clears the Chancellor too.
        return [SessionClaim(seat, Office.CHANCELLOR, index, heard.passed, truth.passed)]
    if known.president in side.team and heard is not None and heard.passed == truth.hand:
        # A teammate told the truth: no lie sets our word against his (the truth, or silence, will do).
        return []
    if fascist_looking:
        return [SessionClaim(seat, Office.CHANCELLOR, index, (_F, _F), truth.passed)]
    return []


def _plausible(lie: SessionClaim, truth: SessionClaim, view: PlayerView, memory: Memory) -> bool:
    """Whether a careful liar would say ``lie``: it fits the peek claims by others and the deck's arithmetic
    (keeping one policy to spare of the kind it adds while the rest of the cycle's draws are still to be
    claimed; none once its pile has been reshuffled away)."""
    if lie.office is Office.CHANCELLOR:
        return True
    index = lie.session
    chaos_after = {before for _, before, _ in memory.chaos_draws}
    for claim in memory.claims:
        if (
            isinstance(claim, PeekClaim)
            and claim.session == index
            and claim.speaker != lie.speaker
            and index not in chaos_after
            and hand(claim.policies) != lie.hand
        ):
            return False
    public = view.public
    if index >= len(memory.session_cycles):
        return True
    cycle = memory.session_cycles[index]
    liberal, fascist = _drawn_per_cycle(public, memory, _president_claims(public, memory), skip=index)[cycle]
    deck_liberal, deck_fascist = _cycle_deck(memory, cycle)
    spare = cycle == len(memory.cycle_decks)
    more_liberal = spare and lie.hand.count(_L) > truth.hand.count(_L)
    more_fascist = spare and lie.hand.count(_F) > truth.hand.count(_F)
    return (
        liberal + lie.hand.count(_L) <= deck_liberal - more_liberal
        and fascist + lie.hand.count(_F) <= deck_fascist - more_fascist
    )


_CHORUS = 2
"""How many others saying a player is not to be trusted (or is) leave nothing to add."""


def _persona(view: PlayerView, memory: Memory) -> tuple[PlayerView, Memory]:
    """The liberal a seat of the other side plays: its view and memory as they would be had all it claimed been
    true (its sessions, investigations and peeks as it told them; the truth where it said nothing), knowing no
    teammate. ``judge`` of these is what that liberal would believe."""
    seat = view.seat
    told: dict[tuple[int, Office], SessionClaim] = {}
    investigated: dict[Seat, Party] = {}
    peeked: dict[int, tuple[Policy, ...]] = {}
    for claim in memory.claims:
        if claim.speaker != seat:
            continue
        match claim:
            case SessionClaim(session=index, office=office):
                told.setdefault((index, office), claim)
            case InvestigationClaim(target=target, party=party):
                investigated.setdefault(target, party)
            case PeekClaim(session=index, policies=policies):
                peeked.setdefault(index, policies)
            case Accusation() | Clearance():
                pass
            case _:
                assert_never(claim)
    sessions: list[KnownSession] = []
    known = iter(view.sessions)
    for index, session in enumerate(view.public.sessions):
        if seat not in (session.president, session.chancellor):
            continue
        truth = next(known)
        office = Office.PRESIDENT if seat == session.president else Office.CHANCELLOR
        story = told.get((index, office))
        if story is not None and office is Office.PRESIDENT:
            truth = replace(truth, drawn=story.hand, discarded=story.discarded[0], received=story.passed)
        elif story is not None:
            truth = replace(truth, received=story.hand)
        sessions.append(truth)
    persona = replace(
        view,
        role=Role.LIBERAL,
        party=Party.LIBERAL,
        known_roles=(),
        sessions=tuple(sessions),
        investigations=tuple((target, investigated.get(target, party)) for target, party in view.investigations),
        peeks=tuple(peeked.get(index, top) for index, top in zip(memory.peeked_at, view.peeks, strict=False)),
    )
    peeks = tuple((index, peeked.get(index, top)) for index, top in memory.peeks)
    return persona, replace(memory, peeks=peeks)


def _suspects(view: PlayerView, belief: Judgement) -> frozenset[Seat]:
    # As many of the most suspicious living players as there are fascists at the table (Hitler included).
    public = view.public
    fascists = ROLE_COUNTS[public.players][1] + 1
    living = [s for s in range(public.players) if public.alive[s] and s not in belief.liberals]
    living.sort(key=lambda s: (-belief.suspicion[s], s))
    return frozenset(living[:fascists])


def _hitler_knows_his_team(public: PublicView) -> bool:
    # With one fascist beside him (5 or 6 players) Hitler is told who it is; with more, he knows nobody.
    return ROLE_COUNTS[public.players][1] == 1


def _chaos_can_lose(public: PublicView) -> bool:
    # One more failed election enacts the top policy, and one more fascist policy wins the game.
    return (
        public.election_tracker == CHAOS_AT - 1 and public.fascist_policies == FASCIST_POLICIES_TO_WIN - 1
    )


def _marked(public: PublicView, memory: Memory) -> frozenset[Seat]:
    """Players the claims mark as fascists: the target of an investigation claim that found a fascist, and both
    members of a government whose claims about their session conflict."""
    marked: set[Seat] = set()
    presidents = _president_claims(public, memory)
    for claim in memory.claims:
        match claim:
            case InvestigationClaim(speaker=speaker, target=target, party=Party.FASCIST):
                if (speaker, target) in public.investigations:
                    marked.add(target)
            case SessionClaim(speaker=speaker, office=Office.CHANCELLOR, session=index, hand=held):
                president = presidents.get(index)
                if (
                    president is not None
                    and speaker == public.sessions[index].chancellor
                    and held != president.passed
                ):
                    marked.update((speaker, president.speaker))
            case _:
                pass
    return frozenset(marked)


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


@runtime_checkable
class Speaker(Protocol):
    """Anything that speaks for a seat: its view, memory and seeded random source in, its new claims out."""

    def claims(self, view: PlayerView, memory: Memory, rng: random.Random) -> tuple[Claim, ...]:
        """What the seat says now (often nothing)."""
        ...


def speaking_order(public: PublicView) -> tuple[Seat, ...]:
    """Who speaks, in order, after an action: the last government's President, its Chancellor, then everyone
    else clockwise from that President; living players only (the executed may not speak)."""
    n = public.players
    if public.sessions:
        last = public.sessions[-1]
        first, second = last.president, last.chancellor
    else:
        first = second = public.president if public.president is not None else 0
    order = [first, second] + [(first + k) % n for k in range(1, n)]
    return tuple(dict.fromkeys(seat for seat in order if public.alive[seat]))


def speech_rng(seed: int, seat: Seat, step: int) -> random.Random:
    """The random source a computer seat speaks with after ``step`` actions (apart from its decisions', so that
    turning claims on or off changes no random draw a decision makes)."""
    return random.Random(f"{seed}/claims/{seat}/{step}")


SPEECH_EVENTS: frozenset[type[Event]] = frozenset(
    (PolicyEnacted, VetoAnswered, LoyaltyInvestigated, PolicyPeekUsed, DeckReshuffled)
)
"""After these a seat may have something new to say; after any other event every ``claims`` is empty."""
SPEECH_ROUNDS = 3
"""Rounds of speech after an action: claims answer claims (an accusation follows a contradiction)."""


def play(
    state: GameState,
    players: Sequence[Chooser],
    seed: int,
    *,
    max_steps: int = 5_000,
    claims: bool = False,
    transcript: list[Spoken] | None = None,
    actions: list[Action] | None = None,
) -> GameState:
    """Play ``state`` to its end: each seat decides through its chooser from ``view_for`` and its memory only.

    Each seat's memory is fed exactly the events whose audience includes it (from the deal on, if ``state``
    is a new game); each seat has its own random source derived from ``seed``, so the game is a function
    of ``state``, the players and ``seed``. With ``claims``, after each action every living seat whose
    player is a ``Speaker`` says what it has to say, in ``speaking_order``, and every seat hears it; the
    claims are appended to ``transcript`` if given. Without, the game is exactly as it always was. Every action
    is appended to ``actions`` if given (with the transcript, the game's record).
    """
    n = state.players
    if len(players) != n:
        raise ValueError(f"{n} seats need {n} players, not {len(players)}")
    memories = [Memory(seat) for seat in range(n)]
    rngs = [random.Random(f"{seed}/{seat}") for seat in range(n)]
    speakers: list[Speaker | None] = [player if claims and isinstance(player, Speaker) else None for player in players]
    talk = any(speaker is not None for speaker in speakers)

    def show(events: Sequence[Event]) -> None:
        for event in events:
            audience = event.audience
            for seat in range(n) if audience.everyone else sorted(audience.seats):
                memories[seat] = memories[seat].observe(event)

    def converse(current: GameState) -> None:
        for _ in range(SPEECH_ROUNDS):
            quiet = True
            for seat in speaking_order(public_view(current)):
                speaker = speakers[seat]
                if speaker is None:
                    continue
                said = speaker.claims(
                    view_for(current, seat), memories[seat], speech_rng(seed, seat, current.step)
                )
                for claim in said:
                    quiet = False
                    if transcript is not None:
                        transcript.append(Spoken(current.step, claim))
                    for listener in range(n):
                        memories[listener] = memories[listener].hear(claim)
            if quiet:
                return

    if state.step == 0:
        show(opening_events(state))
    while state.phase is not Phase.GAME_OVER:
        if state.step >= max_steps:
            raise RuntimeError(f"the game did not end within {max_steps} actions")
        for seat in awaiting(state):
            action = players[seat](view_for(state, seat), memories[seat], rngs[seat])
            state, events = apply(state, action)
            if actions is not None:
                actions.append(action)
            show(events)
            if talk and state.phase is not Phase.GAME_OVER and any(type(e) in SPEECH_EVENTS for e in events):
                converse(state)
    return state
