"""Properties of random legal play for every player count, in the manner of OpenSpiel's random_sim_test."""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator
from dataclasses import fields

from hypothesis import given, settings
from hypothesis import strategies as st

from moderator import record as records
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
    Party,
    Phase,
    Policy,
    ProposeVeto,
    Role,
    RuleViolation,
    apply,
    awaiting,
    known_roles,
    legal_actions,
    new_game,
    opening_events,
    public_view,
    view_for,
)
from moderator.engine import events as ev

games = given(players=st.integers(min_value=5, max_value=10), seed=st.integers(min_value=0, max_value=2**63))
few = settings(max_examples=40, deadline=None)


def steps(players: int, seed: int) -> Iterator[tuple[GameState, Action, GameState, tuple[Event, ...]]]:
    """Every step of one random legal game: (before, action, after, events)."""
    state = new_game(players, seed=seed)
    rng = random.Random(seed)
    while state.phase is not Phase.GAME_OVER:
        seat = rng.choice(awaiting(state))
        action = rng.choice(legal_actions(state, seat))
        after, events = apply(state, action)
        yield state, action, after, events
        state = after


def every_action(players: int) -> Iterator[Action]:
    """Every action any seat could attempt at a table of this size, legal or not."""
    for seat in range(players):
        yield ProposeVeto(seat)
        for flag in (True, False):
            yield CastVote(seat, flag)
            yield AnswerVeto(seat, flag)
        for policy in Policy:
            yield DiscardPolicy(seat, policy)
            yield EnactPolicy(seat, policy)
        for target in range(players):
            yield NominateChancellor(seat, target)
            yield InvestigateLoyalty(seat, target)
            yield CallSpecialElection(seat, target)
            yield ExecutePlayer(seat, target)


@few
@games
def test_random_legal_play_always_ends(players: int, seed: int) -> None:
    """Random legal play reaches a winner within a bounded number of actions."""
    played = list(itertools.islice(steps(players, seed), 5000))
    assert len(played) < 5000
    after = played[-1][2]
    assert after.phase is Phase.GAME_OVER
    assert after.winner in (Party.LIBERAL, Party.FASCIST)
    assert not awaiting(after)


@few
@games
def test_all_seventeen_policies_are_accounted_for_after_every_step(players: int, seed: int) -> None:
    """Draw pile + discards + the hand in play + the track always hold exactly 6 L and 11 F."""
    for _, _, after, _ in steps(players, seed):
        cards = after.draw_pile + after.discard_pile + after.hand
        liberal = cards.count(Policy.LIBERAL) + after.liberal_policies
        fascist = cards.count(Policy.FASCIST) + after.fascist_policies
        assert (liberal, fascist) == (6, 11)


@few
@games
def test_election_tracker_is_never_above_two_when_a_nomination_starts(players: int, seed: int) -> None:
    """Chaos resolves inside the action that caused it, so every nomination starts at tracker 0, 1 or 2."""
    for _, _, after, _ in steps(players, seed):
        assert 0 <= after.election_tracker <= 2
        if after.phase is Phase.NOMINATION:
            assert after.president is not None and after.alive[after.president]


@settings(max_examples=15, deadline=None)
@games
def test_apply_accepts_exactly_the_legal_actions(players: int, seed: int) -> None:
    """Every action legal_actions offers is accepted by apply, and every other action is rejected unchanged."""
    all_actions = list(every_action(players))
    for before, _, _, _ in steps(players, seed):
        legal = {a for seat in range(players) for a in legal_actions(before, seat)}
        snapshot = {f.name: getattr(before, f.name) for f in fields(before)}
        for action in all_actions:
            if action in legal:
                apply(before, action)
            else:
                try:
                    apply(before, action)
                except RuleViolation:
                    pass
                else:
                    raise AssertionError(f"{action} was accepted but not offered")
        # Neither accepted nor rejected actions changed the state they were given.
        assert {f.name: getattr(before, f.name) for f in fields(before)} == snapshot


# Which public events may carry a policy, a role or a party, and why it is public then.
_PUBLIC_POLICY = {ev.PolicyEnacted}  # the enacted tile is face up
_PUBLIC_ROLE_OR_PARTY = {ev.GameEnded}  # every role is revealed at the end


