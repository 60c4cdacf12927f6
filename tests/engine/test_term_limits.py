"""B4. Nomination eligibility and term limits (items 23-31)."""

from __future__ import annotations

import pytest

from moderator.engine import (
    NominateChancellor,
    Phase,
    apply,
    eligible_chancellors,
    public_view,
)
from moderator.engine import events as ev
from moderator.engine.errors import (
    CannotNominateSelf,
    IneligibleChancellor,
    NotThePresident,
    TargetIsExecuted,
    UnknownSeat,
)

from .scenario import (
    answer_veto,
    chancellor,
    chaos,
    elect,
    execute,
    govern,
    keep,
    nominate,
    one,
    play,
    president,
    propose_veto,
    reject,
    rigged,
    special_election,
    veto_at_tracker_two_with_small_deck,
)
from .scenario import nominees as legal_nominees


def assert_rejected(state, action, error):
    with pytest.raises(error):
        apply(state, action)


def nominees(state) -> set[int]:
    """The Chancellors the current candidate may nominate, by legal_actions (and eligible_chancellors agrees)."""
    offered = legal_nominees(state, president(state))
    assert offered == set(eligible_chancellors(state)) == set(public_view(state).eligible_chancellors)
    return offered


def test_chancellor_candidate_must_be_another_living_player():
    """Items 23, 96: the candidate cannot nominate themselves or an executed player (or a seat that does not
    exist); nobody but the candidate may nominate."""
    state = rigged(7, dead=(3,), fascist=4)
    assert_rejected(state, NominateChancellor(0, 0), CannotNominateSelf)
    assert_rejected(state, NominateChancellor(0, 3), TargetIsExecuted)
    assert_rejected(state, NominateChancellor(0, 7), UnknownSeat)
    assert_rejected(state, NominateChancellor(1, 2), NotThePresident)
    assert nominees(state) == {1, 2, 4, 5, 6}


def test_last_elected_president_and_chancellor_are_term_limited():
    """Item 24: P1 (President) and P2 (Chancellor) are elected; the next President, P2... cannot nominate P1
    and P3 cannot nominate P1 or P2 either."""
    state = rigged(7, deck="LFFLFF")
    state, _ = play(state, govern(1, "L"))
    assert state.president == 1
    assert nominees(state) == {2, 3, 4, 5, 6}
    assert_rejected(state, NominateChancellor(1, 0), IneligibleChancellor)
    state, _ = play(state, reject(2))
    assert state.president == 2
    assert nominees(state) == {3, 4, 5, 6}
    assert_rejected(state, NominateChancellor(2, 0), IneligibleChancellor)
    assert_rejected(state, NominateChancellor(2, 1), IneligibleChancellor)
    assert public_view(state).term_limited == (0, 1)


def test_failed_nominations_do_not_change_term_limits():
    """Item 25 (B18 #14): A/B (P1/P4) elected; C (P2) nominates D (P5) and fails; E (P3) cannot nominate A or B
    but can nominate D; and after a second failure A and B are still blocked."""
    state = rigged(7, deck="LFF")
    state, _ = play(state, govern(3, "L"), reject(4))
    assert state.president == 2
    assert nominees(state) == {1, 4, 5, 6}
    state, _ = play(state, reject(4))
    assert state.president == 3
    assert nominees(state) == {1, 2, 4, 5, 6} - {3}
    assert 0 not in nominees(state)


def test_term_limits_bind_only_the_chancellorship_so_the_last_chancellor_presides_normally():
    """Item 26: P2 was just Chancellor, is next in rotation, and presides: nominates and governs as usual."""
    state = rigged(5, deck="LFFLFF")
    state, _ = play(state, govern(1, "L"))
    assert state.president == 1 and state.last_chancellor == 1
    state, events = play(state, govern(2, "L"))
    assert one(events, ev.ElectionDecided).elected
    assert (state.last_president, state.last_chancellor) == (1, 2)


def test_term_limits_with_five_players_limit_only_the_last_chancellor():
    """Item 27 (a): in a 5-player game the last President may be nominated, the last Chancellor may not."""
    state = rigged(5, deck="LFF")
    state, _ = play(state, govern(2, "L"))
    assert state.president == 1
    assert nominees(state) == {0, 3, 4}
    assert public_view(state).term_limited == (2,)
    state, events = play(state, nominate(0))
    assert one(events, ev.ChancellorNominated).chancellor == 0


def test_term_limits_with_five_players_left_of_seven_limit_only_the_last_chancellor():
    """Item 27 (b): a 7-player game with 2 executed players (5 alive): the last President is eligible."""
    state = rigged(7, deck="LFF", dead=(4, 5), fascist=5)
    state, _ = play(state, govern(2, "L"))
    assert state.president == 1
    assert nominees(state) == {0, 3, 6}


