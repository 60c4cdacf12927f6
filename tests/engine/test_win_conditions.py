"""B15. Win conditions and the order of checks (items 101-107)."""

from __future__ import annotations

import pytest

from moderator.engine import (
    AnswerVeto,
    CallSpecialElection,
    CastVote,
    DiscardPolicy,
    EnactPolicy,
    ExecutePlayer,
    InvestigateLoyalty,
    NominateChancellor,
    Party,
    Phase,
    ProposeVeto,
    Role,
    WinReason,
    apply,
    awaiting,
    legal_actions,
    public_view,
    view_for,
)
from moderator.engine import events as ev
from moderator.engine.errors import GameIsOver

from .scenario import (
    F,
    L,
    answer_veto,
    discard,
    elect,
    execute,
    govern,
    kinds,
    of_type,
    one,
    play,
    propose_veto,
    rigged,
    roles_of,
)


def liberals_enact_five():
    state = rigged(5, deck="LFF" * 5)
    return play(state, *(govern(None, "L") for _ in range(5)))


def fascists_enact_six():
    state = rigged(7, deck="FFF", fascist=5)
    return play(state, govern(1, "F"))


def hitler_executed():
    state = rigged(7, "LLLLFFH", deck="FFF", fascist=3)
    return play(state, govern(1, "F"), execute(6))


def hitler_elected():
    state = rigged(7, "LLLLFFH", fascist=3)
    return play(state, elect(6))


@pytest.mark.parametrize(
    "game, winner, reason",
    [
        (liberals_enact_five, Party.LIBERAL, WinReason.POLICIES),
        (hitler_executed, Party.LIBERAL, WinReason.HITLER_EXECUTED),
        (fascists_enact_six, Party.FASCIST, WinReason.POLICIES),
        (hitler_elected, Party.FASCIST, WinReason.HITLER_ELECTED),
    ],
)
def test_all_four_win_conditions_end_the_game(game, winner, reason):
    """Item 101: Liberals win with 5 L or by executing Hitler; Fascists win with 6 F or by electing Hitler
    Chancellor after the third F. Each ends the game with its own reason."""
    state, events = game()
    ended = one(events, ev.GameEnded)
    assert (ended.winner, ended.reason) == (winner, reason)
    assert (state.winner, state.win_reason, state.phase) == (winner, reason, Phase.GAME_OVER)
    assert kinds(events)[-1] == "GameEnded"


def test_sixth_fascist_policy_ends_the_game_before_any_reshuffle_or_power():
    """Item 102: with 4 L and 5 F and 5 cards left, the 6th F drops the pile to 2: the Fascists win at once,
    with no reshuffle, no power and no further prompt."""
    state = rigged(7, deck="FFF" "FLF", liberal=4, fascist=5)
    state, _ = play(state, elect(1), discard("F"), propose_veto(), answer_veto(True))
    assert len(state.draw_pile) == 5
    state, events = play(state, govern(2, "F"))
    assert kinds(events)[-2:] == ["PolicyEnacted", "GameEnded"]
    assert not of_type(events, ev.DeckReshuffled) and not of_type(events, ev.PresidentialPowerGranted)
    assert state.winner is Party.FASCIST and awaiting(state) == ()


def test_fifth_liberal_policy_ends_the_game_at_once_with_no_further_prompts():
    """Item 102: the 5th L ends the game in a Liberal victory with no reshuffle and nobody owing anything."""
    state = rigged(5, deck="FFF" "LFF", liberal=4, fascist=5)
    state, _ = play(state, elect(1), discard("F"), propose_veto(), answer_veto(True))
    assert len(state.draw_pile) == 5
    state, events = play(state, govern(2, "L"))
    assert kinds(events)[-2:] == ["PolicyEnacted", "GameEnded"]
    assert not of_type(events, ev.DeckReshuffled)
    assert state.winner is Party.LIBERAL and awaiting(state) == ()
    assert all(legal_actions(state, seat) == () for seat in range(5))


