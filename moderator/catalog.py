"""Message catalogs: every word a player reads, per theme and language, from ``messages/<theme>/<lang>.toml``.

A catalog file has ``[terms]`` (the game's vocabulary: President, policy, Hitler, ...), ``[messages]`` (one
template per message id) and ``[sms]`` (short variants of messages that must fit one SMS). Templates use
``{name}``-style parameters and ``{term.president}``-style terms; the format spec ``:cap`` capitalises the
first letter (``{term.hitler:cap}`` gives "The Rat" in the corporate theme), ``:lower`` writes it all in lower
case (English running text: ``{term.election_tracker:lower}``; German keeps its nouns' capitals). A count takes
the plural form of its language: ``{players:plural:one=# player|other=# players}`` (``#`` is the number; the
categories are CLDR's for the catalog's language, from Babel: ``one|few|many|other`` in Russian, ``other`` always
among them).

Lookups fall back key by key: ``<theme>/<lang>``, then ``classic/<lang>``, then ``classic/en``. A theme file
therefore holds its terms and only the sentences its grammar needs to override.
"""

from __future__ import annotations

import os
import string
import tomllib
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from types import MappingProxyType
from typing import Final

from anyascii import anyascii
from babel import Locale, UnknownLocaleError
from babel.plural import PluralRule

DEFAULT_THEME: Final = "classic"
DEFAULT_LANGUAGE: Final = "en"
ENV_VAR: Final = "MODERATOR_MESSAGES"
"""Environment variable naming another messages folder (tests, translators trying a draft)."""

SMS_LIMIT: Final = 160
"""Characters in one GSM-7 SMS segment."""

# GSM 03.38 basic character set (without the escape to the extension table): the characters that cost one
# septet each. Anything else makes a phone send the whole SMS as UCS-2, at 70 characters per segment.
GSM7_BASIC: Final = frozenset(
    "@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?"
    "¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà"
)


def is_gsm7(text: str) -> bool:
    """True if every character of ``text`` is in the GSM-7 basic set (one septet each)."""
    return all(c in GSM7_BASIC for c in text)


GSM7_EXTENSION: Final = frozenset("^{}\\[~]|€\f")
"""Characters GSM-7 reaches through an escape: two septets each."""


