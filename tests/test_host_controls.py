"""Host controls through the service: pause and resume, nudge, a seat's new phone, end, rematch, physical
voting, theme and language. None of them ever takes an action on a player's behalf."""

from __future__ import annotations

import json
import random

from moderator import record as records
from moderator.commands import (
    AddComputers,
    Ask,
    Choose,
    Host,
    HostCommand,
    Join,
    MovePhone,
    Query,
    RecordVotes,
    SetLanguage,
    SetTheme,
    Start,
)
from moderator.engine import Phase, awaiting
from moderator.engine import events as ev
from moderator.lobby import CODE_ALPHABET
from tests.fakes import Harness, last
from tests.test_service import NAMES, human_table, replayed, snapshot, until_phase


def owing_addresses(h: Harness, table_id: str) -> list[str]:
    table = h.table(table_id)
    assert table.state is not None
    return [table.seats[s].address for s in awaiting(table.state)]


# --- pause and resume -----------------------------------------------------------------------------------


def test_pause_refuses_decisions_until_resume() -> None:
    rng = random.Random(1)
    h, table_id, addresses = human_table(6, seed=1)
    until_phase(h, table_id, Phase.ELECTION, rng)
    h.send("p0", Host(HostCommand.PAUSE))
    assert h.table(table_id).row.status == "paused"
    assert all(last(h, a) == "game-paused" for a in addresses)
    before = snapshot(h, table_id)
    voter = owing_addresses(h, table_id)[0]
    prompt = h.channel.last_prompt(voter)
    assert prompt is not None
    h.send(voter, Choose(prompt["choices"][0]["token"], prompt["decision"]))
    assert last(h, voter) == "game-is-paused"
    assert snapshot(h, table_id)[:3] == before[:3]
    # Questions still work while paused.
    h.send(voter, Ask(Query.BOARD))
    assert last(h, voter) == "board-title"
    owing = set(owing_addresses(h, table_id))
    counts = h.channel.count()
    h.send("p0", Host(HostCommand.RESUME))
    assert h.table(table_id).row.status == "playing"
    # Everyone hears it; whoever owes a decision gets their prompt again (with the current decision number).
    for address in addresses:
        ids = h.channel.ids(address)[counts[address]:]
        assert "game-resumed" in ids
        assert ("prompt-vote" in ids) == (address in owing), (address, ids)
    h.press(voter, rng)
    assert h.state(table_id).votes[addresses.index(voter)] is not None


def test_computers_wait_while_paused() -> None:
    h = Harness(seed=2)
    table_id, _ = h.open("p0", "Ximena")
    h.send("p0", AddComputers(6))
    h.send("p0", Host(HostCommand.PAUSE))
    assert last(h, "p0") == "game-not-started"  # nothing to pause before the start
    h.send("p0", Host(HostCommand.NUDGE))
    assert last(h, "p0") == "nothing-to-nudge"
    h.send("p0", Start())
    state = h.table(table_id).state
    assert state is not None and state.phase is not Phase.GAME_OVER
    assert awaiting(state) and 0 in awaiting(state)
    h.send("p0", Host(HostCommand.PAUSE))
    step = h.state(table_id).step
    assert h.service.run_computers(table_id) == 0
    assert h.state(table_id).step == step
    h.send("p0", Host(HostCommand.RESUME))
    h.play_out(table_id, random.Random(2))
    assert h.state(table_id).phase is Phase.GAME_OVER


# --- nudge ------------------------------------------------------------------------------------------------


