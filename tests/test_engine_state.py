"""The game state is a value however the engine builds it for speed: shared core, vote masks, fast History."""

from __future__ import annotations

import dataclasses

import pytest

from moderator.engine import CastVote, History, NominateChancellor, Phase, Policy, apply, new_game
from moderator.engine.rules import _history


def test_the_fast_history_constructor_gives_the_same_frozen_value_as_history() -> None:
    """The engine's History builder equals History(...) field by field and stays frozen."""
    fields = ((), ((0, 3),), ((1, (Policy.FASCIST,) * 3),), (2,), ((Policy.LIBERAL,),))
    built = _history(*fields)
    assert built == History(*fields)
    assert (built.sessions, built.investigations, built.peeks, built.not_hitler, built.reshuffles) == fields
    with pytest.raises(dataclasses.FrozenInstanceError):
        built.not_hitler = ()  # type: ignore[misc]  # assigning to a frozen field is what must fail here


def test_votes_read_from_the_masks_show_each_seats_ballot_and_who_has_not_voted() -> None:
    """``votes`` gives True, False or None per seat during the election, and all None once it is decided."""
    state, _ = apply(new_game(5, seed=1, first_president=0), NominateChancellor(0, 1))
    state, _ = apply(state, CastVote(2, True))
    state, _ = apply(state, CastVote(3, False))
    assert state.votes == (None, None, True, False, None)
    state, _ = apply(state, CastVote(3, True))
    assert state.votes == (None, None, True, True, None)
    for seat in (0, 1, 4):
        state, _ = apply(state, CastVote(seat, False))
    assert state.phase is not Phase.ELECTION and state.votes == (None,) * 5


def test_a_vote_that_is_not_the_last_shares_the_core_and_leaves_the_given_state_alone() -> None:
    """A non-final vote changes only the ballots and the step; the given state still shows no vote."""
    state, _ = apply(new_game(5, seed=1, first_president=0), NominateChancellor(0, 1))
    after, _ = apply(state, CastVote(2, True))
    assert after.core is state.core
    assert after.step == state.step + 1 == 2
    assert state.votes == (None,) * 5 and after.votes[2] is True


def test_replace_changes_only_the_named_fields() -> None:
    """``GameState.replace`` rigs a state: named core and ballot fields change, the rest and the input do not."""
    state = new_game(7, seed=3)
    rigged = state.replace(fascist_policies=4, election_tracker=2, step=9)
    assert (rigged.fascist_policies, rigged.election_tracker, rigged.step) == (4, 2, 9)
    assert (state.fascist_policies, state.election_tracker, state.step) == (0, 0, 0)
    assert rigged.roles == state.roles and rigged.draw_pile == state.draw_pile and rigged.ja == state.ja
    assert rigged.replace(fascist_policies=0, election_tracker=0, step=0) == state
