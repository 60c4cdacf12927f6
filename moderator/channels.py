"""The port between the table service and the channels: what goes out, what a channel can do, what comes back.

The service hands a channel frozen ``Outbound`` values, never dicts; each says what it is (``kind``), so a
channel folds and paces by kind and never by a catalog message id. A channel declares its ``Capabilities``
and the service and the renderer ask those, never the channel's name. A channel delivers with one
``send_batch`` call per address and answers each message with ``Delivered`` or a failure; the service's
``Sender`` records the answer. What a channel must remember between messages (which message shows a table's
board, what a text cost) comes back to it in the next ``Outbound`` or is kept by the service from the
``Delivered`` it returned: a channel never opens the store.

A channel module exports a ``ChannelSpec`` (``moderator.app.CHANNELS`` lists them); see docs/channels.md.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Final, Protocol, assert_never, runtime_checkable

from starlette.routing import BaseRoute

from .board import Board
from .catalog import DEFAULT_LANGUAGE, gsm7_language, to_gsm7
from .commands import Inbound, Press
from .settings import Settings


class Kind(StrEnum):
    """What an outgoing message is, as far as folding, pacing and editing in place are concerned."""

    PROMPT = "prompt"
    """Asks the recipient for a decision; its ``options`` are the answers."""
    ECHO = "echo"
    """Confirms the recipient's own choice (a vote, a discard, what an investigation showed them)."""
    CALL = "call"
    """Says who is to decide what now (a Presidential Candidate, a nomination); a prompt for that decision to the
    same recipient says it again."""
    RESULT = "result"
    """The outcome of an election: the vote's counter has said all it will."""
    END = "end"
    """A game's end: who won and why, or that the host ended it (a channel may point to the table's screen)."""
    COUNTER = "counter"
    """How far the open vote has come: any later message supersedes it."""
    LOBBY = "lobby"
    """The seat list while a table fills (one message a channel may edit in place); closed once the game starts."""
    JOIN = "join"
    """A table's join code, to show with the channel's way to join (a link, a QR code)."""
    BOARD = "board"
    """The board, for a channel that shows it as an image."""
    NOTE = "note"
    """Everything else: narration, replies, answers to questions."""
    ASIDE = "aside"
    """A public line that asks nobody for anything (the President passed two policies): nothing waits behind it, and
    in a paced chat it may wait ``Pacing.aside_patience`` seconds to go with the next message there."""

    @property
    def cosmetic(self) -> bool:
        """Shows again what a later message shows better (the counter, the board): it never holds back a later
        message to its address, and a later one may fold it away."""
        return self in (Kind.COUNTER, Kind.BOARD)


class WordStyle(StrEnum):
    """How a channel's people type a command word."""

    PLAIN = "plain"
    """``board``"""
    SLASH = "slash"
    """``/board`` (a chat's command menu)"""
    CAPITALS = "capitals"
    """``BOARD`` (a text message, where capitals read as a keyword)"""

    def write(self, word: str) -> str:
        """A word as this channel's people would type it."""
        match self:
            case WordStyle.SLASH:
                return "/" + word if word[:1].isalnum() else word
            case WordStyle.CAPITALS:
                return word.upper()
            case WordStyle.PLAIN:
                return word
            case _:
                assert_never(self)


@dataclass(frozen=True, slots=True)
class Pacing:
    """How fast a provider lets a channel write to one chat, which ``moderator.pacing.Pacer`` keeps to: a public
    chat (a group) gets a call every ``public_interval`` seconds and at most ``public_per_minute`` in any minute, a
    person's chat one every ``private_interval``."""

    public_interval: float
    public_per_minute: int
    private_interval: float
    cosmetic_reserve: int = 0
    """Calls of a public chat's minute that cosmetic messages (``Kind.cosmetic``) never take: free for results."""
    board_patience: float = 30.0
    """Seconds a changed board waits at most for a quiet moment in a busy public chat; then it goes before the
    next call (a fast table keeps the chat busy the whole game), never before a result or a note."""
    aside_patience: float = 0.0
    """Seconds an aside (``Kind.ASIDE``) waits at most in a chat for the next message there, to go as one message
    with it (the Chancellor quick to enact: one call for two lines, one buzz of each phone at a table without a
    group)."""
    counter_interval: float = 0.0
    """Seconds between two showings of a public chat's vote counter (it is folded, not shown on every vote)."""
    private_counter_interval: float = 0.0
    """The same in a person's chat."""


