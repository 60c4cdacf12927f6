"""B14. Execution (items 94-100)."""

from __future__ import annotations

import pytest

from moderator.engine import (
    CastVote,
    ExecutePlayer,
    NominateChancellor,
    Party,
    Phase,
    Role,
    WinReason,
    apply,
    awaiting,
    legal_actions,
    public_view,
    view_for,
)
from moderator.engine import events as ev
from moderator.engine.errors import CannotTargetSelf, ExecutedPlayersCannotAct, TargetIsExecuted

from .scenario import (
    all_vote,
    execute,
    govern,
    kinds,
    legislate,
    nominate,
    nominees,
    one,
    play,
    public,
    rigged,
    roles_of,
    targets,
    values,
)

SEVEN = "LFLLHFL"  # Hitler in seat 4, fascists in seats 1 and 5


def executing(roles=SEVEN, first=0, chancellor=2, fascist=3, deck="FFF" "LFF" "LFF"):
    """A 7p game whose President (``first``) has just enacted F4 (or F5) and must execute."""
    state = rigged(7, roles, deck=deck, first=first, fascist=fascist)
    state, _ = play(state, govern(chancellor, "F"))
    assert state.phase is Phase.EXECUTION and state.president == first
    return state


def test_executing_hitler_wins_for_liberals_and_reveals_every_role():
    """Items 94, 101: the President executes Hitler: the game ends at once in a Liberal victory and every role
    is published."""
    state = executing()
    state, events = play(state, execute(4))
    assert kinds(events) == ["PlayerExecuted", "GameEnded"]
    ended = one(events, ev.GameEnded)
    assert (ended.winner, ended.reason) == (Party.LIBERAL, WinReason.HITLER_EXECUTED)
    assert ended.roles == roles_of(SEVEN) and ended.audience.everyone
    assert state.phase is Phase.GAME_OVER and public_view(state).roles == roles_of(SEVEN)


@pytest.mark.parametrize("target", [1, 2, 3, 5, 6])  # fascists 1 and 5, liberals 2 (the Chancellor), 3, 6
def test_non_hitler_execution_reveals_no_party(target):
    """Item 95: executing a non-Hitler player publishes only who was executed; no event names a role or party,
    the game goes on, and the dead player's own view gains nothing."""
    state = executing()
    before = view_for(state, target)
    state, events = play(state, execute(target))
    assert one(events, ev.PlayerExecuted) == ev.PlayerExecuted(0, target)
    for event in events:
        assert event.audience.everyone
        assert not any(isinstance(v, (Role, Party)) for v in values(event)), event
    assert state.winner is None and public_view(state).roles is None
    after = view_for(state, target)
    assert (after.role, after.known_roles, after.investigations, after.peeks, after.sessions) == (
        before.role,
        before.known_roles,
        before.investigations,
        before.peeks,
        before.sessions,
    )
    assert after.legal_actions == ()


def test_executed_player_is_out_of_everything():
    """Item 96: an executed player cannot act in any way (a late vote, a nomination), is never offered an
    action, is not a voter, cannot be nominated and is not counted in the majority."""
    state = executing(first=0, chancellor=2)
    state, _ = play(state, execute(1))
    assert not state.alive[1] and public_view(state).alive[1] is False
    assert state.president == 2  # seat 1 was skipped
    with pytest.raises(ExecutedPlayersCannotAct):
        apply(state, NominateChancellor(1, 3))
    with pytest.raises(TargetIsExecuted):
        apply(state, NominateChancellor(2, 1))
    assert 1 not in nominees(state, 2)
    state, _ = play(state, nominate(3))
    assert 1 not in awaiting(state)
    with pytest.raises(ExecutedPlayersCannotAct):
        apply(state, CastVote(1, True))
    # 3 Ja of 6 living is a tie: it fails, where 3 of 7 would not have counted the dead seat.
    state, events = play(state, *(CastVote(s, s in (0, 2, 3)) for s in (0, 2, 3, 4, 5, 6)))
    assert not one(events, ev.ElectionDecided).elected
    assert legal_actions(state, 1) == () and view_for(state, 1).legal_actions == ()


def test_president_cannot_execute_themself_or_a_dead_player():
    """Item 97 (our interpretation): the President cannot execute themself; nor an already executed player."""
    state = executing(fascist=3)
    with pytest.raises(CannotTargetSelf):
        apply(state, ExecutePlayer(0, 0))
    assert 0 not in targets(state, 0)
    state, _ = play(state, execute(3))
    # F5 for the next President, with seat 3 dead.
    state, _ = play(state, govern(None, "L"))
    state = executing_again(state)
    with pytest.raises(TargetIsExecuted):
        apply(state, ExecutePlayer(state.president, 3))


def executing_again(state):
    state, _ = play(state, govern(None, "F"))
    assert state.phase is Phase.EXECUTION
    return state


def test_fascist_president_may_execute_hitler():
    """Items 98, 74: a fascist President targets Hitler: allowed, and the Liberals win."""
    state = executing(first=1, chancellor=2)
    assert state.roles[1] is Role.FASCIST
    assert ExecutePlayer(1, 4) in legal_actions(state, 1)
    state, _events = play(state, execute(4))
    assert state.winner is Party.LIBERAL and state.win_reason is WinReason.HITLER_EXECUTED


def test_execution_is_announced_publicly_by_name():
    """Item 99: "President X formally executes Y" is public."""
    state = executing()
    state, events = play(state, execute(6))
    executed = one(events, ev.PlayerExecuted)
    assert (executed.president, executed.target) == (0, 6) and executed.audience.everyone
    assert public(events) == list(events)


def test_living_count_changes_immediately_after_an_execution():
    """Item 100 (B18 #6): 7p, the 2nd execution leaves 5 alive, and the very next nomination already allows
    the last President as Chancellor (with 6 alive it did not)."""
    state = executing(fascist=3, deck="FFF" "FFF", chancellor=2)
    state, _ = play(state, execute(3))
    assert public_view(state).alive.count(True) == 6
    assert state.president == 1 and (state.last_president, state.last_chancellor) == (0, 2)
    assert 0 not in nominees(state, 1)
    state, _ = play(state, nominate(5), all_vote(True))
    state, _ = play(state, legislate("F"))
    assert state.phase is Phase.EXECUTION and state.president == 1
    state, _ = play(state, execute(6))
    assert state.alive.count(True) == 5 and state.president == 2
    assert (state.last_president, state.last_chancellor) == (1, 5)
    assert nominees(state, 2) == {0, 1, 4}
    assert public_view(state).term_limited == (5,)


def test_an_executed_player_is_not_listed_as_term_limited():
    """Items 96, 24: the President executes the Chancellor just elected: the public view lists only the living
    last President as term-limited (a dead seat cannot be nominated at all)."""
    state = executing(chancellor=2)
    state, _ = play(state, execute(2))
    assert (state.last_president, state.last_chancellor) == (0, 2)
    assert public_view(state).term_limited == (0,)
