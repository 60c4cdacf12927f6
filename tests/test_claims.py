"""Claims: computer players say what they drew, passed, saw and suspect; liberals truly, and everyone listens."""

from __future__ import annotations

import dataclasses
import json
import random
import typing
from pathlib import Path

import pytest

from moderator import cli
from moderator import record as records
from moderator.bots import Chooser, ComputerPlayer, Memory, judge, play, random_player, speaking_order
from moderator.claims import (
    Accusation,
    Claim,
    ClaimError,
    Clearance,
    InvestigationClaim,
    Office,
    PeekClaim,
    SessionClaim,
    Spoken,
    from_json,
    is_true,
    to_json,
)
from moderator.engine import (
    Action,
    DiscardPolicy,
    EnactPolicy,
    GameState,
    History,
    InvestigateLoyalty,
    Party,
    Phase,
    PlayerView,
    Policy,
    Role,
    Session,
    apply,
    new_game,
    opening_events,
    public_view,
)
from moderator.simulate import computer_game
from tests.test_bots import Table, table

L, F = Policy.LIBERAL, Policy.FASCIST
BOT = ComputerPlayer()
NAMES = ["Ann", "Bob", "Cy", "Dee", "Eve", "Fay", "Gus"]


class Recorded:
    """A computer player whose every action is appended to a list shared by the table (to replay the game)."""

    def __init__(self, actions: list[Action], player: ComputerPlayer = BOT) -> None:
        self.actions, self.player = actions, player

    def __call__(self, view: PlayerView, memory: Memory, rng: random.Random) -> Action:
        action = self.player.choose(view, memory, rng)
        self.actions.append(action)
        return action

    def claims(self, view: PlayerView, memory: Memory, rng: random.Random) -> tuple[Claim, ...]:
        return self.player.claims(view, memory, rng)


class RecordedRandom:
    """A random player (who says nothing) whose actions go to the shared list."""

    def __init__(self, actions: list[Action]) -> None:
        self.actions = actions

    def __call__(self, view: PlayerView, memory: Memory, rng: random.Random) -> Action:
        action = random_player(view, memory, rng)
        self.actions.append(action)
        return action


def talking_game(
    players: int, seed: int, mixed: bool = False
) -> tuple[GameState, list[Spoken], list[Action]]:
    """One seeded game with claims: its end, every claim said (with its step) and every action."""
    actions: list[Action] = []
    state = new_game(players, seed=seed)
    choosers: list[Chooser] = [
        RecordedRandom(actions) if mixed and (seat + seed) % 3 == 0 else Recorded(actions)
        for seat in range(players)
    ]
    transcript: list[Spoken] = []
    end = play(state, choosers, seed, claims=True, transcript=transcript)
    return end, transcript, actions


GAMES = [(players, seed) for players in range(5, 11) for seed in range(8)]
_played: dict[tuple[int, int, bool], tuple[GameState, list[Spoken], list[Action]]] = {}


def game(players: int, seed: int, mixed: bool = False) -> tuple[GameState, list[Spoken], list[Action]]:
    """``talking_game``, played once per test session."""
    key = (players, seed, mixed)
    if key not in _played:
        _played[key] = talking_game(players, seed, mixed)
    return _played[key]


def all_claims(mixed: bool = False) -> list[tuple[GameState, Spoken]]:
    """Every claim said in the seeded games, with the game's end."""
    return [
        (end, spoken)
        for players, seed in GAMES
        for end, transcript, _ in [game(players, seed, mixed)]
        for spoken in transcript
    ]


# --- the model ------------------------------------------------------------------------------------------


CLAIMS: list[Claim] = [
    SessionClaim(0, Office.PRESIDENT, 0, (L, F, F), (F, L)),
    SessionClaim(1, Office.CHANCELLOR, 0, (F, L), (F,)),
    SessionClaim(1, Office.CHANCELLOR, 3, (F, F), ()),
    InvestigationClaim(2, 4, Party.FASCIST),
    InvestigationClaim(2, 3, Party.LIBERAL),
    PeekClaim(3, 3, (L, F, F)),
    Accusation(4, 2),
    Clearance(5, 6),
    Accusation(4, 3, sure=False),
    Clearance(5, 2, sure=False),
]


