"""Computer players: legal, blind to the state, plausible, and better than chance."""

from __future__ import annotations

import dataclasses
import json
import random
import typing
from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from moderator.bots import Chooser, ComputerPlayer, Memory, judge, play, random_choice, random_player
from moderator.claims import Office, SessionClaim
from moderator.engine import (
    Action,
    AnswerVeto,
    CallSpecialElection,
    CastVote,
    DiscardPolicy,
    EnactPolicy,
    Event,
    ExecutePlayer,
    GameState,
    InvestigateLoyalty,
    NominateChancellor,
    Party,
    Phase,
    PlayerView,
    Policy,
    ProposeVeto,
    Role,
    apply,
    awaiting,
    new_game,
    opening_events,
    view_for,
)
from moderator.engine.events import PoliciesDrawn
from moderator.simulate import random_game

L, F = Policy.LIBERAL, Policy.FASCIST
BOT = ComputerPlayer()


# --- a rigged table -------------------------------------------------------------------------------------


def roles(letters: str) -> tuple[Role, ...]:
    """Roles from letters: L liberal, F fascist, H Hitler, one per seat."""
    return tuple({"L": Role.LIBERAL, "F": Role.FASCIST, "H": Role.HITLER}[c] for c in letters)


def cards(letters: str) -> tuple[Policy, ...]:
    """Policies from letters, top first."""
    return tuple(Policy(c) for c in letters)


def deck(top: str) -> tuple[Policy, ...]:
    """A full 17-policy deck with ``top`` on top, then the remaining fascist and liberal policies."""
    rest_f = 11 - top.count("F")
    rest_l = 6 - top.count("L")
    return cards(top + "F" * rest_f + "L" * rest_l)


class Table:
    """A rigged game played by hand, keeping every seat's memory as the service would."""

    def __init__(self, state: GameState) -> None:
        self.state = state
        self.memories = [Memory(seat) for seat in range(state.players)]
        self.shown: list[list[Event]] = [[] for _ in range(state.players)]
        """Every event each seat was shown, in order."""
        self._show(opening_events(state))

    def _show(self, events: Sequence[Event]) -> None:
        for event in events:
            for seat in range(self.state.players):
                if event.audience.includes(seat):
                    self.memories[seat] = self.memories[seat].observe(event)
                    self.shown[seat].append(event)

    def do(self, *actions: Action) -> Table:
        """Apply actions in order."""
        for action in actions:
            self.state, events = apply(self.state, action)
            self._show(events)
        return self

    def vote(self, ja: bool = True) -> Table:
        """Every living player votes the same way."""
        return self.do(*(CastVote(seat, ja) for seat in range(self.state.players) if self.state.alive[seat]))

    def nominate(self, chancellor: int) -> Table:
        """The Presidential Candidate nominates ``chancellor``."""
        assert self.state.president is not None
        return self.do(NominateChancellor(self.state.president, chancellor))

    def govern(self, chancellor: int) -> Table:
        """The candidate's government is elected unanimously and enacts a fascist policy if it holds one."""
        self.nominate(chancellor).vote(True)
        president = self.state.president
        assert president is not None and self.state.phase is Phase.LEGISLATIVE_PRESIDENT
        hand = self.state.hand
        self.do(DiscardPolicy(president, L if L in hand else F))
        hand = self.state.hand
        return self.do(EnactPolicy(chancellor, F if F in hand else L))

    def view(self, seat: int) -> PlayerView:
        """What ``seat`` may know now."""
        return view_for(self.state, seat)

    def decide(self, seat: int, seed: int = 0, player: ComputerPlayer = BOT) -> Action:
        """The computer player's decision for ``seat`` from its view and memory only."""
        return player.choose(self.view(seat), self.memories[seat], random.Random(seed))

    def decisions(self, seat: int, player: ComputerPlayer = BOT, seeds: int = 40) -> set[Action]:
        """Every decision the computer player makes for ``seat`` over many random seeds."""
        return {self.decide(seat, seed, player) for seed in range(seeds)}


