"""Parity is a test: every command of one table of cases, run on Telegram, SMS and the browser through the real
``serve`` app (the Bot API and Twilio faked at the network edge), does the same thing to the table; so does each
the console offers, typed at a console game.

Each case says what the host or a player types (the README's words; each channel writes them its own way:
``/reminders 3``, ``REMINDERS 3``) and which control the browser's page posts for it.
"""

from __future__ import annotations

import io
import itertools
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, Final

import pytest

from moderator.catalog import Catalog
from moderator.channels import WordStyle
from moderator.commands import REMINDER_MINUTES
from moderator.delivery import Sender
from moderator.engine import Phase, new_game
from moderator.engine.events import VoteCast
from moderator.grammar import RULES, Verb, grammar, offered
from moderator.service import Service
from moderator.store import SeatRow, Store
from moderator.tables import Table as GameTable
from moderator.transports import console, sms, telegram
from tests.fake_telegram import user
from tests.serve_app import ANN
from tests.web_table import browser_beside, choices, every_channel

BOB_TG = user(502, "Bob")
ANN_SMS, BOB_SMS = "+12025550101", "+12025550102"


class Stage(StrEnum):
    LOBBY = "lobby"
    GAME = "game"
    OVER = "over"


@dataclass(frozen=True)
class Case:
    """One command: who sends it, at which stage, the words typed, the browser's control, and what must follow."""

    name: str
    stage: Stage
    typed: str
    web: tuple[str, dict[str, str]] | None
    """None: the browser has no control for it, its pages show it (``page``)."""
    done: Callable[[Any], bool] = lambda t: True
    """On the service's table afterwards."""
    by_player: bool = False
    prepare: tuple[tuple[str, tuple[str, dict[str, str]]], ...] = ()
    """Commands of the host's sent first (on the same channel)."""
    told: str = ""
    """The message (its catalog id) the asker is sent, on every channel that is asked."""
    page: str = ""
    """(``web`` None) the catalog text the asker's page shows."""


def _seat(t: GameTable, name: str) -> SeatRow:
    return next(s for s in t.seats if s.name == name)


