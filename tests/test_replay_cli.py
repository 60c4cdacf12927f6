"""``moderator replay`` on bad input (docs/game-record.md, "Exit status").

A malformed record exits 2 with exactly one line on standard error naming the problem, no traceback and nothing
on standard output. An action the rules reject exits 1 with the JSON summary, whose ``error`` names the index
and the rule. A handful of cases also run through a real ``python -m moderator`` process.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from moderator.cli import main

PROJECT = Path(__file__).resolve().parent.parent

# A valid 5-player game: Ann and Bob are elected and enact a fascist policy; Bob is the next candidate.
VALID: dict[str, Any] = {
    "format": "moderator.game-record/1",
    "players": ["Ann", "Bob", "Cy", "Dee", "Eve"],
    "roles": {"Ann": "liberal", "Bob": "fascist", "Cy": "liberal", "Dee": "hitler", "Eve": "liberal"},
    "first_president": "Ann",
    "deck": "FFLFFLFFLFFLFFLFL",
    "actions": [
        {"player": "Ann", "action": "nominate", "target": "Bob"},
        {"player": "Ann", "action": "vote", "vote": "ja"},
        {"player": "Bob", "action": "vote", "vote": "ja"},
        {"player": "Cy", "action": "vote", "vote": "ja"},
        {"player": "Dee", "action": "vote", "vote": "ja"},
        {"player": "Eve", "action": "vote", "vote": "ja"},
        {"player": "Ann", "action": "discard", "card": "L"},
        {"player": "Bob", "action": "enact", "card": "F"},
    ],
}


def changed(change: Callable[[dict[str, Any]], object]) -> dict[str, Any]:
    record = copy.deepcopy(VALID)
    change(record)
    return record


def run(tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str | bytes, *args: str) -> tuple[int, str, str]:
    path = tmp_path / "record.json"
    if isinstance(content, str):
        path.write_text(content, encoding="utf-8")
    else:
        path.write_bytes(content)
    code = main(["replay", str(path), *args])
    out, err = capsys.readouterr()
    return code, out, err


def assert_malformed(code: int, out: str, err: str, problem: str) -> None:
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1 and err.endswith("\n"), err
    assert err == f"moderator replay: {problem}\n"
    assert "Traceback" not in err


def test_the_valid_base_record_replays(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(tmp_path, capsys, json.dumps(VALID), "--json")
    assert (code, err) == (0, "")
    summary = json.loads(out)
    assert (summary["applied"], summary["phase"], summary["president"], summary["fascist_policies"]) == (
        8,
        "nomination",
        "Bob",
        1,
    )


MALFORMED: list[tuple[str, Callable[[dict[str, Any]], object], str]] = [
    ("wrong format", lambda r: r.update(format="pgn/2"), "unknown format 'pgn/2'; expected 'moderator.game-record/1'"),
    ("missing players", lambda r: r.pop("players"), "the record needs 'players'"),
    ("players not a list", lambda r: r.update(players="Ann Bob Cy Dee Eve"), "'players' must be a list of names"),
    ("a player name not a string", lambda r: r["players"].__setitem__(2, 3), "'players' must be a list of names"),
    ("four players", lambda r: r.update(players=r["players"][:4]), "'players' must hold 5 to 10 players, not 4"),
    (
        "eleven players",
        lambda r: r.update(players=[f"P{i}" for i in range(11)]),
        "'players' must hold 5 to 10 players, not 11",
    ),
    ("duplicate names", lambda r: r["players"].__setitem__(2, "Ann"), "duplicate player name 'Ann'"),
    ("empty name", lambda r: r["players"].__setitem__(2, ""), "player names must not be empty"),
    ("blank name", lambda r: r["players"].__setitem__(2, "  "), "player names must not be empty"),
    (
        "first_president not a player",
        lambda r: r.update(first_president="Zed"),
        "'first_president' 'Zed' is not a player",
    ),
    ("first_president wrongly typed", lambda r: r.update(first_president=0), "'first_president' 0 is not a player"),
    ("missing roles", lambda r: r.pop("roles"), "the record needs 'roles'"),
    (
        "roles not a mapping",
        lambda r: r.update(roles=["liberal"] * 5),
        "'roles' must map every player to liberal, fascist or hitler",
    ),
    (
        "wrong role counts",
        lambda r: r["roles"].update(Ann="fascist"),
        "5 players need 3 liberals, 1 fascist and 1 hitler, not 2, 2 and 1",
    ),
    (
        "two hitlers",
        lambda r: r["roles"].update(Bob="hitler"),
        "5 players need 3 liberals, 1 fascist and 1 hitler, not 3, 0 and 2",
    ),
    ("unknown role", lambda r: r["roles"].update(Ann="communist"), "unknown role 'communist' for 'Ann'"),
    ("role wrongly typed", lambda r: r["roles"].update(Ann=1), "unknown role 1 for 'Ann'"),
    ("a player without a role", lambda r: r["roles"].pop("Eve"), "'roles' has no role for 'Eve'"),
    ("unknown player in roles", lambda r: r["roles"].update(Zed="liberal"), "unknown player 'Zed' in 'roles'"),
    ("missing deck", lambda r: r.pop("deck"), "the record needs 'deck'"),
    ("deck of 17 F", lambda r: r.update(deck="F" * 17), "'deck' must hold 6 L and 11 F, not 0 L and 17 F"),
    ("deck too short", lambda r: r.update(deck="FFLFFLFFLFFLFFLF"), "'deck' must hold 6 L and 11 F, not 5 L and 11 F"),
    ("deck with other letters", lambda r: r.update(deck="FFLFFLFFLFFLFFLFX"), "'deck' must be a string of L and F"),
    ("deck as a list", lambda r: r.update(deck=list("FFLFFLFFLFFLFFLFL")), "'deck' must be a string of L and F"),
    ("reshuffles not a list", lambda r: r.update(reshuffles="FFL"), "'reshuffles' must be a list of strings"),
    ("reshuffle not cards", lambda r: r.update(reshuffles=["FFL", 7]), "reshuffle 2 must be a string of L and F"),
    ("seed wrongly typed", lambda r: r.update(seed="42"), "'seed' must be an integer"),
    ("seed a boolean", lambda r: r.update(seed=True), "'seed' must be an integer"),
    ("actions not a list", lambda r: r.update(actions={}), "'actions' must be a list"),
    ("action not an object", lambda r: r["actions"].append("pass"), "action 8 must be an object"),
    ("action without a kind", lambda r: r["actions"][3].pop("action"), "action 3 needs 'action'"),
    ("action kind wrongly typed", lambda r: r["actions"][3].update(action=1), "action 3 'action' must be a string"),
    (
        "unknown action kind",
        lambda r: r["actions"][3].update(action="abstain"),
        "action 3 has unknown action kind 'abstain'",
    ),
    ("action without a player", lambda r: r["actions"][0].pop("player"), "action 0 (nominate) needs 'player'"),
    (
        "unknown action player",
        lambda r: r["actions"][2].update(player="Zed"),
        "action 2 (vote) 'player' 'Zed' is not a player",
    ),
    (
        "action player wrongly typed",
        lambda r: r["actions"][2].update(player=1),
        "action 2 (vote) 'player' must be a player name",
    ),
    (
        "unknown target",
        lambda r: r["actions"][0].update(target="Zed"),
        "action 0 (nominate) 'target' 'Zed' is not a player",
    ),
    ("missing target", lambda r: r["actions"][0].pop("target"), "action 0 (nominate) needs 'target'"),
    (
        "target wrongly typed",
        lambda r: r["actions"][0].update(target=1),
        "action 0 (nominate) 'target' must be a string",
    ),
    ("missing vote", lambda r: r["actions"][1].pop("vote"), "action 1 (vote) needs 'vote'"),
    ("vote wrongly typed", lambda r: r["actions"][1].update(vote=True), "action 1 (vote) 'vote' must be a string"),
    (
        "vote neither ja nor nein",
        lambda r: r["actions"][1].update(vote="yes"),
        "action 1 (vote) 'vote' must be ja or nein",
    ),
    ("missing card", lambda r: r["actions"][6].pop("card"), "action 6 (discard) needs 'card'"),
    ("card not L or F", lambda r: r["actions"][7].update(card="X"), "action 7 (enact) 'card' must be L or F"),
    ("card wrongly typed", lambda r: r["actions"][7].update(card=["F"]), "action 7 (enact) 'card' must be a string"),
    (
        "missing accept",
        lambda r: r["actions"].append({"player": "Bob", "action": "veto_reply"}),
        "action 8 (veto_reply) needs 'accept'",
    ),
    (
        "accept wrongly typed",
        lambda r: r["actions"].append({"player": "Bob", "action": "veto_reply", "accept": "no"}),
        "action 8 (veto_reply) 'accept' must be true or false",
    ),
    (
        "unknown investigation target",
        lambda r: r["actions"].append({"player": "Bob", "action": "investigate", "target": "Zed"}),
        "action 8 (investigate) 'target' 'Zed' is not a player",
    ),
    (
        "unknown special-election target",
        lambda r: r["actions"].append({"player": "Bob", "action": "special_election", "target": "Zed"}),
        "action 8 (special_election) 'target' 'Zed' is not a player",
    ),
    (
        "unknown execution target",
        lambda r: r["actions"].append({"player": "Bob", "action": "execute", "target": "ann"}),
        "action 8 (execute) 'target' 'ann' is not a player",
    ),
]


@pytest.mark.parametrize(("case", "change", "problem"), MALFORMED, ids=[c[0] for c in MALFORMED])
@pytest.mark.parametrize("mode", [("--json",), ()], ids=["json", "timeline"])
def test_malformed_record_exits_2_with_one_line(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    case: str,
    change: Callable[[dict[str, Any]], object],
    problem: str,
    mode: tuple[str, ...],
) -> None:
    assert_malformed(*run(tmp_path, capsys, json.dumps(changed(change)), *mode), problem)


def test_a_malformed_action_after_an_illegal_one_still_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The whole record is checked before any action is applied.
    record = changed(lambda r: r["actions"].insert(0, {"player": "Bob", "action": "enact", "card": "F"}))
    record["actions"].append({"player": "Bob", "action": "nominate", "target": "Zed"})
    assert_malformed(
        *run(tmp_path, capsys, json.dumps(record), "--json"), "action 9 (nominate) 'target' 'Zed' is not a player"
    )


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("{", "invalid JSON: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"),
        ("", "invalid JSON: Expecting value: line 1 column 1 (char 0)"),
        ('{"players": ["Ann",]}', "invalid JSON: Expecting value: line 1 column 20 (char 19)"),
        ("[]", "a game record must be a JSON object"),
        ('"Ann"', "a game record must be a JSON object"),
        ("[" * 100_000, "invalid JSON: nested too deeply"),
    ],
    ids=["unclosed", "empty", "trailing comma", "array", "string", "nested too deeply"],
)
def test_invalid_json_exits_2_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, problem: str
) -> None:
    assert_malformed(*run(tmp_path, capsys, content, "--json"), problem)


def test_undecodable_bytes_exit_2_with_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(tmp_path, capsys, b'{"players": "\xff\xfe"}', "--json")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert err.startswith("moderator replay: invalid JSON: ")


# --- reshuffles -----------------------------------------------------------------------------------------

# Five elected governments enact F, F, F (peek), F (execution), L: the fifth session leaves 2 cards, so the
# first reshuffle string is used then, holding the 2 leftovers (F, L) and the 10 discards (4 L, 6 F).
FIVE_SESSIONS: dict[str, Any] = {
    "players": ["Ann", "Bob", "Cy", "Dee", "Eve"],
    "roles": {"Ann": "liberal", "Bob": "fascist", "Cy": "liberal", "Dee": "hitler", "Eve": "liberal"},
    "deck": "FFLFFLFFLFFLLFFFL",
    "actions": [],
}


def _five_sessions(reshuffles: list[str] | None) -> dict[str, Any]:
    record = copy.deepcopy(FIVE_SESSIONS)
    if reshuffles is not None:
        record["reshuffles"] = reshuffles
    alive = ["Ann", "Bob", "Cy", "Dee", "Eve"]
    actions: list[dict[str, str]] = record["actions"]

    def gov(president: str, chancellor: str, discard: str, enact: str) -> None:
        actions.append({"player": president, "action": "nominate", "target": chancellor})
        actions.extend({"player": p, "action": "vote", "vote": "ja"} for p in alive)
        actions.append({"player": president, "action": "discard", "card": discard})
        actions.append({"player": chancellor, "action": "enact", "card": enact})

    gov("Ann", "Bob", "L", "F")
    gov("Bob", "Cy", "L", "F")
    gov("Cy", "Eve", "L", "F")  # F3: Cy peeks
    gov("Dee", "Ann", "L", "F")  # F4: Dee executes Cy
    actions.append({"player": "Dee", "action": "execute", "target": "Cy"})
    alive.remove("Cy")
    gov("Eve", "Bob", "F", "L")  # draws L, F, F; 2 cards (F, L) left: reshuffle
    return record


def test_a_reshuffle_string_with_the_right_cards_is_used(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(tmp_path, capsys, json.dumps(_five_sessions(["LLLLLFFFFFFF", "FFF"])), "--json")
    assert (code, err) == (0, "")
    summary = json.loads(out)
    # Unused reshuffle strings at the end are fine.
    assert (summary["draw_pile"], summary["discard_pile"], summary["liberal_policies"]) == (12, 0, 1)


@pytest.mark.parametrize(
    "order",
    ["LLLLLLFFFFFF", "LLLLLFFFFFF", "LLLLLFFFFFFFF", ""],
    ids=["an F swapped for an L", "one card too few", "one card too many", "empty"],
)
def test_a_reshuffle_string_without_the_cards_being_shuffled_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], order: str
) -> None:
    assert_malformed(
        *run(tmp_path, capsys, json.dumps(_five_sessions([order])), "--json"),
        "reshuffle 1 must hold the 5 L and 7 F being shuffled",
    )


def test_without_reshuffle_strings_the_seed_shuffles(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, first, _ = run(tmp_path, capsys, json.dumps(_five_sessions(None)), "--json")
    again = run(tmp_path, capsys, json.dumps(_five_sessions(None)), "--json")[1]
    assert code == 0 and first == again and json.loads(first)["draw_pile"] == 12


# --- illegal actions ------------------------------------------------------------------------------------

ILLEGAL: list[tuple[str, Callable[[dict[str, Any]], object], int, str]] = [
    (
        "vote before a nomination",
        lambda r: r["actions"].insert(0, {"player": "Ann", "action": "vote", "vote": "ja"}),
        0,
        "Ann cannot vote ja: The game is not waiting for this kind of decision now.",
    ),
    (
        "nomination by someone else",
        lambda r: r["actions"][0].update(player="Cy"),
        0,
        "Cy cannot nominate Bob as Chancellor: Only the President (or Presidential Candidate) may make this decision.",
    ),
    (
        "self-nomination",
        lambda r: r["actions"][0].update(target="Ann"),
        0,
        "Ann cannot nominate Ann as Chancellor: The Presidential Candidate must nominate another player as Chancellor.",
    ),
    (
        "a card not in hand",
        lambda r: r["actions"][7].update(card="L"),
        7,
        "Bob cannot enact L: Only a policy you are holding can be discarded or enacted.",
    ),
    (
        "the Chancellor acting before the President",
        lambda r: r["actions"].__setitem__(6, {"player": "Bob", "action": "enact", "card": "F"}),
        6,
        "Bob cannot enact F: The game is not waiting for this kind of decision now.",
    ),
    (
        "a veto before it is unlocked",
        lambda r: r["actions"].__setitem__(7, {"player": "Bob", "action": "veto"}),
        7,
        "Bob cannot propose a veto: Veto power is only unlocked once five fascist policies have been enacted.",
    ),
    (
        "a term-limited Chancellor after a failed vote",
        lambda r: r["actions"].extend(
            [{"player": "Bob", "action": "nominate", "target": "Cy"}]
            + [{"player": p, "action": "vote", "vote": "nein"} for p in r["players"]]
            + [{"player": "Cy", "action": "nominate", "target": "Bob"}]
        ),
        14,
        "Cy cannot nominate Bob as Chancellor: The last elected President and Chancellor are term-limited and "
        "cannot be nominated Chancellor (with five or fewer players alive, only the last Chancellor).",
    ),
    (
        "a dead player's vote",
        lambda r: (
            r.update(_five_sessions(None))
            or r["actions"].extend(
                [
                    {"player": "Ann", "action": "nominate", "target": "Dee"},
                    {"player": "Cy", "action": "vote", "vote": "ja"},
                ]
            )
        ),
        41,
        "Cy cannot vote ja: Executed players may not speak, vote, or run for office.",
    ),
    (
        "a power that was not granted",
        lambda r: r["actions"].append({"player": "Bob", "action": "execute", "target": "Dee"}),
        8,
        "Bob cannot execute Dee: The game is not waiting for this kind of decision now.",
    ),
]


@pytest.mark.parametrize(("case", "change", "index", "message"), ILLEGAL, ids=[c[0] for c in ILLEGAL])
def test_illegal_action_exits_1_with_the_error_index_and_rule(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    case: str,
    change: Callable[[dict[str, Any]], object],
    index: int,
    message: str,
) -> None:
    code, out, err = run(tmp_path, capsys, json.dumps(changed(change)), "--json")
    assert code == 1 and err == ""
    summary = json.loads(out)
    assert summary["error"] == {"index": index, "message": message}
    assert summary["applied"] == index


def test_illegal_action_without_json_prints_the_timeline_and_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(tmp_path, capsys, json.dumps(changed(lambda r: r["actions"][7].update(card="L"))))
    assert code == 1
    assert out.splitlines()[-1] == (
        "Action 7 rejected: Bob cannot enact L: Only a policy you are holding can be discarded or enacted."
    )
    assert err == (
        "moderator replay: action 7: Bob cannot enact L: Only a policy you are holding can be discarded or enacted.\n"
    )


def test_actions_after_the_game_ended_are_rejected(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    golden = json.loads((PROJECT / "tests/golden/07-hitler-zone-timing.json").read_text(encoding="utf-8"))
    golden["actions"].append({"player": "Eve", "action": "discard", "card": "F"})
    code, out, _ = run(tmp_path, capsys, json.dumps(golden), "--json")
    assert code == 1
    assert json.loads(out)["error"] == {
        "index": len(golden["actions"]) - 1,
        "message": "Eve cannot discard F: The game is over; nothing more can be done.",
    }


# --- files ----------------------------------------------------------------------------------------------


def test_missing_file_exits_2_with_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "nowhere.json"
    assert main(["replay", str(missing), "--json"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == f"moderator replay: cannot read {missing}: No such file or directory\n"


def test_a_directory_exits_2_with_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", str(tmp_path)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and err.startswith(f"moderator replay: cannot read {tmp_path}: ")


# --- through a real process -----------------------------------------------------------------------------


def moderator(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "moderator", *args],
        cwd=PROJECT,
        input=stdin,
        capture_output=True,
        timeout=60,
        check=False,
    )


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (b"{not json", "invalid JSON: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"),
        (b"[" * 100_000, "invalid JSON: nested too deeply"),
        (
            json.dumps(changed(lambda r: r["actions"][4].update(player="Zed"))).encode(),
            "action 4 (vote) 'player' 'Zed' is not a player",
        ),
        (json.dumps(_five_sessions(["F" * 12])).encode(), "reshuffle 1 must hold the 5 L and 7 F being shuffled"),
    ],
    ids=["invalid JSON", "nested too deeply", "unknown player", "bad reshuffle"],
)
@pytest.mark.parametrize("mode", [("--json",), ()], ids=["json", "timeline"])
def test_subprocess_malformed_record_has_no_traceback(
    tmp_path: Path, content: bytes, problem: str, mode: tuple[str, ...]
) -> None:
    path = tmp_path / "record.json"
    path.write_bytes(content)
    done = moderator("replay", str(path), *mode)
    assert done.returncode == 2
    assert done.stdout == b""
    assert done.stderr.decode() == f"moderator replay: {problem}\n"


def test_subprocess_missing_file_and_stdin(tmp_path: Path) -> None:
    done = moderator("replay", str(tmp_path / "gone.json"), "--json")
    assert (done.returncode, done.stdout) == (2, b"")
    assert (
        done.stderr.decode() == f"moderator replay: cannot read {tmp_path / 'gone.json'}: No such file or directory\n"
    )
    done = moderator("replay", "-", "--json", stdin=b"")
    assert (done.returncode, done.stdout) == (2, b"")
    assert done.stderr.decode() == "moderator replay: invalid JSON: Expecting value: line 1 column 1 (char 0)\n"


def test_subprocess_illegal_action_exits_1_with_json(tmp_path: Path) -> None:
    path = tmp_path / "record.json"
    path.write_text(json.dumps(changed(lambda r: r["actions"][0].update(target="Ann"))), encoding="utf-8")
    done = moderator("replay", str(path), "--json")
    assert done.returncode == 1 and done.stderr == b""
    assert json.loads(done.stdout)["error"] == {
        "index": 0,
        "message": "Ann cannot nominate Ann as Chancellor: "
        "The Presidential Candidate must nominate another player as Chancellor.",
    }


def test_subprocess_golden_record_replays(tmp_path: Path) -> None:
    done = moderator("replay", "tests/golden/16-veto-refusal.json", "--json")
    assert done.returncode == 1 and done.stderr == b""
    assert json.loads(done.stdout)["error"]["index"] == 48
