"""B9. Veto power (items 61-70)."""

from __future__ import annotations

import pytest

from moderator.engine import AnswerVeto, EnactPolicy, Phase, Policy, ProposeVeto, apply, legal_actions, view_for
from moderator.engine import events as ev
from moderator.engine.errors import (
    NotTheChancellor,
    NotThePresident,
    OutOfTurn,
    VetoAlreadyRefused,
    VetoNotUnlocked,
)

from .scenario import (
    F,
    L,
    answer_veto,
    card_count,
    chaos,
    discard,
    elect,
    enact,
    execute,
    govern,
    keep,
    kinds,
    of_type,
    one,
    play,
    propose_veto,
    public,
    rigged,
    special_election,
    values,
    veto_at_tracker_two_with_small_deck,
)


def test_veto_unlocks_only_for_sessions_after_the_fifth_fascist_policy():
    """Items 61, 103 (B18 #10): with 4 F the session that enacts F5 offers no veto; F5 unlocks veto (publicly)
    and grants its execution; the next session offers veto."""
    state = rigged(7, deck="FFF" "FLF", fascist=4)
    state, events = play(state, elect(1))
    assert not one(events, ev.LegislativeSessionStarted).veto_unlocked
    state, events = play(state, discard("F"))
    assert not one(events, ev.PoliciesReceived).veto_allowed
    assert ProposeVeto(1) not in legal_actions(state, 1) and not view_for(state, 1).may_veto
    with pytest.raises(VetoNotUnlocked):
        apply(state, ProposeVeto(1))
    state, events = play(state, enact("F"))
    assert one(events, ev.VetoUnlocked).audience.everyone
    assert one(events, ev.PresidentialPowerGranted).power.value == "execution"
    state, _ = play(state, execute(4))
    state, events = play(state, elect(2))
    assert one(events, ev.LegislativeSessionStarted).veto_unlocked
    state, events = play(state, discard("F"))
    assert one(events, ev.PoliciesReceived).veto_allowed
    assert ProposeVeto(2) in legal_actions(state, 2) and view_for(state, 2).may_veto


def test_chaos_fifth_fascist_policy_unlocks_veto_without_an_execution():
    """Items 62, 43, 75 (B18 #9): 4 F on the board, chaos enacts F5: no execution, veto is unlocked, and the
    next session offers it."""
    state = rigged(7, deck="F" "FLF", fascist=4)
    state, events = play(state, chaos())
    assert one(events, ev.PolicyEnacted) == ev.PolicyEnacted(F, True, 0, 5)
    assert of_type(events, ev.VetoUnlocked)
    assert not of_type(events, ev.PresidentialPowerGranted) and state.phase is Phase.NOMINATION
    state, events = play(state, elect(), discard("F"))
    assert one(events, ev.PoliciesReceived).veto_allowed


def test_chancellor_proposes_veto_and_president_decides():
    """Item 63: only the Chancellor may propose, only after receiving the two policies; only the President
    answers; after a refusal the Chancellor chooses which card to enact."""
    state = rigged(7, deck="FLF" "FLF", fascist=5)
    state, _ = play(state, elect(1))
    with pytest.raises(OutOfTurn):  # not at the President's discard
        apply(state, ProposeVeto(1))
    with pytest.raises(OutOfTurn):
        apply(state, AnswerVeto(0, True))
    state, _ = play(state, discard("F"))
    with pytest.raises(NotTheChancellor):  # the President cannot start a veto
        apply(state, ProposeVeto(0))
    with pytest.raises(OutOfTurn):  # nothing to answer yet
        apply(state, AnswerVeto(0, True))
    state, events = play(state, propose_veto())
    assert state.phase is Phase.VETO
    assert legal_actions(state, 0) == (AnswerVeto(0, True), AnswerVeto(0, False))
    assert legal_actions(state, 1) == ()
    with pytest.raises(NotThePresident):
        apply(state, AnswerVeto(1, True))
    with pytest.raises(OutOfTurn):  # no enacting while the President decides
        apply(state, EnactPolicy(1, F))
    state, events = play(state, answer_veto(False))
    assert state.phase is Phase.LEGISLATIVE_CHANCELLOR
    assert legal_actions(state, 1) == (EnactPolicy(1, F), EnactPolicy(1, L))
    state, events = play(state, enact("L"))
    assert one(events, ev.PolicyEnacted).policy is L


def test_accepted_veto_at_tracker_two_causes_chaos_at_once():
    """Items 64, 42: tracker 2, the government vetoes: the tracker reaches 3 and chaos enacts the top policy
    in the same action, after the reshuffle check."""
    state = rigged(7, deck="FLF" "L", fascist=5, tracker=2)
    state, _ = play(state, elect(1), keep("L"), propose_veto())
    state, events = play(state, answer_veto(True))
    assert kinds(public(events))[:2] == ["VetoAnswered", "ElectionTrackerAdvanced"]
    assert one(events, ev.ElectionTrackerAdvanced).election_tracker == 3
    assert one(events, ev.PolicyEnacted) == ev.PolicyEnacted(L, True, 1, 5)
    assert state.election_tracker == 0 and state.phase is Phase.NOMINATION


