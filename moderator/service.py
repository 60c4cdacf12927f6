"""The table service: one inbound action -> one SQLite transaction (state, events, outbox), then delivery.

Persist first, send second. ``Service.handle`` records the input's id (dedupe), finds the table it is about
(``tables``), hands it to the job it is for (``lobby``, ``game``, ``host``), which applies the engine and has
every event rendered for every recipient entitled to it (``fanout``), and puts those messages in the outbox
(``outbox``), all in one transaction. A ``delivery.Sender`` delivers the outbox afterwards, with retries. A game
is its record: after a restart each table is rebuilt by replaying its actions.

Reading one input top to bottom: ``handle`` -> ``_dispatch`` -> a job module -> ``fanout.publish`` -> the outbox.
"""

from __future__ import annotations

import random
import sqlite3
import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any, Final, assert_never

from . import game, host, lobby
from . import record as records
from .bots import ComputerPlayer
from .catalog import DEFAULT_LANGUAGE, DEFAULT_THEME
from .channels import Capabilities, NotStored, Outbound, Receipt, StatusScale
from .claims import Spoken
from .commands import (
    AddComputers,
    Ask,
    Choose,
    Command,
    Decide,
    Host,
    Inbound,
    Join,
    Leave,
    LobbyControl,
    MovePhone,
    MoveSeat,
    OpenTable,
    OptIn,
    OptOut,
    Query,
    RecordVotes,
    RemoveSeat,
    Rename,
    Seating,
    SetLanguage,
    SetReminders,
    SetTableVoting,
    SetTheme,
    Speak,
    StandIn,
    Start,
)
from .context import Context
from .engine import new_seed
from .fanout import prompt_again, say
from .outbox import Outgoing, Reply, in_toast
from .pages import BrowserPages
from .store import Store, TableStatus
from .tables import COMPUTERS_WAIT, LIVE, VOTE_PAUSE, Table, Tables

LOBBY_MESSAGES: Final = (
    "table-opened",
    "table-joined",
    "seat-taken",
    "seats-list",
    "seat-removed",
    "computers-added",
    "computers-added-full",
    "computers-none",
    "game-starting",
    "not-host",
    "not-at-table",
    "how-to",
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
    "languages",
    "unknown-theme",
    "move-code",
    "phone-moved",
    "rules-summary",

    "physical-vote-prompt",
    "game-not-started",
    "reminders-set",
    "reminders-off",
    "reminder",
    "reminder-restart",
    "seated-elsewhere",
    "seated-elsewhere-lobby",
    "open-seated-elsewhere-lobby",
    "player-opted-out",
    "player-opted-in",
    "player-silent",
    "player-blocked",
    "player-sandbox",
    "player-back",
    "host-opted-out",
    "host-opted-in",
    "public-results-host",
    "public-results-all",
    "sms-cost",
    "claim-noted",
    "claim-refused",
    "claim-accuse-yourself",
    "claim-trust-yourself",
    "claim-repeated",
    "name-taken",
    "player-unreachable",
    "player-undelivered",
    "player-not-sent",
    "sms-cost-delivery",
    "decide-in-private",
    "leave-in-game",
    "you-left",
    "seat-left",
    "host-passed",
    "name-refused",
    "name-refused-join",
    "name-reserved",
    "name-reserved-join",
    "name-asked",
    "host-name",
    "host-name-refused",
    "renamed",
    "renamed-in-game",
    "you-renamed",
    "you-renamed-in-game",
    "table-votes-on",
    "table-votes-not-now",
    "table-votes-off",
    "stand-in",
    "stand-in-back",
    "stand-in-refused",
    "seat-stood-in",
    "input-vote-over-elected",
    "input-vote-over-rejected",
    "table-opened-group",
    "seats-changed",
    "seat-first",
    "try-again",
    "open-try-again",
)
"""Message ids the service renders itself (everything else comes from ``render``); a test checks the catalogs."""

DOWN_QUIETLY: Final = 60.0
"""Seconds a clean stop may last without anyone being prompted again at the next start (a deploy stays quiet)."""

_HOST_ONLY = (AddComputers, Seating, MoveSeat, RemoveSeat, Start, LobbyControl, Host, MovePhone, SetTheme,
              SetReminders, SetTableVoting, StandIn)


PUBLIC_QUERIES: Final = frozenset({Query.BOARD, Query.WAITING, Query.RULES, Query.HELP})
"""Asked in a group, these are answered in the group, for everyone; any other question (``whoami``), privately."""


