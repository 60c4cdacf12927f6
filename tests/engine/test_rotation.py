"""B3. Presidential rotation (items 16-22)."""

from __future__ import annotations

from moderator.engine import Phase
from moderator.engine import events as ev

from .scenario import (
    answer_veto,
    chaos,
    elect,
    execute,
    govern,
    keep,
    one,
    play,
    president,
    propose_veto,
    reject,
    rigged,
    special_election,
)


def test_presidency_passes_clockwise_whether_the_vote_passes_or_fails():
    """Item 16: 5p, P1 -> P2 -> P3 -> P4, the first government elected, the second rejected, the third elected."""
    state = rigged(5, deck="LFFLFF")
    presidents = [state.president]
    for step in (govern(None, "L"), reject(), govern(None, "L")):
        state, events = play(state, step)
        presidents.append(state.president)
        assert one(events, ev.PresidentialCandidateChosen) == ev.PresidentialCandidateChosen(president(state), False)
    assert presidents == [0, 1, 2, 3]


def test_failed_vote_moves_the_placard_to_the_next_player():
    """Item 17: P2's government fails, so P3 is the next Presidential Candidate."""
    state = rigged(5, first=1)
    state, events = play(state, reject(3))
    assert not one(events, ev.ElectionDecided).elected
    assert state.president == 2 and state.phase is Phase.NOMINATION


def test_executed_players_are_skipped_in_the_rotation():
    """Items 18, 96: 7p, P3 presides at the 4th F and executes P4, so the next candidate is P5."""
    state = rigged(7, deck="FFF", first=2, fascist=3)
    state, _ = play(state, govern(0, "F"))
    assert state.phase is Phase.EXECUTION and state.president == 2
    state, events = play(state, execute(3))
    assert state.president == 4
    assert one(events, ev.PresidentialCandidateChosen).president == 4


def test_executed_players_are_never_presidential_candidates():
    """Item 18: after P4's execution, a full lap of failed votes never hands P4 the placard."""
    state = rigged(7, deck="FFF" "LL", first=2, fascist=3)
    state, _ = play(state, govern(0, "F"), execute(3))
    candidates = [state.president]
    for _ in range(6):
        state, _events = play(state, reject())
        candidates.append(state.president)
    assert candidates == [4, 5, 6, 0, 1, 2, 4]


def test_chaos_does_not_change_the_rotation():
    """Item 19: P1, P2 and P3 are rejected, chaos enacts the top policy, and the next candidate is P4."""
    state = rigged(7, deck="L")
    state, events = play(state, chaos())
    assert one(events, ev.PolicyEnacted).by_chaos
    assert state.president == 3


def test_veto_passes_the_placard_to_the_left_as_usual():
    """Item 20: P5's government vetoes, so P6 is the next Presidential Candidate."""
    state = rigged(7, deck="FLF", first=4, fascist=5)
    state, events = play(state, elect(0), keep("L"), propose_veto(), answer_veto(True))
    assert one(events, ev.VetoAnswered).accepted
    assert state.president == 5 and state.phase is Phase.NOMINATION


def test_after_a_failed_special_election_government_the_rotation_resumes_left_of_the_caller():
    """Items 21, 85 (B18 #2): 8p, P1 calls a special election on P5; P5's nominee is rejected; the next
    candidate is P2, not P6, and the tracker is 1."""
    state = rigged(8, deck="FFF", first=0, fascist=2)
    state, _ = play(state, govern(1, "F"))
    assert state.phase is Phase.SPECIAL_ELECTION and state.president == 0
    state, events = play(state, special_election(4))
    assert one(events, ev.PresidentialCandidateChosen) == ev.PresidentialCandidateChosen(4, True)
    state, events = play(state, reject(2))
    assert state.president == 1
    assert state.election_tracker == 1


def test_after_a_successful_special_election_government_the_rotation_resumes_left_of_the_caller():
    """Item 21: 8p, P1 calls a special election on P5; P5's government enacts a policy; the next candidate is
    P2."""
    state = rigged(8, deck="FFFLFF", first=0, fascist=2)
    state, _ = play(state, govern(1, "F"), special_election(4), govern(2, "L"))
    assert state.president == 1


def test_special_election_of_the_next_player_lets_them_preside_twice_in_a_row():
    """Items 22, 86 (B18 #1): 7p, P3 enacts the 3rd F and picks P4: P4 presides, then P4 presides again, then
    P5."""
    state = rigged(7, deck="FFF" "LFF" "LFF", first=2, fascist=2)
    state, _ = play(state, govern(0, "F"))
    state, _ = play(state, special_election(3))
    assert state.president == 3
    state, _ = play(state, govern(1, "L"))
    assert state.president == 3
    state, _ = play(state, govern(0, "L"))
    assert state.president == 4


def test_execution_inside_a_special_election_detour_resumes_after_the_caller():
    """Item 22 (B18 #17): 7p, P1 calls a special election on P5; P5's government enacts F4 and P5 executes P2;
    the next candidate is P3, the first living seat after the caller."""
    state = rigged(7, deck="FFF" "FFF", first=0, fascist=2)
    state, _ = play(state, govern(2, "F"), special_election(4), govern(3, "F"))
    assert state.phase is Phase.EXECUTION and state.president == 4
    state, _ = play(state, execute(1))
    assert state.president == 2


def test_special_president_executing_the_caller_still_resumes_after_the_caller():
    """Item 22: 7p, P1 calls a special election on P5, who enacts F4 and executes P1 (the caller): the next
    candidate is P2, the seat after P1."""
    state = rigged(7, deck="FFF" "FFF", first=0, fascist=2)
    state, _ = play(state, govern(2, "F"), special_election(4), govern(3, "F"), execute(0))
    assert not state.alive[0]
    assert state.president == 1