def test_nudge_prompts_whoever_owes_and_never_acts_for_them() -> None:
    rng = random.Random(3)
    h, table_id, addresses = human_table(7, seed=3)
    until_phase(h, table_id, Phase.ELECTION, rng)
    for address in owing_addresses(h, table_id)[:3]:
        h.press(address, rng)
    owing = owing_addresses(h, table_id)
    assert len(owing) == 4
    before = snapshot(h, table_id)
    counts = h.channel.count()
    h.send("p0", Host(HostCommand.NUDGE))
    assert snapshot(h, table_id) == before
    table = h.table(table_id)
    for address in addresses:
        new = h.channel.inbox(address)[counts[address]:]
        prompts = [b for b in new if b["choices"]]
        if address in owing:
            assert [b["message_id"] for b in prompts] == ["prompt-vote"]
            assert prompts[0]["decision"] == table.row.decision_step
        else:
            assert prompts == []
    report = h.channel.inbox("p0")[-1]
    assert report["message_id"] == "nudge"
    for address in owing:
        assert table.seats[addresses.index(address)].name in report["text"]
    # The nudged prompt works like the first one.
    h.press(owing[0], rng)
    assert len(owing_addresses(h, table_id)) == 3


def test_only_the_host_nudges_pauses_ends() -> None:
    h, table_id, _ = human_table(5, seed=4)
    before = snapshot(h, table_id)
    for command in HostCommand:
        counts = h.channel.count()
        h.send("p3", Host(command))
        assert last(h, "p3") == "not-host"
        assert h.channel.count()["p3"] == counts["p3"] + 1
        assert all(h.channel.count()[a] == counts[a] for a in counts if a != "p3")
    assert snapshot(h, table_id) == before


REACHED_BY = {"lobby": (), "playing": (Start(),), "paused": (Start(), Host(HostCommand.PAUSE)),
              "over": (Start(), Host(HostCommand.END))}


def table_in(status: str) -> tuple[Harness, str]:
    """A table of its host and four computer players, in ``status`` (lobby, playing, paused, over)."""
    h = Harness(seed=3)
    table_id, _ = h.open("p0", "Ximena")
    h.send("p0", AddComputers(4))
    for command in REACHED_BY[status]:
        h.send("p0", command)
    assert h.table(table_id).row.status == status
    return h, table_id


def test_the_host_page_offers_exactly_the_game_controls_the_table_takes_in_each_status() -> None:
    game = (HostCommand.PAUSE, HostCommand.RESUME, HostCommand.NUDGE, HostCommand.END, HostCommand.REMATCH)
    for status in ("lobby", "playing", "paused", "over"):
        h, table_id = table_in(status)
        view = h.service.pages.host_view(table_id, "en", ())
        assert view.seat_controls is (status in ("playing", "paused")), status
        for command in game:
            h, table_id = table_in(status)
            h.send("p0", Host(command))
            taken = last(h, "p0") not in ("game-not-started", "nothing-to-nudge")
            assert taken is (command.value in view.controls), (status, command)


# --- a seat moves to a new phone ------------------------------------------------------------------------


def test_a_seat_moves_to_a_new_phone() -> None:
    rng = random.Random(5)
    h, table_id, addresses = human_table(6, seed=5)
    state = h.table(table_id).state
    assert state is not None and state.president is not None
    seat = state.president
    old = addresses[seat]
    name = NAMES[seat]
    h.send("p0", MovePhone(name.lower()))
    code = move_code(h)
    # Only the host gets the code.
    assert not any(code in b["text"] for a in addresses if a != "p0" for b in h.channel.inbox(a))
    h.send("new-phone", Join(code, ""))
    ids = h.channel.ids("new-phone")
    assert ids[0] == "phone-moved" and "knowledge-title" in ids and ids[-1] == "prompt-nominate"
    table = h.table(table_id)
    assert table.seats[seat].address == "new-phone" and table.seats[seat].name == name
    # The old phone no longer controls the seat; the new one does.
    old_prompt = h.channel.last_prompt(old)
    assert old_prompt is not None
    before = snapshot(h, table_id)
    h.send(old, Choose(old_prompt["choices"][0]["token"], old_prompt["decision"]))
    assert last(h, old) == "not-at-table"
    assert snapshot(h, table_id) == before
    h.press("new-phone", rng)
    assert h.state(table_id).phase is Phase.ELECTION
    # The code works once.
    h.send("thief", Join(code, "Thief"))
    assert h.channel.ids("thief") == ["no-such-table"]
    assert h.table(table_id).seats[seat].address == "new-phone"
    # Later messages go to the new phone only.
    counts = h.channel.count()
    h.send(addresses[(seat + 1) % 6], Ask(Query.BOARD))
    until_phase(h, table_id, Phase.NOMINATION, rng)
    assert h.channel.count().get(old, 0) == counts.get(old, 0)
    assert h.channel.count()["new-phone"] > counts["new-phone"]


