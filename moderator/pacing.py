"""Delivery to a chat whose provider limits calls (``Capabilities.pacing``): each chat's pace, and the order a
public chat's messages go in.

The order: in a public chat a result never waits behind the vote counter or the board (``Kind.cosmetic``); those
two are shown only in a slot of their own, when nothing else waits and the minute has room to spare, and a later
one folds an earlier one away (as a later seat list folds an earlier one of the same table). A changed board
that has waited ``Pacing.board_patience`` seconds goes before the next call (whose prompts wait), never before
news. An aside (``Kind.ASIDE``) alone, in any chat, waits ``Pacing.aside_patience`` seconds for the next message
to go with it.
What may not go yet is answered ``TemporaryFailure(paced=True)``: the ``Sender`` tries it again then, at no
cost of an attempt.

A channel with ``Capabilities.pacing`` delivers each address's batch through ``Pacer.batch``, giving it the calls
that send (texts, then a picture); it tells the pacer each call it made (``sent``) and each rate limit its
provider answered (``blocked``), and hands on ``pacing``/``recall`` (``channels.Paced``) so that the ``Sender``
keeps a public chat's minute across a restart. Nothing here knows a provider: a second rate-limited chat gets the
same pacing and order by declaring its limits.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

from .channels import Delivered, Kind, Outbound, Pacing, Result, TemporaryFailure


@dataclass
class Pace:
    """How fast one chat was written to."""

    free: float = float("-inf")
    """When the next call may go: each call moves it on by the chat's interval."""
    counter: float = float("-inf")
    blocked_until: float = float("-inf")
    window: deque[float] = field(default_factory=deque)
    """A public chat's calls of the last minute."""

    def to_json(self) -> str:
        def finite(value: float) -> float | None:
            return value if value != float("-inf") else None

        return json.dumps({"free": finite(self.free), "counter": finite(self.counter),
                           "blocked_until": finite(self.blocked_until), "window": list(self.window)})

    @classmethod
    def from_json(cls, text: str) -> Pace:
        data = json.loads(text)

        def at(key: str) -> float:
            value = data.get(key)
            return float("-inf") if value is None else float(value)

        return cls(at("free"), at("counter"), at("blocked_until"), deque(float(t) for t in data.get("window", ())))


