"""B12. Call Special Election (items 82-89)."""

from __future__ import annotations

import pytest

from moderator.engine import CallSpecialElection, Phase, Power, apply, legal_actions
from moderator.engine import events as ev
from moderator.engine.errors import CannotTargetSelf, TargetIsExecuted

from .scenario import execute, govern, kinds, nominees, of_type, one, play, reject, rigged, special_election, targets


def calling(players=7, first=0, chancellor=1, deck="FFF", **board):
    """A game whose President (``first``) has just enacted F3 with ``chancellor`` and must call the election."""
    state = rigged(players, deck=deck, first=first, fascist=2, **board)
    state, _ = play(state, govern(chancellor, "F"))
    assert state.phase is Phase.SPECIAL_ELECTION and state.president == first
    return state


def test_special_election_target_is_any_other_living_player():
    """Items 82, 96: the President cannot choose themself or an executed player, and may choose anyone else.
    (Nobody is dead at F3 on the standard boards; the position puts a dead player on the table.)"""
    state = calling(dead=(5,))
    with pytest.raises(CannotTargetSelf):
        apply(state, CallSpecialElection(0, 0))
    with pytest.raises(TargetIsExecuted):
        apply(state, CallSpecialElection(0, 5))
    assert targets(state, 0) == {1, 2, 3, 4, 6}


def test_term_limited_player_may_be_chosen_as_special_president():
    """Item 83: the Chancellor who just enacted F3 is term-limited, yet can be the special President."""
    state = calling(chancellor=3)
    assert state.last_chancellor == 3
    state, events = play(state, special_election(3))
    assert state.president == 3 and state.phase is Phase.NOMINATION
    assert one(events, ev.PresidentialCandidateChosen) == ev.PresidentialCandidateChosen(3, True)


def test_special_president_nominates_under_the_normal_term_limits():
    """Item 84: the special President may not nominate the last elected President or Chancellor (7 alive)."""
    state = calling(chancellor=1)
    state, _ = play(state, special_election(4))
    assert nominees(state, 4) == {2, 3, 5, 6}


def test_rotation_resumes_left_of_the_caller_whether_the_special_government_passes_or_fails():
    """Item 85: 8p, P3 calls a special election on P7: after a failed special government, and separately after
    a successful one, the next candidate is P4."""
    for step in (reject(0), govern(0, "L")):
        state = calling(players=8, first=2, chancellor=1, deck="FFF" "LFF")
        state, _ = play(state, special_election(6), step)
        assert state.president == 3


def test_next_in_line_special_president_presides_twice():
    """Item 86: 7p, P1 picks P2 (next in line): P2 presides the special round and then the regular one; then
    P3."""
    state = calling(first=0, chancellor=3, deck="FFF" "LFF" "LFF")
    state, _ = play(state, special_election(1))
    presidents = [state.president]
    for _ in range(2):
        state, _ = play(state, govern(None, "L"))
        presidents.append(state.president)
    assert presidents == [1, 1, 2]


def test_special_president_uses_the_power_of_the_policy_their_government_enacts():
    """Items 87, 72: 7p, the special President's government enacts F4; the special President, not the
    caller, must execute."""
    state = calling(first=0, chancellor=1, deck="FFF" "FFF")
    state, _ = play(state, special_election(4))
    state, events = play(state, govern(2, "F"))
    assert one(events, ev.PresidentialPowerGranted) == ev.PresidentialPowerGranted(4, Power.EXECUTION)
    assert legal_actions(state, 0) == ()
    state, events = play(state, execute(3))
    assert one(events, ev.PlayerExecuted) == ev.PlayerExecuted(4, 3)
    assert state.president == 1


def test_special_election_does_not_touch_the_tracker():
    """Item 88: the F3 reset the tracker to 0, calling the special election leaves it there and the special
    government's failure brings it only to 1."""
    state = rigged(7, deck="FFF", first=0, fascist=2, tracker=2)
    state, _ = play(state, govern(1, "F"))
    assert state.election_tracker == 0
    state, events = play(state, special_election(4))
    assert state.election_tracker == 0 and not of_type(events, ev.ElectionTrackerAdvanced)
    state, _ = play(state, reject())
    assert state.election_tracker == 1


def test_special_election_is_announced_publicly():
    """Item 89: "President X calls a special election: Y is the next Presidential Candidate" is public."""
    state = calling()
    state, events = play(state, special_election(5))
    assert kinds(events) == ["SpecialElectionCalled", "PresidentialCandidateChosen"]
    called = one(events, ev.SpecialElectionCalled)
    assert called == ev.SpecialElectionCalled(0, 5) and called.audience.everyone
    chosen = one(events, ev.PresidentialCandidateChosen)
    assert chosen.special_election and chosen.audience.everyone
