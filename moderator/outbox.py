"""The messages one input produces, collected inside its transaction: they enter the outbox together.

``Outgoing`` turns what the renderer wrote (``render.Message``) into the port's ``Outbound`` values, addressed;
``Service.handle`` puts them in the outbox in the same transaction as the input's state and events.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any, Final

from . import moves
from .board import BOARD_MESSAGE, Board
from .catalog import DEFAULT_LANGUAGE
from .channels import Kind, Option, Outbound
from .render import Message

COMPUTER_CHANNEL: Final = "computer"
"""The channel of computer players: nothing is ever sent to it."""


def in_toast(message: Outbound) -> str:
    """What a toast shows of a message: its words below the neutral first line a secret starts with."""
    return message.text.split("\n", 1)[-1]


@dataclass(frozen=True, slots=True)
class Reply:
    """Where a private reply goes, and in which language."""

    channel: str
    address: str
    language: str = DEFAULT_LANGUAGE


def outbound(message: Message, **fields: Any) -> Outbound:
    """A rendered message as the port carries it; its choices become options whose tokens are the actions'."""
    options = tuple(Option(c.label, moves.token(c.action)) for c in message.choices)
    return Outbound(message.kind, message.text, message.secret, options, message_id=message.message_id, **fields)


@dataclass
class Outgoing:
    """Messages collected while handling one input (and what the input did, for its ``Receipt``)."""

    table_id: str | None
    now: float
    """The input's time: every row it writes is stamped with it (a game's start, its messages' creation)."""
    rows: list[tuple[str | None, str, str, Outbound]] = field(default_factory=list)
    applied: int = 0
    """Actions this input applied (not those of the computer players after it)."""
    notice: str | None = None
    """A short answer the input's channel shows at once (a toast) instead of a message."""
    answer: Outbound | None = None
    """The message ``notice`` stands for, kept with the input (``Store.keep_answer``): sent after all if the
    channel could not show the toast (``Service.unanswered``)."""
    committed: list[Callable[[], object]] = field(default_factory=list)
    """What the process remembers of this input outside the database (a rate limit's count): done only once
    the input's transaction committed, so an input that was not stored leaves no trace."""

    def put(self, channel: str, address: str, message: Outbound) -> None:
        """Queue one message for an address (never for a computer player)."""
        if channel != COMPUTER_CHANNEL:
            self.rows.append((self.table_id, channel, address, message))

    def add(self, channel: str, address: str, message: Message, **fields: Any) -> None:
        """Queue one rendered message (``fields``: decision, table, language, ...)."""
        self.put(channel, address, outbound(message, **fields))

    def board(self, channel: str, address: str, board: Board, game: int, language: str) -> None:
        """Queue the board image for a public chat: one per input, the latest (an earlier one is dropped)."""
        self.rows = [r for r in self.rows if not (r[1:3] == (channel, address) and r[3].kind is Kind.BOARD)]
        self.put(channel, address, Outbound(Kind.BOARD, "", table=self.table_id, board=board, game=game,
                                            language=language, message_id=BOARD_MESSAGE))

    def to(self, channel: str, address: str) -> Iterator[tuple[int, Outbound]]:
        """(index, message) of everything queued so far for this address."""
        for i, (_, c, a, message) in enumerate(self.rows):
            if (c, a) == (channel, address):
                yield i, message

    def change(self, index: int, **fields: Any) -> None:
        """Change fields of one queued message."""
        table_id, channel, address, message = self.rows[index]
        self.rows[index] = (table_id, channel, address, replace(message, **fields))

    def drop(self, index: int) -> Outbound:
        """Take one queued message out again (it is said another way: a toast); returns it."""
        return self.rows.pop(index)[3]

    def stored(self, muted: Callable[[str, str], bool]) -> list[tuple[str | None, str, str, str, dict[str, Any]]]:
        """The rows as the outbox stores them, less those to an address ``muted(channel, address)`` says its
        channel will not deliver to (an SMS STOP: the carrier refuses every text until START)."""
        silent: dict[tuple[str, str], bool] = {}
        rows = []
        for t, c, a, m in self.rows:
            if (c, a) not in silent:
                silent[(c, a)] = muted(c, a)
            if not silent[(c, a)]:
                rows.append((t, c, a, m.message_id, m.to_json()))
        return rows
