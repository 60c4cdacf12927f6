"""Players' names: cleaned, kept distinct, and matched against what people type."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

NAME_LIMIT: Final = 20
"""Display names are cut to this many characters."""


def clean_name(name: str) -> str:
    """A display name: printable, single-spaced, at most ``NAME_LIMIT`` characters."""
    cleaned = " ".join("".join(c for c in name if c.isprintable() or c.isspace()).split())
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


def name_candidates(text: str, names: Sequence[str]) -> list[str]:
    """Names matching typed text: an exact (case-insensitive) match, else every name it starts."""
    wanted = text.strip().lstrip("@").casefold()
    if not wanted:
        return []
    exact = [n for n in names if n.casefold() == wanted]
    if exact:
        return exact
    return [n for n in names if n.casefold().startswith(wanted)]


def match_name(text: str, names: Sequence[str]) -> str | None:
    """The one name typed text means, or None."""
    found = name_candidates(text, names)
    return found[0] if len(found) == 1 else None
