"""Claims at a table run by the service: computer players speak after results, people claim by typing; claims
are stored, heard by the computer players, and shown to the table with the results they follow, as claims."""

from __future__ import annotations

import io
import json
import random
import re
from pathlib import Path

from moderator import record as records
from moderator import render
from moderator.bots import SPEECH_EVENTS
from moderator.claims import Accusation, Clearance, InvestigationClaim, Office, PeekClaim, SessionClaim, is_true
from moderator.commands import AddComputers, Join, Speak, Start
from moderator.engine import CastVote, Phase, Role, awaiting, public_view
from moderator.engine.events import LoyaltyInvestigated, PolicyEnacted, PolicyPeekUsed, VetoAnswered, VoteCast
from moderator.grammar import grammar
from moderator.service import Service
from moderator.store import Store
from moderator.tables import Table
from moderator.transports import console
from moderator.transports.web import WebTables
from tests.fakes import Harness, RecordingChannel
from tests.test_console import play_console

HEADER = "What the players claim (they may lie):"


def watched(seed: int, players: int = 7) -> tuple[Harness, str]:
    """A game of computer players watched from a group, played to its end."""
    h = Harness(seed=seed)
    table_id, _ = h.open("host", "Watcher", public=True, seat=False, chat="group")
    h.send("host", AddComputers(players))
    h.send("host", Start())
    return h, table_id


def sessions_ended(table: Table, logged: int) -> int:
    return sum(
        1 for e in table.log[:logged]
        if (isinstance(e, PolicyEnacted) and not e.by_chaos) or (isinstance(e, VetoAnswered) and e.accepted)
    )


def test_computer_players_claim_after_their_sessions_and_the_group_sees_it_with_the_result() -> None:
    h, table_id = watched(seed=5)
    table = h.table(table_id)
    assert table.state is not None and table.state.phase is Phase.GAME_OVER
    assert any(isinstance(s.claim, SessionClaim) for s in table.said)
    texts = [(body["message_id"], body["text"]) for body in h.channel.inbox("group")]
    with_claims = [(mid, text) for mid, text in texts if HEADER in text]
    assert with_claims
    # Claims ride along with a result: never a message of their own, never before the result's own words.
    assert all(mid != "claims-header" and not text.startswith(HEADER) for mid, text in with_claims)
    line = next(text for _, text in with_claims if "I drew" in text)
    assert "handed" in line


def test_no_claim_is_shown_before_the_action_it_is_about() -> None:
    for seed in (3, 5, 8):
        h, table_id = watched(seed)
        table = h.table(table_id)
        for said in table.said:
            assert said.shown is not None and said.shown >= said.logged
            before = table.log[: said.logged]
            match said.claim:
                case SessionClaim(session=index):
                    assert index < sessions_ended(table, said.logged)
                case InvestigationClaim(speaker=speaker, target=target):
                    assert any(isinstance(e, LoyaltyInvestigated) and (e.president, e.target) == (speaker, target)
                               for e in before)
                case PeekClaim(speaker=speaker):
                    assert any(isinstance(e, PolicyPeekUsed) and e.president == speaker for e in before)
                case _:
                    pass


def test_a_liberal_computer_players_session_claims_are_the_truth() -> None:
    checked = 0
    for seed in (3, 5, 8, 13):
        h, table_id = watched(seed)
        state = h.table(table_id).state
        assert state is not None
        for said in h.table(table_id).said:
            claim = said.claim
            if not isinstance(claim, SessionClaim) or state.roles[claim.speaker] is not Role.LIBERAL:
                continue
            truth = state.sessions[claim.session]
            if claim.office is Office.PRESIDENT:
                assert claim.hand == tuple(sorted(truth.drawn)) and claim.passed == tuple(sorted(truth.received))
            else:
                assert claim.hand == tuple(sorted(truth.received))
            checked += 1
    assert checked > 0


def test_seeded_tables_with_claims_repeat_exactly() -> None:
    first, second = watched(seed=8), watched(seed=8)
    a, b = first[0].table(first[1]), second[0].table(second[1])
    assert [(s.step, s.claim) for s in a.said] == [(s.step, s.claim) for s in b.said]
    assert a.state == b.state


def test_claims_and_what_computer_players_heard_survive_a_restart(tmp_path: Path) -> None:
    store = Store(tmp_path / "claims.db")
    h = Harness(store, seed=5)
    table_id, code = h.open("p0", "Ann")
    h.send("p1", Join(code, "Bob"))
    h.send("p0", AddComputers(5))
    h.start(table_id)
    rng = random.Random(2)
    table = h.table(table_id)
    while not table.said and table.state is not None and table.state.phase is not Phase.GAME_OVER:
        h.press(table.seats[min(_owing(table))].address, rng)
        table = h.table(table_id)
    assert table.said
    said, memories = list(table.said), dict(table.memories)
    h.service.tables.forget()
    again = h.table(table_id)
    assert again.said == said and again.memories == memories
    store.close()


