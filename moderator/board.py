"""The board as a picture: the public facts of a game (``Board``) and a PNG of them in the table's theme.

``Board`` is a plain view that the port carries: the service builds it from the engine's public view and the
table's names and theme (``board_view.board_of``), and a channel draws it without knowing the rules (this module
imports nothing of the engine). It has no field for a role, a card in hand or the deck's order, so no secret can
be drawn; the winner is known only once the game is over. It travels as plain JSON (``to_json``/``from_json``),
e.g. in an outbox row, and is drawn at send time by ``render_png``: the liberal track (5 slots), the fascist
track (6 slots, each with the power it grants at this player count), the election tracker, the draw and discard
piles, veto, and the seats in order marking the President, the Chancellor, the term-limited and the dead.

Every word comes from the catalog (terms and the ``board-*`` messages); the colours from
``messages/colours.toml``, one table per theme; the font is the DejaVu Sans subset in ``messages/fonts``, so the
picture is the same on every machine and names with accents draw right.
"""

from __future__ import annotations

import io
import math
import tomllib
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, fields
from functools import lru_cache
from pathlib import Path
from typing import Any, Final

from PIL import Image, ImageDraw, ImageFont, features

from .catalog import BUNDLED, DEFAULT_THEME, Catalog, direction, messages_dir

WIDTH: Final = 1200
"""Pixels across: sharp on a TV, and the same picture on a phone (a Telegram group's photo, a seat's page)."""
SMALLEST: Final = 38
"""No word is drawn smaller (pixels of the picture). Shown on a 1080p TV at least 760 pixels wide, as the table
screen shows it, that is 24 pixels there; on a phone 360 pixels wide, 11."""
MARGIN: Final = 36
GAP: Final = 14
SEATS_PER_ROW: Final = 2
"""Two seats a row: a name of 20 characters fits whole beside its number."""
PNG_COLOURS: Final = 64

BOARD_MESSAGE: Final = "board"
"""The outbox's message id for a board image; its body is ``{"board": Board.to_json(), "table": id, "game": n}``."""

LIBERAL_SLOTS: Final = 5
"""The printed liberal track's slots (the fifth liberal policy wins)."""
FASCIST_SLOTS: Final = 6
"""The printed fascist track's slots (the sixth fascist policy wins)."""
TRACKER_MARKS: Final = 3
"""The election tracker's marks (the third is chaos)."""
PLAYERS: Final = range(5, 11)
"""The tables a board is printed for."""

Colour = tuple[int, int, int]


# --- the facts -------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Board:
    """What the board shows: public facts only, with no field that could hold a role or a card."""

    players: int
    names: tuple[str, ...]
    theme: str
    step: int
    """The engine's step: two boards of one game with the same step show the same thing."""
    phase: str
    """The game's phase, as game records name it (``nomination``, ``election``, ... ``game_over``)."""
    liberal_policies: int
    fascist_policies: int
    election_tracker: int
    draw_pile: int
    discard_pile: int
    president: int | None
    chancellor: int | None
    alive: tuple[bool, ...]
    term_limited: tuple[int, ...]
    veto_unlocked: bool
    winner: str | None
    """The winning party (``liberal`` or ``fascist``), set only once the game is over."""
    powers: tuple[str | None, ...] = ()
    """The presidential power printed on each fascist slot but the last (its key among the catalog's terms), for
    this many players."""
    candidates: bool = False
    """President and Chancellor are candidates, not yet elected (a nomination or an election)."""

    def to_json(self) -> dict[str, Any]:
        """A plain dict (str, int, bool, None and lists only) that ``from_json`` reads back."""
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            out[f.name] = list(value) if isinstance(value, tuple) else value
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Board:
        """The board ``to_json`` wrote; raises ``ValueError``/``KeyError`` for anything else. A board written
        before it carried ``powers`` and ``candidates`` draws without them."""
        players = int(data["players"])
        board = cls(
            players=players,
            names=tuple(str(n) for n in data["names"]),
            theme=str(data["theme"]),
            step=int(data["step"]),
            phase=str(data["phase"]),
            liberal_policies=int(data["liberal_policies"]),
            fascist_policies=int(data["fascist_policies"]),
            election_tracker=int(data["election_tracker"]),
            draw_pile=int(data["draw_pile"]),
            discard_pile=int(data["discard_pile"]),
            president=None if data["president"] is None else int(data["president"]),
            chancellor=None if data["chancellor"] is None else int(data["chancellor"]),
            alive=tuple(bool(a) for a in data["alive"]),
            term_limited=tuple(int(s) for s in data["term_limited"]),
            veto_unlocked=bool(data["veto_unlocked"]),
            winner=None if data["winner"] is None else str(data["winner"]),
            powers=tuple(None if p is None else str(p) for p in data.get("powers", ())),
            candidates=bool(data.get("candidates", False)),
        )
        if players not in PLAYERS or len(board.names) != players or len(board.alive) != players:
            raise ValueError("a board needs 5 to 10 players, with a name and a life for each")
        seats = [s for s in (board.president, board.chancellor, *board.term_limited) if s is not None]
        if not all(0 <= s < players for s in seats):
            raise ValueError("a board names a seat that does not exist")
        return board

    def drawn(self) -> dict[str, Any]:
        """``to_json`` without the step: two boards with the same ``drawn`` look the same. Nor ``powers`` and
        ``candidates``: they follow from the players and the phase, which it holds (so a board's fingerprint is
        the one it had before the view carried them)."""
        out = self.to_json()
        for derived in ("step", "powers", "candidates"):
            del out[derived]
        return out


