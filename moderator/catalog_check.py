"""``moderator catalog check PATH``: what a new or changed catalog file still needs, with file and line.

A translator adds a language with one file, ``messages/<theme>/<lang>.toml``; no code names a language. The check
compares the file with the reference (``classic/en.toml`` of the same messages folder): keys missing or extra,
placeholders that differ, the plural forms its language needs (CLDR's, from Babel), characters an SMS in its
alphabet would lose, and typed words that collide with another catalog's (one folded word meaning two different
things; the same word meaning the same, such as ``no``, is fine).
"""

from __future__ import annotations

import re
import string
import tomllib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from babel import Locale

from .catalog import (
    DEFAULT_LANGUAGE,
    DEFAULT_THEME,
    PLURAL,
    SMS_LIMIT,
    UCS2_LIMIT,
    CatalogFile,
    known_language,
    literals,
    messages_dir,
    needed_plural_categories,
    placeholders,
    plural_categories,
    plural_forms,
    read_file,
    right_to_left,
    to_gsm7,
    writes_gsm7,
)
from .grammar import NOT_NAMES, QUIT, SWITCH_OFF, SWITCH_ON, Verb, fold, word_key

TABLES: Final = ("terms", "words", "messages", "sms")
_CARDS: Final = {"liberal_card": "L", "liberal_policy": "L", "liberal": "L",
                 "fascist_card": "F", "fascist_policy": "F", "fascist": "F"}
"""The terms the grammar reads as a card or a policy (``claim FFL``, ``discard liberal``)."""


@dataclass(frozen=True, slots=True)
class Finding:
    """One problem of a catalog file, at a line of it (0: the file as a whole)."""

    path: Path
    line: int
    text: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.text}" if self.line else f"{self.path}: {self.text}"


@dataclass(frozen=True, slots=True)
class Report:
    """What the check found in one file, and what its language needs (said whether or not there is a problem)."""

    path: Path
    problems: tuple[Finding, ...]
    notes: tuple[str, ...] = field(default=())


def key_lines(text: str) -> dict[tuple[str, str], int]:
    """Where each key of a TOML catalog is written: ``(table, key)`` -> its line; ``("", table)`` -> the line of
    the table's header."""
    found: dict[tuple[str, str], int] = {}
    table = ""
    closing: str | None = None
    for number, line in enumerate(text.splitlines(), 1):
        if closing is not None:
            if closing in line:
                closing = None
            continue
        stripped = line.strip()
        header = re.fullmatch(r"\[\s*([A-Za-z0-9_-]+)\s*\]\s*(#.*)?", stripped)
        if header:
            table = header[1]
            found[("", table)] = number
            continue
        entry = re.match(r"""([A-Za-z0-9_-]+|"[^"]*"|'[^']*')\s*=\s*(.*)""", stripped)
        if entry:
            found[(table, entry[1].strip("\"'"))] = number
            for quotes in ('"""', "'''"):
                if entry[2].startswith(quotes) and entry[2].count(quotes) == 1:
                    closing = quotes
    return found


def language_name(lang: str) -> str:
    """The language's name in English and in itself (``Persian (فارسی)``), or its code if CLDR knows none."""
    if not known_language(lang):
        return lang
    locale = Locale.parse(lang)
    english, own = locale.get_display_name(DEFAULT_LANGUAGE), locale.get_display_name()
    return f"{english} ({own})" if own and own != english else str(english)


def _where(path: Path) -> tuple[Path, str]:
    """The messages folder a file belongs to and its theme: its own folder's parent if that holds the reference
    (``classic/en.toml``), else the messages in use, as a classic file (a draft kept anywhere)."""
    root = path.parent.parent
    if (root / DEFAULT_THEME / f"{DEFAULT_LANGUAGE}.toml").is_file():
        return root, path.parent.name
    return messages_dir(), DEFAULT_THEME