@pytest.mark.parametrize("claim", CLAIMS, ids=lambda claim: claim.kind.value)
def test_claims_round_trip_through_json_with_seats_and_with_names(claim: Claim) -> None:
    assert from_json(json.loads(json.dumps(to_json(claim)))) == claim
    named = to_json(claim, NAMES)
    assert named["player"] == NAMES[claim.speaker]
    assert from_json(json.loads(json.dumps(named)), NAMES) == claim


def test_an_opinion_says_so_in_json_and_a_plain_accusation_reads_as_it_always_did() -> None:
    assert to_json(Accusation(4, 2)) == {"claim": "accusation", "player": 4, "target": 2}
    assert to_json(Accusation(4, 2, sure=False))["sure"] is False
    assert from_json({"claim": "clearance", "player": 1, "target": 0}) == Clearance(1, 0, sure=True)


def test_the_replay_timeline_quotes_an_opinion_as_one() -> None:
    played = computer_game(5, 1)
    said = [Spoken(1, claim) for claim in (Accusation(0, 1, sure=False), Clearance(1, 2, sure=False), Accusation(0, 1))]
    record = records.parse(records.to_json(NAMES[:5], played.state, played.actions, said))
    lines = {line.strip() for line in records.timeline(records.replay(record)).splitlines()}
    assert {'Ann claims: "I do not trust Bob."', 'Bob claims: "I trust Cy."'} <= lines
    assert 'Ann claims: "Bob is a fascist."' in lines


def test_a_session_claim_keeps_counts_not_order() -> None:
    claim = SessionClaim(0, Office.PRESIDENT, 0, (L, F, F), (L, F))
    assert claim == SessionClaim(0, Office.PRESIDENT, 0, (F, L, F), (F, L))
    assert to_json(claim)["hand"] == "FFL" and claim.discarded == (F,)


# A rigged game's truth: seat 0 (liberal) drew LFF and passed FF to seat 1 (Hitler), who enacted F; seat 2
# (fascist) drew FFF and passed FF to seat 3 (liberal), and they vetoed; seat 3 peeked LLF. No third session.
TRUTH = new_game(7, seed=0).replace(
    roles=(Role.LIBERAL, Role.HITLER, Role.FASCIST, Role.LIBERAL, Role.LIBERAL, Role.FASCIST, Role.LIBERAL),
    history=History(
        sessions=(
            Session(0, 1, (L, F, F), L, (F, F), F, False),
            Session(2, 3, (F, F, F), F, (F, F), None, True),
        ),
        peeks=((3, (L, L, F)),),
    ),
)


@pytest.mark.parametrize(
    ("claim", "true"),
    [
        (SessionClaim(0, Office.PRESIDENT, 0, (F, L, F), (F, F)), True),
        (SessionClaim(0, Office.PRESIDENT, 0, (F, F, F), (F, F)), False),
        (SessionClaim(1, Office.CHANCELLOR, 0, (F, F), (F,)), True),
        (SessionClaim(1, Office.CHANCELLOR, 0, (F, L), (F,)), False),
        (SessionClaim(3, Office.CHANCELLOR, 1, (F, F), ()), True),
        (SessionClaim(3, Office.CHANCELLOR, 1, (F, F), (F,)), False),
        (SessionClaim(4, Office.PRESIDENT, 2, (F, F, F), (F, F)), False),
        (InvestigationClaim(0, 1, Party.FASCIST), True),
        (InvestigationClaim(0, 2, Party.LIBERAL), False),
        (PeekClaim(3, 2, (L, L, F)), True),
        (PeekClaim(3, 2, (F, F, F)), False),
        (PeekClaim(0, 2, (L, L, F)), False),
        (Accusation(4, 2), True),
        (Accusation(2, 4), False),
        (Clearance(0, 6), True),
        (Clearance(0, 1), False),
        # "I do not trust Bob" and "I trust Bob" are opinions: no fact of the game makes them false.
        (Accusation(2, 4, sure=False), True),
        (Clearance(0, 1, sure=False), True),
    ],
    ids=lambda value: value.kind.value if not isinstance(value, bool) else str(value).lower(),
)
def test_a_claim_is_true_only_if_it_says_what_happened(claim: Claim, true: bool) -> None:
    assert is_true(claim, TRUTH) is true


