"""Parity is a test: every command of one table of cases, run on Telegram, SMS and the browser through the real
``serve`` app (the Bot API and Twilio faked at the network edge), does the same thing to the table.

Each case says what the host or a player types (the README's words; each channel writes them its own way:
``/reminders 3``, ``REMINDERS 3``) and which control the browser's page posts for it.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

import pytest

from moderator.channels import WordStyle
from tests.fake_telegram import user
from tests.test_serve import ANN
from tests.web_table import browser_beside, every_channel

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
    web: tuple[str, dict[str, str]]
    done: Callable[[Any], bool]
    """On the service's table afterwards."""
    by_player: bool = False
    prepare: tuple[tuple[str, tuple[str, dict[str, str]]], ...] = ()
    """Commands of the host's sent first (on the same channel)."""


def _seat(t: Any, name: str) -> Any:
    return next(s for s in t.seats if s.name == name)


CASES = [
    Case("reminders", Stage.LOBBY, "reminders 3", ("reminders", {"minutes": "3"}),
         lambda t: t.row.options.get("reminder_minutes") == 3),
    Case("reminders off", Stage.GAME, "reminders off", ("reminders", {"minutes": "0"}),
         lambda t: not t.row.options.get("reminder_minutes"),
         prepare=(("reminders 5", ("reminders", {"minutes": "5"})),)),
    Case("tablevotes", Stage.LOBBY, "tablevotes on", ("tablevotes", {"on": "1"}),
         lambda t: t.row.options.get("physical_voting") is True),
    Case("computers", Stage.LOBBY, "computers 2", ("computers-n", {"count": "2"}),
         lambda t: sum(s.computer for s in t.seats) == 2),
    Case("theme", Stage.LOBBY, "theme corporate", ("theme", {"theme": "corporate"}),
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
    Case("language", Stage.LOBBY, "language de", ("language", {"language": "de"}),
         lambda t: _seat(t, "Bob").language == "de", by_player=True),
    Case("leave", Stage.LOBBY, "leave", ("leave", {}), lambda t: "Bob" not in t.names, by_player=True),
    Case("pause", Stage.GAME, "pause", ("pause", {}), lambda t: t.status.value == "paused"),
    Case("endgame", Stage.GAME, "endgame", ("end", {}), lambda t: t.status.value == "over"),
    Case("standin", Stage.GAME, "standin Bob", ("standin", {"name": "Bob"}), lambda t: _seat(t, "Bob").computer),
    Case("newphone", Stage.GAME, "newphone Bob", ("newdevice", {"name": "Bob"}),
         lambda t: list(t.row.options.get("move_codes", {}).values()) == [1]),
    Case("rematch", Stage.OVER, "rematch", ("rematch", {}), lambda t: t.row.game == 2),
]


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
        word, _, rest = words.partition(" ")
        return f"{style.write(word)} {rest}".strip()

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

    def send(self, typed: str, web: tuple[str, dict[str, str]], *, by_player: bool = False) -> None:
        """The host (or Bob) asks for it, as this channel's people do."""
        match self.channel:
            case "telegram":
                person = BOB_TG if by_player else ANN
                assert self.s.update(self.s.say(person, self._typed(WordStyle.SLASH, typed))) == 200
            case "sms":
                self._sms(BOB_SMS if by_player else ANN_SMS, self._typed(WordStyle.CAPITALS, typed))
            case _:
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
        assert not case.done(table.table()), f"{case.name} holds before it was asked for"
        table.send(case.typed, case.web, by_player=case.by_player)
        assert case.done(table.table()), f"{case.name} on {channel} did not take"

