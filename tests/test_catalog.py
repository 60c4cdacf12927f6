"""Catalogs: every theme and language complete, with the same placeholders, fit for SMS; and the code holds no
player-facing prose (every word a player reads comes from messages/)."""

from __future__ import annotations

import ast
import dataclasses
import re
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import pytest

import moderator
from moderator.board import Palette, colour_tables, palette
from moderator.catalog import (
    Catalog,
    UnknownCatalog,
    gsm7_language,
    is_gsm7,
    languages,
    literals,
    messages_dir,
    needed_plural_categories,
    placeholders,
    plural_categories,
    plural_category,
    plural_forms,
    plural_specs,
    read_file,
    themes,
    to_gsm7,
)
from moderator.channels import NOT_STORED_MESSAGE, REPEAT_MESSAGE
from moderator.engine import Event, Phase, Power, RuleViolation, errors
from moderator.engine import events as ev
from moderator.render import InputProblem, TableInfo, covered_events
from moderator.service import LOBBY_MESSAGES
from moderator.transports.console import CONSOLE_MESSAGES
from moderator.transports.sms import CAPABILITIES as SMS
from moderator.transports.web import WEB_MESSAGES
from tests.test_render import CATALOGS, corpus, recording, sms_limit, worst_names
from tests.test_replay_words import replay_ids

SERVICE_IDS = frozenset(LOBBY_MESSAGES) | {"computer-name"}
"""Ids the service renders itself (it names computer players with "computer-name" directly)."""
SERVICE = [Path(moderator.__file__).resolve().parent / f"{name}.py"
           for name in ("service", "lobby", "game", "host", "fanout")]
"""The service's modules that render its own messages."""

ROOT = messages_dir()
REFERENCE = read_file(ROOT / "classic" / "en.toml")
FILES = sorted(ROOT.glob("*/*.toml"))


def _params(template: str) -> frozenset[str]:
    """The placeholders a template fills from params (terms excluded: a theme may phrase them differently)."""
    return frozenset(p for p in placeholders(template) if not p.startswith("term."))


def _label(path: Path) -> str:
    return f"{path.parent.name}/{path.name}"


# --- the files ------------------------------------------------------------------------------------------


def test_themes_and_languages_exist() -> None:
    assert themes() == ("classic", "corporate")
    assert {"en", "de"} <= set(languages("classic"))
    assert {"en", "de"} <= set(languages("corporate"))
    assert set(languages("corporate")) <= set(
        languages("classic")
    )  # a theme's language falls back to classic


@pytest.mark.parametrize("path", FILES, ids=_label)
def test_every_file_has_every_term(path: Path) -> None:
    # A theme remaps the whole vocabulary; a language translates it. Either way no term may fall back.
    assert set(read_file(path).terms) == set(REFERENCE.terms)


@pytest.mark.parametrize("path", [p for p in FILES if p.parent.name == "classic"], ids=_label)
def test_every_language_has_every_message(path: Path) -> None:
    f = read_file(path)
    assert set(f.messages) == set(REFERENCE.messages)
    assert set(f.sms) == set(REFERENCE.sms)


@pytest.mark.parametrize("path", [p for p in FILES if p.parent.name != "classic"], ids=_label)
def test_a_theme_overrides_only_known_messages_and_their_sms_variants(path: Path) -> None:
    f = read_file(path)
    assert set(f.messages) <= set(REFERENCE.messages)
    assert set(f.sms) <= set(REFERENCE.sms)
    # Catalog.template takes the most specific file that knows an id: overriding only the long sentence
    # would send that long sentence by SMS.
    assert {m for m in f.messages if m in REFERENCE.sms} <= set(f.sms)


@pytest.mark.parametrize("path", FILES, ids=_label)
def test_placeholders_match_the_reference(path: Path) -> None:
    f = read_file(path)
    for table, ref in (("messages", REFERENCE.messages), ("sms", REFERENCE.sms)):
        for message_id, template in getattr(f, table).items():
            assert _params(template) == _params(ref[message_id]), f"{_label(path)} [{table}] {message_id}"
            for p in placeholders(template):
                if p.startswith("term."):
                    assert p.removeprefix("term.") in REFERENCE.terms, f"{message_id}: unknown {p}"
            assert "{" + "}" not in template and "{term}" not in template


