"""Players' names: cleaned, kept distinct, and matched against what people type."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from .catalog import to_gsm7
from .grammar import fold, grammar

NAME_LIMIT: Final = 20
"""Display names are cut to this many characters."""


JOINERS: Final = frozenset("\u200c\u200d")
"""Invisible but part of a name: the zero-width non-joiner of Persian (``علی‌رضا``) and the joiner of an emoji
sequence. Every other invisible character (a direction mark, an isolate) is dropped."""


def clean_name(name: str) -> str:
    """A display name: printable, single-spaced, at most ``NAME_LIMIT`` characters."""
    cleaned = " ".join("".join(c for c in name if c.isprintable() or c.isspace() or c in JOINERS).split())
    return cleaned[:NAME_LIMIT].strip()


def unique_name(name: str, taken: Sequence[str]) -> str:
    """``name``, or ``name 2``, ``name 3``… if it is taken (case-insensitively)."""
    lowered = {t.casefold() for t in taken}
    if name.casefold() not in lowered:
        return name
    n = 2
    while True:
        suffix = f" {n}"
        candidate = name[: NAME_LIMIT - len(suffix)] + suffix
        if candidate.casefold() not in lowered:
            return candidate
        n += 1


def name_taken(name: str, others: Sequence[str]) -> bool:
    """True if ``name`` is one of ``others`` as typed names are compared (case and accents aside: ``jose`` would
    mean José)."""
    return any(fold(name) == fold(other) for other in others)
def _unspaced(text: str) -> str:
    return fold(text).replace(" ", "")


def _latin(text: str) -> str:
    return fold(to_gsm7(text)).replace(" ", "")


TYPED_KEYS: Final = (fold, _unspaced, _latin)
"""How typed text is compared with a name or an option's label, closest first: without case, accents, marks and
letter variants (``fold``); without spaces too (``علیرضا`` is ``علی‌رضا``, whose non-joiner folds to a space); as
GSM-7 writes both (``алексей`` is the ``Aleksey`` an English text showed, and ``aleksey`` is Алексей)."""
_KEYS: Final = (str.casefold, *TYPED_KEYS)


def name_candidates(text: str, names: Sequence[str]) -> list[str]:
    """Names matching typed text: an exact match, else every name it starts; without regard to case, then to
    accents and the rest (``_KEYS``: ``jose`` is José, unless a Jose sits there too)."""
    wanted = text.strip().lstrip("@")
    if not wanted:
        return []
    exact = _whole(wanted, names)
    if exact:
        return exact
    for key in _KEYS:
        starts = [n for n in names if key(wanted) and key(n).startswith(key(wanted))]
        if starts:
            return starts
    rest = _after_particle(wanted)
    # "a Bob" ("acuso a Bob", "nomino a Bob"): a whole name only, never the start of one
    return _whole(rest, names) if rest is not None else []


def _whole(text: str, names: Sequence[str]) -> list[str]:
    """The names ``text`` is whole, by the first of ``_KEYS`` that finds one."""
    for key in _KEYS:
        exact = [n for n in names if key(n) == key(text)]
        if exact:
            return exact
    return []


def _after_particle(text: str) -> str | None:
    """What follows a small word a language puts before a name (the catalogs' ``before-names``), if ``text``
    starts with one and goes on."""
    first, _, rest = text.strip().partition(" ")
    return rest.strip() if rest.strip() and fold(first) in grammar().before_names else None


def _named(text: str) -> str:
    """The name part of typed text: without an ``@`` or a small word before it ("в Боба" from "верю в Боба")."""
    typed = text.strip().lstrip("@")
    return _after_particle(typed) or typed


def spoken_candidates(text: str, names: Sequence[str]) -> list[str]:
    """Names a claim's typed name may mean: a whole name first, then a declined one ("Ewę" is Ewa, even where an
    Ewelina sits), then the start of one (``name_candidates``)."""
    return (_whole(text.strip().lstrip("@"), names) or _whole(_named(text), names)
            or inflected_candidates(text, names) or name_candidates(text, names))


def inflected_candidates(text: str, names: Sequence[str]) -> list[str]:
    """Names typed text may be a declined form of, by the catalogs' ``name-endings`` (Polish, Russian), where
    nothing else matched (``name_candidates``): "Boba" or "Бобу" for Bob, "Ewę" for Ewa, "Анну" for Анна: the name,
    or the name but its last vowel, and one ending. A name of one or two letters is never guessed at."""
    wanted = fold(_named(text))
    endings = grammar().name_endings
    found = []
    for name in names:
        key = fold(name)
        stems = {key, key[:-1]} if key[-1:] in _VOWELS else {key}
        if len(key) >= 3 and any(wanted.startswith(s) and wanted[len(s):] in endings for s in stems):
            found.append(name)
    return found


_VOWELS: Final = frozenset("aeiouy\u0430\u0435\u0438\u043e\u0443\u044b\u044d\u044e\u044f")
"""Folded vowels a declension may replace at a name's end, Latin and Cyrillic (Ewa, Ewę; Анна, Анну)."""


def names_in(parts: Sequence[str], names: Sequence[str]) -> list[str]:
    """Typed parts as names, in order: a part that is a whole name is that name; any other is read word by word, the
    longest run of its words that is a whole name first (``Computer 1``, ``Mary Ann``), else one word (which may
    start a name). A part is what was typed between commas, or the whole list where no comma was typed: a run never
    crosses a comma ("Mary, Ann" is two people even where "Mary Ann" is a third; "Ann, Bob Cy" is three, a comma
    forgotten)."""
    whole = {fold(n) for n in names}
    out: list[str] = []
    for part in parts:
        if fold(part) in whole:
            out.append(part)
            continue
        words = part.split()
        i = 0
        while i < len(words):
            run = next((k for k in range(len(words) - i, 1, -1) if fold(" ".join(words[i:i + k])) in whole), 1)
            out.append(" ".join(words[i:i + run]))
            i += run
    return out


def has_letters(name: str) -> bool:
    """True if a name has a letter, in any script (a text in GSM-7 transliterates it: ``to_gsm7``): an emoji-only
    name reads as nothing where emoji cannot go, and a name of digits would read as an option's number."""
    return any(c.isalpha() for c in name)


def reader_word(name: str) -> bool:
    """True if a name is a word the texts use for whoever reads them (the catalogs' ``[words] not-names``: "you",
    "du"): every reader of "You is the Presidential Candidate" would take it for themselves."""
    return fold(name) in grammar().not_names


def match_name(text: str, names: Sequence[str]) -> str | None:
    """The one name typed text means, or None."""
    found = name_candidates(text, names)
    return found[0] if len(found) == 1 else None
