"""B2. The policy deck: composition, drawing, reshuffles and secrecy (items 9-15)."""

from __future__ import annotations

from collections import Counter

import pytest

from moderator.engine import DiscardPolicy, EnactPolicy, InvalidSetup, Phase, Policy, new_game, public_view
from moderator.engine import events as ev

from .scenario import (
    VETO_RESHUFFLE,
    F,
    L,
    answer_veto,
    card_count,
    elect,
    govern,
    kinds,
    of_type,
    one,
    play,
    policies,
    propose_veto,
    public,
    random_games,
    reject,
    rigged,
    values,
    veto_at_tracker_two_with_small_deck,
)


@pytest.mark.parametrize("seed", range(10))
def test_deck_is_seventeen_policies_six_liberal_eleven_fascist_shuffled(seed):
    """Item 9: a new game's draw pile is the 17 tiles, 6 Liberal and 11 Fascist, in a seed-dependent order."""
    state = new_game(7, seed=seed)
    assert len(state.draw_pile) == 17
    assert Counter(state.draw_pile) == {L: 6, F: 11}
    assert state.discard_pile == () and state.hand == ()
    assert len({new_game(7, seed=s).draw_pile for s in range(10)}) == 10


@pytest.mark.parametrize("deck", ["LLLLLLFFFFFFFFFF", "LLLLLLLFFFFFFFFFF", "LLLLLFFFFFFFFFFFF", "LLLLLLFFFFFFFFFFFF"])
def test_rigged_deck_must_be_six_liberal_and_eleven_fascist(deck):
    """Item 9: a rigged deck with the wrong size or mix is rejected."""
    with pytest.raises(InvalidSetup):
        new_game(5, seed=0, deck=policies(deck))


def test_seventeen_policies_are_conserved_after_every_event():
    """Item 9 (B18 #18): in 204 random legal games over 5-10 players, draw + discard + hand + enacted is
    6 L and 11 F after every action: no card is ever lost or duplicated."""
    for game in random_games():
        for _, state, _ in game:
            assert card_count(state) == (6, 11)
            assert len(state.hand) in (0, 2, 3)


def test_president_draws_the_top_three_policies_in_order():
    """Item 10: with the deck rigged F, L, F, ... the President receives exactly (F, L, F) and the draw pile
    loses those three cards."""
    state = rigged(5, deck="FLFLL")
    state, events = play(state, elect(1))
    drawn = one(events, ev.PoliciesDrawn)
    assert drawn.president == 0 and drawn.policies == (F, L, F)
    assert drawn.audience.includes(0) and not drawn.audience.everyone
    assert state.hand == (F, L, F)
    assert state.draw_pile[:2] == (L, L) and len(state.draw_pile) == 14


FIVE_SESSIONS = "LFF" "LFF" "FFL" "FFL" "LFF" "LF"
"""Five sessions enacting L, L, F, F, L in a 5-player game (no powers), then two leftover cards."""


def test_reshuffle_at_end_of_session_when_fewer_than_three_remain():
    """Item 11: from a fresh deck 5 enacted sessions leave 2 cards; at the end of the 5th session, before the
    next nomination, the 2 leftovers and the 10 discards are shuffled into a 12-card draw pile."""
    state = rigged(5, deck=FIVE_SESSIONS)
    for policy in "LLFF":
        state, events = play(state, govern(None, policy))
        assert not of_type(events, ev.DeckReshuffled)
    leftovers = state.draw_pile[3:]
    assert len(leftovers) == 2
    state, events = play(state, govern(None, "L"))
    reshuffled = one(events, ev.DeckReshuffled)
    assert reshuffled.draw_pile == 12 and reshuffled.audience.everyone
    names = kinds(events)
    assert names.index("PolicyEnacted") < names.index("DeckReshuffled") < names.index("PresidentialCandidateChosen")
    assert len(state.draw_pile) == 12 and state.discard_pile == ()
    assert Counter(state.draw_pile) == {L: 3, F: 9}  # 1 L + 1 F left over, 2 L + 8 F discarded
    assert state.history.reshuffles == (state.draw_pile,)
    assert one(events, ev.DrawPileShuffled).order == state.draw_pile


def test_reshuffle_shuffles_the_leftovers_in_rather_than_leaving_them_on_top():
    """Item 11: the leftover cards go into the shuffle: over 20 seeds the new pile does not always start with
    the two leftovers, and it always holds them."""
    tops = set()
    for seed in range(20):
        state = rigged(5, deck=FIVE_SESSIONS, seed=seed)
        state, _ = play(state, *(govern(None, p) for p in "LLFFL"))
        tops.add(state.draw_pile[:2])
        assert Counter(state.draw_pile) == {L: 3, F: 9}
    assert len(tops) > 1


def test_vetoed_session_reshuffles_before_the_tracker_and_chaos():
    """Items 12, 64 (B18 #3): 7p with 5 F, a deck of 4 and the tracker at 2: the government vetoes, leaving 1
    card; the pile is reshuffled with the discards first, so chaos enacts the top of the *new* pile (an L), not
    the leftover F, and grants no power."""
    state, _ = veto_at_tracker_two_with_small_deck()
    assert state.draw_pile == (F,)
    state, events = play(state, propose_veto(), answer_veto(True))
    names = kinds(events)
    assert names.index("DeckReshuffled") < names.index("ElectionTrackerAdvanced") < names.index("PolicyEnacted")
    assert one(events, ev.DeckReshuffled).draw_pile == 12
    enacted = one(events, ev.PolicyEnacted)
    assert enacted.by_chaos and enacted.policy is L
    assert state.liberal_policies == 1 and state.fascist_policies == 5
    assert state.draw_pile == policies(VETO_RESHUFFLE)[1:]
    assert state.winner is None and state.phase is Phase.NOMINATION
    assert not of_type(events, ev.PresidentialPowerGranted)
    assert state.election_tracker == 0