@pytest.mark.parametrize(
    "data",
    [
        {"claim": "session", "player": 0, "office": "president", "session": 0, "hand": "FF", "passed": "FF"},
        {"claim": "session", "player": 0, "office": "president", "session": 0, "hand": "FFF", "passed": "FL"},
        {"claim": "session", "player": 0, "office": "chancellor", "session": 0, "hand": "FL", "passed": "FL"},
        {"claim": "session", "player": 0, "office": "mayor", "session": 0, "hand": "FFL", "passed": "FL"},
        {"claim": "investigation", "player": 0, "target": 1, "party": "hitler"},
        {"claim": "peek", "player": 0, "session": 2, "policies": "FFX"},
        {"claim": "accusation", "player": "0", "target": 1},
        {"claim": "gossip", "player": 0, "target": 1},
        {"claim": "clearance", "player": 0},
        {"claim": "accusation", "player": 0, "target": 1, "sure": "no"},
    ],
)
def test_a_malformed_claim_is_refused(data: dict[str, object]) -> None:
    with pytest.raises(ClaimError):
        from_json(data)


def test_a_claim_naming_an_unknown_player_is_refused() -> None:
    with pytest.raises(ClaimError):
        from_json({"claim": "accusation", "player": "Ann", "target": "Zed"}, NAMES)


# --- what the computer players say ----------------------------------------------------------------------


def spoken_by(
    claims: list[tuple[GameState, Spoken]], role: Role | None = None
) -> list[tuple[GameState, Claim]]:
    """The claims whose speaker had ``role`` (any role if None)."""
    return [
        (end, spoken.claim)
        for end, spoken in claims
        if role is None or end.roles[spoken.claim.speaker] is role
    ]


def test_a_liberals_claims_are_always_true() -> None:
    liberal = spoken_by(all_claims(), Role.LIBERAL)
    assert {type(claim) for _, claim in liberal} >= {SessionClaim, InvestigationClaim, PeekClaim, Accusation}
    assert all(is_true(claim, end) for end, claim in liberal)


def test_a_liberal_tells_what_it_saw_truly_among_random_players() -> None:
    # Accusations are certainties about how liberals play, which random liberals do not: only facts here.
    liberal = [
        (end, claim)
        for end, claim in spoken_by(all_claims(True), Role.LIBERAL)
        if isinstance(claim, (SessionClaim, InvestigationClaim, PeekClaim))
    ]
    assert len(liberal) > 50 and all(is_true(claim, end) for end, claim in liberal)


def test_fascists_lie_in_some_claims_and_tell_the_truth_in_others() -> None:
    fascist = spoken_by(all_claims(), Role.FASCIST)
    truths = [is_true(claim, end) for end, claim in fascist]
    assert any(truths) and not all(truths)


def test_lies_never_contradict_the_enacted_policy() -> None:
    for end, claim in spoken_by(all_claims()) + spoken_by(all_claims(True)):
        if not isinstance(claim, SessionClaim):
            continue
        enacted = end.history.sessions[claim.session].enacted
        if claim.office is Office.PRESIDENT:
            assert enacted is None or enacted in claim.passed
        else:
            assert claim.passed == (() if enacted is None else (enacted,))


def test_every_claim_is_about_what_its_speaker_did_or_saw() -> None:
    for end, claim in spoken_by(all_claims()) + spoken_by(all_claims(True)):
        history = end.history
        match claim:
            case SessionClaim(speaker=speaker, office=office, session=index, hand=held):
                session = history.sessions[index]
                holder = session.president if office is Office.PRESIDENT else session.chancellor
                assert speaker == holder
                # A Chancellor speaks of the two policies received: never of the President's three or discard.
                assert len(held) == (3 if office is Office.PRESIDENT else 2)
            case InvestigationClaim(speaker=speaker, target=target):
                assert (speaker, target) in history.investigations
            case PeekClaim(speaker=speaker):
                assert speaker in {president for president, _ in history.peeks}
            case Accusation(speaker=speaker, target=target) | Clearance(speaker=speaker, target=target):
                assert speaker != target


