"""The ``moderator`` command's own lines: its version, its usage, options that would do nothing refused before
anything runs, where a game's record went, and what ``export`` finds."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from moderator import app, catalog
from moderator.cli import main
from moderator.store import Store


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """``moderator ARGS`` in this process: its exit status, standard output and standard error."""
    try:
        status = main(list(args))
    except SystemExit as exit_:  # argparse's own refusals and --version
        status = int(exit_.code or 0)
    out, err = capsys.readouterr()
    return status, out, err


def test_moderator_version_prints_the_installed_version(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(capsys, "--version")
    assert status == 0 and err == ""
    assert out == f"moderator {app.version()}\n"


def test_an_unknown_option_of_play_is_shown_with_plays_own_usage(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(capsys, "play", "--bogus")
    assert status == 2 and out == ""
    assert err.startswith("usage: moderator play ")
    assert "--players" in err  # play's options, not the list of commands
    assert err.rstrip().endswith("moderator play: error: unrecognized arguments: --bogus")


@pytest.mark.parametrize(("args", "said"), [
    (("--watch", "--name", "Ann"), "--name takes a seat and --watch leaves every seat to computer players"),
    (("--web", "--watch"), "--watch is for a game at this terminal, not with --web"),
    (("--web", "--players", "5", "--seed", "3"), "--players and --seed are for a game at this terminal"),
    (("--web", "--record", "game.json"), "--record is for a game at this terminal"),
    (("--port", "9000"), "--port goes with --web only"),
    (("--watch", "--host", "127.0.0.1", "--port", "9000"), "--host and --port go with --web only"),
])
def test_a_play_option_that_would_be_ignored_is_refused_in_one_line(
        capsys: pytest.CaptureFixture[str], args: tuple[str, ...], said: str) -> None:
    status, out, err = run(capsys, "play", *args)
    assert status == 2 and out == ""
    assert err.startswith(f"moderator play: {said}") and len(err.splitlines()) == 1


@pytest.mark.parametrize("where", ["no/such/dir/game.json", "."])
def test_play_record_into_a_missing_folder_is_refused_before_the_game(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], where: str) -> None:
    """The path is checked first, as ``simulate --record`` does: no game is played whose record would be lost."""
    target = tmp_path / where
    status, out, err = run(capsys, "play", "--watch", "--players", "5", "--seed", "1", "--record", str(target))
    assert status == 2 and out == ""  # nothing was dealt
    assert err.startswith(f"moderator play: cannot write the record to {target}: ")
    assert len(err.splitlines()) == 1 and "Traceback" not in err


def test_play_record_says_where_the_record_went(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    record = tmp_path / "game.json"
    status, out, err = run(capsys, "play", "--watch", "--players", "5", "--seed", "1", "--record", str(record))
    assert status == 0, err
    assert "The roles:" in out
    assert err == f"moderator play: the game's record is in {record} (moderator replay {record})\n"
    assert json.loads(record.read_text(encoding="utf-8"))["format"] == "moderator.game-record/1"


def test_export_of_a_database_without_a_game_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "moderator.db"
    Store(db).close()
    status, out, err = run(capsys, "export", "--db", str(db))
    assert status == 0 and out == ""
    assert err == f"moderator export: no game has been dealt in {db} yet\n"


def test_a_messages_folder_without_catalogs_is_named(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("MODERATOR_MESSAGES", str(tmp_path / "nonexistent"))
    status, out, err = run(capsys, "play", "--watch")
    assert status == 2 and out == ""
    assert err == (f"moderator play: no catalogs in {tmp_path / 'nonexistent'} (<theme>/<language>.toml): "
                   "MODERATOR_MESSAGES names that folder\n")


@pytest.mark.parametrize("command", [("play", "--watch"), ("replay", "-")])
def test_a_catalog_that_does_not_parse_is_one_line_naming_its_file_and_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        command: tuple[str, ...]) -> None:
    messages = tmp_path / "messages"
    shutil.copytree(catalog.BUNDLED, messages, ignore=shutil.ignore_patterns("fonts"))
    broken = messages / "classic" / "de.toml"
    lines = broken.read_text(encoding="utf-8").splitlines()
    lines[29] += ' "oops'  # a second string after a key's value, line 30
    broken.write_text("\n".join(lines), encoding="utf-8")
    monkeypatch.setenv("MODERATOR_MESSAGES", str(messages))
    catalog.clear_cache()
    try:
        status, out, err = run(capsys, *command)
    finally:
        monkeypatch.delenv("MODERATOR_MESSAGES")
        catalog.clear_cache()
    assert status == 2 and out == ""
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert err.startswith(f"moderator {command[0]}: {broken}: ") and "(at line 30, column " in err
