"""Fakes for the table service: a channel that records every message per address, a clock, and a table
harness that plays through the service exactly as phones would (prompts in, button presses out)."""

from __future__ import annotations

import json
import random
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from moderator.channels import Capabilities, Delivered, Kind, Outbound, PermanentFailure, Result, TemporaryFailure
from moderator.commands import Choose, Command, Inbound, Join, OpenTable, Start
from moderator.delivery import Sender
from moderator.engine import GameState, Phase, awaiting
from moderator.service import Service
from moderator.store import Store
from moderator.tables import Table

CHANNEL = "fake"


def as_body(message: Outbound) -> dict[str, Any]:
    """A delivered message as tests read it: the outbox's JSON, its catalog id, and its options as choices."""
    body = message.to_json()
    body["message_id"] = message.message_id
    body["secret"] = message.secret
    # A prompt's options are its choices (a join message's controls are not a question to answer).
    prompt = message.kind is Kind.PROMPT
    body["choices"] = [{"label": o.label, "token": o.token} for o in message.options] if prompt else []
    return body



@dataclass
class RecordingChannel:
    """A ``Channel`` that records (address, body) per address (bodies as ``as_body`` writes them).

    ``temporary[address]`` failures are raised (and used up) before that address gets anything;
    addresses in ``permanent`` always fail for good; a batch holding a message in ``crash`` (address, message
    id) raises ``crash_with`` (a bug in a channel, its words quoting the message) before anything of it is sent.
    """

    sent: dict[str, list[dict[str, Any]]] = field(default_factory=lambda: defaultdict(list))
    log: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    temporary: dict[str, int] = field(default_factory=dict)
    retry_after: float | None = None
    permanent: set[str] = field(default_factory=set)
    attempts: list[str] = field(default_factory=list)
    crash: set[tuple[str, str]] = field(default_factory=set)
    crash_with: type[Exception] = RuntimeError
    crashes: int = 0
    capabilities: Capabilities = field(default_factory=Capabilities)

    def send_batch(self, address: str, messages: Sequence[Outbound]) -> list[Result]:
        for message in messages:
            if (address, message.message_id) in self.crash:
                self.crashes += 1
                raise self.crash_with(f"cannot fold {message.text!r}")
        results: list[Result] = []
        for message in messages:
            if results and isinstance(results[-1], TemporaryFailure):
                results.append(results[-1])  # later messages to this address wait for this one
                continue
            try:
                self.send(address, as_body(message))
            except (TemporaryFailure, PermanentFailure) as failure:
                results.append(failure)
            else:
                results.append(Delivered())
        return results


    def send(self, address: str, body: dict[str, Any]) -> None:
        self.attempts.append(address)
        if address in self.permanent:
            raise PermanentFailure("blocked")
        if self.temporary.get(address, 0) > 0:
            self.temporary[address] -= 1
            raise TemporaryFailure("rate limited", self.retry_after)
        self.sent[address].append(body)
        self.log.append((address, body))

    def inbox(self, address: str) -> list[dict[str, Any]]:
        """Everything delivered to this address, in order."""
        return self.sent.get(address, [])

    def ids(self, address: str) -> list[str]:
        return [b["message_id"] for b in self.inbox(address)]

    def last_prompt(self, address: str) -> dict[str, Any] | None:
        """The newest message with choices this address received."""
        for body in reversed(self.inbox(address)):
            if body.get("choices"):
                return dict(body)
        return None

    def count(self) -> dict[str, int]:
        return {address: len(bodies) for address, bodies in self.sent.items()}


@dataclass
class FakeClock:
    """A clock that moves only when told."""

    now: float = 1_000_000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