@dataclass(frozen=True, slots=True)
class Capabilities:
    """What a channel can do; the service and the renderer shape messages by these, never by a channel's name."""

    buttons: bool = True
    """The channel shows a prompt's options itself (buttons, a numbered list); False: the text must list them."""
    images: bool = False
    """A public chat of this channel shows the board as an image (``Kind.BOARD`` messages)."""
    text_limit: int | None = None
    """Every message must fit this many characters (one SMS); the renderer writes the short forms."""
    unicode_limit: int | None = None
    """With ``gsm7``: ``text_limit`` for a language GSM-7 cannot write (Russian, Persian), whose texts go as UCS-2
    (two segments); None: ``text_limit``."""
    gsm7: bool = False
    """Texts are cheapest in the GSM-7 alphabet: a language it writes (``catalog.gsm7_language``) is transliterated,
    names and quotes too; any other goes as it is, within ``unicode_limit``."""
    paid_per_message: bool = False
    """Each message costs money: no confirmations of a player's own choice, no vote counters, and the host may
    have public results go to their phone only."""
    toasts: bool = False
    """A press can be answered at once with a short notice (a refused press costs no message)."""
    reserved_words: frozenset[str] = frozenset()
    """Words the carrier keeps for itself (Twilio's STOP, HELP…): they are never commands, and help never names
    them."""
    word_style: WordStyle = field(default_factory=lambda: WordStyle.PLAIN)
    """How help writes a word for this channel's people to type."""
    typed: bool = False
    """People answer only by typing (an option's number or name): there is nothing to press."""
    public_first: bool = False
    """A public chat is paced slower than a person's: a table's later messages to its people on this channel
    wait until its public chat has had the earlier ones (a result before the prompt it leads to); cosmetic ones
    (``Kind.cosmetic``) hold back nothing."""
    forms: bool = False
    """People join and rename with a page's form, which stays in front of them: a refused name needs no word on
    what to type."""
    preview_lines: int = 1
    """Lines of a message a locked phone may show in its notification: a private message's neutral header takes
    that many lines (the header, then filler lines), so that its secret starts below what a lock screen shows."""
    verbs: frozenset[str] | None = None
    """The grammar's verbs (their ``[words]`` keys) a person at this channel is offered, and help names; None:
    every one (``grammar.offered``: the words about what texts cost only where each message is paid for)."""
    pacing: Pacing | None = None
    """The provider limits calls per chat (Telegram): the channel delivers through ``moderator.pacing.Pacer``,
    which keeps to these limits and puts a public chat's results before its cosmetic edits."""
    own_pace: bool = False
    """A person here plays alone with computer players, at their own pace (a terminal): the computers' votes wait
    for theirs however long, never only a pause (``Context.vote_pause``)."""

    def transliterates(self, language: str) -> bool:
        """True if a message in ``language`` reaches the person in GSM-7, transliterated (``to_gsm7``)."""
        return self.gsm7 and gsm7_language(language)

    def limit(self, language: str) -> int | None:
        """The characters one message in ``language`` may have (None: no limit)."""
        if self.text_limit is None or not self.gsm7 or gsm7_language(language):
            return self.text_limit
        return self.unicode_limit or self.text_limit

    def written(self, text: str, language: str) -> str:
        """A message's text as it reaches the person: transliterated where the language goes in GSM-7."""
        return to_gsm7(text) if self.transliterates(language) else text


@dataclass(frozen=True, slots=True)
class Option:
    """One answer to a prompt or one control: what it says and the token it sends back (``Choose``)."""

    label: str
    token: str


@dataclass(frozen=True, slots=True)
class Seating:
    """A lobby's seats in order, and the controls this recipient may use on them (the host's only)."""

    names: tuple[str, ...]
    controls: tuple[Option, ...] = ()
    """Move a seat up, add a computer player, start (tokens for ``commands.LobbyControl``)."""
    open: bool = True
    """False once the game has started: the list is final and its controls are gone."""


