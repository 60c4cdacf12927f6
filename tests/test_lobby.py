"""The lobby through the service: join codes, names, seating order, starting, computer players."""

from __future__ import annotations

import random
import sqlite3

import pytest

from moderator.channels import NotStored
from moderator.commands import (
    AddComputers,
    Ask,
    Choose,
    Command,
    Join,
    LobbyControl,
    MoveSeat,
    OpenTable,
    Query,
    RemoveSeat,
    Seating,
    Start,
)
from moderator.engine import Phase, awaiting
from moderator.engine import events as ev
from moderator.limits import TABLES_AT_ONCE
from moderator.lobby import CODE_ALPHABET, CODE_LENGTH
from moderator.names import NAME_LIMIT
from tests.fakes import Harness, last
from tests.test_service import NAMES

LOOK_ALIKES = "0O1IL2Z5S6G8B"


def lobby(players: int, *, seed: int = 1) -> tuple[Harness, str, str, list[str]]:
    h = Harness(seed=seed)
    table_id, code, addresses = h.seat_table(NAMES[:players])
    return h, table_id, code, addresses


def seat_names(h: Harness, table_id: str) -> list[str]:
    return [s.name for s in h.table(table_id).seats]


# --- join codes ------------------------------------------------------------------------------------------


def test_join_codes_use_the_documented_alphabet_and_length() -> None:
    assert not set(LOOK_ALIKES) & set(CODE_ALPHABET)
    h = Harness(seed=1)
    codes = set()
    for i in range(60):
        _, code = h.open(f"host{i}", f"Host {i}")
        assert len(code) == CODE_LENGTH and set(code) <= set(CODE_ALPHABET), code
        codes.add(code)
    assert len(codes) == 60, "two open lobbies share a join code"
    # The host's reply shows the code.
    assert code in h.channel.inbox("host59")[-1]["text"]


def test_only_tables_opened_use_up_a_senders_openings_and_the_refusal_is_in_their_language() -> None:
    h = Harness(seed=9)
    for _ in range(2 * TABLES_AT_ONCE):
        h.send("p0", OpenTable("Ann", theme="nope"))  # refused: no table, nothing counted
    assert set(h.channel.ids("p0")) == {"unknown-theme"}
    for _ in range(TABLES_AT_ONCE):
        h.open("p0", "Ann")
        h.send("p0", RemoveSeat("Ann"))  # the host sits nowhere, so may open another
    h.send("p0", OpenTable("Ann"), language="de")
    assert last(h, "p0") == "open-try-again"
    assert h.channel.inbox("p0")[-1]["text"].endswith("in 5 Minuten noch einmal.")
    assert len(h.store.tables_of(h.channel_name, "p0")) == TABLES_AT_ONCE


def test_an_opening_the_disk_refused_uses_up_none_of_the_senders_openings(monkeypatch: pytest.MonkeyPatch) -> None:
    h = Harness(seed=9)
    real = h.store.replace_seats

    def full_disk(*args: object, **kwargs: object) -> None:
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(h.store, "replace_seats", full_disk)
    for _ in range(2 * TABLES_AT_ONCE):
        with pytest.raises(NotStored):
            h.send("p0", OpenTable("Ann"))
    monkeypatch.setattr(h.store, "replace_seats", real)
    assert h.store.tables_of(h.channel_name, "p0") == []
    h.open("p0", "Ann")  # the disk takes it again: the sender opens as if nothing had been tried
    assert last(h, "p0") != "open-try-again" and len(h.store.tables_of(h.channel_name, "p0")) == 1


def test_a_code_is_forgiving_about_case_and_spaces() -> None:
    h = Harness(seed=2)
    table_id, code = h.open("p0", "Ximena")
    h.send("p1", Join(f"  {code.lower()} ", "Quentin"))
    assert seat_names(h, table_id) == ["Ximena", "Quentin"]
    assert last(h, "p1") == "seat-taken" and "table-joined" in h.channel.ids("p1")


