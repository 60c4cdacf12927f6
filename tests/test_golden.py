"""Golden end-to-end scenarios (docs/rules.md, B18 items 1-17) replayed through ``moderator replay --json``.

Each ``tests/golden/NN-name.json`` is a game record with rigged roles, deck and reshuffles that plays one
scenario and stops at the moment that proves it. Beside it, ``NN-name.expected.json`` holds the summary worked
out by hand from the rules, plus ``exit_status`` (read only by this test). Where the summary alone does not
show a scenario's key claim, a check in ``KEY_CLAIMS`` asserts it from the replay's events or final state.
The same records also exercise the readable timeline (``moderator replay`` without ``--json``).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest

from moderator import record as records
from moderator.cli import main
from moderator.engine import (
    CallSpecialElection,
    EnactPolicy,
    Event,
    InvestigateLoyalty,
    NominateChancellor,
    Phase,
    Policy,
    Role,
    apply,
    legal_actions,
)
from moderator.engine import events as ev
from moderator.engine.errors import (
    AlreadyInvestigated,
    CannotTargetSelf,
    ExecutedPlayersCannotAct,
    IneligibleChancellor,
    VetoAlreadyRefused,
)

GOLDEN = Path(__file__).parent / "golden"
RECORDS = sorted(p for p in GOLDEN.glob("*.json") if not p.name.endswith(".expected.json"))
F, L = Policy.FASCIST, Policy.LIBERAL
E = TypeVar("E", bound=Event)


def expected_of(path: Path) -> dict[str, Any]:
    expected: dict[str, Any] = json.loads(path.with_name(path.stem + ".expected.json").read_text(encoding="utf-8"))
    return expected


def replay_file(path: Path) -> records.Replay:
    return records.replay(records.loads(path.read_bytes()))


def golden(stem: str) -> records.Replay:
    return replay_file(GOLDEN / f"{stem}.json")


def seat(result: records.Replay, name: str) -> int:
    return result.record.seat(name)


def of(result: records.Replay, kind: type[E]) -> list[E]:
    return [e for e in result.events if isinstance(e, kind)]


def candidates(result: records.Replay) -> list[tuple[str, bool]]:
    """Every Presidential Candidate in order, with whether they came by special election."""
    names = result.record.players
    return [(names[e.president], e.special_election) for e in of(result, ev.PresidentialCandidateChosen)]


def after(result: records.Replay, event: Event) -> list[Event]:
    """The events that follow the last occurrence of ``event``."""
    events = list(result.events)
    index = len(events) - 1 - events[::-1].index(event)
    return events[index + 1 :]


def prefix(result: records.Replay, actions: int) -> records.Replay:
    """The same record replayed up to its first ``actions`` actions."""
    return records.replay(dataclasses.replace(result.record, actions=result.record.actions[:actions]))


def index_of(result: records.Replay, entry: dict[str, Any]) -> int:
    """The index of the first action of the record equal to this record entry."""
    names = result.record.players
    return [records.action_to_json(names, a) for a in result.record.actions].index(entry)


# --- the summaries --------------------------------------------------------------------------------------


def test_every_scenario_1_to_17_has_a_record_and_an_expectation() -> None:
    numbers = {int(p.name[:2]) for p in RECORDS}
    assert numbers == set(range(1, 18))
    for path in RECORDS:
        assert path.with_name(path.stem + ".expected.json").exists(), path.name
    for path in GOLDEN.glob("*.expected.json"):
        assert path.with_name(path.name.replace(".expected.json", ".json")).exists(), path.name


@pytest.mark.parametrize("path", RECORDS, ids=lambda p: p.stem)
def test_golden_scenario_summary(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    expected = expected_of(path)
    status = expected.pop("exit_status")
    code = main(["replay", str(path), "--json"])
    out, err = capsys.readouterr()
    got = json.loads(out)
    # The spec lets the hand come in any order.
    for summary in (got, expected):
        if summary["hand"] is not None:
            summary["hand"] = sorted(summary["hand"])
    assert got == expected
    assert code == status
    if status == 0:
        assert err == ""
        assert got["applied"] == len(json.loads(path.read_text(encoding="utf-8"))["actions"])
    else:
        assert got["error"]["index"] == got["applied"]


# --- the key claims -------------------------------------------------------------------------------------


def check_01(r: records.Replay) -> None:
    # Cy enacts F3 and picks Dee, the next in line: Dee presides, then Dee again, then Eve.
    assert candidates(r) == [
        ("Ann", False),
        ("Bob", False),
        ("Cy", False),
        ("Dee", True),
        ("Dee", False),
        ("Eve", False),
    ]
    assert of(r, ev.SpecialElectionCalled) == [ev.SpecialElectionCalled(seat(r, "Cy"), seat(r, "Dee"))]


def check_02(r: records.Replay) -> None:
    # Ann (P1) picks Eve (P5); Eve's nominee is rejected; the placard returns left of Ann: Bob (P2), not Fay.
    assert candidates(r)[-3:] == [("Ann", False), ("Eve", True), ("Bob", False)]
    decided = of(r, ev.ElectionDecided)[-1]
    assert decided.president == seat(r, "Eve") and not decided.elected
    assert of(r, ev.ElectionTrackerAdvanced) == [ev.ElectionTrackerAdvanced(1)]


def check_03(r: records.Replay) -> None:
    # Before the vetoing government: 5 F on the track, 4 cards in the deck, the tracker at 2.
    before = prefix(r, index_of(r, {"player": "Cy", "action": "nominate", "target": "Ann"})).state
    assert (before.fascist_policies, len(before.draw_pile), before.election_tracker) == (5, 4, 2)
    # Veto accepted -> 1 card left -> reshuffle -> tracker 3 -> chaos enacts the top of the NEW deck.
    tail = after(r, ev.VetoAnswered(seat(r, "Cy"), True))
    kinds = [type(e) for e in tail]
    assert kinds == [
        ev.DeckReshuffled,
        ev.DrawPileShuffled,
        ev.ElectionTrackerAdvanced,
        ev.PolicyEnacted,
        ev.TermLimitsCleared,
        ev.PresidentialCandidateChosen,
    ]
    shuffled = tail[1]
    assert isinstance(shuffled, ev.DrawPileShuffled)
    new_deck = shuffled.order
    assert new_deck == r.record.reshuffles[0]
    assert tail[2] == ev.ElectionTrackerAdvanced(3)
    assert tail[3] == ev.PolicyEnacted(new_deck[0], True, 1, 5)
    assert before.draw_pile[-1] != new_deck[0]  # the leftover card was not top-decked
    # No power, term limits cleared (Cy and Ann, the vetoing pair, are both eligible), tracker 0.
    assert not any(isinstance(e, ev.PresidentialPowerGranted) for e in tail)
    assert r.state.last_president is None and r.state.last_chancellor is None


def check_04(r: records.Replay) -> None:
    # Ann was the Chancellor of the vetoed session and is elected Chancellor again right away.
    vetoed = r.state.sessions[-1]
    assert (vetoed.chancellor, vetoed.enacted, vetoed.veto_proposed) == (seat(r, "Ann"), None, True)
    assert of(r, ev.ChancellorNominated)[-1] == ev.ChancellorNominated(seat(r, "Dee"), seat(r, "Ann"))
    assert of(r, ev.ElectionDecided)[-1].elected


def check_05(r: records.Replay) -> None:
    # The peek shows L, F, F; chaos enacts that L; the next President draws F, F and the next card.
    [peek] = of(r, ev.TopPoliciesSeen)
    assert peek == ev.TopPoliciesSeen(seat(r, "Cy"), (L, F, F))
    chaos = [e for e in of(r, ev.PolicyEnacted) if e.by_chaos]
    assert chaos == [ev.PolicyEnacted(L, True, 1, 3)]
    drawn = of(r, ev.PoliciesDrawn)[-1]
    assert drawn.president == seat(r, "Bob")
    assert drawn.policies[:2] == peek.policies[1:] and drawn.policies == (F, F, L)
    assert not of(r, ev.DeckReshuffled)  # 7 cards were left after chaos: no reshuffle was due


def check_06(r: records.Replay) -> None:
    # Five alive: Fay may nominate Dee (the last President) but not Cy (the last Chancellor).
    state, fay = r.state, seat(r, "Fay")
    assert state.alive_count == 5
    assert (state.last_president, state.last_chancellor) == (seat(r, "Dee"), seat(r, "Cy"))
    apply(state, NominateChancellor(fay, seat(r, "Dee")))
    with pytest.raises(IneligibleChancellor):
        apply(state, NominateChancellor(fay, seat(r, "Cy")))
    # With six alive, Dee (who presided then) could not nominate the last President, Eve.
    six = prefix(r, index_of(r, {"player": "Dee", "action": "nominate", "target": "Cy"})).state
    assert six.alive_count == 6
    with pytest.raises(IneligibleChancellor):
        apply(six, NominateChancellor(seat(r, "Dee"), seat(r, "Eve")))


def check_07(r: records.Replay) -> None:
    dee = seat(r, "Dee")
    first, last = [e for e in of(r, ev.ElectionDecided) if e.chancellor == dee]
    # Hitler elected with 2 F on the track: no win, no "not Hitler" line, and the session goes on to F3.
    assert first.elected and first.president == seat(r, "Cy")
    assert ev.ChancellorNotHitler(dee) not in r.events
    assert of(r, ev.PolicyEnacted)[2] == ev.PolicyEnacted(F, False, 0, 3)
    assert r.state.sessions[2].chancellor == dee
    # Hitler elected with 3 F: the game ends at once, before any card is drawn.
    assert last.elected
    assert after(r, last) == [of(r, ev.GameEnded)[0]]


def check_08(r: records.Replay) -> None:
    assert [e for e in of(r, ev.PolicyEnacted) if e.by_chaos] == [ev.PolicyEnacted(F, True, 0, 3)]
    assert not of(r, ev.PolicyPeekUsed)  # the chaos F3 covered the peek, which is ignored
    assert of(r, ev.ChancellorNotHitler) == [ev.ChancellorNotHitler(seat(r, "Bob"))]
    assert ev.ChancellorNotHitler(seat(r, "Bob")).audience.everyone
    last = of(r, ev.ElectionDecided)[-1]
    assert last.chancellor == seat(r, "Dee") and last.elected
    assert after(r, last) == [of(r, ev.GameEnded)[0]]


def check_09(r: records.Replay) -> None:
    chaos = ev.PolicyEnacted(F, True, 0, 5)
    assert chaos in r.events
    tail = after(r, chaos)
    assert not any(isinstance(e, ev.PresidentialPowerGranted) for e in tail)  # no execution
    assert ev.VetoUnlocked() in tail
    session = of(r, ev.LegislativeSessionStarted)[-1]
    assert session.veto_unlocked
    assert of(r, ev.PoliciesReceived)[-1].veto_allowed
    assert of(r, ev.VetoProposed) == [ev.VetoProposed(seat(r, "Bob"))]


def check_10(r: records.Replay) -> None:
    fay, gus = seat(r, "Fay"), seat(r, "Gus")
    assert r.state.roles[fay] is Role.FASCIST and r.state.roles[gus] is Role.HITLER
    # The session that enacts F5 offers no veto.
    assert not of(r, ev.LegislativeSessionStarted)[-1].veto_unlocked
    assert not of(r, ev.PoliciesReceived)[-1].veto_allowed
    # F5: veto unlocked, reshuffle, then the execution; the fascist President shoots Hitler.
    tail = after(r, ev.PolicyEnacted(F, False, 0, 5))
    assert [type(e) for e in tail] == [
        ev.VetoUnlocked,
        ev.DeckReshuffled,
        ev.DrawPileShuffled,
        ev.PresidentialPowerGranted,
        ev.PlayerExecuted,
        ev.GameEnded,
    ]
    assert tail[4] == ev.PlayerExecuted(fay, gus)
    assert not of(r, ev.VetoProposed)


def check_11a(r: records.Replay) -> None:
    last = of(r, ev.PolicyEnacted)[-1]
    assert last == ev.PolicyEnacted(F, True, 0, 6)
    assert after(r, last) == [of(r, ev.GameEnded)[0]]


def check_11b(r: records.Replay) -> None:
    last = of(r, ev.PolicyEnacted)[-1]
    assert last == ev.PolicyEnacted(L, True, 5, 0)
    assert after(r, last) == [of(r, ev.GameEnded)[0]]


def check_12(r: records.Replay) -> None:
    bob, dee = seat(r, "Bob"), seat(r, "Dee")
    assert r.state.investigations == ((seat(r, "Ann"), dee),)
    assert r.error is not None and isinstance(r.error.violation, AlreadyInvestigated)
    # Neither Dee nor Bob himself is a legal target; everyone else alive is.
    targets = {a.target for a in legal_actions(r.state, bob) if isinstance(a, InvestigateLoyalty)}
    assert targets == set(range(9)) - {bob, dee}
    with pytest.raises(CannotTargetSelf):
        apply(r.state, InvestigateLoyalty(bob, bob))


def check_13a(r: records.Replay) -> None:
    [decided] = of(r, ev.ElectionDecided)
    votes = dict(decided.votes)
    assert sum(votes.values()) == 3 and len(votes) == 6 and not decided.elected
    # Dee's second vote replaced her first.
    assert votes[seat(r, "Dee")] is False
    assert ev.VoteCast(seat(r, "Dee"), False, True) in r.events


def check_13b(r: records.Replay) -> None:
    hal = seat(r, "Hal")
    decided = of(r, ev.ElectionDecided)[-1]
    assert not r.state.alive[hal]
    assert hal not in dict(decided.votes)  # the dead player's vote neither exists nor is awaited
    assert len(decided.votes) == 7 and sum(v for _, v in decided.votes) == 4 and decided.elected


def check_13c(r: records.Replay) -> None:
    assert r.error is not None and isinstance(r.error.violation, ExecutedPlayersCannotAct)
    assert r.state.votes.count(None) == 8 - 3  # three living votes in; Hal's was not counted


def check_14(r: records.Replay) -> None:
    failed = [e for e in of(r, ev.ElectionDecided) if not e.elected]
    assert len(failed) == 2
    dee = seat(r, "Dee")
    for name in ("Ann", "Bob"):
        with pytest.raises(IneligibleChancellor):
            apply(r.state, NominateChancellor(dee, seat(r, name)))


def check_15(r: records.Replay) -> None:
    assert of(r, ev.TermLimitsCleared) == [ev.TermLimitsCleared()]
    decided = [e for e in after(r, ev.TermLimitsCleared()) if isinstance(e, ev.ElectionDecided)]
    assert [e.elected for e in decided] == [False]  # a failed vote came after chaos
    fay = seat(r, "Fay")
    for name in ("Ann", "Bob"):  # the last elected government before chaos
        apply(r.state, NominateChancellor(fay, seat(r, name)))


def check_16(r: records.Replay) -> None:
    eve = seat(r, "Eve")
    assert of(r, ev.VetoAnswered) == [ev.VetoAnswered(seat(r, "Bob"), False)]
    assert of(r, ev.PoliciesReceived)[-1] == ev.PoliciesReceived(eve, (F, L), False)
    assert r.error is not None and isinstance(r.error.violation, VetoAlreadyRefused)
    assert r.state.phase is Phase.LEGISLATIVE_CHANCELLOR
    assert set(legal_actions(r.state, eve)) == {EnactPolicy(eve, F), EnactPolicy(eve, L)}


def check_17a(r: records.Replay) -> None:
    assert of(r, ev.PlayerExecuted) == [ev.PlayerExecuted(seat(r, "Eve"), seat(r, "Bob"))]
    assert candidates(r)[-3:] == [("Ann", False), ("Eve", True), ("Cy", False)]


def check_17b(r: records.Replay) -> None:
    # The caller herself is executed: the presidency still resumes at the seat after hers.
    assert of(r, ev.PlayerExecuted) == [ev.PlayerExecuted(seat(r, "Eve"), seat(r, "Ann"))]
    assert candidates(r)[-3:] == [("Ann", False), ("Eve", True), ("Bob", False)]


KEY_CLAIMS: dict[str, Callable[[records.Replay], None]] = {
    "01-special-election-twice-in-a-row": check_01,
    "02-failed-special-election-government": check_02,
    "03-veto-at-tracker-two-with-a-small-deck": check_03,
    "04-vetoing-chancellor-renominated-after-chaos": check_04,
    "05-peek-then-chaos": check_05,
    "06-five-alive-last-president-eligible": check_06,
    "07-hitler-zone-timing": check_07,
    "08-chaos-third-fascist-policy": check_08,
    "09-chaos-fifth-fascist-policy": check_09,
    "10-normal-fifth-fascist-policy": check_10,
    "11a-endgame-by-chaos-sixth-fascist-policy": check_11a,
    "11b-endgame-by-chaos-fifth-liberal-policy": check_11b,
    "12-investigate-uniqueness": check_12,
    "13a-vote-arithmetic-six-players-tie-fails": check_13a,
    "13b-vote-arithmetic-eight-players-one-dead-4-3-passes": check_13b,
    "13c-vote-arithmetic-dead-player-cannot-vote": check_13c,
    "14-term-limits-survive-failures": check_14,
    "15-chaos-amnesty-persists": check_15,
    "16-veto-refusal": check_16,
    "17a-execution-inside-a-special-election-detour": check_17a,
    "17b-special-election-caller-executed": check_17b,
}


def test_every_record_has_a_key_claim_check() -> None:
    assert set(KEY_CLAIMS) == {p.stem for p in RECORDS}


@pytest.mark.parametrize("stem", sorted(KEY_CLAIMS))
def test_golden_scenario_key_claim(stem: str) -> None:
    KEY_CLAIMS[stem](golden(stem))


def test_special_election_target_may_be_term_limited() -> None:
    # B12 item 83, on scenario 1's table: Cy could also have picked Dee, the Chancellor just elected.
    r = golden("01-special-election-twice-in-a-row")
    state = prefix(r, index_of(r, {"player": "Cy", "action": "special_election", "target": "Dee"})).state
    assert state.phase is Phase.SPECIAL_ELECTION and state.last_chancellor == seat(r, "Dee")
    apply(state, CallSpecialElection(seat(r, "Cy"), seat(r, "Dee")))
    with pytest.raises(CannotTargetSelf):
        apply(state, CallSpecialElection(seat(r, "Cy"), seat(r, "Cy")))


# --- the timeline ---------------------------------------------------------------------------------------


def timeline_of(stem: str) -> list[str]:
    return records.timeline(golden(stem)).splitlines()


EVENT_KINDS = sorted(
    (cls for cls in vars(ev).values() if isinstance(cls, type) and issubclass(cls, Event) and cls is not Event),
    key=lambda cls: cls.__name__,
)


def test_golden_records_cover_every_event_kind() -> None:
    seen = {type(e) for path in RECORDS for e in replay_file(path).events}
    assert {cls.__name__ for cls in EVENT_KINDS} - {cls.__name__ for cls in seen} == set()


@pytest.mark.parametrize("path", RECORDS, ids=lambda p: p.stem)
def test_timeline_renders_every_event(path: Path) -> None:
    result = replay_file(path)
    lines = records.timeline(result).splitlines()
    # No event falls through to the bare fallback line (its kind alone).
    assert not [line for line in lines if line.strip().rstrip(".") in {e.kind for e in result.events}]
    rounds = [line for line in lines if line.startswith("Round ")]
    assert len(rounds) == len(of(result, ev.PresidentialCandidateChosen))
    # Every vote appears by name, and every election result lists every voter.
    for decided in of(result, ev.ElectionDecided):
        names = result.record.players
        each = ", ".join(f"{names[s]} {'ja' if v else 'nein'}" for s, v in decided.votes)
        assert any(line.startswith(f"  Votes: {each}.") for line in lines)


# One expected line for every event kind (VoteProgressed is folded into the vote line it follows).
TIMELINE_LINES = [
    ("GameStarted", "16-veto-refusal", "A game of Secret Hitler for 5 players. Seats and roles:"),
    ("RoleDealt", "16-veto-refusal", "  2. Bob: fascist; knows Dee (hitler)"),
    ("RoleDealt", "16-veto-refusal", "  1. Ann: liberal"),
    (
        "PresidentialCandidateChosen",
        "01-special-election-twice-in-a-row",
        "Round 1: Ann is the Presidential Candidate.",
    ),
    (
        "PresidentialCandidateChosen",
        "01-special-election-twice-in-a-row",
        "Round 4: Dee is the Presidential Candidate (special election).",
    ),
    ("ChancellorNominated", "01-special-election-twice-in-a-row", "  Ann nominates Bob as Chancellor."),
    ("VoteCast+VoteProgressed", "13a-vote-arithmetic-six-players-tie-fails", "  Ann votes ja (1 of 6 has voted)."),
    (
        "VoteCast(changed)",
        "13a-vote-arithmetic-six-players-tie-fails",
        "  Dee changes their vote to nein (4 of 6 have voted).",
    ),
    ("VoteCast(last)", "13a-vote-arithmetic-six-players-tie-fails", "  Fay votes nein."),
    (
        "ElectionDecided",
        "13a-vote-arithmetic-six-players-tie-fails",
        "  Votes: Ann ja, Bob ja, Cy ja, Dee nein, Eve nein, Fay nein. The government is rejected (3 ja, 3 nein).",
    ),
    (
        "ElectionDecided",
        "13b-vote-arithmetic-eight-players-one-dead-4-3-passes",
        "  Votes: Ann ja, Bob ja, Cy ja, Dee ja, Eve nein, Fay nein, Gus nein. "
        "The government is elected (4 ja, 3 nein).",
    ),
    ("ElectionTrackerAdvanced", "13a-vote-arithmetic-six-players-tie-fails", "  The election tracker moves to 1."),
    (
        "ElectionTrackerAdvanced",
        "15-chaos-amnesty-persists",
        "  The election tracker moves to 3: the country is thrown into chaos.",
    ),
    (
        "ChancellorNotHitler",
        "08-chaos-third-fascist-policy",
        "  Bob is not Hitler (three or more fascist policies are enacted).",
    ),
    (
        "TermLimitsCleared",
        "15-chaos-amnesty-persists",
        "  Term limits are forgotten until the next successful election.",
    ),
    ("LegislativeSessionStarted", "16-veto-refusal", "  Legislative session: President Ann, Chancellor Bob."),
    (
        "LegislativeSessionStarted",
        "16-veto-refusal",
        "  Legislative session: President Bob, Chancellor Eve (veto power unlocked).",
    ),
    ("PoliciesDrawn", "16-veto-refusal", "  Bob draws L, F, F."),
    ("PolicyDiscarded(President)", "16-veto-refusal", "  Bob discards F."),
    ("PoliciesHandedOver", "16-veto-refusal", "  Bob hands two policies to Eve."),
    ("PoliciesReceived", "16-veto-refusal", "  Eve receives F, L and may propose a veto."),
    ("PoliciesReceived", "16-veto-refusal", "  Bob receives F, F."),
    ("VetoProposed", "16-veto-refusal", "  Eve proposes to veto this agenda."),
    ("VetoAnswered(refused)", "16-veto-refusal", "  Bob refuses the veto."),
    ("PoliciesReceived(after refusal)", "16-veto-refusal", "  Eve keeps F, L and must enact one."),
    (
        "VetoAnswered(accepted)",
        "03-veto-at-tracker-two-with-a-small-deck",
        "  Cy accepts the veto: both policies are discarded.",
    ),
    ("PolicyDiscarded(Chancellor)", "16-veto-refusal", "  Ann discards F."),
    ("PolicyEnacted", "16-veto-refusal", "  Ann enacts a fascist policy (liberal 0, fascist 4)."),
    (
        "PolicyEnacted",
        "14-term-limits-survive-failures",
        "  Bob enacts a liberal policy (liberal 1, fascist 0).",
    ),
    (
        "PolicyEnacted(chaos)",
        "09-chaos-fifth-fascist-policy",
        "  Chaos: the top policy is enacted, a fascist policy (liberal 0, fascist 5); "
        "the election tracker goes back from 3 to 0; its power (execution) is ignored.",
    ),
    (
        "PolicyEnacted(chaos)",
        "03-veto-at-tracker-two-with-a-small-deck",
        "  Chaos: the top policy is enacted, a liberal policy (liberal 1, fascist 5); "
        "the election tracker goes back from 3 to 0.",
    ),
    (
        "PolicyEnacted(after failures)",
        "10-normal-fifth-fascist-policy",
        "  Cy enacts a fascist policy (liberal 0, fascist 5).",
    ),
    ("VetoUnlocked", "10-normal-fifth-fascist-policy", "  Veto power is unlocked for every later legislative session."),
    (
        "DeckReshuffled",
        "10-normal-fifth-fascist-policy",
        "  Fewer than three policies left: the draw and discard piles are shuffled into a new draw pile of 12.",
    ),
    ("DrawPileShuffled", "10-normal-fifth-fascist-policy", "  The new draw pile, top first: LFLFLFLFLFLF."),
    (
        "PresidentialPowerGranted",
        "12-investigate-uniqueness",
        "  Ann gains a presidential power: investigate loyalty.",
    ),
    ("PresidentialPowerGranted", "10-normal-fifth-fascist-policy", "  Fay gains a presidential power: execution."),
    ("LoyaltyInvestigated", "12-investigate-uniqueness", "  Ann investigates Dee's loyalty."),
    (
        "PartyMembershipSeen",
        "12-investigate-uniqueness",
        "  Ann sees that Dee is a member of the liberal party.",
    ),
    (
        "PartyMembershipSeen(Hitler)",
        "06-five-alive-last-president-eligible",
        "  Bob sees that Gus is a member of the fascist party.",
    ),
    (
        "SpecialElectionCalled",
        "01-special-election-twice-in-a-row",
        "  Cy calls a special election: Dee is the next Presidential Candidate.",
    ),
    ("PolicyPeekUsed", "05-peek-then-chaos", "  Cy peeks at the top three policies."),
    ("TopPoliciesSeen", "05-peek-then-chaos", "  Cy sees L, F, F (top first)."),
    (
        "PlayerExecuted",
        "17a-execution-inside-a-special-election-detour",
        "  Eve executes Bob, who was not Hitler (liberal).",
    ),
    ("PlayerExecuted(Hitler)", "10-normal-fifth-fascist-policy", "  Fay executes Gus, who was Hitler."),
    ("GameEnded", "10-normal-fifth-fascist-policy", "Game over: the liberals win: Hitler was executed."),
    ("GameEnded", "07-hitler-zone-timing", "Game over: the fascists win: Hitler was elected Chancellor."),
    (
        "GameEnded",
        "11a-endgame-by-chaos-sixth-fascist-policy",
        "Game over: the fascists win: six fascist policies are enacted.",
    ),
    (
        "GameEnded",
        "11b-endgame-by-chaos-fifth-liberal-policy",
        "Game over: the liberals win: five liberal policies are enacted.",
    ),
]


@pytest.mark.parametrize(("kind", "stem", "line"), TIMELINE_LINES, ids=lambda x: str(x)[:40])
def test_timeline_line(kind: str, stem: str, line: str) -> None:
    assert line in timeline_of(stem), kind


def test_timeline_lines_cover_every_event_kind() -> None:
    covered = {kind.split("(")[0] for kind, _, _ in TIMELINE_LINES}
    covered = {part for kind in covered for part in kind.split("+")}
    assert {cls.__name__ for cls in EVENT_KINDS} <= covered


def test_timeline_of_a_whole_round() -> None:
    lines = timeline_of("17a-execution-inside-a-special-election-detour")
    start = lines.index("Round 4: Eve is the Presidential Candidate (special election).")
    assert lines[start - 2 :] == [
        "  Ann calls a special election: Eve is the next Presidential Candidate.",
        "",
        "Round 4: Eve is the Presidential Candidate (special election).",
        "  Eve nominates Dee as Chancellor.",
        "  Ann votes ja (1 of 7 has voted).",
        "  Bob votes ja (2 of 7 have voted).",
        "  Cy votes ja (3 of 7 have voted).",
        "  Dee votes ja (4 of 7 have voted).",
        "  Eve votes ja (5 of 7 have voted).",
        "  Fay votes ja (6 of 7 have voted).",
        "  Gus votes ja.",
        "  Votes: Ann ja, Bob ja, Cy ja, Dee ja, Eve ja, Fay ja, Gus ja. The government is elected (7 ja, 0 nein).",
        "  Dee is not Hitler (three or more fascist policies are enacted).",
        "  Legislative session: President Eve, Chancellor Dee.",
        "  Eve draws F, F, L.",
        "  Eve discards L.",
        "  Eve hands two policies to Dee.",
        "  Dee receives F, F.",
        "  Dee discards F.",
        "  Dee enacts a fascist policy (liberal 0, fascist 4).",
        "  Eve gains a presidential power: execution.",
        "  Eve executes Bob, who was not Hitler (liberal).",
        "",
        "Round 5: Cy is the Presidential Candidate.",
    ]


def test_timeline_opens_with_seats_and_roles() -> None:
    assert timeline_of("12-investigate-uniqueness")[:10] == [
        "A game of Secret Hitler for 9 players. Seats and roles:",
        "  1. Ann: liberal",
        "  2. Bob: fascist; knows Eve (fascist), Gus (hitler), Hal (fascist)",
        "  3. Cy: liberal",
        "  4. Dee: liberal",
        "  5. Eve: fascist; knows Bob (fascist), Gus (hitler), Hal (fascist)",
        "  6. Fay: liberal",
        "  7. Gus: hitler",
        "  8. Hal: fascist; knows Bob (fascist), Eve (fascist), Gus (hitler)",
        "  9. Ivy: liberal",
    ]


def test_timeline_tracker_reset_is_told() -> None:
    lines = timeline_of("05-peek-then-chaos")
    assert "  The election tracker moves to 2." in lines
    assert (
        "  Chaos: the top policy is enacted, a liberal policy (liberal 1, fascist 3); "
        "the election tracker goes back from 3 to 0." in lines
    )


@pytest.mark.parametrize(
    ("stem", "last"),
    [
        (
            "16-veto-refusal",
            "Action 48 rejected: Eve cannot propose a veto: "
            "After the President refuses a veto, the Chancellor must enact a policy.",
        ),
        (
            "12-investigate-uniqueness",
            "Action 25 rejected: Bob cannot investigate Dee: No player may be investigated twice in the same game.",
        ),
        (
            "13c-vote-arithmetic-dead-player-cannot-vote",
            "Action 51 rejected: Hal cannot vote nein: Executed players may not speak, vote, or run for office.",
        ),
    ],
)
def test_timeline_ends_with_the_rejected_action(stem: str, last: str) -> None:
    assert timeline_of(stem)[-1] == last


def test_timeline_without_json_on_the_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    path = GOLDEN / "16-veto-refusal.json"
    assert main(["replay", str(path)]) == 1
    out, err = capsys.readouterr()
    assert out == records.timeline(replay_file(path)) + "\n"
    assert err.splitlines() == [
        "moderator replay: action 48: Eve cannot propose a veto: "
        "After the President refuses a veto, the Chancellor must enact a policy."
    ]
    assert main(["replay", str(GOLDEN / "07-hitler-zone-timing.json")]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines()[-1] == "Game over: the fascists win: Hitler was elected Chancellor." and err == ""
