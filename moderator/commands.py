"""What a person can ask of the moderator, whatever channel it came through. Transports parse into these."""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from enum import StrEnum
from typing import Final


def number(text: str, most: int | None = None) -> int | None:
    """The number decimal digits write (at most ``most`` of them), ASCII or of another script (Persian ``۳``,
    Arabic-Indic ``٣``), else None: every number a person types or a button or form sends is read here."""
    if text.isdecimal() and (most is None or len(text) <= most):
        return int("".join(str(unicodedata.decimal(c)) for c in text))
    return None


class Query(StrEnum):
    """Questions anyone may ask at any time; answers go privately to the asker."""

    BOARD = "board"
    WHOAMI = "whoami"
    WAITING = "waiting"
    HELP = "help"
    RULES = "rules"
    HOWTO = "howto"
    """One short text of how to open or join a table, and where the full help is (an SMS ``HELP``)."""
    BACK = "back"
    """The asker can be reached again (Start pressed, START texted): what its seat knows and the decision it
    owes."""
    PROMPT = "prompt"
    """The decision the asker owes, shown again (the console, after a question of its own hid it); nothing if
    none is owed."""


class HostCommand(StrEnum):
    """What only the host may do."""

    PAUSE = "pause"
    RESUME = "resume"
    NUDGE = "nudge"
    END = "end"
    REMATCH = "rematch"
    PUBLIC_TO_HOST = "public-to-host"
    """Public results go to the host's phone only, not to every SMS seat (they cost money per message)."""
    PUBLIC_TO_ALL = "public-to-all"
    """Public results go to every seat again (the default)."""
    COST = "cost"
    """How many SMS segments the running game has sent so far."""


@dataclass(frozen=True, slots=True)
class OpenTable:
    """Open a new table; the sender becomes its host and takes the first seat (``name``)."""

    name: str
    theme: str | None = None
    public: bool = False
    """True when sent from a group chat: the group becomes the table's public channel."""
    physical_voting: bool = False
    seat: bool = True
    """False: the host runs the table without playing (a moderator, or a screen watching computer players)."""
    ask_name: bool = False
    """True: a name that cannot be one opens no table, and the sender is told why to give another (the console
    asks again); else the host sits as the catalog's ``host-name`` and may rename (a phone's host)."""


@dataclass(frozen=True, slots=True)
class Join:
    """Take a seat at the table with this join code (or reclaim one with a seat's move code)."""

    code: str
    name: str


@dataclass(frozen=True, slots=True)
class AddComputers:
    """The host fills empty seats with computer players (``count``; None fills up to five players)."""

    count: int | None = None


@dataclass(frozen=True, slots=True)
class Seating:
    """The host puts the seats in the real seating order (every name, clockwise)."""

    names: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class MoveSeat:
    """The host moves one seat to a new place in the order (1-based)."""

    name: str
    position: int


@dataclass(frozen=True, slots=True)
class RemoveSeat:
    """The host removes a seat from the lobby."""

    name: str


@dataclass(frozen=True, slots=True)
class Start:
    """The host starts the game with the seats as they are."""


@dataclass(frozen=True, slots=True)
class Speak:
    """A player's claim, typed: ``kind`` is ``claim`` (cards, or a name and a party), ``accuse`` or ``trust``."""

    kind: str
    argument: str


@dataclass(frozen=True, slots=True)
class Decide:
    """A game decision typed with words: a record action kind and its argument (a name, a card, ja/nein).

    ``kind`` is one of the game-record action kinds (``nominate``, ``vote``, ``discard``, ``enact``, ``veto``,
    ``veto_reply``, ``investigate``, ``special_election``, ``execute``).
    """

    kind: str
    argument: str | None = None


@dataclass(frozen=True, slots=True)
class Choose:
    """A pressed button or a numbered option of the current prompt.

    ``token`` is a button's action token (see ``service.action_token``) or the option's number as text;
    ``decision`` is the decision the prompt was made for: a press on an older prompt changes nothing.
    """

    token: str
    decision: int | None = None


@dataclass(frozen=True, slots=True)
class LobbyControl:
    """One of the host's seat controls in the lobby, by its token (``fanout.lobby_controls``)."""

    token: str


@dataclass(frozen=True, slots=True)
class RecordVotes:
    """With physical voting, the President records who voted Ja (everyone else living voted Nein)."""

    ja: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Ask:
    """A question: the board, what I know, who the table waits for, help, the rules."""

    query: Query


@dataclass(frozen=True, slots=True)
class Host:
    """A host control."""

    command: HostCommand