def _owing(table: Table) -> set[int]:
    assert table.state is not None
    return {s for s in awaiting(table.state) if not table.seats[s].computer}


def ann_and_bob_started(store: Store | None = None, vote_pause: float = 0.0) -> tuple[Harness, str]:
    """A started table of two people (Ann, the host, and Bob) and five computer players (whose votes wait for
    the people's for at most ``vote_pause`` seconds)."""
    h = Harness(store, seed=5, vote_pause=vote_pause)
    table_id, code = h.open("p0", "Ann")
    h.send("p1", Join(code, "Bob"))
    h.send("p0", AddComputers(5))
    h.start(table_id)
    return h, table_id


def test_a_person_claims_by_typing_and_the_table_hears_it_with_the_next_result() -> None:
    h, table_id = ann_and_bob_started()
    command = grammar().parse("accuse Bob")
    assert command == Speak("accuse", "Bob")
    before = len(h.channel.inbox("p1"))
    h.send("p0", command, raw="accuse Bob")
    assert h.channel.ids("p0")[-1] == "claim-noted"
    table = h.table(table_id)
    assert table.said[-1].claim == Accusation(0, 1) and table.said[-1].shown is None
    assert all(Accusation(0, 1) in memory.claims for memory in table.memories.values())
    assert not any("Ann: Bob" in body["text"] for body in h.channel.inbox("p1")[before:])  # held for a result
    rng = random.Random(1)
    while h.table(table_id).said[-1].shown is None and h.table(table_id).said[0].shown is None:
        table = h.table(table_id)
        h.press(table.seats[min(_owing(table))].address, rng)
    texts = [body["text"] for body in h.channel.inbox("p1")[before:]]
    shown = [text for text in texts if "Ann: Bob is one of the Fascists." in text]
    assert shown and all(not text.startswith(HEADER) for text in shown)


def test_a_claim_that_does_not_fit_what_the_seat_did_is_refused() -> None:
    h, table_id = ann_and_bob_started()
    for typed in ("claim FFL FL", "claim Bob fascist", "claim ZZZ"):
        h.send("p0", grammar().parse(typed) or Speak("claim", typed), raw=typed)
        assert h.channel.ids("p0")[-1] == "claim-refused", typed
    assert h.table(table_id).said == []


def test_a_claim_is_read_up_to_the_same_length_on_every_channel_as_the_page_field_takes() -> None:
    h, table_id = ann_and_bob_started()
    limit = h.service.pages.limits().claim_length
    # What is typed past the limit is not read: here it would name a second player and make the claim no claim.
    typed = "Bob".ljust(limit) + "Ann"
    h.send("p0", Speak("accuse", typed), raw=f"accuse {typed}")
    assert h.channel.ids("p0")[-1] == "claim-noted"
    assert h.table(table_id).said[-1].claim == Accusation(0, 1)
    h.send("p0", Speak("accuse", typed[:limit - 2] + "Ann"), raw="accuse")  # within the limit: read whole
    assert h.channel.ids("p0")[-1] == "input-no-such-player"


# --- the table screen ---------------------------------------------------------------------------------------


def until_claims_shown(seed: int = 5) -> tuple[Harness, str]:
    """A table of one person and six computer players, played until the computer players have claimed."""
    h = Harness(seed=seed)
    table_id, _ = h.open("p0", "Ann")
    h.send("p0", AddComputers(6))
    h.start(table_id)
    rng = random.Random(3)
    while not any(s.shown is not None for s in h.table(table_id).said):
        h.press("p0", rng)
    return h, table_id


def result_texts(h: Harness, table: Table) -> set[str]:
    """The words of every public result a claim can follow (a session's end, an investigation, a peek)."""
    assert table.state is not None
    catalog = h.service.ctx.catalog(table.row.theme, "en")
    view = public_view(table.state)
    return {m.text for e in table.log if e.audience.everyone and type(e) in SPEECH_EVENTS
            for m in render.event_messages(e, None, table.info(), catalog, board=view)}


def test_the_table_screen_shows_claims_as_claims_with_the_result_they_follow() -> None:
    h, table_id = until_claims_shown()
    table = h.table(table_id)
    view = h.service.pages.screen_view(table_id, "en")
    assert view.claims_header == HEADER
    claimed = [r for r in view.results if r.claims]
    assert claimed
    for result in claimed:
        assert all(HEADER not in claim and claim not in result.text for claim in result.claims)
    # With the result they ride along with: a session's end (or an investigation, a peek) they speak of.
    assert any(r.text in result_texts(h, table) for r in claimed)
    assert any("I drew" in c or "I got" in c for r in claimed for c in r.claims)


