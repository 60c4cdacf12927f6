"""B1. Players, roles and setup (items 1-8)."""

from __future__ import annotations

from collections import Counter

import pytest

from moderator.engine import (
    InvalidSetup,
    Phase,
    Role,
    new_game,
    opening_events,
)
from moderator.engine.events import GameStarted, PresidentialCandidateChosen, RoleDealt

from .scenario import all_vote, govern, nominate, play, reject, rigged, roles_of

ROLE_TABLE = {5: (3, 1), 6: (4, 1), 7: (4, 2), 8: (5, 2), 9: (5, 3), 10: (6, 3)}
"""Players -> (liberals, ordinary fascists), copied from the rulebook's table; plus one Hitler."""


def dealt(state) -> dict[int, RoleDealt]:
    return {e.seat: e for e in opening_events(state) if isinstance(e, RoleDealt)}


@pytest.mark.parametrize("players", [0, 3, 4, 11, 12])
def test_player_count_outside_five_to_ten_is_rejected(players):
    """Item 1: Secret Hitler is for 5 to 10 players; 4 or 11 cannot start."""
    with pytest.raises(InvalidSetup):
        new_game(players, seed=1)


@pytest.mark.parametrize("players", range(5, 11))
def test_player_count_five_to_ten_is_accepted(players):
    """Item 1: every table size from 5 to 10 starts a game with a nomination."""
    state = new_game(players, seed=1)
    assert state.players == players
    assert state.phase is Phase.NOMINATION
    assert opening_events(state)[0] == GameStarted(players)


@pytest.mark.parametrize("players", range(5, 11))
def test_role_counts_are_exact_and_each_seat_gets_each_role_roughly_uniformly(players):
    """Item 2: 1,000 deals per table size: the role counts are always the rulebook's, and every seat gets
    every role with about its share of the deals."""
    liberals, fascists = ROLE_TABLE[players]
    deals = 1000
    per_seat: list[Counter[Role]] = [Counter() for _ in range(players)]
    for seed in range(deals):
        roles = new_game(players, seed=seed).roles
        assert Counter(roles) == {Role.LIBERAL: liberals, Role.FASCIST: fascists, Role.HITLER: 1}
        for seat, role in enumerate(roles):
            per_seat[seat][role] += 1
    for seat in range(players):
        for role, count in ((Role.LIBERAL, liberals), (Role.FASCIST, fascists), (Role.HITLER, 1)):
            expected = deals * count / players
            assert abs(per_seat[seat][role] - expected) < 0.3 * expected + 30, (seat, role, per_seat[seat])


@pytest.mark.parametrize(
    "players, roles",
    [
        (5, "LLLLH"),  # no ordinary fascist
        (5, "LLFFH"),  # one liberal short
        (7, "LLLLLFH"),  # 7 players need two fascists
        (9, "LLLLLLFFH"),
        (6, "LLLLFF"),  # no Hitler
        (6, "LLLFHH"),  # two Hitlers
        (6, "LLLLH"),  # a seat without a role
    ],
)
def test_rigged_roles_must_match_the_role_table(players, roles):
    """Item 2: a rigged deal must hold exactly the liberals, fascists and one Hitler the table requires."""
    with pytest.raises(InvalidSetup):
        new_game(players, seed=1, roles=roles_of(roles))


def test_hitler_party_membership_is_fascist():
    """Item 3: Hitler's party membership card says Fascist (investigation is tested in test_investigate)."""
    assert Role.HITLER.party == Role.FASCIST.party != Role.LIBERAL.party
    state = rigged(5, "LLLFH")
    assert dealt(state)[4].party is Role.FASCIST.party


@pytest.mark.parametrize("players", [5, 6])
def test_in_five_and_six_player_games_hitler_and_the_fascist_know_each_other(players):
    """Item 4: with 5-6 players Hitler's deal names the Fascist, the Fascist's names Hitler, and liberals'
    deals name nobody."""
    state = rigged(players, {5: "LFLHL", 6: "LFLHLL"}[players])
    deal = dealt(state)
    assert deal[3].role is Role.HITLER and deal[3].known == ((1, Role.FASCIST),)
    assert deal[1].role is Role.FASCIST and deal[1].known == ((3, Role.HITLER),)
    for seat in range(players):
        if state.roles[seat] is Role.LIBERAL:
            assert deal[seat].known == ()