def table(letters: str, top: str = "", first_president: int = 0, reshuffles: Sequence[str] = ()) -> Table:
    """A rigged table: roles by letter, the deck's top policies, the first President."""
    return Table(
        new_game(
            len(letters),
            seed=1,
            roles=roles(letters),
            deck=deck(top),
            first_president=first_president,
            reshuffles=[cards(order) for order in reshuffles],
        )
    )


def in_hitler_zone(players: int) -> Table:
    """Three fascist policies down, the fascist in seat 0 is the candidate, Hitler (seat 1) is eligible."""
    if players == 5:
        # Slots 1 and 2 grant nothing; slot 3 is the peek, which asks nothing of the President.
        t = table("FHLLL", first_president=2)
        t.govern(3).govern(4).govern(2)
    else:
        # Slot 2 investigates, slot 3 calls a special election: the President calls the fascist in seat 0.
        t = table("FHFLLLL", first_president=3)
        t.govern(4).govern(5)
        t.do(InvestigateLoyalty(4, 6))
        t.govern(6)
        t.do(CallSpecialElection(5, 0))
    assert t.state.fascist_policies == 3 and t.state.president == 0 and t.state.phase is Phase.NOMINATION
    return t


def with_veto_power() -> Table:
    """Seven players, five fascist policies down, two liberals executed; seat 4 (liberal) is the candidate.

    Seats: 0 L, 1 L (executed), 2 F, 3 H, 4 L, 5 F, 6 L (executed). The reshuffle after five sessions puts
    six fascist policies on top, so every later session draws three fascist policies.
    """
    t = table("LLFHLFL", top="FFL" * 5 + "FL", reshuffles=["FFFFFFLLLLLL"])
    t.govern(1)  # P0 + C1: F1
    t.govern(2).do(InvestigateLoyalty(1, 4))  # P1 + C2: F2
    t.govern(4).do(CallSpecialElection(2, 4))  # P2 + C4: F3, P2 calls P4
    t.govern(0).do(ExecutePlayer(4, 6))  # P4 + C0: F4
    t.govern(1).do(ExecutePlayer(3, 1))  # P3 + C1: F5, the placard resumed after P2
    assert t.state.fascist_policies == 5 and t.state.president == 4 and t.state.phase is Phase.NOMINATION
    return t


# --- legality and blindness -----------------------------------------------------------------------------


def checked(chooser: Chooser, seen: list[type]) -> Chooser:
    """``chooser``, asserting that it is only given a view and a memory and only returns a legal action."""

    def choose(view: PlayerView, memory: Memory, rng: random.Random) -> Action:
        assert isinstance(view, PlayerView) and isinstance(memory, Memory)
        seen.extend((type(view), type(memory)))
        action = chooser(view, memory, rng)
        assert action in view.legal_actions
        return action

    return choose


@settings(max_examples=100, deadline=None)
@given(
    players=st.integers(5, 10),
    seed=st.integers(0, 2**32),
    heuristic=st.lists(st.booleans(), min_size=10, max_size=10),
)
def test_a_bot_only_returns_legal_actions_and_every_game_ends(
    players: int, seed: int, heuristic: list[bool]
) -> None:
    seen: list[type] = []
    choosers = [checked(BOT if heuristic[seat] else random_player, seen) for seat in range(players)]
    end = play(new_game(players, seed=seed), choosers, seed)
    assert end.phase is Phase.GAME_OVER and end.winner is not None
    assert GameState not in seen


def test_the_bot_api_takes_a_player_view_and_never_the_game_state() -> None:
    hints = typing.get_type_hints(ComputerPlayer.choose)
    assert hints["view"] is PlayerView and hints["memory"] is Memory and hints["return"] == Action
    assert GameState not in hints.values()
    assert typing.get_type_hints(random_choice)["view"] is PlayerView
    assert typing.get_type_hints(judge)["view"] is PlayerView


def test_whole_games_are_driven_through_view_for_only() -> None:
    for players in range(5, 11):
        seen: list[type] = []
        end = play(new_game(players, seed=players), [checked(BOT, seen)] * players, players)
        assert end.winner is not None
        assert set(seen) == {PlayerView, Memory}