def test_no_claim_is_said_before_the_action_it_is_about() -> None:
    for players, seed in GAMES[::3]:
        _, transcript, actions = game(players, seed, mixed=True)
        states = [new_game(players, seed=seed)]
        for action in actions:
            states.append(apply(states[-1], action)[0])
        for spoken in transcript:
            public = public_view(states[spoken.step])
            claim = spoken.claim
            match claim:
                case SessionClaim(session=index):
                    assert index < len(public.sessions)
                case InvestigationClaim(speaker=speaker, target=target):
                    assert (speaker, target) in public.investigations
                case PeekClaim(speaker=speaker, session=index):
                    assert speaker in {p for p, _ in states[spoken.step].history.peeks}
                    assert index == len(public.sessions)
                case Accusation() | Clearance():
                    pass


def test_a_government_says_nothing_about_its_session_until_it_ends() -> None:
    t = table("LLLFH", top="FFL")
    t.nominate(1).vote(True)
    assert BOT.claims(t.view(0), t.memories[0], random.Random(0)) == ()
    t.do(DiscardPolicy(0, F))
    assert BOT.claims(t.view(0), t.memories[0], random.Random(0)) == ()
    assert BOT.claims(t.view(1), t.memories[1], random.Random(0)) == ()
    t.do(EnactPolicy(1, L))
    assert BOT.claims(t.view(0), t.memories[0], random.Random(0)) == (
        SessionClaim(0, Office.PRESIDENT, 0, (F, F, L), (F, L)),
    )
    assert BOT.claims(t.view(1), t.memories[1], random.Random(0)) == (
        SessionClaim(1, Office.CHANCELLOR, 0, (F, L), (L,)),
    )


def say(t: Table, seat: int, player: ComputerPlayer = BOT, seed: int = 0) -> tuple[Claim, ...]:
    """What ``seat`` says now; every seat hears it."""
    claims = player.claims(t.view(seat), t.memories[seat], random.Random(seed))
    hear(t, *claims)
    return claims


def hear(t: Table, *claims: Claim) -> None:
    """Every seat hears ``claims``."""
    for claim in claims:
        t.memories = [memory.hear(claim) for memory in t.memories]


def test_a_seat_says_each_thing_once() -> None:
    t = table("LLLFH", top="FFL")
    t.nominate(1).vote(True).do(DiscardPolicy(0, F), EnactPolicy(1, L))
    assert say(t, 0)
    assert say(t, 0) == ()


def test_a_fascist_president_who_threw_a_liberal_away_claims_three_fascist_policies() -> None:
    t = table("LLLFH", top="FFL", first_president=3)
    t.nominate(0).vote(True).do(DiscardPolicy(3, L), EnactPolicy(0, F))
    honest = ComputerPlayer(frame=0.0)
    assert say(t, 3, honest) == (SessionClaim(3, Office.PRESIDENT, 0, (F, F, F), (F, F)),)
    assert say(t, 0)[0] == SessionClaim(0, Office.CHANCELLOR, 0, (F, F), (F,))


def test_once_the_pile_is_reshuffled_a_fascist_claims_what_the_deck_allows() -> None:
    # Five sessions each draw F, F, L; the first four are claimed truly. The fifth, a fascist's, ends the pile: its
    # three fascist policies are exactly what the pile can still have held, with none to spare for later draws.
    t = table("LLLHF", top="FFL" * 5)
    for president, chancellor in ((0, 1), (1, 2), (2, 3), (3, 0)):
        t.nominate(chancellor).vote(True).do(DiscardPolicy(president, F), EnactPolicy(chancellor, L))
        hear(t, SessionClaim(president, Office.PRESIDENT, president, (F, F, L), (F, L)))
    t.nominate(1).vote(True).do(DiscardPolicy(4, L), EnactPolicy(1, F))
    assert t.state.liberal_policies == 4 and t.view(4).public.draw_pile > 3  # reshuffled after the fifth session
    assert say(t, 4, ComputerPlayer(frame=0.0))[0] == SessionClaim(4, Office.PRESIDENT, 4, (F, F, F), (F, F))


def test_a_fascist_government_that_passed_a_liberal_policy_tells_the_truth() -> None:
    t = table("LLLFH", top="FLL", first_president=3)
    t.nominate(0).vote(True).do(DiscardPolicy(3, F), EnactPolicy(0, L))
    assert say(t, 3, ComputerPlayer(frame=1.0)) == (SessionClaim(3, Office.PRESIDENT, 0, (F, L, L), (L, L)),)