CASES = [
    Case("reminders", Stage.LOBBY, "reminders 3", ("reminders", {"minutes": "3"}),
         lambda t: t.row.options.get("reminder_minutes") == 3),
    Case("reminders on", Stage.LOBBY, "reminders on", ("reminders", {"minutes": str(REMINDER_MINUTES)}),
         lambda t: t.row.options.get("reminder_minutes") == REMINDER_MINUTES),
    Case("reminders off", Stage.GAME, "reminders off", ("reminders", {"minutes": "0"}),
         lambda t: not t.row.options.get("reminder_minutes"),
         prepare=(("reminders 5", ("reminders", {"minutes": "5"})),)),
    Case("tablevotes", Stage.LOBBY, "tablevotes on", ("tablevotes", {"on": "1"}),
         lambda t: t.row.options.get("physical_voting") is True),
    Case("computers", Stage.LOBBY, "computers 2", ("computers-n", {"count": "2"}),
         lambda t: sum(s.computer for s in t.seats) == 2),
    Case("theme", Stage.LOBBY, "theme corporate", ("theme", {"theme": "corporate"}),
         lambda t: t.row.theme == "corporate"),
    Case("theme in a game", Stage.GAME, "theme corporate", ("theme", {"theme": "corporate"}),
         lambda t: t.row.theme == "corporate"),
    Case("seats by move", Stage.LOBBY, "move Bob 1", ("move", {"name": "Bob", "position": "1"}),
         lambda t: t.names[0] == "Bob"),
    Case("remove", Stage.LOBBY, "remove Bob", ("remove", {"name": "Bob"}), lambda t: "Bob" not in t.names),
    Case("start", Stage.LOBBY, "go", ("start", {}), lambda t: t.status.value == "playing",
         prepare=(("computers 3", ("computers-n", {"count": "3"})),)),
    Case("resume", Stage.GAME, "resume", ("resume", {}), lambda t: t.status.value == "playing",
         prepare=(("pause", ("pause", {})),)),
    Case("rename", Stage.LOBBY, "rename Robert", ("rename", {"name": "Robert"}),
         lambda t: "Robert" in t.names and "Bob" not in t.names, by_player=True),
    Case("rename in a game", Stage.GAME, "rename Robert", ("rename", {"name": "Robert"}),
         lambda t: t.names.index("Robert") == t.record_names.index("Bob") and "Bob" not in t.names, by_player=True),
    Case("language", Stage.LOBBY, "language de", ("language", {"language": "de"}),
         lambda t: _seat(t, "Bob").language == "de", by_player=True),
    Case("host's language", Stage.GAME, "language de", ("language", {"language": "de"}),
         lambda t: t.host_language == "de"),  # the table screen's too, on the browser
    Case("leave", Stage.LOBBY, "leave", ("leave", {}), lambda t: "Bob" not in t.names, by_player=True),
    Case("pause", Stage.GAME, "pause", ("pause", {}), lambda t: t.status.value == "paused"),
    Case("endgame", Stage.GAME, "endgame", ("end", {}), lambda t: t.status.value == "over"),
    Case("standin", Stage.GAME, "standin Bob", ("standin", {"name": "Bob"}), lambda t: _seat(t, "Bob").computer),
    Case("newphone", Stage.GAME, "newphone Bob", ("newdevice", {"name": "Bob"}),
         lambda t: list(t.row.options.get("move_codes", {}).values()) == [1]),
    Case("rematch", Stage.OVER, "rematch", ("rematch", {}), lambda t: t.row.game == 2),
    Case("seats", Stage.LOBBY, "seats Bob Ann", ("move", {"name": "Bob", "position": "1"}),
         lambda t: t.names == ("Bob", "Ann")),
    Case("return", Stage.GAME, "return Bob", ("return", {"name": "Bob"}), lambda t: not _seat(t, "Bob").computer,
         prepare=(("standin Bob", ("standin", {"name": "Bob"})),)),
    Case("nudge", Stage.GAME, "nudge", ("nudge", {}), told="nudge"),
    Case("accuse", Stage.GAME, "accuse Ann", ("speak", {"kind": "accuse", "text": "Ann"}),
         lambda t: [c.claim.kind.value for c in t.said] == ["accusation"], by_player=True, told="claim-noted"),
    Case("trust", Stage.GAME, "trust Ann", ("speak", {"kind": "trust", "text": "Ann"}),
         lambda t: [c.claim.kind.value for c in t.said] == ["clearance"], by_player=True, told="claim-noted"),
    Case("claim", Stage.GAME, "claim Ann fascist", ("speak", {"kind": "claim", "text": "Ann fascist"}),
         by_player=True, told="claim-refused"),  # Bob investigated nobody: a claim of what he saw is refused
    Case("rules", Stage.GAME, "rules", None, by_player=True, told="rules-summary", page="web-rules"),
    Case("board", Stage.GAME, "board", None, by_player=True, told="board-title", page="board-title"),
    Case("waiting", Stage.GAME, "waiting", None, by_player=True, told="board-title", page="board-title"),
    Case("whoami", Stage.GAME, "whoami", None, by_player=True, told="knowledge-title", page="web-cover-knowledge"),
    Case("help", Stage.LOBBY, "help", None, by_player=True, told="help", page="web-rules"),
]
NOT_A_CASE: dict[Verb, str] = {
    Verb.OPEN: "every case opens its table so",
    Verb.JOIN: "every case seats Bob so",
    Verb.HOSTONLY: "SMS only (what texts cost): tests/test_sms.py",
    Verb.ALLPHONES: "SMS only (what texts cost): tests/test_sms.py",
    Verb.COST: "SMS only (what texts cost): tests/test_sms.py",
    Verb.VOTES: "the nomination comes first: test_with_votes_at_the_table_the_president_records_the_ja_voters…",
}
"""The verbs help lists that no case here runs, and why."""