class Pacer:
    """The paces of one channel's chats (keyed as the channel names them) and the order of their batches."""

    def __init__(self, limits: Pacing, *, public: Callable[[str], bool], clock: Callable[[], float] = time.time,
                 calls: Callable[[Sequence[Outbound]], int] = len) -> None:
        self.limits = limits
        self.public = public
        """Whether a chat is public (a group), where the minute's limit and the order hold."""
        self.clock = clock
        self.calls = calls
        """At most how many provider calls these messages take in one chat (the channel folds some into one)."""
        self._paces: dict[str, Pace] = {}
        self._changed: set[str] = set()
        """Public chats whose pace changed since ``pacing`` last took it."""
        self._board_held: dict[str, float] = {}
        """Since when each public chat's changed board waits for a slot."""
        self._aside_held: dict[str, float] = {}
        """Since when each chat's aside waits for a message to go with."""

    def batch(self, chat: str, messages: Sequence[Outbound], send: Callable[[Sequence[Outbound]], Result],
              picture: Callable[[Outbound], Result]) -> list[Result]:
        """Deliver what may go now of one chat's messages: ``send`` the texts (folded as the channel does), then
        ``picture`` each board, only if the texts went (a board that fails must not send them again). One result
        per message; superseded counters and boards are answered delivered, what must wait is paced."""
        keep = relevant(messages)
        results: list[Result] = [Delivered()] * len(messages)
        if not keep:
            return results  # only superseded vote counters: the newer count says it all
        # In a public chat the counter and the board wait for a slot of their own: a result never waits behind them.
        main = [i for i in keep if not messages[i].kind.cosmetic]
        public = self.public(chat)
        asides = [i for i in main if messages[i].kind is Kind.ASIDE]
        if asides and all(i in asides or _edits_pressed(messages[i]) for i in main):
            held = self._aside_held.get(chat, float("-inf"))
            if held < self.clock() - self.limits.aside_patience - _FORGOTTEN:
                held = self._aside_held[chat] = self.clock()  # a new aside (an older one went some other way)
            patience = held + self.limits.aside_patience - self.clock()
            if patience > 0:  # the next message may come soon: the two go as one call (a press's answer goes now)
                for i in asides:
                    results[i] = TemporaryFailure("paced", patience, paced=True)
                keep = [i for i in keep if i not in asides]
                main = [i for i in main if i not in asides]
                if not keep:
                    return results
        go = keep
        if public and main:
            go = main
            board = [i for i in keep if messages[i].kind is Kind.BOARD]
            if (board and self.clock() >= self._board_held.get(chat, float("inf")) + self.limits.board_patience
                    and all(messages[i].kind is Kind.CALL for i in main)):
                go = board  # waited long enough: it goes before a call (whose prompts wait), never before news
        elif public:  # the first counter or board that may go now, one a slot
            go = next(([i] for i in keep if not self.wait(chat, [messages[i]], cosmetic=True)), keep[:1])
        wait = self.wait(chat, [messages[i] for i in go], cosmetic=not main)
        if wait > 0:
            for i in keep:
                results[i] = TemporaryFailure("paced", wait, paced=True)
            return results
        boards = [i for i in go if messages[i].kind is Kind.BOARD]
        texts = [messages[i] for i in go if i not in boards]
        first = send(texts) if texts else Delivered()
        if not isinstance(first, TemporaryFailure) and any(messages[i].kind is Kind.ASIDE for i in go):
            self._aside_held.pop(chat, None)  # went, or never will: the next aside waits its own patience
        for i in go:
            results[i] = first
        for i in boards:
            if isinstance(first, Delivered):
                results[i] = picture(messages[i])
        later = [i for i in keep if i not in go]
        if any(messages[i].kind is Kind.BOARD for i in later):
            self._board_held.setdefault(chat, self.clock())
        elif boards:
            self._board_held.pop(chat, None)
        for i in later:
            wait = max(self.wait(chat, [messages[i]], cosmetic=messages[i].kind.cosmetic), 0.1)
            results[i] = TemporaryFailure("paced", wait, paced=True)
        return results

    def wait(self, chat: str, messages: Sequence[Outbound], *, cosmetic: bool = False) -> float:
        """Seconds until this chat may get these messages (0: now); ``cosmetic``: a counter or a board only, which
        in a public chat leave ``Pacing.cosmetic_reserve`` calls of the minute free."""
        now = self.clock()
        pace = self._paces.setdefault(chat, Pace())
        wait = max(pace.blocked_until, pace.free) - now
        public = self.public(chat)
        if public:
            while pace.window and pace.window[0] <= now - 60.0:
                pace.window.popleft()
            room = self.limits.public_per_minute - (self.limits.cosmetic_reserve if cosmetic else 0)
            over = min(len(pace.window) + self.calls(messages) - room, len(pace.window))
            if over > 0:  # the minute would hold too many: wait until enough of its calls are a minute old
                wait = max(wait, pace.window[over - 1] + 60.0 - now)
        if any(m.kind is Kind.COUNTER for m in messages) and all(m.kind.cosmetic for m in messages):
            interval = self.limits.counter_interval if public else self.limits.private_counter_interval
            wait = max(wait, pace.counter + interval - now)
        return max(wait, 0.0)

    def sent(self, chat: str, *, counter: bool = False) -> None:
        """One call went to this chat (``counter``: it showed the vote counter)."""
        now = self.clock()
        pace = self._paces.setdefault(chat, Pace())
        public = self.public(chat)
        pace.free = max(pace.free, now) + (self.limits.public_interval if public else self.limits.private_interval)
        if public:
            pace.window.append(now)
            self._changed.add(chat)
        if counter:
            pace.counter = now

    def blocked(self, chat: str, seconds: float) -> None:
        """The provider refused a call for ``seconds`` (a rate limit): nothing goes to this chat until then."""
        self._paces.setdefault(chat, Pace()).blocked_until = self.clock() + seconds
        if self.public(chat):
            self._changed.add(chat)

    def pacing(self) -> dict[str, str]:
        """(Sender's thread.) The pace of every public chat written to since the last call (``channels.Paced``)."""
        changed, self._changed = self._changed, set()
        return {chat: self._paces[chat].to_json() for chat in changed}

    def recall(self, paces: Mapping[str, str]) -> None:
        """(Sender's thread.) The public chats' paces from before a restart: the minute's calls still count."""
        for chat, text in paces.items():
            with contextlib.suppress(ValueError, TypeError, AttributeError):
                self._paces[chat] = Pace.from_json(text)


_FORGOTTEN: Final = 60.0
"""Seconds past its patience after which a chat's held aside no longer counts: one that was cancelled (its table
closed) never comes back to clear its hold, and the next one must wait its own patience."""


def _edits_pressed(message: Outbound) -> bool:
    """The answer to a press, shown on the pressed message: no new message that an aside could share."""
    return message.kind is Kind.ECHO and message.press is not None


def relevant(messages: Sequence[Outbound]) -> list[int]:
    """Indexes of the messages worth delivering: a vote counter is superseded by any later message but a board
    image, a board image by a later board image, a table's seat list (``Kind.LOBBY``, edited in place) by a later
    one of that table (it shows every seat: several joins, or moves, waiting for one pace are one edit)."""
    counters = [i for i, m in enumerate(messages) if m.kind is Kind.COUNTER]
    boards = [i for i, m in enumerate(messages) if m.kind is Kind.BOARD]
    lobbies = {m.table: i for i, m in enumerate(messages) if m.kind is Kind.LOBBY}
    drop = set(counters[:-1]) | set(boards[:-1])
    drop |= {i for i, m in enumerate(messages) if m.kind is Kind.LOBBY and lobbies[m.table] != i}
    if counters and any(i not in boards for i in range(counters[-1] + 1, len(messages))):
        drop.add(counters[-1])
    return [i for i in range(len(messages)) if i not in drop]
