"""B5. Voting (items 32-37)."""

from __future__ import annotations

import pytest

from moderator.engine import CastVote, Phase, apply, awaiting, legal_actions, public_view, view_for
from moderator.engine import events as ev
from moderator.engine.errors import ExecutedPlayersCannotAct, OutOfTurn

from .scenario import all_vote, elect, keep, kinds, nominate, of_type, one, play, public, reject, rigged, vote


def test_every_living_player_votes_including_the_candidates():
    """Item 32: the vote waits for every living player, the two candidates included, and no one else."""
    state = rigged(7, dead=(5,), fascist=4)
    state, _ = play(state, nominate(1))
    assert awaiting(state) == (0, 1, 2, 3, 4, 6)
    state, events = play(state, *(CastVote(seat, True) for seat in (2, 3, 4, 6)))
    assert state.phase is Phase.ELECTION and awaiting(state) == (0, 1)
    state, events = play(state, CastVote(0, True), CastVote(1, False))
    decided = one(events, ev.ElectionDecided)
    assert decided.votes == ((0, True), (1, False), (2, True), (3, True), (4, True), (6, True))


def test_dead_players_vote_is_rejected_and_changes_nothing():
    """Items 32, 96: an executed player's vote (e.g. a stale button press) is rejected and the state is
    unchanged; the dead seat is offered no action and the vote completes without it."""
    state = rigged(7, dead=(5,), fascist=4)
    state, _ = play(state, nominate(1))
    with pytest.raises(ExecutedPlayersCannotAct):
        apply(state, CastVote(5, True))
    assert legal_actions(state, 5) == ()
    assert state.votes[5] is None
    state, events = play(state, all_vote(True))
    assert 5 not in dict(one(events, ev.ElectionDecided).votes)


def test_votes_are_secret_until_the_last_vote_then_public_name_by_name():
    """Item 33: until the last living player votes, each vote goes only to its voter and the table sees only
    how many have voted; the last vote publishes every seat's Ja or Nein together."""
    state = rigged(5)
    state, _ = play(state, nominate(2))
    choices = {0: True, 1: False, 2: True, 3: False}
    for seat, ja in choices.items():
        state, events = apply(state, CastVote(seat, ja))
        cast = one(events, ev.VoteCast)
        assert cast.audience.includes(seat) and not cast.audience.everyone
        assert all(not cast.audience.includes(other) for other in range(5) if other != seat)
        assert not of_type(events, ev.ElectionDecided)
        progress = one(public(events), ev.VoteProgressed)
        assert progress.votes_cast == seat + 1 and progress.voters == 5
        view = public_view(state)
        assert view.votes_cast == seat + 1 and view.awaiting == ()
        assert not hasattr(view, "votes")
        assert view_for(state, 4).vote is None and view_for(state, seat).vote is ja
    state, events = apply(state, CastVote(4, True))
    decided = one(events, ev.ElectionDecided)
    assert decided.audience.everyone
    assert decided.votes == ((0, True), (1, False), (2, True), (3, False), (4, True))
    assert decided.elected


@pytest.mark.parametrize(
    "players, dead, ja, elected",
    [
        (6, (), (0, 1, 2), False),  # 3-3
        (5, (), (0, 1), False),  # 2-3
        (5, (), (0, 1, 2), True),  # 3-2
        (8, (7,), (0, 1, 2, 3), True),  # 4-3 with one dead
        (10, (8, 9), (0, 1, 2, 3), False),  # 4-4 with two dead
        (10, (8, 9), (0, 1, 2, 3, 4), True),  # 5-3 with two dead
        (10, (), (0, 1, 2, 3, 4), False),  # 5-5
    ],
)
def test_tie_vote_fails_and_a_strict_majority_of_the_living_elects(players, dead, ja, elected):
    """Items 34, 96: a tie fails; a strict majority of Ja among living players elects (6p 3-3 fails; 8p with
    one dead 4-3 passes; 10p with two dead 4-4 fails)."""
    roles = {8: "LLLLLFHF", 10: "LLLLLLFHFF"}.get(players)  # the dead seats are not Hitler
    state = rigged(players, roles, dead=dead, fascist=5 if dead else 0)
    state, events = play(state, nominate(1), vote(*ja))
    assert one(events, ev.ElectionDecided).elected is elected
    assert (state.phase is Phase.LEGISLATIVE_PRESIDENT) is elected


def test_failed_votes_advance_the_tracker_by_one():
    """Item 35: failed votes take the election tracker 0 -> 1 -> 2, each announced publicly."""
    state = rigged(7)
    assert state.election_tracker == 0
    for expected in (1, 2):
        state, events = play(state, reject())
        assert state.election_tracker == expected
        advanced = one(events, ev.ElectionTrackerAdvanced)
        assert advanced.election_tracker == expected and advanced.audience.everyone


def test_successful_election_does_not_reset_the_tracker():
    """Item 36: with the tracker at 2 a government is elected: the tracker stays 2 through the session until
    a policy is enacted."""
    state = rigged(7, deck="LFF", tracker=2)
    state, events = play(state, elect(1))
    assert one(events, ev.ElectionDecided).elected
    assert not of_type(events, ev.ElectionTrackerAdvanced)
    assert state.election_tracker == 2 and public_view(state).election_tracker == 2
    state, _ = play(state, keep("L"))
    assert state.election_tracker == 2


def test_votes_may_change_until_the_last_vote_is_in_and_then_the_vote_is_closed():
    """Item 37 (our ruling): a voter may change their vote until the last living player votes; the latest vote
    counts; afterwards no vote is accepted, and the only choices ever offered are Ja and Nein."""
    state = rigged(5)
    state, _ = play(state, nominate(1))
    state, events = apply(state, CastVote(0, True))
    assert legal_actions(state, 0) == (CastVote(0, True), CastVote(0, False))
    state, events = apply(state, CastVote(0, False))
    assert one(events, ev.VoteCast).changed
    assert one(events, ev.VoteProgressed).votes_cast == 1
    state, played = play(state, CastVote(1, True), CastVote(2, True), CastVote(3, True), CastVote(4, False))
    decided = one(played, ev.ElectionDecided)
    assert dict(decided.votes)[0] is False and decided.elected  # 3 Ja (1, 2, 3) of 5
    with pytest.raises(OutOfTurn):
        apply(state, CastVote(0, True))
    assert kinds(played).count("ElectionDecided") == 1