def move_code(h: Harness, host: str = "p0") -> str:
    reply = h.channel.inbox(host)[-1]
    assert reply["message_id"] == "move-code"
    return next(str(w).strip(".,:") for w in reply["text"].split()
                if len(w.strip(".,:")) >= 6 and set(w.strip(".,:")) <= set(CODE_ALPHABET))


def test_a_phone_that_plays_a_seat_cannot_take_another() -> None:
    h, table_id, addresses = human_table(5, seed=13)
    h.send("p0", MovePhone(NAMES[3]))
    code = move_code(h)
    before = snapshot(h, table_id)
    counts = h.channel.count()
    h.send("p1", Join(code, ""))
    assert h.channel.ids("p1")[counts["p1"]:] == ["already-seated"]
    assert snapshot(h, table_id) == before
    assert [s.address for s in h.table(table_id).seats] == addresses
    # The code still works from a phone without a seat.
    h.send("spare", Join(code, ""))
    assert h.table(table_id).seats[3].address == "spare"


def test_move_phone_needs_a_seat_name() -> None:
    h, _, _ = human_table(5, seed=6)
    h.send("p0", MovePhone("Nobody"))
    assert last(h, "p0") == "seating-mismatch"
    h.send("p2", MovePhone(NAMES[2]))
    assert last(h, "p2") == "not-host"


def test_a_seat_moves_to_a_new_phone_in_the_lobby() -> None:
    h = Harness(seed=7)
    table_id, _, _ = h.seat_table(NAMES[:5])
    h.send("p0", MovePhone(NAMES[3]))
    h.send("new-phone", Join(move_code(h), ""))
    assert h.channel.ids("new-phone")[0] == "phone-moved"
    assert h.table(table_id).seats[3].address == "new-phone"


# --- end and rematch ------------------------------------------------------------------------------------


def test_end_stops_the_game_and_rematch_deals_again() -> None:
    rng = random.Random(8)
    h, table_id, addresses = human_table(7, seed=8)
    until_phase(h, table_id, Phase.LEGISLATIVE_PRESIDENT, rng)
    h.send("p3", Host(HostCommand.REMATCH))
    assert last(h, "p3") == "not-host"
    h.send("p0", Host(HostCommand.REMATCH))
    assert last(h, "p0") == "game-not-started"  # no rematch while a game runs
    h.send("p0", Host(HostCommand.END))
    table = h.table(table_id)
    assert table.row.status == "over"
    assert all("game-ended-by-host" in h.channel.ids(a) for a in addresses)
    # The end says what it is by its kind (a channel may point to the table's screen after it).
    ends = [b for a in addresses for b in h.channel.inbox(a) if b["message_id"] == "game-ended-by-host"]
    assert ends and all(b["kind"] == "end" for b in ends)
    # Over is over: everyone is told who was who, as at the end of a decided game.
    for a in addresses:
        roles = h.channel.inbox(a)[-1]
        assert roles["message_id"] == "roles-revealed" and not roles["secret"]
        assert all(name in roles["text"] for name in table.names)
    # Nobody decides anything in an ended game.
    before = snapshot(h, table_id)
    owing = owing_addresses(h, table_id)[0]
    prompt = h.channel.last_prompt(owing)
    assert prompt is not None
    counts = h.channel.count()
    h.send(owing, Choose(prompt["choices"][0]["token"], prompt["decision"]))
    assert snapshot(h, table_id) == before
    assert h.channel.count()[owing] == counts[owing] + 1
    assert not h.channel.inbox(owing)[-1]["choices"]
    h.send("p0", Host(HostCommand.END))
    assert last(h, "p0") == "game-not-started"
    first_game = table.row.game
    first_record = h.service.export(table_id)
    assert first_record is not None
    # Rematch: the same seats, a new game.
    counts = h.channel.count()
    h.send("p0", Host(HostCommand.REMATCH))
    table = h.table(table_id)
    assert table.row.status == "playing" and table.row.game == first_game + 1
    assert table.names == NAMES[:7] and [s.address for s in table.seats] == addresses
    assert table.state is not None and table.state.step == 0 and table.actions == []
    for address in addresses:
        ids = h.channel.ids(address)[counts[address]:]
        assert ids[0] == "rematch" and ids.count("deal-role") == 1
    assert h.service.export(table_id) != first_record
    h.play_out(table_id, rng)
    assert replayed(h, table_id).state == h.table(table_id).state
    # The first game's actions are kept apart from the second's.
    assert len(h.store.actions(table_id, first_game)) == len(first_record["actions"])


