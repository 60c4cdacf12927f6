"""The features every channel has, owned by the service: leaving a lobby, renaming, votes at the table, a computer
player standing in for an absent one, and names typed without accents."""

from __future__ import annotations

import random

from moderator.catalog import Catalog, messages_dir, read_file
from moderator.commands import (
    REMINDER_MINUTES,
    AddComputers,
    Choose,
    Decide,
    Host,
    HostCommand,
    Join,
    Leave,
    OpenTable,
    RecordVotes,
    Rename,
    SetReminders,
    SetTableVoting,
    StandIn,
    Start,
)
from moderator.engine import Phase, awaiting
from moderator.engine.events import VoteCast
from moderator.grammar import grammar
from moderator.store import TableStatus
from tests.fakes import Harness, last
from tests.test_service import NAMES, human_table, replayed, until_phase


def test_a_player_leaves_a_lobby_and_the_table_sees_the_seats_left() -> None:
    h = Harness(seed=1)
    table_id, _, _addresses = h.seat_table(NAMES[:4])
    h.send("p2", Leave())
    assert h.table(table_id).names == (NAMES[0], NAMES[1], NAMES[3])
    assert "you-left" in h.channel.ids("p2")
    assert last(h, "p1") == "seat-left"


def test_a_host_who_leaves_hands_the_table_to_the_next_person_or_closes_it_when_alone() -> None:
    h = Harness(seed=1)
    table_id, _, _ = h.seat_table(NAMES[:3])
    h.send("p0", Leave())
    table = h.table(table_id)
    assert table.names == (NAMES[1], NAMES[2]) and table.is_host(h.channel_name, "p1")
    assert "host-passed" in h.channel.ids("p2")
    alone, _ = h.open("q0", "Zoe")
    h.send("q0", AddComputers(4))
    h.send("q0", Leave())
    assert h.table(alone).status is TableStatus.CLOSED


def test_nobody_leaves_a_game_under_way() -> None:
    h, table_id, _ = human_table(5, seed=2)
    h.send("p3", Leave())
    assert last(h, "p3") == "leave-in-game"
    assert len(h.table(table_id).seats) == 5


def test_a_rename_in_the_lobby_is_the_game_name_and_in_a_game_only_the_name_shown() -> None:
    h = Harness(seed=3)
    table_id, _, _ = h.seat_table(NAMES[:5])
    h.send("p1", Rename("Robert"))
    assert h.table(table_id).names[1] == "Robert"
    h.send("p0", Start())
    h.send("p2", Rename("Cyrus"))
    table = h.table(table_id)
    assert table.names[2] == "Cyrus" and table.record_names[2] == NAMES[2]
    assert last(h, "p0") == "renamed-in-game"
    rng = random.Random(3)
    for _ in range(20):  # the game goes on, and its record still replays under the names it started with
        state = h.table(table_id).state
        assert state is not None
        h.press(h.address_of(table_id, rng.choice(awaiting(state))), rng)
    result = replayed(h, table_id)
    assert result.record.players[2] == NAMES[2] and result.error is None


def test_a_name_needs_a_letter_or_digit() -> None:
    h = Harness(seed=3)
    table_id, _, _ = h.seat_table(NAMES[:3])
    h.send("p1", Rename("\U0001f600 \U0001f600"))
    assert last(h, "p1") == "name-refused" and h.table(table_id).names[1] == NAMES[1]


def test_nobody_may_be_called_what_the_texts_call_their_reader() -> None:
    h = Harness(seed=3)
    table_id, code, _ = h.seat_table(NAMES[:2])
    for i, name in enumerate(("You", " du ", "YOURSELF!", "Dich")):  # any case, either language, at any table
        h.send(f"q{i}", Join(code, name))
        assert h.channel.ids(f"q{i}") == ["name-reserved-join"]
        assert h.channel.inbox(f"q{i}")[0]["text"].startswith(f'"{name.strip()}" cannot be a name here')
    h.send("p1", Rename("you"))
    assert last(h, "p1") == "name-reserved" and h.table(table_id).names == NAMES[:2]
    h.send("q9", Join(code, "Youssef"))  # a name that only starts like one is a name
    assert h.table(table_id).names == (*NAMES[:2], "Youssef")
    other, _ = h.open("host2", "Du")  # a table still opens (Telegram names its host after the account)
    assert h.table(other).names == (Catalog.load().text("host-name"),)
    assert last(h, "host2") == "host-name-refused"  # and is told why they are called Host