def test_a_fascist_chancellor_who_chose_the_fascist_policy_claims_two_fascist_policies() -> None:
    t = table("LLLFH", top="FFL")
    t.nominate(3).vote(True).do(DiscardPolicy(0, F), EnactPolicy(3, F))
    assert say(t, 0) == (SessionClaim(0, Office.PRESIDENT, 0, (F, F, L), (F, L)), Accusation(0, 3))
    assert say(t, 3)[0] == SessionClaim(3, Office.CHANCELLOR, 0, (F, F), (F,))


def test_a_claim_depends_only_on_what_the_seat_may_know() -> None:
    # Seats 3 and 4 swap secret roles: the liberal Chancellor in seat 1 sees exactly the same, so says the same.
    said = []
    for letters in ("LLLFH", "LLLHF"):
        t = table(letters, top="FFL")
        t.nominate(1).vote(True).do(DiscardPolicy(0, F), EnactPolicy(1, L))
        say(t, 0)
        said.append(say(t, 1))
    assert said[0] == said[1] and said[0]


def test_the_speaking_api_takes_a_player_view_and_never_the_game_state() -> None:
    hints = typing.get_type_hints(ComputerPlayer.claims)
    assert hints["view"] is PlayerView and hints["memory"] is Memory
    assert GameState not in hints.values()


def test_the_last_government_speaks_first() -> None:
    t = table("LLLFH", top="FFL", first_president=2)
    t.nominate(4).vote(True).do(DiscardPolicy(2, F), EnactPolicy(4, L))
    assert speaking_order(t.view(0).public) == (2, 4, 3, 0, 1)


def test_fascists_accuse_distrust_trust_and_clear_as_liberals_do() -> None:
    kinds: dict[Role, set[tuple[type, bool]]] = {role: set() for role in Role}
    for end, claim in spoken_by(all_claims()):
        if isinstance(claim, (Accusation, Clearance)):
            kinds[end.roles[claim.speaker]].add((type(claim), claim.sure))
    every = {(Accusation, True), (Accusation, False), (Clearance, True), (Clearance, False)}
    assert kinds[Role.FASCIST] == every
    assert kinds[Role.LIBERAL] >= {(Accusation, True), (Accusation, False), (Clearance, True)}


def test_every_investigator_follows_his_claim_with_a_verdict_liberal_or_fascist() -> None:
    investigators: set[Role] = set()
    for players, seed in GAMES:
        end, transcript, _ = game(players, seed)
        for spoken in transcript:
            claim = spoken.claim
            if not isinstance(claim, InvestigationClaim):
                continue
            investigators.add(end.roles[claim.speaker])
            verdict: Claim = (
                Accusation(claim.speaker, claim.target)
                if claim.party is Party.FASCIST
                else Clearance(claim.speaker, claim.target)
            )
            assert Spoken(spoken.step, verdict) in transcript, claim
    assert investigators == {Role.LIBERAL, Role.FASCIST, Role.HITLER}


def test_no_fascist_gives_himself_away_where_silence_is_safer() -> None:
    # A confession: a President's claim that he threw a liberal away, a Chancellor's that he enacted a fascist
    # policy holding a liberal one. A fascist lies where a lie holds, or says nothing.
    for end, claim in spoken_by(all_claims()) + spoken_by(all_claims(True)):
        if not isinstance(claim, SessionClaim) or end.roles[claim.speaker] is Role.LIBERAL:
            continue
        enacted = end.history.sessions[claim.session].enacted
        if claim.office is Office.PRESIDENT:
            assert not (F in claim.hand and claim.discarded == (L,)), claim
        else:
            assert not (L in claim.hand and enacted is F), claim


def test_a_chancellors_two_fascist_policies_against_his_president_is_no_certain_tell() -> None:
    # The President says he handed over a liberal policy, the Chancellor that he got two fascist ones and enacted
    # one: sometimes the Chancellor lies, and sometimes the President framed him.
    liars: set[bool] = set()
    for players, seed in GAMES:
        end, transcript, _ = game(players, seed)
        told = {(s.claim.session, s.claim.office): s.claim for s in transcript if isinstance(s.claim, SessionClaim)}
        for (index, office), chancellor in told.items():
            president = told.get((index, Office.PRESIDENT))
            if office is Office.CHANCELLOR and president is not None and chancellor.hand == (F, F) and \
                    L in president.passed and end.history.sessions[index].enacted is F:
                liars.add(end.roles[chancellor.speaker] is Role.LIBERAL)
    assert liars == {True, False}