class Harness:
    """One service, one store, one recording channel; every input is delivered at once, like a live table."""

    def __init__(self, store: Store | None = None, *, seed: int = 1, clock: FakeClock | None = None,
                 channel: RecordingChannel | None = None, channel_name: str = CHANNEL, step: float = 1.0,
                 **service_options: Any) -> None:
        self.step = step
        self.store = store or Store(memory=True)
        self.channel_name = channel_name
        self.clock = clock or FakeClock()
        self.channel = channel or RecordingChannel()
        if channel_name == "sms":
            from moderator.transports.sms import CAPABILITIES

            self.channel.capabilities = CAPABILITIES  # the renderer writes for SMS
        seeds = random.Random(seed)
        service_options.setdefault("vote_pause", 0.0)  # computer players vote at once unless a test says otherwise
        self.service = Service(self.store, clock=self.clock, seed=lambda: seeds.getrandbits(64),
                               capabilities={channel_name: self.channel.capabilities}, **service_options)
        self.sender = Sender(self.store, {channel_name: self.channel}, clock=self.clock)
        self._ids = iter(range(1, 10**9))

    # --- inputs -----------------------------------------------------------------------------------------

    def send(self, address: str, command: Command, *, raw: str = "", chat: str | None = None,
             external_id: str | None = None, language: str | None = None) -> None:
        """One input from ``address`` a second after the last, then deliver everything that is due."""
        self.clock.advance(self.step)
        eid = external_id if external_id is not None else f"m{next(self._ids)}"
        self.service.handle(
            Inbound(self.channel_name, address, command, external_id=eid, language=language, chat=chat, raw=raw)
        )
        self.deliver()

    def deliver(self) -> int:
        """Deliver until nothing more is due; the host hears of what failed by crashing, as ``Worker`` tells it."""
        total = 0
        while True:
            n = self.sender.deliver_due()
            for channel, address, table_id in self.sender.gave_up:
                self.service.not_sent(channel, address, table_id)
            told = bool(self.sender.gave_up)
            self.sender.gave_up.clear()
            if not (n or told):
                return total
            total += n

    def open(self, host: str = "p0", name: str = "Host", *, language: str | None = None,
             chat: str | None = None, **options: Any) -> tuple[str, str]:
        """Open a table; returns (table id, join code) as the host's reply carries them."""
        self.send(host, OpenTable(name, **options), language=language, chat=chat)
        # Read from the outbox, not the inbox: the host's channel may be failing on purpose.
        row = self.store.execute(
            "SELECT body FROM outbox WHERE address = ? AND message_id = 'table-opened' ORDER BY id DESC LIMIT 1",
            (host,),
        ).fetchone()
        assert row is not None, "no table was opened"
        body = json.loads(row[0])
        return body["table"], body["join_code"]

    def seat_table(self, names: Iterable[str], *, prefix: str = "p", language: str | None = None,
                   **options: Any) -> tuple[str, str, list[str]]:
        """A table whose first name hosts and every name is a human at address p0, p1, …; returns addresses."""
        names = list(names)
        table_id, code = self.open(f"{prefix}0", names[0], language=language, **options)
        addresses = [f"{prefix}0"]
        for i, name in enumerate(names[1:], 1):
            self.send(f"{prefix}{i}", Join(code, name), language=language)
            addresses.append(f"{prefix}{i}")
        return table_id, code, addresses

    def start(self, table_id: str, host: str = "p0") -> None:
        """The host starts the game (it must start)."""
        self.send(host, Start())
        assert self.table(table_id).state is not None

    def table(self, table_id: str) -> Table:
        table = self.service.table(table_id)
        assert table is not None
        return table

    def state(self, table_id: str) -> GameState:
        """The game of a table that has one (a test's premise: asserted)."""
        state = self.table(table_id).state
        assert state is not None, f"table {table_id} has no game"
        return state

    def president(self, table_id: str) -> int:
        """The seat of the President or Presidential Candidate of a table's game (asserted to have one)."""
        president = self.state(table_id).president
        assert president is not None, f"table {table_id} has no President"
        return president

    def address_of(self, table_id: str, seat: int) -> str:
        return self.table(table_id).seats[seat].address

    # --- playing as the phones do ----------------------------------------------------------------------

    def press(self, address: str, rng: random.Random, prompt: dict[str, Any] | None = None) -> dict[str, Any]:
        """Press one of the buttons of this address's newest prompt (or ``prompt``); returns the choice."""
        prompt = prompt or self.channel.last_prompt(address)
        assert prompt is not None, f"{address} owes a decision but has no prompt"
        choice: dict[str, Any] = rng.choice(prompt["choices"])
        self.send(address, Choose(choice["token"], prompt["decision"]), raw=choice["label"])
        return choice

    def play_out(self, table_id: str, rng: random.Random, *, limit: int = 2_000) -> int:
        """Play until the game is over, every human pressing a button of the prompt they were sent."""
        moves = 0
        while True:
            table = self.table(table_id)
            state = table.state
            assert state is not None
            if state.phase is Phase.GAME_OVER or table.row.status != "playing":
                return moves
            humans = [s for s in awaiting(state) if not table.seats[s].computer]
            assert humans, "the game waits for nobody"
            address = table.seats[rng.choice(humans)].address
            prompt = self.channel.last_prompt(address)
            assert prompt is not None and prompt["decision"] == table.row.decision_step, (
                f"{address} owes a decision at {table.row.decision_step} but its newest prompt is {prompt}"
            )
            self.press(address, rng, prompt)
            moves += 1
            assert moves < limit


def last(h: Harness, address: str) -> str:
    """The catalog id of the newest message ``address`` was sent."""
    return h.channel.ids(address)[-1]
