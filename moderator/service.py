"""The table service: one inbound action -> one SQLite transaction (state, events, outbox), then delivery.

Persist first, send second. ``Service.handle`` records the input's id (dedupe), loads the table, applies the
engine, appends the action and its events, renders every event for every recipient entitled to it, and puts
those messages in the outbox, all in one transaction. A ``Sender`` delivers the outbox afterwards, with
retries. A game is its record: after a restart the service rebuilds each table by replaying its actions.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Final, Protocol, assert_never

from . import record as records
from . import render
from .board import BOARD_MESSAGE, Board
from .bots import ComputerPlayer, Memory
from .catalog import DEFAULT_LANGUAGE, DEFAULT_THEME, Catalog, UnknownCatalog, sms_segments
from .commands import (
    AddComputers,
    Ask,
    Choose,
    Command,
    Decide,
    Host,
    HostCommand,
    Inbound,
    Join,
    MovePhone,
    MoveSeat,
    OpenTable,
    OptOut,
    Query,
    RecordVotes,
    RemoveSeat,
    Seating,
    SetLanguage,
    SetReminders,
    SetTheme,
    Start,
)
from .engine import (
    Action,
    AnswerVeto,
    CallSpecialElection,
    CastVote,
    DiscardPolicy,
    EnactPolicy,
    Event,
    ExecutePlayer,
    GameState,
    InvestigateLoyalty,
    NominateChancellor,
    Phase,
    Policy,
    ProposeVeto,
    RuleViolation,
    apply,
    awaiting,
    new_game,
    new_seed,
    opening_events,
    public_view,
    view_for,
)
from .engine.types import MAX_PLAYERS, MIN_PLAYERS
from .render import InputProblem, Message, TableInfo
from .store import OutboxRow, SeatRow, Store, TableRow

log = logging.getLogger(__name__)

CODE_ALPHABET: Final = "ACDEFHJKMNPRTUVWXY3479"
"""Join-code characters: no look-alikes (0/O, 1/I/L, 2/Z, 5/S, 6/G, 8/B) and no vowels that spell words."""
CODE_LENGTH: Final = 5
ID_ALPHABET: Final = "abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789"
ID_LENGTH: Final = 12
"""A table's own id (about 70 bits): it names the table in button data and, later, in its screen's URL."""
NAME_LIMIT: Final = 20
"""Display names are cut to this many characters."""
COMPUTER_CHANNEL: Final = "computer"
"""The channel of computer players: nothing is ever sent to it."""
SMS_CHANNELS: Final = frozenset({"sms"})
"""Channels whose messages must fit one SMS."""
BOARD_CHANNELS: Final = frozenset({"telegram"})
"""Channels that show a public channel the board as an image (``board.Board`` rows, drawn when sent)."""
PUBLIC_RESULTS: Final = "public_results"
"""Table option: ``"host"`` sends public results to the host's phone only, not to every SMS seat (cost)."""
PUBLIC_TO_HOST: Final = "host"
PUBLIC_LANGUAGE: Final = "public_language"
"""Table option: the language of the public channel (a group)."""

LOBBY_MESSAGES: Final = (
    "table-opened",
    "table-joined",
    "seat-taken",
    "seats-list",
    "seat-removed",
    "computers-added",
    "game-starting",
    "not-host",
    "not-at-table",
    "no-such-table",
    "lobby-closed",
    "table-full",
    "already-seated",
    "seating-mismatch",
    "player-count",
    "game-paused",
    "game-resumed",
    "game-is-paused",
    "game-ended-by-host",
    "nudge",
    "nothing-to-nudge",
    "rematch",
    "language-set",
    "theme-set",
    "unknown-language",
    "unknown-theme",
    "move-code",
    "phone-moved",
    "help",
    "rules-summary",
    "physical-vote-prompt",
    "game-not-started",
    "reminders-set",
    "reminders-off",
    "reminder",
    "seated-elsewhere",
    "player-opted-out",
    "public-results-host",
    "public-results-all",
    "sms-cost",
    "player-unreachable",
    "player-undelivered",
    "sms-cost-delivery",
    "decide-in-private",
)
"""Message ids the service renders itself (everything else comes from ``render``); a test checks the catalogs."""


class Channel(Protocol):
    """Delivers rendered messages to one kind of address (a Telegram chat, a phone number, a terminal)."""

    def send(self, address: str, body: dict[str, Any]) -> None:
        """Deliver one message; raise ``TemporaryFailure`` to retry later or ``PermanentFailure`` to give up."""


class TemporaryFailure(Exception):
    """The channel could not deliver now (rate limit, network); try again later."""

    def __init__(self, reason: str, retry_after: float | None = None) -> None:
        super().__init__(reason)
        self.retry_after = retry_after


class PermanentFailure(Exception):
    """The channel will never deliver this (blocked, opted out, unknown address)."""


def decision_id(game: int, step: int) -> int:
    """The number a prompt's buttons carry: the game and the step its decision began at, so that a button
    from an earlier decision, or from the previous game at a rematch, is refused as no longer current."""
    return game * DECISIONS_PER_GAME + step


DECISIONS_PER_GAME: Final = 1_000_000
"""More steps than any game takes (a long 10-player game is a few hundred)."""


# --- action tokens: what a button carries -----------------------------------------------------------------


def action_token(action: Action) -> str:
    """A short token for a button's callback data: ``n3`` nominate seat 3, ``vj`` vote Ja, ``dF`` discard F…"""
    match action:
        case NominateChancellor(chancellor=target):
            return f"n{target}"
        case CastVote(ja=ja):
            return "vj" if ja else "vn"
        case DiscardPolicy(policy=policy):
            return f"d{policy.value}"
        case EnactPolicy(policy=policy):
            return f"e{policy.value}"
        case ProposeVeto():
            return "pv"
        case AnswerVeto(accept=accept):
            return "ay" if accept else "an"
        case InvestigateLoyalty(target=target):
            return f"i{target}"
        case CallSpecialElection(target=target):
            return f"s{target}"
        case ExecutePlayer(target=target):
            return f"x{target}"
    raise AssertionError(action)


def parse_token(seat: int, token: str) -> Action | None:
    """The action a button token stands for when pressed by ``seat``; None if it is not a token."""
    if len(token) < 2:
        return None
    head, rest = token[0], token[1:]
    if head in "nisx" and rest.isdecimal() and rest.isascii():  # "²".isdigit(), and int("²") raises
        target = int(rest)
        targeted: dict[str, Action] = {
            "n": NominateChancellor(seat, target),
            "i": InvestigateLoyalty(seat, target),
            "s": CallSpecialElection(seat, target),
            "x": ExecutePlayer(seat, target),
        }
        return targeted[head]
    if head in "de" and rest in ("L", "F"):
        return DiscardPolicy(seat, Policy(rest)) if head == "d" else EnactPolicy(seat, Policy(rest))
    plain: dict[str, Action] = {
        "vj": CastVote(seat, True),
        "vn": CastVote(seat, False),
        "pv": ProposeVeto(seat),
        "ay": AnswerVeto(seat, True),
        "an": AnswerVeto(seat, False),
    }
    return plain.get(token)


# --- the outbox, as built inside one transaction ----------------------------------------------------------