def test_rematch_after_a_finished_game() -> None:
    rng = random.Random(9)
    h, table_id, _ = human_table(5, seed=9)
    h.play_out(table_id, rng)
    first = h.table(table_id).state
    h.send("p0", Host(HostCommand.REMATCH))
    table = h.table(table_id)
    assert table.state is not None and table.state.step == 0 and table.state != first
    assert table.row.status == "playing"
    h.play_out(table_id, rng)
    assert h.state(table_id).phase is Phase.GAME_OVER


def test_every_game_of_a_table_stays_exportable_after_rematches() -> None:
    """A rematch keeps the last game's setup: each game exports its own record, and each replays to its end,
    after a restart too (the records come from the database)."""
    rng = random.Random(10)
    h, table_id, _ = human_table(5, seed=10)
    finals = {}
    for _ in range(3):
        h.play_out(table_id, rng)
        table = h.table(table_id)
        assert table.state is not None and table.state.phase is Phase.GAME_OVER
        finals[table.row.game] = (table.names, table.state)
        h.send("p0", Host(HostCommand.REMATCH))
    h.service.tables.forget()
    assert h.table(table_id).row.game == 4
    records_seen = []
    for game, (names, state) in finals.items():
        exported = h.service.export(table_id, game)
        assert exported is not None
        result = records.replay(records.parse(exported))
        assert result.error is None and result.state == state
        assert exported["players"] == list(names)
        records_seen.append(exported)
    assert len({json.dumps(r, sort_keys=True) for r in records_seen}) == 3
    assert h.service.export(table_id, 5) is None and h.service.export(table_id, 0) is None


def test_a_button_from_the_previous_game_is_stale_after_a_rematch() -> None:
    """A rematch restarts the steps, but a prompt from the last game still says "no longer current"."""
    rng = random.Random(9)
    h, table_id, _ = human_table(5, seed=9)
    first_president = h.state(table_id).president
    old_prompt = h.channel.last_prompt(f"p{first_president}")
    assert old_prompt is not None and old_prompt["choices"]
    h.play_out(table_id, rng)
    h.send("p0", Host(HostCommand.REMATCH))
    table = h.table(table_id)
    assert table.state is not None and table.state.step == 0
    before = snapshot(h, table_id)
    for seat in awaiting(table.state):
        h.send(f"p{seat}", Choose(old_prompt["choices"][0]["token"], old_prompt["decision"]))
        assert last(h, f"p{seat}") == "input-stale"
    assert snapshot(h, table_id) == before


# --- physical voting ------------------------------------------------------------------------------------