def check(path: Path) -> Report:
    """Everything a catalog file lacks or has wrong, against the reference of its messages folder."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
        tomllib.loads(text)
        own = read_file(path)
    except (OSError, UnicodeDecodeError) as exc:
        return Report(path, (Finding(path, 0, f"cannot be read: {exc}"),))
    except tomllib.TOMLDecodeError as exc:
        at = re.search(r"line (\d+)", str(exc))
        return Report(path, (Finding(path, int(at[1]) if at else 0, f"is no TOML file: {exc}"),))
    except ValueError as exc:
        return Report(path, (Finding(path, 0, str(exc).removeprefix(f"{path}: ")),))
    root, theme = _where(path)
    lang = path.stem
    lines = key_lines(text)
    reference = read_file(root / DEFAULT_THEME / f"{DEFAULT_LANGUAGE}.toml")
    problems: list[Finding] = []

    def say(table: str, key: str, what: str) -> None:
        problems.append(Finding(path, _line(lines, table, key), f"[{table}] {key}: {what}"))

    if not known_language(lang):
        problems.append(Finding(path, 0, f"CLDR knows no language {lang!r}: name the file by its language's code "
                                         "(es.toml, pt.toml, fa.toml)"))
    problems += _keys(own, reference, theme, lines)
    for table in ("messages", "sms"):
        for key, template in getattr(own, table).items():
            for what in _template_problems(template, getattr(reference, table).get(key), reference, lang):
                say(table, key, what)
    gsm7 = writes_gsm7(own)
    if gsm7:
        for table in ("terms", "messages", "sms"):
            for key, template in getattr(own, table).items():
                lost = sorted({c for c in literals(template) if not c.isspace() and not to_gsm7(c)})
                if lost:
                    say(table, key, f"an SMS in GSM-7 cannot carry {' '.join(lost)} (it would be dropped)")
    for table, key, what in _collisions(own, root, path):
        say(table, key, what)
    return Report(path, tuple(problems), _notes(lang, theme, gsm7=gsm7))


def _line(lines: Mapping[tuple[str, str], int], table: str, key: str = "") -> int:
    """The line of a key, else of its table's header, else 0."""
    return lines.get((table, key), lines.get(("", table), 0))


def _keys(own: CatalogFile, reference: CatalogFile, theme: str,
          lines: Mapping[tuple[str, str], int]) -> Iterator[Finding]:
    path = own.path
    classic = theme == DEFAULT_THEME
    for table in TABLES:
        mine: Mapping[str, str] = getattr(own, table)
        theirs: Mapping[str, str] = getattr(reference, table)
        # Every file has every term (a theme remaps the whole vocabulary); a language's classic file has every key,
        # a theme's file only the sentences its words need (they fall back to classic).
        missing = sorted(set(theirs) - set(mine)) if classic or table == "terms" else []
        if missing:
            yield Finding(path, _line(lines, table), f"[{table}] missing {len(missing)}: {', '.join(missing)}")
        for key in sorted(set(mine) - set(theirs)):
            yield Finding(path, _line(lines, table, key), f"[{table}] {key}: no such key in the reference "
                                                          f"({DEFAULT_THEME}/{DEFAULT_LANGUAGE}.toml)")
    if not classic:
        for key in sorted(k for k in own.messages if k in reference.sms and k not in own.sms):
            yield Finding(path, _line(lines, "messages", key),
                          f"[messages] {key}: overridden without its [sms] variant (the long sentence would be texted)")


def _params(template: str) -> frozenset[str]:
    return frozenset(p for p in placeholders(template) if not p.startswith("term."))


