"""Claims in the game record (docs/game-record.md, ``claims``): exported with the game, read back, told by
``moderator replay`` where they were said and as claims, never applied; a record without them replays as before."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from moderator import claims
from moderator import record as records
from moderator.claims import InvestigationClaim, Office, PeekClaim, SessionClaim, Spoken
from moderator.cli import main
from moderator.engine import Policy, apply
from tests.test_replay_cli import VALID, assert_malformed, run
from tests.test_table_claims import watched

L, F = Policy.LIBERAL, Policy.FASCIST

# After the first session (8 actions): what Ann and Bob say of it, then Ann accuses Bob. Bob's is a lie.
CLAIMS: list[dict[str, Any]] = [
    {"after": 8, "player": "Ann", "claim": "session", "office": "president", "session": 0, "hand": "FFL",
     "passed": "FF"},
    {"after": 8, "player": "Bob", "claim": "session", "office": "chancellor", "session": 0, "hand": "FL",
     "passed": "F"},
    {"after": 8, "player": "Ann", "claim": "accusation", "target": "Bob"},
]


def with_claims(claims: Any = CLAIMS, actions: int | None = None) -> dict[str, Any]:
    record = copy.deepcopy(VALID)
    record["claims"] = copy.deepcopy(claims)
    if actions is not None:
        record["actions"] = record["actions"][:actions]
    return record


def exported(seed: int = 5) -> dict[str, Any]:
    """The record of a finished game of computer players (they claim), as ``moderator export`` writes it."""
    h, table_id = watched(seed)
    record = h.service.export(table_id)
    assert record is not None
    return record


def test_an_exported_game_carries_every_claim_after_the_actions_applied_when_it_was_said() -> None:
    h, table_id = watched(5)
    table = h.table(table_id)
    record = h.service.export(table_id)
    assert record is not None and table.said
    names = tuple(record["players"])
    assert record["claims"] == [
        {"after": said.step, **claims.to_json(said.claim, names)} for said in table.said
    ]
    assert all(0 <= entry["after"] <= len(record["actions"]) for entry in record["claims"])
    parsed = records.loads(records.dumps(record))
    assert parsed.claims == tuple(Spoken(said.step, said.claim) for said in table.said)


def test_a_record_with_claims_replays_to_the_same_game_as_without() -> None:
    record = exported()
    silent = {k: v for k, v in record.items() if k != "claims"}
    talking, quiet = records.replay(records.parse(record)), records.replay(records.parse(silent))
    assert talking.state == quiet.state and talking.events == quiet.events
    assert records.parse(silent).claims is None


def test_a_game_without_claims_exports_no_claims_field() -> None:
    record = records.to_json(["Ann", "Bob", "Cy", "Dee", "Eve"], records.parse(VALID).start(), [])
    assert "claims" not in record
    assert "claims" not in records.dumps(record)


def test_dumps_writes_one_claim_per_line_and_reads_back() -> None:
    record = with_claims()
    text = records.dumps(record)
    assert all(json.dumps(entry) in text.splitlines()[-5 + i] for i, entry in enumerate(CLAIMS))
    assert json.loads(text) == record


def test_the_timeline_tells_claims_as_quoted_words_after_the_result_they_follow(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(tmp_path, capsys, json.dumps(with_claims()))
    assert code == 0
    lines = out.splitlines()
    enacted = next(i for i, line in enumerate(lines) if "Bob enacts a fascist policy" in line)
    assert [line.strip() for line in lines[enacted + 1 : enacted + 4]] == [
        'Ann claims: "I drew F, F, L and handed over F, F."',
        'Bob claims: "I received F, L and enacted F."',
        'Ann claims: "Bob is a fascist."',
    ]
    # The timeline's facts still say what happened: Ann threw the liberal away; the claim does not change it.
    assert any("Ann discards L." in line for line in lines[:enacted])


def test_a_record_without_claims_replays_exactly_as_before(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plain = run(tmp_path, capsys, json.dumps(VALID))
    assert "claims" not in plain[1]
    talking = run(tmp_path, capsys, json.dumps(with_claims()))
    assert [line for line in talking[1].splitlines() if " claims: " not in line] == plain[1].splitlines()
    plain_json = run(tmp_path, capsys, json.dumps(VALID), "--json")
    assert "claims" not in json.loads(plain_json[1])
    talking_json = json.loads(run(tmp_path, capsys, json.dumps(with_claims()), "--json")[1])
    assert {k: v for k, v in talking_json.items() if k != "claims"} == json.loads(plain_json[1])


def test_replay_json_gives_back_the_claims_said_up_to_the_last_applied_action(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(tmp_path, capsys, json.dumps(with_claims()), "--json")
    assert code == 0 and json.loads(out)["claims"] == CLAIMS
    # Action 7 (Bob enacts L) is refused: the claims said after it speak of a session that did not happen.
    refused = with_claims(CLAIMS + [{"after": 1, "player": "Cy", "claim": "clearance", "target": "Ann"}])
    refused["claims"] = [refused["claims"][-1], *refused["claims"][:-1]]
    refused["actions"][7]["card"] = "L"
    code, out, _ = run(tmp_path, capsys, json.dumps(refused), "--json")
    assert code == 1 and json.loads(out)["claims"] == [refused["claims"][0]]
    assert records.parse(refused).claims is not None


def test_a_claim_said_before_the_first_action_comes_after_the_deal_before_the_first_round(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    early = {"after": 0, "player": "Cy", "claim": "accusation", "target": "Dee"}
    code, out, _ = run(tmp_path, capsys, json.dumps(with_claims([early])))
    lines = out.splitlines()
    said = lines.index('Cy claims: "Dee is a fascist."')
    assert code == 0 and lines[said - 1].startswith("  5. Eve") and "Round 1" in lines[said + 2]


@pytest.mark.parametrize(
    ("claims", "problem"),
    [
        ({"after": 8}, "'claims' must be a list"),
        (["Ann"], "claim 0 must be an object"),
        ([{"player": "Ann", "claim": "accusation", "target": "Bob"}],
         "claim 0 'after' must be a whole number from 0 to 8 (the actions applied)"),
        ([{**CLAIMS[0], "after": 9}], "claim 0 'after' must be a whole number from 0 to 8 (the actions applied)"),
        ([CLAIMS[0], {**CLAIMS[1], "after": 7}], "claim 1 is said after 7 actions, before the claim ahead of it"),
        ([{**CLAIMS[0], "claim": "rumour"}],
         "claim 0: 'claim' must be one of session, investigation, peek, accusation, clearance"),
        ([{**CLAIMS[0], "hand": "FF"}], "claim 0: a president claims 3 policies held and passes on some of them, "
                                        "not FF passing FF"),
        ([{**CLAIMS[2], "target": "Zed"}], "claim 0: 'target' must be a player's name"),
    ],
)
def test_a_malformed_claim_makes_the_record_malformed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], claims: Any, problem: str
) -> None:
    code, out, err = run(tmp_path, capsys, json.dumps(with_claims(claims)), "--json")
    assert_malformed(code, out, err, problem)


def test_nothing_a_claim_says_is_taken_as_true() -> None:
    # Bob claims he enacted a liberal policy: the game still has the fascist one he enacted.
    lie = {**CLAIMS[1], "hand": "LL", "passed": "L"}
    result = records.replay(records.parse(with_claims([lie])))
    assert result.state.fascist_policies == 1 and result.state.liberal_policies == 0
    assert result.claims() == (Spoken(8, SessionClaim(1, Office.CHANCELLOR, 0, (L, L), (L,))),)
    assert records.summary(result)["fascist_policies"] == 1


def test_the_replay_cli_reads_an_exported_record_with_claims(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    record = exported(8)
    path = tmp_path / "game.json"
    path.write_text(records.dumps(record), encoding="utf-8")
    assert main(["replay", str(path)]) == 0
    out = capsys.readouterr().out
    assert sum(" claims: \"" in line for line in out.splitlines()) == len(record["claims"])


def test_no_claim_in_an_exported_record_comes_before_the_action_it_is_about() -> None:
    for seed in (3, 5, 8):
        record = records.parse(exported(seed))
        assert record.claims
        states = [record.start()]
        for action in record.actions:
            states.append(apply(states[-1], action)[0])
        for spoken in record.claims:
            state = states[spoken.step]
            match spoken.claim:
                case SessionClaim(session=index):
                    assert index < len(state.history.sessions)  # a session enters the history when it ends
                case InvestigationClaim(speaker=speaker, target=target):
                    assert (speaker, target) in state.history.investigations
                case PeekClaim(speaker=speaker):
                    assert speaker in {president for president, _ in state.history.peeks}
                case _:
                    pass


def test_a_seeded_table_exports_the_same_record_claims_included_every_time() -> None:
    first, second = exported(3), exported(3)
    assert first["claims"] and first == second
