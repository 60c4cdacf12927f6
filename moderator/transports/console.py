"""The console channel: a table in the terminal, you in one seat and computer players in the rest.

It translates and nothing else: typed lines become commands for the service, and the outbox's messages for
your seat (or, when watching, for the table) are printed. You see only what your seat may see. It is on only
under ``moderator play`` (``Settings.table``, no web server), where its game is the command's foreground
(``Running.main``) and its deliveries run inline, so each answer is printed before the next line is read.
"""

from __future__ import annotations

import contextlib
import getpass
import sys
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final, TextIO

from starlette.routing import BaseRoute

from ..catalog import Catalog
from ..channels import Capabilities, Delivered, Kind, Outbound, Port, Result, Running, Runtime
from ..commands import (
    AddComputers,
    Ask,
    Choose,
    Command,
    Decide,
    Host,
    HostCommand,
    Inbound,
    OpenTable,
    Query,
    Start,
)
from ..grammar import Verb, fold, grammar
from ..settings import Settings

CHANNEL: Final = "console"
AT_THE_CONSOLE: Final = frozenset({
    Verb.HELP, Verb.RULES, Verb.BOARD, Verb.WHOAMI, Verb.WAITING, Verb.LANGUAGE, Verb.RENAME, Verb.PAUSE,
    Verb.RESUME, Verb.ENDGAME, Verb.THEME, Verb.CLAIM, Verb.ACCUSE, Verb.TRUST,
})
"""What help offers at the console: it seats you at a game that starts at once, against computer players who
never keep it waiting: no lobby, no other phones, no texts to pay for."""
CAPABILITIES: Final = Capabilities(typed=True, verbs=frozenset(v.value for v in AT_THE_CONSOLE), own_pace=True)
"""A terminal shows a prompt's options itself, as a numbered list, answered by typing; you vote before the
computer players, however long you take."""
YOU = "you"
TABLE = "table"

CONSOLE_MESSAGES: Final = (
    "console-your-name", "console-default-name", "console-quit", "console-goodbye", "console-help-quit",
    "console-endgame",
)
"""The console's own words (the catalog's): asking a name, leaving, and help's line for leaving."""


@dataclass
class ConsoleChannel:
    """Prints messages addressed to the console; remembers the last prompt's decision for numbered answers."""

    output: TextIO
    decision: int | None = None
    table_id: str | None = None
    printed: list[str] = field(default_factory=list)
    capabilities: Capabilities = CAPABILITIES
    recent: set[str] = field(default_factory=set)
    """Lines shown since the last prompt or input: one screen says a rule once, though the table and the deal
    both do."""
    language: str | None = None
    """The language the service last spoke here in (the seat's, once ``language de`` changed it)."""

    def send_batch(self, address: str, messages: Sequence[Outbound]) -> list[Result]:
        """Print each message (with its numbered options, if it is a prompt)."""
        for message in messages:
            self.show(message)
        return [Delivered() for _ in messages]

    def show(self, message: Outbound) -> None:
        if message.table:
            self.table_id = message.table
        self.language = message.language
        if message.kind in (Kind.COUNTER, Kind.JOIN, Kind.LOBBY):
            # A group chat edits one counter in place; at the console you always vote last, so it would only
            # count the computers. A console table is seated and started at once: no code to share, and the
            # game's opening names the seating order.
            return
        lines = message.text.split("\n")
        if message.secret:
            # The deal's closing pad hides its length in a chat list; a terminal shows the whole text anyway.
            lines = [line for line in lines if line.strip("-") and line not in self.recent]
        text = "\n".join(lines)
        if message.kind is Kind.PROMPT and message.options:
            self.decision = message.decision if message.decision is not None else self.decision
            self.recent.clear()
            options = "  ".join(f"[{i}] {o.label}" for i, o in enumerate(message.options, 1))
            text = f"{text}\n{options}"
        self.recent.update(lines)
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
    name: str | None,
    theme: str,
    language: str,
    watch: bool,
    read: Callable[[str], str] = input,
) -> int:
    """Run one game at the console until it ends (or you quit: the game ends and the roles are shown); returns
    the exit status. ``deliver`` prints whatever the service queued. Without ``name``, asks for one."""
    counter = iter(range(1, 1_000_000_000))
    table_id: str | None = None
    catalogs = {language: Catalog.load(theme, language)}

    def words() -> Catalog:
        # The console's own lines speak the language the table last spoke here in (``language de`` changes it).
        spoken = console.language or language
        if spoken not in catalogs:
            catalogs[spoken] = Catalog.load(theme, spoken)
        return catalogs[spoken]

    def send(command: Command, raw: str = "", chat: str | None = None) -> None:
        nonlocal table_id
        console.recent.clear()  # what one answer says once; asked again, it is all said again
        receipt = port.handle(Inbound(CHANNEL, YOU, command, external_id=f"console-{next(counter)}",
                                      language=language, chat=chat, raw=raw))
        table_id = table_id or (receipt.tables[0] if receipt.tables else None)
        deliver()

    def leave() -> int:
        # Your seat's game ends with you: the host's "endgame" shows everyone's role, as at a real table.
        if table_id is not None and not port.game_over(table_id):
            send(Host(HostCommand.END))
        print(words().text("console-goodbye"), file=console.output)
        return 0

    def confirmed(question: str) -> bool:
        # A question of the console's own, before the game ends for everyone; no: the prompt it hid, again (the
        # service's, in the language spoken now).
        if _yes(read(words().text(question) + " ")):
            return True
        send(Ask(Query.PROMPT))
        return False

    if watch:
        # Watching: the terminal is the table's public channel and every seat is a computer player.
        send(OpenTable(name or "", theme=theme, public=True, seat=False), chat=TABLE)
        send(AddComputers(players))
    else:
        while table_id is None:
            # A name the service refuses ("You") is asked again: it says why, and nothing is dealt yet.
            chosen = name or ask_name(words(), read)
            if chosen is None:  # Ctrl-D: leaving before anything was dealt
                print(file=console.output)
                return leave()
            name = None
            send(OpenTable(chosen, theme=theme, ask_name=True))
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
            command = None if _quit(line) else parse(line, console.decision)
            if _quit(line) and not confirmed("console-quit"):
                continue
            # Ending the game is the host's word, and the host here is you: asked first, as leaving is.
            if command == Host(HostCommand.END) and not confirmed("console-endgame"):
                continue
        except EOFError:  # Ctrl-D: nothing more can be asked
            print(file=console.output)
            return leave()
        if _quit(line) or command == Host(HostCommand.END):
            return leave()
        if command is not None:
            send(command, raw=line)
        if command == Ask(Query.HELP):
            # Leaving is the console's own word, read before the grammar: help names it here, after the rest.
            print(words().text("console-help-quit"), file=console.output)


