"""The console channel: a table in the terminal, you in one seat and computer players in the rest.

It translates and nothing else: typed lines become commands for the service, and the outbox's messages for
your seat (or, when watching, for the table) are printed. You see only what your seat may see.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TextIO

from ..commands import (
    AddComputers,
    Ask,
    Choose,
    Command,
    Decide,
    Inbound,
    OpenTable,
    Query,
    SetLanguage,
    Start,
)
from ..service import Sender, Service
from ..store import Store

CHANNEL = "console"
YOU = "you"
TABLE = "table"

_WORDS: dict[str, Command] = {
    "board": Ask(Query.BOARD),
    "b": Ask(Query.BOARD),
    "whoami": Ask(Query.WHOAMI),
    "me": Ask(Query.WHOAMI),
    "waiting": Ask(Query.WAITING),
    "w": Ask(Query.WAITING),
    "help": Ask(Query.HELP),
    "?": Ask(Query.HELP),
    "rules": Ask(Query.RULES),
    "ja": Decide("vote", "ja"),
    "nein": Decide("vote", "nein"),
}
_QUIT = frozenset({"quit", "exit", "q"})


@dataclass
class ConsoleChannel:
    """Prints messages addressed to the console; remembers the last prompt's decision for numbered answers."""

    output: TextIO
    decision: int | None = None
    table_id: str | None = None
    printed: list[str] = field(default_factory=list)

    def send(self, address: str, body: dict[str, Any]) -> None:
        """Print one message (with its numbered options, if it is a prompt)."""
        text = str(body.get("text", ""))
        if body.get("message_id") == "vote-progress" and not self.output.isatty():
            # A group chat edits one counter in place; a printed story (--watch, a pipe) leaves it out.
            return
        choices = body.get("choices") or []
        if choices:
            self.decision = body.get("decision", self.decision)
            options = "  ".join(f"[{i}] {c['label']}" for i, c in enumerate(choices, 1))
            text = f"{text}\n{options}"
        if body.get("table"):
            self.table_id = body["table"]
        self.printed.append(text)
        print(text, file=self.output)
        print(file=self.output)


def parse(line: str, decision: int | None) -> Command | None:
    """A typed line as a command: a number picks an option of the current prompt; words ask or vote."""
    text = line.strip()
    if not text:
        return None
    lowered = text.casefold()
    if lowered in _WORDS:
        return _WORDS[lowered]
    if text.isdigit():
        return Choose(text, decision)
    head, _, rest = text.partition(" ")
    if head.casefold() in ("nominate", "investigate", "execute", "special_election", "discard", "enact"):
        return Decide(head.casefold(), rest)
    if head.casefold() == "language" and rest:
        return SetLanguage(rest.strip())
    return Decide("?", text)


def play(
    *,
    players: int,
    name: str,
    theme: str,
    language: str,
    seed: int | None,
    watch: bool,
    read: Callable[[str], str] = input,
    output: TextIO = sys.stdout,
    store: Store | None = None,
) -> int:
    """Run one game at the console until it ends (or you quit); returns the exit status."""
    store = store or Store(memory=True)
    service = Service(store) if seed is None else Service(store, seed=lambda: seed)
    console = ConsoleChannel(output)
    sender = Sender(store, {CHANNEL: console})
    counter = iter(range(1, 1_000_000_000))

    def send(command: Command, raw: str = "", chat: str | None = None) -> None:
        service.handle(Inbound(CHANNEL, YOU, command, external_id=f"console-{next(counter)}",
                               language=language, chat=chat, raw=raw))
        while sender.deliver_due():
            pass

    if watch:
        # Watching: the terminal is the table's public channel and every seat is a computer player.
        send(OpenTable(name, theme=theme, public=True, seat=False), chat=TABLE)
        send(AddComputers(players))
    else:
        send(OpenTable(name, theme=theme))
        send(AddComputers(players - 1))
    send(Start())
    table_id = service.store.tables_of(CHANNEL, YOU)[0].id
    while True:
        table = service.table(table_id)
        assert table is not None
        if table.row.status == "over":
            return 0
        if watch:
            # Computer players move by themselves; a watched game that cannot go on is a bug.
            raise RuntimeError("the watched game stopped before its end")
        try:
            line = read("> ")
        except EOFError:
            return 0
        if line.strip().casefold() in _QUIT:
            return 0
        command = parse(line, console.decision)
        if command is not None:
            send(command, raw=line)
