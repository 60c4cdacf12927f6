"""B13. Policy Peek (items 90-93; 91 and 92 are also covered in the deck and chaos tests)."""

from __future__ import annotations

from moderator.engine import Phase, legal_actions, view_for
from moderator.engine import events as ev

from .scenario import F, L, chaos, elect, govern, kinds, one, play, policies, rigged

PEEK = "FFF" "LFL" "FFL"
"""5p from 2 F: a government enacts F3; the top three are then L, F, L."""


def test_peek_shows_the_top_three_in_order_and_the_next_president_draws_them():
    """Item 90: the peek shows [a, b, c] and changes nothing: the next elected President draws [a, b, c]."""
    state = rigged(5, deck=PEEK, fascist=2)
    state, events = play(state, govern(1, "F"))
    seen = one(events, ev.TopPoliciesSeen)
    assert seen.policies == (L, F, L)
    assert state.draw_pile[:3] == (L, F, L) and len(state.draw_pile) == 12
    assert view_for(state, 0).peeks == ((L, F, L),)
    state, events = play(state, elect(2))
    assert one(events, ev.PoliciesDrawn).policies == (L, F, L)


def test_peek_happens_after_the_end_of_session_reshuffle():
    """Item 91: the peek always shows three cards, from the reshuffled pile when the session left fewer than
    three (the full case is in test_deck_and_reshuffle)."""
    state = rigged(5, deck="LFF" "LFF" "LFF" "FFF" "LL", liberal=1, fascist=2, reshuffles=["FLFFFFFFFL"])
    state, _ = play(state, *(govern(None, "L") for _ in range(3)))
    state, events = play(state, govern(None, "F"))
    names = kinds(events)
    assert names.index("DeckReshuffled") < names.index("PolicyPeekUsed")
    assert one(events, ev.TopPoliciesSeen).policies == policies("FLF")


def test_chaos_right_after_a_peek_reveals_the_first_peeked_card():
    """Item 92: chaos right after a peek reveals the first peeked card; the next two follow."""
    state = rigged(5, deck=PEEK, fascist=2)
    state, _ = play(state, govern(1, "F"))
    state, events = play(state, chaos())
    assert one(events, ev.PolicyEnacted).policy is L and one(events, ev.PolicyEnacted).by_chaos
    assert state.draw_pile[:2] == (F, L)


def test_peek_is_announced_publicly_and_its_cards_go_only_to_the_president():
    """Item 93: "President X examined the top three policies" is public, the cards go to X alone, and the peek
    asks nothing: the next nomination starts at once."""
    state = rigged(5, deck=PEEK, fascist=2, first=2)
    state, events = play(state, govern(1, "F"))
    used = one(events, ev.PolicyPeekUsed)
    assert used == ev.PolicyPeekUsed(2) and used.audience.everyone
    seen = one(events, ev.TopPoliciesSeen)
    assert [s for s in range(5) if seen.audience.includes(s)] == [2]
    assert names_after(events, "TopPoliciesSeen") == ["PresidentialCandidateChosen"]
    assert state.phase is Phase.NOMINATION and state.president == 3
    assert legal_actions(state, 2) == ()
    for seat in (0, 1, 3, 4):
        assert view_for(state, seat).peeks == ()


def names_after(events, name):
    names = kinds(events)
    return names[names.index(name) + 1 :]