def test_veto_small_deck_scenario_end_to_end():
    """Items 64, 12, 31 (B18 #3, #4): 7p with 5 F, a deck of 4, tracker 2: elected, veto, 1 card left,
    reshuffle, chaos enacts the top of the new deck with no power, term limits cleared, tracker 0; the next
    President may renominate the vetoing Chancellor."""
    state, _ = veto_at_tracker_two_with_small_deck()
    chancellor = state.chancellor
    state, events = play(state, propose_veto(), answer_veto(True))
    assert one(events, ev.DeckReshuffled).draw_pile == 12
    assert one(events, ev.PolicyEnacted).policy is L
    assert of_type(events, ev.TermLimitsCleared) and not of_type(events, ev.PresidentialPowerGranted)
    assert state.election_tracker == 0 and state.last_chancellor is None
    assert card_count(state) == (6, 11)
    state, events = play(state, elect(chancellor))
    assert one(events, ev.ElectionDecided).elected


def test_only_one_veto_request_per_session():
    """Item 65 (B18 #16): the veto is proposed and refused; the veto option is gone for the rest of the session
    and a second proposal is rejected; the next session may veto again."""
    state = rigged(7, deck="FLF" "FLF", fascist=5)
    state, events = play(state, elect(1), discard("F"), propose_veto(), answer_veto(False))
    received = of_type(events, ev.PoliciesReceived)
    assert [r.veto_allowed for r in received] == [True, False]
    assert ProposeVeto(1) not in legal_actions(state, 1) and not view_for(state, 1).may_veto
    with pytest.raises(VetoAlreadyRefused):
        apply(state, ProposeVeto(1))
    state, events = play(state, enact("L"))
    state, events = play(state, elect(2), discard("F"))
    assert ProposeVeto(2) in legal_actions(state, 2)


def test_veto_grants_no_power_and_resets_nothing():
    """Item 66: a veto in a 7p game with 5 F enacts nothing: no execution, no policy, and the tracker goes up
    rather than being reset."""
    state = rigged(7, deck="FFF", fascist=5, tracker=1)
    state, events = play(state, elect(1), discard("F"), propose_veto(), answer_veto(True))
    assert not of_type(events, ev.PolicyEnacted) and not of_type(events, ev.PresidentialPowerGranted)
    assert state.fascist_policies == 5 and state.election_tracker == 2
    assert state.phase is Phase.NOMINATION and state.president == 1
    assert state.sessions[-1].enacted is None and state.sessions[-1].veto_proposed


def test_vetoed_cards_go_to_the_discard_pile():
    """Item 67: after a veto all three drawn cards are in the discard pile and the 17 cards are all there."""
    state = rigged(7, deck="FLF", fascist=5)
    state, _ = play(state, elect(1), discard("F"), propose_veto(), answer_veto(True))
    assert sorted(state.discard_pile) == [F, F, L]
    assert state.hand == ()
    assert card_count(state) == (6, 11)


def test_veto_during_a_special_election_detour_returns_to_the_left_of_the_caller():
    """Items 69, 85: the special government vetoes and the rotation still resumes left of the caller. On the
    standard boards veto (5 F) and special election (F3) cannot meet, so the custom position is built from a
    real special election by putting 5 F on the track."""
    state = rigged(8, deck="FFF" "FLF", first=0, fascist=2)
    state, _ = play(state, govern(1, "F"))
    assert state.phase is Phase.SPECIAL_ELECTION
    state = state.replace(fascist_policies=5)
    state, events = play(state, special_election(4), elect(2), discard("F"), propose_veto(), answer_veto(True))
    assert one(events, ev.VetoAnswered).accepted
    assert state.president == 1 and state.election_tracker == 1


def test_veto_request_and_answer_are_public_and_reveal_no_card():
    """Item 70: "Chancellor X requests a veto", "President Y agrees/refuses" and the tracker are public; no
    public event of the veto names a card."""
    state = rigged(7, deck="FLF" "FLF", fascist=5)
    state, first = play(state, elect(1), discard("F"), propose_veto(), answer_veto(False), enact("L"))
    state, second = play(state, elect(2), discard("F"), propose_veto(), answer_veto(True))
    assert one(first, ev.VetoProposed) == ev.VetoProposed(1)
    assert one(first, ev.VetoAnswered) == ev.VetoAnswered(0, False)
    assert one(second, ev.VetoProposed) == ev.VetoProposed(2)
    assert one(second, ev.VetoAnswered) == ev.VetoAnswered(1, True)
    assert one(second, ev.ElectionTrackerAdvanced).election_tracker == 1
    for event in of_type(first + second, ev.VetoProposed) + of_type(first + second, ev.VetoAnswered):
        assert event.audience.everyone
    for shown in public(second):
        assert not any(isinstance(v, Policy) for v in values(shown)), shown
