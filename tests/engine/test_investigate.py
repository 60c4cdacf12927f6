"""B11. Investigate Loyalty (items 3, 77-81)."""

from __future__ import annotations

import pytest

from moderator.engine import InvestigateLoyalty, Party, Phase, Role, apply, public_view, view_for
from moderator.engine import events as ev
from moderator.engine.errors import AlreadyInvestigated, CannotTargetSelf, TargetIsExecuted

from .scenario import govern, investigate, one, play, public, rigged, targets, values

NINE = "LLLLFHLFF"  # 9p: Hitler in seat 5, fascists in 4, 7, 8


def investigating(players=9, roles=NINE, first=0, **board):
    """A game whose President (``first``) has just been granted Investigate Loyalty (slot 1 in 9-10p)."""
    state = rigged(players, roles, deck="FFF" "FFF", first=first, **board)
    state, _ = play(state, govern(None, "F"))
    assert state.phase is Phase.INVESTIGATE
    return state


def test_investigating_hitler_shows_fascist_party():
    """Items 3, 77: investigating Hitler returns the Fascist party card, never the Hitler role."""
    state = investigating()
    state, events = play(state, investigate(5))
    seen = one(events, ev.PartyMembershipSeen)
    assert seen == ev.PartyMembershipSeen(0, 5, Party.FASCIST)
    assert not any(isinstance(v, Role) for e in events for v in values(e))
    assert view_for(state, 0).investigations == ((5, Party.FASCIST),)


@pytest.mark.parametrize("target, party", [(1, Party.LIBERAL), (4, Party.FASCIST), (5, Party.FASCIST)])
def test_investigation_result_goes_only_to_the_president_and_the_table_sees_who_was_investigated(target, party):
    """Item 77: the party goes to the President alone; the table is told "President X investigated Y"."""
    state = investigating()
    state, events = play(state, investigate(target))
    seen = one(events, ev.PartyMembershipSeen)
    assert seen.party is party
    assert [s for s in range(9) if seen.audience.includes(s)] == [0]
    announced = one(events, ev.LoyaltyInvestigated)
    assert announced == ev.LoyaltyInvestigated(0, target) and announced.audience.everyone
    assert public_view(state).investigations == ((0, target),)
    for seat in range(1, 9):
        assert view_for(state, seat).investigations == ()
    assert not any(isinstance(v, Party) for e in public(events) for v in values(e))


def test_nobody_can_be_investigated_twice():
    """Item 78 (B18 #12): 9p, F1: P1 investigates P4; F2: P2 cannot pick P4 (nor themself), across
    different Presidents."""
    state = investigating()
    state, _ = play(state, investigate(3))
    state, _ = play(state, govern(2, "F"))
    assert state.phase is Phase.INVESTIGATE and state.president == 1
    with pytest.raises(AlreadyInvestigated):
        apply(state, InvestigateLoyalty(1, 3))
    with pytest.raises(CannotTargetSelf):
        apply(state, InvestigateLoyalty(1, 1))
    assert targets(state, 1) == {0, 2, 4, 5, 6, 7, 8}


def test_president_cannot_investigate_themself():
    """Item 79: the President cannot investigate their own party card."""
    state = investigating()
    with pytest.raises(CannotTargetSelf):
        apply(state, InvestigateLoyalty(0, 0))
    assert 0 not in targets(state, 0)


def test_executed_players_cannot_be_investigated():
    """Items 80, 96: an executed player is out of the game and cannot be investigated. (On the standard boards
    nobody is dead at an investigation; the position puts a dead player on a 9p table with 1 F.)"""
    state = investigating(dead=(6,))
    with pytest.raises(TargetIsExecuted):
        apply(state, InvestigateLoyalty(0, 6))
    assert 6 not in targets(state, 0)


def test_investigated_player_learns_they_were_investigated_and_by_whom():
    """Item 81: the investigation is announced to everyone, so the target knows who investigated them (and
    nothing of what the President saw goes to the target)."""
    state = investigating()
    state, events = play(state, investigate(7))
    announced = one(events, ev.LoyaltyInvestigated)
    assert announced.audience.includes(7) and (announced.president, announced.target) == (0, 7)
    assert not one(events, ev.PartyMembershipSeen).audience.includes(7)