def test_an_unknown_code_gets_a_reply_and_no_seat() -> None:
    h = Harness(seed=3)
    table_id, code = h.open("p0", "Ximena")
    wrong = "".join(c for c in CODE_ALPHABET if c not in code)[:CODE_LENGTH]
    h.send("p1", Join(wrong, "Quentin"))
    assert h.channel.ids("p1") == ["no-such-table"]
    assert wrong in h.channel.inbox("p1")[0]["text"]
    assert seat_names(h, table_id) == ["Ximena"]


def test_the_code_stops_working_once_the_game_starts() -> None:
    h, table_id, code, addresses = lobby(5)
    h.start(table_id)
    state = h.table(table_id).state
    h.send("late", Join(code, "Latecomer"))
    assert len(h.channel.inbox("late")) == 1
    assert last(h, "late") in ("no-such-table", "lobby-closed")
    assert seat_names(h, table_id) == list(NAMES[:5])
    assert h.table(table_id).state == state
    # The table keeps its id: everything after the start still reaches it.
    h.send(addresses[1], Ask(Query.BOARD))
    assert last(h, addresses[1]) == "board-title"
    # A new table may get the old code back some day; the running game is not affected.
    assert h.store.table_by_code(code) is None


# --- names ------------------------------------------------------------------------------------------------


def test_names_are_trimmed_limited_and_made_unique() -> None:
    h = Harness(seed=4)
    table_id, code = h.open("p0", "  Ximena  ")
    joins = [
        "Quentin",
        "quentin",
        "   Zora   Blue  ",
        "Tab\tand\nnewline",
        "A" * 40,
        "A" * 40,
        "Bell\x07",
    ]
    for i, name in enumerate(joins, 1):
        h.send(f"p{i}", Join(code, name))
    names = seat_names(h, table_id)
    assert names[0] == "Ximena"
    assert names[1] == "Quentin"
    assert names[2].casefold() != "quentin" and names[2].startswith("quentin")
    assert names[3] == "Zora Blue"
    assert names[4] == "Tab and newline"
    assert names[5] == "A" * NAME_LIMIT
    assert names[6] != names[5] and len(names[6]) <= NAME_LIMIT and names[6].startswith("A")
    assert names[7] == "Bell"
    assert all(0 < len(n) <= NAME_LIMIT for n in names)
    assert len({n.casefold() for n in names}) == len(names)
    # Each player is told the name they got.
    assert names[2] in h.channel.inbox("p2")[0]["text"]
    # Without a name (a QR code's text carries none) the joiner is asked for one and takes no seat yet.
    h.send("p9", Join(code, ""))
    assert h.channel.ids("p9") == ["name-asked"] and len(seat_names(h, table_id)) == len(names)


def test_joining_twice_and_a_full_table() -> None:
    h, table_id, code, _ = lobby(10)
    h.send("p3", Join(code, "Again"))
    assert last(h, "p3") == "already-seated"
    h.send("p10", Join(code, "Eleven"))
    assert h.channel.ids("p10") == ["table-full"]
    assert len(h.table(table_id).seats) == 10


# --- seating order --------------------------------------------------------------------------------------


def presidents(h: Harness, table_id: str) -> list[int]:
    return [e.president for e in h.table(table_id).log if isinstance(e, ev.PresidentialCandidateChosen)]


def fail_elections(h: Harness, table_id: str, rounds: int, rng: random.Random) -> None:
    """Nominate and vote everyone Nein, ``rounds`` times: the presidency moves on each time."""
    for _ in range(rounds):
        state = h.table(table_id).state
        assert state is not None and state.phase is Phase.NOMINATION and state.president is not None
        h.press(h.address_of(table_id, state.president), rng)
        for seat in awaiting(h.state(table_id)):
            address = h.address_of(table_id, seat)
            prompt = h.channel.last_prompt(address)
            assert prompt is not None
            nein = next(c for c in prompt["choices"] if c["token"] == "vn")
            h.send(address, Choose(nein["token"], prompt["decision"]))