def _quit(line: str) -> bool:
    """True if the line is a word that leaves the game (the catalogs' ``quit``: quit, exit, q, beenden)."""
    return fold(line) in grammar().quit_words


def _yes(answer: str) -> bool:
    """True if ``answer`` is a yes (the grammar's Ja words: yes, y, ja, j)."""
    return grammar().parse(answer.strip()) == Decide("vote", "ja") if answer.strip() else False


def ask_name(words: Catalog, read: Callable[[str], str]) -> str | None:
    """Your name at the table; an empty answer takes your login name, else a default; None for Ctrl-D."""
    default = words.text("console-default-name")
    try:
        login = getpass.getuser().strip()
    except (OSError, KeyError):  # no login name in this environment (a container without a passwd entry)
        login = ""
    if login and login != "root":
        default = login[:1].upper() + login[1:]
    try:
        answer = read(words.text("console-your-name", default=default) + " ").strip()
    except EOFError:
        return None
    return answer or default


def _line_editing() -> None:
    """In a terminal, the arrow keys edit the line and bring back earlier ones (``input`` uses ``readline`` once
    it is imported; without it they arrive as ``^[[D``)."""
    if sys.stdin.isatty():
        with contextlib.suppress(ImportError):  # a Python built without it: lines are read as they come
            import readline  # noqa: F401


# --- the channel module's entry --------------------------------------------------------------------------------


class ConsoleSpec:
    """The terminal: one table, played at once against computer players (``moderator play``)."""

    name: Final = CHANNEL
    capabilities: Final = CAPABILITIES

    def __init__(self, read: Callable[[str], str] = input, output: TextIO | None = None) -> None:
        self.read = read
        self.output = output
        """Where it prints (None: standard output, as it is when the game starts)."""

    def off(self, settings: Settings) -> str | None:
        if settings.table is not None and not settings.server:
            return None
        return "it plays one table in this terminal (moderator play)"

    def routes(self, settings: Settings) -> Sequence[BaseRoute]:
        return []

    def webhooks(self, settings: Settings) -> Mapping[str, int]:
        return {}

    @contextlib.asynccontextmanager
    async def start(self, settings: Settings, runtime: Runtime) -> AsyncIterator[Running]:
        """The game at the terminal, once the service runs: it reads a line and prints what it caused, until the
        game ends or you leave."""
        table = settings.table
        assert table is not None
        console = ConsoleChannel(self.output or sys.stdout)
        delivery = runtime.delivery(CHANNEL, console, inline=True)

        async def main() -> int:
            # The terminal is read on the loop's own thread: Ctrl-C interrupts the read, as in any program.
            if self.read is input:
                _line_editing()
            return play(runtime.port, console, delivery.kick, players=table.players, name=table.name,
                        theme=table.theme, language=table.language, watch=table.watch, read=self.read)

        yield Running(console, main=main)


SPEC: Final = ConsoleSpec()