@pytest.mark.parametrize("players", [7, 8, 9, 10])
def test_in_seven_to_ten_player_games_fascists_know_each_other_and_hitler_but_hitler_knows_nobody(players):
    """Item 5: with 7-10 players each ordinary Fascist's deal lists the other Fascists and Hitler; Hitler's
    lists nobody."""
    letters = {7: "FLHLFLL", 8: "FLHLFLLL", 9: "FLHLFLFLL", 10: "FLHLFLFLLL"}[players]
    state = rigged(players, letters)
    deal = dealt(state)
    fascists = {seat for seat, c in enumerate(letters) if c == "F"}
    for seat in fascists:
        expected = tuple(sorted((other, state.roles[other]) for other in fascists | {2} if other != seat))
        assert tuple(sorted(deal[seat].known)) == expected
        assert (2, Role.HITLER) in deal[seat].known
    assert deal[2].role is Role.HITLER and deal[2].known == ()


def test_nine_player_fascist_knows_two_fascists_and_hitler():
    """Item 5: the checklist's case: 9p, each ordinary Fascist's message lists the other 2 Fascists and Hitler."""
    state = rigged(9, "LFLFLHLFL")
    deal = dealt(state)
    assert deal[1].known == ((3, Role.FASCIST), (5, Role.HITLER), (7, Role.FASCIST))
    assert deal[3].known == ((1, Role.FASCIST), (5, Role.HITLER), (7, Role.FASCIST))
    assert deal[7].known == ((1, Role.FASCIST), (3, Role.FASCIST), (5, Role.HITLER))
    assert deal[5].known == ()


@pytest.mark.parametrize("players", range(5, 11))
def test_liberals_know_nobody(players):
    """Item 6: no liberal is told anyone's role, only their own; and each deal goes to that seat alone."""
    for seed in range(20):
        state = new_game(players, seed=seed)
        for seat, event in dealt(state).items():
            assert event.role is state.roles[seat]
            assert event.audience.includes(seat) and not event.audience.everyone
            assert all(not event.audience.includes(other) for other in range(players) if other != seat)
            if event.role is Role.LIBERAL:
                assert event.known == ()


@pytest.mark.parametrize("players", range(5, 11))
def test_first_president_is_random_and_roughly_uniform(players):
    """Item 7: over 1,000 seeded games every seat is the first Presidential Candidate about 1/n of the time."""
    games = 1000
    counts = Counter(new_game(players, seed=seed).president for seed in range(games))
    assert set(counts) == set(range(players))
    expected = games / players
    for seat in range(players):
        assert 0.6 * expected < counts[seat] < 1.4 * expected, counts


def test_first_president_is_announced_and_can_be_rigged():
    """Item 7: the chosen first candidate is announced publicly; a rigged first President is honoured and a
    seat outside the table is rejected."""
    state = new_game(7, seed=3, first_president=4)
    assert state.president == 4
    assert opening_events(state)[-1] == PresidentialCandidateChosen(4, False)
    with pytest.raises(InvalidSetup):
        new_game(7, seed=3, first_president=7)


def test_rotation_follows_seat_order_and_wraps_around():
    """Item 8: the presidency passes from seat i to seat i+1 and from the last seat back to seat 0."""
    state = rigged(7, deck="LFFLFF", first=5)
    seen = [state.president]
    for step in (govern(None, "L"), govern(None, "L"), reject(), reject()):
        state, _ = play(state, step)
        seen.append(state.president)
    assert seen == [5, 6, 0, 1, 2]


def test_rotation_follows_the_seating_not_the_roles():
    """Item 8: reseating the same roles in a different order changes who sits where, not the rotation: the
    presidency always goes to the next seat number (the host's confirmed seat order)."""
    for letters in ("LLLFH", "HFLLL", "LHLFL"):
        state = rigged(5, letters, first=3)
        order = [state.president]
        for _ in range(5):
            state, _ = play(state, nominate(next(s for s in range(5) if s != state.president)), all_vote(False))
            order.append(state.president)
        assert order == [3, 4, 0, 1, 2, 3]