@pytest.mark.parametrize("path", FILES, ids=_label)
def test_every_text_reaches_a_phone_in_its_languages_alphabet(path: Path) -> None:
    """A language whose letters GSM-7 writes (accents dropped where it has none) is texted in GSM-7, transliterated,
    losing no character; another script is texted as written, in UCS-2."""
    f = read_file(path)
    if not gsm7_language(path.stem):
        return
    for table in ("terms", "messages", "sms"):
        for key, text in getattr(f, table).items():
            literal = literals(text)  # placeholders are replaced, their braces never sent; plural forms are
            lost = sorted({c for c in literal if not c.isspace() and not to_gsm7(c)})
            assert not lost and is_gsm7(to_gsm7(literal)), f"{_label(path)} [{table}] {key}: {lost}"


def test_latin_languages_are_texted_in_gsm7_and_other_scripts_in_ucs2(
    tmp_path: Path, catalogs_in: Callable[[Path], AbstractContextManager[None]]
) -> None:
    assert gsm7_language("en") and gsm7_language("de") and gsm7_language("es")
    assert not gsm7_language("fa")
    _write(tmp_path, "classic", "en", '[messages]\na = "Hello"\n')
    _write(tmp_path, "classic", "pl", '[messages]\na = "Zażółć gęślą jaźń"\n')
    _write(tmp_path, "classic", "ru", '[messages]\na = "Привет, {name}"\n')
    with catalogs_in(tmp_path):
        assert gsm7_language("pl") and not gsm7_language("ru")
        assert SMS.limit("pl") == 160 and SMS.limit("ru") == 134  # one GSM-7 segment; two UCS-2 ones
        assert SMS.written("Zażółć", "pl") == "Zazolc" and SMS.written("Привет", "ru") == "Привет"


COUNTS = frozenset({"players", "added", "minutes", "cast", "count", "segments", "seconds", "most"})
"""Parameters that are counts of things: a sentence that names what they count needs its plural forms."""


@pytest.mark.parametrize("path", FILES, ids=_label)
def test_every_plural_has_the_forms_of_its_language(path: Path) -> None:
    """Every category CLDR gives a count in the file's language, and none the language lacks."""
    f = read_file(path)
    needed, known = needed_plural_categories(path.stem), plural_categories(path.stem)
    for table in ("messages", "sms"):
        for key, text in getattr(f, table).items():
            for spec in plural_specs(text):
                forms = set(plural_forms(spec))
                assert needed <= forms <= known, f"{_label(path)} [{table}] {key}: {spec}"


def test_plural_categories_are_cldrs() -> None:
    assert [plural_category("ru", n) for n in (1, 2, 5, 11, 21, 22, 25, 111, 0)] == [
        "one", "few", "many", "many", "one", "few", "many", "many", "many"]
    assert needed_plural_categories("ru") == {"one", "few", "many", "other"}
    assert [plural_category("fa", n) for n in (0, 1, 2, 10)] == ["one", "one", "other", "other"]
    assert [plural_category("fr", n) for n in (0, 1, 2)] == ["one", "one", "other"]  # French "one" is 0 and 1
    assert [plural_category("en", n) for n in (0, 1, 2)] == ["other", "one", "other"]
    assert needed_plural_categories("es") == {"one", "other"} < plural_categories("es")  # "many" is for millions


def test_a_count_takes_its_languages_form(
    tmp_path: Path, catalogs_in: Callable[[Path], AbstractContextManager[None]]
) -> None:
    _write(tmp_path, "classic", "en", '[messages]\na = "{n:plural:one=# player|other=# players}"\n')
    russian = "{n:plural:one=# игрок|few=# игрока|many=# игроков|other=# игрока}"
    _write(tmp_path, "classic", "ru", f'[messages]\na = "{russian}"\n')
    _write(tmp_path, "classic", "fa", '[messages]\na = "{n:plural:one=# بازیکن هست|other=# بازیکن هستند}"\n')
    _write(tmp_path, "classic", "fr", '[messages]\na = "{n:plural:one=# joueur|other=# joueurs}"\n')
    with catalogs_in(tmp_path):
        ru, fa, fr = (Catalog.load("classic", lang) for lang in ("ru", "fa", "fr"))
        assert [ru.text("a", n=n) for n in (1, 3, 5, 21)] == ["1 игрок", "3 игрока", "5 игроков", "21 игрок"]
        assert ru.text("a", n="2") == "2 игрока"  # a count passed as text, in the catalog's language too
        assert [fa.text("a", n=n) for n in (0, 1, 2)] == ["0 بازیکن هست", "1 بازیکن هست", "2 بازیکن هستند"]
        assert [fr.text("a", n=n) for n in (0, 1, 2)] == ["0 joueur", "1 joueur", "2 joueurs"]
        assert Catalog.load().text("a", n=0) == "0 players"


