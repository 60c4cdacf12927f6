"""Tables as the service keeps them in memory, and the lookups an input needs: one place for both.

A table's game is its record: the first time a table is needed it is loaded from the store and its game is
rebuilt by replaying the stored actions; after that the cache serves it. Every lookup an input needs (the table
it is about, the tables an address sits at, a join or move code) goes through ``Tables``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Final

from . import claims as claimed
from . import record as records
from .bots import Memory
from .catalog import DEFAULT_LANGUAGE
from .engine import Event, GameState, Phase, awaiting
from .names import match_name
from .render import TableInfo
from .store import SeatRow, Store, TableRow, TableStatus

DECISIONS_PER_GAME: Final = 1_000_000
"""More steps than any game takes (a long 10-player game is a few hundred)."""
REMINDER: Final = "reminder"
"""The deadline kind of reminders."""
COMPUTERS_WAIT: Final = "computers_wait"
"""The deadline kind of the pause after which computer players vote even if people have not yet; and the table
option that holds their votes: the decision id of the election whose computer votes wait."""
VOTE_PAUSE: Final = 20.0
"""Seconds computer players' votes wait at most for the people's, so that what a person says before voting
(a claim, an accusation) reaches them first."""
PUBLIC_LANGUAGE: Final = "public_language"
"""Table option: the language of the public channel (a group)."""
HOST_LANGUAGE: Final = "host_language"
"""Table option: the language the table was opened in (its host's, for a host without a seat)."""
LIVE: Final = (TableStatus.PLAYING, TableStatus.PAUSED)
"""A game under way (paused or not)."""
OPTED_OUT: Final = "opted_out"
"""Table option: the seats' addresses (``channel address``) whose channel will not deliver to them (an SMS STOP)
until they opt in again."""
AWAY: Final = "away"
"""Table option: of the ``OPTED_OUT`` addresses, those whose channel stopped delivering for a reason other than an
opt-out (``commands.Away``, by its value): any message of theirs brings them back."""
STOPPED_HOST: Final = "stopped_host"
"""Table option: the address of a host who opted out (the host role passed on); told who hosts when back."""


@dataclass(frozen=True, slots=True)
class Said:
    """A claim and when it was said: after ``step`` actions, when ``logged`` events had been logged; ``shown``:
    how many events had been logged when the table was shown it (None: not yet, it waits for the next result)."""

    step: int
    logged: int
    shown: int | None
    claim: claimed.Claim


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
    said: list[Said] = field(default_factory=list)
    """Every claim of the game so far, in the order said (public speech; the service takes none as true)."""

    @property
    def id(self) -> str:
        return self.row.id

    @property
    def status(self) -> TableStatus:
        return self.row.status

    def opted_out(self, channel: str, address: str) -> bool:
        """True if this address opted out of its channel (nothing sent there reaches them)."""
        return f"{channel} {address}" in self.row.options.get(OPTED_OUT, [])

    def away_until_heard(self, channel: str, address: str) -> bool:
        """True if nothing reaches this address until its person writes again (``commands.Away.until_heard``)."""
        return f"{channel} {address}" in self.row.options.get(AWAY, {})

    @property
    def names(self) -> tuple[str, ...]:
        """Player names in seat order, as shown (a player renamed during a game shows the new name)."""
        return tuple(s.name for s in self.seats)

    @property
    def record_names(self) -> tuple[str, ...]:
        """Player names as the game's record has them: the names the game started with."""
        if self.row.setup is not None and self.status is not TableStatus.LOBBY:
            return tuple(self.row.setup["players"])
        return self.names

    def seat_named(self, name: str) -> int | None:
        """The seat of the player this typed name means (see ``names.match_name``), if exactly one."""
        found = match_name(name, self.names)

        return None if found is None else self.names.index(found)


    def info(self) -> TableInfo:
        """What rendering needs to know about this table."""
        return TableInfo(self.names, self.row.theme, table_votes=bool(self.row.options.get("physical_voting")),
                         computers_wait=self.computers_wait,
                         computers=frozenset(seat.position for seat in self.seats if seat.computer))

    @property
    def computers_wait(self) -> bool:
        """True while the computer players' votes wait for the people's: in an election whose computer votes are
        held (``COMPUTERS_WAIT``), a computer player and a person at the table have still to vote."""
        state = self.state
        if (state is None or state.phase is not Phase.ELECTION
                or self.row.options.get(COMPUTERS_WAIT) != self.row.decision_step):
            return False
        owing = {self.seats[seat].computer for seat in awaiting(state)}
        return owing == {True, False}

    def seat_of(self, channel: str, address: str) -> int | None:
        """The seat this address sits in, if any."""
        for seat in self.seats:
            if seat.channel == channel and seat.address == address:
                return seat.position
        return None

    def is_host(self, channel: str, address: str) -> bool:
        """True if this address is the table's host."""
        return self.row.host_channel == channel and self.row.host_address == address

    def in_group(self, chat: str | None) -> bool:
        """True if ``chat`` is this table's public group chat."""
        return chat is not None and chat == self.row.public_address

    @property
    def group(self) -> tuple[str, str] | None:
        """(channel, address) of the table's public chat (a group), if it has one."""
        if self.row.public_channel is None or self.row.public_address is None:
            return None
        return self.row.public_channel, self.row.public_address

    @property
    def public_language(self) -> str:
        """The language of the table's public channel (a group): its opener's, or what its host set there."""
        return str(self.row.options.get(PUBLIC_LANGUAGE, DEFAULT_LANGUAGE))

    @property
    def host_language(self) -> str:
        """The language the host reads (their seat's, if they have one)."""
        opened = str(self.row.options.get(HOST_LANGUAGE, DEFAULT_LANGUAGE))
        return next((s.language for s in self.seats if self.is_host(s.channel, s.address)), opened)

    def update(self, store: Store, now: float, **fields: Any) -> None:
        """Change the table's row, in the store and here."""
        store.update_table(self.row.id, now, **fields)
        self.row = replace(self.row, **fields)

    def set_option(self, store: Store, now: float, **options: Any) -> None:
        """Change some of the table's options."""
        self.update(store, now, options={**self.row.options, **options})

    def arm_reminder(self, store: Store, now: float) -> None:
        """A reminder falls due N minutes after a decision starts, while the game runs and reminders are on."""
        minutes = self.row.options.get("reminder_minutes")
        running = self.row.status is TableStatus.PLAYING and self.state is not None
        store.set_deadline(self.row.id, REMINDER, now + 60 * minutes if minutes and running else None)

    def set_status(self, store: Store, status: TableStatus, now: float) -> None:
        """The table's status from now on (reminders follow it)."""
        self.update(store, now, status=status)
        self.arm_reminder(store, now)

    def reseat(self, store: Store, seats: Sequence[SeatRow]) -> None:
        """The table's seats from now on, in order (positions follow the order)."""
        self.seats = [replace(s, position=i) for i, s in enumerate(seats)]
        store.replace_seats(self.row.id, self.seats)


class Tables:
    """Every table the service has touched, by id, loaded on first use; and the lookups inputs need."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._cache: dict[str, Table] = {}

    def get(self, table_id: str) -> Table | None:
        """A table, loaded from the database (and its game rebuilt by replay) on first use."""
        cached = self._cache.get(table_id)
        if cached is not None:
            return cached
        row = self.store.table(table_id)
        if row is None:
            return None
        table = Table(row, self.store.seats(table_id))
        if row.setup is not None and row.status is not TableStatus.LOBBY:
            actions = self.store.actions(table_id, row.game)
            result = records.replay(records.parse({**row.setup, "actions": actions}))
            if result.error is not None:
                raise RuntimeError(f"table {table_id}: stored action {result.error.index} no longer applies")
            table.state, table.actions, table.log = result.state, actions, list(result.events)
            table.said = [Said(step, logged, shown, claimed.from_json(data))
                          for step, logged, shown, data in self.store.claims(table_id, row.game)]
            table.memories = {s.position: recall(s.position, table) for s in table.seats if s.computer}
        self._cache[table_id] = table
        return table

    def add(self, table: Table) -> None:
        """A table just made: cache it."""
        self._cache[table.id] = table

    def forget(self, table_ids: Sequence[str] | None = None) -> None:
        """Drop these tables (or every one) from the cache: they reload from the database when next needed."""
        if table_ids is None:
            self._cache.clear()
        for table_id in table_ids or ():
            self._cache.pop(table_id, None)

    def cached(self, table_id: str) -> Table | None:
        """A table only if it is in memory already (no database read)."""
        return self._cache.get(table_id)

    def about(self, channel: str, address: str, chat: str | None, table_id: str | None = None) -> Table | None:
        """The table an input is about: the one its button named (if the sender is at it), the group it was typed
        in, else the sender's newest table."""
        if table_id is not None:
            named = self.get(table_id)
            if named is not None and (named.seat_of(channel, address) is not None or named.is_host(channel, address)
                                      or named.group in ((channel, chat), (channel, address))):
                return named
        if chat is not None:
            for row in self.store.tables_of(channel, chat):
                if row.public_address == chat:
                    return self.get(row.id)
        ids = self.store.table_ids_of(channel, address)
        return self.get(ids[0]) if ids else None

    def of(self, channel: str, address: str) -> list[Table]:
        """Every table this address sits at, hosts or is the public chat of, newest first."""
        return [t for t in (self.get(row.id) for row in self.store.tables_of(channel, address)) if t is not None]

    def by_code(self, code: str) -> Table | None:
        """The table whose join code this is."""
        row = self.store.table_by_code(code)
        return None if row is None else self.get(row.id)

    def with_move_code(self, code: str) -> list[Table]:
        """Tables that gave out this seat move code."""
        return [t for t in map(self.get, self.store.tables_with_move_code(code)) if t is not None]

    def seated_elsewhere(self, channel: str, address: str, table_id: str) -> Table | None:
        """The other table this address has a seat at, in its lobby or its game (one person, one table: inputs
        to a second would go astray), or None."""
        for row in self.store.tables_of(channel, address):
            other = self.get(row.id) if row.id != table_id and row.status in (TableStatus.LOBBY, *LIVE) else None
            if other is not None and other.seat_of(channel, address) is not None:
                return other
        return None

    def muted(self, channel: str, address: str) -> bool:
        """True if this address opted out of its channel at a table it sits at (nothing may be sent to it: the
        carrier refuses every text until it opts in again)."""
        return any(t.opted_out(channel, address) for t in self.of(channel, address))

    def under_way(self) -> list[str]:
        """Every table with a game under way."""
        return self.store.open_tables()


def decision_id(game: int, step: int) -> int:
    """The number a prompt's buttons carry: the game and the step its decision began at, so that a button
    from an earlier decision, or from the previous game at a rematch, is refused as no longer current."""
    return game * DECISIONS_PER_GAME + step


def remember(memory: Memory, events: Sequence[Event]) -> Memory:

    """A computer player's memory after the events shown to its seat."""
    for event in events:
        if event.audience.includes(memory.seat):
            memory = memory.observe(event)
    return memory


def recall(seat: int, table: Table) -> Memory:
    """A computer player's memory rebuilt from what its seat was shown and every claim it heard."""
    memory = remember(Memory(seat), table.log)
    for said in table.said:
        memory = memory.hear(said.claim)
    return memory