def test_the_seating_order_sets_the_presidency_order() -> None:
    h, table_id, _, _ = lobby(6, seed=5)
    order = ["Kasimir", "Zora", "Ximena", "Wanda", "Quentin", "Yusuf"]
    h.send("p0", Seating(tuple(n.lower() for n in order)))
    assert seat_names(h, table_id) == order
    assert last(h, "p3") == "seats-list" and ", ".join(f"{i}. {n}" for i, n in enumerate(order, 1)) in (
        h.channel.inbox("p3")[-1]["text"]
    )
    h.start(table_id)
    started = next(b for b in h.channel.inbox("p4") if b["message_id"] == "game-started")
    assert ", ".join(order) in started["text"]
    fail_elections(h, table_id, 2, random.Random(1))
    first, second, third = presidents(h, table_id)[:3]
    assert second == (first + 1) % 6 and third == (first + 2) % 6
    # The seats moved with their phones: each address still plays its own name.
    table = h.table(table_id)
    for seat in table.seats:
        assert NAMES.index(seat.name) == int(seat.address[1:])


def test_seating_must_name_everyone_once() -> None:
    h, table_id, _, _ = lobby(5)
    before = seat_names(h, table_id)
    for bad in [("Ximena", "Quentin"), ("Ximena", "Ximena", "Zora", "Yusuf", "Wanda"),
                ("Ximena", "Quentin", "Zora", "Yusuf", "Nobody")]:
        h.send("p0", Seating(bad))
        assert last(h, "p0") == "seating-mismatch"
        assert seat_names(h, table_id) == before
    assert all(last(h, a) == "seat-taken" for a in ("p1", "p4"))


def test_move_and_remove_a_seat() -> None:
    h, table_id, code, _ = lobby(6)
    h.send("p0", MoveSeat("Wanda", 1))
    assert seat_names(h, table_id) == ["Wanda", "Ximena", "Quentin", "Zora", "Yusuf", "Kasimir"]
    h.send("p0", MoveSeat("Wanda", 6))
    assert seat_names(h, table_id) == ["Ximena", "Quentin", "Zora", "Yusuf", "Kasimir", "Wanda"]
    h.send("p0", MoveSeat("Wanda", 7))
    assert last(h, "p0") == "seating-mismatch"
    h.send("p0", RemoveSeat("Quentin"))
    assert seat_names(h, table_id) == ["Ximena", "Zora", "Yusuf", "Kasimir", "Wanda"]
    assert "seat-removed" in h.channel.ids("p1")
    assert [s.position for s in h.table(table_id).seats] == list(range(5))
    # The removed player no longer acts at the table, and may join again.
    h.send("p1", Start())
    assert last(h, "p1") in ("not-at-table", "not-host")
    h.send("p1", Join(code, "Quentin"))
    assert seat_names(h, table_id)[-1] == "Quentin"


def test_seats_are_fixed_once_the_game_starts() -> None:
    h, table_id, _, _ = lobby(5)
    h.start(table_id)
    before = seat_names(h, table_id)
    for command in (MoveSeat("Zora", 1), RemoveSeat("Zora"), Seating(tuple(reversed(NAMES[:5]))),
                    AddComputers(2)):
        h.send("p0", command)
        assert last(h, "p0") == "lobby-closed"
    assert seat_names(h, table_id) == before


# --- starting -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("players", [1, 4])
def test_start_is_refused_below_five(players: int) -> None:
    h, table_id, _, _ = lobby(players)
    h.send("p0", Start())
    assert last(h, "p0") == "player-count"
    assert h.table(table_id).state is None and h.table(table_id).row.status == "lobby"


def test_start_is_refused_above_ten_and_computers_stop_at_ten() -> None:
    h, table_id, _, _ = lobby(8)
    h.send("p0", AddComputers(5))
    assert len(h.table(table_id).seats) == 10
    h.send("p0", AddComputers(1))
    assert len(h.table(table_id).seats) == 10
    h.send("p0", Start())
    assert h.state(table_id).players == 10


