"""Golden transcripts: one seeded game per theme, everything each phone was told, reviewed like code.

Modelled on OpenSpiel's playthroughs. Each transcript is a whole 7-player game played through the service by
seven people whose choices come from a seeded random source: every message every seat received, in order,
and every choice made. Any change to rules, rendering or wording shows up as a diff in review.

Regenerate after an intended change with ``MODERATOR_UPDATE_TRANSCRIPTS=1 python -m pytest tests/test_transcripts.py``
and read the diff before committing it.
"""

from __future__ import annotations

import os
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from moderator.channels import Capabilities, Delivered, Outbound, Result
from moderator.commands import Choose, Inbound, Join, OpenTable, Start
from moderator.delivery import Sender
from moderator.service import Service
from moderator.store import Store
from tests.fakes import as_body

HERE = Path(__file__).parent / "transcripts"
NAMES = ("Ann", "Bob", "Cy", "Dee", "Eve", "Fay", "Gus")
CASES = [("classic", "en", 7), ("corporate", "en", 7), ("classic", "de", 7)]


@dataclass
class Phones:
    """Every address's messages in delivery order, the transcript so far, and the prompts not yet answered."""

    lines: list[str] = field(default_factory=list)
    open_prompts: dict[str, dict[str, Any]] = field(default_factory=dict)
    names: dict[str, str] = field(default_factory=dict)
    capabilities: Capabilities = field(default_factory=Capabilities)

    def send_batch(self, address: str, messages: Sequence[Outbound]) -> list[Result]:
        for message in messages:
            self.send(address, as_body(message))
        return [Delivered() for _ in messages]

    def send(self, address: str, body: dict[str, Any]) -> None:

        who = self.names.get(address, address)
        self.lines.append(f"[{who}] ({body['message_id']})")
        self.lines.extend(f"    {line}" for line in str(body["text"]).splitlines())
        if body.get("choices"):
            options = " | ".join(f"{i} {c['label']}" for i, c in enumerate(body["choices"], 1))
            self.lines.append(f"    options: {options}")
            self.open_prompts[address] = body


def play_transcript(theme: str, language: str, players: int, seed: int = 7) -> str:
    """Play one seeded game through the service and return the transcript."""
    store = Store(memory=True)
    service = Service(store, seed=lambda: seed, clock=lambda: 0.0, codes=random.Random(seed))
    phones = Phones()
    sender = Sender(store, {"phone": phones}, clock=lambda: 0.0)
    counter = iter(range(1, 100_000))
    addresses = [f"+4930555000{i}" for i in range(players)]
    phones.names = dict(zip(addresses, NAMES[:players], strict=False))

    phones.names["group"] = "table"

    def send(address: str, command: Any, chat: str | None = None) -> None:
        inbound = Inbound("phone", address, command, external_id=str(next(counter)), language=language, chat=chat)
        service.handle(inbound)
        while sender.deliver_due():
            pass

    phones.lines.append(f"# {theme}/{language}, {players} players, seed {seed}; [table] is the group chat")
    # Opened in a group chat, so public results appear once, as [table], and each phone gets only its own.
    send(addresses[0], OpenTable(NAMES[0], theme=theme, public=True), chat="group")
    code = store.execute("SELECT code FROM game_tables").fetchone()[0]
    for address, name in zip(addresses[1:], NAMES[1:players], strict=False):
        send(address, Join(code, name))
    send(addresses[0], Start())
    choose = random.Random(seed)
    for _ in range(10_000):
        table_id = store.execute("SELECT id, status FROM game_tables").fetchone()
        if table_id[1] == "over":
            break
        # The lowest seat with an open prompt answers it, picking one of its options at random.
        address = next(a for a in addresses if a in phones.open_prompts)
        prompt = phones.open_prompts.pop(address)
        index = choose.randrange(len(prompt["choices"]))
        phones.lines.append(f">>> {phones.names[address]} chooses {prompt['choices'][index]['label']}")
        send(address, Choose(prompt["choices"][index]["token"], prompt["decision"]))
    else:
        raise AssertionError("the game did not end")
    return "\n".join(phones.lines) + "\n"


@pytest.mark.parametrize(("theme", "language", "players"), CASES)
def test_golden_transcript_of_a_seeded_game(theme: str, language: str, players: int) -> None:
    """A seeded game's complete transcript matches the reviewed file, message for message."""
    path = HERE / f"{theme}-{language}-{players}p.txt"
    text = play_transcript(theme, language, players)
    if os.environ.get("MODERATOR_UPDATE_TRANSCRIPTS"):
        HERE.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"no transcript yet: run with MODERATOR_UPDATE_TRANSCRIPTS=1 to create {path.name}"
    expected = path.read_text(encoding="utf-8")
    assert text == expected


def test_transcripts_are_repeatable() -> None:
    """The same seed gives the same transcript: nothing in a game depends on the clock or global randomness."""
    assert play_transcript("classic", "en", 5, seed=3) == play_transcript("classic", "en", 5, seed=3)
