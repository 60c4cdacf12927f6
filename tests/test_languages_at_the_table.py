"""A whole game in every language and theme at the console, as its speakers play it: each typing their own
language's words (help, board, whoami, rules), then numbers until the end; every language's words its own and none
meaning two commands. The languages are the catalogs': a new catalog file is played here without a line of this
file changing. (By SMS: tests/test_sms.py, "every language at the table by text".)"""

from __future__ import annotations

import io

import pytest

from moderator.catalog import Catalog, languages, messages_dir, read_file
from moderator.grammar import Verb, conflicts
from moderator.transports.sms import RESERVED_WORDS
from tests.test_console import play_console
from tests.test_sms import ASKED, CATALOGS, names, word

# --- the console ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("theme,lang", CATALOGS)
def test_a_whole_console_game_speaks_the_players_language(theme: str, lang: str) -> None:
    """A person at the console asks in their words, then answers every prompt with 1 to the end; everything they
    read of the game is in their language and theme."""
    catalog = Catalog.load(theme, lang)
    answers = iter([word(verb, lang) for verb in ASKED] + ["1"] * 5000)
    out = io.StringIO()
    status = play_console(players=7, name=names("classic", lang)[0], theme=theme, language=lang, seed=11, watch=False,
                          read=lambda _prompt: next(answers), output=out)
    text = out.getvalue()
    assert status == 0
    said = [catalog.text(mid) for mid in ("board-title", "knowledge-title", "truth-title", "help-typed")]
    said += [catalog.template("deal-role").split("{")[0], catalog.text("computer-name", n=2)]
    assert [line for line in said if line not in text] == []
    english = Catalog.load(theme, "en")
    if lang != "en":
        foreign = [english.text(mid) for mid in ("board-title", "knowledge-title", "truth-title", "deal-footer")]
        assert [line for line in foreign if line in text and line not in said] == []


# --- the words ---------------------------------------------------------------------------------------------


def own_words(lang: str) -> list[str]:
    """The verbs whose word a speaker types (``word``: at the console, by SMS) is not the language's own (its catalog
    has none, and English is shown)."""
    listed = read_file(messages_dir() / "classic" / f"{lang}.toml").words
    return [verb.value for verb in Verb
            if word(verb, lang, RESERVED_WORDS) not in [w.strip() for w in listed.get(verb.value, "").split(",")]]


def test_every_language_types_words_of_its_own() -> None:
    """The words the whole games type are each language's own, not English fallen back to."""
    assert {lang: own_words(lang) for lang in languages() if own_words(lang)} == {}


def test_no_word_of_any_language_means_two_commands() -> None:
    """Every language's words work at every table: one folded word of two verbs would do the first one found."""
    assert conflicts() == []