@dataclass
class Table:
    """A table whose host (Ann) and one player (Bob) sit on the channel under test."""

    s: Any
    channel: str
    ids: Iterator[int] = field(default_factory=lambda: itertools.count(1))
    host_device: Any = None
    bob_device: Any = None
    table_id: str = ""

    def _sms(self, sender: str, text: str) -> None:
        assert self.s.text(sender, text, f"SM{next(self.ids)}") == 200

    def _typed(self, style: WordStyle, words: str) -> str:
        """The words as this channel's people type them: its style, and its own word for a verb whose first word
        the carrier keeps (``?`` for help by SMS)."""
        word, _, rest = words.partition(" ")
        reserved = (sms.CAPABILITIES if style is WordStyle.CAPITALS else telegram.CAPABILITIES).reserved_words
        verb = grammar().verb(word)
        if verb is not None and grammar().verb(word, reserved) is None:
            word = grammar().shown(verb, "en", reserved) or word
        return f"{style.write(word)} {rest}".strip()

    def address(self, *, by_player: bool) -> str:
        t = self.table()
        return _seat(t, "Bob").address if by_player else t.row.host_address

    def sent(self) -> int:
        return int(self.s.rows("SELECT count(*) FROM outbox")[0][0])

    def told_since(self, count: int, *, by_player: bool) -> list[str]:
        """The catalog ids of the messages sent to the asker since the outbox held ``count``."""
        rows = self.s.rows("SELECT address, message_id FROM outbox ORDER BY id")[count:]
        return [mid for address, mid in rows if address == self.address(by_player=by_player)]

    def page(self, *, by_player: bool) -> str:
        device = self.bob_device if by_player else self.host_device
        response = device.get(f"/play/{self.table_id}" if by_player else f"/host/{self.table_id}")
        assert response.status_code == 200
        return str(response.text)

    def open(self) -> None:
        match self.channel:
            case "telegram":
                assert self.s.update(self.s.say(ANN, "/newgame")) == 200
            case "sms":
                self._sms(ANN_SMS, "NEWGAME Ann")
            case _:
                self.host_device = browser_beside(self.s.client)
                response = self.host_device.post("/new", data={"name": "Ann", "play": "1"}, follow_redirects=False)
                assert response.status_code == 303
        [(self.table_id, code)] = self.s.rows("SELECT id, code FROM game_tables")
        match self.channel:
            case "telegram":
                assert self.s.update(self.s.say(BOB_TG, f"/join {code} Bob")) == 200
            case "sms":
                self._sms(BOB_SMS, f"JOIN {code} Bob")
            case _:
                self.bob_device = browser_beside(self.s.client)
                assert self.bob_device.post(f"/join/{code}", data={"name": "Bob"}).status_code == 200
        assert self.table().names == ("Ann", "Bob")

    def table(self) -> Any:
        return self.s.client.app.state.service.table(self.table_id)

    def send(self, typed: str, web: tuple[str, dict[str, str]] | None, *, by_player: bool = False) -> None:
        """The host (or Bob) asks for it, as this channel's people do."""
        match self.channel:
            case "telegram":
                person = BOB_TG if by_player else ANN
                assert self.s.update(self.s.say(person, self._typed(WordStyle.SLASH, typed))) == 200
            case "sms":
                self._sms(BOB_SMS if by_player else ANN_SMS, self._typed(WordStyle.CAPITALS, typed))
            case _:
                assert web is not None, "the browser has no control for it"
                do, fields = web
                device = self.bob_device if by_player else self.host_device
                path = f"/play/{self.table_id}" if by_player else f"/host/{self.table_id}"
                response = device.post(path, data={"do": do, "nonce": f"n{next(self.ids)}", **fields})
                assert response.status_code == 200

    def to_stage(self, stage: Stage) -> None:
        if stage is Stage.LOBBY:
            return
        self.send("computers 3", ("computers-n", {"count": "3"}))
        self.send("go", ("start", {}))
        assert self.table().status.value == "playing"
        if stage is Stage.OVER:
            self.send("endgame", ("end", {}))
            assert self.table().status.value == "over"


@pytest.mark.parametrize("channel", ["telegram", "sms", "web"])
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_every_command_does_the_same_on_every_channel(tmp_path: Path, channel: str, case: Case) -> None:
    with every_channel(tmp_path) as s:
        table = Table(s, channel)
        table.open()
        table.to_stage(case.stage)
        for typed, web in case.prepare:
            table.send(typed, web)
        if channel == "web" and case.web is None:  # nothing to ask for: the page shows it
            assert Catalog.load().text(case.page) in table.page(by_player=case.by_player), case.name
            return
        before = table.sent()
        table.send(case.typed, case.web, by_player=case.by_player)
        assert case.done(table.table()), f"{case.name} on {channel} did not take"
        if case.told:
            assert case.told in table.told_since(before, by_player=case.by_player), f"{case.name} on {channel}"


@pytest.mark.parametrize("channel", ["telegram", "sms", "web"])
def test_a_seat_moves_to_a_new_device_with_the_hosts_code_on_every_channel(tmp_path: Path, channel: str) -> None:
    with every_channel(tmp_path) as s:
        table = Table(s, channel)
        table.open()
        table.to_stage(Stage.GAME)
        old = table.address(by_player=True)
        table.send("newphone Bob", ("newdevice", {"name": "Bob"}))
        [code] = table.table().row.options["move_codes"]
        match channel:
            case "telegram":
                assert s.update(s.say(user(503, "Bob's new phone"), f"/start {code}")) == 200
            case "sms":
                table._sms("+12025550103", f"JOIN {code}")
            case _:
                device = browser_beside(s.client)
                assert device.post(f"/move/{code}", data={"nonce": "m1"}).status_code == 200
        bob = _seat(table.table(), "Bob")
        assert bob.address != old and bob.channel == ("web" if channel == "web" else channel)
        assert not table.table().row.options.get("move_codes"), "a code works once"


