"""The board image: public facts only, drawn for every player count in both themes, and posted to a Telegram
group as one photo that is edited in place (across restarts too)."""

from __future__ import annotations

import dataclasses
import io
import json
import random
from typing import Any

import pytest
from PIL import Image, ImageChops

from moderator.board import (
    BOARD_MESSAGE,
    FASCIST_SLOTS,
    LIBERAL_SLOTS,
    NARROW_WIDTH,
    PLAYERS,
    TRACKER_MARKS,
    WIDTH,
    Board,
    _width,
    fit,
    fit_lines,
    layout,
    palette,
    render_png,
)
from moderator.board_view import board_of
from moderator.catalog import Catalog
from moderator.commands import Inbound, Join, OpenTable, Start
from moderator.engine import Phase, Role, apply, new_game, public_view
from moderator.engine.types import CHAOS_AT, FASCIST_POLICIES_TO_WIN, FASCIST_TRACK, LIBERAL_POLICIES_TO_WIN
from moderator.render import TableInfo
from moderator.service import Service
from moderator.simulate import random_game
from moderator.store import Store
from tests.telegram_table import TelegramTable, group_chat

NAMES = ("Ann", "Bob", "Cy", "Dee", "Eve", "Fay", "Gus", "Hal", "Ivy", "Jo")
GROUP = group_chat(-100900)
pytestmark = pytest.mark.anyio


def _board(players: int = 7, theme: str = "classic", **changes: Any) -> Board:
    board = board_of(public_view(new_game(players, seed=1)), TableInfo(NAMES[:players], theme))
    return dataclasses.replace(board, **changes)


def _image(board: Board, theme: str | None = None) -> Image.Image:
    png = render_png(board, Catalog.load(theme or board.theme, "en"))
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    return Image.open(io.BytesIO(png)).convert("RGB")


def _near(pixel: Any, colour: tuple[int, int, int]) -> bool:
    """The same colour, up to the PNG's palette reduction."""
    return all(abs(p - c) <= 12 for p, c in zip(pixel, colour, strict=True))


def _changed(a: Image.Image, b: Image.Image, box: tuple[int, int, int, int]) -> int:
    """How many pixels of ``box`` clearly differ (the PNG's palette moves an unchanged edge pixel a little)."""
    difference = ImageChops.difference(a.crop(box), b.crop(box)).convert("L")
    return sum(difference.histogram()[48:])


def _same(a: Image.Image, b: Image.Image, box: tuple[int, int, int, int]) -> bool:
    """Nothing drawn in ``box`` differs; anything drawn there differs by far more than ``_changed``'s noise."""
    changed = _changed(a, b, box)
    assert changed == 0 or changed > 50, f"{changed} pixels differ: neither the same nor clearly changed"
    return changed == 0


# --- the picture ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("theme", ["classic", "corporate"])
@pytest.mark.parametrize("players", range(5, 11))
def test_the_board_renders_as_a_png_for_every_player_count_in_both_themes(players: int, theme: str) -> None:
    board = _board(players, theme, liberal_policies=2, fascist_policies=3, election_tracker=1, chancellor=1,
                   term_limited=(1,), alive=(False,) + (True,) * (players - 1), veto_unlocked=True)
    image = _image(board)
    assert image.width == WIDTH == 1200
    assert image.height == layout(players).height
    assert 800 <= image.height <= 1100  # about 4:3: whole on a TV, and readable at a phone's width
    assert len(image.getcolors(1 << 16) or ()) > 10  # something was drawn, not a blank canvas