@dataclass(frozen=True, slots=True)
class Outbound:
    """One message for one address, as the service hands it to a channel."""

    kind: Kind
    text: str
    secret: bool = False
    """The text starts with a neutral line and then holds a secret (a role, cards, a result): keep it off a
    lock screen and away from other eyes."""
    options: tuple[Option, ...] = ()
    decision: int | None = None
    """The decision this message belongs to; a press of its options carries it (an older one is refused)."""
    table: str | None = None
    seating: Seating | None = None
    join_code: str | None = None
    shown_in: str | None = None
    """``Kind.JOIN``: the group chat that shows the code (None: the recipient's own chat)."""
    board: Board | None = None
    """``Kind.BOARD``: the public board to draw."""
    game: int = 0
    """``Kind.BOARD``: which game of the table the board is of."""
    edit: str | None = None
    """The channel's id of an earlier message this one replaces in place (the table's board), if any."""
    press: Press | None = None
    """``Kind.ECHO``: the press this answers, as the channel described it."""
    keep_options: bool = False
    """``Kind.ECHO``: the pressed message keeps its options (a vote can be changed until the last one is in)."""
    follows: str = ""
    """``Kind.ECHO``: the presser's next question, shown under the choice where they pressed (the President's
    ballot under the nomination); the echo's ``options`` and ``decision`` are that question's."""
    language: str = DEFAULT_LANGUAGE
    message_id: str = ""
    """The catalog id the text came from: for logs, tests and cost reports. Delivery never looks at it."""
    handed: float | None = None
    """When this message was handed to the channel before without its answer being recorded (a crash came
    between): it may have reached the person. A channel that can ask its provider checks; one that cannot says
    it is a repeat (``REPEAT_MESSAGE``). Never stored in the outbox's body."""

    def to_json(self) -> dict[str, Any]:
        """The message as the outbox stores it (only the fields that are set)."""
        out: dict[str, Any] = {"kind": self.kind.value, "text": self.text}
        if self.secret:
            out["secret"] = True
        if self.options:
            out["options"] = [[o.label, o.token] for o in self.options]
        for name in ("decision", "table", "join_code", "shown_in", "edit"):
            value = getattr(self, name)
            if value is not None:
                out[name] = value
        if self.seating is not None:
            out["seating"] = {
                "names": list(self.seating.names),
                "controls": [[o.label, o.token] for o in self.seating.controls],
                "open": self.seating.open,
            }
        if self.board is not None:
            out["board"] = self.board.to_json()
            out["game"] = self.game
        if self.press is not None:
            p = self.press
            out["press"] = {"ref": p.ref, "text": p.text, "label": p.label, "protected": p.protected}
        if self.keep_options:
            out["keep_options"] = True
        if self.follows:
            out["follows"] = self.follows
        if self.language != DEFAULT_LANGUAGE:
            out["language"] = self.language
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any], message_id: str = "") -> Outbound:
        """The message an outbox row holds (``to_json``'s shape)."""
        seating = data.get("seating")
        press = data.get("press")
        return cls(
            kind=Kind(data["kind"]),
            text=str(data.get("text", "")),
            secret=bool(data.get("secret", False)),
            options=tuple(Option(str(label), str(token)) for label, token in data.get("options", ())),
            decision=data.get("decision"),
            table=data.get("table"),
            seating=None if seating is None else Seating(
                tuple(seating["names"]),
                tuple(Option(str(label), str(token)) for label, token in seating.get("controls", ())),
                bool(seating.get("open", True)),
            ),
            join_code=data.get("join_code"),
            shown_in=data.get("shown_in"),
            board=Board.from_json(data["board"]) if "board" in data else None,
            game=int(data.get("game", 0)),
            edit=data.get("edit"),
            press=None if press is None else Press(str(press["ref"]), str(press["text"]), str(press["label"]),
                                                   bool(press.get("protected", False))),
            keep_options=bool(data.get("keep_options", False)),
            follows=str(data.get("follows", "")),
            language=str(data.get("language", DEFAULT_LANGUAGE)),
            message_id=message_id,
        )


# --- what comes back from a delivery -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Delivered:
    """The provider took the message. ``ref`` is its id for it (a Telegram message, a Twilio SID), ``units``
    what it cost (SMS segments; one text may carry several messages: the same ``ref`` on each), ``status`` the
    provider's first word on it."""

    ref: str | None = None
    units: int = 0
    status: str = ""


class TemporaryFailure(Exception):
    """The channel could not deliver now (rate limit, network); try again later."""

    def __init__(self, reason: str, retry_after: float | None = None, *, paced: bool = False) -> None:
        super().__init__(reason)
        self.retry_after = retry_after
        self.paced = paced
        """The channel held it back by its own pacing (never tried): it costs no attempt."""


class PermanentFailure(Exception):
    """The channel will never deliver this (blocked, opted out, unknown address)."""