def test_a_decision_depends_only_on_what_the_seat_may_know() -> None:
    # Seats 3 and 4 swap secret roles: the liberal in seat 0 sees exactly the same, so decides the same.
    first, second = table("LLLFH", top="FFL"), table("LLLHF", top="FFL")
    for t in (first, second):
        t.nominate(1).vote(True)
    assert first.view(0) == second.view(0)
    assert first.decisions(0) == second.decisions(0)


def test_a_seeded_game_replays_exactly() -> None:
    a = play(new_game(7, seed=11), [BOT] * 7, 5)
    b = play(new_game(7, seed=11), [BOT] * 7, 5)
    assert a == b


def test_random_choice_is_uniform_among_legal_actions() -> None:
    t = table("LLLFH")
    view = t.view(0)
    rng = random.Random(3)
    picks = [random_choice(view, rng) for _ in range(400)]
    assert set(picks) == set(view.legal_actions)
    with pytest.raises(ValueError):
        random_choice(t.view(1), rng)


# --- memory ---------------------------------------------------------------------------------------------


def test_memory_is_a_small_serialisable_value_rebuilt_by_replaying_the_seats_events() -> None:
    t = Table(new_game(7, seed=4))
    rngs = [random.Random(seat) for seat in range(7)]
    while t.state.phase is not Phase.GAME_OVER:
        for seat in awaiting(t.state):
            t.do(BOT.choose(t.view(seat), t.memories[seat], rngs[seat]))
    for seat in range(7):
        rebuilt = Memory(seat)
        for event in t.shown[seat]:
            rebuilt = rebuilt.observe(event)
        assert rebuilt == t.memories[seat]
        json.dumps(dataclasses.asdict(rebuilt))
    assert t.memories[0].elections


def test_memory_refuses_an_event_its_seat_may_not_see() -> None:
    with pytest.raises(ValueError):
        Memory(0).observe(PoliciesDrawn(2, cards("FFL")))


# --- liberals -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("hand", ["FFL", "FLF", "LFF", "FLL"])
def test_a_liberal_president_discards_a_fascist_policy(hand: str) -> None:
    t = table("LLLFH", top=hand)
    t.nominate(1).vote(True)
    assert t.decisions(0) == {DiscardPolicy(0, F)}


def test_a_liberal_chancellor_with_one_of_each_enacts_the_liberal_policy() -> None:
    t = table("LLLFH", top="FFL")
    t.nominate(1).vote(True).do(DiscardPolicy(0, F))
    assert t.view(1).hand == (F, L)
    assert t.decisions(1) == {EnactPolicy(1, L)}


def test_a_liberal_votes_ja_on_the_first_government_when_nothing_is_known() -> None:
    t = table("LLLFH")
    t.nominate(3)
    assert t.decisions(2) == {CastVote(2, True)}


def test_a_liberal_votes_nein_on_a_government_including_a_player_who_passed_a_fascist_policy() -> None:
    t = table("LLLLFFH", top="FFF" + "LLL")
    t.govern(5)  # P0 + C5: F
    t.govern(2)  # P1 + C2: L
    t.nominate(5)  # P2 renominates the fascist's Chancellor
    assert t.decisions(3) == {CastVote(3, False)}


def test_a_liberal_never_votes_for_a_player_it_investigated_as_fascist() -> None:
    # 7 players: seat 0 (liberal) investigates seat 1 (fascist) at the second fascist policy.
    t = table("LFLLLHF", top="F" * 9, first_president=6)
    t.govern(3)  # P6 + C3: F1
    t.govern(4).do(InvestigateLoyalty(0, 1))  # P0 + C4: F2
    assert t.view(0).investigations == ((1, Party.FASCIST),)
    # P1 (the fascist) runs three times in a row with different chancellors; the last one at tracker 2.
    t.nominate(2)
    assert t.decisions(0) == {CastVote(0, False)}
    t.vote(False)
    t.nominate(6)  # P2 nominates the fascist's teammate... who is unknown to seat 0
    t.vote(False)
    assert t.state.election_tracker == 2 and t.state.president == 3
    t.nominate(1)
    assert t.decisions(0) == {CastVote(0, False)}