# --- the colours -----------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Palette:
    """A theme's colours for the board image (``messages/colours.toml``)."""

    background: Colour
    panel: Colour
    text: Colour
    muted: Colour
    ink: Colour
    liberal_track: Colour
    liberal: Colour
    fascist_track: Colour
    fascist: Colour
    tracker: Colour
    president: Colour
    chancellor: Colour
    limited: Colour
    dead: Colour


COLOURS_FILE: Final = "colours.toml"
_BUNDLED_COLOURS: Final = BUNDLED / COLOURS_FILE


def colour_tables() -> dict[str, dict[str, str]]:
    """Every theme's table of ``colours.toml`` as written (the messages folder's own, else the bundled one)."""
    path = messages_dir() / COLOURS_FILE
    return _read_colours(str(path if path.is_file() else _BUNDLED_COLOURS))


@lru_cache(maxsize=8)
def _read_colours(path: str) -> dict[str, dict[str, str]]:
    with open(path, "rb") as f:
        data = tomllib.load(f)
    if not all(isinstance(t, dict) and all(isinstance(v, str) for v in t.values()) for t in data.values()):
        raise ValueError(f"{path}: every table must map colour names to strings")
    return data


def parse_colour(text: str) -> Colour:
    """``"#rrggbb"`` as an RGB triple; raises ``ValueError`` for anything else."""
    if len(text) != 7 or text[0] != "#":
        raise ValueError(f"not a #rrggbb colour: {text!r}")
    return int(text[1:3], 16), int(text[3:5], 16), int(text[5:7], 16)


def palette(theme: str) -> Palette:
    """A theme's colours, key by key falling back to classic's."""
    tables = colour_tables()
    merged = {**tables.get(DEFAULT_THEME, {}), **tables.get(theme, {})}
    return Palette(**{f.name: parse_colour(merged[f.name]) for f in fields(Palette)})


# --- the layout ------------------------------------------------------------------------------------------

Box = tuple[int, int, int, int]
"""(left, top, right, bottom) in pixels."""

_HEADER_H: Final = 64
_TRACK_TITLE_H: Final = 50
_LIBERAL_SLOT_H: Final = 92
_FASCIST_SLOT_H: Final = 100
"""Two lines of a power's name."""
_PAD: Final = 12
_TRACKER_H: Final = 64
_PILES_H: Final = 120
_LINE_H: Final = 46
"""One line of ``SMALLEST`` text, with its leading."""
_LEGEND_H: Final = 2 * _LINE_H


@dataclass(frozen=True, slots=True)
class Layout:
    """Where everything is drawn for a player count (tests use it to look at one slot or seat)."""

    players: int
    height: int
    width: int
    header: Box
    liberal_track: Box
    fascist_track: Box
    liberal_slots: tuple[Box, ...]
    fascist_slots: tuple[Box, ...]
    status: tuple[Box, Box, Box, Box]
    """The election tracker, veto, the draw pile, the discard pile."""
    seats: tuple[Box, ...]
    legend: Box
    name_lines: int = 1
    """Lines of a seat's name: two when a name is too wide for one at ``SMALLEST``."""


def _row(top: int, count: int, per_row: int, width: int, height: int, *, inner: int, left: int) -> list[Box]:
    """``count`` boxes of ``width`` x ``height``, ``per_row`` a row (a short last row centred), from ``top``."""
    out = []
    for i in range(count):
        row, col = divmod(i, per_row)
        in_row = min(per_row, count - row * per_row)
        x = left + (inner - (in_row * width + (in_row - 1) * GAP)) // 2 + col * (width + GAP)
        y = top + row * (height + GAP)
        out.append((x, y, x + width, y + height))
    return out