@dataclass
class Outgoing:
    """Messages collected while handling one input; they enter the outbox in the same transaction."""

    table_id: str | None
    rows: list[tuple[str | None, str, str, str, dict[str, Any]]] = field(default_factory=list)

    def add(self, channel: str, address: str, message: Message, **extra: Any) -> None:
        """Queue one rendered message for an address (never for a computer player)."""
        if channel == COMPUTER_CHANNEL:
            return
        body: dict[str, Any] = {
            "text": message.text,
            "secret": message.secret,
            "choices": [{"label": c.label, "token": action_token(c.action)} for c in message.choices],
        }
        body.update(extra)
        self.rows.append((self.table_id, channel, address, message.message_id, body))

    def board(self, channel: str, address: str, board: Board, game: int, language: str) -> None:
        """Queue the board image for a public channel: one per input, the latest (an earlier one is dropped)."""
        self.rows = [r for r in self.rows if (r[1], r[2], r[3]) != (channel, address, BOARD_MESSAGE)]
        body = {"board": board.to_json(), "table": self.table_id, "game": game, "language": language}
        self.rows.append((self.table_id, channel, address, BOARD_MESSAGE, body))


# --- a running table, kept in memory ------------------------------------------------------------------------


@dataclass
class Table:
    """A table as the service keeps it in memory: its row, seats, and the game under way (if any)."""

    row: TableRow
    seats: list[SeatRow]
    state: GameState | None = None
    actions: list[dict[str, Any]] = field(default_factory=list)
    log: list[Event] = field(default_factory=list)
    """Every event of the game so far, secrets included (for computer players' memories and the truth timeline)."""
    memories: dict[int, Memory] = field(default_factory=dict)

    @property
    def names(self) -> tuple[str, ...]:
        """Player names in seat order."""
        return tuple(s.name for s in self.seats)

    def info(self) -> TableInfo:
        """What rendering needs to know about this table."""
        return TableInfo(self.names, self.row.theme)

    def seat_of(self, channel: str, address: str) -> int | None:
        """The seat this address sits in, if any."""
        for seat in self.seats:
            if seat.channel == channel and seat.address == address:
                return seat.position
        return None

    def is_host(self, channel: str, address: str) -> bool:
        """True if this address is the table's host."""
        return self.row.host_channel == channel and self.row.host_address == address

    @property
    def public_language(self) -> str:
        """The language of the table's public channel (a group): its opener's, or what its host set there."""
        return str(self.row.options.get(PUBLIC_LANGUAGE, DEFAULT_LANGUAGE))


@dataclass(frozen=True, slots=True)
class Reply:
    """Where a private reply to the sender goes, and in which language."""

    channel: str
    address: str
    language: str


