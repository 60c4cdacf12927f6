"""B7. The Hitler-Chancellor check (items 48-53)."""

from __future__ import annotations

from moderator.engine import Party, Phase, Role, WinReason, public_view
from moderator.engine import events as ev

from .scenario import (
    chaos,
    elect,
    govern,
    kinds,
    legislate,
    of_type,
    one,
    play,
    public,
    reject,
    rigged,
    special_election,
    values,
)

HITLER = 4  # 5-player default roles: LLLFH


def test_hitler_elected_chancellor_after_three_fascist_policies_wins_for_fascists():
    """Items 48, 101, 104: 3 F on the board and Hitler is elected Chancellor: the Fascists win immediately."""
    state = rigged(5, fascist=3)
    state, events = play(state, elect(HITLER))
    ended = one(events, ev.GameEnded)
    assert (ended.winner, ended.reason) == (Party.FASCIST, WinReason.HITLER_ELECTED)
    assert state.phase is Phase.GAME_OVER and state.winner is Party.FASCIST
    assert state.win_reason is WinReason.HITLER_ELECTED


def test_hitler_check_runs_at_election_before_any_card_is_drawn():
    """Items 49, 104: the win comes with the election result: no session starts, no card is drawn, the
    tracker is not touched and no power is used."""
    state = rigged(5, fascist=4, tracker=2)
    before = state.draw_pile
    state, events = play(state, elect(HITLER))
    names = kinds(events)
    assert names[names.index("ElectionDecided") + 1 :] == ["GameEnded"]
    assert not of_type(events, ev.PoliciesDrawn) and not of_type(events, ev.LegislativeSessionStarted)
    assert state.draw_pile == before and state.hand == ()
    assert state.election_tracker == 2
    assert state.sessions == ()


def test_only_the_fascist_count_at_election_time_matters():
    """Item 50 (B18 #7): with 2 F Hitler is elected (no win); the same government enacts F3 and the game goes
    on (no retroactive win); Hitler elected Chancellor later wins."""
    state = rigged(5, deck="FFF" "LFF", fascist=2)
    state, events = play(state, elect(HITLER))
    assert not of_type(events, ev.GameEnded) and not of_type(events, ev.ChancellorNotHitler)
    assert state.phase is Phase.LEGISLATIVE_PRESIDENT
    state, events = play(state, legislate("F"))
    assert state.fascist_policies == 3 and state.winner is None
    assert state.phase is Phase.NOMINATION and state.president == 1
    state, _ = play(state, govern(2, "L"))  # Hitler is term-limited for one government
    state, events = play(state, elect(HITLER))
    assert one(events, ev.GameEnded).reason is WinReason.HITLER_ELECTED


def test_chaos_enacted_fascist_policies_count_toward_the_hitler_zone():
    """Items 51, 43 (B18 #8): the 3rd F comes from chaos; the next time Hitler is elected Chancellor the
    Fascists win."""
    state = rigged(5, deck="F", fascist=2)
    state, events = play(state, chaos())
    assert one(events, ev.PolicyEnacted).by_chaos and state.fascist_policies == 3
    assert state.president == 3
    state, events = play(state, elect(HITLER))
    assert one(events, ev.GameEnded).reason is WinReason.HITLER_ELECTED


def test_non_hitler_chancellor_elected_in_the_zone_is_announced_not_hitler():
    """Items 52, 51 (B18 #8): with 3 F (the third by chaos) a non-Hitler Chancellor is elected: a public event
    names them as not Hitler, nothing else about their role is revealed, and the public view remembers it."""
    state = rigged(5, "LFLLH", deck="F", fascist=2)
    state, _ = play(state, chaos())
    state, events = play(state, elect(1))  # the ordinary Fascist
    confirmed = one(events, ev.ChancellorNotHitler)
    assert confirmed == ev.ChancellorNotHitler(1) and confirmed.audience.everyone
    for event in public(events):
        assert not any(isinstance(v, Role) for v in values(event))
    assert public_view(state).not_hitler == (1,)
    assert state.phase is Phase.LEGISLATIVE_PRESIDENT


def test_a_chancellor_confirmed_twice_is_listed_once_as_not_hitler():
    """Item 52: the same non-Hitler Chancellor is elected twice with 3 F on the board: each election announces
    it, and the public view lists that seat once."""
    state = rigged(5, fascist=3, deck="LFF" "LFF" "LFF")
    state, first = play(state, govern(1, "L"), govern(2, "L"))
    state, again = play(state, elect(1))
    assert of_type(first, ev.ChancellorNotHitler) == [ev.ChancellorNotHitler(1), ev.ChancellorNotHitler(2)]
    assert of_type(again, ev.ChancellorNotHitler) == [ev.ChancellorNotHitler(1)]
    assert public_view(state).not_hitler == (1, 2)


def test_no_not_hitler_announcement_below_three_fascist_policies():
    """Item 52: with 2 F an elected Chancellor is not announced as not Hitler (the rule is not in force)."""
    state = rigged(5, fascist=2)
    state, events = play(state, elect(1))
    assert not of_type(events, ev.ChancellorNotHitler)
    assert public_view(state).not_hitler == ()


def test_rejected_hitler_nomination_reveals_nothing():
    """Item 53: with 3 F Hitler is nominated Chancellor and rejected: no win, no reveal of any kind."""
    state = rigged(5, fascist=3)
    state, events = play(state, reject(HITLER))
    assert not of_type(events, ev.GameEnded) and not of_type(events, ev.ChancellorNotHitler)
    assert state.winner is None and state.not_hitler == ()
    for event in public(events):
        assert not any(isinstance(v, Role) for v in values(event))


def test_hitler_as_president_in_the_zone_has_no_effect():
    """Item 53: with 3 F a government with Hitler as President is elected: the game goes on to the
    legislative session, and only the Chancellor is confirmed not Hitler."""
    state = rigged(5, first=HITLER, fascist=3)
    state, events = play(state, elect(0))
    assert state.winner is None and state.phase is Phase.LEGISLATIVE_PRESIDENT
    assert [e.chancellor for e in of_type(events, ev.ChancellorNotHitler)] == [0]
    assert state.president == HITLER


def test_special_election_government_gets_the_hitler_check():
    """Item 53: the check applies to a special-election government too: 7p, F3 enacted, the special
    President nominates Hitler, who is elected: the Fascists win."""
    state = rigged(7, deck="FFF", first=0, fascist=2)
    state, _ = play(state, govern(1, "F"))
    state, events = play(state, special_election(3), elect(6))
    assert one(events, ev.GameEnded).reason is WinReason.HITLER_ELECTED