class Unreachable(TemporaryFailure):
    """The channel's provider cannot be reached now (no network, a name that does not resolve, nobody listening):
    nothing was taken, and nothing else will be until it answers again. Answered (or raised) for a message, it
    costs no attempt and holds back the channel's other messages too, waiting longer each time; raised while the
    channel starts, the wiring starts it again later. Its text is one line for the log (never a key or an
    address)."""

    def __init__(self, provider: str, why: str, retry_after: float | None = None) -> None:
        super().__init__(f"{provider} cannot be reached ({why})", retry_after)
        self.provider = provider


class Refused(TemporaryFailure):
    """The channel's provider refuses its credentials (a token revoked or mistyped, a wrong account or key):
    nothing it does will work until the setting is changed and the command started again. Answered (or raised) for
    a message, or raised while the channel starts or runs its foreground, the wiring stops that channel, and what
    it had to send waits in the outbox for the next start; every other channel goes on. Its text is the one line
    the log shows: it names the setting, never its value ("Telegram refused TELEGRAM_TOKEN: check it with
    @BotFather")."""

    def __init__(self, provider: str, setting: str, hint: str) -> None:
        super().__init__(f"{provider} refused {setting}: {hint}")
        self.provider = provider
        self.setting = setting


Problem = Unreachable | Refused
"""What a channel reports of its provider as a whole (``Runtime.report``)."""
RETRY_FIRST: Final = 1.0
"""Seconds before a channel whose provider cannot be reached is tried again (started, asked, delivered through) the
first time; each try after waits twice as long as the one before, up to ``RETRY_MOST``."""
RETRY_MOST: Final = 30.0
"""The longest wait between two tries (a laptop whose Wi-Fi comes up is back within this)."""


class ChannelState(StrEnum):
    """How a channel that the settings turn on is doing (``/healthz`` names it for each)."""

    UP = "up"
    RETRYING = "retrying"
    """Its provider cannot be reached: the channel (or its start) is tried again, waiting longer each time."""
    REFUSED = "refused"
    """Its provider refused its credentials: it is off until they are changed and the command started again."""

    @classmethod
    def of(cls, problem: Problem | None) -> ChannelState:
        """The state a channel's report means."""
        match problem:
            case None:
                return cls.UP
            case Refused():
                return cls.REFUSED
            case Unreachable():
                return cls.RETRYING
            case _:
                assert_never(problem)


Result = Delivered | TemporaryFailure | PermanentFailure
"""A channel's answer for one message."""


REPEAT_MESSAGE: Final = "repeat-after-restart"
"""The catalog words a channel puts before a message it is given again (``Outbound.handed``) when it has no way
to know whether the first try reached the person: it reads as a repeat, not as a new event."""
NOT_STORED_MESSAGE: Final = "not-saved"
"""The catalog words a channel answers an input with that could not be stored (``NotStored``) when its provider
will not send it again by itself (Twilio does not retry a webhook): the person sends it again."""


class NotStored(Exception):
    """The input could not be stored (the database cannot be written): nothing of it happened, so the channel
    must not answer as if it had; its provider or person should send it again. ``said``: the log says it already
    (a full or read-only disk is said once, when it begins): the channel adds no line of its own."""

    def __init__(self, reason: str, *, said: bool = False) -> None:
        super().__init__(reason)
        self.said = said


class Channel(Protocol):
    """Delivers messages to one kind of address (a Telegram chat, a phone number, a terminal, a browser page)."""

    @property
    def capabilities(self) -> Capabilities:
        """What the channel can do."""
        ...


    def send_batch(self, address: str, messages: Sequence[Outbound]) -> Sequence[Result]:
        """Deliver everything due for one address, oldest first (it may fold them into fewer sends); one result
        per message, in order. A ``TemporaryFailure`` holds back the later messages to that address; an
        ``Unreachable`` or a ``Refused`` says it of the provider as a whole (every address of the channel waits)."""
        ...


@runtime_checkable
class Paced(Protocol):
    """A channel that paces its calls per address and must keep that pace across a restart (Telegram's 20 a
    minute in a group): the ``Sender`` stores what it takes and hands it back to the next process."""

    def pacing(self) -> Mapping[str, str]:
        """(Sender's thread.) The pace of every address that changed since the last call, as opaque text."""
        ...

    def recall(self, paces: Mapping[str, str]) -> None:
        """(Sender's thread, before the first delivery.) The paces last taken, by address."""
        ...


