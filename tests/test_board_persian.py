"""The board image in Persian, and with Persian names at any table: every letter a real glyph (never the box a font
draws for a letter it lacks), joined as Persian is written, read right to left, and a name of another script beside
it in its place. Without Raqm the board still draws, and the operator is told."""

from __future__ import annotations

import dataclasses
import io
import unicodedata

import pytest
from PIL import Image, ImageChops, ImageDraw, ImageFont, features

from moderator import board
from moderator.board import FONT_FILES, FONT_FOLDER, draw_text, font_problems, render_png, words_drawn
from moderator.board_view import board_of
from moderator.catalog import BUNDLED, Catalog
from moderator.engine import new_game, public_view
from moderator.render import TableInfo

NAMES = ("زهرا", "Bob", "علی‌رضا", "Алексей", "مریم کاظمی", "Zoë", "پرویز")
SIZE = 40
TOFU = "\U0010fffd"
"""A code point no font has: each font draws its box for a missing letter."""


def _persian_board(names: tuple[str, ...] = NAMES) -> board.Board:
    drawn = board_of(public_view(new_game(len(names), seed=3)), TableInfo(names, "classic"))
    return dataclasses.replace(drawn, term_limited=(0, 1), president=2, chancellor=4, fascist_policies=2,
                               election_tracker=1)


def _drawn(text: str, anchor: str = "la", width: int = 900) -> Image.Image:
    """``text`` as the board draws it, black on white, at ``anchor`` (the left or right edge, the top)."""
    image = Image.new("RGB", (width, 2 * SIZE), (255, 255, 255))
    x = 10 if anchor[0] == "l" else width - 10
    draw_text(ImageDraw.Draw(image), (x, 10), text, SIZE, (0, 0, 0), anchor)
    return image


def _ink(image: Image.Image) -> tuple[int, int, int, int]:
    box = ImageChops.invert(image).getbbox()
    assert box is not None, "nothing drawn"
    return box


def _boxes() -> list[bytes]:
    """What each of the board's fonts draws for a letter it lacks."""
    out = []
    for name in FONT_FILES:
        image = Image.new("RGB", (2 * SIZE, 2 * SIZE), (255, 255, 255))
        font = ImageFont.truetype(str(BUNDLED / FONT_FOLDER / name), SIZE)
        ImageDraw.Draw(image).text((10, 10), TOFU, font=font, fill=(0, 0, 0))
        out.append(image.tobytes())
    return out


def _letter(c: str) -> bytes:
    image = Image.new("RGB", (2 * SIZE, 2 * SIZE), (255, 255, 255))
    draw_text(ImageDraw.Draw(image), (10, 10), c, SIZE, (0, 0, 0))
    return image.tobytes()


@pytest.mark.parametrize("lang", ["fa", "en"])
def test_every_letter_on_a_board_with_persian_names_is_a_real_glyph(lang: str) -> None:
    boxes = _boxes()
    texts = [text for text, _ in words_drawn(_persian_board(), Catalog.load("classic", lang))]
    assert any("زهرا" in text for text in texts) and any("Алексей" in text for text in texts)
    # Every character but a space and an invisible one (the zero-width non-joiner inside a Persian name).
    missing = {c for text in texts for c in text
               if not c.isspace() and unicodedata.category(c) != "Cf" and _letter(c) in boxes}
    assert not missing, f"drawn as a missing letter's box: {sorted(missing)}"


def test_the_box_for_a_missing_letter_is_what_the_test_looks_for() -> None:
    """The check above can fail: a letter no bundled font has is drawn as a box it recognises."""
    assert _letter("\u0b85") in _boxes()  # Tamil: in neither font


@pytest.mark.parametrize("word", ["محمد", "علی‌رضا", "پرویز", "کاظمی", "مریم"])
def test_persian_letters_are_joined_as_persian_is_written(word: str) -> None:
    """Shaped, a Persian word is narrower and looks otherwise than its letters set apart (each in its own form,
    by a zero-width non-joiner between them)."""
    apart = "\u200c".join(word)
    joined, unjoined = _drawn(word), _drawn(apart)
    left, _, right, _ = _ink(joined)
    left_apart, _, right_apart, _ = _ink(unjoined)
    assert right - left < right_apart - left_apart
    assert ImageChops.difference(joined, unjoined).getbbox() is not None


def test_a_persian_word_reads_from_the_right() -> None:
    """Its first letter is its rightmost: ``اب`` (alef, then beh, which alef does not join) right-aligned ends in
    alef, as alef alone right-aligned draws it."""
    word, first = _drawn("اب", "ra"), _drawn("ا", "ra")
    right = _ink(first)
    assert ImageChops.difference(word.crop(right), first.crop(right)).getbbox() is None
    assert ImageChops.difference(word, _drawn("با", "ra")).getbbox() is not None


@pytest.mark.parametrize(("text", "edge", "part", "anchor"), [
    ("علی، Bob", "right", "علی", "ra"),  # a Persian text: its first name at the right, the Latin one after it, left
    ("Ann, علی", "left", "Ann", "la"),  # an English one: from the left
    ("رأی Алексей: ۳", "right", "رأی", "ra"),
])
def test_a_name_in_another_script_keeps_its_place(text: str, edge: str, part: str, anchor: str) -> None:
    whole, alone = _drawn(text, anchor), _drawn(part, anchor)
    box = _ink(alone)
    assert ImageChops.difference(whole.crop(box), alone.crop(box)).getbbox() is None, f"{part} is not at the {edge}"


def test_a_persian_board_draws_and_differs_from_the_english_one() -> None:
    drawn = _persian_board()
    persian, english = (render_png(drawn, Catalog.load("classic", lang)) for lang in ("fa", "en"))
    assert persian.startswith(b"\x89PNG") and persian != english
    assert Image.open(io.BytesIO(persian)).size == Image.open(io.BytesIO(english)).size


def no_raqm(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pillow as it is without FriBiDi: no Raqm layout."""
    real = features.check
    monkeypatch.setattr(features, "check", lambda feature: feature != "raqm" and real(feature))


def test_without_raqm_the_board_still_draws_and_the_operator_is_told(monkeypatch: pytest.MonkeyPatch) -> None:
    assert not any("Raqm" in problem for problem in font_problems())
    no_raqm(monkeypatch)
    assert any("Raqm" in problem for problem in font_problems())
    png = render_png(_persian_board(), Catalog.load("classic", "fa"))
    assert Image.open(io.BytesIO(png)).size[0] == board.WIDTH
    # Pillow's basic layout: the letters stand apart, left to right (what the operator's line says).
    assert _ink(_drawn("زهرا"))[2] - _ink(_drawn("زهرا"))[0] == pytest.approx(
        _ink(_drawn("\u200c".join("زهرا")))[2] - _ink(_drawn("\u200c".join("زهرا")))[0], abs=2)



def test_a_persian_board_lists_its_term_limited_players_with_the_persian_comma() -> None:
    fa, en = Catalog.load("classic", "fa"), Catalog.load("classic", "en")
    listed = [text for text, _ in words_drawn(_persian_board(), fa) if "زهرا" in text and "Bob" in text]
    assert listed and "\u060c" in listed[0] and ", " not in listed[0]
    listed = [text for text, _ in words_drawn(_persian_board(), en) if "زهرا" in text and "Bob" in text]
    assert listed and "زهرا, Bob" in listed[0]