CHAOS_AT_THREE = "LFF" "FFL" "LFF" "FFF" "LLF"
"""5p from 1 L + 1 F: sessions enact L2, F2, L3, F3 (peek), leaving 3 cards, the top one L."""


def test_reshuffle_after_chaos_when_fewer_than_three_remain():
    """Item 13: the draw pile holds 3, chaos enacts 1, leaving 2: the pile is reshuffled with the discards
    before the next nomination."""
    state = rigged(5, deck=CHAOS_AT_THREE, liberal=1, fascist=1)
    state, _ = play(state, *(govern(None, p) for p in "LFLF"))
    assert len(state.draw_pile) == 3 and state.draw_pile[0] is L
    state, _ = play(state, reject(), reject())
    state, events = play(state, reject())
    names = kinds(events)
    assert names.index("PolicyEnacted") < names.index("DeckReshuffled") < names.index("PresidentialCandidateChosen")
    assert one(events, ev.PolicyEnacted).by_chaos
    assert one(events, ev.DeckReshuffled).draw_pile == 2 + 8
    assert len(state.draw_pile) == 10 and state.discard_pile == ()


PEEK_AFTER_LAST_CARDS = "LFF" "LFF" "LFF" "FFF" "LL"
"""5p from 1 L + 2 F: sessions enact L2, L3, L4 and then F3, which leaves 2 cards (L, L)."""


def test_policy_peek_sees_three_cards_from_the_reshuffled_deck():
    """Items 14, 91: in 5p the 3rd F is enacted as the deck drops to 2: the pile is reshuffled first, the peek
    shows the top 3 of the new pile and the next elected President draws exactly those 3."""
    state = rigged(5, deck=PEEK_AFTER_LAST_CARDS, liberal=1, fascist=2)
    state, _ = play(state, *(govern(None, "L") for _ in range(3)))
    state, events = play(state, govern(None, "F"))
    names = kinds(events)
    assert names.index("DeckReshuffled") < names.index("TopPoliciesSeen")
    seen = one(events, ev.TopPoliciesSeen).policies
    assert len(seen) == 3
    assert seen == state.history.reshuffles[-1][:3] == state.draw_pile[:3]
    state, events = play(state, elect())
    assert one(events, ev.PoliciesDrawn).policies == seen


def test_discards_are_never_revealed_publicly():
    """Item 15: in a session the President's and the Chancellor's discards reach only the discarding seat;
    the table gets only pile sizes."""
    state = rigged(5, deck="FLFLL")
    state, events = play(state, elect(1))
    before = public_view(state)
    state, events = play(state, DiscardPolicy(0, L), EnactPolicy(1, F))
    discards = of_type(events, ev.PolicyDiscarded)
    assert [(d.seat, d.policy) for d in discards] == [(0, L), (1, F)]
    for d in discards:
        assert not d.audience.everyone and all(d.audience.includes(s) == (s == d.seat) for s in range(5))
    for event in public(events):
        if not isinstance(event, ev.PolicyEnacted):
            assert not any(isinstance(v, Policy) for v in values(event)), event
    after = public_view(state)
    assert after.discard_pile == before.discard_pile + 2
    assert not any(isinstance(v, Policy) for v in (after.draw_pile, after.discard_pile))


def test_no_public_event_ever_names_a_card_except_the_enacted_one():
    """Items 15, 112 (B18 #19): in 204 random games no public event names a policy other than the one enacted,
    and the public view holds pile sizes, never cards, until the game is over."""
    for game in random_games():
        for _, state, events in game:
            for event in public(events):
                if not isinstance(event, ev.PolicyEnacted):
                    assert not any(isinstance(v, Policy) for v in values(event)), event
            view = public_view(state)
            assert isinstance(view.draw_pile, int) and isinstance(view.discard_pile, int)
            if state.phase is not Phase.GAME_OVER:
                assert view.truth is None and view.roles is None


def test_every_secret_event_goes_only_to_its_entitled_seat():
    """Items 15, 6, 10, 77, 93 (B18 #19): in 204 random games each private event reaches exactly the seat the
    rules entitle (its own role, ballot and discard; the President's draw, investigation and peek; the
    Chancellor's two cards), and the secret deck order reaches nobody."""
    entitled = {
        ev.RoleDealt: lambda e, s: e.seat,
        ev.VoteCast: lambda e, s: e.seat,
        ev.PolicyDiscarded: lambda e, s: e.seat,
        ev.PoliciesDrawn: lambda e, s: s.president,
        ev.PartyMembershipSeen: lambda e, s: s.president,
        ev.TopPoliciesSeen: lambda e, s: s.president,
        ev.PoliciesReceived: lambda e, s: s.chancellor,
    }
    for game in random_games():
        for before, _, events in game:
            for event in events:
                if event.audience.everyone:
                    assert type(event) not in entitled and not isinstance(event, ev.DrawPileShuffled)
                    continue
                if isinstance(event, ev.DrawPileShuffled):
                    assert event.audience.seats == frozenset()
                    continue
                if before is None:  # the opening: each seat is dealt its own role
                    assert isinstance(event, ev.RoleDealt), event
                    seat = event.seat
                else:
                    seat = entitled[type(event)](event, before)
                assert event.audience.seats == frozenset({seat}), event