def test_with_votes_at_the_table_nobody_gets_a_ballot_and_the_president_records_the_ja_voters() -> None:
    h = Harness(seed=4)
    table_id, _, addresses = h.seat_table(NAMES[:5])
    h.send("p0", SetTableVoting(True))
    assert last(h, "p3") == "table-votes-on"
    h.send("p0", Start())
    rng = random.Random(4)
    until_phase(h, table_id, Phase.ELECTION, rng)
    table = h.table(table_id)
    assert table.state is not None and table.state.president is not None
    assert not any(h.channel.ids(a)[-1] == "prompt-vote" for a in addresses)
    president = addresses[table.state.president]
    assert last(h, president) == "physical-vote-prompt"
    voters = list(table.names)[:3]
    h.send(president, RecordVotes(tuple(voters)))
    state = h.table(table_id).state
    assert state is not None and state.phase is not Phase.ELECTION


def test_votes_at_the_table_are_switched_before_a_game_and_after_one_for_the_rematch_never_during_it() -> None:
    h, table_id, addresses = human_table(5, seed=4)
    h.send("p0", SetTableVoting(True))
    assert last(h, "p0") == "table-votes-not-now"
    assert not h.table(table_id).row.options.get("physical_voting")
    h.send("p0", Host(HostCommand.END))
    h.send("p0", SetTableVoting(True))
    assert last(h, "p3") == "table-votes-on"
    h.send("p0", Host(HostCommand.REMATCH))
    until_phase(h, table_id, Phase.ELECTION, random.Random(4))
    state = h.table(table_id).state
    assert state is not None and state.president is not None
    assert last(h, addresses[state.president]) == "physical-vote-prompt"


def test_the_president_types_ja_voters_whose_names_have_spaces() -> None:
    # The last: a comma left out ("Bob Lee cy") still reads each name, as before names could have spaces.
    names = ["Mary Ann", "Ann", "Bob Lee", "Cy", "Dee"]
    for typed in ("votes Mary Ann Bob Lee Cy", "votes mary ann, Bob Lee, cy", "votes mary ann, Bob Lee cy"):
        h = Harness(seed=4)
        table_id, _, addresses = h.seat_table(names)
        h.send("p0", SetTableVoting(True))
        h.send("p0", Start())
        until_phase(h, table_id, Phase.ELECTION, random.Random(4))
        table = h.table(table_id)
        assert table.state is not None and table.state.president is not None
        command = grammar().parse(typed)
        assert isinstance(command, RecordVotes), typed
        logged = len(table.log)
        h.send(addresses[table.state.president], command)
        ja = {names[e.seat] for e in h.table(table_id).log[logged:] if isinstance(e, VoteCast) and e.ja}
        assert ja == {"Mary Ann", "Bob Lee", "Cy"}, typed


def test_the_host_types_a_seating_order_of_names_with_spaces() -> None:
    names = ["Mary Ann", "Ann", "Bob Lee", "Cy", "Dee"]
    for typed in ("seats Dee Cy Bob Lee Ann Mary Ann", "seats dee, cy, bob lee, ann, mary ann",
                  "seats dee, cy bob lee, ann, mary ann"):  # a comma left out
        h = Harness(seed=4)
        table_id, _, _ = h.seat_table(names)
        command = grammar().parse(typed)
        assert command is not None, typed
        h.send("p0", command)
        assert h.table(table_id).names == ("Dee", "Cy", "Bob Lee", "Ann", "Mary Ann"), typed


def test_a_persian_host_types_the_seating_order_with_persian_commas() -> None:
    """A Persian keyboard's comma is ``،``: the order typed with it is read between the commas, as with Latin ones,
    so "مریم، کاظمی" is two people even where "مریم کاظمی" is a third."""
    names = ["مریم کاظمی", "علی", "مریم", "کاظمی", "Bob"]
    h = Harness(seed=4)
    table_id, _, _ = h.seat_table(names)
    command = grammar().parse("ترتیب Bob، مریم، کاظمی، علی، مریم کاظمی")
    assert command is not None
    h.send("p0", command)
    assert h.table(table_id).names == ("Bob", "مریم", "کاظمی", "علی", "مریم کاظمی")