@dataclass(frozen=True, slots=True)
class JoinWay:
    """One way to take a seat with a join code: the channel's name for people, a link, and what the link says."""

    title: str
    link: str
    label: str


@dataclass(frozen=True, slots=True)
class Vouched:
    """A person a channel vouches for on a page (a Telegram Mini App's signed ``initData``): their address on that
    channel, and the language their app says they read."""

    channel: str
    address: str
    language: str | None = None


@dataclass(frozen=True, slots=True)
class Receipt:
    """What became of one input, for the channel that handed it in."""

    applied: bool = False
    """The game moved (a decision was taken)."""
    duplicate: bool = False
    """The input's id was seen before: nothing was done again."""
    notice: str | None = None
    """A short answer the channel may show at once instead of a message (``Capabilities.toasts``)."""
    tables: tuple[str, ...] = field(default=())
    """The tables the input touched."""
    withdraw: bool = False
    """The input showed a secret where others see it (a vote or an option's number typed in a group): it was not
    counted and its sender is answered privately; the channel takes it off the public chat where it can."""


@dataclass(frozen=True, slots=True)
class StatusScale:
    """How a channel's delivery statuses compare: later ones rank higher, final ones end the story, failed ones
    mean the message never reached its reader."""

    order: Mapping[str, int]
    final: frozenset[str]
    failed: frozenset[str]


class Port(Protocol):
    """The service as a channel sees it: where inputs go and reports come back."""

    def handle(self, inbound: Inbound) -> Receipt:
        """One input, in one transaction; what became of it. Raises ``NotStored`` if it could not be stored."""
        ...

    def unreachable(self, channel: str, address: str, *, undelivered: bool = False) -> None:
        """This address cannot be reached on this channel (blocked, opted out, undelivered)."""
        ...

    def unanswered(self, inbound: Inbound) -> None:
        """The input's answer at once (``Receipt.notice``) could not be shown (too late): the service decides what
        shows it instead, through the outbox."""
        ...

    def public_moved(self, channel: str, old: str, new: str) -> None:
        """A group chat got a new address."""
        ...

    def game_over(self, table_id: str) -> bool:
        """True if the table's game has ended (decided, or ended by the host)."""
        ...

    def delivery_report(self, channel: str, ref: str, status: str, error_code: str | None, scale: StatusScale) -> bool:
        """The provider says how far a message it took got; False if the message is not ours."""
        ...


# --- what browser pages show (the service builds these in ``moderator.pages``) ---------------------------------


class Status(StrEnum):
    """Where a table is, as a page shows it (``store.TableStatus``'s values)."""

    LOBBY = "lobby"
    PLAYING = "playing"
    PAUSED = "paused"
    OVER = "over"
    CLOSED = "closed"


@dataclass(frozen=True, slots=True)
class SeatInfo:
    """One seat: its place, name, and how it is reached."""

    position: int
    name: str
    channel: str
    address: str
    language: str
    computer: bool
    """A computer player decides for this seat (it may be standing in for its player)."""
    stand_in: bool = False
    """A computer player stands in for this seat's player, who is away; the seat can be given back."""


@dataclass(frozen=True, slots=True)
class TableView:
    """A table as a page needs to know it: who sits where, who hosts, where it is in its life."""

    id: str
    code: str | None
    status: Status
    theme: str
    language: str
    """The table's language (its public chat's, else its host's)."""
    host_channel: str
    host_address: str
    seats: tuple[SeatInfo, ...]
    group: bool
    """Results go to a group chat that a browser cannot read."""
    game: int
    board_version: str
    """Changes exactly when the board may look different (public facts only)."""

    def seat_of(self, channel: str, address: str) -> int | None:
        """The seat this address sits in, if any."""
        return next((s.position for s in self.seats if (s.channel, s.address) == (channel, address)), None)


@dataclass(frozen=True, slots=True)
class Line:
    """One message of a feed: its text, whether it is a secret, and its id (for covers that stay put)."""

    id: int
    text: str
    secret: bool = False
    cover: str = ""
    """A secret's topic, for the words on its cover (``web-cover-<cover>``: role, vote, cards, peek, …)."""