def test_fifth_fascist_policy_execution_of_hitler_wins_before_veto_is_ever_used():
    """Item 103 (B18 #10): 7p, a government enacts F5: veto is unlocked and the execution is granted; the
    (fascist) President executes Hitler and the Liberals win; no veto ever happens."""
    state = rigged(7, "LFLLFLH", deck="FFF", first=1, fascist=4)
    state, events = play(state, govern(0, "F"))
    assert of_type(events, ev.VetoUnlocked) and state.phase is Phase.EXECUTION
    state, more = play(state, execute(6))
    events += more
    assert state.winner is Party.LIBERAL and state.win_reason is WinReason.HITLER_EXECUTED
    assert not of_type(events, ev.VetoProposed)


def test_hitler_elected_win_comes_at_election_before_the_draw():
    """Item 104: the Hitler-Chancellor win is decided with the vote; the deck and hands are untouched."""
    state = rigged(7, "LLLLFFH", fascist=3)
    before = state.draw_pile
    state, events = play(state, elect(6))
    assert kinds(events)[-2:] == ["ElectionDecided", "GameEnded"]
    assert state.draw_pile == before and not of_type(events, ev.PoliciesDrawn)


@pytest.mark.parametrize("game", [liberals_enact_five, fascists_enact_six, hitler_executed, hitler_elected])
def test_nothing_continues_after_the_game_ends(game):
    """Item 105: after a win nobody is awaited, no seat has a legal action, no office is held, and every
    action is rejected without changing anything."""
    state, _ = game()
    assert awaiting(state) == () and public_view(state).awaiting == ()
    assert state.president is None and state.chancellor is None and state.hand == ()
    for seat in range(state.players):
        assert legal_actions(state, seat) == ()
        for action in (
            NominateChancellor(seat, (seat + 1) % state.players),
            CastVote(seat, True),
            DiscardPolicy(seat, F),
            EnactPolicy(seat, L),
            ProposeVeto(seat),
            AnswerVeto(seat, True),
            InvestigateLoyalty(seat, (seat + 1) % state.players),
            CallSpecialElection(seat, (seat + 1) % state.players),
            ExecutePlayer(seat, (seat + 1) % state.players),
        ):
            with pytest.raises(GameIsOver):
                apply(state, action)


def test_roles_and_the_real_sessions_are_revealed_at_the_end():
    """Item 106: the end of the game publishes every role, and the public view then shows the roles and what
    every government really drew and discarded (before the end it shows neither)."""
    state = rigged(5, "LLLFH", deck="LFF" * 5)
    state, _ = play(state, *(govern(None, "L") for _ in range(4)))
    assert public_view(state).roles is None and public_view(state).truth is None
    state, events = play(state, govern(None, "L"))
    ended = one(events, ev.GameEnded)
    assert ended.roles == roles_of("LLLFH") and ended.audience.everyone
    view = public_view(state)
    assert view.roles == roles_of("LLLFH")
    assert view.truth is not None and len(view.truth) == 5
    assert all(s.drawn == (F, F, L) and s.president_discard is F for s in view.truth)
    assert view_for(state, 2).public == view


def test_no_all_liberals_dead_or_deck_exhaustion_ending():
    """Item 107: the standard game has only the four endings: 5p with two liberals executed (one liberal left
    alive) goes on, and the only win reasons are policies, Hitler executed and Hitler elected."""
    assert set(WinReason) == {WinReason.POLICIES, WinReason.HITLER_EXECUTED, WinReason.HITLER_ELECTED}
    state = rigged(5, "LLLFH", deck="FFL" "FFL" "LFF" "LFF" "LL", fascist=3)
    state, _ = play(state, govern(1, "F"), execute(1))
    state, _ = play(state, govern(3, "F"), execute(0))
    assert [state.roles[s] for s in range(5) if state.alive[s]] == [Role.LIBERAL, Role.FASCIST, Role.HITLER]
    assert state.winner is None and state.phase is Phase.NOMINATION
    # The deck running low is never an ending either: the pile is reshuffled and play goes on.
    state, events = play(state, govern(2, "L"), govern(3, "L"))
    assert of_type(events, ev.DeckReshuffled)
    assert state.winner is None and state.phase is Phase.NOMINATION
