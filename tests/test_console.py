"""The console channel: `moderator play` in a terminal, `--watch`, and what it refuses."""

from __future__ import annotations

import io
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from moderator import app
from moderator.catalog import Catalog
from moderator.commands import Ask, Choose, Decide, Query
from moderator.grammar import fold, grammar
from moderator.settings import Opening, Settings
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


def play_console(*, players: int, name: str | None, theme: str, language: str, seed: int, watch: bool,
                 read: Callable[[str], str], output: TextIO, record: Path | None = None) -> int:
    """A game at the console through ``moderator play``'s own machinery (``app.PLAY``), its terminal's reading and
    printing replaced."""
    table = Opening(name, theme, language, players=players, watch=watch)
    channel = console.ConsoleSpec(read=read, output=output)
    return app.run(Settings(table=table, record=record), app.PLAY, channels=(channel,), seed=lambda: seed)


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
    status = play_console(
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
    answers = iter(["quit", "yes"])
    play_console(players=5, name="Zoe", theme="classic", language="en", seed=9, watch=False,
                 read=lambda _prompt: next(answers), output=out)
    assert out.getvalue().count("Your secret role") == 1


def test_typed_lines_become_commands() -> None:
    """Numbers pick options of the current prompt; words ask questions or vote."""
    assert console.parse("2", 17) == Choose("2", 17)
    assert console.parse("board", None) == Ask(Query.BOARD)
    assert console.parse("JA", None) == Decide("vote", "ja")
    assert console.parse("nominate Bob", None) == Decide("nominate", "Bob")
    assert console.parse("   ", None) is None


def play(answers: list[str], *, name: str | None = "Zoe", players: int = 5, seed: int = 9, lang: str = "en",
         record: Path | None = None) -> tuple[int, str]:
    """A console game answered by ``answers`` (then Ctrl-D); its exit status and everything it printed."""
    out = io.StringIO()
    lines = iter(answers)

    def read(prompt: str) -> str:
        out.write(prompt)
        try:
            return next(lines)
        except StopIteration:
            raise EOFError from None

    status = play_console(players=players, name=name, theme="classic", language=lang, seed=seed, watch=False,
                          read=read, output=out, record=record)
    return status, out.getvalue()


def test_a_wrong_language_or_theme_lists_the_choices_and_exits_2() -> None:
    for args, choices in ((("--lang", "fr"), "de, en"), (("--theme", "Fancy"), "classic, corporate")):
        result = run_moderator("play", "--watch", *args)
        assert result.returncode == 2 and result.stdout == ""
        assert choices in result.stderr and "Traceback" not in result.stderr


def test_language_and_theme_are_taken_in_any_case() -> None:
    result = run_moderator("play", "--watch", "--players", "5", "--seed", "1", "--lang", "DE", "--theme", "Corporate")
    assert result.returncode == 0, result.stderr
    assert "Die Rollen:" in result.stdout and "Ratte" in result.stdout


def test_a_reader_that_stops_early_ends_the_story_without_a_traceback() -> None:
    proc = subprocess.Popen([sys.executable, "-m", "moderator", "play", "--watch"], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.readline()
    proc.stdout.close()  # as `| head -1` does
    err = proc.stderr.read()
    assert proc.wait(timeout=120) == 0
    assert "Traceback" not in err and "BrokenPipe" not in err


def test_simulate_into_an_existing_file_says_so_and_exits_2(tmp_path: Path) -> None:
    taken = tmp_path / "records"
    taken.write_text("")
    result = run_moderator("simulate", "--games", "1", "--record", str(taken))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and str(taken) in result.stderr


def test_the_first_screen_shows_no_join_code_and_says_the_seating_and_the_rule_once() -> None:
    _, text = play([])
    opening = text.split("Keep this to yourself")[0]
    assert "code" not in opening.casefold()
    assert opening.count("Computer 2") == 1  # the seating order, once
    assert opening.count("Hitler and the Fascist know each other") == 1
    assert "---" not in text  # the deal's pad line is for chat lists, not a terminal


def test_without_a_name_the_console_asks_for_one() -> None:
    _, text = play(["Rosa"], name=None)
    assert "Your name at the table" in text
    assert "Rosa is the Presidential Candidate" in text or "Rosa" in text.split("seating order:")[1]
    _, text = play([""], name=None)  # Enter: a name that reads as a third person, never "You is"
    assert "You is" not in text and "You ist" not in text


def test_help_at_the_console_speaks_of_typing_not_buttons() -> None:
    _, text = play(["help"])
    assert "Type an option's number" in text and "button" not in text


def test_help_at_the_console_names_its_word_for_leaving_in_every_language() -> None:
    """Help names the word that leaves the game (read before the grammar, so help's verbs cannot name it)."""
    for lang, word in (("en", "help"), ("de", "hilfe")):
        _, text = play([word], lang=lang)
        line = Catalog.load("classic", lang).text("console-help-quit")
        assert line in text.split(Catalog.load("classic", lang).text("help-typed"), 1)[1], lang
        named = line.split(":", 1)[0]
        assert fold(named) in grammar().quit_words, lang


def test_a_number_no_option_has_shows_the_options_again() -> None:
    _, text = play(["9"], seed=3)  # seat 1 nominates first: four options
    after = text.split("There is no option 9.")[1]
    assert "[1] Computer 1" in after and "did not understand" not in text


def test_a_computer_players_name_typed_whole_nominates_it_not_a_command_for_computers() -> None:
    # "Computer 2" begins with a word of the computers command; the prompt's option of that name is what it means.
    _, text = play(["Computer 2"], seed=3)  # seat 1 (you) nominates first
    assert "Zoe nominates Computer 2 as Chancellor." in text
    assert "the seats can no longer change" not in text


def test_quit_asks_first_then_ends_the_game_and_shows_the_roles() -> None:
    status, text = play(["quit", "no", "board", "quit", "yes"])
    assert status == 0
    first = text.index("Leave the game?")
    assert "The board:" in text[first:]  # "no" went on with the game
    assert text.count("Leave the game?") == 2
    assert "The roles:" in text and text.rstrip().endswith("Goodbye!")


def test_quit_is_the_catalogs_word_in_every_language() -> None:
    for lang, word, answer in (("en", "exit", "y"), ("de", "Beenden", "ja")):
        status, text = play([word, answer, "whoami"], lang=lang)
        catalog = Catalog.load("classic", lang)
        after = text.split(catalog.text("console-quit"), 1)[1]
        assert status == 0 and catalog.text("console-goodbye") in after, lang
        assert catalog.text("knowledge-title") not in after, lang  # it left: nothing more was read
    assert not grammar().quit_words & set(grammar().meaning)  # read before the grammar: no command's word


def test_ctrl_d_ends_the_game_with_the_roles_and_a_goodbye() -> None:
    status, text = play([])
    assert status == 0 and "The roles:" in text and text.rstrip().endswith("Goodbye!")


def test_the_console_never_says_a_vote_can_change_nor_counts_the_votes() -> None:
    """At the console the computers vote at once, so your vote is always the last one."""
    _, text = play(["1"] * 400, players=7, seed=5)
    assert "It was the last one." in text
    assert "You can change" not in text and "have voted" not in text and "has voted" not in text


def test_a_console_game_is_exportable(tmp_path: Path) -> None:
    record = tmp_path / "game.json"
    status, _ = play(["1"] * 400, players=5, seed=2, record=record)
    assert status == 0
    result = run_moderator("replay", str(record))
    assert result.returncode == 0, result.stderr
    assert "Game over" in result.stdout


def test_a_rename_at_the_console_is_told_to_you_in_the_second_person() -> None:
    _, text = play(["", "rename Zoé"], name=None)  # Enter: the default name; then a new one
    assert "You are now called Zoé." in text
    assert "is now called" not in text and "You is" not in text


def test_after_language_de_the_console_speaks_german_to_the_goodbye() -> None:
    """The theme's reply, a number past the options (the prompt again, under your new name), the quit question
    and the goodbye all follow ``language de``."""
    _, text = play(["rename Zoé", "language de", "theme corporate", "9", "quit", "ja"], seed=3)
    after = text.split("Sprache: de.")[1]
    assert "Thema: corporate." in after
    again = after.split("Es gibt keine Option 9.")[1]
    assert "[1] Computer 1" in again and "CEO" in again
    assert "Das Spiel verlassen?" in after and after.rstrip().endswith("Tschüss!")
    assert "Theme:" not in after and "Leave the game?" not in after and "Goodbye" not in after