@lru_cache(maxsize=32)
def layout(players: int, name_lines: int = 1) -> Layout:
    """The boxes of a board with this many players, whose names take ``name_lines`` lines (``names_fit``)."""
    width, inner = WIDTH, WIDTH - 2 * MARGIN
    y = MARGIN // 2
    header = (MARGIN, y, width - MARGIN, y + _HEADER_H)
    y = header[3] + GAP
    # The liberal track: five slots in a row. The fascist track: six in two rows of three, each wide enough for a
    # power's name in words of ``SMALLEST`` pixels.
    liberal = (MARGIN, y, width - MARGIN, y + 2 * _PAD + _TRACK_TITLE_H + _LIBERAL_SLOT_H)
    slot_top = liberal[1] + _PAD + _TRACK_TITLE_H
    liberal_w = (inner - 2 * _PAD - (LIBERAL_SLOTS - 1) * GAP) // LIBERAL_SLOTS
    liberal_slots = _row(slot_top, LIBERAL_SLOTS, LIBERAL_SLOTS, liberal_w, _LIBERAL_SLOT_H, inner=inner, left=MARGIN)
    y = liberal[3] + GAP
    per_row = FASCIST_SLOTS // 2
    fascist = (MARGIN, y, width - MARGIN, y + 2 * _PAD + _TRACK_TITLE_H + 2 * _FASCIST_SLOT_H + GAP)
    fascist_w = (inner - 2 * _PAD - (per_row - 1) * GAP) // per_row
    fascist_slots = _row(fascist[1] + _PAD + _TRACK_TITLE_H, FASCIST_SLOTS, per_row, fascist_w, _FASCIST_SLOT_H,
                         inner=inner, left=MARGIN)
    y = fascist[3] + GAP
    # The election tracker across the width; veto and the two piles under it.
    tracker = (MARGIN, y, width - MARGIN, y + _TRACKER_H)
    y = tracker[3] + GAP
    pile_w = (inner - 2 * GAP) // 3
    veto, draw, discard = _row(y, 3, 3, pile_w, _PILES_H, inner=inner, left=MARGIN)
    y = veto[3] + GAP
    # The seats, two a row: a name of 20 characters whole on one line (or two), and under it the seat's badge.
    seat_h = 2 * _PAD + (name_lines + 1) * _LINE_H
    seats = _row(y, players, SEATS_PER_ROW, (inner - GAP) // SEATS_PER_ROW, seat_h, inner=inner, left=MARGIN)
    y = seats[-1][3] + GAP
    legend = (MARGIN, y, width - MARGIN, y + _LEGEND_H)
    height = legend[3] + MARGIN // 2
    return Layout(players, height, width, header, liberal, fascist, tuple(liberal_slots), tuple(fascist_slots),
                  (tracker, veto, draw, discard), tuple(seats), legend, name_lines)


def layout_of(names: Sequence[str]) -> Layout:
    """The layout of a board with these players' names."""
    return layout(len(names), 1 if all(names_fit(name) for name in names) else 2)


def names_fit(name: str) -> bool:
    """A seat's name fits one line at ``SMALLEST`` pixels beside its number."""
    box = layout(5).seats[0]
    return _width(name, SMALLEST) <= _name_width(box)


def _name_width(box: Box) -> float:
    return box[2] - box[0] - 2 * _PAD - _NUMBER_W


_NUMBER_W: Final = 64
"""Room for a seat's number (1 to 10) before its name."""


FONT_FOLDER: Final = "fonts"
"""The board's fonts, in ``messages/fonts`` with their licences: DejaVu Sans, cut down to Latin, Greek and Cyrillic
(``LICENSE-DejaVu.txt``), and Vazirmatn for the Arabic script (Persian, Arabic, Urdu; SIL Open Font License,
``LICENSE-Vazirmatn.txt``). Umlauts, accented and Persian names need glyphs that Pillow's built-in font lacks, and
a system font may be missing."""
_BUNDLED_FONTS: Final = _BUNDLED_COLOURS.parent / FONT_FOLDER


FONT_FILES: Final = ("DejaVuSans.ttf", "DejaVuSans-Bold.ttf", "Vazirmatn-Regular.ttf", "Vazirmatn-Bold.ttf")
"""Regular and bold of the house font, then of the Arabic script's."""
def font_problems() -> list[str]:
    """What the board image would draw without, one line each: a font missing (it falls back to Pillow's ASCII-only
    font), or there and not a font Pillow opens (a truncated copy, a Git LFS pointer: every board would fail, unless
    this machine has a font of that name in its own font folders, where Pillow then looks); Raqm's layout missing
    (the board still draws, with Pillow's basic layout: FriBiDi, which Pillow's wheels load from the system, is
    missing)."""
    found: list[str] = []
    for name in FONT_FILES:
        path = _font_file(name)
        if path is None:
            found.append(f"no board font {name} in {messages_dir() / FONT_FOLDER} or {_BUNDLED_FONTS}")
            continue
        stat = path.stat()
        error = _unloadable(str(path), stat.st_mtime_ns, stat.st_size)
        if error is not None:
            found.append(f"board font {path} does not load: {error}")
    if not raqm():
        found.append("no Raqm text layout in Pillow (is libfribidi0 installed?): the board draws Persian and Arabic "
                     "names with their letters unjoined and in the wrong order")
    return found


def raqm() -> bool:
    """True if Pillow shapes and orders text with Raqm (HarfBuzz and FriBiDi): Persian letters joined, right to
    left."""
    return bool(features.check("raqm"))


def _font_file(name: str) -> Path | None:
    """The font file ``_font`` draws with: the first of ``messages_dir()/fonts`` and the bundled fonts that has it."""
    for folder in (messages_dir() / FONT_FOLDER, _BUNDLED_FONTS):
        if (folder / name).is_file():
            return folder / name
    return None


@lru_cache(maxsize=8)
def _unloadable(path: str, mtime_ns: int, size: int) -> str | None:
    """Why Pillow cannot open this font file, None if it can (asked again only when the file changes: a flood of
    health checks opens it once)."""
    try:
        ImageFont.truetype(path, 12)
    except (OSError, ValueError) as exc:
        return str(exc)
    return None


Font = ImageFont.FreeTypeFont | ImageFont.ImageFont


def _font(size: int, bold: bool = False, arabic: bool = False) -> Font:
    return _loaded(size, bold, arabic, raqm())


@lru_cache(maxsize=128)
def _loaded(size: int, bold: bool, arabic: bool, shaped: bool) -> Font:
    layout = ImageFont.Layout.RAQM if shaped else ImageFont.Layout.BASIC
    for name in (FONT_FILES[2 + bold], FONT_FILES[bold]) if arabic else (FONT_FILES[bold],):
        path = _font_file(name)
        if path is not None:
            return ImageFont.truetype(str(path), size, layout_engine=layout)
    return ImageFont.load_default(size=size)  # Pillow's own scalable font: ASCII only, but never missing


# --- text: a font for each script, in the order it is read ----------------------------------------------


def arabic_script(c: str) -> bool:
    """True for a letter, digit or sign of the Arabic script (Persian's ``ی`` and ``۳`` too)."""
    return "ARABIC" in unicodedata.name(c, "")


_TOFU: Final = "\U0010fffd"
"""A code point no font has: what a missing glyph looks like in a font (its .notdef box)."""


@lru_cache(maxsize=512)
def _arabic_font_has(c: str) -> bool:
    """The Arabic script's font draws ``c`` (Vazirmatn has Latin digits and punctuation, not an arrow)."""
    font = _font(24, arabic=True)
    drawn = font.getmask(c)
    tofu = font.getmask(_TOFU)
    return (drawn.size, bytes(drawn)) != (tofu.size, bytes(tofu))


@dataclass(frozen=True, slots=True)
class _Run:
    """Characters drawn in one font and one direction."""

    text: str
    arabic: bool
    rtl: bool
    level: int
    """Its bidirectional embedding level: even runs left to right, odd right to left."""


@lru_cache(maxsize=4096)
def _runs(text: str) -> tuple[_Run, ...]:
    """``text`` cut where its font changes (the Arabic script's for its letters, the house font's for every other),
    in visual order, left to right. A space, digit or mark takes the font of the letter before it (else after it)
    where that font has it. Each run's direction is its first letter's; the spaces and marks at the edges of a run
    that goes against the text's own direction (its first letter's) go with the text (Unicode's bidirectional
    algorithm, at the level of runs: Raqm orders the letters within each)."""
    strong = [arabic_script(c) if arabic_script(c) or unicodedata.bidirectional(c) in ("L", "R", "AL") else None
              for c in text]
    fonts: list[bool] = []
    for i, c in enumerate(text):
        near = strong[i]
        if near is None:
            before = next((f for f in reversed(strong[:i]) if f is not None), None)
            near = before if before is not None else next((f for f in strong[i:] if f is not None), False)
            near = near and _arabic_font_has(c)
        fonts.append(near)
    rtl = direction(text) == "rtl"
    runs: list[_Run] = []
    start = 0
    for i in range(1, len(text) + 1):
        if i == len(text) or fonts[i] != fonts[start]:
            runs.extend(_split(text[start:i], fonts[start], rtl))
            start = i
    return tuple(_visual(runs))


def _split(text: str, arabic: bool, rtl: bool) -> list[_Run]:
    """One font's run, its edges apart where it goes against the text's direction ``rtl``."""
    own = direction(text)
    if own is None or (own == "rtl") == rtl:
        return [_Run(text, arabic, rtl, int(rtl))]
    body = text.strip(_NEUTRAL)
    head, tail = text[:len(text) - len(text.lstrip(_NEUTRAL))], text[len(text.rstrip(_NEUTRAL)):]
    edge = [_Run(part, arabic, rtl, int(rtl)) for part in (head,) if part]
    return [*edge, _Run(body, arabic, not rtl, int(rtl) + 1),
            *(_Run(part, arabic, rtl, int(rtl)) for part in (tail,) if part)]


_NEUTRAL: Final = " ,.;:!?()[]\"'-\u060c\u061b\u061f\u00ab\u00bb\u200c"
"""Spaces and punctuation that take the direction of the text around them (Persian's comma, semicolon and question
mark, guillemets and the zero-width non-joiner among them)."""


def _visual(runs: list[_Run]) -> list[_Run]:
    """Runs in logical order as they appear from left to right: from the highest level down to the lowest odd one,
    each stretch at that level or above reversed (the rule L2 of Unicode's bidirectional algorithm)."""
    order = list(runs)
    odd = [r.level for r in runs if r.level % 2]
    if not odd:
        return order
    for level in range(max(r.level for r in runs), min(odd) - 1, -1):
        i = 0
        while i < len(order):
            if order[i].level < level:
                i += 1
                continue
            j = i
            while j < len(order) and order[j].level >= level:
                j += 1
            order[i:j] = order[i:j][::-1]
            i = j
    return order


def _direction(run: _Run) -> str | None:
    """Raqm's direction for a run (the basic layout takes none)."""
    return ("rtl" if run.rtl else "ltr") if raqm() else None


def _width(text: str, size: int, bold: bool = False) -> float:
    return sum(_font(size, bold, run.arabic).getlength(run.text, direction=_direction(run)) for run in _runs(text))


def draw_text(draw: ImageDraw.ImageDraw, xy: tuple[float, float], text: str, size: int, fill: Colour,
              anchor: str = "la", *, bold: bool = False) -> None:
    """``text`` as ``ImageDraw.text`` draws it at ``xy`` and ``anchor``, each script in its font, shaped and in
    reading order (Raqm's layout; Pillow's basic one without it)."""
    runs = _runs(text)
    if not any(run.arabic for run in runs):
        draw.text(xy, text, font=_font(size, bold), fill=fill, anchor=anchor,
                  direction=_direction(runs[0]) if len(runs) == 1 else None)
        return
    # Runs side by side on one baseline, the house font's: a line of Persian, or of Persian and Latin, sits where a
    # line of Latin letters would.
    widths = [_font(size, bold, run.arabic).getlength(run.text, direction=_direction(run)) for run in runs]
    x = xy[0] - {"l": 0.0, "m": sum(widths) / 2, "r": sum(widths)}[anchor[0]]
    house = _font(size, bold)
    ascent, descent = house.getmetrics() if isinstance(house, ImageFont.FreeTypeFont) else (size, 0)
    y = xy[1] + {"a": ascent, "m": (ascent - descent) / 2, "s": 0, "d": -descent}[anchor[1]]
    for run, width in zip(runs, widths, strict=True):
        draw.text((x, y), run.text, font=_font(size, bold, run.arabic), fill=fill, anchor="ls",
                  direction=_direction(run))
        x += width


def fit(text: str, width: float, size: int, smallest: int = SMALLEST, bold: bool = False) -> tuple[str, int]:
    """``text`` at the largest size from ``size`` down to ``smallest`` that fits ``width`` on one line; else at
    ``smallest``, whole (never cut: the caller's box has room, or ``wrap`` is for it)."""
    for s in range(size, smallest - 1, -2):
        if _width(text, s, bold) <= width:
            return text, s
    return text, smallest


def wrap(text: str, width: float, size: int, smallest: int = SMALLEST, *, bold: bool = False) -> tuple[list[str], int]:
    """``text`` in as few lines of ``width`` as it takes, as large as fits (from ``size`` down to ``smallest``):
    broken at spaces and after hyphens, and a word wider than a line at its letters. Never cut."""
    for lines_wanted in range(1, 4):
        for s in range(size, smallest - 1, -2):
            lines = _wrapped(text, width, s, bold)
            if len(lines) <= lines_wanted:
                return lines, s
    return _wrapped(text, width, smallest, bold), smallest


def _wrapped(text: str, width: float, size: int, bold: bool) -> list[str]:
    words = text.replace("-", "- ").split()
    lines: list[str] = []
    for word in words:
        joined = (lines[-1] + ("" if lines[-1].endswith("-") else " ") + word) if lines else word
        if lines and _width(joined, size, bold) <= width:
            lines[-1] = joined
            continue
        while _width(word, size, bold) > width and len(word) > 1:  # a word wider than a line: at its letters
            cut = max(n for n in range(1, len(word)) if _width(word[:n], size, bold) <= width or n == 1)
            lines.append(word[:cut])
            word = word[cut:]
        lines.append(word)
    return lines


class _Painter:
    """One image being drawn: the catalog's words and the theme's colours; ``words``: every text drawn, with its
    size in pixels."""

    def __init__(self, board: Board, catalog: Catalog) -> None:
        self.board = board
        self.catalog = catalog
        self.colours = palette(board.theme)
        self.layout = layout_of(board.names)
        self.image = Image.new("RGB", (self.layout.width, self.layout.height), self.colours.background)
        self.draw = ImageDraw.Draw(self.image)
        self.words: list[tuple[str, int]] = []

    def term(self, key: str) -> str:
        return self.catalog.term(key)

    def cap(self, key: str) -> str:
        word = self.catalog.term(key)
        return word[:1].upper() + word[1:]

    def text(self, xy: tuple[float, float], text: str, size: int, fill: Colour, anchor: str = "la", *,
             bold: bool = False) -> None:
        draw_text(self.draw, xy, text, size, fill, anchor, bold=bold)
        self.words.append((text, size))

    def label(self, box: Box, text: str, size: int, fill: Colour, *, y: float | None = None, anchor: str = "mm",
              bold: bool = False) -> float:
        """One line centred in ``box`` (or at height ``y``), shrunk to fit its width down to ``SMALLEST``, then
        bold no more; returns its width."""
        room = box[2] - box[0] - 16
        if bold and _width(text, SMALLEST, True) > room:
            bold = False
        shown, s = fit(text, room, size, bold=bold)
        middle = (box[1] + box[3]) / 2 if y is None else y
        self.text(((box[0] + box[2]) / 2, middle), shown, s, fill, anchor, bold=bold)
        return _width(shown, s, bold)

    def lines(self, box: Box, text: str, size: int, fill: Colour, *, bold: bool = False) -> None:
        """``text`` wrapped into ``box``, centred."""
        lines, s = wrap(text, box[2] - box[0] - 8, size, bold=bold)
        step = s + 8
        first = (box[1] + box[3]) / 2 - (len(lines) - 1) * step / 2
        for i, line in enumerate(lines):
            self.text(((box[0] + box[2]) / 2, first + i * step), line, s, fill, "mm", bold=bold)

    def star(self, centre: tuple[float, float], radius: float, fill: Colour) -> None:
        points = []
        for i in range(10):
            r = radius if i % 2 == 0 else radius * 0.45
            angle = -math.pi / 2 + i * math.pi / 5
            points.append((centre[0] + r * math.cos(angle), centre[1] + r * math.sin(angle)))
        self.draw.polygon(points, fill=fill)

    def card(self, box: Box) -> None:
        """A policy card face down in a filled slot: its shape says the slot is filled, not only its colour."""
        cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
        w, h = 44, 62
        self.draw.rounded_rectangle((cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2), 8, outline=(255, 255, 255),
                                    width=5)

    # --- the parts ---------------------------------------------------------------------------------------

    def paint(self) -> Image.Image:
        self.header()
        self.liberal_track()
        self.fascist_track()
        self.status()
        self.seats()
        self.legend()
        return self.image

    def header(self) -> None:
        b, c, box = self.board, self.colours, self.layout.header
        if b.winner is None:
            title, size = fit(self.term("game"), box[2] - box[0], 48, bold=True)
            self.text((box[0], (box[1] + box[3]) / 2), title, size, c.text, "lm", bold=True)
            return
        # Who won, across the board's width in the winners' colour.
        colour = c.liberal if b.winner == "liberal" else c.fascist
        self.draw.rounded_rectangle(box, 14, fill=colour)
        words = self.catalog.text("board-game-over", winner=self.term("liberals" if b.winner == "liberal"
                                                                         else "fascists"))
        self.label(box, words, 42, (255, 255, 255), bold=True)

    def _track(self, box: Box, title: str, fill: Colour) -> None:
        self.draw.rounded_rectangle(box, 18, fill=fill)
        self.label((box[0] + _PAD, box[1] + _PAD, box[2] - _PAD, box[1] + _PAD + _TRACK_TITLE_H), title, 40,
                   self.colours.ink, bold=True)

    def _slot(self, box: Box, filled: bool, colour: Colour, power: str | None, last: bool) -> None:
        ink: Colour = (255, 255, 255) if filled else self.colours.ink
        if filled:
            self.draw.rounded_rectangle(box, 12, fill=colour)
        else:
            self.draw.rounded_rectangle(box, 12, outline=colour, width=4)
        if power:
            self.lines(box, power, SMALLEST, ink)
        elif filled:
            self.card(box)
        elif last:
            self.star(((box[0] + box[2]) / 2, (box[1] + box[3]) / 2), 34, colour)

    def liberal_track(self) -> None:
        b, c = self.board, self.colours
        self._track(self.layout.liberal_track, self.cap("liberal_policies"), c.liberal_track)
        slots = self.layout.liberal_slots
        for i, box in enumerate(slots):
            self._slot(box, i < b.liberal_policies, c.liberal, None, i == len(slots) - 1)

    def fascist_track(self) -> None:
        b, c = self.board, self.colours
        self._track(self.layout.fascist_track, self.cap("fascist_policies"), c.fascist_track)
        slots = self.layout.fascist_slots
        for i, box in enumerate(slots):
            power = b.powers[i] if i < len(b.powers) else None
            self._slot(box, i < b.fascist_policies, c.fascist, None if power is None else self.term(power),
                       i == len(slots) - 1)

    def status(self) -> None:
        b, c = self.board, self.colours
        tracker, veto, draw, discard = self.layout.status
        for box in self.layout.status:
            self.draw.rounded_rectangle(box, 14, fill=c.panel)
        # The election tracker: its name, three marks, and chaos after the third.
        middle = (tracker[1] + tracker[3]) / 2
        name = self.cap("election_tracker")
        self.text((tracker[0] + 20, middle), name, SMALLEST, c.muted, "lm")
        x, r = tracker[0] + 20 + _width(name, SMALLEST) + 48, 18
        for i in range(TRACKER_MARKS):
            centre = x + i * (2 * r + 24)
            if i < b.election_tracker:
                self.draw.ellipse((centre - r, middle - r, centre + r, middle + r), fill=c.tracker)
            else:
                self.draw.ellipse((centre - r, middle - r, centre + r, middle + r), outline=c.tracker, width=4)
        # The arrow apart from the word: it points at chaos, after the marks, whichever way the word is written.
        arrow = x + (TRACKER_MARKS - 1) * (2 * r + 24) + r + 24
        self.text((arrow, middle), "\u2192", SMALLEST, c.muted, "lm")
        self.text((arrow + _width("\u2192 ", SMALLEST), middle), self.cap("chaos"), SMALLEST, c.muted, "lm")
        # Veto: lit once unlocked.
        word = self.cap("veto")
        bold = _width(word, SMALLEST, True) <= veto[2] - veto[0] - 52
        w = _width(word, SMALLEST, bold)
        pill = ((veto[0] + veto[2] - w) / 2 - 18, veto[1] + 24, (veto[0] + veto[2] + w) / 2 + 18, veto[3] - 24)
        if b.veto_unlocked:
            self.draw.rounded_rectangle(pill, 16, fill=c.fascist)
            self.text(((veto[0] + veto[2]) / 2, (veto[1] + veto[3]) / 2), word, SMALLEST, (255, 255, 255), "mm",
                      bold=bold)
        else:
            self.draw.rounded_rectangle(pill, 16, outline=c.muted, width=2)
            self.text(((veto[0] + veto[2]) / 2, (veto[1] + veto[3]) / 2), word, SMALLEST, c.muted, "mm", bold=bold)
        # The piles: a word and a number.
        for box, key, count in ((draw, "draw_pile", b.draw_pile), (discard, "discard_pile", b.discard_pile)):
            self.label(box, self.cap(key), SMALLEST, c.muted, y=box[1] + _PAD + _LINE_H / 2)
            self.text(((box[0] + box[2]) / 2, box[3] - _PAD - 24), str(count), 48, c.text, "mm", bold=True)

    def seats(self) -> None:
        b, c = self.board, self.colours
        two = self.layout.name_lines == 2
        # Every name bold, or none (a board of mixed weights reads as if some names mattered more).
        bold = all(_width(name, SMALLEST, True) <= _name_width(self.layout.seats[0]) for name in b.names)
        for seat, box in enumerate(self.layout.seats):
            alive = b.alive[seat]
            president, chancellor = seat == b.president, seat == b.chancellor
            fill = c.panel if alive else c.dead
            self.draw.rounded_rectangle(box, 14, fill=fill)
            if president or chancellor:
                edge = c.president if president else c.chancellor
                self.draw.rounded_rectangle(box, 14, outline=edge, width=6)
            if seat in b.term_limited and b.winner is None:
                # A hatched band along the left edge; the legend names the term-limited.
                band = (box[0] + 8, box[1] + 12, box[0] + 20, box[3] - 12)
                self.draw.rectangle(band, fill=c.limited)
                for y in range(band[1], band[3], 12):
                    self.draw.line((band[0], y + 8, band[2], y), fill=fill, width=3)
            # The seat's number, and its name whole (bold where it fits; on two lines where it must).
            top = box[1] + _PAD + _LINE_H / 2
            left, room = box[0] + _PAD + _NUMBER_W, _name_width(box)
            self.text((left - 14, top), str(seat + 1), SMALLEST, c.muted, "rm")
            name = b.names[seat]
            lines = [name] if _width(name, SMALLEST) <= room else wrap(name, room, SMALLEST)[0][:2]
            ink = c.text if alive else c.muted
            for i, line in enumerate(lines):
                self.text((left, top + i * _LINE_H), line, SMALLEST, ink, "lm", bold=bold)
                if not alive:
                    w = _width(line, SMALLEST, bold)
                    self.draw.line((left, top + i * _LINE_H + 2, left + w, top + i * _LINE_H + 2), fill=c.muted,
                                   width=3)
            badge = None
            if not alive:
                badge = (self.cap("executed"), c.muted, c.dead)
            elif president:
                badge = (self.cap("presidential_candidate" if b.candidates else "president"), c.president, c.ink)
            elif chancellor:
                badge = (self.cap("chancellor_candidate" if b.candidates else "chancellor"), c.chancellor, c.ink)
            if badge is not None:
                words, colour, badge_ink = badge
                # Under the number and the name, beside the term-limited band: the longest office fits whole.
                middle, start = top + (2 if two else 1) * _LINE_H, box[0] + _PAD + 24
                w = _width(words, SMALLEST)
                self.draw.rounded_rectangle((start - 10, middle - 22, start + w + 10, middle + 22), 12, fill=colour)
                self.text((start, middle), words, SMALLEST, badge_ink, "lm")

    def legend(self) -> None:
        b, c, box = self.board, self.colours, self.layout.legend
        if not b.term_limited or b.winner is not None:
            return
        names = self.catalog.list_separator.join(b.names[s] for s in b.term_limited)
        words = self.catalog.text("board-term-limited", names=names)
        swatch = (box[0], box[1] + 10, box[0] + 36, box[1] + _LINE_H - 4)
        self.draw.rectangle(swatch, fill=c.limited)
        lines, size = wrap(words, box[2] - box[0] - 52, SMALLEST)
        for i, line in enumerate(lines[:2]):
            self.text((box[0] + 50, box[1] + _LINE_H / 2 + i * _LINE_H), line, size, c.text, "lm")


def render_png(board: Board, catalog: Catalog) -> bytes:
    """The board as a PNG, ``WIDTH`` pixels wide, in the catalog's words and the board's theme's colours."""
    image = _Painter(board, catalog).paint()
    # A few flat colours and their anti-aliased edges: 64 palette entries look the same, and encode in half the
    # time to under half the bytes of RGB (about 25 KB for Telegram to fetch).
    paletted = image.quantize(PNG_COLOURS, method=Image.Quantize.FASTOCTREE)
    buffer = io.BytesIO()
    paletted.save(buffer, format="PNG", compress_level=6)
    return buffer.getvalue()


def words_drawn(board: Board, catalog: Catalog) -> tuple[tuple[str, int], ...]:
    """Every text the board's picture shows, with its size in pixels of the picture (what a test and the table
    screen's benchmark measure)."""
    painter = _Painter(board, catalog)
    painter.paint()
    return tuple(painter.words)


def catalog_for(board: Board, lang: str) -> Catalog:
    """The catalog to draw a board in: its theme in ``lang``, else the theme in English, else classic."""
    for theme, language in ((board.theme, lang), (board.theme, "en"), (DEFAULT_THEME, "en")):
        try:
            return Catalog.load(theme, language)
        except ValueError:
            continue
    return Catalog.load()

