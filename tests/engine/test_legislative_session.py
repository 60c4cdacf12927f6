"""B8. The legislative session (items 54-60)."""

from __future__ import annotations

import pytest

from moderator.engine import (
    DiscardPolicy,
    EnactPolicy,
    Phase,
    ProposeVeto,
    apply,
    awaiting,
    legal_actions,
    public_view,
    view_for,
)
from moderator.engine import events as ev
from moderator.engine.errors import NotTheChancellor, NotThePresident, OutOfTurn, PolicyNotInHand, RuleViolation

from .scenario import (
    F,
    L,
    discard,
    elect,
    enact,
    govern,
    investigate,
    kinds,
    of_type,
    one,
    play,
    public,
    rigged,
)


def test_president_discards_one_of_three_and_the_chancellor_gets_the_other_two():
    """Item 54: the President holds [F, L, F] and discards the L: the Chancellor receives exactly F, F, and the
    President's discard goes face down to the discard pile."""
    state = rigged(5, deck="FLF")
    state, _ = play(state, elect(1))
    assert state.hand == (F, L, F) and view_for(state, 0).hand == (F, L, F)
    state, events = play(state, discard("L"))
    assert one(events, ev.PoliciesReceived).policies == (F, F)
    assert state.hand == (F, F) and view_for(state, 1).hand == (F, F)
    assert view_for(state, 0).hand == () and view_for(state, 0).passed == (F, F)
    assert state.discard_pile == (L,)
    assert state.phase is Phase.LEGISLATIVE_CHANCELLOR and awaiting(state) == (1,)


def test_chancellor_enacts_one_policy_publicly_and_discards_the_other_secretly():
    """Item 55: the Chancellor enacts the L and discards the F: the enactment is public, the discard is known
    only to the Chancellor."""
    state = rigged(5, deck="FLF")
    state, events = play(state, elect(1), discard("F"), enact("L"))
    enacted = one(events, ev.PolicyEnacted)
    assert enacted == ev.PolicyEnacted(L, False, 1, 0) and enacted.audience.everyone
    chancellor_discard = of_type(events, ev.PolicyDiscarded)[-1]
    assert chancellor_discard == ev.PolicyDiscarded(1, F)
    assert [s for s in range(5) if chancellor_discard.audience.includes(s)] == [1]
    assert state.liberal_policies == 1 and state.discard_pile == (F, F)
    assert public_view(state).sessions[-1].enacted is L


@pytest.mark.parametrize("deck", ["LFF", "FLF", "FFL"])
def test_chancellor_receives_both_cards_in_one_event_in_a_canonical_order(deck):
    """Item 56 (our ruling): the two policies are handed over together, in one private event to the Chancellor,
    in a fixed order (F before L) whatever order the President drew them in, so order carries no signal."""
    state = rigged(5, deck=deck)
    state, _ = play(state, elect(1))
    state, events = play(state, discard("F"))
    received = of_type(events, ev.PoliciesReceived)
    assert len(received) == 1
    assert received[0].policies == (F, L)
    assert [s for s in range(5) if received[0].audience.includes(s)] == [1]
    handed = one(events, ev.PoliciesHandedOver)
    assert handed.audience.everyone and (handed.president, handed.chancellor) == (0, 1)


def test_legislative_choices_offer_no_random_option():
    """Item 57 (our ruling): the President and Chancellor are only ever offered a named policy they hold
    (plus veto when unlocked); there is no "random" choice, and each distinct card is one choice."""
    state = rigged(7, deck="FLF" "FFF", fascist=5)
    state, _ = play(state, elect(1))
    assert legal_actions(state, 0) == (DiscardPolicy(0, F), DiscardPolicy(0, L))
    state, _ = play(state, discard("F"))
    assert legal_actions(state, 1) == (EnactPolicy(1, F), EnactPolicy(1, L), ProposeVeto(1))
    assert all(legal_actions(state, seat) == () for seat in range(7) if seat != 1)
    state = rigged(7, deck="FFF" "FFF", fascist=4)
    state, _ = play(state, elect(1))
    assert legal_actions(state, 0) == (DiscardPolicy(0, F),)