class Service:
    """Runs every table: takes inputs, applies the rules, and fills the outbox. One input at a time."""

    def __init__(
        self,
        store: Store,
        *,
        clock: Callable[[], float] = time.time,
        seed: Callable[[], int] = new_seed,
        computer: ComputerPlayer | None = None,
        drive_computers: bool = True,
        codes: random.Random | None = None,
    ) -> None:
        self.store = store
        self.clock = clock
        self.seed = seed
        # Table ids and join codes must be unguessable; tests pass a seeded Random for repeatable transcripts.
        self.codes = codes or random.SystemRandom()
        self.computer = computer or ComputerPlayer()
        self.drive_computers = drive_computers
        self._tables: dict[str, Table] = {}
        self.observers: list[Callable[[str], None]] = []
        """Called with a table's id after an input or a reminder changed it (committed): live pages refresh."""

    # --- the entry point -------------------------------------------------------------------------------

    def handle(self, inbound: Inbound) -> None:
        """Handle one input in one transaction (dropped if its id was seen), then let computer players move."""
        now = self.clock()
        touched: set[str] = set()
        try:
            with self.store.transaction():
                if inbound.external_id is not None and self.store.seen(inbound.channel, inbound.external_id, now):
                    return
                out = Outgoing(None)
                self._dispatch(inbound, out, now, touched)
                self.store.enqueue(out.rows, now)
        except BaseException:
            # The transaction rolled back: forget what the cache learned inside it, reload from the database.
            for table_id in touched:
                self._tables.pop(table_id, None)
            raise
        for table_id in touched:
            self.run_computers(table_id)
        self._changed(touched)

    def _changed(self, table_ids: set[str]) -> None:
        for table_id in table_ids:
            for observer in self.observers:
                observer(table_id)

    def table(self, table_id: str) -> Table | None:
        """A table, loaded from the database (and its game rebuilt by replay) on first use."""
        cached = self._tables.get(table_id)
        if cached is not None:
            return cached
        row = self.store.table(table_id)
        if row is None:
            return None
        table = Table(row, self.store.seats(table_id))
        if row.setup is not None and row.status != "lobby":
            actions = self.store.actions(table_id, row.game)
            result = records.replay(records.parse({**row.setup, "actions": actions}))
            if result.error is not None:
                raise RuntimeError(f"table {table_id}: stored action {result.error.index} no longer applies")
            table.state, table.actions, table.log = result.state, actions, list(result.events)
            table.memories = {
                s.position: _remember(Memory(s.position), table.log) for s in table.seats if s.computer
            }
        self._tables[table_id] = table
        return table

    def resume_all(self) -> list[str]:
        """Load every table with a game under way (after a restart) and let computer players move."""
        ids = self.store.open_tables()
        for table_id in ids:
            self.table(table_id)
            self.run_computers(table_id)
        return ids

    # --- dispatch ---------------------------------------------------------------------------------------

    def _dispatch(self, inbound: Inbound, out: Outgoing, now: float, touched: set[str]) -> None:
        command: Command = inbound.command
        language = inbound.language or DEFAULT_LANGUAGE
        reply = Reply(inbound.channel, inbound.address, language)
        match command:
            case OpenTable():
                self._open(inbound, command, out, now, touched)
                return
            case Join():
                self._join(inbound, command, out, now, touched)
                return
            case OptOut():
                self._opt_out(inbound, out)
                return
            case _:
                pass
        table = self._table_for(inbound)
        if table is None:
            if isinstance(command, Ask) and command.query in (Query.HELP, Query.RULES):
                self._say(out, reply, DEFAULT_THEME, "help" if command.query is Query.HELP else "rules-summary")
            else:
                self._say(out, reply, DEFAULT_THEME, "not-at-table")
            return
        out.table_id = table.row.id
        touched.add(table.row.id)
        seat = table.seat_of(inbound.channel, inbound.address)
        if seat is not None:
            reply = Reply(inbound.channel, inbound.address, table.seats[seat].language)
        host = table.is_host(inbound.channel, inbound.address)
        match command:
            case (AddComputers() | Seating() | MoveSeat() | RemoveSeat() | Start() | Host() | MovePhone() | SetTheme()
                  | SetReminders()):
                if not host:
                    self._say(out, reply, table.row.theme, "not-host")
                    return
        match command:
            case AddComputers(count=count):
                self._add_computers(table, count, reply, out, now)
            case Seating(names=names):
                self._reseat(table, names, reply, out, now)
            case MoveSeat(name=name, position=position):
                self._move_seat(table, name, position, reply, out, now)
            case RemoveSeat(name=name):
                self._remove_seat(table, name, reply, out, now)
            case Start():
                self._start(table, reply, out, now)
            case Decide() | Choose() if (
                seat is not None and inbound.chat is not None and inbound.chat == table.row.public_address
            ):
                # Typed in the group, a vote would not be secret: not counted; the voter is told where to vote.
                self._say(out, reply, table.row.theme, "decide-in-private")
            case Decide() | Choose() | RecordVotes():
                self._decide(table, seat, command, inbound.raw, reply, out, now)
            case Ask(query=query):
                self._ask(table, seat, query, reply, out)
            case Host(command=host_command):
                self._host(table, host_command, reply, out, now)
            case MovePhone(name=name):
                self._move_phone(table, name, reply, out, now)
            case SetLanguage(language=lang):
                in_group = inbound.chat is not None and inbound.chat == table.row.public_address
                self._set_language(table, seat, lang, reply, out, now, group=in_group and host)
            case SetTheme(theme=theme):
                self._set_theme(table, theme, reply, out, now)
            case SetReminders(minutes=minutes):
                self._set_reminders(table, minutes, reply, out, now)
            case _:
                assert_never(command)  # OpenTable, Join and OptOut were handled above

    def _table_for(self, inbound: Inbound) -> Table | None:
        """The table an input is about: the group it was typed in, else the sender's newest table."""
        if inbound.chat is not None:
            for row in self.store.tables_of(inbound.channel, inbound.chat):
                if row.public_address == inbound.chat:
                    return self.table(row.id)
        ids = self.store.table_ids_of(inbound.channel, inbound.address)
        return self.table(ids[0]) if ids else None

    # --- words -------------------------------------------------------------------------------------------

    @staticmethod
    def _catalog(theme: str, language: str) -> Catalog:
        try:
            return Catalog.load(theme, language)
        except UnknownCatalog:
            return Catalog.load(theme, DEFAULT_LANGUAGE)

    def _say(self, out: Outgoing, to: Reply, theme: str, message_id: str, /, **params: Any) -> None:
        """A private reply from the service's own messages (lobby, host controls)."""
        sms = to.channel in SMS_CHANNELS
        text = self._catalog(theme, to.language).text(message_id, sms=sms, **params)
        out.add(to.channel, to.address, Message(message_id, text, False))

    def _tell(self, table: Table, out: Outgoing, message_id: str, **params: Any) -> None:
        """A public announcement from the service: to the group, or to every seat if there is none."""
        for channel, address, language in self._public_recipients(table):
            self._say(out, Reply(channel, address, language), table.row.theme, message_id, **params)

    def _public_recipients(self, table: Table) -> Iterator[tuple[str, str, str]]:
        if table.row.public_channel is not None and table.row.public_address is not None:
            yield table.row.public_channel, table.row.public_address, table.public_language
            return
        for seat in table.seats:
            if not seat.computer and self._gets_public(table, seat):
                yield seat.channel, seat.address, seat.language

    @staticmethod
    def _gets_public(table: Table, seat: SeatRow) -> bool:
        """False for an SMS seat when the host chose "host phone only" (``public_results``): the host reads out."""
        if table.row.options.get(PUBLIC_RESULTS) != PUBLIC_TO_HOST or seat.channel not in SMS_CHANNELS:
            return True
        return table.is_host(seat.channel, seat.address)

    # --- the lobby ---------------------------------------------------------------------------------------

    def _open(self, inbound: Inbound, command: OpenTable, out: Outgoing, now: float, touched: set[str]) -> None:
        theme = command.theme or DEFAULT_THEME
        language = inbound.language or DEFAULT_LANGUAGE
        reply = Reply(inbound.channel, inbound.address, language)
        try:
            Catalog.load(theme, language)
        except UnknownCatalog:
            self._say(out, reply, DEFAULT_THEME, "unknown-theme", theme=theme)
            return
        table_id = "".join(self.codes.choice(ID_ALPHABET) for _ in range(ID_LENGTH))
        code = self._new_code()
        public = command.public and inbound.chat is not None
        row = TableRow(
            id=table_id,
            code=code,
            status="lobby",
            theme=theme,
            host_channel=inbound.channel,
            host_address=inbound.address,
            public_channel=inbound.channel if public else None,
            public_address=inbound.chat if public else None,
            options={"physical_voting": command.physical_voting, **({PUBLIC_LANGUAGE: language} if public else {})},
            game=0,
            setup=None,
            decision_step=0,
        )
        self.store.insert_table(row, now)
        seats = []
        if command.seat:
            name = _clean_name(command.name) or "1"
            seats.append(SeatRow(0, name, inbound.channel, inbound.address, language, False))
        self.store.replace_seats(table_id, seats)
        table = Table(row, seats)
        self._tables[table_id] = table
        touched.add(table_id)
        out.table_id = table_id
        self._say(out, reply, theme, "table-opened", code=code)
        # "public": a channel may show the join code (QR, button) in the group the table was opened in.
        out.rows[-1][4].update({"join_code": code, "table": table_id, "public": row.public_address})

    def _new_code(self) -> str:
        while True:
            code = "".join(self.codes.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))
            if self.store.table_by_code(code) is None:
                return code

    def _join(self, inbound: Inbound, command: Join, out: Outgoing, now: float, touched: set[str]) -> None:
        language = inbound.language or DEFAULT_LANGUAGE
        reply = Reply(inbound.channel, inbound.address, language)
        code = command.code.strip().upper()
        row = self.store.table_by_code(code)
        if row is None:
            if self._reclaim(inbound, code, out, now, touched):
                return
            self._say(out, reply, DEFAULT_THEME, "no-such-table", code=code)
            return
        table = self.table(row.id)
        assert table is not None
        touched.add(row.id)
        out.table_id = row.id
        if row.status != "lobby":
            self._say(out, reply, row.theme, "lobby-closed")
            return
        if table.seat_of(inbound.channel, inbound.address) is not None:
            self._say(out, reply, row.theme, "already-seated")
            return
        if self._seated_elsewhere(inbound.channel, inbound.address, row.id):
            self._say(out, reply, row.theme, "seated-elsewhere")
            return
        if len(table.seats) >= MAX_PLAYERS:
            self._say(out, reply, row.theme, "table-full", most=MAX_PLAYERS)
            return
        name = _unique_name(_clean_name(command.name) or str(len(table.seats) + 1), table.names)
        seat = SeatRow(len(table.seats), name, inbound.channel, inbound.address, language, False)
        table.seats.append(seat)
        self.store.replace_seats(row.id, table.seats)
        self._say(out, reply, row.theme, "table-joined", name=name, players=len(table.seats))
        self._announce_seats(table, out, "seat-taken", name=name)

    def _seated_elsewhere(self, channel: str, address: str, table_id: str) -> bool:
        """True if this address has a seat in a game under way at another table (its inputs would go astray)."""
        for row in self.store.tables_of(channel, address):
            other = self.table(row.id) if row.id != table_id and row.status in ("playing", "paused") else None
            if other is not None and other.seat_of(channel, address) is not None:
                return True
        return False

    def _opt_out(self, inbound: Inbound, out: Outgoing) -> None:
        """The sender's channel will not deliver to them any more: drop what waits, tell their tables' hosts."""
        self.store.drop_pending(inbound.channel, inbound.address)
        for row in self.store.tables_of(inbound.channel, inbound.address):
            table = self.table(row.id)
            seat = None if table is None else table.seat_of(inbound.channel, inbound.address)
            if table is None or seat is None or table.is_host(inbound.channel, inbound.address):
                continue
            language = next(
                (s.language for s in table.seats if table.is_host(s.channel, s.address)), DEFAULT_LANGUAGE
            )
            host = Reply(table.row.host_channel, table.row.host_address, language)
            out.table_id = table.row.id
            self._say(out, host, table.row.theme, "player-opted-out", name=table.seats[seat].name)

    def unreachable(self, channel: str, address: str, *, undelivered: bool = False) -> None:
        """A channel cannot reach this address (blocked, never opened a chat; ``undelivered``: the carrier reports
        its texts undelivered): the host and the group are told who it is, at every table where it has a seat;
        the game waits for them as for anyone."""
        now = self.clock()
        with self.store.transaction():
            out = Outgoing(None)
            for row in self.store.tables_of(channel, address):
                table = self.table(row.id)
                seat = None if table is None else table.seat_of(channel, address)
                if table is None or seat is None or table.row.status not in ("lobby", "playing", "paused"):
                    continue
                out.table_id = table.row.id
                name = table.seats[seat].name
                if not table.is_host(channel, address):
                    language = next((s.language for s in table.seats if table.is_host(s.channel, s.address)),
                                    DEFAULT_LANGUAGE)
                    host = Reply(table.row.host_channel, table.row.host_address, language)
                    self._unreachable_note(out, host, table.row.theme, name, undelivered)
                if table.row.public_channel is not None and table.row.public_address is not None:
                    group = Reply(table.row.public_channel, table.row.public_address, table.public_language)
                    self._unreachable_note(out, group, table.row.theme, name, undelivered)
            self.store.enqueue(out.rows, now)

    def _unreachable_note(self, out: Outgoing, to: Reply, theme: str, name: str, undelivered: bool) -> None:
        if undelivered:
            self._say(out, to, theme, "player-undelivered", name=name)
        else:
            self._say(out, to, theme, "player-unreachable", name=name)

    def public_moved(self, channel: str, old: str, new: str) -> None:
        """A group chat got a new address (Telegram upgraded it to a supergroup): its tables follow it."""
        now = self.clock()
        with self.store.transaction():
            for row in self.store.tables_of(channel, old):
                if row.public_channel == channel and row.public_address == old:
                    self.store.update_table(row.id, now, public_address=new)
                    cached = self._tables.get(row.id)
                    if cached is not None:
                        cached.row = replace(cached.row, public_address=new)

    def _announce_seats(self, table: Table, out: Outgoing, message_id: str, **params: Any) -> None:
        seating = ", ".join(f"{i + 1}. {s.name}" for i, s in enumerate(table.seats))
        first = len(out.rows)
        self._tell(table, out, message_id, players=len(table.seats), seating=seating, **params)
        # The seats, and whether the recipient may change them: a channel can draw seating controls.
        for _, channel, address, _, body in out.rows[first:]:
            host = table.is_host(channel, address) or address == table.row.public_address
            body.update({"table": table.row.id, "seats": list(table.names), "host": host})

    def _add_computers(self, table: Table, count: int | None, reply: Reply, out: Outgoing, now: float) -> None:
        if table.row.status != "lobby":
            self._say(out, reply, table.row.theme, "lobby-closed")
            return
        free = MAX_PLAYERS - len(table.seats)
        wanted = max(MIN_PLAYERS - len(table.seats), 0) if count is None else count
        wanted = max(0, min(wanted, free))
        catalog = self._catalog(table.row.theme, reply.language)
        for _ in range(wanted):
            n = sum(1 for s in table.seats if s.computer) + 1
            name = _unique_name(catalog.text("computer-name", n=n), table.names)
            address = f"{table.row.id}/{len(table.seats)}"
            table.seats.append(SeatRow(len(table.seats), name, COMPUTER_CHANNEL, address, DEFAULT_LANGUAGE, True))
        self.store.replace_seats(table.row.id, table.seats)
        self._announce_seats(table, out, "computers-added", added=wanted)

    def _reseat(self, table: Table, names: Sequence[str], reply: Reply, out: Outgoing, now: float) -> None:
        if table.row.status != "lobby":
            self._say(out, reply, table.row.theme, "lobby-closed")
            return
        picked = [_match_name(n, table.names) for n in names]
        if None in picked or len(set(picked)) != len(table.seats) or len(picked) != len(table.seats):
            self._say(out, reply, table.row.theme, "seating-mismatch", seating=", ".join(table.names))
            return
        by_name = {s.name: s for s in table.seats}
        table.seats = [replace(by_name[n], position=i) for i, n in enumerate(p for p in picked if p)]
        self.store.replace_seats(table.row.id, table.seats)
        self._announce_seats(table, out, "seats-list")

    def _move_seat(self, table: Table, name: str, position: int, reply: Reply, out: Outgoing, now: float) -> None:
        if table.row.status != "lobby":
            self._say(out, reply, table.row.theme, "lobby-closed")
            return
        found = _match_name(name, table.names)
        if found is None or not 1 <= position <= len(table.seats):
            self._say(out, reply, table.row.theme, "seating-mismatch", seating=", ".join(table.names))
            return
        order = [s for s in table.seats if s.name != found]
        order.insert(position - 1, next(s for s in table.seats if s.name == found))
        table.seats = [replace(s, position=i) for i, s in enumerate(order)]
        self.store.replace_seats(table.row.id, table.seats)
        self._announce_seats(table, out, "seats-list")

    def _remove_seat(self, table: Table, name: str, reply: Reply, out: Outgoing, now: float) -> None:
        if table.row.status != "lobby":
            self._say(out, reply, table.row.theme, "lobby-closed")
            return
        found = _match_name(name, table.names)
        if found is None:
            self._say(out, reply, table.row.theme, "seating-mismatch", seating=", ".join(table.names))
            return
        gone = next(s for s in table.seats if s.name == found)
        table.seats = [replace(s, position=i) for i, s in enumerate(s for s in table.seats if s is not gone)]
        self.store.replace_seats(table.row.id, table.seats)
        self._say(out, Reply(gone.channel, gone.address, gone.language), table.row.theme, "seat-removed", name=found)
        self._announce_seats(table, out, "seats-list")

    # --- starting a game ---------------------------------------------------------------------------------

    def _start(self, table: Table, reply: Reply, out: Outgoing, now: float) -> None:
        if table.row.status not in ("lobby", "over"):
            self._say(out, reply, table.row.theme, "lobby-closed")
            return
        players = len(table.seats)
        if not MIN_PLAYERS <= players <= MAX_PLAYERS:
            self._say(out, reply, table.row.theme, "player-count", players=players, least=MIN_PLAYERS,
                      most=MAX_PLAYERS)
            return
        state = new_game(players, seed=self.seed())
        setup = records.to_json(table.names, state, [])
        del setup["actions"]
        game = table.row.game + 1
        # The join code stops taking players; the table keeps its own id for everything after.
        options = {**table.row.options, "started": now}  # the SMS cost of this game counts from here
        self.store.update_table(table.row.id, now, status="playing", code=None, setup=setup, game=game,
                                decision_step=decision_id(game, 0), options=options)
        table.row = replace(table.row, status="playing", code=None, setup=setup, game=game,
                            decision_step=decision_id(game, 0),
                            options=options)
        table.state, table.actions, table.log = state, [], []
        table.memories = {s.position: Memory(s.position) for s in table.seats if s.computer}
        self._announce_seats(table, out, "game-starting")
        self._publish(table, opening_events(state), out, now, new_decision=True)

    # --- decisions ---------------------------------------------------------------------------------------

    def _decide(
        self, table: Table, seat: int | None, command: Decide | Choose | RecordVotes, raw: str, reply: Reply,
        out: Outgoing, now: float,
    ) -> None:
        theme = table.row.theme
        state = table.state
        if seat is None:
            self._say(out, reply, theme, "not-at-table")
            return
        if state is None or table.row.status == "lobby":
            self._say(out, reply, theme, "game-not-started")
            return
        if table.row.status == "paused":
            self._say(out, reply, theme, "game-is-paused")
            return
        if table.row.status == "over":
            # Finished, or ended by the host mid-game: nothing is decided any more (a rematch starts anew).
            self._problem(table, reply, out, InputProblem.NOTHING_OWED, raw)
            return
        actions: list[Action]
        match command:
            case Choose(token=token, decision=decision):
                if decision is not None and decision != table.row.decision_step:
                    self._problem(table, reply, out, InputProblem.STALE, raw)
                    return
                action = self._chosen(table, state, seat, token)
                if action is None:
                    self._problem(table, reply, out, InputProblem.UNPARSEABLE, raw)
                    return
                actions = [action]
            case Decide(kind=kind, argument=argument):
                decided = self._typed(table, seat, kind, argument, reply, out, raw)
                if decided is None:
                    return
                actions = [decided]
            case RecordVotes(ja=ja_names):
                recorded = self._recorded_votes(table, state, seat, ja_names, reply, out, raw)
                if recorded is None:
                    return
                actions = recorded
        try:
            self._play(table, actions, out, now)
        except RuleViolation as violation:
            catalog = self._catalog(theme, reply.language)
            message = render.violation_message(violation, table.info(), catalog, sms=reply.channel in SMS_CHANNELS)
            out.add(reply.channel, reply.address, message)

    def _chosen(self, table: Table, state: GameState, seat: int, token: str) -> Action | None:
        token = token.strip()
        if token.isdecimal() and token.isascii():  # ASCII digits only: int("²") raises
            # A numbered option of the current prompt (SMS, console): the same order as the prompt's choices.
            legal = view_for(state, seat).legal_actions
            index = int(token) - 1
            return legal[index] if 0 <= index < len(legal) else None
        return parse_token(seat, token)

    def _typed(
        self, table: Table, seat: int, kind: str, argument: str | None, reply: Reply, out: Outgoing, raw: str
    ) -> Action | None:
        entry: dict[str, Any] = {"player": table.names[seat], "action": kind}
        arg = (argument or "").strip()
        match kind:
            case "nominate" | "investigate" | "special_election" | "execute":
                candidates = _name_candidates(arg, table.names)
                if len(candidates) != 1:
                    problem = InputProblem.AMBIGUOUS if candidates else InputProblem.UNPARSEABLE
                    self._problem(table, reply, out, problem, raw, candidates)
                    return None
                entry["target"] = candidates[0]
            case "vote":
                entry["vote"] = {"ja": "ja", "yes": "ja", "j": "ja", "nein": "nein", "no": "nein", "n": "nein"}.get(
                    arg.lower(), arg.lower()
                )
            case "discard" | "enact":
                entry["card"] = arg.upper()[:1]
            case "veto_reply":
                entry["accept"] = arg.lower() in ("yes", "ja", "accept", "y", "j", "1", "true")
        try:
            return records.parse_action(table.names, entry)
        except records.RecordError:
            self._problem(table, reply, out, InputProblem.UNPARSEABLE, raw)
            return None

    def _recorded_votes(
        self, table: Table, state: GameState, seat: int, ja_names: Sequence[str], reply: Reply, out: Outgoing,
        raw: str,
    ) -> list[Action] | None:
        if not table.row.options.get("physical_voting") or state.phase is not Phase.ELECTION:
            self._problem(table, reply, out, InputProblem.NOTHING_OWED, raw)
            return None
        if seat != state.president:
            self._problem(table, reply, out, InputProblem.NOTHING_OWED, raw)
            return None
        ja: set[int] = set()
        for name in ja_names:
            found = _match_name(name, table.names)
            if found is None:
                self._problem(table, reply, out, InputProblem.UNPARSEABLE, raw)
                return None
            ja.add(table.names.index(found))
        return [CastVote(s, s in ja) for s in range(state.players) if state.alive[s]]

    def _problem(
        self, table: Table, reply: Reply, out: Outgoing, problem: InputProblem, raw: str,
        options: Sequence[str] = (),
    ) -> None:
        catalog = self._catalog(table.row.theme, reply.language)
        message = render.input_message(
            problem, table.info(), catalog, sms=reply.channel in SMS_CHANNELS, text=raw, options=options
        )
        out.add(reply.channel, reply.address, message)

    def _play(self, table: Table, actions: Sequence[Action], out: Outgoing, now: float) -> None:
        """Apply actions in order (all or none), log them, and publish what happened."""
        state = table.state
        assert state is not None
        events: list[Event] = []
        before = state.phase
        for action in actions:
            state, new = apply(state, action)  # a RuleViolation here leaves everything as it was
            events.extend(new)
        n = len(table.actions)
        for i, action in enumerate(actions):
            entry = records.action_to_json(table.names, action)
            self.store.append_action(table.row.id, table.row.game, n + i, entry, now)
            table.actions.append(entry)
        table.state = state
        # Only a vote keeps the phase; every other action starts a new decision, and old buttons go stale.
        new_decision = state.phase is not before or any(not isinstance(a, CastVote) for a in actions)
        self._publish(table, events, out, now, new_decision=new_decision)

    def _publish(self, table: Table, events: Sequence[Event], out: Outgoing, now: float, *, new_decision: bool) -> None:
        """Log events, render them for every entitled recipient, and prompt whoever owes a new decision."""
        state = table.state
        assert state is not None
        first = len(table.log)
        self.store.append_events(
            table.row.id, table.row.game, first,
            [(state.step, _kind(e), _payload(e)) for e in events],
        )
        table.log.extend(events)
        for position, memory in table.memories.items():
            table.memories[position] = _remember(memory, events)
        if new_decision:
            table.row = replace(table.row, decision_step=decision_id(table.row.game, state.step))
            self.store.update_table(table.row.id, now, decision_step=table.row.decision_step)
            self._arm_reminder(table, now)
        over = state.phase is Phase.GAME_OVER
        if over:
            table.row = replace(table.row, status="over")
            self.store.update_table(table.row.id, now, status="over")
        board = public_view(state)
        info = table.info()
        decision = table.row.decision_step
        group = table.row.public_channel is not None and table.row.public_address is not None
        if group:
            assert table.row.public_channel is not None and table.row.public_address is not None
            channel, address = table.row.public_channel, table.row.public_address
            catalog = self._catalog(table.row.theme, table.public_language)
            for message in render.batch_messages(events, None, info, catalog, board=board,
                                                 sms=channel in SMS_CHANNELS):
                out.add(channel, address, message)
            if channel in BOARD_CHANNELS:
                out.board(channel, address, Board.of(board, info), table.row.game, table.public_language)
        waiting = set(awaiting(state)) if new_decision else set()
        physical = bool(table.row.options.get("physical_voting")) and state.phase is Phase.ELECTION
        # An event renders the same for every seat that may see it (render's contract): once per language/channel.
        rendered: dict[tuple[int, str, bool], list[Message]] = {}
        catalogs: dict[str, Catalog] = {}
        audiences = [e.audience for e in events]
        for seat in table.seats:
            if seat.computer:
                continue
            sms = seat.channel in SMS_CHANNELS
            catalog = catalogs.get(seat.language) or catalogs.setdefault(
                seat.language, self._catalog(table.row.theme, seat.language))
            public = not group and self._gets_public(table, seat)
            for i, (event, audience) in enumerate(zip(events, audiences, strict=True)):
                if not audience.includes(seat.position) or not (public or not audience.everyone):
                    continue
                messages = rendered.get((i, seat.language, sms))
                if messages is None:
                    messages = render.event_messages(event, seat.position, info, catalog, sms=sms, board=board)
                    rendered[(i, seat.language, sms)] = messages
                for message in messages:
                    out.add(seat.channel, seat.address, message, decision=decision)
            if seat.position in waiting and not physical:
                prompt = render.prompt(view_for(state, seat.position), info, catalog, sms=sms)
                if prompt is not None:
                    out.add(seat.channel, seat.address, prompt, decision=decision, table=table.row.id)
            if physical and new_decision and seat.position == state.president:
                self._say(out, Reply(seat.channel, seat.address, seat.language), table.row.theme,
                          "physical-vote-prompt")
        if over:
            self._finish(table, out)

    def _finish(self, table: Table, out: Outgoing) -> None:
        """At the end: the truth timeline to the table (roles were revealed by the last event)."""
        info = table.info()
        for channel, address, language in self._public_recipients(table):
            catalog = self._catalog(table.row.theme, language)
            for message in render.truth_timeline(table.log, info, catalog, sms=channel in SMS_CHANNELS):
                out.add(channel, address, message)

    # --- computer players ----------------------------------------------------------------------------------

    def run_computers(self, table_id: str, limit: int = 10_000) -> int:
        """Let computer players make every decision they owe, one transaction each; returns how many."""
        if not self.drive_computers:
            return 0
        table = self.table(table_id)
        moves = 0
        while table is not None and table.state is not None and table.row.status == "playing" and moves < limit:
            state = table.state
            owing = [s for s in awaiting(state) if table.seats[s].computer]
            if not owing:
                break
            seat = owing[0]
            rng = random.Random(f"{state.setup.seed}/computer/{seat}/{state.step}")
            action = self.computer.choose(view_for(state, seat), table.memories[seat], rng)
            now = self.clock()
            try:
                with self.store.transaction():
                    out = Outgoing(table_id)
                    self._play(table, [action], out, now)
                    self.store.enqueue(out.rows, now)
            except BaseException:
                self._tables.pop(table_id, None)
                raise
            moves += 1
        return moves

    # --- questions and host controls ---------------------------------------------------------------------

    def _ask(self, table: Table, seat: int | None, query: Query, reply: Reply, out: Outgoing) -> None:
        theme = table.row.theme
        catalog = self._catalog(theme, reply.language)
        sms = reply.channel in SMS_CHANNELS
        state = table.state
        match query:
            case Query.HELP:
                self._say(out, reply, theme, "help")
            case Query.RULES:
                self._say(out, reply, theme, "rules-summary")
            case Query.BOARD | Query.WAITING:
                if state is None:
                    self._announce_to(out, reply, table)
                    return
                for message in render.board_messages(public_view(state), table.info(), catalog, sms=sms):
                    out.add(reply.channel, reply.address, message)
            case Query.WHOAMI:
                if seat is None or state is None:
                    self._say(out, reply, theme, "not-at-table" if seat is None else "game-not-started")
                    return
                for message in render.knowledge_messages(view_for(state, seat), table.info(), catalog, sms=sms):
                    out.add(reply.channel, reply.address, message)

    def _announce_to(self, out: Outgoing, reply: Reply, table: Table) -> None:
        seating = ", ".join(f"{i + 1}. {s.name}" for i, s in enumerate(table.seats))
        self._say(out, reply, table.row.theme, "seats-list", players=len(table.seats), seating=seating)

    def _host(self, table: Table, command: HostCommand, reply: Reply, out: Outgoing, now: float) -> None:
        theme = table.row.theme
        status = table.row.status
        match command:
            case HostCommand.PAUSE:
                if status != "playing":
                    self._say(out, reply, theme, "game-not-started")
                    return
                self._set_status(table, "paused", now)
                self._tell(table, out, "game-paused")
            case HostCommand.RESUME:
                if status != "paused":
                    self._say(out, reply, theme, "game-not-started")
                    return
                self._set_status(table, "playing", now)
                self._tell(table, out, "game-resumed")
                self._nudge(table, out, reply)
            case HostCommand.NUDGE:
                self._nudge(table, out, reply)
            case HostCommand.END:
                if status not in ("playing", "paused"):
                    self._say(out, reply, theme, "game-not-started")
                    return
                self._set_status(table, "over", now)
                self._tell(table, out, "game-ended-by-host")
                if table.state is not None:  # the game is over: who was who is no longer a secret
                    for channel, address, language in self._public_recipients(table):
                        message = render.roles_message(table.state.roles, table.info(),
                                                       self._catalog(theme, language), sms=channel in SMS_CHANNELS)
                        out.add(channel, address, message)
            case HostCommand.REMATCH:
                if status != "over":
                    self._say(out, reply, theme, "game-not-started")
                    return
                self._tell(table, out, "rematch")
                self._start(table, reply, out, now)
            case HostCommand.PUBLIC_TO_HOST | HostCommand.PUBLIC_TO_ALL:
                to_host = command is HostCommand.PUBLIC_TO_HOST
                options = {**table.row.options, PUBLIC_RESULTS: PUBLIC_TO_HOST if to_host else "all"}
                table.row = replace(table.row, options=options)
                self.store.update_table(table.row.id, now, options=options)
                if to_host:
                    self._say(out, reply, theme, "public-results-host")
                else:
                    self._say(out, reply, theme, "public-results-all")
            case HostCommand.COST:
                segments, delivered, failed = self._sms_segments(table)
                if delivered or failed:
                    self._say(out, reply, theme, "sms-cost-delivery", segments=segments, delivered=delivered,
                              failed=failed)
                else:
                    self._say(out, reply, theme, "sms-cost", segments=segments)

    def _sms_segments(self, table: Table) -> tuple[int, int, int]:
        """SMS segments this table's game has sent or queued, and of those sent how many Twilio reported
        delivered and not delivered (status callbacks; 0 and 0 without them)."""
        since = float(table.row.options.get("started", 0.0))
        queued = sum(
            sms_segments(text)
            for _, sent_at, text in self.store.outbox_texts(table.row.id, sorted(SMS_CHANNELS), since)
            if sent_at is None
        )
        statuses = self.store.sms_statuses(table.row.id, since)
        failed = statuses.get("undelivered", 0) + statuses.get("failed", 0)
        return sum(statuses.values()) + queued, statuses.get("delivered", 0) + statuses.get("read", 0), failed

    def _set_status(self, table: Table, status: str, now: float) -> None:
        table.row = replace(table.row, status=status)
        self.store.update_table(table.row.id, now, status=status)
        self._arm_reminder(table, now)

    # --- reminders (off by default) ------------------------------------------------------------------------

    def _set_reminders(self, table: Table, minutes: int | None, reply: Reply, out: Outgoing, now: float) -> None:
        options = {**table.row.options, "reminder_minutes": minutes if minutes and minutes > 0 else None}
        table.row = replace(table.row, options=options)
        self.store.update_table(table.row.id, now, options=options)
        self._arm_reminder(table, now)
        if options["reminder_minutes"]:
            self._say(out, reply, table.row.theme, "reminders-set", minutes=options["reminder_minutes"])
        else:
            self._say(out, reply, table.row.theme, "reminders-off")

    def _arm_reminder(self, table: Table, now: float) -> None:
        """A reminder falls due N minutes after a decision starts, while the game runs and reminders are on."""
        minutes = table.row.options.get("reminder_minutes")
        running = table.row.status == "playing" and table.state is not None
        self.store.set_deadline(table.row.id, "reminder", now + 60 * minutes if minutes and running else None)

    def tick(self) -> int:
        """Send the reminders that have fallen due (never an action on anyone's behalf); returns how many tables."""
        now = self.clock()
        reminded = 0
        for table_id, kind in self.store.deadlines_due(now):
            table = self.table(table_id)
            with self.store.transaction():
                self.store.set_deadline(table_id, kind, None)
                if table is None or table.state is None or table.row.status != "playing":
                    continue
                out = Outgoing(table_id)
                minutes = table.row.options.get("reminder_minutes") or 0
                theme = table.row.theme

                def remind(reply: Reply, out: Outgoing = out, theme: str = theme, minutes: int = minutes) -> None:
                    self._say(out, reply, theme, "reminder", minutes=minutes)

                self._prompt_again(table, out, remind)
                self.store.enqueue(out.rows, now)
                reminded += 1
            self._changed({table_id})
        return reminded

    def _nudge(self, table: Table, out: Outgoing, reply: Reply) -> None:
        """Prompt again everyone who owes a decision (never a random action on their behalf)."""
        if table.state is None or table.row.status != "playing":
            self._say(out, reply, table.row.theme, "nothing-to-nudge")
            return
        names = self._prompt_again(table, out)
        self._say(out, reply, table.row.theme, "nudge", names=", ".join(names))

    def _prompt_again(
        self, table: Table, out: Outgoing, note: Callable[[Reply], None] | None = None
    ) -> list[str]:
        """Send whoever owes a decision its prompt again, after ``note(reply)`` if given; returns their names.

        With physical voting the table votes with cards: during an election the President owes the record of
        the votes, and nobody owes a button.
        """
        state = table.state
        assert state is not None
        physical = table.row.options.get("physical_voting") and state.phase is Phase.ELECTION
        if physical:
            assert state.president is not None
            owing = [table.seats[state.president]]
        else:
            owing = [table.seats[seat] for seat in awaiting(state)]
        info = table.info()
        for row in owing:
            if row.computer:
                continue
            reply = Reply(row.channel, row.address, row.language)
            if note is not None:
                note(reply)
            if physical:
                self._say(out, reply, table.row.theme, "physical-vote-prompt")
                continue
            catalog = self._catalog(table.row.theme, row.language)
            prompt = render.prompt(view_for(state, row.position), info, catalog, sms=row.channel in SMS_CHANNELS)
            if prompt is not None:
                out.add(row.channel, row.address, prompt, decision=table.row.decision_step, table=table.row.id)
        return [row.name for row in owing]

    def _move_phone(self, table: Table, name: str, reply: Reply, out: Outgoing, now: float) -> None:
        found = _match_name(name, table.names)
        if found is None:
            self._say(out, reply, table.row.theme, "seating-mismatch", seating=", ".join(table.names))
            return
        code = "".join(self.codes.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH + 2))
        moves = dict(table.row.options.get("move_codes", {}))
        moves[code] = table.names.index(found)
        options = {**table.row.options, "move_codes": moves}
        table.row = replace(table.row, options=options)
        self.store.update_table(table.row.id, now, options=options)
        self._say(out, reply, table.row.theme, "move-code", name=found, code=code)

    def _reclaim(self, inbound: Inbound, code: str, out: Outgoing, now: float, touched: set[str]) -> bool:
        """A seat's move code, sent from a new phone: the seat moves there. False if no table has that code."""
        for table_id in self.store.tables_with_move_code(code):
            table = self.table(table_id)
            if table is None or code not in table.row.options.get("move_codes", {}):
                continue
            position = table.row.options["move_codes"][code]
            seated = table.seat_of(inbound.channel, inbound.address)
            if seated is not None and seated != position:
                # One phone, one seat: a phone that plays another seat here would act and read for both.
                out.table_id = table_id
                reply = Reply(inbound.channel, inbound.address, table.seats[seated].language)
                self._say(out, reply, table.row.theme, "already-seated")
                return True
            moves = {k: v for k, v in table.row.options["move_codes"].items() if k != code}
            options = {**table.row.options, "move_codes": moves}
            old = table.seats[position]
            language = inbound.language or old.language
            table.seats[position] = replace(old, channel=inbound.channel, address=inbound.address, language=language)
            self.store.replace_seats(table_id, table.seats)
            table.row = replace(table.row, options=options)
            self.store.update_table(table_id, now, options=options)
            touched.add(table_id)
            out.table_id = table_id
            reply = Reply(inbound.channel, inbound.address, language)
            self._say(out, reply, table.row.theme, "phone-moved", name=old.name)
            if table.state is not None:
                self._ask(table, position, Query.WHOAMI, reply, out)
                if position in awaiting(table.state):
                    catalog = self._catalog(table.row.theme, language)
                    prompt = render.prompt(view_for(table.state, position), table.info(), catalog,
                                           sms=inbound.channel in SMS_CHANNELS)
                    if prompt is not None:
                        out.add(inbound.channel, inbound.address, prompt, decision=table.row.decision_step)
            return True
        return False

    def _set_language(self, table: Table, seat: int | None, lang: str, reply: Reply, out: Outgoing,
                      now: float, *, group: bool = False) -> None:
        """The sender's language; typed in the table's group by the host, the group's too."""
        try:
            Catalog.load(table.row.theme, lang)
        except UnknownCatalog:
            self._say(out, reply, table.row.theme, "unknown-language", language=lang)
            return
        if seat is not None:
            table.seats[seat] = replace(table.seats[seat], language=lang)
            self.store.replace_seats(table.row.id, table.seats)
        if group:
            options = {**table.row.options, PUBLIC_LANGUAGE: lang}
            self.store.update_table(table.row.id, now, options=options)
            table.row = replace(table.row, options=options)
        self._say(out, Reply(reply.channel, reply.address, lang), table.row.theme, "language-set", language=lang)

    def _set_theme(self, table: Table, theme: str, reply: Reply, out: Outgoing, now: float) -> None:
        try:
            Catalog.load(theme, DEFAULT_LANGUAGE)
        except UnknownCatalog:
            self._say(out, reply, table.row.theme, "unknown-theme", theme=theme)
            return
        table.row = replace(table.row, theme=theme)
        self.store.update_table(table.row.id, now, theme=theme)
        self._tell(table, out, "theme-set", theme=theme)

    # --- reminders -----------------------------------------------------------------------------------------

    def export(self, table_id: str) -> dict[str, Any] | None:
        """The game record of a table's current or last game, every reshuffle it made included (it holds every
        secret: share it after the game)."""
        table = self.table(table_id)
        if table is None or table.state is None or table.row.setup is None:
            return None
        record = records.to_json(table.row.setup["players"], table.state, [])
        return {**record, "actions": list(table.actions)}