def test_the_table_screen_marks_claims_apart_from_the_results() -> None:
    h, table_id = until_claims_shown()
    web = WebTables(h.service.pages)
    table = h.service.pages.table_info(table_id)
    assert table is not None
    part = web.screen_part(table, "http://table.test/", "en")
    story = h.service.pages.screen_view(table_id, "en").story
    assert part.count('<p class="claim">') == sum(len(r.claims) for group in story for r in group) > 0
    assert f'<p class="said">{HEADER}</p>' in part
    for claim in re.findall(r'<p class="claim">(.*?)</p>', part):
        assert 'class="result" data-result="' not in claim and claim not in re.findall(
            r'<p class="result"[^>]*>(.*?)</p>', part)


def test_a_persons_claim_reaches_the_table_screen_only_with_the_next_result() -> None:
    h, table_id = until_claims_shown()
    before = h.service.pages.screen_view(table_id, "en")
    h.send("p0", Speak("accuse", "Computer 2"), raw="accuse Computer 2")
    assert h.channel.ids("p0")[-1] == "claim-noted"
    held = h.service.pages.screen_view(table_id, "en")
    assert not any("Ann: Computer 2" in c for r in held.results for c in r.claims) and held.results == before.results
    rng = random.Random(4)
    while len(h.service.pages.screen_view(table_id, "en").results) == len(before.results):
        h.press("p0", rng)
    shown = h.service.pages.screen_view(table_id, "en")
    said = [r for r in shown.results if any("Ann: Computer 2" in c for c in r.claims)]
    assert len(said) == 1 and said[0] == shown.results[len(before.results)]  # with the next result


# --- what the computer players at a table say ------------------------------------------------------------------


TABLES = [(seed, players) for seed in (3, 5, 8, 13) for players in (5, 7, 10)]
_watched: dict[tuple[int, int], Table] = {}


def finished(seed: int, players: int) -> Table:
    """A finished table of computer players (played once per test session)."""
    if (seed, players) not in _watched:
        h, table_id = watched(seed, players)
        _watched[seed, players] = h.table(table_id)
    return _watched[seed, players]


def test_a_liberal_computer_players_claims_of_every_kind_are_true_at_a_table() -> None:
    kinds = set()
    for seed, players in TABLES:
        table = finished(seed, players)
        assert table.state is not None
        for said in table.said:
            if table.state.roles[said.claim.speaker] is Role.LIBERAL:
                kinds.add(type(said.claim))
                assert is_true(said.claim, table.state), said.claim
    assert kinds >= {SessionClaim, InvestigationClaim, Accusation}


def test_a_claim_at_a_table_speaks_only_of_what_its_speaker_did_or_saw() -> None:
    kinds = set()
    for seed, players in TABLES:
        table = finished(seed, players)
        assert table.state is not None
        history = table.state.history
        for said in table.said:
            claim = said.claim
            kinds.add(type(claim))
            match claim:
                case SessionClaim(speaker=speaker, office=office, session=index, hand=held):
                    session = history.sessions[index]
                    assert speaker == (session.president if office is Office.PRESIDENT else session.chancellor)
                    assert len(held) == (3 if office is Office.PRESIDENT else 2)  # never the other's cards
                case InvestigationClaim(speaker=speaker, target=target):
                    assert (speaker, target) in history.investigations
                case PeekClaim(speaker=speaker):
                    assert speaker in {president for president, _ in history.peeks}
                case Accusation(speaker=speaker, target=target) | Clearance(speaker=speaker, target=target):
                    assert speaker != target
    assert kinds >= {SessionClaim, InvestigationClaim, PeekClaim}


# --- people are heard before the computer players vote -------------------------------------------------------


def _after_a_result(h: Harness, table_id: str, rng: random.Random) -> Table:
    """Play (the people pressing) until an election opens after a government's result."""
    while True:
        table = h.table(table_id)
        state = table.state
        assert state is not None and state.phase is not Phase.GAME_OVER
        if state.phase is Phase.ELECTION and state.sessions:
            return table
        h.press(table.seats[min(_owing(table))].address, rng)


def _computer_votes(table: Table) -> list[int]:
    assert table.state is not None
    return [s for s in range(table.state.players) if table.seats[s].computer and s not in awaiting(table.state)]


