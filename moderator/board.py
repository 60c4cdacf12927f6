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
from dataclasses import dataclass, fields
from functools import lru_cache
from pathlib import Path
from typing import Any, Final

from PIL import Image, ImageDraw, ImageFont

from .catalog import BUNDLED, DEFAULT_THEME, Catalog, messages_dir

WIDTH: Final = 1200
"""Pixels across: sharp on a TV, still readable when a phone shrinks it to its width."""
MARGIN: Final = 36
GAP: Final = 14
SEATS_PER_ROW: Final = 5
NARROW_WIDTH: Final = 640
"""The phone's board: the same type on about half the width (three seats a row, the status row in two), so a
phone that shrinks it to its width shows its words at twice the size of the wide board's."""
NARROW_SEATS_PER_ROW: Final = 3
ELLIPSIS: Final = "\u2026"
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
_TRACK_TITLE_H: Final = 42
_SLOT_H: Final = 132
_PAD: Final = 16
_STATUS_H: Final = 132
_SEAT_H: Final = 132
_LEGEND_H: Final = 40


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


@lru_cache(maxsize=32)
def layout(players: int, narrow: bool = False) -> Layout:
    """The boxes of a board with this many players (``narrow``: the phone's, ``NARROW_WIDTH`` across)."""
    width, seats_per_row = (NARROW_WIDTH, NARROW_SEATS_PER_ROW) if narrow else (WIDTH, SEATS_PER_ROW)
    inner = width - 2 * MARGIN
    # The phone's tracks take two rows of three slots: a power's name then keeps the size it has on the TV.
    per_track_row = 3 if narrow else FASCIST_SLOTS
    track_rows = math.ceil(FASCIST_SLOTS / per_track_row)
    slot_w = (inner - 2 * _PAD - (per_track_row - 1) * GAP) // per_track_row
    y = MARGIN // 2
    header = (MARGIN, y, width - MARGIN, y + _HEADER_H)
    y = header[3] + GAP
    track_h = _PAD + _TRACK_TITLE_H + track_rows * _SLOT_H + (track_rows - 1) * GAP + _PAD

    def slots(top: int, count: int) -> tuple[Box, ...]:
        out = []
        for i in range(count):
            row, col = divmod(i, per_track_row)
            in_row = min(per_track_row, count - row * per_track_row)
            row_w = in_row * slot_w + (in_row - 1) * GAP
            left = MARGIN + (inner - row_w) // 2  # centred: the liberal track has one slot fewer
            sy = top + _PAD + _TRACK_TITLE_H + row * (_SLOT_H + GAP)
            out.append((left + col * (slot_w + GAP), sy, left + col * (slot_w + GAP) + slot_w, sy + _SLOT_H))
        return tuple(out)

    liberal = (MARGIN, y, width - MARGIN, y + track_h)
    y = liberal[3] + GAP
    fascist = (MARGIN, y, width - MARGIN, y + track_h)
    y = fascist[3] + GAP
    per_status_row = 2 if narrow else 4
    status_w = (inner - (per_status_row - 1) * GAP) // per_status_row
    status = tuple((MARGIN + (i % per_status_row) * (status_w + GAP), y + (i // per_status_row) * (_STATUS_H + GAP),
                    MARGIN + (i % per_status_row) * (status_w + GAP) + status_w,
                    y + (i // per_status_row) * (_STATUS_H + GAP) + _STATUS_H)
                   for i in range(4))
    y += (4 // per_status_row) * (_STATUS_H + GAP)
    per_row = min(players, seats_per_row)
    seat_w = (inner - (seats_per_row - 1) * GAP) // seats_per_row
    seats: list[Box] = []
    rows = math.ceil(players / per_row)
    for seat in range(players):
        row, col = divmod(seat, per_row)
        in_row = min(per_row, players - row * per_row)
        left = MARGIN + (inner - (in_row * seat_w + (in_row - 1) * GAP)) // 2
        top = y + row * (_SEAT_H + GAP)
        seats.append((left + col * (seat_w + GAP), top, left + col * (seat_w + GAP) + seat_w, top + _SEAT_H))
    y += rows * (_SEAT_H + GAP)
    legend = (MARGIN, y, width - MARGIN, y + _LEGEND_H)
    height = legend[3] + MARGIN // 2
    return Layout(players, height, width, header, liberal, fascist, slots(liberal[1], LIBERAL_SLOTS),
                  slots(fascist[1], FASCIST_SLOTS), status, tuple(seats), legend)  # type: ignore[arg-type]


# --- drawing ---------------------------------------------------------------------------------------------


FONT_FOLDER: Final = "fonts"
"""DejaVu Sans, cut down to Latin, Greek and Cyrillic, in ``messages/fonts`` (``LICENSE-DejaVu.txt``): umlauts and
accented names need glyphs that Pillow's built-in font lacks, and a system font may be missing."""
_BUNDLED_FONTS: Final = _BUNDLED_COLOURS.parent / FONT_FOLDER


FONT_FILES: Final = ("DejaVuSans.ttf", "DejaVuSans-Bold.ttf")


def font_problems() -> list[str]:
    """Fonts the board image would draw without, one line each: missing (it falls back to Pillow's ASCII-only
    font), or there and not a font Pillow opens (a truncated copy, a Git LFS pointer: every board would fail, unless
    this machine has a font of that name in its own font folders, where Pillow then looks)."""
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
    return found


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


@lru_cache(maxsize=64)
def _font(size: int, bold: bool = False) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    path = _font_file(FONT_FILES[1] if bold else FONT_FILES[0])
    if path is not None:
        return ImageFont.truetype(str(path), size)
    return ImageFont.load_default(size=size)  # Pillow's own scalable font: ASCII only, but never missing


def _width(text: str, size: int, bold: bool = False) -> float:
    return _font(size, bold).getlength(text)


def fit(text: str, width: float, size: int, smallest: int, bold: bool = False) -> tuple[str, int]:
    """``text`` at the largest size from ``size`` down to ``smallest`` that fits ``width``, else cut with "…"."""
    for s in range(size, smallest - 1, -2):
        if _width(text, s, bold) <= width:
            return text, s
    cut = text
    while cut and _width(cut + ELLIPSIS, smallest, bold) > width:
        cut = cut[:-1]
    return cut.rstrip() + ELLIPSIS, smallest


def fit_lines(text: str, width: float, size: int, smallest: int, lines: int) -> tuple[list[str], int]:
    """``text`` wrapped at spaces into at most ``lines`` lines of ``width``, as large as fits (cut if it must)."""
    words = text.split()
    for s in range(size, smallest - 1, -2):
        wrapped: list[str] = []
        for word in words:
            if wrapped and _width(wrapped[-1] + " " + word, s) <= width:
                wrapped[-1] += " " + word
            else:
                wrapped.append(word)
        if len(wrapped) <= lines and all(_width(line, s) <= width for line in wrapped):
            return wrapped, s
    head = " ".join(words)
    return [fit(head, width, smallest, smallest)[0]], smallest


class _Painter:
    """One image being drawn: the catalog's words and the theme's colours."""

    def __init__(self, board: Board, catalog: Catalog, narrow: bool = False) -> None:
        self.board = board
        self.catalog = catalog
        self.colours = palette(board.theme)
        self.layout = layout(board.players, narrow)
        self.image = Image.new("RGB", (self.layout.width, self.layout.height), self.colours.background)
        self.draw = ImageDraw.Draw(self.image)

    def term(self, key: str) -> str:
        return self.catalog.term(key)

    def cap(self, key: str) -> str:
        word = self.catalog.term(key)
        return word[:1].upper() + word[1:]

    def text(self, xy: tuple[float, float], text: str, size: int, fill: Colour, anchor: str = "la", *,
             bold: bool = False) -> None:
        self.draw.text(xy, text, font=_font(size, bold), fill=fill, anchor=anchor)

    def label(self, box: Box, text: str, size: int, smallest: int, fill: Colour, *, y: float | None = None,
              anchor: str = "mm", bold: bool = False) -> None:
        """One line centred in ``box`` (or at height ``y``), shrunk or cut to fit its width."""
        shown, s = fit(text, box[2] - box[0] - 16, size, smallest, bold)
        middle = (box[1] + box[3]) / 2 if y is None else y
        self.text(((box[0] + box[2]) / 2, middle), shown, s, fill, anchor, bold=bold)

    def star(self, centre: tuple[float, float], radius: float, fill: Colour) -> None:
        points = []
        for i in range(10):
            r = radius if i % 2 == 0 else radius * 0.45
            angle = -math.pi / 2 + i * math.pi / 5
            points.append((centre[0] + r * math.cos(angle), centre[1] + r * math.sin(angle)))
        self.draw.polygon(points, fill=fill)

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
        middle = (box[1] + box[3]) / 2
        title, size = fit(self.term("game"), (box[2] - box[0]) * 0.45, 44, 26, bold=True)
        self.text((box[0], middle), title, size, c.text, "lm", bold=True)
        if b.winner is not None:
            words = self.catalog.text("board-game-over", winner=self.term(
                "liberals" if b.winner == "liberal" else "fascists"))
            shown, size = fit(words, (box[2] - box[0]) * 0.53, 30, 18, bold=True)
            colour = c.liberal if b.winner == "liberal" else c.fascist
            w = _width(shown, size, bold=True)
            self.draw.rounded_rectangle((box[2] - w - 32, box[1] + 6, box[2], box[3] - 6), 12, fill=colour)
            self.text((box[2] - 16, middle), shown, size, (255, 255, 255), "rm", bold=True)

    def _track(self, box: Box, title: str, fill: Colour) -> None:
        self.draw.rounded_rectangle(box, 18, fill=fill)
        self.label((box[0] + _PAD, box[1] + _PAD, box[2] - _PAD, box[1] + _PAD + _TRACK_TITLE_H), title, 28, 18,
                   self.colours.ink, bold=True)

    def _slot(self, box: Box, filled: bool, colour: Colour, card: str, power: str | None, last: bool) -> None:
        c = self.colours
        if filled:
            self.draw.rounded_rectangle(box, 12, fill=colour)
            top = box[1] + (30 if power else _SLOT_H / 2)
            self.label(box, card, 24, 14, (255, 255, 255), y=top, bold=True)
            ink: Colour = (255, 255, 255)
        else:
            self.draw.rounded_rectangle(box, 12, outline=colour, width=4)
            ink = c.ink
        if power:
            lines, size = fit_lines(power, box[2] - box[0] - 16, 20, 13, 3)
            step = size + 4
            first = (box[1] + box[3]) / 2 - (len(lines) - 1) * step / 2 + (16 if filled else 0)
            for i, line in enumerate(lines):
                self.text(((box[0] + box[2]) / 2, first + i * step), line, size, ink, "mm")
        if last and not filled:
            self.star(((box[0] + box[2]) / 2, (box[1] + box[3]) / 2), 34, colour)

    def liberal_track(self) -> None:
        b, c = self.board, self.colours
        self._track(self.layout.liberal_track, self.cap("liberal_policies"), c.liberal_track)
        slots = self.layout.liberal_slots
        for i, box in enumerate(slots):
            self._slot(box, i < b.liberal_policies, c.liberal, self.term("liberal_card"), None, i == len(slots) - 1)

    def fascist_track(self) -> None:
        b, c = self.board, self.colours
        self._track(self.layout.fascist_track, self.cap("fascist_policies"), c.fascist_track)
        slots = self.layout.fascist_slots
        for i, box in enumerate(slots):
            power = b.powers[i] if i < len(b.powers) else None
            self._slot(box, i < b.fascist_policies, c.fascist, self.term("fascist_card"),
                       None if power is None else self.term(power), i == len(slots) - 1)

    def status(self) -> None:
        b, c = self.board, self.colours
        tracker, veto, draw, discard = self.layout.status
        for box in self.layout.status:
            self.draw.rounded_rectangle(box, 14, fill=c.panel)
        # The election tracker: three marks, the last one is chaos.
        self.label(tracker, self.term("election_tracker"), 22, 14, c.muted, y=tracker[1] + 24)
        spacing = (tracker[2] - tracker[0]) / (TRACKER_MARKS + 1)
        for i in range(TRACKER_MARKS):
            x, y, r = tracker[0] + spacing * (i + 1), tracker[1] + 72, 20
            if i < b.election_tracker:
                self.draw.ellipse((x - r, y - r, x + r, y + r), fill=c.tracker)
            else:
                self.draw.ellipse((x - r, y - r, x + r, y + r), outline=c.tracker, width=4)
        last = tracker[0] + spacing * TRACKER_MARKS
        self.label((int(last - spacing), tracker[1], int(last + spacing), tracker[3]), self.cap("chaos"), 18, 12,
                   c.muted, y=tracker[3] - 18)
        # Veto: lit once unlocked.
        word = self.cap("veto")
        shown, size = fit(word, veto[2] - veto[0] - 48, 30, 14, bold=True)
        w = _width(shown, size, bold=True)
        pill = ((veto[0] + veto[2] - w) / 2 - 18, veto[1] + 40, (veto[0] + veto[2] + w) / 2 + 18, veto[3] - 40)
        if b.veto_unlocked:
            self.draw.rounded_rectangle(pill, 16, fill=c.fascist)
            self.text(((veto[0] + veto[2]) / 2, (veto[1] + veto[3]) / 2), shown, size, (255, 255, 255), "mm",
                      bold=True)
        else:
            self.draw.rounded_rectangle(pill, 16, outline=c.muted, width=2)
            self.text(((veto[0] + veto[2]) / 2, (veto[1] + veto[3]) / 2), shown, size, c.muted, "mm", bold=True)
        # The piles: a word and a number.
        for box, key, count in ((draw, "draw_pile", b.draw_pile), (discard, "discard_pile", b.discard_pile)):
            self.label(box, self.cap(key), 22, 14, c.muted, y=box[1] + 24)
            self.text(((box[0] + box[2]) / 2, box[1] + 82), str(count), 52, c.text, "mm", bold=True)

    def seats(self) -> None:
        b, c = self.board, self.colours
        candidates = b.candidates
        for seat, box in enumerate(self.layout.seats):
            alive = b.alive[seat]
            president, chancellor = seat == b.president, seat == b.chancellor
            fill = c.panel if alive else c.dead
            self.draw.rounded_rectangle(box, 14, fill=fill)
            if president or chancellor:
                edge = c.president if president else c.chancellor
                self.draw.rounded_rectangle(box, 14, outline=edge, width=6)
            if seat in b.term_limited and b.winner is None:
                # A hatched band along the bottom edge; the legend names the term-limited.
                band = (box[0] + 10, box[3] - 22, box[2] - 10, box[3] - 10)
                self.draw.rectangle(band, fill=c.limited)
                for x in range(band[0], band[2], 12):
                    self.draw.line((x, band[3], x + 8, band[1]), fill=fill, width=3)
            # The seat's number and name.
            self.text((box[0] + 14, box[1] + 12), str(seat + 1), 20, c.muted)
            name_box = (box[0] + 8, box[1] + 30, box[2] - 8, box[1] + 72)
            self.label(name_box, b.names[seat], 28, 14, c.text if alive else c.muted, bold=True)
            if not alive:
                shown, size = fit(b.names[seat], name_box[2] - name_box[0] - 16, 28, 14, bold=True)
                w = _width(shown, size, bold=True)
                mid_x, mid_y = (box[0] + box[2]) / 2, (name_box[1] + name_box[3]) / 2 + 2
                self.draw.line((mid_x - w / 2, mid_y, mid_x + w / 2, mid_y), fill=c.muted, width=3)
            badge = None
            if not alive:
                badge = (self.cap("executed"), c.muted, c.dead)
            elif president:
                badge = (self.cap("presidential_candidate" if candidates else "president"), c.president, c.ink)
            elif chancellor:
                badge = (self.cap("chancellor_candidate" if candidates else "chancellor"), c.chancellor, c.ink)
            if badge is not None:
                words, colour, ink = badge
                area = (box[0] + 10, box[1] + 78, box[2] - 10, box[1] + 108)
                shown, size = fit(words, area[2] - area[0] - 12, 20, 11)
                w = _width(shown, size)
                mid = (area[0] + area[2]) / 2
                self.draw.rounded_rectangle((mid - w / 2 - 8, area[1], mid + w / 2 + 8, area[3]), 10, fill=colour)
                self.text((mid, (area[1] + area[3]) / 2), shown, size, ink, "mm")

    def legend(self) -> None:
        b, c, box = self.board, self.colours, self.layout.legend
        if not b.term_limited or b.winner is not None:
            return
        names = ", ".join(b.names[s] for s in b.term_limited)
        words = self.catalog.text("board-term-limited", names=names)
        swatch = (box[0], box[1] + 12, box[0] + 36, box[3] - 12)
        self.draw.rectangle(swatch, fill=c.limited)
        shown, size = fit(words, box[2] - box[0] - 52, 24, 14)
        self.text((box[0] + 50, (box[1] + box[3]) / 2), shown, size, c.text, "lm")


def render_png(board: Board, catalog: Catalog, *, narrow: bool = False) -> bytes:
    """The board as a PNG, ``WIDTH`` pixels wide (``narrow``: ``NARROW_WIDTH``, for a phone), in the catalog's
    words and the board's theme's colours."""
    image = _Painter(board, catalog, narrow).paint()
    # A few flat colours and their anti-aliased edges: 64 palette entries look the same, and encode in half the
    # time to under half the bytes of RGB (about 25 KB for Telegram to fetch).
    paletted = image.quantize(PNG_COLOURS, method=Image.Quantize.FASTOCTREE)
    buffer = io.BytesIO()
    paletted.save(buffer, format="PNG", compress_level=6)
    return buffer.getvalue()


def catalog_for(board: Board, lang: str) -> Catalog:
    """The catalog to draw a board in: its theme in ``lang``, else the theme in English, else classic."""
    for theme, language in ((board.theme, lang), (board.theme, "en"), (DEFAULT_THEME, "en")):
        try:
            return Catalog.load(theme, language)
        except ValueError:
            continue
    return Catalog.load()