@pytest.mark.parametrize("command", [AddComputers(1), AddComputers(), LobbyControl("cpu")],
                         ids=["a number", "fill", "the button"])
def test_computers_for_a_full_table_are_refused_privately_and_change_nothing(command: Command) -> None:
    h, table_id, _, addresses = lobby(10)
    before = {a: len(h.channel.ids(a)) for a in addresses}
    h.send("p0", command)
    assert h.channel.ids("p0")[before["p0"]:] == ["table-full"]
    assert "10" in h.channel.inbox("p0")[-1]["text"]
    assert all(len(h.channel.ids(a)) == before[a] for a in addresses[1:])
    assert seat_names(h, table_id) == list(NAMES)


def test_more_computers_than_fit_add_those_that_fit_and_say_so() -> None:
    h, table_id, _, _ = lobby(8)
    h.send("p0", AddComputers(5))
    assert len(h.table(table_id).seats) == 10
    assert last(h, "p1") == "computers-added-full"
    assert h.channel.inbox("p1")[-1]["text"].startswith("Only 2 computer players joined: a table has at most 10")


def test_filling_a_table_that_has_enough_players_says_none_joined() -> None:
    h, table_id, _, _ = lobby(6)
    h.send("p0", AddComputers())
    assert last(h, "p0") == "computers-none" and last(h, "p1") != "computers-none"
    assert "0 computer" not in h.channel.inbox("p0")[-1]["text"]
    assert seat_names(h, table_id) == list(NAMES[:6])


def test_only_the_host_starts() -> None:
    h, table_id, _, _ = lobby(5)
    h.send("p2", Start())
    assert last(h, "p2") == "not-host"
    h.send("p2", AddComputers(1))
    assert last(h, "p2") == "not-host"
    assert h.table(table_id).state is None and len(h.table(table_id).seats) == 5


def test_computers_fill_up_to_five_by_default() -> None:
    h, table_id, _, _ = lobby(2)
    h.send("p0", AddComputers())
    seats = h.table(table_id).seats
    assert len(seats) == 5 and [s.computer for s in seats] == [False, False, True, True, True]
    assert len({s.name for s in seats}) == 5
    assert all(s.channel == "computer" for s in seats[2:])
    assert last(h, "p1") == "computers-added"


def test_a_host_may_run_a_table_without_a_seat() -> None:
    h = Harness(seed=6)
    table_id, code = h.open("mod", "Moderator", seat=False)
    for i in range(5):
        h.send(f"p{i}", Join(code, NAMES[i]))
    h.send("mod", Start())
    table = h.table(table_id)
    assert table.state is not None and table.names == NAMES[:5]
    assert "deal-role" not in h.channel.ids("mod")


def test_the_first_president_is_random() -> None:
    firsts = []
    for seed in range(24):
        h = Harness(seed=seed)
        table_id, _, _ = h.seat_table(NAMES[:5])
        h.start(table_id)
        state = h.table(table_id).state
        assert state is not None
        firsts.append(state.president)
        assert presidents(h, table_id) == [state.president]
    assert len(set(firsts)) >= 4, firsts


def test_before_the_start_decisions_and_questions_get_a_reply() -> None:
    h, table_id, _, _ = lobby(5)
    h.send("p2", Choose("vj", 0), raw="ja")
    assert last(h, "p2") == "game-not-started"
    h.send("p2", Ask(Query.WHOAMI))
    assert last(h, "p2") == "game-not-started"
    h.send("p2", Ask(Query.BOARD))
    assert last(h, "p2") == "seats-list"
    assert all(n in h.channel.inbox("p2")[-1]["text"] for n in NAMES[:5])
    assert h.table(table_id).state is None


def test_open_with_an_unknown_theme_is_refused() -> None:
    h = Harness(seed=7)
    h.send("p0", OpenTable("Ximena", theme="nope"))
    assert h.channel.ids("p0") == ["unknown-theme"]
    assert h.store.execute("SELECT count(*) FROM game_tables").fetchone()[0] == 0