# --- helpers ----------------------------------------------------------------------------------------------


def _remember(memory: Memory, events: Sequence[Event]) -> Memory:
    for event in events:
        if event.audience.includes(memory.seat):
            memory = memory.observe(event)
    return memory


_KINDS: dict[type, str] = {}
_FIELDS: dict[type, tuple[str, ...]] = {}


def _kind(event: Event) -> str:
    """``event.kind``, worked out once per event class (it depends on the class only)."""
    kind = _KINDS.get(type(event))
    if kind is None:
        kind = _KINDS[type(event)] = event.kind
    return kind


def _payload(event: Event) -> str:
    """An event as JSON for the log (enums as their values)."""
    import json
    from dataclasses import fields

    def value(v: Any) -> Any:
        if isinstance(v, tuple):
            return [value(x) for x in v]
        return v.value if hasattr(v, "value") else v

    names = _FIELDS.get(type(event))
    if names is None:
        names = _FIELDS[type(event)] = tuple(f.name for f in fields(event))
    return json.dumps({name: value(getattr(event, name)) for name in names})


def _clean_name(name: str) -> str:
    """A display name: printable, single-spaced, at most ``NAME_LIMIT`` characters."""
    cleaned = " ".join("".join(c for c in name if c.isprintable() or c.isspace()).split())
    return cleaned[:NAME_LIMIT].strip()