def test_a_fascist_frames_a_liberal_and_counter_accuses_in_a_dispute() -> None:
    t = table("LLLFH", top="FFL")
    t.nominate(3).vote(True).do(DiscardPolicy(0, F), EnactPolicy(3, F))
    assert say(t, 0) == (SessionClaim(0, Office.PRESIDENT, 0, (F, F, L), (F, L)), Accusation(0, 3))
    # The fascist Chancellor says no liberal came to him, and accuses his President as a wronged liberal would.
    assert say(t, 3) == (SessionClaim(3, Office.CHANCELLOR, 0, (F, F), (F,)), Accusation(3, 0))


def test_a_fascist_speaks_for_an_accused_teammate_and_a_liberal_does_not() -> None:
    t = table("LLLFH")
    hear(t, Accusation(0, 4))
    assert Clearance(3, 4, sure=False) in say(t, 3)
    assert not any(isinstance(c, Clearance) and c.target == 4 for c in say(t, 1))


def test_a_liberal_accused_does_not_accuse_back_by_reflex() -> None:
    t = table("LLLFH")
    hear(t, Accusation(3, 0))
    assert not any(isinstance(c, Accusation) and c.target == 3 for c in say(t, 0))
    assert judge(t.view(0), t.memories[0]).suspicion[3] > judge(t.view(1), t.memories[1]).suspicion[3]


def test_a_liberal_says_he_does_not_trust_the_likeliest_fascist_before_he_is_sure() -> None:
    t = table("LLLFH", top="FFF" * 3)
    t.govern(3).govern(4)  # P0 + C3, P1 + C4: F, F
    t.govern(3)  # P2 + C3: F, the fascist again
    said = say(t, 0)
    assert Accusation(0, 3, sure=False) in said and Accusation(0, 3) not in said
    assert 3 not in judge(t.view(0), t.memories[0]).fascists


# --- what the computer players hear ---------------------------------------------------------------------


def test_a_conflict_between_president_and_chancellor_raises_suspicion_on_both() -> None:
    t = table("LLLLFFH", top="FFL")
    t.nominate(1).vote(True).do(DiscardPolicy(0, F), EnactPolicy(1, F))
    before = judge(t.view(3), t.memories[3]).suspicion
    hear(
        t,
        SessionClaim(0, Office.PRESIDENT, 0, (F, F, L), (F, L)),
        SessionClaim(1, Office.CHANCELLOR, 0, (F, F), (F,)),
    )
    after = judge(t.view(3), t.memories[3]).suspicion
    assert after[0] > before[0] and after[1] > before[1]
    assert after[2:] == before[2:]


def test_agreeing_claims_raise_no_suspicion() -> None:
    t = table("LLLLFFH", top="FFF")
    t.nominate(1).vote(True).do(DiscardPolicy(0, F), EnactPolicy(1, F))
    before = judge(t.view(3), t.memories[3])
    hear(
        t,
        SessionClaim(0, Office.PRESIDENT, 0, (F, F, F), (F, F)),
        SessionClaim(1, Office.CHANCELLOR, 0, (F, F), (F,)),
    )
    assert judge(t.view(3), t.memories[3]) == before


def test_a_liberal_framed_by_the_president_knows_the_president_lied() -> None:
    t = table("LLLFH", top="FFL", first_president=3)
    t.nominate(0).vote(True).do(DiscardPolicy(3, L), EnactPolicy(0, F))
    # The fascist frames his liberal Chancellor: "I handed over a liberal", and accuses him as a liberal would.
    assert say(t, 3, ComputerPlayer(frame=1.0)) == (
        SessionClaim(3, Office.PRESIDENT, 0, (F, F, L), (F, L)),
        Accusation(3, 0),
    )
    assert 3 not in judge(t.view(0), t.memories[0]).fascists
    assert say(t, 0) == (SessionClaim(0, Office.CHANCELLOR, 0, (F, F), (F,)), Accusation(0, 3))
    assert 3 in judge(t.view(0), t.memories[0]).fascists
    assert 3 not in judge(t.view(1), t.memories[1]).fascists


