"""The console channel: `moderator play` in a terminal, `--watch`, and what it refuses."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

from moderator import app
from moderator.commands import Ask, Choose, Decide, Query
from moderator.transports import console

ROOT = Path(__file__).resolve().parent.parent


def run_moderator(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """`python -m moderator ARGS` in a subprocess without a terminal."""
    return subprocess.run(
        [sys.executable, "-m", "moderator", *args],
        cwd=ROOT,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_play_without_a_terminal_says_so_in_one_line_and_exits_2() -> None:
    """Without a terminal and without --watch, `moderator play` refuses with one line and exit status 2."""
    result = run_moderator("play", stdin="")
    assert result.returncode == 2
    assert result.stdout == ""
    assert len(result.stderr.strip().splitlines()) == 1
    assert "--watch" in result.stderr


def test_watch_plays_a_whole_game_and_exits_0() -> None:
    """`moderator play --watch` needs no input, prints the public story to the end with the roles, and exits 0."""
    result = run_moderator("play", "--watch", "--players", "5", "--seed", "11")
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    story = result.stdout
    assert "The roles:" in story
    assert "What really happened:" in story


def test_watch_with_a_seed_is_repeatable() -> None:
    """The same seed gives the same game, word for word (apart from the random join code)."""
    first = run_moderator("play", "--watch", "--players", "6", "--seed", "4").stdout.splitlines()[1:]
    second = run_moderator("play", "--watch", "--players", "6", "--seed", "4").stdout.splitlines()[1:]
    assert first == second


def test_watch_shows_only_public_information_until_the_end() -> None:
    """Watching the table shows no private message: no deal, no hand, no investigation result before the end."""
    story = run_moderator("play", "--watch", "--players", "7", "--seed", "2").stdout
    before_end = story.split("The roles:")[0]
    assert "Your secret role" not in story
    assert "private message" not in before_end


def test_a_human_plays_a_whole_game_by_numbers_against_computer_players() -> None:
    """You take one seat: answering every prompt with option 1 plays the game to its end."""
    out = io.StringIO()
    answers = iter(["board", "whoami", "help", "nonsense"] + ["1"] * 5000)
    status = app.play_console(
        players=7, name="Zoe", theme="classic", language="en", seed=5, watch=False,
        read=lambda _prompt: next(answers), output=out,
    )
    text = out.getvalue()
    assert status == 0
    assert "Your secret role" in text
    assert "The roles:" in text


def test_you_see_only_your_own_private_messages() -> None:
    """At the console your seat gets its own deal and nobody else's."""
    out = io.StringIO()
    answers = iter(["quit"])
    app.play_console(players=5, name="Zoe", theme="classic", language="en", seed=9, watch=False,
                 read=lambda _prompt: next(answers), output=out)
    assert out.getvalue().count("Your secret role") == 1


def test_typed_lines_become_commands() -> None:
    """Numbers pick options of the current prompt; words ask questions or vote."""
    assert console.parse("2", 17) == Choose("2", 17)
    assert console.parse("board", None) == Ask(Query.BOARD)
    assert console.parse("JA", None) == Decide("vote", "ja")
    assert console.parse("nominate Bob", None) == Decide("nominate", "Bob")
    assert console.parse("   ", None) is None
