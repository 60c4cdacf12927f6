"""The card art and icons under moderator/transports/web/assets/art: self-contained SVGs (nothing fetched from
anywhere, so the pages work on a LAN without internet), the same cards in every theme, drawn in the board's
palette with readable contrast, the catalog's own vote words, and the icons the web app manifest names."""

from __future__ import annotations

import json
import re
import tomllib
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from PIL import Image, ImageFont

ROOT = Path(__file__).resolve().parent.parent
ART = ROOT / "moderator" / "transports" / "web" / "assets" / "art"
MESSAGES = ROOT / "messages"
THEMES = ("classic", "corporate")
SVG_NS = "{http://www.w3.org/2000/svg}"
PALETTES = tomllib.loads((MESSAGES / "colours.toml").read_text(encoding="utf-8"))

# Every theme draws these; the ballots also come once per catalog language with the catalog's word on them.
CARDS = {
    "policy-liberal", "policy-fascist", "policy-back",
    "role-liberal", "role-fascist", "role-hitler", "role-back",
    "party-liberal", "party-fascist",
    "vote-ja", "vote-nein",
    "badge-president", "badge-chancellor", "marker-tracker",
}  # fmt: skip

# Emblem on its ground, as colours.toml keys, per theme (README.md's palette table): at least 3:1.
EMBLEMS = {
    "classic": [
        ("text", "liberal"), ("text", "fascist"), ("text", "ink"), ("text", "background"), ("text", "panel"),
        ("liberal", "text"), ("fascist", "text"), ("ink", "president"), ("text", "chancellor"),
        ("ink", "chancellor"), ("ink", "tracker"), ("ink", "text"),
    ],
    "corporate": [
        ("text", "liberal"), ("text", "fascist"), ("text", "panel"), ("text", "background"), ("fascist_track", "ink"),
        ("liberal", "text"), ("fascist", "text"), ("ink", "president"), ("ink", "chancellor"), ("ink", "tracker"),
        ("ink", "liberal"), ("ink", "text"),
    ],
}  # fmt: skip


def svgs() -> list[Path]:
    return sorted(ART.rglob("*.svg"))


def languages(theme: str) -> list[str]:
    return sorted(path.stem for path in (MESSAGES / theme).glob("*.toml"))


def terms(theme: str, language: str) -> dict[str, str]:
    catalog = tomllib.loads((MESSAGES / theme / f"{language}.toml").read_text(encoding="utf-8"))
    return dict(catalog["terms"])