def shown_in_public(inbound: Inbound) -> bool:
    """A vote or an option's number typed where others see it (a group chat): a secret given away."""
    command = inbound.command
    decision = isinstance(command, Choose) or (isinstance(command, Decide) and command.kind == "vote")
    return decision and inbound.chat is not None and inbound.press is None


CLOSE_IDLE_DAYS: Final = 7
"""A finished game's table, or a lobby nobody started, closes after this many days without an input: it leaves
every lookup (a table playing or paused never closes by itself; its export stays)."""
SWEEP_EVERY: Final = 3600.0
"""Seconds between two sweeps for idle tables."""


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
        vote_pause: float = VOTE_PAUSE,
        codes: random.Random | None = None,
        capabilities: Mapping[str, Capabilities] | None = None,
    ) -> None:
        self.store = store
        self.clock = clock
        self.tables = Tables(store)
        self.ctx = Context(
            store=store,
            tables=self.tables,
            clock=clock,
            seed=seed,
            codes=codes or random.SystemRandom(),
            computer=computer or ComputerPlayer(),
            drive_computers=drive_computers,
            vote_pause=vote_pause,
            capabilities=dict(capabilities or {}),
        )
        self._swept = float("-inf")
        self.observers: list[Callable[[str], None]] = []
        """Called with a table's id after an input or a reminder changed it (committed): live pages refresh."""
        self.pages = BrowserPages(self.ctx, self.handle, self.observers)
        """What browser pages show (``screens.Pages``)."""
        self.handled: list[Callable[[Inbound, Receipt, float], None]] = []
        """Called after every input with what became of it and the seconds it took (the action log)."""

    def forget(self) -> None:
        """Drop every cached table (a commit failed: they hold what the database does not); each reloads."""
        self.tables.forget()

    def register(self, channel: str, capabilities: Capabilities) -> None:

        """A channel and what it can do (the wiring calls this for every channel it starts)."""
        self.ctx.capabilities[channel] = capabilities

    # --- the entry point -------------------------------------------------------------------------------

    def handle(self, inbound: Inbound) -> Receipt:
        """Handle one input in one transaction (dropped if its id was seen), then let computer players move.

        Typed in a group: a vote there is not counted and is withdrawn (``Receipt.withdraw``; its sender is told
        to vote privately), a public question is answered in the group, and the rest of what the table says
        there without addressing the bot (``Inbound.overheard``) is none of the service's business."""
        withdraw = shown_in_public(inbound)
        if inbound.overheard and not withdraw:
            return Receipt()
        command = inbound.command
        if inbound.chat is not None and isinstance(command, Ask) and command.query in PUBLIC_QUERIES:
            inbound = replace(inbound, address=inbound.chat)
        start = time.perf_counter()
        now = self.clock()
        touched: set[str] = set()
        out = Outgoing(None, now)
        duplicate = False
        notice: str | None = None
        try:
            with self.store.transaction():
                if inbound.external_id is not None and self.store.seen(inbound.channel, inbound.external_id, now):
                    duplicate = True
                    # Sent again (a restart came before its answer): the answer it was given, once more.
                    kept = self.store.kept_answer(inbound.channel, inbound.external_id)
                    notice = None if kept is None else in_toast(Outbound.from_json(kept))
                else:
                    table = self._dispatch(inbound, out)
                    if table is not None:
                        touched.add(table.id)
                    if out.table_id is not None:
                        touched.add(out.table_id)
                    self.store.enqueue(out.stored(self.tables.muted), now)
                    notice = out.notice
                    if out.answer is not None and inbound.external_id is not None:
                        self.store.keep_answer(inbound.channel, inbound.external_id,
                                               {**out.answer.to_json(), "message_id": out.answer.message_id})
        except sqlite3.OperationalError as exc:
            self.tables.forget(sorted(touched))
            self.store.writes.refused()  # a full or read-only disk is said once by the store, with a count
            # The disk is full or read-only: say so, never more.
            raise NotStored(type(exc).__name__, said=self.store.writes.failing) from exc
        except BaseException:
            # The transaction rolled back: forget what the cache learned inside it, reload from the database.
            self.tables.forget(sorted(touched))
            raise
        for remember in out.committed:
            remember()
        for table_id in touched:
            game.run_computers(self.ctx, table_id)
        self._changed(touched)
        receipt = Receipt(applied=out.applied > 0, duplicate=duplicate, notice=notice, tables=tuple(touched),
                          withdraw=withdraw)
        for hook in self.handled:
            hook(inbound, receipt, time.perf_counter() - start)
        return receipt

    def _changed(self, table_ids: set[str]) -> None:
        for table_id in table_ids:
            for observer in self.observers:
                observer(table_id)

    def table(self, table_id: str) -> Table | None:
        """A table, loaded from the database (and its game rebuilt by replay) on first use."""
        return self.tables.get(table_id)

    def run_computers(self, table_id: str) -> int:
        """Let computer players make every decision they owe at a table; returns how many they made."""
        return game.run_computers(self.ctx, table_id)

    def resume_all(self) -> list[str]:

        """Load every table with a game under way (after a restart) and let computer players move."""
        ids = self.tables.under_way()
        for table_id in ids:
            self.tables.get(table_id)
            game.run_computers(self.ctx, table_id)
        return ids

    def returned(self, *, quiet_within: float = DOWN_QUIETLY) -> list[str]:
        """(At start, after ``resume_all``.) After a crash, or more than ``quiet_within`` seconds down, whoever
        owes a decision gets its prompt once more, marked as a reminder (an input that hit the dead server may
        have been lost); a clean restart within that time prompts nobody. Returns the names prompted."""
        now = self.clock()
        alive, stopped = self.store.starting(now)
        if alive is None or (stopped is not None and now - stopped <= quiet_within):
            return []
        names: list[str] = []
        for table_id in self.tables.under_way():
            table = self.tables.get(table_id)
            if table is None or table.state is None or table.status is not TableStatus.PLAYING:
                continue
            with self.store.transaction():
                names += self._remind_after_restart(table, now)
            self._changed({table_id})
        return names

    def _remind_after_restart(self, table: Table, now: float) -> list[str]:
        out = Outgoing(table.id, now)
        # A prompt still in the outbox goes out as it is (a channel marks it a repeat if it may have gone out
        # before): a reminder and a second copy of it would reach that phone twice.
        waiting = self.store.waiting_prompts(table.id, table.row.decision_step)
        names = prompt_again(self.ctx, table, out,
                             lambda reply: say(self.ctx, out, reply, table.row.theme, "reminder-restart"),
                             waiting=waiting)
        self.store.enqueue(out.stored(self.tables.muted), now)
        return names

    def stopping(self) -> None:
        """(At a clean stop.) Remember that this run stopped cleanly, and when."""
        self.store.stopped(self.clock())

    # --- dispatch ---------------------------------------------------------------------------------------

    def _dispatch(self, inbound: Inbound, out: Outgoing) -> Table | None:
        """The job an input is for; returns the table it touched."""
        ctx = self.ctx
        command: Command = inbound.command
        reply = Reply(inbound.channel, inbound.address, inbound.language or DEFAULT_LANGUAGE)
        match command:
            case OpenTable():
                return lobby.open_table(ctx, inbound, command, out)
            case Join():
                return lobby.join(ctx, inbound, command, out)
            case OptOut():
                host.opted_out(ctx, inbound.channel, inbound.address, out, command.why)
                return None
            case OptIn():
                host.opted_in(ctx, inbound.channel, inbound.address, out)
                return None
            case _:
                # Writing again brings back a person their channel stopped reaching until they wrote (WhatsApp's
                # closed window, a block lifted): what they know and the decision owed come first.
                host.opted_in(ctx, inbound.channel, inbound.address, out, heard=True)
        table = self.tables.about(inbound.channel, inbound.address, inbound.chat, inbound.table)
        if table is None:
            if isinstance(command, Ask) and command.query is Query.HOWTO:
                say(ctx, out, reply, DEFAULT_THEME, "how-to")
            elif isinstance(command, Ask) and command.query is not Query.RULES:
                # At no table, any question gets how to open or join one (anyone may open a table).
                game.help_for(ctx, DEFAULT_THEME, reply, out, host=True)
            elif isinstance(command, Ask) and command.query is Query.RULES:
                say(ctx, out, reply, DEFAULT_THEME, "rules-summary")
            else:
                say(ctx, out, reply, DEFAULT_THEME, "not-at-table")
            return None
        out.table_id = table.id
        seat = table.seat_of(inbound.channel, inbound.address)
        if seat is not None:
            reply = Reply(inbound.channel, inbound.address, table.seats[seat].language)
        is_host = table.is_host(inbound.channel, inbound.address)
        if seat is not None and not isinstance(command, (Decide, Choose, RecordVotes)) \
                and not table.in_group(inbound.chat):
            # An option's whole label answers the prompt, even one that starts with a command word ("Computer 2");
            # so does any player's whole name, which only a prompt can be answered with.
            command = game.option_named(ctx, table, inbound) or game.a_name(table, inbound) or command
        if isinstance(command, Decide) and command.kind == "?" \
                and game.needs_more(ctx, table, inbound, reply, out, host=is_host):
            return table
        if isinstance(command, _HOST_ONLY) and not is_host:
            say(ctx, out, reply, table.row.theme, "not-host")
            return table
        match command:
            case AddComputers(count=count):
                lobby.add_computers(ctx, table, count, reply, out)
            case Seating(names=names):
                lobby.reseat(ctx, table, names, reply, out)
            case MoveSeat(name=name, position=position):
                lobby.move_seat(ctx, table, name, position, reply, out)
            case RemoveSeat(name=name):
                lobby.remove_seat(ctx, table, name, reply, out)
            case Start():
                lobby.start(ctx, table, reply, out)
            case LobbyControl(token=token):
                lobby.lobby_control(ctx, table, token, reply, out)
            case Decide() | Choose() if seat is not None and table.in_group(inbound.chat):
                # Typed in the group, a vote would not be secret: not counted; the voter is told where to vote.
                say(ctx, out, reply, table.row.theme, "decide-in-private")
            case Decide() | Choose() | RecordVotes():
                game.decide(ctx, table, seat, inbound, command, reply, out)
            case Speak():
                game.speak_up(ctx, table, seat, command, reply, out)
            case Ask(query=query):
                game.ask(ctx, table, seat, query, reply, out)
            case Host(command=host_command):
                host.host_command(ctx, table, host_command, reply, out)
            case MovePhone(name=name):
                host.move_phone(ctx, table, name, reply, out)
            case SetLanguage(language=lang):
                host.set_language(ctx, table, seat, lang, reply, out, group=table.in_group(inbound.chat) and is_host,
                                  host=is_host)
            case SetTheme(theme=theme):
                host.set_theme(ctx, table, theme, reply, out)
            case SetReminders(minutes=minutes):
                host.set_reminders(ctx, table, minutes, reply, out)
            case SetTableVoting(on=on):
                host.set_table_voting(ctx, table, on, reply, out)
            case StandIn(name=name, back=back):
                host.stand_in(ctx, table, name, back, reply, out)
            case Leave():
                lobby.leave(ctx, table, seat, reply, out)
            case Rename(name=name):
                lobby.rename(ctx, table, seat, name, reply, out)
            case _:
                assert_never(command)  # OpenTable, Join, OptOut and OptIn were handled above
        return table

    # --- what channels and the clock report ---------------------------------------------------------------

    def tick(self) -> int:
        """Send the reminders that have fallen due (never an action on anyone's behalf); returns how many tables.
        Computer players whose votes waited for the people's as long as they may (``Context.vote_pause``) vote.
        Once an hour, also close the tables idle for ``CLOSE_IDLE_DAYS`` (a finished game, or a lobby nobody
        started)."""
        now = self.clock()
        if now - self._swept >= SWEEP_EVERY:
            self._swept = now
            with self.store.transaction():
                closed = self.store.close_idle(now - CLOSE_IDLE_DAYS * 86400)
            # Closed tables leave every address's lookup (each input asks it) and this process's memory.
            self.tables.forget(closed)
        reminded = 0
        with self.store.transaction():
            self.store.alive(now)  # the heartbeat: after a crash, how long the server was down
        for table_id, kind in self.store.deadlines_due(now):
            table = self.tables.get(table_id)
            if kind == COMPUTERS_WAIT:
                with self.store.transaction():
                    self.store.set_deadline(table_id, kind, None)
                    if table is not None and table.row.options.get(COMPUTERS_WAIT) is not None:
                        table.set_option(self.store, now, **{COMPUTERS_WAIT: None})
                if game.run_computers(self.ctx, table_id):
                    self._changed({table_id})
                continue
            with self.store.transaction():
                self.store.set_deadline(table_id, kind, None)
                if table is None or table.state is None or table.status is not TableStatus.PLAYING:
                    continue
                out = Outgoing(table_id, now)
                host.remind(self.ctx, table, out)
                self.store.enqueue(out.stored(self.tables.muted), now)
                reminded += 1
            self._changed({table_id})
        return reminded

    def _report(self, job: Callable[[Outgoing], None]) -> None:
        """One report from a channel, in one transaction like an input."""
        now = self.clock()
        out = Outgoing(None, now)
        with self.store.transaction():
            job(out)
            self.store.enqueue(out.stored(self.tables.muted), now)
        self._changed({t for t, *_ in out.rows if t is not None})

    def unreachable(self, channel: str, address: str, *, undelivered: bool = False) -> None:
        """A channel cannot reach this address (blocked, never opened a chat; ``undelivered``: the carrier reports
        its texts undelivered): the host and the group are told who it is, at every table where it has a seat;
        the game waits for them as for anyone."""
        self._report(lambda out: host.unreachable(self.ctx, channel, address, out, undelivered=undelivered))

    def unanswered(self, inbound: Inbound) -> None:
        """A channel could not show an input's answer at once (``Receipt.notice``: Telegram's time to answer a
        press had passed, a restart came between the press and its answer): the message it stood for goes to the
        outbox after all, once (the pressed message shows it, or one short message of its own). Nothing for an
        input without one."""
        external_id = inbound.external_id
        if external_id is None:
            return

        def job(out: Outgoing) -> None:
            kept = self.store.kept_answer(inbound.channel, external_id)
            if kept is None:
                return
            self.store.keep_answer(inbound.channel, external_id, None)
            message = Outbound.from_json(kept, str(kept.get("message_id", "")))
            out.table_id = message.table
            out.put(inbound.channel, inbound.address, message)

        self._report(job)

    def not_sent(self, channel: str, address: str, table_id: str) -> None:
        """A message of this table to this address failed for good on our side (its delivery crashed, see
        ``delivery.Sender.gave_up``): the host and the group are told who it is, never what it said."""
        self._report(lambda out: host.not_sent(self.ctx, channel, address, table_id, out))

    def public_moved(self, channel: str, old: str, new: str) -> None:
        """A group chat got a new address (Telegram upgraded it to a supergroup): its tables follow it."""
        now = self.clock()
        with self.store.transaction():
            for table in self.tables.of(channel, old):
                if table.group == (channel, old):
                    table.update(self.store, now, public_address=new)

    def delivery_report(self, channel: str, ref: str, status: str, error_code: str | None, scale: StatusScale) -> bool:
        """A channel reports how far a message it took got (an SMS status callback); False if the message is not
        ours. The first message to a seat reported ``failed`` tells the host (and the group), once per table and
        address; a report older than the status already known changes nothing."""
        taken = self.store.delivery(channel, ref)
        if taken is None:
            return False
        final, failed, order = scale.final, scale.failed, scale.order
        if taken.status in final or order.get(status, 9) < order.get(taken.status, 9):
            return True  # already final, or an older report that arrived late
        told = taken.table_id is not None and bool(
            set(self.store.delivery_statuses(taken.table_id, 0.0, taken.address)) & failed
        )
        with self.store.transaction():
            self.store.set_delivery_status(channel, ref, status, error_code, self.clock())
        if status in failed and not told:
            self.unreachable(channel, taken.address, undelivered=True)
        return True

    # --- records ------------------------------------------------------------------------------------------

    def export(self, table_id: str, game: int | None = None) -> dict[str, Any] | None:
        """The game record of one game of a table (its current or last one unless ``game`` says which), every
        reshuffle it made included, with what the players claimed in the current game if they claimed anything;
        None if the table never played that game. It holds every secret: share it
        after the game."""
        table = self.tables.get(table_id)
        if table is None or table.state is None or table.row.setup is None:
            return None
        if game is None or game == table.row.game:
            said = [Spoken(said.step, said.claim) for said in table.said]
            record = records.to_json(table.row.setup["players"], table.state, [], said)
            return {**record, "actions": list(table.actions)}
        setup = self.store.setup(table_id, game)
        if setup is None:
            return None
        actions = self.store.actions(table_id, game)
        # An earlier game is over (a rematch starts only then): its last state, replayed, has every reshuffle.
        result = records.replay(records.parse({**setup, "actions": actions}))
        record = records.to_json(setup["players"], result.state, [])
        return {**record, "actions": actions}

    def game_over(self, table_id: str) -> bool:
        """True if the table's game has ended (decided, or ended by the host)."""
        table = self.tables.get(table_id)
        return table is not None and table.status not in (TableStatus.LOBBY, *LIVE)
