"""What a person types wrong, answered by the service in the catalogs' words on every channel: a name nobody
has, yourself, a word alone that needs more, a name that is taken, a player's name at a vote, the same claim
twice; and ``waiting`` says who the table waits for, not the whole board. Each is typed by text message through
Twilio's signed webhook (``tests.test_sms.Phones``) and, for the rest of the service's answers, by a seat of the
recording channel."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from moderator.catalog import Catalog
from moderator.claims import Accusation, Clearance
from moderator.commands import AddComputers, Decide
from moderator.engine import Phase
from moderator.grammar import grammar
from moderator.transports.sms import CAPABILITIES
from tests.fakes import Harness
from tests.test_sms import Phones, number, open_table

EN = Catalog.load("classic", "en")
DE = Catalog.load("classic", "de")


@pytest.fixture
def texting() -> Iterator[tuple[Phones, list[str]]]:
    """Five phones at a table started by text, its seats in the order the host texted."""
    p = Phones()
    seats = open_table(p, ("Ximena", "Quentin", "Zora", "Yusuf", "Wanda"))
    p.text(number(0), "GO")
    yield p, seats
    p.close()


def reply(p: Phones, phone: str, typed: str) -> str:
    """What ``phone`` was texted back for ``typed``."""
    before = len(p.inbox(phone))
    p.text(phone, typed)
    answers = p.inbox(phone)[before:]
    assert answers, f"nothing came back for {typed!r}"
    return "\n".join(answers)


def test_accusing_a_name_nobody_has_says_nobody_is_called_that_by_text(texting: tuple[Phones, list[str]]) -> None:
    p, _ = texting
    said = reply(p, number(1), "ACCUSE Zorro")
    assert said.startswith(EN.text("input-no-such-player", sms=True, text="Zorro"))
    assert "does not fit" not in said
    said = reply(p, number(1), "trust comp 4")
    assert said.startswith(EN.text("input-no-such-player", sms=True, text="comp 4"))
    assert p.table_of(number(0)).said == []


def test_accusing_or_trusting_yourself_says_you_cannot_by_text(texting: tuple[Phones, list[str]]) -> None:
    p, _ = texting
    assert reply(p, number(1), "accuse quentin") == EN.text("claim-accuse-yourself", sms=True)
    assert reply(p, number(1), "TRUST Quentin") == EN.text("claim-trust-yourself", sms=True)
    assert p.table_of(number(0)).said == []


@pytest.mark.parametrize("word", ["CLAIM", "accuse", "Trust", "rename"])
def test_a_word_alone_that_needs_more_says_what_follows_it_by_text(
        texting: tuple[Phones, list[str]], word: str) -> None:
    p, _ = texting
    said = reply(p, number(2), word)
    verb = grammar().verb(word)
    assert verb is not None
    assert said == EN.text("input-word-alone", sms=True, word=word.upper(), args=EN.text(f"args-{verb.value}"))
    assert "did not understand" not in said


def test_a_name_another_player_has_is_refused_by_text(texting: tuple[Phones, list[str]]) -> None:
    p, _ = texting
    assert reply(p, number(2), "rename quentin") == EN.text("name-taken", name="quentin")
    assert reply(p, number(2), "RENAME Wánda") == EN.text("name-taken", name="Wanda")  # a text drops the accent
    assert "Zora" in p.table_of(number(0)).names


def test_the_same_claim_texted_twice_is_told_to_the_table_once(texting: tuple[Phones, list[str]]) -> None:
    p, _ = texting
    assert reply(p, number(2), "accuse Yusuf").startswith(EN.text("claim-noted", sms=True, claim="")[:10])
    again = reply(p, number(2), "ACCUSE yusuf")
    assert again.startswith(EN.text("claim-repeated", claim="")) and "Yusuf" in again
    table = p.table_of(number(0))
    assert [s.claim for s in table.said] == [Accusation(table.names.index("Zora"), table.names.index("Yusuf"))]


def test_waiting_by_text_says_who_the_table_waits_for_and_not_the_whole_board(
        texting: tuple[Phones, list[str]]) -> None:
    p, _ = texting
    table = p.table_of(number(0))
    assert table.state is not None and table.state.phase is Phase.NOMINATION and table.state.president is not None
    president = table.names[table.state.president]
    said = reply(p, number(3), "waiting")
    assert said == EN.text("board-waiting", names=president, phase=EN.text("phase-nomination"))


# --- the same answers on any channel: the recording channel's seats -------------------------------------------


def ann_and_computers(language: str = "en") -> tuple[Harness, str]:
    """Ann (at p0) and four computer players, a game started."""
    h = Harness(seed=3)
    table_id, _ = h.open("p0", "Ann", language=language)
    h.send("p0", AddComputers(4))
    h.start(table_id)
    return h, table_id


def typed(h: Harness, address: str, line: str) -> list[str]:
    """The texts ``address`` got for a line typed as every channel hands one over (parsed by the grammar)."""
    before = len(h.channel.inbox(address))
    h.send(address, grammar().parse(line) or Decide("?", line), raw=line)
    return [body["text"] for body in h.channel.inbox(address)[before:]]


def test_an_ambiguous_name_in_an_accusation_lists_whom_it_could_mean() -> None:
    h, _ = ann_and_computers()
    said = typed(h, "p0", "accuse comp")
    assert said[0].startswith('"comp" could mean Computer 1, Computer 2, Computer 3, Computer 4.')


def test_a_claim_about_a_player_nobody_is_names_the_players() -> None:
    h, _ = ann_and_computers()
    said = typed(h, "p0", "claim Zorro fascist")
    assert said[0].startswith(EN.text("input-no-such-player", text="Zorro",
                                      options="Ann, Computer 1, Computer 2, Computer 3, Computer 4"))


def test_help_shows_what_follows_each_word_that_needs_more() -> None:
    h, _ = ann_and_computers()
    text = typed(h, "p0", "help")[0]
    assert "\nrename Sam: " in text and "\naccuse Bob: " in text and "\ntrust Bob: " in text
    assert "\nclaim FFL FL: " in text
    assert "\nboard: " in text  # a word that takes nothing is shown alone


def test_a_word_alone_is_answered_in_german_with_its_german_word() -> None:
    h, _ = ann_and_computers("de")
    said = typed(h, "p0", "beschuldige")
    assert said == [DE.text("input-word-alone", word="beschuldige") + "\n"
                    + DE.text("help-line", word="beschuldige Bob", what=DE.text("word-accuse"))]


def test_a_players_name_typed_at_a_vote_is_no_command_for_computers() -> None:
    h, table_id = ann_and_computers()
    rng_moves = 0
    while h.table(table_id).state.phase is not Phase.ELECTION:  # type: ignore[union-attr]
        prompt = h.channel.last_prompt("p0")
        assert prompt is not None
        h.send("p0", grammar().parse("1") or Decide("?", "1"), raw="1")
        rng_moves += 1
        assert rng_moves < 5
    said = typed(h, "p0", "Computer 1")
    assert said[0] == EN.text("input-unparseable", text="Computer 1") + "\n" + EN.text("nothing-changed")
    assert not any(EN.text("lobby-closed") in text for text in said)
    assert h.table(table_id).state.phase is Phase.ELECTION  # type: ignore[union-attr]


def test_a_player_called_like_a_command_still_has_the_command() -> None:
    h, table_id = ann_and_computers()
    typed(h, "p0", "rename Board")
    assert h.table(table_id).names[0] == "Board"
    assert typed(h, "p0", "board")[0].startswith(EN.text("board-title"))


ACCUSED = [
    ("es", "ACUSO a Yusuf", "accuse"),  # Spanish puts "a" before a person
    ("es", "confío en Yusuf", "trust"),
    ("pt", "acuso o Yusuf", "accuse"),
    ("pt", "confio no Yusuf", "trust"),
    ("it", "mi fido di Yusuf", "trust"),
    ("pl", "oskarżam Yusufa", "accuse"),  # a declined name: Yusuf's accusative
    ("pl", "ufam Wandzie", None),  # a stem that changes (Wanda, Wandzie) is not guessed at: nobody is called that
    ("pl", "ufam Wandę", "trust"),
    ("ru", "обвиняю Yusufa", "accuse"),
]


@pytest.mark.parametrize(("lang", "typed", "kind"), ACCUSED, ids=[t for _, t, _ in ACCUSED])
def test_an_accusation_in_the_speakers_own_words_names_the_player_meant_by_text(
        texting: tuple[Phones, list[str]], lang: str, typed: str, kind: str | None) -> None:
    p, _ = texting
    p.text(number(2), f"language {lang}")
    catalog = Catalog.load("classic", lang)
    said = reply(p, number(2), typed)
    table = p.table_of(number(0))
    zora = table.names.index("Zora")
    if kind is None:
        assert table.said == [] and "Wandzie" in said
        return
    meant = table.names.index("Yusuf" if "Yusuf" in typed else "Wanda")
    claim = Accusation(zora, meant) if kind == "accuse" else Clearance(zora, meant)
    assert [s.claim for s in table.said] == [claim]
    noted = CAPABILITIES.written(catalog.text("claim-noted", sms=True, claim="|"), lang).split("|")[0]
    assert said.startswith(noted) and table.names[meant] in said


def test_a_president_who_nominates_a_name_after_a_small_word_nominates_that_player_by_text(
        texting: tuple[Phones, list[str]]) -> None:
    p, _ = texting
    table = p.table_of(number(0))
    assert table.state is not None and table.state.president is not None
    president = table.seats[table.state.president].address
    p.text(president, "language es")
    choice = next(n for i, n in enumerate(table.names) if i != table.state.president)
    p.text(president, f"nomino a {choice}")
    state = p.table_of(number(0)).state
    assert state is not None and state.phase is Phase.ELECTION
    assert state.chancellor is not None and table.names[state.chancellor] == choice


def test_a_declined_name_means_its_player_even_where_another_name_starts_with_it_by_text() -> None:
    p = Phones()
    open_table(p, ("Ewelina", "Ewa", "Oleg", "Ola", "Bruno"))
    p.text(number(0), "GO")
    p.text(number(2), "language pl")
    table = p.table_of(number(0))
    oleg, ewa, ola = (table.names.index(n) for n in ("Oleg", "Ewa", "Ola"))
    reply(p, number(2), "ufam Ewę")  # Ewa's accusative, though "Ewe" starts Ewelina
    reply(p, number(2), "oskarżam Olę")
    assert [s.claim for s in p.table_of(number(0)).said] == [Clearance(oleg, ewa), Accusation(oleg, ola)]
    p.close()


def test_a_small_word_before_a_typo_names_nobody_rather_than_another_player_by_text() -> None:
    p = Phones()
    seats = open_table(p, ("De Bruyne", "Bruno", "Cleo", "Dana", "Emil"))
    p.text(number(0), "GO")
    table = p.table_of(number(0))
    assert table.state is not None and table.state.president is not None
    president = table.seats[table.state.president].address
    said = reply(p, president, "nominate de brun")  # a typo of De Bruyne: "brun" only starts Bruno
    assert EN.text("nothing-changed", sms=True) in said
    state = p.table_of(number(0)).state
    assert state is not None and state.phase is Phase.NOMINATION and state.chancellor is None
    assert len(seats) == 5
    p.close()