@dataclass(frozen=True, slots=True)
class MovePhone:
    """The host gives a seat a one-time code so the player can take it over from a new phone."""

    name: str


@dataclass(frozen=True, slots=True)
class SetLanguage:
    """The sender's language for private messages."""

    language: str


class Away(StrEnum):
    """Why a channel will not deliver to a person, and what brings them back."""

    STOPPED = "stopped"
    """They opted out (an SMS ``STOP``): back only when they opt in (``START``)."""
    SILENT = "silent"
    """They have not written for longer than the provider lets the bot answer (WhatsApp's 24 hours): back as soon
    as they write anything."""
    BLOCKED = "blocked"
    """Their number blocked the bot or cannot be reached: back as soon as they write anything."""
    SANDBOX = "sandbox"
    """Their phone left the provider's test sender (Twilio's WhatsApp sandbox, every three days): back once they
    join it again and write."""

    @property
    def until_heard(self) -> bool:
        """Any message of theirs brings them back (not only an opt-in)."""
        return self is not Away.STOPPED


@dataclass(frozen=True, slots=True)
class OptOut:
    """The channel will not deliver to the sender any more (an SMS ``STOP``, or ``why`` else): nothing waiting for
    them is sent, and the host of every table they sit at is told."""

    why: Away = Away.STOPPED


@dataclass(frozen=True, slots=True)
class OptIn:
    """The sender opted back in to this channel (an SMS ``START``): texts reach them again, and the host of every
    table they sit at is told."""


@dataclass(frozen=True, slots=True)
class SetReminders:
    """The host turns reminders on (after ``minutes`` without a decision) or off (None or 0)."""

    minutes: int | None


REMINDER_MINUTES: Final = 5
"""The minutes of ``reminders on`` (a number says how many)."""


@dataclass(frozen=True, slots=True)
class Leave:
    """The sender leaves the table's lobby (the host's role passes to the next person at the table)."""


@dataclass(frozen=True, slots=True)
class Rename:
    """The sender's name from now on: in the lobby, their name in the game; during a game, only the name shown
    (the game's record keeps the name it started with)."""

    name: str


@dataclass(frozen=True, slots=True)
class SetTableVoting:
    """The host: votes are cast at the table, with hands or cards, and the President records who voted Ja (on), or
    every player votes on their own phone (off)."""

    on: bool


@dataclass(frozen=True, slots=True)
class StandIn:
    """The host: a computer player takes over the seat of ``name``, who is away (``back``: gives it back)."""

    name: str
    back: bool = False


@dataclass(frozen=True, slots=True)
class SetTheme:

    """The host sets the table's theme."""

    theme: str


Command = (
    OpenTable
    | Join
    | AddComputers
    | Seating
    | MoveSeat
    | RemoveSeat
    | Start
    | Decide
    | Speak
    | Choose
    | LobbyControl
    | RecordVotes
    | Ask
    | Host
    | MovePhone
    | SetLanguage
    | SetTheme
    | SetReminders
    | OptOut
    | OptIn
    | Leave
    | Rename
    | SetTableVoting
    | StandIn
)



@dataclass(frozen=True, slots=True)
class Press:
    """What a channel said about a pressed button when it handed the press in (``Inbound.press``); the service
    gives it back on the answer to that press so the channel can show the choice on the pressed message."""

    ref: str
    """The channel's id of the message that was pressed; empty for a choice made on the seat's page in the
    channel's app (a Telegram Mini App), which the channel shows on the latest prompt of its chat."""
    text: str
    """That message's text as the channel shows it (to edit it without having remembered it)."""
    label: str
    """The pressed option's label."""
    protected: bool = False
    """The pressed message was sent protected (only such a message may have a secret written into it)."""


@dataclass(frozen=True, slots=True)
class Inbound:
    """One input from a person: who (channel and private address), what, and the channel's message id.

    ``external_id`` makes delivery idempotent: a repeated id is acknowledged and ignored. ``chat`` is the
    group the input was typed in, if any (the private address is always the person's own).
    """

    channel: str
    address: str
    command: Command
    external_id: str | None = None
    language: str | None = None
    chat: str | None = None
    raw: str = ""
    """The text as typed, quoted back when it cannot be understood."""
    press: Press | None = None
    """A pressed button, as the channel describes it: the answer shows the choice on the pressed message."""
    table: str | None = None
    """The table the input is about, when the channel knows it (a button carries it)."""
    overheard: bool = False
    """Typed in ``chat`` without being addressed to the channel's bot (no command): the table's own talk, which
    the service takes only if it shows a secret there (``Receipt.withdraw``)."""