@pytest.mark.parametrize("theme,lang", CATALOGS)
@pytest.mark.parametrize(
    "mid,params,one,many",
    [
        ("computers-added", {"added": 1, "players": 5, "seating": "..."}, "1 computer player joined. 5 players",
         "2 computer players joined."),
        ("reminders-set", {"minutes": 1}, "after 1 minute.", "after 2 minutes."),
        ("vote-progress", {"cast": 1, "voters": 7}, "1 of 7 has voted.", "2 of 7 have voted."),
        ("seats-list", {"players": 1, "seating": "1. Ann"}, "1 player, in this order", "2 players, in this order"),
        ("table-joined", {"name": "Ann", "players": 1}, "1 player is at the table.", "2 players are at the table."),
    ],
)
def test_counts_take_the_singular_for_one_and_the_plural_otherwise(
    theme: str, lang: str, mid: str, params: dict[str, Any], one: str, many: str
) -> None:
    catalog = Catalog.load(theme, lang)
    count = next(k for k in params if k in COUNTS)
    singular = catalog.text(mid, **params)
    plural = catalog.text(mid, **{**params, count: 2})
    assert singular != plural
    if lang == "en":
        assert one in singular and many in plural
    for n, text in ((1, singular), (2, plural)):
        assert str(n) in text


def test_german_counts_decline() -> None:
    de = Catalog.load("classic", "de")
    assert "1 Computerspieler ist dabei" in de.text("computers-added", added=1, players=5, seating="")
    assert "3 Computerspieler sind dabei" in de.text("computers-added", added=3, players=5, seating="")
    assert "nach 1 Minute erinnert" in de.text("reminders-set", minutes=1)
    assert "1 von 7 hat abgestimmt" in de.text("vote-progress", cast=1, voters=7)
    assert "2 von 7 haben abgestimmt" in de.text("vote-progress", cast=2, voters=7)
    assert "mit 5 Spielern beginnt" in de.text("game-started", players=5, seating="")
    assert "in 1 Sekunde" in de.text("try-again", seconds=1)


def test_german_rules_decline_after_their_articles() -> None:
    de = Catalog.load("classic", "de")
    rules = de.text("rules-summary")
    assert "Geheime Rollen: die Liberalen und die Faschisten" in rules
    assert "Manche faschistische " not in rules  # "manche" takes the weak ending; "einige" the strong one
    for text in (rules, de.text("deal-goal")):
        assert "nach dem dritten" not in text and "nachdem drei faschistische Gesetze erlassen sind" in text


NUMERALS_TAKE_THE_SINGULAR = frozenset({"fa"})
"""Languages whose noun after a numeral stays singular whatever the number (Persian "۵ نفر", five person): a count
followed by its noun is right there."""


@pytest.mark.parametrize("theme,lang", [(t, lang) for t, lang in CATALOGS if lang not in NUMERALS_TAKE_THE_SINGULAR])
def test_no_count_is_written_without_its_plural_forms(theme: str, lang: str) -> None:
    """A count followed by the noun it counts ("{minutes} minutes") would read "1 minutes", in any script."""
    catalog = Catalog.load(theme, lang)
    # Words that count nothing: German "Spieler" (one form but the dative, "bei {players} Spielern", five or more), a
    # unit's one letter ("{seconds} s"), and the word between two numbers ("of", "sur", "z": "{cast} of {voters}").
    noun = r"\} (?!Spieler|\w\b|\w+ [{\d])[^\W\d_]"
    for f in catalog.files:
        for table in (f.messages, f.sms):
            for key, text in table.items():
                for count in COUNTS:
                    assert not re.search(r"\{" + count + noun, text), (key, text)


@pytest.mark.parametrize("lang", languages("corporate"))
def test_corporate_remaps_every_term(lang: str) -> None:
    classic = read_file(ROOT / "classic" / f"{lang}.toml").terms
    corporate = read_file(ROOT / "corporate" / f"{lang}.toml").terms
    same = {k for k in classic if classic[k].casefold() == corporate[k].casefold()}
    assert not same


