"""A whole game in every language and theme, as its speakers play it: at the console, and by SMS through the fake
Twilio, each person typing their own language's words (help, board, whoami, rules; by text also opening, joining,
the language, the theme and starting), then numbers until the end. The languages are the catalogs': a new catalog
file is played here without a line of this file changing."""

from __future__ import annotations

import io
import random
import re
import unicodedata

import pytest

from moderator.catalog import Catalog, languages, messages_dir, read_file, themes
from moderator.grammar import Verb, conflicts, grammar
from moderator.transports.sms import CAPABILITIES, RESERVED_WORDS
from tests.test_console import play_console
from tests.test_sms import (
    LONG_NAMES,
    PERSIAN_LONG_NAMES,
    Phones,
    check_texts,
    number,
    play_by_text_numbers,
)

CATALOGS = [(theme, lang) for lang in languages() for theme in themes()]
ASKED = (Verb.BOARD, Verb.WHOAMI, Verb.RULES, Verb.HELP)
"""What every player asks in their own words before playing."""


def word(verb: Verb, lang: str, reserved: frozenset[str] = frozenset()) -> str:
    """The word a speaker of ``lang`` types for ``verb`` (the one help shows in that language)."""
    shown = grammar().shown(verb, lang, reserved)
    assert shown, (verb, lang)
    return shown


def unisolated(text: str) -> str:
    """A text without the invisible marks that isolate a name or code running the other way (Persian's "fa")."""
    return re.sub("[\u2066-\u2069]", "", text)


def own_words(lang: str) -> list[str]:
    """The verbs whose word above is not the language's own (its catalog has none, and English is shown)."""
    listed = read_file(messages_dir() / "classic" / f"{lang}.toml").words
    return [verb.value for verb in Verb
            if word(verb, lang, RESERVED_WORDS) not in [w.strip() for w in listed.get(verb.value, "").split(",")]]


# --- the console ----------------------------------------------------------------------------------------


def console_name(lang: str) -> str:
    """A player's name in the language's script."""
    return {"ru": "Алексей", "fa": "مریم"}.get(lang, "Zoé")


@pytest.mark.parametrize("theme,lang", CATALOGS)
def test_a_whole_console_game_speaks_the_players_language(theme: str, lang: str) -> None:
    """A person at the console asks in their words, then answers every prompt with 1 to the end; everything they
    read of the game is in their language and theme."""
    catalog = Catalog.load(theme, lang)
    answers = iter([word(verb, lang) for verb in ASKED] + ["1"] * 5000)
    out = io.StringIO()
    status = play_console(players=7, name=console_name(lang), theme=theme, language=lang, seed=11, watch=False,
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


# --- SMS ------------------------------------------------------------------------------------------------

RUSSIAN_LONG_NAMES = (
    "Александра Щербакова",  # 20 characters each, in Cyrillic letters
    "Святослав Преображен",
    "Евфросиния Вознесенс",
    "Владимир Краснощёков",
    "Анастасия Жемчужнико",
    "Ярослав Черепановски",
    "Мстислав Ржевский-Ко",
    "Екатерина Шереметьев",
    "Всеволод Тихомировск",
    "Людмила Верещагина-Ю",
)
SCRIPTS = {"LATIN": LONG_NAMES, "ARABIC": PERSIAN_LONG_NAMES, "CYRILLIC": RUSSIAN_LONG_NAMES}
"""Twenty-character names by script: Latin letters with accents, Persian, Russian."""


def names(theme: str, lang: str) -> tuple[str, ...]:
    """Names in the language's own script in the classic theme (its catalog's letters say which), and in another
    script in the corporate one (the languages take turns): every language meets its own names and foreign ones."""
    letter = next(c for c in Catalog.load("classic", lang).text("list-nobody") if c.isalpha())
    own = unicodedata.name(letter).split()[0]
    own = own if own in SCRIPTS else "LATIN"
    if theme == "classic":
        return SCRIPTS[own]
    others = [script for script in SCRIPTS if script != own]
    return SCRIPTS[others[languages().index(lang) % len(others)]]


SMS_GAMES = [(theme, lang, 10, 7 + n, names(theme, lang)) for n, (theme, lang) in enumerate(CATALOGS)]
SMS_GAMES += [("classic", "en", 5, 5, LONG_NAMES), ("corporate", "en", 6, 6, LONG_NAMES)]  # the fewest players


@pytest.mark.parametrize(("theme", "lang", "players", "seed", "people"), SMS_GAMES,
                         ids=[f"{t}-{lang}-{n}" for t, lang, n, _, _ in SMS_GAMES])
def test_a_whole_game_by_sms_in_every_language_fits_its_texts(theme: str, lang: str, players: int, seed: int,
                                                               people: tuple[str, ...]) -> None:
    """Ten phones with twenty-character names play by text in the catalog's language, typing its words: every text
    fits its language's rule (one GSM-7 segment, transliterated, or two UCS-2 ones) and a secret starts below the
    lock screen's preview; every phone reads the game in its language and theme."""
    p = Phones(seed=seed)
    try:
        typed = {verb: word(verb, lang, RESERVED_WORDS) for verb in Verb}
        seats = [number(i) for i in range(players)]
        p.text(seats[0], f"{typed[Verb.OPEN]} {people[0]}")
        code = p.code(seats[0])
        for phone, name in zip(seats[1:], people[1:players], strict=True):
            p.text(phone, f"{typed[Verb.JOIN]} {code} {name}")
        for phone in seats:
            p.text(phone, f"{typed[Verb.LANGUAGE]} {lang}")
        p.text(seats[0], f"{typed[Verb.THEME]} {theme}")
        p.text(seats[0], typed[Verb.START])
        for phone in seats:
            for verb in ASKED:
                p.text(phone, "?" if verb is Verb.HELP else typed[verb])
        play_by_text_numbers(p, random.Random(seed))
        p.text(seats[0], typed[Verb.BOARD])
        check_texts(p, seats)
        catalog = Catalog.load(theme, lang)
        said = [CAPABILITIES.written(catalog.text("language-set", language=lang), lang),
                CAPABILITIES.written(catalog.template("deal-role", sms=True).split("{")[0], lang),  # the deal
                CAPABILITIES.written(catalog.text("rules-summary", sms=True), lang),  # in the theme's words
                CAPABILITIES.written(typed[Verb.RULES].upper(), lang)]  # help names the language's words
        for phone in seats:
            read = [unisolated(text) for text in p.inbox(phone)]
            assert [line for line in said if not any(line in text for text in read)] == [], phone
    finally:
        p.close()


def test_every_language_types_words_of_its_own() -> None:
    """The words typed above are each language's own, not English fallen back to."""
    assert {lang: own_words(lang) for lang in languages() if own_words(lang)} == {}


def test_no_word_of_any_language_means_two_commands() -> None:
    """Every language's words work at every table: one folded word of two verbs would do the first one found."""
    assert conflicts() == []