def test_a_liberal_president_never_nominates_a_known_fascist() -> None:
    t = table("LFLLLHF", top="F" * 9, first_president=6)
    t.govern(3)
    t.govern(4).do(InvestigateLoyalty(0, 1))
    t.nominate(2).vote(False)  # P1
    t.nominate(3).vote(False)  # P2
    t.nominate(5).vote(False)  # P3: chaos
    t.nominate(5).vote(False)  # P4
    t.nominate(2).vote(False)  # P5
    t.nominate(2).vote(False)  # P6: chaos
    assert t.state.president == 0 and 1 in t.view(0).public.eligible_chancellors
    nominated = {action.chancellor for action in t.decisions(0) if isinstance(action, NominateChancellor)}
    assert nominated and 1 not in nominated


def test_a_liberal_executes_the_fascist_it_investigated() -> None:
    t = table("LFLLLHF", top="F" * 11, first_president=6)
    t.govern(3)  # P6: F1
    t.govern(4).do(InvestigateLoyalty(0, 1))  # P0: F2
    t.govern(2).do(CallSpecialElection(1, 0))  # P1: F3, calls P0
    t.govern(3)  # P0: F4, execution
    assert t.state.phase is Phase.EXECUTION
    assert t.decisions(0) == {ExecutePlayer(0, 1)}


def test_a_liberal_chancellor_with_two_fascist_policies_proposes_a_veto() -> None:
    t = with_veto_power()
    t.nominate(0).vote(True).do(DiscardPolicy(4, F))
    assert t.view(0).hand == (F, F)
    assert t.decisions(0) == {ProposeVeto(0)}


def test_a_liberal_president_accepts_a_veto_only_when_he_passed_two_fascist_policies() -> None:
    t = with_veto_power()
    t.nominate(0).vote(True).do(DiscardPolicy(4, F), ProposeVeto(0))
    assert t.view(4).passed == (F, F)
    assert t.decisions(4) == {AnswerVeto(4, True)}


def test_a_fascist_president_refuses_a_liberal_veto() -> None:
    t = with_veto_power()
    t.nominate(0).vote(True).do(DiscardPolicy(4, F), ProposeVeto(0), AnswerVeto(4, True))
    assert t.state.president == 5  # the fascist
    # With five alive only the last Chancellor is term-limited, so the liberal in seat 4 may serve.
    t.nominate(4).vote(True).do(DiscardPolicy(5, F), ProposeVeto(4))
    assert t.view(5).passed == (F, F)
    assert t.decisions(5) == {AnswerVeto(5, False)}


def test_a_liberal_never_helps_a_third_failed_election_when_chaos_can_lose() -> None:
    t = with_veto_power()  # five fascist policies: a sixth from the top of the pile loses the game
    t.nominate(0).vote(False)
    t.nominate(2)  # the fascist's government, at tracker 1: the liberal votes it down
    assert t.decisions(4) == {CastVote(4, False)}
    t.vote(False)
    assert t.state.election_tracker == 2
    t.nominate(2)  # the same Chancellor, now at tracker 2: chaos may enact the sixth fascist policy
    assert 2 not in judge(t.view(4), t.memories[4]).fascists
    assert t.decisions(4) == {CastVote(4, True)}


def test_in_the_hitler_zone_a_mark_weighs_against_a_player() -> None:
    # A conflicting session claim marks both members of that government; the mark counts beside suspicion.
    quiet, marked = in_hitler_zone(7), in_hitler_zone(7)
    for claim in (
        SessionClaim(3, Office.PRESIDENT, 0, (F, F, L), (F, L)),
        SessionClaim(4, Office.CHANCELLOR, 0, (F, F), (F,)),
    ):
        marked.memories = [memory.hear(claim) for memory in marked.memories]
    risks = []
    for t in (quiet, marked):
        view, memory = t.view(5), t.memories[5]
        belief = judge(view, memory)
        risk = BOT._hitler_risk(view, memory, belief)
        risks.append([r - score for r, score in zip(risk, belief.suspicion, strict=True)])  # what the zone adds
    for seat in (3, 4):
        assert risks[1][seat] == pytest.approx(risks[0][seat] + BOT.zone_marked)
    assert risks[1][0] == pytest.approx(risks[0][0]) and risks[1][2] == pytest.approx(risks[0][2])
    marked.nominate(4)
    assert marked.decisions(5) == {CastVote(5, False)}