@dataclass(frozen=True, slots=True)
class PromptView:
    """The decision a seat owes: the question, its answers, and the decision they answer."""

    text: str
    secret: bool
    options: tuple[Option, ...]
    decision: int
    cover: str = ""
    """A secret question's topic, for the words on its cover (as ``Line.cover``)."""
    chosen: str | None = None
    """The label of the answer this seat gave already and may still change (a vote), else None."""
    waiting: bool = False
    """Answered already: the table waits on others, and the answer may still change."""
    cards: tuple[str, ...] = ()
    """The project's card each option shows on a page (``policy-liberal``, ``vote-ja``; ``""``: none), in order."""


@dataclass(frozen=True, slots=True)
class BoardView:
    """The public board in words (the image is fetched apart)."""

    lines: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class SeatView:
    """One seat's page: what it owes, what it knows, the board, the status, and its messages."""

    name: str
    in_game: bool
    prompt: PromptView | None = None
    owes_nothing: bool = False
    knowledge: tuple[str, ...] = ()
    status: tuple[str, ...] = ()
    board: BoardView | None = None
    latest: tuple[str, ...] | None = None
    """The latest public results, when they go to a group chat this browser cannot read."""
    seats: tuple[str, ...] = ()
    feed: tuple[Line, ...] = ()
    record_votes: tuple[str, ...] = ()
    """Votes are cast at the table and this seat, the President, records them: the names that voted."""
    language: str = DEFAULT_LANGUAGE
    """The seat's own language (it may set another)."""
    role: str = ""
    """This seat's own secret role, its rulebook key (liberal, fascist, hitler), for its card behind the cover."""


@dataclass(frozen=True, slots=True)
class Ballot:
    """One name's vote in a decided election (public once every vote is in)."""

    name: str
    ja: bool
    word: str
    """The catalog's word for it (Ja, Nein)."""


@dataclass(frozen=True, slots=True)
class RevealView:
    """The latest decided election, name by name: its outcome, its count and every ballot."""

    title: str
    elected: bool
    ballots: tuple[Ballot, ...]
    count: str = ""
    """The count in the table's words ("6 Ja, 4 Nein")."""
    result: str = ""
    """The id of the election's public result (``PublicResult.id``)."""


class ResultKind(StrEnum):
    """What a public result is about: the table screen keeps the latest of each kind until another replaces it."""

    ELECTION = "election"
    POLICY = "policy"
    POWER = "power"
    VETO = "veto"
    END = "end"


@dataclass(frozen=True, slots=True)
class PublicResult:
    """One public result of a game (an election, an enacted policy, a power used, chaos, a veto, the end), as the
    table is told it: its id (the same on every fetch, unique at its table, in the order things happened), what
    it is about, its words, and what players claimed with it (speech, never fact)."""

    id: str
    kind: ResultKind
    text: str
    claims: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ScreenSeat:
    """A seat as the table screen shows it at the end: its name, alive or not, and its role, now public."""

    name: str
    alive: bool
    role: str
    """The role's rulebook key (liberal, fascist, hitler)."""
    role_name: str
    """The role in the table's words."""


@dataclass(frozen=True, slots=True)
class ScreenView:
    """The table screen: public only."""

    lobby: bool
    seats: tuple[str, ...] = ()
    status: tuple[str, ...] = ()
    board: BoardView | None = None
    truth: tuple[str, ...] = ()
    results: tuple[PublicResult, ...] = ()
    """Every public result of the game so far, oldest first: each is read aloud once, by its id."""
    story: tuple[tuple[PublicResult, ...], ...] = ()
    """The latest results of each kind (an election's, a policy's, a power's, a veto's), a kind's results oldest
    first (a result and what followed from it: the tracker after a rejection, a power after a policy): they stay
    until a result of the same kind replaces them."""
    claims_header: str = ""
    """The words that set claims apart from results (players may lie)."""
    ending: tuple[PublicResult, ...] = ()
    """Once the game is over: the results of its last moment, the end's included (what ended it)."""
    waiting: str = ""
    """Who the table waits for, by name, and for what (empty once the game is over or paused)."""
    reveal: RevealView | None = None
    ended: str = ""
    """Who won and why, once the game is decided."""
    roles: tuple[ScreenSeat, ...] = ()
    """Every seat with its role, once the game is over."""


@dataclass(frozen=True, slots=True)
class PassName:
    """A seat on the host's device (pass-and-play), and whether it owes a decision now."""

    position: int
    name: str
    owes: bool