def _unique_name(name: str, taken: Sequence[str]) -> str:
    """``name``, or ``name 2``, ``name 3``… if it is taken (case-insensitively)."""
    lowered = {t.casefold() for t in taken}
    if name.casefold() not in lowered:
        return name
    n = 2
    while True:
        suffix = f" {n}"
        candidate = name[: NAME_LIMIT - len(suffix)] + suffix
        if candidate.casefold() not in lowered:
            return candidate
        n += 1


def _name_candidates(text: str, names: Sequence[str]) -> list[str]:
    """Names matching typed text: an exact (case-insensitive) match, else every name it starts."""
    wanted = text.strip().lstrip("@").casefold()
    if not wanted:
        return []
    exact = [n for n in names if n.casefold() == wanted]
    if exact:
        return exact
    return [n for n in names if n.casefold().startswith(wanted)]


def _match_name(text: str, names: Sequence[str]) -> str | None:
    """The one name typed text means, or None."""
    found = _name_candidates(text, names)
    return found[0] if len(found) == 1 else None


class Sender:
    """Delivers the outbox through the channels, oldest first, with retries and back-off.

    What a round delivered is recorded in one transaction at its end (``flush``), or sooner once the oldest
    unrecorded delivery is ``hold`` seconds old: one commit per round instead of one per message, and a crash
    repeats at most that much (the outbox is at-least-once either way)."""

    def __init__(self, store: Store, channels: dict[str, Channel], *, clock: Callable[[], float] = time.time,
                 max_attempts: int = 8, hold: float = 0.25) -> None:
        self.store = store
        self.channels = channels
        self.clock = clock
        self.max_attempts = max_attempts
        self.hold = hold
        self._sent: list[tuple[int, float]] = []
        self._retries: list[tuple[int, float, str]] = []
        self._failed: list[tuple[int, str]] = []
        self._since: float | None = None
        """``time.monotonic()`` of the oldest settlement not yet recorded (a slow channel must not hold it)."""

    def flush(self) -> None:
        """Record every settled delivery attempt not yet recorded, in one transaction."""
        sent, retries, failed = self._sent, self._retries, self._failed
        self._sent, self._retries, self._failed, self._since = [], [], [], None
        self.store.settle(sent, retries, failed)

    def deliver_due(self, limit: int = 100) -> int:
        """Try every message that is due on a channel we have; returns how many were delivered.

        A channel with ``send_batch(address, bodies)`` gets every due message of one address at once, oldest
        first (it may fold them into fewer sends), and answers each with None (delivered) or its failure.
        """
        try:
            return self._deliver(limit)
        finally:
            self.flush()  # also after a channel raised: what went out before it is recorded as sent

    def _deliver(self, limit: int) -> int:
        """One round of ``deliver_due`` (a channel's own sender overrides this); ``_settle`` each attempt."""
        now = self.clock()
        delivered = 0
        due = self.store.due(now, limit, channels=list(self.channels))
        settled: set[int] = set()
        held: set[tuple[str, str]] = set()
        for row in due:
            if row.id in settled or (row.channel, row.address) in held:
                continue
            channel = self.channels[row.channel]
            send_batch = getattr(channel, "send_batch", None)
            if send_batch is None:
                rows = [row]
                results: list[Exception | None] = [self._attempt(channel, row)]
            else:
                rows = [r for r in due if (r.channel, r.address) == (row.channel, row.address)]
                results = list(send_batch(row.address, [{**r.body, "message_id": r.message_id} for r in rows]))
            sent_at = self.clock()  # one time for what one channel call delivered: it may have been one text
            for each, result in zip(rows, results, strict=True):
                settled.add(each.id)
                delivered += self._settle(each, result, now, sent_at)
                if isinstance(result, TemporaryFailure):
                    # Later messages to this address wait for this one: a player reads them in order.
                    held.add((each.channel, each.address))
        return delivered

    @staticmethod
    def _attempt(channel: Channel, row: OutboxRow) -> Exception | None:
        try:
            channel.send(row.address, {**row.body, "message_id": row.message_id})
        except (TemporaryFailure, PermanentFailure) as exc:
            return exc
        return None

    def _settle(self, row: OutboxRow, result: Exception | None, now: float, sent_at: float) -> int:
        """Note one message's delivery attempt for ``flush``; 1 if it was delivered."""
        if self._since is None:
            self._since = time.monotonic()
        delivered = 0
        if isinstance(result, TemporaryFailure):
            if row.attempts + 1 >= self.max_attempts:
                self._failed.append((row.id, str(result)))
            else:
                backoff = result.retry_after if result.retry_after is not None else min(2.0**row.attempts, 300.0)
                self._retries.append((row.id, now + backoff, str(result)))
        elif result is not None:
            self._failed.append((row.id, str(result)))
        else:
            self._sent.append((row.id, sent_at))
            delivered = 1
        if time.monotonic() - self._since >= self.hold:
            self.flush()
        return delivered
