"""Delivery: the outbox, drained through the channels, with retries, back-off and a record of what each took.

Persist first, send second: ``Service.handle`` commits the messages an input produced; a ``Sender`` then hands
each channel what is due for one address at a time (``Channel.send_batch``), marked handed just before and its
answers recorded just after. What a
channel must remember it gets from here: the message that shows a table's board (so it is edited in place,
across restarts too), what each message cost and how far it got (``deliveries``), and how fast each chat of a
``Paced`` channel was written to (``pacing``: a restart keeps the pace).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
import traceback
from collections.abc import Awaitable, Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Final

from .channels import Channel, Delivered, Kind, Outbound, Paced, PermanentFailure, Result, TemporaryFailure
from .store import BoardMessage, OutboxRow, Store

log = logging.getLogger(__name__)


PACE_KEPT: Final = 3600.0
"""Seconds a chat's stored pace matters after a restart (Telegram's limits count the last minute)."""

PRUNE_EVERY: Final = 60.0
"""Seconds between two prunings of the stored paces older than ``PACE_KEPT`` (each scans the chats of the last
hour: about 0.1 ms for a thousand; once a minute it costs nothing)."""

CRASH_ATTEMPTS: Final = 4
"""Tries of a message whose delivery raised something no channel expects (a bug, not the network): a bug does
not heal by waiting, so it fails for good after these (1 + 2 + 4 s of back-off) instead of after ``max_attempts``
and holds the messages behind it no longer."""
CRASHED: Final = "crashed"
"""How ``last_error`` begins for a message whose delivery raised (``CRASH_ATTEMPTS``)."""


class Sender:
    """Delivers the outbox through the channels, oldest first, with retries and back-off.

    At most once on screen: before a channel is handed an address's messages they are marked handed (``hand``),
    and what it answered is recorded at once after (``flush``), so a crash repeats at most that one hand-over.
    A message handed before and never recorded reaches the channel with ``Outbound.handed`` set: it may have
    gone out (the channel checks with its provider, or says it is a repeat). If the mark cannot be written (a
    full or read-only disk) nothing is sent: what cannot be recorded as sent would be sent again and again.

    A channel that raises instead of answering fails nothing else: a raised ``TemporaryFailure`` or
    ``PermanentFailure`` counts as that answer, a network error (``OSError``) as a temporary failure; anything else
    is a crash, tried ``CRASH_ATTEMPTS`` times, the messages it was handed with then tried one at a time (so one
    poison message fails alone). One that fails so is logged without its text and listed in ``gave_up``."""

    def __init__(self, store: Store, channels: Mapping[str, Channel], *, clock: Callable[[], float] = time.time,
                 max_attempts: int = 8) -> None:
        self.store = store
        self.channels = dict(channels)
        self.clock = clock
        self.max_attempts = max_attempts
        self._sent: list[tuple[int, float]] = []
        self._retries: list[tuple[int, float, str]] = []
        self._failed: list[tuple[int, str]] = []
        self._taken: list[tuple[str, tuple[str, str | None, str, int, str]]] = []
        self._boards: list[tuple[str, str, str, BoardMessage]] = []
        self._unhand: list[int] = []
        self._held: list[tuple[int, float]] = []
        self._paces: list[tuple[str, dict[str, str]]] = []
        self._pruned = float("-inf")
        self._suspects: set[int] = set()
        """Messages handed together with one whose delivery crashed: each goes alone until it was delivered."""
        self.gave_up: list[tuple[str, str, str]] = []
        """(channel, address, table id) of messages that failed for good by crashing, the first to that address
        at that table (its host is told, once, by whoever runs this sender: ``Service.not_sent``)."""
        self._recalled = False
        self._public_first = [name for name, c in self.channels.items() if c.capabilities.public_first]

    def flush(self) -> None:
        """Record every settled delivery attempt not yet recorded, in one transaction."""
        sent, retries, failed, taken, boards = self._sent, self._retries, self._failed, self._taken, self._boards
        self._sent, self._retries, self._failed, self._taken, self._boards = [], [], [], [], []
        unhand, self._unhand = self._unhand, []
        held, paces, self._held, self._paces = self._held, self._paces, [], []
        if not (sent or retries or failed or taken or boards or held or paces):
            return
        now = self.clock()
        with self.store.transaction():
            self.store.settle(sent, retries, failed, held)
            prune = bool(paces) and now >= self._pruned + PRUNE_EVERY
            for channel, pace in paces:
                self.store.set_paces(channel, pace, now, forget_before=now - PACE_KEPT if prune else None)
            if prune:
                self._pruned = now
            self.store.unhand(unhand)
            for channel in {c for c, _ in taken}:
                self.store.record_deliveries(channel, [t for c, t in taken if c == channel], now)
            for channel, address, table, shown in boards:
                self.store.set_board_message(channel, address, table, shown, now)

    def deliver_due(self, limit: int = 100) -> int:
        """Try every message that is due on a channel we have; returns how many were delivered."""
        try:
            return self._deliver(limit)
        finally:
            self.flush()  # also after a channel raised: what went out before it is recorded as sent

    def _recall(self, now: float) -> None:
        """Before the first delivery: each paced channel learns the pace it kept before a restart."""
        self._recalled = True
        for name, channel in self.channels.items():
            if isinstance(channel, Paced):
                channel.recall(self.store.paces(name, now - PACE_KEPT))

    def _deliver(self, limit: int) -> int:
        now = self.clock()
        if not self._recalled:
            self._recall(now)
        delivered = 0
        due = self.store.due(now, limit, channels=list(self.channels), public_first=self._public_first)
        done: set[tuple[str, str]] = set()
        for row in due:
            key = (row.channel, row.address)
            if key in done:
                continue
            done.add(key)
            rows = [r for r in due if (r.channel, r.address) == key]
            delivered += self._deliver_to(self.channels[row.channel], rows, now)
        return delivered

    def _deliver_to(self, channel: Channel, rows: list[OutboxRow], now: float) -> int:
        """Everything due for one address, in one ``send_batch``; returns how many were delivered."""
        messages: list[Outbound] = []
        going: list[OutboxRow] = []
        delivered = 0
        for row in rows:
            try:
                message = Outbound.from_json(row.body, row.message_id)
                shown = self._board_shown(row, message) if message.kind is Kind.BOARD else message
            except Exception as exc:  # a body this code cannot read: that message alone fails
                self._crashed(row, exc, now)
                continue
            if shown is None:  # the chat shows this board already
                delivered += self._settle(row, Delivered(), now, now)
                continue
            messages.append(shown)
            going.append(row)
        if any(r.id in self._suspects for r in going):  # one of them crashed its batch: find which, one by one
            going, messages = going[:1], messages[:1]
        if not going:
            return delivered
        self.flush()  # what settled without the channel (boards shown already) goes with the mark
        self.store.hand([r.id for r in going], self.clock())  # raises if it cannot be written: nothing is sent
        messages = [m if r.handed is None else replace(m, handed=r.handed) for r, m in zip(going, messages,
                                                                                          strict=True)]
        results = self._send(channel, going, messages, now)
        sent_at = self.clock()
        if isinstance(channel, Paced) and (pace := dict(channel.pacing())):
            self._paces.append((going[0].channel, pace))
        for row, message, result in zip(going, messages, results, strict=True) if results is not None else ():
            self._suspects.discard(row.id)
            delivered += self._settle(row, result, now, sent_at)
            if isinstance(result, Delivered) and result.ref is not None:
                self._note(channel, row, message, result)
        self.flush()  # at once: a crash from here on repeats nothing
        return delivered

    def _send(self, channel: Channel, going: list[OutboxRow], messages: list[Outbound],
              now: float) -> list[Result] | None:
        """The channel's answer for each message; None if it crashed (each message noted as crashed)."""
        try:
            results = list(channel.send_batch(going[0].address, messages))
            if len(results) != len(going):
                raise ValueError(f"send_batch answered {len(results)} results for {len(going)} messages")
        except (TemporaryFailure, PermanentFailure) as failure:  # raised rather than answered: the same
            return [failure] * len(going)
        except OSError as exc:  # a network error the channel did not translate: temporary, as it would say
            return [_Raised(f"network: {type(exc).__name__}")] * len(going)
        except Exception as exc:
            for row in going:
                self._crashed(row, exc, now)
            if len(going) > 1:  # which one is poison? each goes alone from now on
                self._suspects.update(r.id for r in going if r.attempts + 1 < CRASH_ATTEMPTS)
            return None
        return results

    def _crashed(self, row: OutboxRow, exc: Exception, now: float) -> None:
        """Note one message whose delivery raised unexpectedly: try again later, or after ``CRASH_ATTEMPTS`` give
        up. Logged by type and place only: the exception's words may quote the message, and its text holds
        secrets (the traceback goes to DEBUG)."""
        frame = traceback.extract_tb(exc.__traceback__)[-1:] if exc.__traceback__ is not None else []
        where = f" at {frame[0].filename.rsplit('/', 1)[-1]}:{frame[0].lineno}" if frame else ""
        error = f"{CRASHED}: {type(exc).__name__}{where}"
        tries = row.attempts + 1
        log.debug("delivery of message %d crashed", row.id, exc_info=exc)
        if tries < CRASH_ATTEMPTS:
            backoff = min(2.0**row.attempts, 300.0)
            log.warning("delivery: message %d (%s) on %s %s; try %d of %d in %g s", row.id, row.message_id,
                        row.channel, error, tries, CRASH_ATTEMPTS, backoff)
            self._retries.append((row.id, now + backoff, error))
            return
        log.warning("delivery: message %d (%s) on %s %s; failed for good after %d tries", row.id, row.message_id,
                    row.channel, error, tries)
        self._failed.append((row.id, error))
        self._suspects.discard(row.id)
        if row.table_id is None:
            return  # no table, no host to tell
        told = (row.channel, row.address, row.table_id)
        if told not in self.gave_up and not self.store.failed_before(*told, row.id, f"{CRASHED}:"):
            self.gave_up.append(told)

    def _board_shown(self, row: OutboxRow, message: Outbound) -> Outbound | None:
        """The board message to send, editing the one the chat shows for this game; None if it shows this one."""
        assert message.board is not None
        shown = self.store.board_message(row.channel, row.address, message.table or "")
        if shown is not None and shown.game == message.game:
            if shown.drawn == _drawn(message):
                return None
            return replace(message, edit=shown.message_id)
        return message

    def _note(self, channel: Channel, row: OutboxRow, message: Outbound, result: Delivered) -> None:
        assert result.ref is not None
        if message.kind is Kind.BOARD:
            shown = BoardMessage(message.game, result.ref, _drawn(message))
            self._boards.append((row.channel, row.address, message.table or "", shown))
        elif channel.capabilities.paid_per_message and all(t[1][0] != result.ref for t in self._taken):
            self._taken.append((row.channel, (result.ref, row.table_id, row.address, result.units, result.status)))

    def _settle(self, row: OutboxRow, result: Result, now: float, sent_at: float) -> int:
        """Note one message's delivery attempt for ``flush``; 1 if it was delivered."""
        delivered = 0
        if isinstance(result, TemporaryFailure):
            if row.handed is None and not isinstance(result, _Raised):
                self._unhand.append(row.id)  # not taken (paced, rate-limited): its retry is no repeat
            if result.paced:  # held back, never tried: no attempt spent
                self._held.append((row.id, now + (result.retry_after or 0.0)))
            elif row.attempts + 1 >= self.max_attempts:
                self._failed.append((row.id, str(result)))
            else:
                backoff = result.retry_after if result.retry_after is not None else min(2.0**row.attempts, 300.0)
                self._retries.append((row.id, now + backoff, str(result)))
        elif isinstance(result, PermanentFailure):
            self._failed.append((row.id, str(result)))
        else:
            self._sent.append((row.id, sent_at))
            delivered = 1
        return delivered