def luminance(colour: str) -> float:
    channels = [int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    r, g, b = (c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(one: str, other: str) -> float:
    light, dark = sorted((luminance(one), luminance(other)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def theme_of(path: Path) -> str:
    """The palette a file is drawn in: its theme folder's, or classic's for the icons at the top."""
    return path.parent.name if path.parent != ART else "classic"


def name(path: Path) -> str:
    return path.relative_to(ART).as_posix()


@pytest.mark.parametrize("path", svgs(), ids=name)
def test_every_svg_is_a_scalable_svg_that_fetches_nothing(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    root = ET.fromstring(text)
    assert root.tag == f"{SVG_NS}svg"
    view_box = root.get("viewBox", "").split()
    assert len(view_box) == 4 and all(float(n) >= 0 for n in view_box), "a viewBox lets the page scale it"
    for element in root.iter():
        tag = element.tag.removeprefix(SVG_NS)
        assert tag not in {"script", "foreignObject", "image", "style", "font", "font-face"}, f"<{tag}> in {name(path)}"
        for attribute, value in element.attrib.items():
            assert not attribute.startswith("on"), f"event handler {attribute} in {name(path)}"
            if attribute.endswith("href"):
                assert value.startswith("#"), f"{name(path)} refers to {value}: only references inside the file"
            assert "url(" not in value or re.fullmatch(r"url\(#[\w-]+\)", value), f"{value} in {name(path)}"
        if tag == "text":
            assert element.get("font-family") in {"sans-serif", "serif", "monospace"}, "generic font families only"
    for outside in ("@import", "@font-face", "http:", "https:", "//", "data:"):
        assert outside not in text.replace("http://www.w3.org/2000/svg", ""), f"{outside} in {name(path)}"


def test_every_theme_draws_the_same_cards() -> None:
    """Every card in every theme; a ballot with a word only for a language a catalog speaks, the same in every
    theme (a new language needs none: the pages show the wordless ballot and print the word beside it)."""
    worded = {f"vote-{vote}-{language}" for vote in ("ja", "nein") for language in languages("classic")}
    drawn = {theme: {path.stem for path in (ART / theme).glob("*.svg")} for theme in THEMES}
    for theme in THEMES:
        assert CARDS <= drawn[theme] <= CARDS | worded, theme
        assert drawn[theme] == drawn[THEMES[0]], theme
        assert not [path for path in (ART / theme).iterdir() if path.suffix != ".svg"]


@pytest.mark.parametrize("theme", THEMES)
def test_the_ballots_carry_the_catalogs_vote_words(theme: str) -> None:
    for language in languages(theme):
        for vote in ("ja", "nein"):
            if not (ART / theme / f"vote-{vote}-{language}.svg").is_file():
                continue  # a language without its worded ballots (the pages print the word beside the card)
            root = ET.parse(ART / theme / f"vote-{vote}-{language}.svg").getroot()
            words = [element.text for element in root.iter(f"{SVG_NS}text")]
            assert words == [terms(theme, language)[vote]], f"{theme} {language} {vote}"


def test_only_the_worded_ballots_have_words() -> None:
    worded = [path for path in svgs() if any(True for _ in ET.parse(path).getroot().iter(f"{SVG_NS}text"))]
    assert all(re.fullmatch(r"vote-(ja|nein)-[a-z]{2}", path.stem) for path in worded), [name(p) for p in worded]


@pytest.mark.parametrize("path", [p for p in svgs() if p.stem.startswith("vote-") and p.stem.count("-") == 2], ids=name)
def test_a_ballots_word_fits_and_reads_against_its_card(path: Path) -> None:
    """Measured in the project's widest bundled face (DejaVu Sans Bold), which most sans-serif fonts undercut."""
    root = ET.parse(path).getroot()
    card = next(root.iter(f"{SVG_NS}rect")).get("fill", "")
    (word,) = root.iter(f"{SVG_NS}text")
    size = float(word.get("font-size", "0"))
    font = ImageFont.truetype(str(MESSAGES / "fonts" / "DejaVuSans-Bold.ttf"), 100)
    assert font.getlength(word.text or "") / 100 * size <= 80, "the inner border is 82 wide"
    assert size >= 14, "readable on a 90 px tall card"
    assert contrast(word.get("fill", ""), card) >= 4.5


@pytest.mark.parametrize("path", svgs(), ids=name)
def test_the_art_is_drawn_in_its_themes_board_palette(path: Path) -> None:
    """The cards match the board image: every colour is one of the theme's colours.toml (a palette change there
    means the same change here, README.md says how)."""
    palette = PALETTES[theme_of(path)]
    used = set(re.findall(r"#[0-9a-fA-F]{3,8}\b", path.read_text(encoding="utf-8")))
    assert used <= set(palette.values()), f"{name(path)} uses {sorted(used - set(palette.values()))}"


@pytest.mark.parametrize("theme", THEMES)
def test_emblems_stand_out_from_their_ground(theme: str) -> None:
    palette = PALETTES[theme]
    weak = [(a, b, round(contrast(palette[a], palette[b]), 2)) for a, b in EMBLEMS[theme]]
    assert [pair for pair in weak if pair[2] < 3] == []


def test_the_manifest_names_icons_that_exist_at_their_stated_size() -> None:
    manifest = json.loads((ART / "manifest.webmanifest").read_text(encoding="utf-8"))
    assert manifest["name"] == "moderator" and manifest["short_name"]
    assert manifest["display"] == "standalone" and manifest["start_url"] == "/"
    assert {manifest["theme_color"], manifest["background_color"]} <= set(PALETTES["classic"].values())
    assert {"any", "maskable"} <= {icon["purpose"] for icon in manifest["icons"]}
    for icon in manifest["icons"]:
        path = ART / icon["src"]
        assert path.is_file(), icon["src"]
        if icon["type"] == "image/png":
            width, height = (int(n) for n in icon["sizes"].split("x"))
            with Image.open(path) as image:
                assert (image.format, image.size) == ("PNG", (width, height)), icon["src"]
        else:
            assert (icon["type"], icon["sizes"]) == ("image/svg+xml", "any")


def test_the_page_icons_outside_the_manifest_have_their_sizes() -> None:
    for file, size in (("icon-32.png", 32), ("apple-touch-icon.png", 180)):
        with Image.open(ART / file) as image:
            assert (image.format, image.size) == ("PNG", (size, size)), file


def test_the_art_stays_small() -> None:
    assert max(path.stat().st_size for path in svgs()) < 12 * 1024
    assert max(path.stat().st_size for path in ART.glob("*.png")) < 64 * 1024