def test_physical_voting_the_president_records_the_votes() -> None:
    rng = random.Random(10)
    h = Harness(seed=10)
    table_id, _, addresses = h.seat_table(NAMES[:7], physical_voting=True)
    h.start(table_id)
    state = h.table(table_id).state
    assert state is not None and state.president is not None
    president = addresses[state.president]
    h.press(president, rng)
    state = h.table(table_id).state
    assert state is not None and state.phase is Phase.ELECTION
    # Nobody gets a vote prompt; the President is asked to record the cards.
    for address in addresses:
        assert not any(b["message_id"] == "prompt-vote" for b in h.channel.inbox(address))
    assert last(h, president) == "physical-vote-prompt"
    # Nobody else may record, and a name nobody has changes nothing.
    other = next(a for a in addresses if a != president)
    before = snapshot(h, table_id)
    h.send(other, RecordVotes((NAMES[0], NAMES[1])))
    assert last(h, other) == "input-nothing-owed"
    h.send(president, RecordVotes((NAMES[0], "Nobody")))
    assert last(h, president) == "input-unparseable"
    assert snapshot(h, table_id) == before
    ja = (NAMES[1], NAMES[2], NAMES[3], NAMES[5].lower())
    h.send(president, RecordVotes(ja))
    table = h.table(table_id)
    decided = [e for e in table.log if isinstance(e, ev.ElectionDecided)]
    assert len(decided) == 1
    assert dict(decided[0].votes) == {s: NAMES[s] in {"Quentin", "Zora", "Yusuf", "Kasimir"} for s in range(7)}
    assert decided[0].elected
    assert table.state is not None and table.state.phase is Phase.LEGISLATIVE_PRESIDENT
    assert table.state.president is not None
    assert all(e.seat == s for s, e in enumerate(x for x in table.log if isinstance(x, ev.VoteCast)))
    # Every vote by name, to everyone.
    for address in addresses:
        result = next(b for b in h.channel.inbox(address) if b["message_id"] == "election-elected")
        assert all(name in result["text"] for name in NAMES[:7])
    # The rest of the game still goes through prompts.
    h.press(addresses[table.state.president], rng)
    assert h.state(table_id).phase is Phase.LEGISLATIVE_CHANCELLOR


def test_physical_voting_nudge_reminds_the_president() -> None:
    rng = random.Random(11)
    h = Harness(seed=11)
    table_id, _, addresses = h.seat_table(NAMES[:5], physical_voting=True)
    h.start(table_id)
    state = h.table(table_id).state
    assert state is not None and state.president is not None
    president = addresses[state.president]
    h.press(president, rng)
    counts = h.channel.count()
    h.send("p0", Host(HostCommand.NUDGE))
    for address in addresses:
        new = h.channel.ids(address)[counts[address]:]
        assert "prompt-vote" not in new, (address, new)
    assert "physical-vote-prompt" in h.channel.ids(president)[counts[president]:]


# --- theme and language ---------------------------------------------------------------------------------


def test_theme_and_language() -> None:
    h = Harness(seed=12)
    table_id, _, addresses = h.seat_table(NAMES[:5])
    h.send("p0", SetTheme("corporate"))
    assert h.table(table_id).row.theme == "corporate"
    assert all(last(h, a) == "theme-set" for a in addresses)
    h.send("p2", SetTheme("classic"))
    assert last(h, "p2") == "not-host"
    h.send("p0", SetTheme("nope"))
    assert last(h, "p0") == "unknown-theme"
    assert h.table(table_id).row.theme == "corporate"
    h.send("p1", SetLanguage("de"))
    assert last(h, "p1") == "language-set"
    assert h.table(table_id).seats[1].language == "de"
    h.send("p1", SetLanguage("xx"))
    assert last(h, "p1") == "unknown-language"
    h.start(table_id)
    german = next(b["text"] for b in h.channel.inbox("p1") if b["message_id"] == "game-started")
    english = next(b["text"] for b in h.channel.inbox("p2") if b["message_id"] == "game-started")
    assert german != english