def test_a_fascist_chancellor_does_not_set_his_word_against_hitlers() -> None:
    # Seven players: Hitler (seat 1) knows nobody and tells the truth; his fascist Chancellor enacts the liberal.
    t = table("FHFLLLL", top="FFL", first_president=1)
    t.nominate(0).vote(True).do(DiscardPolicy(1, F))
    assert t.view(0).hand == (F, L)
    assert t.decisions(0) == {EnactPolicy(0, L)}


# --- fascists -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("players", [5, 7])
def test_a_fascist_elects_hitler_once_three_fascist_policies_are_down(players: int) -> None:
    t = in_hitler_zone(players)
    assert 1 in t.view(0).public.eligible_chancellors
    assert t.decisions(0) == {NominateChancellor(0, 1)}
    t.nominate(1)
    fascists = [seat for seat, role in enumerate(t.state.roles) if role is not Role.LIBERAL]
    for seat in fascists:
        assert t.decisions(seat) == {CastVote(seat, True)}


def test_a_fascist_president_never_executes_hitler_or_a_teammate() -> None:
    # 7 players: the fascist in seat 0 presides over the fourth fascist policy.
    t = table("FHFLLLL", top="F" * 11, first_president=3)
    t.govern(4).govern(5).do(InvestigateLoyalty(4, 6))
    t.govern(6).do(CallSpecialElection(5, 0))
    t.govern(3)  # P0 + C3 (Hitler stays out): F4
    assert t.state.phase is Phase.EXECUTION
    targets = {action.target for action in t.decisions(0, seeds=60) if isinstance(action, ExecutePlayer)}
    assert targets and targets.isdisjoint({1, 2})


def test_a_fascist_president_with_two_fascist_policies_blames_the_draw() -> None:
    t = table("LLLFH", top="FFL", first_president=3)
    t.nominate(0).vote(True)
    assert t.decisions(3, player=ComputerPlayer(cover=0.0)) == {DiscardPolicy(3, L)}
    # With some cover, a liberal Chancellor is sometimes handed the liberal policy, to earn trust.
    assert t.decisions(3, player=ComputerPlayer(cover=0.5)) == {DiscardPolicy(3, L), DiscardPolicy(3, F)}


def test_a_fascist_chancellor_with_two_fascist_policies_enacts_one() -> None:
    t = table("LLLFH", top="FFF")
    t.nominate(3).vote(True).do(DiscardPolicy(0, F))
    assert t.decisions(3) == {EnactPolicy(3, F)}


def test_a_fascist_votes_for_a_government_with_a_teammate() -> None:
    t = table("LLLFH")
    t.nominate(4)
    assert t.decisions(3) == {CastVote(3, True)}


def test_hitler_who_knows_nobody_plays_like_a_liberal() -> None:
    t = table("HLLLLFF", top="FFL")
    t.nominate(1).vote(True)
    assert t.decisions(0) == {DiscardPolicy(0, F)}


# --- how well they play ---------------------------------------------------------------------------------


def liberal_share(players: int, games: int, liberal: Chooser, fascist: Chooser) -> float:
    """The liberals' share of wins over seeded games, liberals and fascists played by the given choosers."""
    won = 0
    for seed in range(games):
        state = new_game(players, seed=seed)
        choosers = [liberal if role is Role.LIBERAL else fascist for role in state.roles]
        won += play(state, choosers, seed).winner is Party.LIBERAL
    return won / games


def test_liberals_win_a_plausible_share_and_heuristic_liberals_beat_random_ones() -> None:
    games = 80  # a rough check: benchmarks/bots.py measures the win rates, with intervals
    bots = liberal_share(7, games, BOT, BOT)
    against_random = liberal_share(7, games, BOT, random_player)
    random_only = sum(
        random_game(7, seed, keep_actions=False).state.winner is Party.LIBERAL for seed in range(games)
    )
    random_only_share = random_only / games
    print(
        f"\n7 players, {games} games: liberals win {bots:.0%} of all-bot games, "
        f"{against_random:.0%} as bots against random fascists, "
        f"{random_only_share:.0%} when all play at random"
    )
    assert 0.15 <= bots <= 0.85
    assert against_random > random_only_share + 0.2