def test_theme_words_stay_out_of_the_classic_theme() -> None:
    corporate_words = {"CEO", "blueprint", "Rat", "Bauplan", "Ratte", "Saboteur"}
    for path in (ROOT / "classic").glob("*.toml"):
        f = read_file(path)
        text = "\n".join([*f.terms.values(), *f.messages.values(), *f.sms.values()])
        assert not [w for w in corporate_words if re.search(r"\b" + w + r"\b", text)], path


def test_every_theme_has_every_board_colour() -> None:
    tables = colour_tables()
    assert set(tables) == set(themes())  # one table per theme, none for a theme that does not exist
    for theme, table in tables.items():
        assert set(table) == {f.name for f in dataclasses.fields(Palette)}, theme
        for key, value in table.items():
            assert re.fullmatch(r"#[0-9a-f]{6}", value), (theme, key, value)
    assert palette("classic") != palette("corporate")
    assert palette("no-such-theme") == palette("classic")  # a theme without colours draws in classic's


# --- what the renderer emits ----------------------------------------------------------------------------


def test_render_covers_every_event_violation_phase_and_power() -> None:
    event_classes = {
        c for c in vars(ev).values() if isinstance(c, type) and issubclass(c, Event) and c is not Event
    }
    assert covered_events() == event_classes
    violations = {
        c
        for c in vars(errors).values()
        if isinstance(c, type) and issubclass(c, RuleViolation) and c is not RuleViolation
    }
    ids = set(REFERENCE.messages)
    assert {"violation-" + c(0).code for c in violations} <= ids
    assert {"phase-" + p.value.replace("_", "-") for p in Phase} <= ids
    assert {"power-" + p.value.replace("_", "-") for p in Power} <= ids
    assert {p.value for p in InputProblem} <= ids


def test_every_message_id_is_used_and_every_used_id_exists() -> None:
    used: set[str] = set()
    for theme, lang in CATALOGS:
        for sms in (False, True):
            catalog = recording(theme, lang)
            for table_votes in (False, True):
                table = TableInfo(worst_names(), theme, table_votes=table_votes)
                corpus(table, catalog, sms=sms)  # a missing id or param raises KeyError here
            used |= {mid for mid, _ in catalog.log}
    # pages, console, a repeat's words, an SMS not saved
    used |= SERVICE_IDS | set(WEB_MESSAGES) | set(CONSOLE_MESSAGES) | {REPEAT_MESSAGE, NOT_STORED_MESSAGE}
    used |= replay_ids()  # `moderator replay`'s timeline
    assert used == set(REFERENCE.messages), (
        f"unused: {sorted(set(REFERENCE.messages) - used)}; unknown: {sorted(used - set(REFERENCE.messages))}"
    )


def test_every_sms_variant_is_sent_by_sms() -> None:
    # A short variant nothing sends (the truth timeline is never texted, nor a vote's echo) is text a translator
    # keeps up for nobody.
    used: set[str] = set()
    for theme, lang in CATALOGS:
        catalog = recording(theme, lang)
        for table_votes in (False, True):
            corpus(TableInfo(worst_names(), theme, table_votes=table_votes), catalog, sms=True)
        used |= {mid for mid, _ in catalog.log}
    assert set(REFERENCE.sms) <= used | SERVICE_IDS, sorted(set(REFERENCE.sms) - used - SERVICE_IDS)


def _service_calls() -> list[tuple[str, frozenset[str], int]]:
    """(message id, params passed, line) for every literal message id the service renders itself."""
    calls = []
    for path in SERVICE:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if name not in ("say", "tell", "tell_host", "words", "announce_seats", "show_seats", "text", "pass_host",
                            "say_seating"):
                continue
            ids = [a.value for a in node.args if isinstance(a, ast.Constant) and a.value in SERVICE_IDS]
            if name == "pass_host" and not ids:
                ids = ["host-passed"]  # its default message
            if not ids or any(k.arg is None for k in node.keywords):
                continue
            passed = {k.arg for k in node.keywords if k.arg} - {"sms", "kind", "closed"}
            if name in ("announce_seats", "show_seats"):
                passed |= {"players", "seating"}  # the seat list adds these
            if name == "say_seating":
                passed |= {"seating"}
            if name == "pass_host":
                passed |= {"name"}  # the new host's
            calls.append((ids[0], frozenset(passed), node.lineno))
    return calls