def test_a_computer_player_stands_in_for_an_absent_player_and_gives_the_seat_back() -> None:
    h, table_id, addresses = human_table(5, seed=5)
    away = 2
    name = h.table(table_id).names[away]
    h.send("p0", StandIn(name))
    table = h.table(table_id)
    assert table.seats[away].computer and away in table.memories
    assert "stand-in" in h.channel.ids("p1")
    assert table.state is not None and away not in awaiting(table.state)  # the computer player decided at once
    h.send(addresses[away], Choose("1"))
    assert last(h, addresses[away]) == "seat-stood-in"
    h.send("p0", StandIn(name, back=True))
    table = h.table(table_id)
    assert not table.seats[away].computer and away not in table.memories
    assert "knowledge-title" in h.channel.ids(addresses[away])[-3:]
    h.send("p0", StandIn(name, back=True))
    assert last(h, "p0") == "stand-in-refused"  # it is the player's own again


def test_a_name_typed_without_accents_finds_the_player() -> None:
    h = Harness(seed=6)
    names = ("José", "Łukasz", "Zoë", "Dee", "Eve")
    table_id, code = h.open("p0", names[0])
    for i, name in enumerate(names[1:], 1):
        h.send(f"p{i}", Join(code, name))
    h.send("p0", Start())
    state = h.table(table_id).state
    assert state is not None and state.president is not None
    president = f"p{state.president}"
    target = next(n for i, n in enumerate(names) if i != state.president and n != "Dee" and n != "Eve")
    typed = {"José": "jose", "Łukasz": "lukasz", "Zoë": "zoe"}[target]
    h.send(president, Decide("nominate", typed))
    state = h.table(table_id).state
    assert state is not None and state.chancellor == names.index(target)


def test_the_grammar_takes_every_theme_and_languages_vote_words() -> None:
    g = grammar()
    for word in ("ja", "Ja!", "yes", "approve", "Dafür", "dafur"):
        assert g.parse(word) == Decide("vote", "ja"), word
    for word in ("nein", "no", "reject", "Dagegen"):
        assert g.parse(word) == Decide("vote", "nein"), word
    assert g.parse("open Ann") == OpenTable("Ann")


def test_on_and_off_are_the_catalogs_switch_words_in_every_language() -> None:
    g = grammar()
    for lang in ("en", "de"):
        words = read_file(messages_dir() / "classic" / f"{lang}.toml").words
        for key, on in (("switch-on", True), ("switch-off", False)):
            for word in words[key].split(","):
                assert g.parse(f"tablevotes {word.strip().upper()}") == SetTableVoting(on), (lang, word)
    assert g.parse("reminders aus") == SetReminders(None)
    assert g.parse("reminders on") == g.parse("reminders ein") == SetReminders(REMINDER_MINUTES)  # the usual minutes
    for lang in ("en", "de"):  # as help says
        assert f": {REMINDER_MINUTES})" in Catalog.load("classic", lang).text("word-reminders"), lang
    assert g.parse("tablevotes Dafür") == SetTableVoting(True)  # a Ja word switches it on
    assert g.parse("tablevotes maybe") is None


def test_idle_finished_tables_and_lobbies_close_and_leave_every_lookup() -> None:
    """A finished game (here ended by the host) and an unstarted lobby close after a week without an input, and
    the address's lookup (every input makes it) no longer holds them."""
    from moderator.commands import Host, HostCommand
    from moderator.service import CLOSE_IDLE_DAYS

    h, finished, addresses = human_table(5, seed=3)
    h.send(addresses[0], Host(HostCommand.END))
    lobby, _ = h.open("q0", "Zoe")
    h.service.tick()  # the first sweep: nothing is idle yet
    assert h.table(finished).status is TableStatus.OVER
    h.clock.advance(CLOSE_IDLE_DAYS * 86400 + 3601)
    h.service.tick()
    assert h.table(finished).status is TableStatus.CLOSED and h.table(lobby).status is TableStatus.CLOSED
    assert h.store.table_ids_of(h.channel_name, addresses[0]) == []
    assert h.store.table_ids_of(h.channel_name, "q0") == []
    assert h.service.export(finished) is not None  # closed, still exportable
