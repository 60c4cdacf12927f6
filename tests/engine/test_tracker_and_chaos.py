"""B6. The election tracker and chaos (items 38-47)."""

from __future__ import annotations

from moderator.engine import CastVote, Party, Phase, WinReason
from moderator.engine import events as ev

from .scenario import (
    F,
    L,
    answer_veto,
    chaos,
    elect,
    govern,
    keep,
    kinds,
    nominate,
    of_type,
    one,
    play,
    propose_veto,
    public,
    random_games,
    reject,
    rigged,
    special_election,
)


def test_three_rejected_governments_in_a_row_enact_the_top_policy():
    """Item 38: after 3 consecutive failed votes the top policy is enacted face up, with no President, no
    draw and no discard."""
    state = rigged(7, deck="LFF")
    state, _ = play(state, reject(), reject())
    assert state.election_tracker == 2 and state.liberal_policies == 0
    state, events = play(state, reject())
    assert [e.election_tracker for e in of_type(events, ev.ElectionTrackerAdvanced)] == [3]
    enacted = one(events, ev.PolicyEnacted)
    assert enacted == ev.PolicyEnacted(L, True, 1, 0) and enacted.audience.everyone
    assert not of_type(events, ev.PoliciesDrawn) and not of_type(events, ev.PolicyDiscarded)
    assert state.liberal_policies == 1
    assert state.draw_pile[:2] == (F, F) and len(state.draw_pile) == 16
    assert state.discard_pile == () and state.hand == ()


def test_chaos_policy_grants_no_power():
    """Items 39, 75: 7p with F1 on the board, chaos enacts F2: its investigation is ignored and the next
    nomination starts at once."""
    state = rigged(7, deck="F", fascist=1)
    state, events = play(state, chaos())
    assert one(events, ev.PolicyEnacted) == ev.PolicyEnacted(F, True, 0, 2)
    assert not of_type(events, ev.PresidentialPowerGranted)
    assert state.phase is Phase.NOMINATION and state.president == 3


def test_tracker_resets_when_a_government_enacts_a_policy():
    """Item 40: with the tracker at 2 an elected government enacts a policy: the tracker is back to 0."""
    state = rigged(7, deck="LFF", tracker=2)
    state, events = play(state, govern(1, "L"))
    assert state.election_tracker == 0
    assert not of_type(events, ev.ElectionTrackerAdvanced)


def test_tracker_resets_after_chaos():
    """Items 40, 46: chaos enacts a policy and the tracker is reset to 0, never left at 3."""
    state = rigged(7, deck="L")
    state, _ = play(state, chaos())
    assert state.election_tracker == 0
    state, _ = play(state, reject())
    assert state.election_tracker == 1


def test_chaos_clears_term_limits_publicly():
    """Item 41: chaos forgets the last elected government and says so publicly."""
    state = rigged(7, deck="LFF" "L")
    state, _ = play(state, govern(1, "L"))
    assert (state.last_president, state.last_chancellor) == (0, 1)
    state, events = play(state, chaos())
    assert one(events, ev.TermLimitsCleared).audience.everyone
    assert (state.last_president, state.last_chancellor) == (None, None)


def test_veto_counts_toward_the_tracker_and_can_complete_chaos():
    """Items 42, 64: fail, fail, then an elected government vetoes: the tracker reaches 3 and chaos enacts the
    top policy."""
    state = rigged(7, deck="FLF" "L", fascist=5)
    state, _ = play(state, reject(), reject())
    state, events = play(state, elect(), keep("L"), propose_veto(), answer_veto(True))
    assert [e.election_tracker for e in of_type(events, ev.ElectionTrackerAdvanced)] == [3]
    assert one(events, ev.PolicyEnacted) == ev.PolicyEnacted(L, True, 1, 5)
    assert state.election_tracker == 0


def test_chaos_sixth_fascist_policy_wins_for_fascists():
    """Items 43, 101 (B18 #11): 5 F on the board and chaos reveals an F: the Fascists win at once."""
    state = rigged(7, deck="F", fascist=5)
    state, events = play(state, chaos())
    assert one(events, ev.PolicyEnacted).by_chaos
    ended = one(events, ev.GameEnded)
    assert (ended.winner, ended.reason) == (Party.FASCIST, WinReason.POLICIES)
    assert state.phase is Phase.GAME_OVER
    assert kinds(events)[-1] == "GameEnded"