def test_the_service_passes_every_param_its_messages_use() -> None:
    calls = _service_calls()
    assert {mid for mid, _, _ in calls} == SERVICE_IDS  # every service id is rendered somewhere
    for path in FILES:
        f = read_file(path)
        for mid, passed, line in calls:
            for table in (f.messages, f.sms):
                if mid in table:
                    missing = _params(table[mid]) - passed
                    assert not missing, (
                        f"service.py:{line} renders {mid} without {sorted(missing)} ({_label(path)})"
                    )


@pytest.mark.parametrize("theme,lang", CATALOGS)
def test_service_messages_fit_one_sms(theme: str, lang: str) -> None:
    catalog = Catalog.load(theme, lang)
    info = TableInfo(worst_names())
    names = info.short_names if gsm7_language(lang) else info.short_unicode_names
    worst = {
        "name": "N" * 20,
        "code": "ACDEFHJ",
        "players": 10,
        "most": 10,
        "least": 5,
        "added": 9,
        "names": ", ".join(names),
        "seating": ", ".join(f"{i + 1}. {n}" for i, n in enumerate(names)),
        "language": "x" * 10,
        "languages": ", ".join(["xx"] * 12),  # the codes of a dozen languages
        "theme": "x" * 20,
        "n": 10,
        "segments": 1000,
        "delivered": 1000,
        "failed": 1000,
        "minutes": 120,
        "old": "O" * 20,
        "president": "P" * 10,
        "chancellor": "C" * 10,
        "ja": 10,
        "nein": 10,
        "seconds": 3600,
        "claim": "c" * 100,
        "host": "H" * 20,
    }
    # The host's own replies go to the host's channel (Telegram or the console in practice); a seating order
    # of ten names cannot fit one SMS with instructions around it.
    for mid in SERVICE_IDS - {"seating-mismatch"}:
        text = SMS.written(catalog.text(mid, sms=True, **worst), lang)
        assert len(text) <= sms_limit(lang) and (is_gsm7(text) or not gsm7_language(lang)), (mid, len(text), text)


@pytest.mark.parametrize("theme,lang", CATALOGS)
def test_sms_messages_fit_one_segment_with_the_longest_names(theme: str, lang: str) -> None:
    catalog = Catalog.load(theme, lang)
    table = TableInfo(worst_names(), theme)
    for message in corpus(table, catalog, sms=True):
        text = SMS.written(message.text, lang)
        assert len(text) <= sms_limit(lang), (len(text), text)
        assert is_gsm7(text) or not gsm7_language(lang), text
        if message.secret:
            assert message.text.startswith(catalog.text("private-header", sms=True) + "\n")


@pytest.mark.parametrize("theme,lang", CATALOGS)
def test_long_messages_render_in_every_catalog(theme: str, lang: str) -> None:
    catalog = Catalog.load(theme, lang)
    table = TableInfo(worst_names(), theme)
    for message in corpus(table, catalog, sms=False):
        assert message.text.strip(), message.text
        assert "{" not in message.text and "}" not in message.text
        if message.secret:
            assert message.text.startswith(catalog.text("private-header") + "\n")


# --- the loader -----------------------------------------------------------------------------------------


def _write(root: Path, theme: str, lang: str, text: str) -> None:
    (root / theme).mkdir(parents=True, exist_ok=True)
    (root / theme / f"{lang}.toml").write_text(text, encoding="utf-8")