def _template_problems(template: str, ref: str | None, reference: CatalogFile, lang: str) -> Iterator[str]:
    try:
        used = placeholders(template)
        specs = [s for _, f, s, _ in string.Formatter().parse(template) if f is not None and s]
    except ValueError as exc:
        yield f"braces do not pair up ({exc}); write a literal brace as {{{{ or }}}}"
        return
    if ref is not None:
        params, wanted = _params(template), _params(ref)
        if params != wanted:
            extra, missing = sorted(params - wanted), sorted(wanted - params)
            said = [f"has {_braced(extra)}" if extra else "", f"lacks {_braced(missing)}" if missing else ""]
            yield "placeholders differ from the reference: " + "; ".join(s for s in said if s)
    for p in sorted(p for p in used if p.startswith("term.") and p.removeprefix("term.") not in reference.terms):
        yield f"{{{p}}} names no term"
    needed, known = needed_plural_categories(lang), plural_categories(lang)
    for spec in (s for s in specs if s.startswith(PLURAL)):
        try:
            forms = set(plural_forms(spec))
        except ValueError:
            yield f"malformed plural forms {{…:{spec}}}: write category=text|…, with other= among them"
            continue
        lacking, foreign = sorted(needed - forms), sorted(forms - known)
        if lacking:
            yield f"plural forms lack {', '.join(lacking)} ({language_name(lang)} needs {', '.join(_ordered(needed))})"
        if foreign:
            yield (f"plural forms {', '.join(foreign)} are no category of {language_name(lang)} "
                   f"(it has {', '.join(_ordered(known))})")


def _braced(names: list[str]) -> str:
    return ", ".join("{" + name + "}" for name in names)


_ORDER: Final = ("zero", "one", "two", "few", "many", "other")


def _ordered(categories: frozenset[str]) -> list[str]:
    return sorted(categories, key=lambda c: _ORDER.index(c) if c in _ORDER else len(_ORDER))


def _typed(f: CatalogFile) -> Iterator[tuple[str, str, str, str, str]]:
    """Every word a person may type that this file gives a meaning: ``(table, key, word, namespace, meaning)``.
    A namespace holds words read in one place: commands (the console's quit words among them), what switches
    votes at the table or reminders, the cards of a claim or a discard."""
    verbs = {v.value for v in Verb}
    for key, listed in f.words.items():
        space = "command" if key in verbs or key == QUIT else "switch" if key in (SWITCH_ON, SWITCH_OFF) else ""
        if not space or key == NOT_NAMES:
            continue
        for word in (w.strip() for w in listed.split(",")):
            if (space == "command" and word_key(word)) or (space == "switch" and fold(word)):
                yield "words", key, word, space, key
    for key, verb in (("ja", "ja"), ("nein", "nein")):
        if key in f.terms and word_key(f.terms[key]):
            yield "terms", key, f.terms[key], "command", verb
    for key, card in _CARDS.items():
        if key in f.terms and fold(f.terms[key]):
            yield "terms", key, f.terms[key], "card", card


def _folded(space: str, word: str) -> str:
    return word_key(word) if space == "command" else fold(word)


def _collisions(own: CatalogFile, root: Path, path: Path) -> Iterator[tuple[str, str, str]]:
    others: dict[tuple[str, str], dict[str, str]] = {}  # (namespace, folded word) -> meaning -> where
    for other in sorted(root.glob("*/*.toml")):
        if other.resolve() == path.resolve():
            continue
        try:
            f = read_file(other)
        except (OSError, ValueError):
            continue  # its own check says why
        for table, key, word, space, meaning in _typed(f):
            where = f"{other.parent.name}/{other.name} [{table}] {key}"
            others.setdefault((space, _folded(space, word)), {}).setdefault(meaning, where)
    mine: dict[tuple[str, str], dict[str, str]] = {}
    for table, key, word, space, meaning in _typed(own):
        mine.setdefault((space, _folded(space, word)), {}).setdefault(meaning, f"[{table}] {key}")
    for table, key, word, space, meaning in _typed(own):
        folded = _folded(space, word)
        clashes = {**others.get((space, folded), {}), **mine.get((space, folded), {})}
        clashes.pop(meaning, None)
        for where in clashes.values():
            yield table, key, f"{word!r} also means {where}: a typed word may mean one thing only"


def _notes(lang: str, theme: str, *, gsm7: bool) -> tuple[str, ...]:
    needed = ", ".join(_ordered(needed_plural_categories(lang)))
    sms = (f"SMS in GSM-7, transliterated, one segment ({SMS_LIMIT} characters)" if gsm7
           else f"SMS in UCS-2, at most two segments ({UCS2_LIMIT} characters)")
    direction = "right to left" if right_to_left(lang) else "left to right"
    return (f"{language_name(lang)}, theme {theme}: written {direction}; every count needs the plural forms {needed} "
            f"(CLDR); {sms}",)