def investigated(claim_party: Party) -> Table:
    """Seven players; the liberal in seat 0 has investigated seat 1 (a fascist) and claims ``claim_party``."""
    t = table("LFLLLHF", top="F" * 9, first_president=6)
    t.govern(3).govern(4).do(InvestigateLoyalty(0, 1))
    hear(t, InvestigationClaim(0, 1, claim_party))
    return t


def test_an_investigation_claim_moves_the_accused() -> None:
    base = table("LFLLLHF", top="F" * 9, first_president=6)
    base.govern(3).govern(4).do(InvestigateLoyalty(0, 1))
    neutral = judge(base.view(2), base.memories[2]).suspicion[1]
    assert (
        judge(investigated(Party.FASCIST).view(2), investigated(Party.FASCIST).memories[2]).suspicion[1]
        > neutral
    )
    assert (
        judge(investigated(Party.LIBERAL).view(2), investigated(Party.LIBERAL).memories[2]).suspicion[1]
        < neutral
    )


def test_a_wrongly_accused_liberal_knows_the_accuser_lied() -> None:
    t = table("LFLLLHF", top="F" * 9, first_president=6)
    t.govern(3).govern(4).do(InvestigateLoyalty(0, 1))
    hear(t, InvestigationClaim(0, 2, Party.FASCIST))  # seat 0 never investigated seat 2: ignored
    assert 0 not in judge(t.view(2), t.memories[2]).fascists
    t2 = table("LLFLLHF", top="F" * 9, first_president=6)
    t2.govern(3).govern(4).do(InvestigateLoyalty(0, 1))
    hear(t2, InvestigationClaim(0, 1, Party.FASCIST))  # seat 1 is a liberal: it knows seat 0 lied
    assert 0 in judge(t2.view(1), t2.memories[1]).fascists
    assert 0 not in judge(t2.view(3), t2.memories[3]).fascists


def test_a_claim_beyond_the_decks_arithmetic_marks_the_claimer() -> None:
    # The deck holds six liberal policies: after two true three-liberal claims, a third claim of two is impossible.
    t = table("LLLLFFH", top="LLLLLL")
    t.nominate(1).vote(True).do(DiscardPolicy(0, L), EnactPolicy(1, L))
    t.nominate(2).vote(True).do(DiscardPolicy(1, L), EnactPolicy(2, L))
    t.nominate(3).vote(True).do(DiscardPolicy(2, F), EnactPolicy(3, F))
    hear(
        t,
        SessionClaim(0, Office.PRESIDENT, 0, (L, L, L), (L, L)),
        SessionClaim(1, Office.PRESIDENT, 1, (L, L, L), (L, L)),
    )
    plausible = SessionClaim(2, Office.PRESIDENT, 2, (F, F, F), (F, F))
    impossible = SessionClaim(2, Office.PRESIDENT, 2, (F, L, L), (F, L))
    scores = []
    for claim in (plausible, impossible):
        memory = t.memories[3].hear(claim)
        scores.append(judge(t.view(3), memory).suspicion)
    assert scores[1][2] > scores[0][2]


def test_when_the_only_other_claimer_of_an_impossible_cycle_is_left_it_is_the_liar() -> None:
    t = table("LFLLLFH", top="LLLLLL")
    t.nominate(1).vote(True).do(DiscardPolicy(0, L), EnactPolicy(1, L))  # P0 draws L L L
    for chancellor in (2, 3, 4, 5, 6, 0):  # two rounds of chaos: each takes a liberal policy off the top
        t.nominate(chancellor).vote(False)
    t.nominate(2).vote(False)
    t.nominate(2).vote(True).do(DiscardPolicy(1, F), EnactPolicy(2, L))  # P1 draws L F F
    assert t.state.liberal_policies == 4
    # Seat 0's three and chaos's two leave one liberal for seat 1's draw, which it claims held three.
    hear(
        t,
        SessionClaim(0, Office.PRESIDENT, 0, (L, L, L), (L, L)),
        SessionClaim(1, Office.PRESIDENT, 1, (L, L, L), (L, L)),
    )
    assert 1 in judge(t.view(0), t.memories[0]).fascists
    assert 1 not in judge(t.view(3), t.memories[3]).fascists
    assert (
        judge(t.view(3), t.memories[3]).suspicion[1]
        > judge(t.view(3), dataclasses.replace(t.memories[3], claims=())).suspicion[1]
    )


