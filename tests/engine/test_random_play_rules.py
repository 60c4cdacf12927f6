"""Random legal games checked step by step against an independent model of the rules.

The model is written from the checklist, not from the engine: it follows the presidency, the last elected
government, the board powers and the veto from the events alone, and every step of 204 seeded random games
must agree with it.
"""

from __future__ import annotations

from moderator.engine import (
    Phase,
    Policy,
    Power,
    ProposeVeto,
    Role,
    WinReason,
    legal_actions,
)
from moderator.engine import events as ev

from .scenario import chancellor, nominees, president, random_games

# One letter per power, so the table below reads like the board.
_: Power | None = None
I, S, P, E = Power.INVESTIGATE_LOYALTY, Power.SPECIAL_ELECTION, Power.POLICY_PEEK, Power.EXECUTION  # noqa: E741
BOARD = {5: (_, _, P, E, E), 6: (_, _, P, E, E), 7: (_, I, S, E, E), 8: (_, I, S, E, E)}
BOARD |= {9: (I, I, S, E, E), 10: (I, I, S, E, E)}
POWER_PHASES = (Phase.INVESTIGATE, Phase.SPECIAL_ELECTION, Phase.EXECUTION)


def _next_living(seat, alive):
    n = len(alive)
    seat = (seat + 1) % n
    while not alive[seat]:
        seat = (seat + 1) % n
    return seat


def test_random_games_follow_the_rules_model():
    """Items 16, 18, 21, 24, 27, 29, 30, 34, 35, 39, 48, 61, 71, 102: in 204 random games over 5-10 players,
    every new Presidential Candidate is the next living seat after the last regular President (or after the
    caller of a special election), the nominees offered are exactly the living others minus the last elected
    government (only its Chancellor with five or fewer alive; nobody after chaos until the next election), a
    vote elects exactly on a strict majority of the living, failures advance the tracker, the Hitler check and
    the board's powers happen exactly when they should, veto is offered exactly from the fifth fascist policy
    on, and a game only ends on one of the four win conditions."""
    for game in random_games():
        _, first, _ = game[0]
        anchor = first.president  # the seat the rotation continues from
        last_gov: tuple[int, int] | None = None
        veto_refused = False
        for before, after, events in game[1:]:
            assert before is not None  # only the opening has no state before it
            n = before.players
            chaos = any(isinstance(e, ev.PolicyEnacted) and e.by_chaos for e in events)

            # Eligible nominees: living others minus the last elected government.
            if before.phase is Phase.NOMINATION:
                limited = set()
                if last_gov is not None:
                    limited = {last_gov[1]} | ({last_gov[0]} if before.alive.count(True) > 5 else set())
                expected = {s for s in range(n) if before.alive[s] and s != before.president} - limited
                assert nominees(before, president(before)) == expected

            # Votes: a strict majority of the living; failures advance the tracker.
            for decided in (e for e in events if isinstance(e, ev.ElectionDecided)):
                ja = sum(v for _, v in decided.votes)
                assert len(decided.votes) == before.alive.count(True)
                assert decided.elected == (2 * ja > before.alive.count(True))
                if decided.elected:
                    last_gov = (decided.president, decided.chancellor)
                    veto_refused = False
                    hitler = before.roles[decided.chancellor] is Role.HITLER
                    zone = before.fascist_policies >= 3
                    assert (after.win_reason is WinReason.HITLER_ELECTED) == (zone and hitler)
                    assert any(isinstance(e, ev.ChancellorNotHitler) for e in events) == (zone and not hitler)
                elif not chaos:
                    assert after.election_tracker == before.election_tracker + 1
            if chaos:
                last_gov = None
                assert after.election_tracker == 0

            # Veto is offered exactly from the fifth fascist policy on, once per session.
            if before.phase is Phase.LEGISLATIVE_CHANCELLOR:
                offered = ProposeVeto(chancellor(before)) in legal_actions(before, chancellor(before))
                assert offered == (before.fascist_policies >= 5 and not veto_refused)
            if any(isinstance(e, ev.VetoAnswered) and not e.accepted for e in events):
                veto_refused = True

            # Powers: the board's, for a government's fascist policy only.
            granted = [e.power for e in events if isinstance(e, ev.PresidentialPowerGranted)]
            granted += [P for e in events if isinstance(e, ev.PolicyPeekUsed)]
            enacted = [e for e in events if isinstance(e, ev.PolicyEnacted)]
            expected_power = []
            fascist = enacted and not enacted[0].by_chaos and enacted[0].policy is Policy.FASCIST
            if fascist and enacted[0].fascist_policies < 6 and after.phase is not Phase.GAME_OVER:
                power = BOARD[n][enacted[0].fascist_policies - 1]
                expected_power = [power] if power else []
            assert granted == expected_power

            # The presidency: next living seat after the anchor, or the special-election target.
            for chosen in (e for e in events if isinstance(e, ev.PresidentialCandidateChosen)):
                if chosen.special_election:
                    action_target = next(e.target for e in events if isinstance(e, ev.SpecialElectionCalled))
                    assert chosen.president == action_target
                    anchor = before.president
                else:
                    assert chosen.president == _next_living(anchor, after.alive)
                    anchor = chosen.president

            # Outside a session the draw pile always holds three cards; the game ends only on a win.
            if after.phase in (Phase.NOMINATION, Phase.ELECTION, *POWER_PHASES):
                assert len(after.draw_pile) >= 3
            elif after.phase is Phase.GAME_OVER:
                assert after.liberal_policies == 5 or after.fascist_policies == 6 or after.win_reason in (
                    WinReason.HITLER_ELECTED,
                    WinReason.HITLER_EXECUTED,
                )
                if after.win_reason is WinReason.HITLER_EXECUTED:
                    assert not after.alive[after.roles.index(Role.HITLER)]
        assert game[-1][1].phase is Phase.GAME_OVER


def test_random_games_reach_every_kind_of_event_the_model_checks():
    """Items 21, 39, 64, 71: the 204 random games do exercise special elections, chaos, accepted vetoes and
    every power, so the model check above is not vacuous."""
    seen: set[object] = set()
    for game in random_games():
        for _, _, events in game:
            for e in events:
                if isinstance(e, ev.PresidentialPowerGranted):
                    seen.add(e.power)
                elif isinstance(e, ev.PolicyPeekUsed):
                    seen.add(Power.POLICY_PEEK)
                elif isinstance(e, ev.PolicyEnacted) and e.by_chaos:
                    seen.add("chaos")
                elif isinstance(e, ev.VetoAnswered) and e.accepted:
                    seen.add("veto")
                elif isinstance(e, ev.GameEnded):
                    seen.add(e.reason)
    assert seen >= {I, S, P, E, "chaos", "veto", *WinReason}
