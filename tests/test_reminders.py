"""Optional reminders: off by default; when on, whoever owes a decision is reminded, and nothing is decided for them."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from moderator.channels import Capabilities, Delivered, Outbound, Result
from moderator.commands import AddComputers, Inbound, OpenTable, SetReminders, Start
from moderator.delivery import Sender
from moderator.service import Service
from moderator.store import Store


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


class Inbox:
    """Every message delivered, per address."""

    capabilities = Capabilities()

    def __init__(self) -> None:
        self.messages: dict[str, list[Outbound]] = {}

    def send_batch(self, address: str, messages: Sequence[Outbound]) -> list[Result]:
        self.messages.setdefault(address, []).extend(messages)
        return [Delivered() for _ in messages]

    def ids(self, address: str) -> list[str]:
        return [m.message_id for m in self.messages.get(address, [])]



def table_waiting_for_the_host(reminders: int | None) -> tuple[Service, Sender, Inbox, Clock]:
    """A 5-player table (the host and four computer players) whose first decision is the host's."""
    clock = Clock()
    store = Store(memory=True)
    service = Service(store, seed=lambda: 3, clock=clock, codes=random.Random(1))
    inbox = Inbox()
    sender = Sender(store, {"phone": inbox}, clock=clock)
    counter = iter(range(1, 1000))

    def send(command: Any) -> None:
        service.handle(Inbound("phone", "host", command, external_id=str(next(counter))))
        sender.deliver_due()

    send(OpenTable("Ann"))
    send(AddComputers(4))
    if reminders is not None:
        send(SetReminders(reminders))
    send(Start())
    table = service.table(store.tables_of("phone", "host")[0].id)
    assert table is not None and table.state is not None
    # Seed 3 makes the host the first Presidential Candidate, so the table waits for a human.
    assert table.state.president == 0
    return service, sender, inbox, clock


def test_reminders_are_off_by_default() -> None:
    """Without the host turning them on, no reminder is ever sent."""
    service, sender, inbox, clock = table_waiting_for_the_host(None)
    clock.now += 24 * 3600
    assert service.tick() == 0
    sender.deliver_due()
    assert "reminder" not in inbox.ids("host")


def test_whoever_owes_a_decision_is_reminded_after_the_set_minutes_and_nothing_is_decided() -> None:
    """After N minutes the waiting player gets a reminder and the prompt again; the game does not move."""
    service, sender, inbox, clock = table_waiting_for_the_host(5)
    table_id = service.store.tables_of("phone", "host")[0].id
    table = service.table(table_id)
    assert table is not None and table.state is not None
    step = table.state.step
    clock.now += 4 * 60
    assert service.tick() == 0
    clock.now += 2 * 60
    assert service.tick() == 1
    sender.deliver_due()
    ids = inbox.ids("host")
    assert ids[-2:] == ["reminder", "prompt-nominate"]
    table = service.table(table_id)
    assert table is not None and table.state is not None and table.state.step == step
    # One reminder per decision: the deadline is spent.
    clock.now += 60 * 60
    assert service.tick() == 0
