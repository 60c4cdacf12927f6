"""Delivery when a channel raises instead of answering: a message whose delivery crashes is tried a few times and
then fails alone, its host told once and the log never quoting it; a network error raised is a temporary
failure; the messages behind it go on."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from moderator.commands import Inbound, Join, OpenTable
from moderator.delivery import CRASH_ATTEMPTS, Worker
from moderator.service import Service
from moderator.store import Store
from tests.fakes import CHANNEL, FakeClock, Harness, RecordingChannel

pytestmark = pytest.mark.anyio


def _outbox(h: Harness, address: str) -> list[tuple[str, str, int, str | None]]:
    return h.store.execute("SELECT message_id, status, attempts, last_error FROM outbox WHERE address = ?"
                           " ORDER BY id", (address,)).fetchall()


def _wait(h: Harness, seconds: float) -> None:
    for _ in range(int(seconds * 4)):
        h.clock.advance(0.25)
        h.deliver()


def test_a_message_whose_delivery_crashes_fails_after_a_few_tries_and_the_rest_to_that_address_follows(
        caplog: pytest.LogCaptureFixture) -> None:
    channel = RecordingChannel(crash={("p1", "table-joined")})
    h = Harness(seed=1, channel=channel)
    h.open("p0", "Ximena")
    with caplog.at_level(logging.INFO, logger="moderator.delivery"):
        h.send("p1", Join(h.store.execute("SELECT code FROM game_tables").fetchone()[0], "Quentin"))
        h.send("p2", Join(h.store.execute("SELECT code FROM game_tables").fetchone()[0], "Zora"))
        assert channel.inbox("p1") == []  # the seat-taken behind the crashing message waits for it
        _wait(h, 1 + 2 + 4 + 1)
    assert channel.crashes == CRASH_ATTEMPTS
    failed = [r for r in _outbox(h, "p1") if r[1] == "failed"]
    assert [(m, a) for m, _, a, _ in failed] == [("table-joined", CRASH_ATTEMPTS)]
    assert failed[0][3] is not None and failed[0][3].startswith("crashed: RuntimeError at fakes.py:")
    assert channel.ids("p1") == ["seat-taken", "seat-taken"]
    assert channel.ids("p2") == ["table-joined", "seat-taken"]
    assert channel.ids("p0").count("player-not-sent") == 1
    assert "Quentin" in channel.inbox("p0")[-1]["text"]
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings and all("crashed: RuntimeError" in r.getMessage() for r in warnings)
    assert ["failed for good" in r.getMessage() for r in warnings].count(True) == 1
    assert not any("cannot fold" in r.getMessage() or "Quentin" in r.getMessage() for r in caplog.records
                   if r.levelno >= logging.INFO)
    assert h.store.backlog() == 0


def test_the_host_hears_of_crashed_messages_to_one_player_once() -> None:
    channel = RecordingChannel(crash={("p1", "table-joined"), ("p1", "seat-taken")})
    h = Harness(seed=1, channel=channel)
    h.seat_table(["Ximena", "Quentin", "Zora", "Yusuf"])
    _wait(h, 30)
    assert {s for _, s, *_ in _outbox(h, "p1")} == {"failed"} and len(_outbox(h, "p1")) == 4
    assert channel.ids("p0").count("player-not-sent") == 1


def test_a_crash_in_a_batch_fails_only_the_message_that_crashes() -> None:
    # A joiner is sent two messages at once; the first crashes the batch, and so each goes alone after.
    channel = RecordingChannel(crash={("p1", "table-joined")})
    h = Harness(seed=1, channel=channel)
    code = h.open("p0", "Ximena")[1]
    h.send("p1", Join(code, "Quentin"))
    assert channel.crashes == 1
    _wait(h, 10)
    assert [(m, s, a) for m, s, a, _ in _outbox(h, "p1")] == [
        ("table-joined", "failed", CRASH_ATTEMPTS), ("seat-taken", "sent", 1)]
    assert channel.ids("p1") == ["seat-taken"]


def test_a_network_error_a_channel_raises_is_retried_as_a_temporary_failure() -> None:
    channel = RecordingChannel(crash={("p0", "table-opened")}, crash_with=ConnectionError)
    h = Harness(seed=1, channel=channel)
    h.open("p0", "Ximena")
    _wait(h, 20)
    assert _outbox(h, "p0")[0][1:] == ("pending", 5, "network: ConnectionError")
    handed = h.store.execute("SELECT handed FROM outbox WHERE address = 'p0'").fetchone()[0]
    assert handed is not None  # raised, not answered: it may have gone out, so a retry may say it is a repeat
    channel.crash.clear()
    _wait(h, 20)
    assert channel.ids("p0") == ["table-opened"]
    assert channel.ids("p0").count("player-not-sent") == 0


async def test_the_delivery_worker_tells_the_host_of_a_message_that_crashed(tmp_path: Path) -> None:
    clock = FakeClock()
    path = tmp_path / "moderator.db"
    store = Store(path)
    service = Service(store, clock=clock)
    channel = RecordingChannel(crash={("p1", "table-joined")})
    worker = Worker(lambda: Store(path), {CHANNEL: channel}, clock=clock, not_sent=service.not_sent)
    try:
        service.handle(Inbound(CHANNEL, "p0", OpenTable("Ximena"), external_id="1"))
        code = store.execute("SELECT code FROM game_tables").fetchone()[0]
        service.handle(Inbound(CHANNEL, "p1", Join(code, "Quentin"), external_id="2"))
        for _ in range(40):
            clock.advance(0.25)
            await worker.deliver()
    finally:
        await worker.stop()
    store.close()
    assert channel.ids("p0") == ["table-opened", "seat-taken", "player-not-sent"]