@dataclass(frozen=True, slots=True)
class HostView:
    """The host's device: the seats (lobby), the pass-and-play names, the board, replies to the host."""

    seats: tuple[SeatInfo, ...] = ()
    local: tuple[PassName, ...] = ()
    board: BoardView | None = None
    replies: tuple[str, ...] = field(default=())
    table_votes: bool = False
    """Votes are cast at the table and the President records them."""
    reminder_minutes: int = 0
    """Whoever owes a decision is reminded after this many minutes (0: never)."""
    moves: tuple[MoveCode, ...] = ()
    """One-time codes the host asked for, to move a seat to a new device."""
    free_seats: int = 0
    """Seats still free in the lobby (for computer players)."""
    controls: tuple[str, ...] = ()
    """The host's controls of the game that the table takes in its status (``commands.HostCommand`` values: pause,
    nudge, end; resume; rematch), in the order a page offers them: the service refuses the others."""
    seat_controls: bool = False
    """A computer player may stand in for a seat and a seat may move to a new device: a game is under way."""
    status: tuple[str, ...] = ()
    """A paused game, or one that is over: who won and why (or that the host ended it, and every role)."""


@dataclass(frozen=True, slots=True)
class Limits:
    """What the service holds every table's inputs to, whatever the channel: a page's forms say the same."""

    min_players: int
    max_players: int
    """A game has this many players (the rulebook's 5 to 10)."""
    name_length: int
    """A name is cut to this many characters."""
    claim_length: int
    """What a player claims is read up to this many characters."""


@dataclass(frozen=True, slots=True)
class MoveCode:
    """A seat's one-time code for taking it over from a new device."""

    name: str
    code: str


class Pages(Protocol):
    """The service as the browser channel's pages see it."""

    def handle(self, inbound: Inbound) -> Receipt:
        """One input, in one transaction; what became of it."""
        ...

    def table_info(self, table_id: str) -> TableView | None:
        """A table by its id (None: no such table, or it is closed)."""
        ...

    def table_by_code(self, code: str) -> TableView | None:
        """A table by its join code."""
        ...

    def table_by_move_code(self, code: str) -> TableView | None:
        """The table that gave out this one-time code for moving a seat to a new device."""
        ...

    def join_attempt(self, client: str, known: bool) -> float:
        """A try with a join code from ``client`` (a browser's network address, as ``guard.rate_key`` writes it),
        under the service's guessing rule: 0 to answer it as usual (an unknown code uses one of the client's
        tries), else the seconds until it may try again, and then the answer must not depend on ``known``."""
        ...

    def cookie_key(self) -> bytes:
        """The key the browser channel signs its cookies' values with: made from the server's secret, the same
        on every run of one database, never to be shown, logged or sent."""
        ...

    def seat_view(self, table_id: str, position: int, language: str) -> SeatView:
        """What one seat's page shows."""
        ...

    def screen_view(self, table_id: str, language: str) -> ScreenView:
        """What the table screen shows."""
        ...

    def host_view(self, table_id: str, language: str, local: Sequence[int]) -> HostView:
        """What the host's device shows (``local``: the seats on that device)."""
        ...

    def feed(self, channel: str, address: str, limit: int, *, this_game: bool, table_id: str) -> list[Line]:
        """The newest messages queued for an address (not prompts), oldest first; ``this_game``: since the table's
        game started."""
        ...

    def watch(self, observer: Callable[[str], None]) -> None:
        """Call ``observer`` with a table's id whenever a change to it is committed (from any channel)."""
        ...

    def board(self, table_id: str) -> Board | None:
        """The public board of the table's game, to draw (``board.render_png``); None before a game."""
        ...

    def limits(self) -> Limits:
        """The numbers every table's inputs are held to (players, a name's and a claim's length)."""
        ...


# --- what a channel module exports ------------------------------------------------------------------------------


class Delivery(Protocol):
    """A channel's outbox being delivered in the background (``Runtime.delivery``)."""

    async def deliver(self) -> int:
        """Deliver what is due now; returns how many messages went out."""
        ...

    def kick(self) -> None:
        """Something was queued: deliver it now rather than at the next round."""
        ...