def sms_segments(text: str) -> int:
    """How many SMS segments ``text`` costs: 160 GSM-7 septets in one, 153 per part when concatenated; any
    other character makes it UCS-2 (70 in one, 67 per part)."""
    if all(c in GSM7_BASIC or c in GSM7_EXTENSION for c in text):
        septets = sum(2 if c in GSM7_EXTENSION else 1 for c in text)
        return 1 if septets <= SMS_LIMIT else -(-septets // 153)
    units = len(text.encode("utf-16-le")) // 2
    return 1 if units <= 70 else -(-units // 67)


GSM7_LOOKALIKES: Final = MappingProxyType({
    "Ł": "L", "ł": "l", "Đ": "D", "đ": "d", "Ð": "D", "ð": "d", "Þ": "Th", "þ": "th", "Œ": "OE", "œ": "oe",
    "\u0131": "i", "Ħ": "H", "ħ": "h", "Ŧ": "T", "ŧ": "t", "ĸ": "k", "ŀ": "l", "Ŀ": "L", "ƒ": "f",
    "\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u2013": "-", "\u2014": "-", "\u2026": "...",
})
"""Letters that Unicode does not decompose into a base letter (``Ł`` is not ``L`` + a mark), and typographic
punctuation phones put in names: what GSM-7 writes for them."""


def _gsm7_letter(c: str) -> str:
    """What GSM-7 writes for one character of a Latin-script language: itself, a lookalike, or its letters without
    their accents (``ą`` is ``a``); empty if GSM-7 has nothing for it."""
    if c in GSM7_BASIC:
        return c
    if c in GSM7_LOOKALIKES:
        return GSM7_LOOKALIKES[c]
    # NFKD splits "ë" into "e" and a combining diaeresis; keep what GSM-7 can carry.
    return "".join(d for d in unicodedata.normalize("NFKD", c) if d in GSM7_BASIC and d not in "\r\n")


def to_gsm7(text: str) -> str:
    """``text`` with every character outside GSM-7 replaced by its unaccented letter, a letter of another script or
    a punctuation mark by its Latin transliteration (``Алексей`` is ``Aleksey``, ``«`` is ``<<``: anyascii's), any
    digit by its ASCII digit, and anything else (an emoji) dropped."""
    out: list[str] = []
    for c in text:
        plain = _gsm7_letter(c)
        if not plain and c.isdecimal():
            plain = str(unicodedata.decimal(c))
        elif not plain and (c.isalpha() or unicodedata.category(c).startswith("P")):
            plain = "".join(d for d in anyascii(c) if d in GSM7_BASIC and d not in "\r\n")
        out.append(plain)
    return "".join(out)


UCS2_LIMIT: Final = 2 * 67
"""Characters of a text in a language GSM-7 cannot write: two concatenated UCS-2 segments of 67."""


@lru_cache(maxsize=64)
def _gsm7_language(lang: str, root: str) -> bool:
    path = Path(root) / DEFAULT_THEME / f"{lang}.toml"
    if not path.is_file():
        return True
    return writes_gsm7(read_file(path))


def writes_gsm7(f: CatalogFile) -> bool:
    """True if GSM-7 writes every letter of a catalog file, accents dropped where it has none."""
    texts = [*f.terms.values(), *(literals(t) for t in (*f.messages.values(), *f.sms.values()))]
    return all(_gsm7_letter(c) for text in texts for c in text if c.isalpha())


def gsm7_language(lang: str) -> bool:
    """True if GSM-7 writes the language's letters, accents dropped where it has none (English, German, Spanish,
    Polish): an SMS in it goes as GSM-7, transliterated. False for another script (Russian, Persian): its texts
    go as UCS-2. Read from the language's classic catalog, so a new language needs no code."""
    return _gsm7_language(lang, str(messages_dir()))


# --- direction -------------------------------------------------------------------------------------------

FSI: Final = "\u2068"
PDI: Final = "\u2069"
"""First strong isolate and pop directional isolate: text between them takes its own direction and leaves the
sentence's alone (Unicode's bidirectional algorithm)."""


def direction(text: str) -> str | None:
    """``"rtl"`` or ``"ltr"``: the direction of a text's first strong letter; None if it has none (digits, emoji)."""
    for c in text:
        kind = unicodedata.bidirectional(c)
        if kind == "L":
            return "ltr"
        if kind in ("R", "AL"):
            return "rtl"
    return None


def isolated(text: str, rtl: bool) -> str:
    """``text`` between FSI and PDI if it runs the other way than a sentence written right to left (``rtl``) or
    left to right; else as it is."""
    found = direction(text)
    return FSI + text + PDI if found is not None and found != ("rtl" if rtl else "ltr") else text


def _bundled() -> Path:
    """``moderator/messages`` in an installed wheel, else ``messages/`` beside the package (a checkout, or an
    editable install of one)."""
    package = Path(__file__).resolve().parent
    for folder in (package / "messages", package.parent / "messages"):
        if (folder / DEFAULT_THEME).is_dir():
            return folder
    return package / "messages"  # missing: health() says so, and every load names this path


BUNDLED: Final = _bundled()
"""The messages that ship with the code, resolved once (``Catalog.load`` runs for every message sent)."""


def messages_dir() -> Path:
    """The folder of ``<theme>/<lang>.toml``: ``$MODERATOR_MESSAGES`` (translators), else ``BUNDLED``."""
    override = os.environ.get(ENV_VAR)
    if override:
        return Path(override)
    return BUNDLED


def themes() -> tuple[str, ...]:
    """Every theme that has at least one catalog file, sorted."""
    root = messages_dir()
    if not root.is_dir():
        return ()
    return tuple(sorted(p.name for p in root.iterdir() if p.is_dir() and any(p.glob("*.toml"))))


def languages(theme: str = DEFAULT_THEME) -> tuple[str, ...]:
    """Every language a theme has its own file for, sorted (other languages fall back to classic)."""
    folder = messages_dir() / theme
    return tuple(sorted(p.stem for p in folder.glob("*.toml"))) if folder.is_dir() else ()


class UnknownCatalog(ValueError):
    """No catalog exists for this theme or language (a configuration error, not a player's)."""


def problems() -> list[str]:
    """Why the words cannot load (no ``classic/en``, a file that does not parse), one line each; empty when every
    theme loads in every language it has."""
    pairs = [(DEFAULT_THEME, DEFAULT_LANGUAGE)] + [(t, lang) for t in themes() for lang in languages(t)]
    found: list[str] = []
    for theme, lang in dict.fromkeys(pairs):
        try:
            Catalog.load(theme, lang)
        except (UnknownCatalog, ValueError, OSError) as exc:  # tomllib.TOMLDecodeError is a ValueError
            found.append(str(exc))
    return found


@dataclass(frozen=True, slots=True)
class CatalogFile:
    """One parsed catalog file: its terms, messages, SMS variants and the words people type, as stored."""

    path: Path
    terms: Mapping[str, str]
    messages: Mapping[str, str]
    sms: Mapping[str, str]
    words: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    """What people may type for each command (``grammar.Verb``): comma-separated, the one to show first."""


def read_file(path: Path) -> CatalogFile:
    """Parse one catalog file; raises ``ValueError`` naming the file if a table holds anything but strings."""
    try:
        with path.open("rb") as f:
            data = tomllib.load(f)
    except tomllib.TOMLDecodeError as exc:  # its message says the line and column, not the file
        raise ValueError(f"{path}: {exc}") from None
    tables: dict[str, Mapping[str, str]] = {}
    for table in ("terms", "messages", "sms", "words"):
        raw = data.get(table, {})
        if not isinstance(raw, dict) or not all(isinstance(v, str) for v in raw.values()):
            raise ValueError(f"{path}: [{table}] must map keys to strings")
        tables[table] = MappingProxyType(dict(raw))
    unknown = set(data) - set(tables)
    if unknown:
        raise ValueError(f"{path}: unknown tables {sorted(unknown)}")
    return CatalogFile(path, tables["terms"], tables["messages"], tables["sms"], tables["words"])



PLURAL: Final = "plural:"
"""The format spec prefix of a count's plural forms."""

COUNTED: Final = 10_000
"""Counts the game writes stay below this (players, minutes, segments, seconds): a plural category CLDR gives only
to larger numbers (Spanish ``many``, for a million) is one a catalog may write but need not."""


@lru_cache(maxsize=64)
def _plural_rule(lang: str) -> PluralRule:
    """CLDR's plural rule of a language (Babel); a language CLDR does not know counts as English does (``moderator
    catalog check`` says so)."""
    try:
        return Locale.parse(lang).plural_form
    except (UnknownLocaleError, ValueError):
        return Locale.parse(DEFAULT_LANGUAGE).plural_form


def own_name(lang: str) -> str:
    """A language's name in itself (``Deutsch``, ``español``, ``فارسی``: CLDR's), or its code if CLDR knows none."""
    try:
        return str(Locale.parse(lang).get_display_name() or lang)
    except (UnknownLocaleError, ValueError):
        return lang


def known_language(lang: str) -> bool:
    """True if CLDR (Babel's data) knows the language: its plural rule and its name."""
    try:
        Locale.parse(lang)
    except (UnknownLocaleError, ValueError):
        return False
    return True


@lru_cache(maxsize=64)
def right_to_left(lang: str) -> bool:
    """True if the language is written right to left (Persian, Arabic, Hebrew: CLDR's, from Babel)."""
    try:
        return bool(Locale.parse(lang).text_direction == "rtl")
    except (UnknownLocaleError, ValueError):
        return False


@lru_cache(maxsize=64)
def list_separator(lang: str) -> str:
    """What stands between the items of a list in ``lang``: CLDR's (", " in English, "، " in Persian), without the
    direction marks CLDR adds (names are isolated on their own)."""
    try:
        middle = str(Locale.parse(lang).list_patterns["standard"]["middle"])
    except (UnknownLocaleError, ValueError, KeyError):
        return ", "
    joiner = middle.replace("{0}", "", 1).replace("{1}", "", 1)
    return "".join(c for c in joiner if unicodedata.category(c) != "Cf") or ", "


def plural_category(lang: str, n: int) -> str:
    """The CLDR plural category of ``n`` in ``lang``: "one" or "other" in English, "one" for 0 and 1 in French and
    Persian, "one", "few" or "many" for a whole number in Russian."""
    category: str = _plural_rule(lang)(n)
    return category


def plural_categories(lang: str) -> frozenset[str]:
    """Every plural category CLDR has for ``lang`` (``other`` always among them)."""
    return frozenset(_plural_rule(lang).tags) | {"other"}


@lru_cache(maxsize=64)
def needed_plural_categories(lang: str) -> frozenset[str]:
    """The plural categories a catalog in ``lang`` must write for every count: those of the whole numbers below
    ``COUNTED``, and ``other`` (the form any other category falls back to)."""
    rule = _plural_rule(lang)
    return frozenset(rule(n) for n in range(COUNTED)) | {"other"}


def plural_forms(spec: str) -> dict[str, str]:
    """The forms of a ``plural:`` format spec by category; ``ValueError`` if malformed or without ``other``."""
    forms: dict[str, str] = {}
    for part in spec.removeprefix(PLURAL).split("|"):
        category, sep, text = part.partition("=")
        if not sep or category.strip() in forms:
            raise ValueError(f"malformed plural forms {spec!r}")
        forms[category.strip()] = text
    if "other" not in forms:
        raise ValueError(f"plural forms without 'other': {spec!r}")
    return forms


class _Count:
    """A number that understands the ``plural:`` format spec in its catalog's language."""

    __slots__ = ("lang", "n")

    def __init__(self, n: int, lang: str) -> None:
        self.n = n
        self.lang = lang

    def __format__(self, spec: str) -> str:
        if spec.startswith(PLURAL):
            forms = plural_forms(spec)
            return forms.get(plural_category(self.lang, self.n), forms["other"]).replace("#", str(self.n))
        return format(self.n, spec)

    def __str__(self) -> str:
        return str(self.n)


class _Text(str):
    """A string that understands the ``cap`` format spec (first letter upper case), ``lower`` (all lower case),
    and ``plural:`` if numeric (in its catalog's language)."""

    lang: str = DEFAULT_LANGUAGE

    def __new__(cls, value: str, lang: str = DEFAULT_LANGUAGE) -> _Text:
        text = super().__new__(cls, value)
        text.lang = lang
        return text

    def __format__(self, spec: str) -> str:
        if spec == "cap":
            return self[:1].upper() + self[1:]
        if spec == "lower":
            return self.lower()
        if spec.startswith(PLURAL):
            # A count passed as text (a figure already formatted).
            digits = self.strip()
            if digits.isascii() and digits.isdigit():
                return format(_Count(int(digits), self.lang), spec)
            return plural_forms(spec)["other"].replace("#", digits)
        return str.__format__(str(self), spec)


class _Terms:
    """Attribute access to terms, so templates can say ``{term.president}``."""

    __slots__ = ("_lang", "_terms")

    def __init__(self, terms: Mapping[str, str], lang: str) -> None:
        self._terms = terms
        self._lang = lang

    def __getattr__(self, key: str) -> _Text:
        try:
            return _Text(self._terms[key], self._lang)
        except KeyError:
            raise KeyError(f"term.{key}") from None


def placeholders(template: str) -> frozenset[str]:
    """The field names a template uses, terms included (``name``, ``term.president``), in plural forms too."""
    found: set[str] = set()
    for _, field_name, spec, _ in string.Formatter().parse(template):
        if field_name is not None:
            found.add(field_name)
        if spec:
            found |= placeholders(spec)
    return frozenset(found)


def plural_specs(template: str) -> list[str]:
    """Every ``plural:`` format spec in a template, as written."""
    return [s for _, f, s, _ in string.Formatter().parse(template) if f is not None and s and s.startswith(PLURAL)]


def literals(template: str) -> str:
    """Every character a template may send of its own (placeholders left out, every plural form kept)."""
    out: list[str] = []
    for literal, _, spec, _ in string.Formatter().parse(template):
        out.append(literal)
        if spec and spec.startswith(PLURAL):
            out.extend(literals(form).replace("#", "") for form in plural_forms(spec).values())
    return "".join(out)


@dataclass(frozen=True, slots=True)
class Catalog:
    """The words of one theme in one language, with key-by-key fallback to classic and to English."""

    theme: str
    lang: str
    files: tuple[CatalogFile, ...]
    """Most specific first: ``<theme>/<lang>``, ``classic/<lang>``, ``classic/en`` (those that exist)."""
    terms: Mapping[str, str]
    """Every term, after fallback."""

    @classmethod
    def load(cls, theme: str = DEFAULT_THEME, lang: str = DEFAULT_LANGUAGE) -> Catalog:
        """The catalog for a theme and language, read once and cached; raises ``UnknownCatalog``."""
        return _load(theme, lang, str(messages_dir()))

    @property
    def gsm7(self) -> bool:
        """GSM-7 writes this language (``gsm7_language``): an SMS in it is transliterated, else sent as UCS-2."""
        return gsm7_language(self.lang)

    @property
    def right_to_left(self) -> bool:
        """The language is written right to left (``right_to_left``)."""
        return right_to_left(self.lang)

    @property
    def list_separator(self) -> str:
        """What stands between the items of a list in this language (``list_separator``)."""
        return list_separator(self.lang)

    def term(self, key: str) -> str:
        """One term, e.g. ``term("president")``; raises ``KeyError`` for an unknown key."""
        return self.terms[key]

    def message_ids(self) -> frozenset[str]:
        """Every message id this catalog can render."""
        return frozenset(k for f in self.files for k in f.messages)

    def has(self, message_id: str) -> bool:
        """True if ``message_id`` exists (in this file or a fallback)."""
        return any(message_id in f.messages for f in self.files)

    def template(self, message_id: str, *, sms: bool = False) -> str:
        """The raw template that ``text`` would fill in; raises ``KeyError`` for an unknown id."""
        for f in self.files:
            # The most specific file that says anything about this id wins; within it an SMS variant is
            # preferred, so a theme that overrides a sentence must override its SMS variant too (tested).
            if sms and message_id in f.sms:
                return f.sms[message_id]
            if message_id in f.messages:
                return f.messages[message_id]
        raise KeyError(message_id)

    def text(self, message_id: str, *, sms: bool = False, **params: object) -> str:
        """The message filled in with ``params`` and terms; ``KeyError`` on an unknown id or missing param."""
        template = self.template(message_id, sms=sms)
        # Strings become _Text so that ":cap" works on params as on terms; str.format_map does the rest.
        values: dict[str, object] = {k: self._value(v) for k, v in params.items()}
        values["term"] = _Terms(self.terms, self.lang)
        return template.format_map(values)

    def said(self, message_id: str, *, sms: bool = False, **params: object) -> str:
        """``text`` with every string param (a name, a code) isolated where it runs the other way than this language
        is written: a Latin name in a Persian sentence keeps its place, and the words and numbers around it theirs."""
        rtl = self.right_to_left
        return self.text(message_id, sms=sms,
                         **{k: isolated(v, rtl) if isinstance(v, str) else v for k, v in params.items()})

    def _value(self, value: object) -> object:
        # Strings understand ":cap" and ":lower", numbers ":plural:..." in this catalog's language.
        if isinstance(value, str):
            return _Text(value, self.lang)
        if isinstance(value, int) and not isinstance(value, bool):
            return _Count(value, self.lang)
        return value


@lru_cache(maxsize=64)
def _load(theme: str, lang: str, root: str) -> Catalog:
    # Keyed by the folder too, so pointing MODERATOR_MESSAGES elsewhere never returns a stale catalog.
    folder = Path(root)
    chain = [(theme, lang), (DEFAULT_THEME, lang), (DEFAULT_THEME, DEFAULT_LANGUAGE)]
    seen: list[Path] = []
    for t, lg in chain:
        path = folder / t / f"{lg}.toml"
        if path.is_file() and path not in seen:
            seen.append(path)
    if not (folder / theme).is_dir():
        raise UnknownCatalog(f"no theme {theme!r} in {folder}")
    if not any(p.stem == lang for p in seen):
        raise UnknownCatalog(f"no language {lang!r} for theme {theme!r} in {folder}")
    files = tuple(read_file(p) for p in seen)
    terms: dict[str, str] = {}
    for f in reversed(files):
        terms.update(f.terms)
    return Catalog(theme, lang, files, MappingProxyType(terms))


def clear_cache() -> None:
    """Forget every loaded catalog (after editing files, or in tests that change ``MODERATOR_MESSAGES``)."""
    _load.cache_clear()
    _gsm7_language.cache_clear()