def test_chaos_fifth_liberal_policy_wins_for_liberals():
    """Items 43, 101 (B18 #11): 4 L on the board and chaos reveals an L: the Liberals win at once."""
    state = rigged(7, deck="L", liberal=4)
    state, events = play(state, chaos())
    ended = one(events, ev.GameEnded)
    assert (ended.winner, ended.reason) == (Party.LIBERAL, WinReason.POLICIES)
    assert state.winner is Party.LIBERAL and state.phase is Phase.GAME_OVER
    assert not of_type(events, ev.TermLimitsCleared) and kinds(events)[-1] == "GameEnded"


def test_chaos_publishes_the_policy_and_the_reset_and_tells_no_one_anything_privately():
    """Item 44: the chaos action's events are public (the enacted card, the tracker at 3 then reset), except
    the last voter's own ballot and the secret new deck order, which nobody sees."""
    # Four sessions leave 3 cards, so chaos also reshuffles.
    state = rigged(5, deck="LFF" "FFL" "LFF" "FFF" "LLF", liberal=1, fascist=1)
    state, _ = play(state, *(govern(None, p) for p in "LFLF"), reject(), reject())
    assert len(state.draw_pile) == 3
    state, _ = play(state, nominate(3), *(CastVote(seat, False) for seat in range(4)))
    state, events = play(state, CastVote(4, False))
    private = [e for e in events if not e.audience.everyone]
    assert kinds(private) == ["VoteCast", "DrawPileShuffled"]
    assert not any(private[1].audience.includes(seat) for seat in range(5))
    names = kinds(public(events))
    assert "PolicyEnacted" in names and "ElectionTrackerAdvanced" in names and "DeckReshuffled" in names
    assert one(events, ev.PolicyEnacted).by_chaos


PEEK_THEN_CHAOS = "FFF" "LFF" "FFL"
"""5p from 2 F: a government enacts F3, and the peek shows L, F, F."""


def test_chaos_after_a_peek_enacts_the_first_peeked_card():
    """Items 45, 92 (B18 #5): 5p, the F3 peek shows [L, F, F]; three failed votes enact that L; the next
    President draws F, F and the card after them."""
    state = rigged(5, deck=PEEK_THEN_CHAOS, fascist=2)
    state, events = play(state, govern(1, "F"))
    assert one(events, ev.TopPoliciesSeen).policies == (L, F, F)
    state, events = play(state, chaos())
    assert one(events, ev.PolicyEnacted) == ev.PolicyEnacted(L, True, 1, 3)
    assert state.draw_pile[:3] == (F, F, F)
    state, events = play(state, elect())
    assert one(events, ev.PoliciesDrawn).policies == (F, F, F)


def test_tracker_never_exceeds_three_and_rests_below_three():
    """Item 46: in 204 random games the tracker starts at 0, every advance announces 1, 2 or 3, and no state
    ever shows more than 2 (the third advance is chaos, which resets it inside the same action)."""
    for game in random_games():
        assert game[0][1].election_tracker == 0
        for _, state, events in game:
            assert 0 <= state.election_tracker <= 2
            for advanced in of_type(events, ev.ElectionTrackerAdvanced):
                assert 1 <= advanced.election_tracker <= 3


def test_chaos_during_a_special_election_detour_resumes_left_of_the_caller():
    """Item 47: a failed special-election government that is the third failure brings chaos, and the next
    candidate is still the player left of the caller. (On the standard boards the F3 that grants the special
    election resets the tracker, so this position is built by setting the tracker to 2 at the call.)"""
    state = rigged(8, deck="FFF" "L", first=0, fascist=2)
    state, _ = play(state, govern(1, "F"))
    assert state.phase is Phase.SPECIAL_ELECTION and state.election_tracker == 0
    state = state.replace(election_tracker=2)
    state, events = play(state, special_election(4), reject(2))
    assert one(events, ev.PolicyEnacted).by_chaos
    assert state.president == 1
    assert state.election_tracker == 0


def test_failed_special_election_government_only_brings_the_tracker_to_one():
    """Items 47, 88: the special election itself leaves the tracker at 0 (the F3 reset it), the failed special
    government brings it to 1, and chaos needs two more failures in the resumed rotation (P2, P3), after which
    P4 presides."""
    state = rigged(8, deck="FFF" "L", first=0, fascist=2)
    state, events = play(state, govern(1, "F"), special_election(4))
    assert state.election_tracker == 0 and not of_type(events, ev.ElectionTrackerAdvanced)
    state, _ = play(state, reject(2))
    assert state.election_tracker == 1 and state.president == 1
    state, _ = play(state, reject(), reject())
    assert state.liberal_policies == 1 and state.election_tracker == 0
    assert state.president == 3
