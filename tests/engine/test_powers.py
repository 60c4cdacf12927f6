"""B10. Executive actions in general (items 71-76)."""

from __future__ import annotations

import pytest

from moderator.engine import (
    CallSpecialElection,
    ExecutePlayer,
    InvestigateLoyalty,
    NominateChancellor,
    Phase,
    Power,
    apply,
    awaiting,
    legal_actions,
    public_view,
)
from moderator.engine import events as ev
from moderator.engine.errors import NotThePresident, OutOfTurn

from .scenario import (
    chaos,
    govern,
    investigate,
    of_type,
    one,
    play,
    rigged,
    targets,
)

# One letter per power, so the table below reads like the board.
_: Power | None = None
I, S, P, E = Power.INVESTIGATE_LOYALTY, Power.SPECIAL_ELECTION, Power.POLICY_PEEK, Power.EXECUTION  # noqa: E741
BOARD = {
    5: (_, _, P, E, E),
    6: (_, _, P, E, E),
    7: (_, I, S, E, E),
    8: (_, I, S, E, E),
    9: (I, I, S, E, E),
    10: (I, I, S, E, E),
}
"""The fascist track printed on the three boards, slots 1-5 (copied from the board art, not from the engine)."""

POWER_PHASE = {I: Phase.INVESTIGATE, S: Phase.SPECIAL_ELECTION, E: Phase.EXECUTION}


@pytest.mark.parametrize("players", range(5, 11))
@pytest.mark.parametrize("slot", range(1, 6))
def test_power_table_follows_the_board_for_each_player_count(players, slot):
    """Item 71: a government enacting the fascist policy on slot 1-5 grants exactly the board's power for the
    player count: 5-6 peek/execution/execution; 7-8 investigate/special election/execution/execution; 9-10
    investigate/investigate/special election/execution/execution."""
    state = rigged(players, deck="FFF", fascist=slot - 1)
    state, events = play(state, govern(None, "F"))
    expected = BOARD[players][slot - 1]
    granted = of_type(events, ev.PresidentialPowerGranted)
    if expected is None:
        assert not granted and not of_type(events, ev.PolicyPeekUsed)
        assert state.phase is Phase.NOMINATION
    elif expected is P:
        assert not granted and one(events, ev.PolicyPeekUsed).president == 0
        assert state.phase is Phase.NOMINATION
    else:
        assert granted == [ev.PresidentialPowerGranted(0, expected)]
        assert state.phase is POWER_PHASE[expected] and state.president == 0


@pytest.mark.parametrize(
    "players, fascist, power_action",
    [(9, 0, InvestigateLoyalty), (7, 2, CallSpecialElection), (7, 3, ExecutePlayer)],
)
def test_power_must_be_used_before_play_continues(players, fascist, power_action):
    """Item 72: while a power is pending the President owes it and nothing else: there is no skip, no
    nomination, and nobody else may act."""
    state = rigged(players, deck="FFF", fascist=fascist)
    state, _ = play(state, govern(1, "F"))
    assert awaiting(state) == (0,) and public_view(state).awaiting == (0,)
    actions = legal_actions(state, 0)
    assert actions and all(isinstance(a, power_action) for a in actions)
    assert all(legal_actions(state, seat) == () for seat in range(1, players))
    with pytest.raises(OutOfTurn):
        apply(state, NominateChancellor(0, 2))
    with pytest.raises(NotThePresident):
        apply(state, power_action(1, 2))


def test_powers_are_used_once_and_never_roll_over():
    """Item 73: 9p, P1 enacts F1 and investigates once; the power is gone (a second use is out of turn); the
    next Liberal government gets nothing; F2 grants one new investigation to its own President."""
    state = rigged(9, deck="FFF" "LFF" "FFF")
    state, events = play(state, govern(1, "F"), investigate(5))
    assert state.phase is Phase.NOMINATION and state.president == 1
    with pytest.raises(OutOfTurn):
        apply(state, InvestigateLoyalty(0, 6))
    state, events = play(state, govern(2, "L"))
    assert not of_type(events, ev.PresidentialPowerGranted)
    state, events = play(state, govern(3, "F"))
    assert one(events, ev.PresidentialPowerGranted) == ev.PresidentialPowerGranted(2, I)
    state, _ = play(state, investigate(6))
    with pytest.raises(OutOfTurn):
        apply(state, InvestigateLoyalty(2, 7))


def test_the_presidents_team_does_not_matter_for_powers():
    """Items 74, 98: a fascist President gets the same power and the same choice of targets as a liberal
    one, Hitler and fellow fascists included."""
    liberal_president = rigged(7, "LLLLFFH", deck="FFF", first=0, fascist=3)
    fascist_president = rigged(7, "FLLLLFH", deck="FFF", first=0, fascist=3)
    offered: list[set[int]] = []
    for state in (liberal_president, fascist_president):
        state, events = play(state, govern(1, "F"))
        assert one(events, ev.PresidentialPowerGranted).power is E
        offered.append(targets(state, 0))
    assert offered[0] == offered[1] == {1, 2, 3, 4, 5, 6}


def test_chaos_fascist_policy_counts_for_the_slot_but_its_power_is_never_made_up():
    """Item 75: 7p, chaos enacts F2 and its investigation is ignored; the next government's F covers slot 3
    and grants the special election, not the lost investigation."""
    state = rigged(7, deck="F" "FFF", fascist=1)
    state, events = play(state, chaos())
    assert not of_type(events, ev.PresidentialPowerGranted) and state.fascist_policies == 2
    state, events = play(state, govern(None, "F"))
    assert one(events, ev.PresidentialPowerGranted).power is S


def test_liberal_policy_grants_no_power():
    """Item 75: a liberal policy never grants a power, whatever the fascist track holds."""
    state = rigged(9, deck="LFF", fascist=3)
    state, events = play(state, govern(1, "L"))
    assert not of_type(events, ev.PresidentialPowerGranted) and state.phase is Phase.NOMINATION


def test_only_the_president_decides_how_the_power_is_used():
    """Item 76: others may talk, but only the President's own choice resolves the power: another seat's
    attempt (even the Chancellor's) is rejected and changes nothing."""
    state = rigged(9, deck="FFF")
    state, _ = play(state, govern(1, "F"))
    for seat in range(1, 9):
        with pytest.raises(NotThePresident):
            apply(state, InvestigateLoyalty(seat, 5))
    assert state.phase is Phase.INVESTIGATE and state.investigations == ()
    state, events = play(state, investigate(5))
    assert one(events, ev.LoyaltyInvestigated) == ev.LoyaltyInvestigated(0, 5)