class Runtime(Protocol):
    """What the wiring (``moderator.app``) offers a channel while it runs."""

    @property
    def port(self) -> Port:
        """The service: where inputs go."""
        ...

    def clock(self) -> float:
        """The time now, as the service and delivery count it (a channel paces by it)."""
        ...

    def delivery(self, name: str, channel: Channel, *,
                 after_round: Callable[[], Awaitable[int]] | None = None, inline: bool = False) -> Delivery:
        """Start delivering this channel's outbox on a thread of its own (stopped with the runtime);
        ``after_round`` runs on the event loop after each round (a channel's reports). ``inline``: nothing runs in
        the background; ``kick`` delivers everything due, on the caller's thread, before it returns (a terminal
        that shows what an input caused before it reads the next line)."""
        ...

    def join_ways(self, code: str) -> list[JoinWay]:
        """Every way to take a seat with this join code, on every channel that is on."""
        ...

    def network(self, name: str) -> Any:
        """What stands in for a channel's network in a test (a fake Bot API, a fake Twilio HTTP client), or
        None: the real one."""
        ...

    def report(self, name: str, problem: Problem | None) -> None:
        """(On the loop.) How the channel finds its provider now, from what it does by itself (long polling): an
        ``Unreachable`` (it tries again by itself, waiting longer each time), None (it answers again), or a
        ``Refused`` (the wiring stops the channel). The wiring keeps the channel's state and logs each change in
        one line."""
        ...

    def screen_url(self, table_id: str) -> str | None:
        """The address of a table's screen, if the browser channel is on and reachable."""
        ...

    def app_url(self, table_id: str) -> str | None:
        """The address of a seat's page at the table as a messenger opens it inside its app (a Telegram Mini App),
        if the browser channel is on and the server has a public ``https`` address (apps open nothing else); the
        address holds no secret: the app vouches for whose seat it is (``vouch``)."""
        ...

    def vouch(self, signed: str) -> Vouched | None:
        """The person a running channel's app vouches for with ``signed`` (a Telegram Mini App's ``initData``:
        checked against the channel's key), or None: no channel signed it, or not lately."""
        ...

    @property
    def pages(self) -> Pages:
        """What browser pages show, from the service."""
        ...


@dataclass(frozen=True, slots=True)
class Running:
    """A started channel: what its routes need (``state``), its ways to join, and what it runs in the foreground."""

    state: Any = None
    join_ways: Callable[[str], list[JoinWay]] = field(default=lambda code: [])
    main: Callable[[], Awaitable[object]] | None = None
    """Run once every channel has started and the tables are resumed: how the channel gets its inputs when no web
    server brings them (Telegram's long polling, a game at the terminal). A command without a web server ends
    when it ends; the channel's context ends it otherwise (it is cancelled first). A ``Refused`` it raises stops
    the channel alone."""
    vouch: Callable[[str], Vouched | None] | None = None
    """For a channel whose app opens a seat's page with the person signed by the provider (a Telegram Mini App):
    who ``signed`` stands for, or None if the signature is not the channel's, is stale, or names nobody."""
    check: Callable[[], Awaitable[None]] | None = None
    """For a channel that starts without reaching its provider (its webhooks take inputs while the provider is away):
    asks the provider whether it takes the channel's credentials, raising ``Refused`` (the wiring stops the
    channel) or ``Unreachable`` (the channel stays on, reported retrying, and is asked again, waiting longer each
    time, until it answers)."""


class ChannelSpec(Protocol):
    """What one channel module exports, listed once in ``moderator.app.CHANNELS``: its name, what it can do, its
    settings, its web routes and its start-up."""

    @property
    def name(self) -> str: ...

    @property
    def capabilities(self) -> Capabilities: ...

    def off(self, settings: Settings) -> str | None:
        """Why the channel stays off with these settings (a line for the log), or None: it is on."""
        ...

    def routes(self, settings: Settings) -> Sequence[BaseRoute]:
        """Its routes in the web server (its webhooks, its pages); they find it in ``app.state.channels``."""
        ...

    def webhooks(self, settings: Settings) -> Mapping[str, int]:
        """Which of its paths a provider calls rather than a browser (a signed webhook, checked by the route), each
        with the most bytes of body it may carry: these need no ``Origin``, are never refused for load, and get
        their own body limit (every other path: 16 KB). Empty for a channel of pages only."""
        ...

    def start(self, settings: Settings, runtime: Runtime) -> AbstractAsyncContextManager[Running]:
        """Run while the context is open (the web server's lifespan, or the command's run without one:
        ``Settings.server``). Entering it raises ``Refused`` if the provider refuses the channel's credentials
        (the channel stays off, the others start) and ``Unreachable`` if it cannot be reached (the wiring enters it
        again later, waiting longer each time); it leaves nothing running behind either."""
        ...