def test_an_enacted_policy_fills_its_slot_and_leaves_the_others() -> None:
    places = layout(7)
    empty, one_liberal = _image(_board()), _image(_board(liberal_policies=1))
    assert not _same(empty, one_liberal, places.liberal_slots[0])
    assert _same(empty, one_liberal, places.liberal_slots[1])
    assert _same(empty, one_liberal, places.fascist_slots[0])
    two_fascist = _image(_board(fascist_policies=2))
    assert not _same(empty, two_fascist, places.fascist_slots[1])
    assert _same(empty, two_fascist, places.fascist_slots[2])
    # A filled slot shows its party's colour.
    left, top, _right, bottom = places.liberal_slots[0]
    assert _near(one_liberal.getpixel((left + 12, (top + bottom) // 2)), palette("classic").liberal)


def test_the_presidents_marker_moves_with_the_presidency() -> None:
    seats = layout(7).seats
    first, second = _image(_board(president=0)), _image(_board(president=1))
    assert not _same(first, second, seats[0]) and not _same(first, second, seats[1])
    assert _same(first, second, seats[2])
    # The President's seat is framed in the President's colour.
    left, top, _, bottom = seats[1]
    assert _near(second.getpixel((left + 2, (top + bottom) // 2)), palette("classic").president)


def test_the_election_tracker_dead_and_term_limited_seats_are_drawn() -> None:
    places = layout(7)
    plain = _image(_board(president=0))
    assert not _same(plain, _image(_board(president=0, election_tracker=2)), places.status[0])
    assert not _same(plain, _image(_board(president=0, veto_unlocked=True)), places.status[1])
    assert not _same(plain, _image(_board(president=0, draw_pile=9)), places.status[2])
    dead = _image(_board(president=0, alive=(True, True, False, True, True, True, True)))
    assert not _same(plain, dead, places.seats[2]) and _same(plain, dead, places.seats[3])
    limited = _image(_board(president=0, term_limited=(4,)))
    assert not _same(plain, limited, places.seats[4]) and not _same(plain, limited, places.legend)


@pytest.mark.parametrize("theme", ["classic", "corporate"])
@pytest.mark.parametrize("players", range(5, 11))
def test_the_phones_board_is_half_as_wide_with_the_same_type(players: int, theme: str) -> None:
    board = _board(players, theme, liberal_policies=2, fascist_policies=3, chancellor=1, term_limited=(1,))
    png = render_png(board, Catalog.load(theme, "en"), narrow=True)
    image = Image.open(io.BytesIO(png))
    assert (image.width, image.height) == (NARROW_WIDTH, layout(players, True).height)
    # Shrunk to a phone's 360 px, its 20 px labels are 11 px, where the wide board's are 6 px.
    assert 360 / NARROW_WIDTH * 20 >= 11 > 360 / WIDTH * 20
    boxes = layout(players, True)
    everything = [*boxes.liberal_slots, *boxes.fascist_slots, *boxes.status, *boxes.seats]
    assert all(0 <= b[0] < b[2] <= NARROW_WIDTH and 0 <= b[1] < b[3] <= boxes.height for b in everything)


@pytest.mark.parametrize("lang", ["en", "de"])
@pytest.mark.parametrize("theme", ["classic", "corporate"])
def test_the_phones_board_prints_every_power_whole(theme: str, lang: str) -> None:
    catalog = Catalog.load(theme, lang)
    slot = layout(10, True).fascist_slots[0]
    powers = {power for track in FASCIST_TRACK.values() for power in track if power is not None}
    for power in powers:
        word = catalog.term(power.value)
        lines, _ = fit_lines(word, slot[2] - slot[0] - 16, 20, 13, 3)
        assert " ".join(lines) == word, f"{word!r} is cut on the phone's board"


def test_the_printed_boards_slots_and_marks_are_the_rules_numbers() -> None:
    """The picture draws without the engine, so its geometry repeats the rulebook's numbers: they must agree."""
    assert (LIBERAL_SLOTS, FASCIST_SLOTS, TRACKER_MARKS) == (LIBERAL_POLICIES_TO_WIN, FASCIST_POLICIES_TO_WIN,
                                                            CHAOS_AT)
    assert set(PLAYERS) == set(FASCIST_TRACK)
    assert all(len(track) == FASCIST_SLOTS - 1 for track in FASCIST_TRACK.values())


def test_each_fascist_slot_prints_the_power_of_its_player_count() -> None:
    slots = layout(5).fascist_slots
    assert slots == layout(7).fascist_slots == layout(9).fascist_slots  # so the slots compare pixel by pixel
    small, medium, large = _image(_board(5)), _image(_board(7)), _image(_board(9))
    assert not _same(small, medium, slots[1])  # nothing / Investigate Loyalty
    assert not _same(small, medium, slots[2])  # Policy Peek / Special Election
    assert not _same(medium, large, slots[0])  # nothing / Investigate Loyalty
    assert _same(medium, large, slots[1]) and _same(small, large, slots[3])  # the same power, the same picture


class _Recording(Catalog):
    """A catalog that remembers which terms and messages were asked for."""

    asked: set[str]
    """Set by ``of`` (the frozen dataclass's fields stay the catalog's)."""

    @classmethod
    def of(cls, catalog: Catalog) -> _Recording:
        recording = cls(catalog.theme, catalog.lang, catalog.files, catalog.terms)
        object.__setattr__(recording, "asked", set())
        return recording

    def term(self, key: str) -> str:
        self.asked.add(key)
        return super().term(key)

    def text(self, message_id: str, *, sms: bool = False, **params: object) -> str:
        self.asked.add(message_id)
        return super().text(message_id, sms=sms, **params)


def test_every_word_comes_from_the_catalog_in_the_tables_theme() -> None:
    catalog = _Recording.of(Catalog.load("corporate", "en"))
    board = _board(7, "corporate", phase=Phase.LEGISLATIVE_PRESIDENT, candidates=False, president=0, chancellor=1,
                   term_limited=(2,), alive=(True, True, True, False, True, True, True), fascist_policies=1)
    render_png(board, catalog)
    assert {"game", "president", "chancellor", "liberal_policies", "fascist_policies", "election_tracker",
            "chaos", "veto", "draw_pile", "discard_pile", "executed", "fascist_card", "investigate_loyalty",
            "special_election", "execution", "board-term-limited"} <= catalog.asked
    over = dataclasses.replace(board, phase=Phase.GAME_OVER, winner=Role.LIBERAL.party)
    render_png(over, catalog)
    assert {"board-game-over", "liberals"} <= catalog.asked
    # Candidates are named as candidates until they are elected.
    render_png(dataclasses.replace(board, phase=Phase.ELECTION, candidates=True), catalog)
    assert {"presidential_candidate", "chancellor_candidate"} <= catalog.asked
    # The two themes draw different words and colours.
    assert not _same(_image(_board(theme="classic")), _image(_board(theme="corporate")), layout(7).header)


def test_a_long_name_is_shortened_with_an_ellipsis_to_fit_its_seat() -> None:
    seat = layout(10).seats[0]
    width = seat[2] - seat[0] - 32
    shown, size = fit("W" * 20, width, 28, 14, bold=True)
    assert shown.endswith("\u2026") and _width(shown, size, bold=True) <= width
    assert fit("Ann", width, 28, 14, bold=True) == ("Ann", 28)
    names = ("W" * 20, "Zoë Ægir-Ñúñez", "Владимир", "Ωmega", "x") + NAMES[5:10]
    _image(board_of(public_view(new_game(10, seed=2)), TableInfo(names)))  # any name draws


# --- the facts -----------------------------------------------------------------------------------------


def test_a_board_travels_as_plain_json() -> None:
    board = _board(8, "corporate", president=3, chancellor=5, term_limited=(3, 5), liberal_policies=4)
    data = json.loads(json.dumps(board.to_json()))
    assert Board.from_json(data) == board
    over = dataclasses.replace(board, phase=Phase.GAME_OVER, winner=Role.HITLER.party)
    assert Board.from_json(json.loads(json.dumps(over.to_json()))) == over
    assert "step" not in board.drawn() and board.drawn() == dataclasses.replace(board, step=99).drawn()
    with pytest.raises((ValueError, KeyError)):
        Board.from_json({**data, "names": data["names"][:-1]})


SECRET_FIELDS = {"roles", "role", "hand", "deck", "draw_order", "seed", "truth", "investigations", "votes"}


def test_no_board_built_during_a_game_holds_a_role() -> None:
    assert not {f.name for f in dataclasses.fields(Board)} & SECRET_FIELDS
    for players in (5, 7, 10):
        for seed in range(4):
            names = NAMES[:players]
            state = new_game(players, seed=seed)
            for action in random_game(players, seed).actions:
                board = board_of(public_view(state), TableInfo(names))
                # The same public facts with the roles dealt differently make the same board.
                shuffled = list(state.roles)
                random.Random(seed).shuffle(shuffled)
                other = state.replace(roles=tuple(reversed(shuffled)))
                assert board_of(public_view(other), TableInfo(names)) == board
                assert board.winner is None
                assert not {r.value for r in Role} & set(map(str, json.loads(json.dumps(board.to_json())).values()))
                state, _ = apply(state, action)
            assert state.phase is Phase.GAME_OVER
            assert board_of(public_view(state), TableInfo(names)).winner == state.winner


# --- the outbox ----------------------------------------------------------------------------------------


def _boards(store: Store) -> list[tuple[str, str, dict[str, Any]]]:
    rows = store.execute("SELECT channel, address, body FROM outbox WHERE message_id = ?", (BOARD_MESSAGE,))
    return [(r[0], r[1], json.loads(r[2])) for r in rows.fetchall()]


def _table(channel: str, theme: str = "classic") -> Store:
    from moderator.transports import sms, telegram

    store = Store(memory=True)
    caps = {"telegram": telegram.CAPABILITIES, "sms": sms.CAPABILITIES}
    service = Service(store, seed=lambda: 3, clock=lambda: 0.0, codes=random.Random(3),
                      capabilities={channel: caps[channel]} if channel in caps else {})
    ids = iter(range(1, 1000))


    def send(address: str, command: Any, chat: str | None = None) -> None:
        service.handle(Inbound(channel, address, command, external_id=str(next(ids)), chat=chat))

    send("a0", OpenTable("Ann", theme=theme, public=True), chat="-42")
    code = store.execute("SELECT code FROM game_tables").fetchone()[0]
    for i, name in enumerate(NAMES[1:5], 1):
        send(f"a{i}", Join(code, name))
    send("a0", Start())
    return store


def test_a_telegram_group_gets_one_board_row_per_input_with_the_latest_board() -> None:
    store = _table("telegram", "corporate")
    boards = _boards(store)
    assert boards and all((c, a) == ("telegram", "-42") for c, a, _ in boards)
    table_id = store.execute("SELECT id FROM game_tables").fetchone()[0]
    steps = [Board.from_json(body["board"]).step for _, _, body in boards]
    assert steps == sorted(steps) and len(set(steps)) == len(steps)  # one per input, newer each time
    first = boards[0][2]
    assert first["table"] == table_id and first["game"] == 1
    assert Board.from_json(first["board"]).theme == "corporate"


def test_sms_phones_and_computers_get_no_board_rows() -> None:
    assert _boards(_table("sms")) == []
    assert _boards(_table("phone")) == []


# --- Telegram --------------------------------------------------------------------------------------------


async def _play_in_group(t: TelegramTable, players: int = 5, presses: int | None = None) -> list[str]:
    names = list(NAMES[:players])
    await t.open_and_start(names, group=GROUP)
    await t.play(names, random.Random(players), presses=presses)
    await t.settle()
    return names


def _board_photos(t: TelegramTable) -> list[Any]:
    """The photos sent to the group that are not the QR code (which has a Join button)."""
    return [c for c in t.api.of("sendPhoto", GROUP["id"]) if "reply_markup" not in c.params]


async def test_a_played_game_posts_one_board_photo_to_the_group_and_then_edits_it(telegram: TelegramTable) -> None:
    t = telegram
    await t.boot()
    await _play_in_group(t)
    photos, edits = _board_photos(t), t.api.of("editMessageMedia", GROUP["id"])
    assert len(photos) == 1 and len(edits) >= 5
    shown = t.store.execute("SELECT message_id FROM board_messages").fetchall()
    assert {int(e.params["message_id"]) for e in edits} == {int(shown[0][0])}
    assert all(e.files for e in edits)  # every edit uploads the new picture
    assert not [c for c in t.api.calls if c.method == "editMessageMedia" and (c.chat_id or 0) > 0]
    statuses = dict(t.store.execute("SELECT status, count(*) FROM outbox GROUP BY status").fetchall())
    assert set(statuses) == {"sent"}, statuses


async def test_after_a_restart_the_same_board_message_is_edited(telegram: TelegramTable) -> None:
    t = telegram
    await t.boot()
    names = list(NAMES[:5])
    await t.open_and_start(names, group=GROUP)
    await t.play(names, random.Random(1), presses=12)
    await t.settle()
    assert len(_board_photos(t)) == 1
    photo = _photo_id(t)
    await t.stop()
    await t.boot()  # a new Application, Service and channel on the same database file
    before = len(t.api.of("editMessageMedia", GROUP["id"]))
    await t.play(names, random.Random(2))
    await t.settle()
    assert len(_board_photos(t)) == 1
    edits = t.api.of("editMessageMedia", GROUP["id"])[before:]
    assert edits and {int(e.params["message_id"]) for e in edits} == {photo} and _photo_id(t) == photo


def _photo_id(t: TelegramTable) -> int:
    """The id of the one board photo in the group."""
    ids = [m["message_id"] for m in t.api.messages(GROUP["id"]) if "photo" in m and "reply_markup" not in m]
    assert len(ids) == 1
    return int(ids[0])


async def test_a_deleted_board_message_is_replaced_by_a_new_photo(telegram: TelegramTable) -> None:
    t = telegram
    await t.boot()
    names = list(NAMES[:5])
    await t.open_and_start(names, group=GROUP)
    await t.settle()
    old = _photo_id(t)
    del t.api.chats[GROUP["id"]][old]  # someone deleted it
    await t.play(names, random.Random(3))
    await t.settle()
    assert len(_board_photos(t)) == 2 and _photo_id(t) != old
    shown = t.store.execute("SELECT message_id FROM board_messages").fetchone()
    assert int(shown[0]) == _photo_id(t)
    statuses = dict(t.store.execute("SELECT status, count(*) FROM outbox GROUP BY status").fetchall())
    assert set(statuses) == {"sent"}, statuses