class _Raised(TemporaryFailure):
    """A network error a channel raised rather than answered: it may have taken the message (a timeout after
    sending), so its mark stays and a retry may say it is a repeat."""


def _drawn(message: Outbound) -> str:
    """What a board message shows, as a fingerprint (a vote that changed only the step changes nothing)."""
    assert message.board is not None
    return json.dumps(message.board.drawn(), sort_keys=True, ensure_ascii=False)


class Worker:
    """Delivers some channels' outbox on its own thread with its own store connection, in rounds: after every
    input (``kick``) and every ``interval`` seconds for retries, while the event loop goes on."""

    def __init__(self, store_factory: Callable[[], Store], channels: Mapping[str, Channel], *,
                 clock: Callable[[], float] = time.time, interval: float = 0.5,
                 after_round: Callable[[], Awaitable[int]] | None = None, name: str = "sender",
                 not_sent: Callable[[str, str, str], None] | None = None) -> None:
        self.store_factory = store_factory
        self.channels = dict(channels)
        self.clock = clock
        self.interval = interval
        self.after_round = after_round
        """(On the loop.) Runs after each round; returns how many reports it applied (more rounds follow)."""
        self.not_sent = not_sent
        """(On the loop.) Told (channel, address, table id) of each ``Sender.gave_up`` after the round."""
        self._gave_up: list[tuple[str, str, str]] = []
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=name)
        self._store: Store | None = None
        self._sender: Sender | None = None
        self._kick: asyncio.Event | None = None
        self._task: asyncio.Task[None] | None = None

    def _round(self) -> int:
        """(The worker's thread.) One round of deliveries."""
        if self._sender is None:
            self._store = self.store_factory()
            self._store.quick_commits()
            self._sender = Sender(self._store, self.channels, clock=self.clock)
        try:
            return self._sender.deliver_due()
        finally:
            self._gave_up.extend(self._sender.gave_up)
            self._sender.gave_up.clear()

    async def deliver(self) -> int:
        """Deliver until nothing more is due now (the channel's reports applied in between); returns how many."""
        loop = asyncio.get_running_loop()
        total = 0
        for _ in range(1000):
            delivered = await loop.run_in_executor(self._executor, self._round)
            reports = await self.after_round() if self.after_round is not None else 0
            gave_up, self._gave_up = self._gave_up, []
            for channel, address, table_id in gave_up:
                if self.not_sent is not None:
                    self.not_sent(channel, address, table_id)
            reports += len(gave_up)
            total += delivered
            if not delivered and not reports:
                break
        return total

    def kick(self) -> None:
        """(On the loop.) Something was queued: deliver now rather than at the next interval."""
        if self._kick is not None:
            self._kick.set()

    def start(self) -> None:
        """(On the loop.) Deliver in the background until ``stop``."""
        self._kick = asyncio.Event()
        kick = self._kick

        async def run() -> None:
            while True:
                try:
                    await self.deliver()
                except Exception:  # keep delivering: one bad message must not stop every table
                    log.exception("delivery failed; trying again")
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(kick.wait(), self.interval)
                kick.clear()


        self._task = asyncio.get_running_loop().create_task(run())

    async def stop(self) -> None:
        """Stop delivering and release the thread and its connection."""
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None
        if self._store is not None:
            store, self._store = self._store, None
            await asyncio.get_running_loop().run_in_executor(self._executor, store.close)
        self._executor.shutdown(wait=True)


class Inline:
    """Delivers one channel's outbox on the caller's thread, through the service's own store connection, when
    kicked: nothing runs in the background (``Runtime.delivery(..., inline=True)``; a terminal, a game in memory)."""

    def __init__(self, sender: Sender, *, not_sent: Callable[[str, str, str], None] | None = None) -> None:
        self.sender = sender
        self.not_sent = not_sent

    def kick(self) -> None:
        """Deliver everything due now, before returning."""
        self._deliver()

    async def deliver(self) -> int:
        """Deliver everything due now; returns how many messages went out."""
        return self._deliver()

    def _deliver(self) -> int:
        total = 0
        while delivered := self.sender.deliver_due():
            total += delivered
        gave_up, self.sender.gave_up = self.sender.gave_up, []
        for told in gave_up:
            if self.not_sent is not None:
                self.not_sent(*told)
        return total