def test_term_limits_with_six_players_alive_limit_both():
    """Item 27 (c): a 6-player game with no deaths: both the last President and the last Chancellor are limited."""
    state = rigged(6, deck="LFF")
    state, _ = play(state, govern(2, "L"))
    assert state.president == 1
    assert nominees(state) == {3, 4, 5}
    assert public_view(state).term_limited == (0, 2)


def test_term_limits_ignore_last_president_with_five_alive():
    """Items 27, 100 (B18 #6): 7p, the 2nd execution leaves 5 alive: the very next nomination allows the last
    President as Chancellor and still forbids the last Chancellor."""
    state = rigged(7, deck="FFF" "FFF", first=0, fascist=3)
    state, _ = play(state, govern(1, "F"), execute(5))
    assert state.alive_count == 6
    state, _ = play(state, govern(3, "F"))
    assert state.phase is Phase.EXECUTION and state.president == 1
    assert set(eligible_chancellors(state)) == {0, 2, 4, 6}  # with 6 alive, P2 and P4 are both limited
    state, _ = play(state, execute(4))
    assert state.alive_count == 5 and state.president == 2
    assert (state.last_president, state.last_chancellor) == (1, 3)
    assert nominees(state) == {0, 1, 6}
    assert_rejected(state, NominateChancellor(2, 3), IneligibleChancellor)
    state, events = play(state, nominate(1))
    assert one(events, ev.ChancellorNominated).chancellor == 1


def test_vetoing_government_is_term_limited():
    """Items 28, 68: X/Y (P1/P2) are elected and veto with the tracker below 3: they were elected, so the next
    President cannot nominate either of them (7 alive)."""
    state = rigged(7, deck="FLF", fascist=5)
    state, _events = play(state, elect(1), keep("L"), propose_veto(), answer_veto(True))
    assert state.election_tracker == 1 and state.president == 1
    state, _ = play(state, reject(2))
    assert state.president == 2
    assert nominees(state) == {3, 4, 5, 6}


def test_chaos_forgets_term_limits():
    """Items 29, 41: after chaos the next President may nominate the last elected President and Chancellor."""
    state = rigged(7, deck="LFF" "L", first=0)
    state, _ = play(state, govern(1, "L"))  # P1/P2 elected
    state, events = play(state, chaos())  # P2, P3, P4 rejected
    assert one(events, ev.TermLimitsCleared).audience.everyone
    assert (state.last_president, state.last_chancellor) == (None, None)
    assert state.president == 4
    assert nominees(state) == {0, 1, 2, 3, 5, 6}
    assert public_view(state).term_limited == ()


def test_term_limits_stay_forgotten_until_the_next_successful_election():
    """Item 30 (B18 #15): chaos, then a rejected government: the next President may still nominate anyone,
    including the government elected before chaos; the next elected government is limited again."""
    state = rigged(7, deck="LFF" "L" "LFF", first=0)
    state, _ = play(state, govern(1, "L"), chaos(), reject(5))
    assert state.president == 5
    assert nominees(state) == {0, 1, 2, 3, 4, 6}
    state, _ = play(state, govern(0, "L"))
    assert state.president == 6
    assert nominees(state) == {1, 2, 3, 4}


def test_vetoing_chancellor_may_serve_again_after_the_veto_causes_chaos():
    """Items 31, 41 (B18 #4): tracker 2 -> A/B elected -> veto -> chaos -> limits cleared -> the next President
    may nominate the vetoing Chancellor (and President) again."""
    state, _ = veto_at_tracker_two_with_small_deck()
    vetoing = (president(state), chancellor(state))
    state, events = play(state, propose_veto(), answer_veto(True))
    assert one(events, ev.PolicyEnacted).by_chaos
    assert state.president == 4  # P4 (seat 3) is dead
    assert set(vetoing) <= nominees(state)
    state, events = play(state, nominate(vetoing[1]))
    assert one(events, ev.ChancellorNominated).chancellor == vetoing[1]


def test_special_election_president_obeys_the_same_term_limits():
    """Items 31, 84: 7p, P1/P2 enact F3 and P1 calls a special election on P6: P6 cannot nominate P1 or P2
    (more than five alive)."""
    state = rigged(7, deck="FFF", first=0, fascist=2)
    state, _ = play(state, govern(1, "F"), special_election(5))
    assert state.president == 5
    assert nominees(state) == {2, 3, 4, 6}
    assert_rejected(state, NominateChancellor(5, 0), IneligibleChancellor)
    assert_rejected(state, NominateChancellor(5, 1), IneligibleChancellor)
