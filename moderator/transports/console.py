"""The console channel: a table in the terminal, you in one seat and computer players in the rest.

It translates and nothing else: typed lines become commands for the service, and the outbox's messages for
your seat (or, when watching, for the table) are printed. You see only what your seat may see.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Final, TextIO

from ..channels import Capabilities, Delivered, Kind, Outbound, Port, Result
from ..commands import (
    AddComputers,
    Choose,
    Command,
    Decide,
    Inbound,
    OpenTable,
    Start,
)
from ..grammar import grammar

CHANNEL: Final = "console"
CAPABILITIES: Final = Capabilities()
"""A terminal shows a prompt's options itself, as a numbered list."""
YOU = "you"
TABLE = "table"

_QUIT = frozenset({"quit", "exit", "q"})


@dataclass
class ConsoleChannel:
    """Prints messages addressed to the console; remembers the last prompt's decision for numbered answers."""

    output: TextIO
    decision: int | None = None
    table_id: str | None = None
    printed: list[str] = field(default_factory=list)
    capabilities: Capabilities = CAPABILITIES

    def send_batch(self, address: str, messages: Sequence[Outbound]) -> list[Result]:
        """Print each message (with its numbered options, if it is a prompt)."""
        for message in messages:
            self.show(message)
        return [Delivered() for _ in messages]

    def show(self, message: Outbound) -> None:
        if message.kind is Kind.COUNTER and not self.output.isatty():
            # A group chat edits one counter in place; a printed story (--watch, a pipe) leaves it out.
            return
        text = message.text
        if message.kind is Kind.PROMPT and message.options:
            self.decision = message.decision if message.decision is not None else self.decision
            options = "  ".join(f"[{i}] {o.label}" for i, o in enumerate(message.options, 1))
            text = f"{text}\n{options}"
        if message.table:
            self.table_id = message.table
        self.printed.append(text)
        print(text, file=self.output)
        print(file=self.output)


def parse(line: str, decision: int | None) -> Command | None:
    """A typed line as a command: any word of the grammar; a number picks an option of the prompt shown last."""
    text = line.strip()
    if not text:
        return None
    command = grammar().parse(text)
    if isinstance(command, Choose):
        return Choose(command.token, decision)
    return command or Decide("?", text)


def play(
    port: Port,
    console: ConsoleChannel,
    deliver: Callable[[], object],
    *,
    players: int,
    name: str,
    theme: str,
    language: str,
    watch: bool,
    read: Callable[[str], str] = input,
) -> int:
    """Run one game at the console until it ends (or you quit); returns the exit status. ``deliver`` prints
    whatever the service queued."""
    counter = iter(range(1, 1_000_000_000))
    table_id: str | None = None

    def send(command: Command, raw: str = "", chat: str | None = None) -> None:
        nonlocal table_id
        receipt = port.handle(Inbound(CHANNEL, YOU, command, external_id=f"console-{next(counter)}",
                                      language=language, chat=chat, raw=raw))
        table_id = table_id or (receipt.tables[0] if receipt.tables else None)
        deliver()

    if watch:
        # Watching: the terminal is the table's public channel and every seat is a computer player.
        send(OpenTable(name, theme=theme, public=True, seat=False), chat=TABLE)
        send(AddComputers(players))
    else:
        send(OpenTable(name, theme=theme))
        send(AddComputers(players - 1))
    send(Start())
    while True:
        if table_id is None or port.game_over(table_id):
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