def test_computer_players_vote_after_the_people_so_a_claim_made_before_voting_reaches_them() -> None:
    h, table_id = ann_and_bob_started(vote_pause=20.0)
    table = _after_a_result(h, table_id, random.Random(1))
    opened = len(table.log)
    assert table.computers_wait and _computer_votes(table) == [] and table.state is not None
    board = "\n".join(m.text for m in render.board_messages(
        public_view(table.state), table.info(), h.service.ctx.catalog("classic", "en")))
    assert "Computer 1" in board.split("Still to vote:")[1] and "once the people have voted" in board
    h.send("p1", Speak("accuse", "Computer 1"), raw="accuse Computer 1")
    h.press("p0", random.Random(2))
    assert _computer_votes(h.table(table_id)) == []  # Bob has still to vote
    h.press("p1", random.Random(3))
    table = h.table(table_id)
    assert table.state is not None and table.state.phase is not Phase.ELECTION  # the computers voted at once
    said = next(s for s in table.said if s.claim == Accusation(1, 2))
    votes = [i for i, e in enumerate(table.log)
             if i >= opened and isinstance(e, VoteCast) and table.seats[e.seat].computer]
    assert votes and said.logged <= min(votes)  # heard before any computer voted
    assert h.channel.inbox("p1")[-1]["message_id"] != "vote-recorded"  # Bob's vote was the last a person cast


def test_the_pause_over_the_computers_vote_though_a_person_has_not() -> None:
    h, table_id = ann_and_bob_started(vote_pause=20.0)
    _after_a_result(h, table_id, random.Random(1))
    h.press("p0", random.Random(2))  # a second after the vote opened
    h.clock.advance(15)
    h.service.tick()
    assert _computer_votes(h.table(table_id)) == []
    h.clock.advance(5)
    h.service.tick()
    table = h.table(table_id)
    assert table.state is not None and awaiting(table.state) == (1,)  # only Bob is still to vote
    assert not table.computers_wait


def test_the_wait_survives_a_restart(tmp_path: Path) -> None:
    store = Store(tmp_path / "wait.db")
    h, table_id = ann_and_bob_started(store, vote_pause=20.0)
    _after_a_result(h, table_id, random.Random(1))
    again = Service(store, clock=h.clock, vote_pause=20.0)  # a new process on the same database
    again.resume_all()
    table = again.table(table_id)
    assert table is not None and table.computers_wait and _computer_votes(table) == []
    h.clock.advance(25)
    again.tick()
    table = again.table(table_id)
    assert table is not None and not table.computers_wait and table.state is not None
    assert set(awaiting(table.state)) == {0, 1}
    store.close()


def test_a_person_at_their_own_pace_is_waited_for_however_long() -> None:
    # The console's capability: you play alone with computer players, who vote after you however long you take.
    h = Harness(seed=5, vote_pause=20.0, channel=RecordingChannel(capabilities=console.CAPABILITIES))
    table_id, _ = h.open("p0", "Ann")
    h.send("p0", AddComputers(6))
    h.start(table_id)
    table = _after_a_result(h, table_id, random.Random(1))
    h.clock.advance(600)
    h.service.tick()
    assert h.table(table_id).computers_wait and _computer_votes(h.table(table_id)) == []
    h.press("p0", random.Random(2))
    assert table.state is not None and table.state.phase is not Phase.ELECTION


def test_with_votes_at_the_table_nothing_waits() -> None:
    h = Harness(seed=5, vote_pause=20.0)
    table_id, _ = h.open("p0", "Ann", physical_voting=True)
    h.send("p0", AddComputers(6))
    h.start(table_id)
    table = h.table(table_id)
    if table.state is not None and table.state.phase is Phase.NOMINATION:
        h.press("p0", random.Random(1))  # Ann is the first candidate
        table = h.table(table_id)
    assert table.state is not None and table.state.phase is Phase.ELECTION
    assert not table.computers_wait and len(_computer_votes(table)) == 6


def test_at_the_console_you_may_speak_before_voting_and_the_computers_vote_after_you(tmp_path: Path) -> None:
    out = io.StringIO()
    accused: set[int] = set()

    def read(prompt: str) -> str:
        text = out.getvalue()
        votes = text.count("Vote on")  # each a vote's prompt: accuse once in each vote after the first
        if votes > 1 and votes not in accused and "[1]" in text[text.rfind("Vote on"):]:
            accused.add(votes)
            return "accuse Computer 1"  # said while the vote is open, before voting
        return "1"

    path = tmp_path / "game.json"
    status = play_console(players=7, name="Zoe", theme="classic", language="en", seed=5, watch=False, read=read,
                          output=out, record=path)
    assert status == 0 and accused
    record = records.parse(json.loads(path.read_text()))
    said = [s for s in record.claims or () if s.claim == Accusation(0, 1)]
    assert said
    actions = record.actions
    for spoken in said:
        # The next votes after the accusation: Zoe's first, every computer player's after hers.
        votes = [a for a in actions[spoken.step:] if isinstance(a, CastVote)][:7]
        assert votes[0].seat == 0 and all(v.seat != 0 for v in votes[1:])