def test_loading_falls_back_key_by_key(
    tmp_path: Path, catalogs_in: Callable[[Path], AbstractContextManager[None]]
) -> None:
    _write(
        tmp_path,
        "classic",
        "en",
        """
[terms]
president = "President"
hitler = "Hitler"
[messages]
a = "A {term.president} {name}"
b = "B {term.hitler:cap}"
c = "C {name:cap}"
[sms]
a = "a {name}"
""",
    )
    _write(
        tmp_path,
        "classic",
        "de",
        """
[terms]
president = "Präsident"
[messages]
a = "DE-A {term.president} {name}"
""",
    )
    _write(
        tmp_path,
        "odd",
        "de",
        """
[terms]
hitler = "die Ratte"
[messages]
b = "ODD-B {term.hitler:cap} {term.president}"
""",
    )
    with catalogs_in(tmp_path):
        assert themes() == ("classic", "odd") and languages() == ("de", "en")
        odd = Catalog.load("odd", "de")
        assert odd is Catalog.load("odd", "de")  # cached
        assert odd.text("a", name="x") == "DE-A Präsident x"  # from classic/de
        assert odd.text("b") == "ODD-B Die Ratte Präsident"  # the theme's own, with ":cap"
        assert odd.text("c", name="zoe") == "C Zoe"  # from classic/en
        assert (
            odd.text("a", sms=True, name="x") == "DE-A Präsident x"
        )  # classic/de says a, without an SMS variant
        assert Catalog.load("classic", "en").text("a", sms=True, name="x") == "a x"
        assert Catalog.load("classic", "en").text("b", sms=True) == "B Hitler"  # no SMS variant: the long one
        assert odd.term("hitler") == "die Ratte" and odd.term("president") == "Präsident"
        with pytest.raises(KeyError):
            odd.text("no-such-id")
        with pytest.raises(KeyError):
            odd.text("a")  # a missing param is a bug
        with pytest.raises(KeyError):
            odd.term("nope")
        with pytest.raises(UnknownCatalog):
            Catalog.load("nope", "en")
        with pytest.raises(UnknownCatalog):
            Catalog.load("classic", "fr")
    assert Catalog.load().term("president") == "President"  # the real folder again