def test_claims_are_never_checked_against_the_truth_during_play():
    """Item 58: the engine keeps what was drawn and discarded to the government alone: the table's view and
    other players' views hold only what was enacted, so nothing can confirm or contradict a claim until the
    game is over."""
    state = rigged(5, deck="FLF" "FFL")
    state, _ = play(state, elect(1), discard("L"), enact("F"))
    view = public_view(state)
    assert view.truth is None
    assert [(s.president, s.chancellor, s.enacted) for s in view.sessions] == [(0, 1, F)]
    assert view_for(state, 2).sessions == ()
    assert view_for(state, 0).sessions[0].drawn is not None
    assert view_for(state, 1).sessions[0].drawn is None and view_for(state, 1).sessions[0].discarded is None
    for seat in range(5):
        assert view_for(state, seat).public == view


AFTER_SESSION = "LFF" "LFF" "FFF" "FFF" "LL"
"""7p from 2 L + 1 F: sessions enact L3, L4, F2 (investigate) and F3 (special election), leaving 2 cards."""


def test_after_a_session_the_reshuffle_check_comes_before_the_power_and_the_new_round():
    """Items 59, 102: the enactment, then the reshuffle check, then the Executive Action; with no power, the
    reshuffle check and then the next nomination."""
    state = rigged(7, deck=AFTER_SESSION, liberal=2, fascist=1)
    state, events = play(state, govern(None, "L"), govern(None, "L"), govern(None, "F"))
    assert not of_type(events, ev.DeckReshuffled)
    assert kinds(events)[-1] == "PresidentialPowerGranted"
    state, _ = play(state, investigate(6))
    state, events = play(state, govern(None, "F"))
    names = kinds(events)
    assert names.index("PolicyEnacted") < names.index("DeckReshuffled") < names.index("PresidentialPowerGranted")
    assert names[-1] == "PresidentialPowerGranted" and "PresidentialCandidateChosen" not in names
    assert state.phase is Phase.SPECIAL_ELECTION and len(state.draw_pile) == 2 + 8


def test_only_the_president_then_the_chancellor_act_in_the_session():
    """Item 60: a Chancellor action before the President's discard is rejected; a repeated discard or
    enactment is rejected; only the office holders may act, only with cards they hold; a rejected action
    changes nothing."""
    state = rigged(5, deck="FFF" "LLF")
    state, _ = play(state, elect(1))
    error: type[RuleViolation]
    for action, error in (
        (EnactPolicy(1, F), OutOfTurn),
        (ProposeVeto(1), OutOfTurn),
        (DiscardPolicy(1, F), NotThePresident),
        (DiscardPolicy(2, F), NotThePresident),
        (DiscardPolicy(0, L), PolicyNotInHand),
    ):
        with pytest.raises(error):
            apply(state, action)
    state, _ = play(state, discard("F"))
    snapshot = (state.hand, state.discard_pile, state.phase, state.step)
    for action, error in (
        (DiscardPolicy(0, F), OutOfTurn),
        (EnactPolicy(0, F), NotTheChancellor),
        (EnactPolicy(2, F), NotTheChancellor),
        (EnactPolicy(1, L), PolicyNotInHand),
    ):
        with pytest.raises(error):
            apply(state, action)
    assert (state.hand, state.discard_pile, state.phase, state.step) == snapshot
    state, events = play(state, enact("F"))
    assert one(events, ev.PolicyEnacted).policy is F
    with pytest.raises(OutOfTurn):
        apply(state, EnactPolicy(1, F))
    assert public(events)


def test_a_card_named_by_its_letter_enacts_that_card() -> None:
    """Item 55: the Chancellor enacts the card chosen, even when it is named by its record letter."""
    state, _ = play(rigged(5, deck="FLF" + "F" * 9 + "L" * 5), elect(1))
    # Both "F"s below are a record's letter, not a Policy: what a record hands the engine (this test's point).
    state, _ = apply(state, DiscardPolicy(0, "F"))  # type: ignore[arg-type]
    assert state.hand == (F, L)
    state, _ = apply(state, EnactPolicy(1, "F"))  # type: ignore[arg-type]
    assert (state.fascist_policies, state.liberal_policies) == (1, 0)
    assert state.discard_pile.count(L) == 1