@pytest.mark.parametrize("channel", ["telegram", "sms", "web"])
def test_with_votes_at_the_table_the_president_records_the_ja_voters_on_every_channel(tmp_path: Path,
                                                                                      channel: str) -> None:
    with every_channel(tmp_path) as s:
        table = Table(s, channel)
        table.open()
        # Ann is the first President (the deal's seed: which one the game's own random choice would not say).
        s.client.app.state.service.ctx.seed = lambda: next(n for n in range(100) if new_game(5, seed=n).president == 0)
        table.send("tablevotes on", ("tablevotes", {"on": "1"}))
        table.to_stage(Stage.GAME)
        assert table.table().state.president == 0
        match channel:
            case "web":  # Ann plays on the host's device: her seat's page has the nomination's buttons
                page = table.host_device.get(f"/play/{table.table_id}/live").text
                [pick] = [c for c in choices(page) if c.label == "Bob"]
                assert table.host_device.post(f"/play/{table.table_id}", data=pick.fields).status_code == 200
            case _:
                table.send("nominate Bob", None)
        assert table.table().state.phase is Phase.ELECTION
        logged = len(table.table().log)
        if channel == "web":
            page = table.host_device.get(f"/play/{table.table_id}/live").text
            boxes = dict(re.findall(r'name="(ja-\d+)" value="([^"]+)"', page))
            assert sorted(boxes.values()) == ["Ann", "Bob"]  # the computer players voted by themselves
            nonce = re.search(r'name="do" value="votes">\s*<input type="hidden" name="nonce" value="(\w+)"', page)
            assert nonce is not None
            response = table.host_device.post(f"/play/{table.table_id}", data={"do": "votes", "nonce": nonce.group(1),
                                                                               **boxes})
            assert response.status_code == 200
        else:
            table.send("votes Ann Bob", None)
        t = table.table()
        hands = {t.names[e.seat]: e.ja for e in t.log[logged:] if isinstance(e, VoteCast)}
        assert hands == {"Ann": True, "Bob": True}, channel  # recorded; the computers' votes were their own
        assert t.state.phase is not Phase.ELECTION, channel


def test_every_command_help_lists_is_a_case_or_says_why_not() -> None:
    cased = {verb_of(c) for c in CASES}
    for verb, rule in RULES.items():
        if rule.help:
            assert (verb in cased) != (verb in NOT_A_CASE), verb


def verb_of(case: Case) -> Verb:
    verb = grammar().verb(case.typed.split(" ")[0])
    assert verb is not None, case.name
    return verb


AT_THE_CONSOLE: Final = [c for c in CASES if offered(verb_of(c), console.CAPABILITIES)]
"""The cases of the words the console offers (its help's): you sit at a game that starts at once (no lobby), as
Bob, the host, among computer players (``Ann`` is Computer 1 there)."""


@pytest.mark.parametrize("case", AT_THE_CONSOLE, ids=[c.name for c in AT_THE_CONSOLE])
def test_every_command_the_console_offers_does_the_same_there(case: Case) -> None:
    store = Store(memory=True)
    service = Service(store, capabilities={console.CHANNEL: console.CAPABILITIES}, seed=lambda: 5)
    channel = console.ConsoleChannel(io.StringIO())
    sender = Sender(store, {console.CHANNEL: channel})
    lines = iter([*(typed for typed, _ in case.prepare), case.typed.replace("Ann", "Computer 1")])
    before = 0
    seen: list[tuple[bool, list[str]]] = []

    def told() -> list[str]:
        return [mid for (mid,) in store.execute("SELECT message_id FROM outbox ORDER BY id").fetchall()]

    def read(prompt: str) -> str:
        nonlocal before
        line = next(lines, None)
        if line is None:  # the case's words were typed: look, then leave (Ctrl-D)
            table = service.table(channel.table_id or "")
            seen.append((case.done(table), told()[before:]))
            raise EOFError
        before = len(told())
        return line

    def deliver() -> None:
        while sender.deliver_due():
            pass

    console.play(service, channel, deliver, players=5, name="Bob", theme="classic", language="en", watch=False,
                 read=read)
    if not seen:  # the game ended with the case's words
        seen.append((case.done(service.table(channel.table_id or "")), told()[before:]))
    [(done, since)] = seen
    assert done, f"{case.name} at the console did not take"
    assert not case.told or case.told in since, f"{case.name} at the console: {since}"