def test_a_malformed_file_is_rejected(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text("[messages]\na = 3\n", encoding="utf-8")
    with pytest.raises(ValueError):
        read_file(path)
    path.write_text("[mesages]\na = 'x'\n", encoding="utf-8")
    with pytest.raises(ValueError):
        read_file(path)
    path.write_text("[messages]\na = 'x'\nb = \nc = 'y'\n", encoding="utf-8")
    with pytest.raises(ValueError, match=rf"^{re.escape(str(path))}: .*\(at line 3, column 5\)$"):
        read_file(path)  # not parseable: the file and the line, in one line


def test_lower_writes_a_term_or_a_word_in_lower_case(
    tmp_path: Path, catalogs_in: Callable[[Path], AbstractContextManager[None]]
) -> None:
    _write(tmp_path, "classic", "en", '[terms]\nelection_tracker = "Election Tracker"\n'
           '[messages]\na = "The {term.election_tracker:lower} moves; {vote:lower}."\n')
    with catalogs_in(tmp_path):
        assert Catalog.load().text("a", vote="Ja") == "The election tracker moves; ja."


@pytest.mark.parametrize("path", [p for p in FILES if p.stem == "de"], ids=_label)
def test_german_writes_its_nouns_with_their_capitals(path: Path) -> None:
    f = read_file(path)
    assert not [key for key, text in {**f.messages, **f.sms}.items() if ":lower}" in text]


# --- no player-facing prose in code ---------------------------------------------------------------------

PACKAGE = Path(moderator.__file__).resolve().parent

# Output for an operator's or developer's terminal, in English by design and never shown to a player:
# (file, scope), where scope is the enclosing function or class, or the module-level constant.
ALLOWED: frozenset[tuple[str, str]] = frozenset(
    {
        ("cli.py", "_simulate"),
        ("simulate.py", "Tally.report"),
        ("record.py", "_TYPE_NAMES"),
        ("app.py", "host_on_this_device"),  # the addresses `moderator play --web` prints for whoever started it
        ("transports/sms.py", "SmsSpec.off"),  # why a channel is off: the operator's log
        ("transports/whatsapp.py", "WhatsAppSpec.off"),
        ("transports/console.py", "ConsoleSpec.off"),
        ("transports/telegram/__init__.py", "TelegramSpec.off"),
        ("transports/web/__init__.py", "WebSpec.off"),
        ("board.py", "font_problems"),  # what /healthz logs for the operator
        # What a provider's fault says in the operator's log (one line, never a player's message)
        ("channels.py", "Unreachable.__init__"),
        ("transports/twilio_common.py", "refused"),
        ("transports/twilio_common.py", "unreachable"),
        ("transports/telegram/config.py", "refused"),
        ("transports/telegram/config.py", "provider_problem"),
        ("guard.py", "hide_uncaught.thread_hook"),  # Python's own words for an uncaught exception, keys hidden
        # `moderator catalog check`: for a translator at a terminal, in English like every command's diagnostics
        ("catalog_check.py", "check"),
        ("catalog_check.py", "_keys"),
        ("catalog_check.py", "_template_problems"),
        ("catalog_check.py", "_collisions"),
        ("catalog_check.py", "_notes"),
    }
)
_LOGGING = {"debug", "info", "warning", "warn", "error", "exception", "critical", "log"}
_ARGPARSE = {
    "ArgumentParser",
    "add_argument",
    "add_parser",
    "add_subparsers",
    "add_argument_group",
    "add_mutually_exclusive_group",
}
_SQL = frozenset(
    {
        "SELECT",
        "FROM",
        "WHERE",
        "AND",
        "OR",
        "NOT",
        "IN",
        "ORDER",
        "GROUP",
        "BY",
        "LIMIT",
        "INSERT",
        "INTO",
        "VALUES",
        "UPDATE",
        "SET",
        "DELETE",
        "CREATE",
        "TABLE",
        "INDEX",
        "JOIN",
        "ON",
        "NULL",
        "PRAGMA",
        "BEGIN",
        "COMMIT",
        "DROP",
        "ALTER",
        "PRIMARY",
        "KEY",
    }
)
_WORD = re.compile(r"[A-Za-zÄÖÜäöüß]{2,}(?:'[a-z]+)?[.,:;!?]?")


def looks_like_prose(text: str) -> bool:
    """Three or more words of letters separated by spaces: a sentence, not an identifier, path or format."""
    if sum(token in _SQL for token in re.findall(r"\b[A-Z]+\b", text)) >= 2:
        return False  # SQL, whole or in fragments
    words = [t for t in re.sub(r"\{[^}]*\}", " ", text).split() if _WORD.fullmatch(t)]
    return len(words) >= 3


def _is_exempt_call(node: ast.Call) -> bool:
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    receiver = ast.unparse(func.value) if isinstance(func, ast.Attribute) else ""
    if name in _LOGGING and ("log" in receiver.lower() or receiver == "warnings"):
        return True  # logs are for developers
    if name in _ARGPARSE:
        return True  # command-line help is for the operator
    if name.endswith(("Error", "Exception", "Violation", "Warning", "Failure")):
        return True  # exception messages (and a channel's failure reasons in the outbox) are for developers
    # Command-line diagnostics go to stderr.
    return name == "print" and any(
        k.arg == "file" and ast.unparse(k.value) == "sys.stderr" for k in node.keywords
    )


def prose_in(path: Path) -> list[tuple[int, str, str]]:
    """(line, enclosing function, text) of every string literal in ``path`` that reads like a sentence."""
    found: list[tuple[int, str, str]] = []

    def visit(node: ast.AST, scope: tuple[str, ...]) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            scope = scope + (node.name,)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and not scope:
            # A module-level constant is named by its target, so the allowlist can name it.
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            scope = tuple(t.id for t in targets if isinstance(t, ast.Name))[:1]
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            return  # docstrings and attribute docstrings are never shown
        if isinstance(node, (ast.Raise, ast.Assert)):
            return
        if isinstance(node, ast.Call) and _is_exempt_call(node):
            return
        if isinstance(node, ast.JoinedStr):
            text = "".join(str(v.value) if isinstance(v, ast.Constant) else "{}" for v in node.values)
            if looks_like_prose(text):
                found.append((node.lineno, ".".join(scope), text))
            return
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if looks_like_prose(node.value):
                found.append((node.lineno, ".".join(scope), node.value))
            return
        for child in ast.iter_child_nodes(node):
            visit(child, scope)

    visit(ast.parse(path.read_text(encoding="utf-8"), str(path)), ())
    return found


def test_the_prose_detector() -> None:
    for sentence in (
        "You are the President.",
        "Du bist der Präsident.",
        "{name} is not Hitler, sorry",
        "Waiting for the vote",
    ):
        assert looks_like_prose(sentence), sentence
    for code in (
        "moderator.game-record/1",
        "liberal_policy",
        "{president} nominates {chancellor}",
        "prompt-enact-veto",
        "<GameState players={} step={}>",
        "SELECT id FROM games WHERE x = ?",
        "def _copy(s):\n    c = _new(GameState)\n",
        "%(asctime)s %(levelname)s %(message)s",
    ):
        assert not looks_like_prose(code), code


def test_no_player_facing_prose_in_code() -> None:
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).as_posix()
        for line, scope, text in prose_in(path):
            if (relative, scope) not in ALLOWED:
                offenders.append(f"moderator/{relative}:{line} ({scope}): {text!r}")
    assert not offenders, "player-facing words belong in messages/:\n" + "\n".join(offenders)