# --- whole games ----------------------------------------------------------------------------------------


def test_seeded_games_with_claims_replay_exactly() -> None:
    first, second = talking_game(7, 21), talking_game(7, 21)
    assert first == second and first[1]


def test_claims_off_play_says_nothing_and_plays_as_before() -> None:
    transcript: list[Spoken] = []
    quiet = play(new_game(7, seed=21), [BOT] * 7, 21, transcript=transcript)
    assert transcript == [] and quiet == play(new_game(7, seed=21), [BOT] * 7, 21)
    assert quiet != game(7, 21)[0] or game(7, 21)[1] == []


def test_memory_with_claims_is_rebuilt_by_replaying_events_and_claims_in_order() -> None:
    actions: list[Action] = []
    players = [Recorded(actions) for _ in range(7)]
    transcript: list[Spoken] = []
    end = play(new_game(7, seed=5), players, 5, claims=True, transcript=transcript)
    # Rebuild seat 2's memory the way the service would: the seat's events and the claims, by step.
    state = new_game(7, seed=5)
    memory = Memory(2)
    for event in opening_events(state):
        if event.audience.includes(2):
            memory = memory.observe(event)
    spoken = iter(transcript)
    pending = next(spoken, None)
    for action in actions:
        state, events = apply(state, action)
        for event in events:
            if event.audience.includes(2):
                memory = memory.observe(event)
        while pending is not None and pending.step == state.step:
            memory = memory.hear(pending.claim)
            pending = next(spoken, None)
    assert state == end and pending is None
    assert memory.claims == tuple(s.claim for s in transcript)
    json.dumps([to_json(claim) for claim in memory.claims])


def test_games_with_claims_end_with_a_winner() -> None:
    for players, seed in GAMES:
        end = game(players, seed)[0]
        assert end.phase is Phase.GAME_OVER and end.winner is not None


def test_simulate_with_computer_players_prints_its_tally_and_writes_records_that_replay_with_their_claims(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`moderator simulate --computers` prints what `simulate` prints, says the players were the computers, plays
    the same games again from the same seed, and --record writes records whose timeline tells the claims."""
    first, again = tmp_path / "first", tmp_path / "again"
    for folder in (first, again):
        assert cli.main(["simulate", "--computers", "--players", "6", "--games", "2", "--seed", "3",
                         "--record", str(folder)]) == 0
    out = capsys.readouterr().out
    tallies = out.split("records written to")
    assert tallies[0].startswith("6 players, seed 3, computer players\ngames: 2\n")
    for side in ("liberal wins: ", "fascist wins: ", "average governments per game: ", "games per second: "):
        assert tallies[0].count(side) == 1
    wins = [int(line.split(": ")[1].split()[0]) for line in tallies[0].splitlines() if " wins: " in line]
    assert sum(wins) == 2
    assert f"records written to {first}\n" in out and f"records written to {again}\n" in out
    # The same seed plays the same games: the same tally (but the speed) and the same records.
    assert [line for line in tallies[1].splitlines()[1:] if "per second" not in line] == [
        line for line in tallies[0].splitlines() if "per second" not in line]
    files = sorted(first.glob("*.json"))
    assert [path.name for path in files] == ["game-00001.json", "game-00002.json"]
    assert [path.read_text() for path in files] == [path.read_text() for path in sorted(again.glob("*.json"))]
    for path in files:
        record = records.loads(path.read_text(encoding="utf-8"))
        result = records.replay(record)
        assert result.error is None and result.state.winner is not None
        assert record.claims and all(s.step <= result.applied for s in record.claims)
    game = computer_game(6, 3 * 1_000_003)
    assert records.parse(json.loads(files[0].read_text())).claims == game.claims
    # Replay's timeline tells each claim in its place, in the catalog's words.
    assert cli.main(["replay", str(files[0])]) == 0
    timeline = capsys.readouterr().out
    assert timeline.count(' claims: "') == len(game.claims) > 0


def test_simulate_without_computers_plays_random_players_who_claim_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["simulate", "--players", "6", "--games", "2", "--seed", "3", "--record", str(tmp_path)]) == 0
    assert capsys.readouterr().out.startswith("6 players, seed 3\ngames: 2\n")
    for path in sorted(tmp_path.glob("*.json")):
        assert not records.loads(path.read_text(encoding="utf-8")).claims