def _values(event: Event) -> list[object]:
    out: list[object] = []
    for f in fields(event):
        value = getattr(event, f.name)
        stack = [value]
        while stack:
            item = stack.pop()
            if isinstance(item, tuple):
                stack.extend(item)
            else:
                out.append(item)
    return out


def _check_event_privacy(state: GameState, event: Event) -> None:
    """Secrets travel only in events whose audience is exactly the seat entitled to them."""
    audience = event.audience
    values = _values(event)
    if audience.everyone:
        if type(event) not in _PUBLIC_POLICY:
            assert not any(isinstance(v, Policy) for v in values), event
        if type(event) not in _PUBLIC_ROLE_OR_PARTY:
            assert not any(isinstance(v, (Role, Party)) for v in values), event
        return
    match event:
        case ev.RoleDealt(seat=seat, known=known):
            assert audience.seats == {seat}
            assert known == known_roles(state.roles, seat)
        case ev.VoteCast(seat=seat):
            assert audience.seats == {seat}
        case ev.PoliciesDrawn(president=seat) | ev.TopPoliciesSeen(president=seat):
            assert audience.seats == {seat}
        case ev.PartyMembershipSeen(president=seat, target=target, party=party):
            assert audience.seats == {seat}
            assert party is state.roles[target].party
        case ev.PolicyDiscarded(seat=seat) | ev.PoliciesReceived(chancellor=seat):
            assert audience.seats == {seat}
        case ev.DrawPileShuffled():
            assert not audience.seats
        case _:
            raise AssertionError(f"unexpected private event {event}")


def _check_view_privacy(state: GameState, seat: int) -> None:
    """view_for names only what this seat may know (checklist B16)."""
    view = view_for(state, seat)
    over = state.phase is Phase.GAME_OVER
    assert view.role is state.roles[seat]
    assert view.known_roles == known_roles(state.roles, seat)
    assert (view.public.roles is not None) == over
    assert (view.public.truth is not None) == over
    holder = (state.phase is Phase.LEGISLATIVE_PRESIDENT and seat == state.president) or (
        state.phase in (Phase.LEGISLATIVE_CHANCELLOR, Phase.VETO) and seat == state.chancellor
    )
    assert view.hand == (state.hand if holder else ())
    assert {t for t, _ in view.investigations} == {t for p, t in state.investigations if p == seat}
    assert len(view.peeks) == sum(1 for p, _ in state.history.peeks if p == seat)
    for session in view.sessions:
        assert seat in (session.president, session.chancellor)
        if seat != session.president:
            assert session.drawn is None and session.discarded is None
    if state.phase is Phase.ELECTION:
        assert view.vote == state.votes[seat]
    # The public part of the view is the same for everyone.
    assert view.public == public_view(state)


@few
@games
def test_no_view_or_event_reveals_what_its_seat_may_not_know(players: int, seed: int) -> None:
    """Checklist B16: every secret reaches only its entitled seat, through views and events alike."""
    first = new_game(players, seed=seed)
    for event in opening_events(first):
        _check_event_privacy(first, event)
    for _, _, after, events in steps(players, seed):
        for event in events:
            _check_event_privacy(after, event)
        for seat in range(players):
            _check_view_privacy(after, seat)


@few
@games
def test_records_round_trip_to_the_same_state(players: int, seed: int) -> None:
    """Any game can be turned into a record, and replaying that record gives back the same state."""
    names = [f"Player {i + 1}" for i in range(players)]
    actions: list[Action] = []
    state = new_game(players, seed=seed)
    for _, action, after, _ in steps(players, seed):
        actions.append(action)
        state = after
    text = records.dumps(records.to_json(names, state, actions))
    replayed = records.replay(records.loads(text))
    assert replayed.error is None
    assert replayed.applied == len(actions)
    assert replayed.state == state


@few
@games
def test_a_half_played_game_round_trips_too(players: int, seed: int) -> None:
    """A record taken mid-game replays to the same state, prescribed reshuffles included."""
    names = [f"P{i + 1}" for i in range(players)]
    actions: list[Action] = []
    state = new_game(players, seed=seed)
    for i, (_, action, after, _) in enumerate(steps(players, seed)):
        actions.append(action)
        state = after
        if i == 60:
            break
    replayed = records.replay(records.loads(records.dumps(records.to_json(names, state, actions))))
    assert replayed.state == state
