"""The only place the game becomes words: events, prompts, views and errors into catalog messages.

Who gets what (the service delivers, transports only format):

* A **public event** renders to the same messages for the public channel (``recipient=None``) and for every
  seat, so a table without a shared screen misses nothing; the service may skip seats that also watch a
  public channel.
* A **private event** renders only for the seat in its audience (asserted); for the public channel it renders
  to nothing. Events shown to nobody (``DrawPileShuffled``) render to nothing.
* **Events narrate, prompts ask.** ``PoliciesDrawn`` and ``PoliciesReceived`` render to nothing because the
  seat's next ``prompt`` shows the same cards together with the choices: one message per hand.
* Every message that carries a secret (a role, a card, an investigation or peek result, a vote before the
  reveal) has ``secret=True`` and starts with the neutral ``private-header`` line.
* A channel's ``Capabilities`` shape the words, never its name. With a ``text_limit`` (one SMS) the catalog's
  short variants are used, names are cut to ``SMS_NAME_LENGTH`` characters, a prompt's numbered options are
  written into its text, every message fits the limit, and the truth timeline becomes one line pointing to
  the table screen and the game record; with ``gsm7`` a language GSM-7 writes is transliterated (names and quotes
  too), and any other fits ``unicode_limit`` (``Capabilities.limit``); a channel that is
  ``paid_per_message`` gets no confirmations of the player's own choice (votes) and no vote counter.
* Every ``Message`` says what it is (``channels.Kind``): channels fold and pace by kind.
* A name written in another direction than its sentence's language (a Persian name in English, a Latin one in
  Persian) is isolated (FSI ... PDI), so that it and the words and numbers around it keep their places.

The deal: every seat's ``RoleDealt`` renders to exactly one message with the same first line, the same number
of lines and the same length, whatever the role. The body is padded with a closing line of dashes up to
``deal_length``, a bound computed from public facts only (the names at the table and the player count).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cached_property
from typing import Any, Final, TypeVar, assert_never

from .catalog import DEFAULT_THEME, SMS_LIMIT, Catalog, direction, isolated, to_gsm7
from .channels import Capabilities, Kind
from .claims import Accusation, Claim, Clearance, InvestigationClaim, Office, PeekClaim, SessionClaim
from .engine import (
    Action,
    Event,
    Party,
    Phase,
    PlayerView,
    Policy,
    PublicView,
    Role,
    RuleViolation,
    Seat,
    WinReason,
    power_for,
)
from .engine.events import (
    ChancellorNominated,
    ChancellorNotHitler,
    DeckReshuffled,
    DrawPileShuffled,
    ElectionDecided,
    ElectionTrackerAdvanced,
    GameEnded,
    GameStarted,
    LegislativeSessionStarted,
    LoyaltyInvestigated,
    PartyMembershipSeen,
    PlayerExecuted,
    PoliciesDrawn,
    PoliciesHandedOver,
    PoliciesReceived,
    PolicyDiscarded,
    PolicyEnacted,
    PolicyPeekUsed,
    PresidentialCandidateChosen,
    PresidentialPowerGranted,
    RoleDealt,
    SpecialElectionCalled,
    TermLimitsCleared,
    TopPoliciesSeen,
    VetoAnswered,
    VetoProposed,
    VetoUnlocked,
    VoteCast,
    VoteProgressed,
)
from .engine.types import CHAOS_AT, FASCIST_TRACK, FEW_ALIVE, ROLE_COUNTS
from .grammar import RULES, Args, Verb, Who, grammar, offered
from .moves import MoveKind, move

PREVIEW_FILLER: Final = "."
"""A line that says nothing, below a private message's header (a sign, the same in every language)."""
SMS_NAME_LENGTH: Final = 10
"""SMS shows at most this many characters of a name, so that lists of ten names fit one SMS."""
UNICODE_NAME_LENGTH: Final = 7
"""An SMS in another alphabet than GSM-7 (UCS-2: at most two segments, 134 characters) shows at most this many
characters of a name, so that a list of ten fits one text, each isolated where it runs the other way."""
DEAL_PAD: Final = "-"
"""The character that fills every deal message up to the common length."""
DEAL_MIN_PAD: Final = 3
"""The closing line of every deal message has at least this many pad characters, so it always exists."""


PLAIN: Final = Capabilities()
"""A channel with no limits: the long forms, every confirmation."""


@dataclass(frozen=True, slots=True)
class Choice:
    """One option of a prompt: what the button or numbered option says, and the action it takes."""

    label: str
    action: Action


@dataclass(frozen=True, slots=True)
class Message:
    """Text for one recipient: its catalog id, the words, whether it holds a secret, its options, and its kind."""

    message_id: str
    text: str
    secret: bool
    choices: tuple[Choice, ...] = ()
    kind: Kind = Kind.NOTE


@dataclass(frozen=True)
class TableInfo:
    """What rendering needs to know about a table: the players' names by seat, and its theme."""

    names: tuple[str, ...]
    theme: str = DEFAULT_THEME
    table_votes: bool = False
    """Votes at the table (with cards): where every text costs, a nomination rides with its election's result."""
    computers_wait: bool = False
    """The computer players vote once the people have (or after a pause): the board says so."""
    computers: frozenset[Seat] = frozenset()
    """Seats computer players play: when only they are still to vote, they vote at once."""

    @cached_property
    def short_names(self) -> tuple[str, ...]:
        """Names as a short message in GSM-7 shows them: transliterated, at most ``SMS_NAME_LENGTH`` characters,
        still distinct."""
        return _shortened([to_gsm7(n) for n in self.names], SMS_NAME_LENGTH)

    @cached_property
    def short_unicode_names(self) -> tuple[str, ...]:
        """Names as a short message in another alphabet (UCS-2) shows them: as written, at most
        ``UNICODE_NAME_LENGTH`` characters, still distinct."""
        return _shortened(list(self.names), UNICODE_NAME_LENGTH)

    def name(self, seat: Seat, *, short: bool = False, gsm7: bool = True) -> str:
        """A seat's name as shown on a channel (``short``: one whose messages have a text limit; ``gsm7``: whose
        text is transliterated)."""
        if not short:
            return self.names[seat]
        return self.short_names[seat] if gsm7 else self.short_unicode_names[seat]


def _shortened(names: Sequence[str], length: int) -> tuple[str, ...]:
    """Names cut to ``length`` characters; cut names that collide (or vanish) get their seat number, so lists stay
    unambiguous."""
    short = [n.strip()[:length].rstrip() for n in names]  # "Anneliese", not "Anneliese "
    out: list[str] = []
    for seat, name in enumerate(short):
        if not name or short.count(name) > 1:
            tag = f"#{seat + 1}"
            name = name[: length - len(tag)] + tag
        out.append(name)
    return tuple(out)


class InputProblem(StrEnum):
    """Why the service could not use a player's input; the values are catalog message ids."""

    UNPARSEABLE = "input-unparseable"
    AMBIGUOUS = "input-ambiguous"
    STALE = "input-stale"
    NOTHING_OWED = "input-nothing-owed"
    NO_SUCH_OPTION = "input-no-such-option"
    """A number the prompt has no option for (the prompt is shown again where there are no buttons)."""
    NO_SUCH_PLAYER = "input-no-such-player"
    """A name no player has (``accuse Zorro``); ``options`` are the players' names."""


# --- words for the engine's values ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Words:
    """A catalog, a table and a channel: turns seats, cards and roles into the right words."""

    table: TableInfo
    catalog: Catalog
    caps: Capabilities

    @property
    def compact(self) -> bool:
        """Every message must fit the channel's text limit: the catalog's short forms, short names."""
        return self.caps.text_limit is not None

    @property
    def limit(self) -> int | None:
        """The characters a message in this catalog's language may have on this channel (None: any)."""
        return self.caps.limit(self.catalog.lang)

    def sent(self, text: str) -> str:
        """A text as it reaches the person (transliterated where the language goes in GSM-7)."""
        return self.caps.written(text, self.catalog.lang)

    def t(self, message_id: str, **params: object) -> str:
        """One catalog text, in this channel's variant."""
        return self.catalog.text(message_id, sms=self.compact, **params)

    def _shown(self, seat: Seat) -> str:
        return self.table.name(seat, short=self.compact, gsm7=self.caps.transliterates(self.catalog.lang))

    def name(self, seat: Seat) -> str:
        """A seat's name for this channel and language, isolated where it runs the other way than the sentence."""
        return isolated(self._shown(seat), self.catalog.right_to_left)

    def names(self, seats: Iterable[Seat]) -> str:
        """A list of names, or the catalog's word for nobody. Each name runs its own way; in a short message, a list
        whose every name runs the other way is isolated once, as a whole (ten isolates do not fit one SMS)."""
        shown = [self._shown(s) for s in seats]
        if not shown:
            return self.t("list-nobody")
        rtl = self.catalog.right_to_left
        if self.compact and all(direction(n) != ("rtl" if rtl else "ltr") for n in shown):
            return isolated(self.catalog.list_separator.join(shown), rtl)
        return self.catalog.list_separator.join(isolated(n, rtl) for n in shown)

    def card(self, policy: Policy) -> str:
        return self.catalog.term("liberal_card" if policy is Policy.LIBERAL else "fascist_card")

    def cards(self, policies: Iterable[Policy]) -> str:
        """Cards in the order given (a hand, a peek): the order is the rules' information, keep it."""
        return self.catalog.list_separator.join(self.card(p) for p in policies)

    def policy(self, policy: Policy) -> str:
        return self.catalog.term("liberal_policy" if policy is Policy.LIBERAL else "fascist_policy")

    def role(self, role: Role) -> str:
        return self.catalog.term(role.value)

    def party(self, party: Party) -> str:
        return self.catalog.term("liberal_party" if party is Party.LIBERAL else "fascist_party")

    def team(self, party: Party) -> str:
        return self.catalog.term("liberals" if party is Party.LIBERAL else "fascists")

    def vote(self, ja: bool) -> str:
        return self.catalog.term("ja" if ja else "nein")

    def phase(self, phase: Phase | None) -> str:
        return self.t("phase-unknown" if phase is None else "phase-" + phase.value.replace("_", "-"))

    def join(self, parts: Sequence[str]) -> str:
        return "\n".join(parts)

    def message(
        self, message_id: str, parts: Sequence[str], *, secret: bool = False, choices: tuple[Choice, ...] = (),
        kind: Kind = Kind.NOTE,
    ) -> Message:
        """Parts as lines; a secret message gets the neutral header line first."""
        body = self.join(parts)
        if secret:
            body = self.header() + "\n" + body
        return Message(message_id, body, secret, choices, kind)

    def header(self) -> str:
        """A private message's neutral first lines: the header, then filler up to the channel's preview lines."""
        return self.join([self.t("private-header"), *[PREVIEW_FILLER] * (self.caps.preview_lines - 1)])

    def packed(self, message_id: str, lines: Sequence[str], *, secret: bool) -> list[Message]:
        """One message in long form; with a text limit, as few messages within it as the lines allow."""
        limit = self.limit
        if limit is None:
            return [self.message(message_id, lines, secret=secret)]
        header = self.header() + "\n" if secret else ""
        chunks: list[list[str]] = [[]]
        for line in lines:
            candidate = header + self.join(chunks[-1] + [line])
            if chunks[-1] and len(self.sent(candidate)) > limit:
                chunks.append([])
            chunks[-1].append(line)
        return [self.message(message_id, chunk, secret=secret) for chunk in chunks]


# --- events ---------------------------------------------------------------------------------------------

_Renderer = Callable[[Event, _Words, "PublicView | None"], list[Message]]
_RENDERERS: dict[type[Event], _Renderer] = {}


def _renders(cls: type[Event]) -> Callable[[_Renderer], _Renderer]:
    def register(fn: _Renderer) -> _Renderer:
        _RENDERERS[cls] = fn
        return fn

    return register


def event_messages(
    event: Event,
    recipient: Seat | None,
    table: TableInfo,
    catalog: Catalog,
    *,
    caps: Capabilities = PLAIN,
    board: PublicView | None = None,
) -> list[Message]:
    """What ``recipient`` (a seat, or None for the public channel) is told about ``event``.

    ``board`` is the public view after the batch the event belongs to; with it, an execution also says "X was
    not Hitler" when the game goes on, and announces the five-alive term limit when it starts to apply.
    """
    audience = event.audience
    if recipient is None:
        if not audience.everyone:
            return []
    else:
        assert audience.includes(recipient), f"seat {recipient} may not see {event.kind}"
    renderer = _RENDERERS[type(event)]
    return renderer(event, _Words(table, catalog, caps), board)


def batch_messages(
    events: Iterable[Event],
    recipient: Seat | None,
    table: TableInfo,
    catalog: Catalog,
    *,
    board: PublicView,
    caps: Capabilities = PLAIN,
) -> list[Message]:
    """Everything ``recipient`` is told about one batch of events (as ``apply`` returns them), in order."""
    out: list[Message] = []
    for event in events:
        if recipient is None or event.audience.includes(recipient):
            out.extend(event_messages(event, recipient, table, catalog, caps=caps, board=board))
    return out


def covered_events() -> frozenset[type[Event]]:
    """Every event class ``event_messages`` knows how to render (a test checks it is every event)."""
    return frozenset(_RENDERERS)


@_renders(GameStarted)
def _game_started(e: Event, w: _Words, board: PublicView | None) -> list[Message]:
    assert isinstance(e, GameStarted)
    parts = [w.t("game-started", players=e.players, seating=w.names(range(e.players)))]
    if not w.compact:
        parts.append(w.t(_knowledge_rule_id(e.players)))
    # Where every text costs, the deal that comes in the same moment says the game has started.
    out = [] if w.caps.paid_per_message else [w.message("game-started", parts)]
    if e.players <= FEW_ALIVE:
        out.append(w.message("note-five-alive", [w.t("note-five-alive")]))
    return out


@_renders(RoleDealt)
def _role_dealt(e: Event, w: _Words, board: PublicView | None) -> list[Message]:
    assert isinstance(e, RoleDealt)
    return [_deal_message(w, e.role, e.known, len(w.table.names))]


@_renders(PresidentialCandidateChosen)
def _candidate(e: Event, w: _Words, board: PublicView | None) -> list[Message]:
    assert isinstance(e, PresidentialCandidateChosen)
    mid = "presidential-candidate-special" if e.special_election else "presidential-candidate"
    return [w.message(mid, [w.t(mid, president=w.name(e.president))], kind=Kind.CALL)]


@_renders(ChancellorNominated)
def _nominated(e: Event, w: _Words, board: PublicView | None) -> list[Message]:
    assert isinstance(e, ChancellorNominated)
    if w.table.table_votes and w.caps.paid_per_message:
        return []  # the table hears it said; the result names the government (one text per election)
    text = w.t("chancellor-nominated", president=w.name(e.president), chancellor=w.name(e.chancellor))
    return [w.message("chancellor-nominated", [text], kind=Kind.CALL)]


@_renders(VoteCast)
def _vote_cast(e: Event, w: _Words, board: PublicView | None) -> list[Message]:
    assert isinstance(e, VoteCast)
    if w.caps.paid_per_message:
        return []  # every message costs: a reply that is not understood gets an answer, silence means it worked
    mid = "vote-changed" if e.changed else "vote-recorded"
    if board is not None and (board.phase is not Phase.ELECTION
                              or (bool(board.not_voted) and set(board.not_voted) <= w.table.computers)):
        # The last vote was in, or the last vote of a person (the computer players' follow at once): nothing can be
        # changed any more.
        mid = "vote-recorded-last"
    # A vote is secret until the last one is in: keep it off the lock screen.
    return [w.message(mid, [w.t(mid, vote=w.vote(e.ja))], secret=True, kind=Kind.ECHO)]


@_renders(VoteProgressed)
def _vote_progress(e: Event, w: _Words, board: PublicView | None) -> list[Message]:
    assert isinstance(e, VoteProgressed)
    if w.caps.paid_per_message:
        return []  # a counter a group chat edits in place; paid per message, it would buzz every phone at every vote
    text = w.t("vote-progress", cast=e.votes_cast, voters=e.voters)
    return [w.message("vote-progress", [text], kind=Kind.COUNTER)]


@_renders(ElectionDecided)
def _election(e: Event, w: _Words, board: PublicView | None) -> list[Message]:
    assert isinstance(e, ElectionDecided)
    mid = "election-elected" if e.elected else "election-rejected"
    ja = [seat for seat, vote in e.votes if vote]
    nein = [seat for seat, vote in e.votes if not vote]
    text = w.t(
        mid,
        president=w.name(e.president),
        chancellor=w.name(e.chancellor),
        ja=len(ja),
        nein=len(nein),
        votes=w.catalog.list_separator.join(f"{w.name(seat)}: {w.vote(vote)}" for seat, vote in e.votes),
        ja_voters=w.names(ja),
        nein_voters=w.names(nein),
    )
    lines = [text]
    if not e.elected and len(ja) == len(nein) and not w.compact:
        lines.append(w.t("election-tie"))  # a surprise to many tables: a government needs a majority
    if w.table.table_votes and w.caps.paid_per_message:
        # The nomination was not texted on its own: the result names the government (a line of its own only
        # where one line cannot hold both).
        government = {"president": w.name(e.president), "chancellor": w.name(e.chancellor)}
        named = w.t(mid + "-named", ja=len(ja), nein=len(nein), ja_voters=w.names(ja), nein_voters=w.names(nein),
                    **government)
        if w.limit is None or len(w.sent(w.join([named, *lines[1:]]))) <= w.limit:
            return [w.message(mid, [named, *lines[1:]], kind=Kind.RESULT)]
        nominated = w.t("government-nominated", **government)
        return [w.message("government-nominated", [nominated], kind=Kind.RESULT),
                w.message(mid, lines, kind=Kind.RESULT)]
    return [w.message(mid, lines, kind=Kind.RESULT)]


@_renders(ElectionTrackerAdvanced)
def _tracker(e: Event, w: _Words, board: PublicView | None) -> list[Message]:
    assert isinstance(e, ElectionTrackerAdvanced)
    if e.election_tracker >= CHAOS_AT:
        return [w.message("election-tracker-chaos", [w.t("election-tracker-chaos")])]
    text = w.t("election-tracker-advanced", count=e.election_tracker)
    return [w.message("election-tracker-advanced", [text])]


@_renders(ChancellorNotHitler)
def _not_hitler(e: Event, w: _Words, board: PublicView | None) -> list[Message]:
    assert isinstance(e, ChancellorNotHitler)
    return [
        w.message("chancellor-not-hitler", [w.t("chancellor-not-hitler", chancellor=w.name(e.chancellor))])
    ]


@_renders(TermLimitsCleared)
def _limits_cleared(e: Event, w: _Words, board: PublicView | None) -> list[Message]:
    return [w.message("term-limits-cleared", [w.t("term-limits-cleared")])]


@_renders(LegislativeSessionStarted)
def _session(e: Event, w: _Words, board: PublicView | None) -> list[Message]:
    assert isinstance(e, LegislativeSessionStarted)
    mid = "session-started-veto" if e.veto_unlocked else "session-started"
    return [w.message(mid, [w.t(mid, president=w.name(e.president), chancellor=w.name(e.chancellor))])]


@_renders(PoliciesDrawn)
@_renders(PoliciesReceived)
def _shown_by_prompt(e: Event, w: _Words, board: PublicView | None) -> list[Message]:
    # The seat's prompt shows these cards with the choices, in one message; saying it twice buzzes twice.
    return []


@_renders(PolicyDiscarded)
def _discarded(e: Event, w: _Words, board: PublicView | None) -> list[Message]:
    assert isinstance(e, PolicyDiscarded)
    if w.caps.paid_per_message:
        return []  # the player just chose it, and every message costs
    if board is not None and board.phase is not Phase.LEGISLATIVE_CHANCELLOR:
        return []  # the Chancellor's other card: enacting one says it (the echo would name the card not chosen)

    text = w.t("policy-discarded", card=w.card(e.policy))
    return [w.message("policy-discarded", [text], secret=True, kind=Kind.ECHO)]


@_renders(PoliciesHandedOver)
def _handed_over(e: Event, w: _Words, board: PublicView | None) -> list[Message]:
    assert isinstance(e, PoliciesHandedOver)
    if w.caps.paid_per_message:
        return []  # the Chancellor's prompt says it, and every message costs
    text = w.t("policies-handed-over", president=w.name(e.president), chancellor=w.name(e.chancellor))
    return [w.message("policies-handed-over", [text], kind=Kind.ASIDE)]


@_renders(VetoProposed)
def _veto_proposed(e: Event, w: _Words, board: PublicView | None) -> list[Message]:
    assert isinstance(e, VetoProposed)
    return [w.message("veto-proposed", [w.t("veto-proposed", chancellor=w.name(e.chancellor))])]


@_renders(VetoAnswered)
def _veto_answered(e: Event, w: _Words, board: PublicView | None) -> list[Message]:
    assert isinstance(e, VetoAnswered)
    mid = "veto-accepted" if e.accepted else "veto-refused"
    return [w.message(mid, [w.t(mid, president=w.name(e.president))])]


@_renders(PolicyEnacted)
def _enacted(e: Event, w: _Words, board: PublicView | None) -> list[Message]:
    assert isinstance(e, PolicyEnacted)
    mid = "policy-enacted-chaos" if e.by_chaos else "policy-enacted"
    text = w.t(mid, policy=w.policy(e.policy), liberal=e.liberal_policies, fascist=e.fascist_policies)
    return [w.message(mid, [text])]


@_renders(VetoUnlocked)
def _veto_unlocked(e: Event, w: _Words, board: PublicView | None) -> list[Message]:
    return [w.message("veto-unlocked", [w.t("veto-unlocked")])]


@_renders(DeckReshuffled)
def _reshuffled(e: Event, w: _Words, board: PublicView | None) -> list[Message]:
    assert isinstance(e, DeckReshuffled)
    return [w.message("deck-reshuffled", [w.t("deck-reshuffled", count=e.draw_pile)])]


@_renders(DrawPileShuffled)
def _shuffled(e: Event, w: _Words, board: PublicView | None) -> list[Message]:
    # The audience is nobody: event_messages never gets here for a seat, and the public channel is not told.
    return []


@_renders(PresidentialPowerGranted)
def _power(e: Event, w: _Words, board: PublicView | None) -> list[Message]:
    assert isinstance(e, PresidentialPowerGranted)
    mid = "power-" + e.power.value.replace("_", "-")
    return [w.message(mid, [w.t(mid, president=w.name(e.president))])]


@_renders(LoyaltyInvestigated)
def _investigated(e: Event, w: _Words, board: PublicView | None) -> list[Message]:
    assert isinstance(e, LoyaltyInvestigated)
    text = w.t("loyalty-investigated", president=w.name(e.president), target=w.name(e.target))
    return [w.message("loyalty-investigated", [text])]


@_renders(PartyMembershipSeen)
def _membership(e: Event, w: _Words, board: PublicView | None) -> list[Message]:
    assert isinstance(e, PartyMembershipSeen)
    text = w.t("party-membership-seen", target=w.name(e.target), party=w.party(e.party))
    return [w.message("party-membership-seen", [text], secret=True, kind=Kind.ECHO)]


@_renders(SpecialElectionCalled)
def _special(e: Event, w: _Words, board: PublicView | None) -> list[Message]:
    assert isinstance(e, SpecialElectionCalled)
    text = w.t("special-election-called", president=w.name(e.president), target=w.name(e.target))
    lines = [text]
    if board is not None and not w.compact and _next_alive(board.alive, e.president) == e.target:
        # Legal and surprising: the next in line is chosen, presides now and again in the ordinary order.
        lines.append(w.t("special-election-next", president=w.name(e.president), target=w.name(e.target)))
    return [w.message("special-election-called", lines)]


def _next_alive(alive: Sequence[bool], seat: Seat) -> Seat:
    """The living seat after ``seat`` in seating order (who the presidency would pass to)."""
    players = len(alive)
    return next((seat + i) % players for i in range(1, players + 1) if alive[(seat + i) % players])


@_renders(PolicyPeekUsed)
def _peek_used(e: Event, w: _Words, board: PublicView | None) -> list[Message]:
    assert isinstance(e, PolicyPeekUsed)
    return [w.message("policy-peek-used", [w.t("policy-peek-used", president=w.name(e.president))])]


@_renders(TopPoliciesSeen)
def _top_seen(e: Event, w: _Words, board: PublicView | None) -> list[Message]:
    assert isinstance(e, TopPoliciesSeen)
    return [
        w.message("top-policies-seen", [w.t("top-policies-seen", cards=w.cards(e.policies))], secret=True)
    ]


@_renders(PlayerExecuted)
def _executed(e: Event, w: _Words, board: PublicView | None) -> list[Message]:
    assert isinstance(e, PlayerExecuted)
    target = w.name(e.target)
    out = [
        w.message("player-executed", [w.t("player-executed", president=w.name(e.president), target=target)])
    ]
    if board is not None and board.phase is not Phase.GAME_OVER:
        # The game goes on, so the rules make it public that the executed player was not Hitler.
        out.append(
            w.message("player-executed-not-hitler", [w.t("player-executed-not-hitler", target=target)])
        )
        if board.alive.count(True) == FEW_ALIVE and board.players > FEW_ALIVE:
            out.append(w.message("note-five-alive", [w.t("note-five-alive")]))
    return out


_GAME_ENDED_IDS: Final = {
    (Party.LIBERAL, WinReason.POLICIES): "game-ended-liberal-policies",
    (Party.FASCIST, WinReason.POLICIES): "game-ended-fascist-policies",
    (Party.LIBERAL, WinReason.HITLER_EXECUTED): "game-ended-hitler-executed",
    (Party.FASCIST, WinReason.HITLER_ELECTED): "game-ended-hitler-elected",
}


@_renders(GameEnded)
def _ended(e: Event, w: _Words, board: PublicView | None) -> list[Message]:
    assert isinstance(e, GameEnded)
    mid = _GAME_ENDED_IDS[e.winner, e.reason]
    return [w.message(mid, [w.t(mid), _roles_line(w, e.roles)], kind=Kind.END)]


def ended_line(event: GameEnded, table: TableInfo, catalog: Catalog) -> str:
    """Who won and why, in one line (the table screen's headline at the end)."""
    return _Words(table, catalog, PLAIN).t(_GAME_ENDED_IDS[event.winner, event.reason])


def waiting_line(seats: Sequence[Seat], phase: Phase, table: TableInfo, catalog: Catalog) -> str:
    """Who the table waits for, by name, and for what (the table screen's big line)."""
    w = _Words(table, catalog, PLAIN)
    return w.t("board-waiting", names=w.names(seats), phase=w.phase(phase))


def vote_title(event: ElectionDecided, table: TableInfo, catalog: Catalog) -> str:
    """An election's outcome and its government, short (the heading over its ballots)."""
    w = _Words(table, catalog, PLAIN)
    return w.t("web-vote-elected" if event.elected else "web-vote-rejected", president=w.name(event.president),
               chancellor=w.name(event.chancellor))


def roles_message(roles: Sequence[Role], table: TableInfo, catalog: Catalog, *, caps: Capabilities = PLAIN) -> Message:
    """Every role, for a game that ended without being decided (the host ended it): no longer a secret."""
    w = _Words(table, catalog, caps)
    return w.message("roles-revealed", [_roles_line(w, roles)])


def _roles_line(w: _Words, roles: Sequence[Role]) -> str:
    return w.t(
        "roles-revealed",
        roles=w.catalog.list_separator.join(f"{w.name(seat)}: {w.role(role)}" for seat, role in enumerate(roles)),
        hitler=w.names(s for s, r in enumerate(roles) if r is Role.HITLER),
        fascists=w.names(s for s, r in enumerate(roles) if r is Role.FASCIST),
    )


# --- the deal -------------------------------------------------------------------------------------------


def _knowledge_rule_id(players: int) -> str:
    return "rule-knowledge-small" if players <= 6 else "rule-knowledge-large"


def _knows_line(w: _Words, role: Role, known: Sequence[tuple[Seat, Role]]) -> str:
    hitler = [seat for seat, r in known if r is Role.HITLER]
    fascists = [seat for seat, r in known if r is Role.FASCIST]
    if role is Role.LIBERAL:
        return w.t("deal-knows-nobody")
    if role is Role.HITLER:
        # 5-6 players: Hitler knows the fascist; 7-10: nobody (engine.known_roles decides, not us).
        return (
            w.t("deal-knows-fascist", fascist=w.names(fascists))
            if fascists
            else w.t("deal-knows-nobody-hitler")
        )
    if fascists:
        return w.t("deal-knows-team", hitler=w.names(hitler), fascists=w.names(fascists))
    return w.t("deal-knows-hitler", hitler=w.names(hitler))


def _deal_lines(w: _Words, role: Role, known: Sequence[tuple[Seat, Role]], players: int) -> list[str]:
    lines = [
        w.header(),
        w.t("deal-role", role=w.role(role), party=w.party(role.party)),
        _knows_line(w, role, known),
    ]
    if not w.compact:
        # The same for every role: only the lines above differ, which keeps the padding short.
        lines += [w.t("deal-goal"), w.t(_knowledge_rule_id(players)), w.t("deal-footer")]
    return lines


def deal_length(table: TableInfo, catalog: Catalog, *, caps: Capabilities = PLAIN) -> int:
    """The length every deal message at this table has: the longest any role could need, plus the pad line.

    Computed from public facts only (names, player count, catalog), so the length itself reveals nothing.
    """
    w = _Words(table, catalog, caps)
    players = len(table.names)
    _, fascists = ROLE_COUNTS[players]
    # Text length grows with the names in it, so the longest names bound every real deal at this table.
    longest = sorted(range(players), key=lambda s: len(w.name(s)), reverse=True)
    hitler_knows = tuple((s, Role.FASCIST) for s in longest[:fascists]) if players <= 6 else ()
    cases: list[tuple[Role, tuple[tuple[Seat, Role], ...]]] = [
        (Role.LIBERAL, ()),
        (Role.HITLER, hitler_knows),
        (Role.FASCIST, ((longest[0], Role.HITLER),) + tuple((s, Role.FASCIST) for s in longest[1:fascists])),
    ]
    body = max(len(w.join(_deal_lines(w, role, known, players))) for role, known in cases)
    return body + 1 + DEAL_MIN_PAD


def _deal_message(w: _Words, role: Role, known: Sequence[tuple[Seat, Role]], players: int) -> Message:
    body = w.join(_deal_lines(w, role, known, players))
    pad = deal_length(w.table, w.catalog, caps=w.caps) - len(body) - 1
    assert pad >= DEAL_MIN_PAD, "deal_length bounds every deal"
    return Message("deal-role", body + "\n" + DEAL_PAD * pad, True)


# --- prompts --------------------------------------------------------------------------------------------


def _label(w: _Words, action: Action) -> str:
    m = move(action)
    if m.target is not None:
        return w.name(m.target)
    if m.card is not None:
        return w.card(m.card)
    match m.kind:
        case MoveKind.VOTE:
            return w.vote(bool(m.yes))
        case MoveKind.VETO:
            return w.t("choice-propose-veto")
        case MoveKind.VETO_REPLY:
            return w.t("choice-veto-accept" if m.yes else "choice-veto-refuse")
    raise AssertionError(action)



def nomination_tells_table_vote(public: PublicView, table: TableInfo, catalog: Catalog, caps: Capabilities) -> bool:
    """True if, with votes at the table on a channel where every text costs, the President's nomination prompt
    also says how the table votes and what to text after (it fits one text with every living player as an
    option); else the President is told so in a text of its own once they have nominated."""
    if not (table.table_votes and caps.paid_per_message) or public.president is None:
        return False
    w = _Words(table, catalog, caps)
    others = [s for s in range(public.players) if public.alive[s] and s != public.president]
    options = w.catalog.list_separator.join(f"{i} {w.name(s)}" for i, s in enumerate(others, 1))
    return w.limit is None or len(w.sent(w.t("prompt-nominate-table", options=options))) <= w.limit


def _term_limited_id(public: PublicView, limited: Sequence[Seat]) -> str:
    """Who the term-limited names were in the last elected government (the list leaves out the Candidate, and
    with five or fewer alive only its Chancellor is limited): its Chancellor, its President, or both."""
    last = public.sessions[-1] if public.sessions else None
    if last is not None and list(limited) == [last.chancellor]:
        return "prompt-term-limited-chancellor"
    if last is not None and list(limited) == [last.president]:
        return "prompt-term-limited-president"
    return "prompt-term-limited"


def prompt(view: PlayerView, table: TableInfo, catalog: Catalog, *, caps: Capabilities = PLAIN) -> Message | None:
    """What this seat must decide now, one ``Choice`` per legal action; None if it has nothing to decide.

    A voter who has voted may still change it, so they get the change prompt (secret: it shows the vote).
    """
    actions = view.legal_actions
    if not actions:
        return None
    w = _Words(table, catalog, caps)
    public = view.public
    choices = tuple(Choice(_label(w, a), a) for a in actions)
    options = w.catalog.list_separator.join(f"{i} {c.label}" for i, c in enumerate(choices, 1))
    secret = False
    notes: list[str] = []
    params: dict[str, object] = {"options": options}
    match public.phase:
        case Phase.NOMINATION:
            told = nomination_tells_table_vote(public, table, catalog, caps)
            mid = "prompt-nominate-table" if told else "prompt-nominate"
            limited = [s for s in public.term_limited if public.alive[s] and s != public.president]
            if limited and not w.compact:  # why a name is missing from the list
                notes.append(w.t(_term_limited_id(public, limited), names=w.names(limited)))
            if public.alive.count(True) <= FEW_ALIVE and len(public.term_limited) == 1 and not w.compact:
                notes.append(w.t("note-five-alive"))
        case Phase.ELECTION:
            assert public.president is not None and public.chancellor is not None
            params |= {"president": w.name(public.president), "chancellor": w.name(public.chancellor)}
            mid = "prompt-vote"
            if view.vote is not None:
                mid, secret = "prompt-vote-change", True
                params["vote"] = w.vote(view.vote)
        case Phase.LEGISLATIVE_PRESIDENT:
            mid, secret = "prompt-discard", True
            params["cards"] = w.cards(view.hand)
        case Phase.LEGISLATIVE_CHANCELLOR:
            mid, secret = ("prompt-enact-veto" if view.may_veto else "prompt-enact"), True
            params["cards"] = w.cards(view.hand)
        case Phase.VETO:
            assert public.chancellor is not None
            mid = "prompt-veto"
            params["chancellor"] = w.name(public.chancellor)
        case Phase.INVESTIGATE:
            mid = "prompt-investigate"
        case Phase.SPECIAL_ELECTION:
            mid = "prompt-special-election"
        case Phase.EXECUTION:
            mid = "prompt-execute"
        case _:
            raise AssertionError(public.phase)
    return w.message(mid, [w.t(mid, **params), *notes], secret=secret, choices=choices, kind=Kind.PROMPT)


# --- replies to bad input -------------------------------------------------------------------------------


def violation_message(
    error: RuleViolation, table: TableInfo, catalog: Catalog, *, caps: Capabilities = PLAIN
) -> Message:
    """A private reply to a move the rules reject: which rule, and that nothing changed. Never a secret."""
    w = _Words(table, catalog, caps)
    mid = "violation-" + error.code
    return w.message(mid, [w.t(mid, phase=w.phase(error.phase)), w.t("nothing-changed")])


_QUOTE_LIMIT: Final = 20
"""Characters of a player's own input quoted back in a reply (SMS has no room for more)."""


def input_message(
    problem: InputProblem,
    table: TableInfo,
    catalog: Catalog,
    *,
    caps: Capabilities = PLAIN,
    text: str = "",
    options: Sequence[str] = (),
) -> Message:
    """A private reply to input the service could not use (``text``: as sent; ``options``: candidates)."""
    w = _Words(table, catalog, caps)
    quoted = " ".join(text.split())
    if len(quoted) > _QUOTE_LIMIT:
        quoted = quoted[: _QUOTE_LIMIT - 3] + "..."
    quoted = isolated(w.sent(quoted), catalog.right_to_left)
    line = w.t(problem.value, text=quoted, options=w.catalog.list_separator.join(options))
    return w.message(problem.value, [line, w.t("nothing-changed")])


# --- what a seat knows, and the board -------------------------------------------------------------------


def knowledge_messages(
    view: PlayerView, table: TableInfo, catalog: Catalog, *, caps: Capabilities = PLAIN
) -> list[Message]:
    """Everything this seat knows: role, team, hand, vote, its governments' cards, investigations and peeks.

    One secret message; in SMS as many one-segment secret messages as it takes.
    """
    w = _Words(table, catalog, caps)
    lines = [
        w.t("knowledge-title"),
        w.t("deal-role", role=w.role(view.role), party=w.party(view.party)),
        _knows_line(w, view.role, view.known_roles),
    ]
    if view.hand:
        lines.append(w.t("know-hand", cards=w.cards(view.hand)))
    if view.passed:
        lines.append(w.t("know-passed", cards=w.cards(view.passed)))
    if view.vote is not None:
        lines.append(w.t("know-vote", vote=w.vote(view.vote)))
    for s in view.sessions:
        vetoed = s.enacted is None
        enacted = "" if s.enacted is None else w.policy(s.enacted)
        if s.president == view.seat:
            assert s.drawn is not None and s.discarded is not None
            mid = "know-session-president-vetoed" if vetoed else "know-session-president"
            lines.append(
                w.t(
                    mid,
                    chancellor=w.name(s.chancellor),
                    drawn=w.cards(s.drawn),
                    discarded=w.card(s.discarded),
                    received=w.cards(s.received),
                    enacted=enacted,
                )
            )
        else:
            mid = "know-session-chancellor-vetoed" if vetoed else "know-session-chancellor"
            lines.append(
                w.t(mid, president=w.name(s.president), received=w.cards(s.received), enacted=enacted)
            )
    for target, party in view.investigations:
        lines.append(w.t("know-investigation", target=w.name(target), party=w.party(party)))
    for top in view.peeks:
        lines.append(w.t("know-peek", cards=w.cards(top)))
    return w.packed("knowledge-title", lines, secret=True)


def board_messages(
    public: PublicView, table: TableInfo, catalog: Catalog, *, caps: Capabilities = PLAIN
) -> list[Message]:
    """The public board: tracks, piles, offices, term limits, executions, and who the table waits for."""
    w = _Words(table, catalog, caps)
    over = public.phase is Phase.GAME_OVER
    lines = [
        w.t("board-title"),
        w.t(
            "board-track",
            liberal=public.liberal_policies,
            fascist=public.fascist_policies,
            tracker=public.election_tracker,
            draw=public.draw_pile,
            discard=public.discard_pile,
        ),
    ]
    if public.veto_unlocked and not over:
        lines.append(w.t("board-veto"))
    if not w.compact:
        lines.append(w.t("board-powers", slots=_slots(w, public.players, public.fascist_policies)))
        lines.append(w.t("board-seating", seating=w.names(range(public.players))))
    president, chancellor = public.president, public.chancellor
    if president is not None:
        match public.phase:
            case Phase.NOMINATION:
                lines.append(w.t("board-candidate", president=w.name(president)))
            case Phase.ELECTION:
                assert chancellor is not None
                lines.append(
                    w.t("board-nominated", president=w.name(president), chancellor=w.name(chancellor))
                )
            case Phase.LEGISLATIVE_PRESIDENT | Phase.LEGISLATIVE_CHANCELLOR | Phase.VETO:
                assert chancellor is not None
                lines.append(
                    w.t("board-government", president=w.name(president), chancellor=w.name(chancellor))
                )
            case _:
                lines.append(w.t("board-president", president=w.name(president)))
    if public.term_limited and not over:
        lines.append(w.t("board-term-limited", names=w.names(public.term_limited)))
        if public.alive.count(True) <= FEW_ALIVE and len(public.term_limited) == 1 and not w.compact:
            lines.append(w.t("note-five-alive"))
    executed = [seat for seat, alive in enumerate(public.alive) if not alive]
    if executed:
        lines.append(w.t("board-executed", names=w.names(executed)))
    if public.not_hitler and not over:
        lines.append(w.t("board-not-hitler", names=w.names(public.not_hitler)))
    if public.investigations and not over:
        lines.append(w.t("board-investigated", names=w.names(t for _, t in public.investigations)))
    lines += _waiting_lines(w, public, table)
    if w.compact:
        # One text: who won and who was who, or who the table waits for, first; then the tracks; then the rest.
        rest = lines[1:]
        ends = [len(rest) - 2, len(rest) - 1] if over else [len(rest) - 1]
        order = [*ends, 0, *(i for i in range(1, len(rest)) if i not in ends)]
        return [w.message("board-title", _one_text(w, rest, order))]
    return w.packed("board-title", lines, secret=False)


def _waiting_lines(w: _Words, public: PublicView, table: TableInfo) -> list[str]:
    """Who the table waits for (a vote: how far it has come and who has not voted), or who won and who was who."""
    if public.phase is Phase.GAME_OVER:
        assert public.winner is not None and public.roles is not None
        return [w.t("board-game-over", winner=w.team(public.winner)), _roles_line(w, public.roles)]
    if public.phase is Phase.ELECTION and table.table_votes:
        assert public.president is not None
        return [w.t("board-waiting-table-votes", president=w.name(public.president))]
    if public.phase is Phase.ELECTION:
        lines = [w.t("board-computers-wait")] if table.computers_wait else []
        lines.append(w.t("board-waiting-votes", cast=public.votes_cast, voters=public.alive.count(True)))
        if public.not_voted:
            lines.append(w.t("board-not-voted", names=w.names(public.not_voted)))
        return lines
    return [w.t("board-waiting", names=w.names(public.awaiting), phase=w.phase(public.phase))]


def waiting_messages(
    public: PublicView, table: TableInfo, catalog: Catalog, *, caps: Capabilities = PLAIN
) -> list[Message]:
    """Who the table waits for now (``waiting``): the board's last lines, without the rest of the board."""
    w = _Words(table, catalog, caps)
    return w.packed("board-waiting", _waiting_lines(w, public, table), secret=False)


def _one_text(w: _Words, lines: Sequence[str], order: Sequence[int]) -> list[str]:
    """As many of ``lines`` as one text holds, in their order, taken by priority (``order``: their places)."""
    limit = w.limit
    chosen: set[int] = set()
    for i in order:
        if not chosen or limit is None or len(w.sent(w.join([lines[j] for j in sorted({*chosen, i})]))) <= limit:
            chosen.add(i)
    return [lines[j] for j in sorted(chosen)]


def _slots(w: _Words, players: int, covered: int) -> str:
    """Each Fascist slot and the power it grants at this player count; the next slot to cover marked."""
    track = FASCIST_TRACK.get(players, FASCIST_TRACK[max(FASCIST_TRACK)])
    slots = []
    for number, power in enumerate((*track, None), 1):
        what = w.t("slot-win") if number > len(track) else w.catalog.term(power.value) if power else w.t("slot-none")
        slot = w.t("slot", number=number, power=what)
        slots.append(w.t("slot-next", slot=slot) if number == covered + 1 else slot)
    return w.catalog.list_separator.join(slots)


def rules_messages(players: int | None, catalog: Catalog, *, caps: Capabilities = PLAIN) -> list[Message]:
    """How to play; for a table with players, also the powers of its Fascist slots, term limits, the Election
    Tracker and chaos, and the veto (the long form only)."""
    w = _Words(TableInfo(()), catalog, caps)
    lines = [w.t("rules-summary")]
    if players is not None and not w.compact:
        lines += [
            w.t("rules-powers", players=players, slots=_slots(w, players, -1)),
            w.t(_knowledge_rule_id(players)),
            w.t("rules-term-limits"),
            w.t("rules-tracker"),
            w.t("rules-veto"),
        ]
    return w.packed("rules-summary", lines, secret=False)


# --- the end --------------------------------------------------------------------------------------------


def truth_timeline(
    log: Sequence[Event], table: TableInfo, catalog: Catalog, *, caps: Capabilities = PLAIN
) -> list[Message]:
    """What really happened, from a finished game's complete event log (every audience): every government's
    real hand, discard and enactment, every chaos policy, investigation result, peek and execution.

    Raises ``ValueError`` if the log does not end the game: before the end these are secrets.
    """
    ended = [e for e in log if isinstance(e, GameEnded)]
    if not ended:
        raise ValueError("the truth timeline exists only for a finished game")
    roles = ended[-1].roles
    w = _Words(table, catalog, caps)
    if w.compact:
        # Too long for SMS (every text costs); the end's result already named every role, and the channel adds
        # the table screen's address to it where there is one.
        return []
    lines = [w.t("truth-title")]
    number = 0
    drawn: tuple[Policy, ...] | None = None
    president: Seat | None = None
    discarded: Policy | None = None
    chancellor: Seat | None = None
    received: tuple[Policy, ...] | None = None
    veto = False

    def session(mid: str, enacted: Policy | None) -> str:
        assert drawn is not None and discarded is not None and received is not None
        assert president is not None and chancellor is not None
        return w.t(
            mid,
            number=number,
            president=w.name(president),
            chancellor=w.name(chancellor),
            drawn=w.cards(drawn),
            discarded=w.card(discarded),
            received=w.cards(received),
            enacted="" if enacted is None else w.card(enacted),
        )

    for e in log:
        match e:
            case PoliciesDrawn():
                president, drawn, discarded, chancellor, received, veto = (
                    e.president,
                    e.policies,
                    None,
                    None,
                    None,
                    False,
                )
            case PolicyDiscarded() if drawn is not None and e.seat == president and discarded is None:
                discarded = e.policy
            case PoliciesReceived() if drawn is not None and received is None:
                chancellor, received = e.chancellor, e.policies
            case VetoProposed():
                veto = True
            case VetoAnswered(accepted=True) if drawn is not None:
                number += 1
                lines.append(session("truth-session-veto", None))
                drawn = None
            case PolicyEnacted(by_chaos=False) if drawn is not None:
                number += 1
                lines.append(session("truth-session-veto-refused" if veto else "truth-session", e.policy))
                drawn = None
            case PolicyEnacted(by_chaos=True):
                lines.append(w.t("truth-chaos", policy=w.card(e.policy)))
            case PartyMembershipSeen():
                lines.append(
                    w.t(
                        "truth-investigation",
                        president=w.name(e.president),
                        target=w.name(e.target),
                        party=w.party(e.party),
                    )
                )
            case TopPoliciesSeen():
                lines.append(w.t("truth-peek", president=w.name(e.president), cards=w.cards(e.policies)))
            case PlayerExecuted():
                lines.append(
                    w.t(
                        "truth-execution",
                        president=w.name(e.president),
                        target=w.name(e.target),
                        role=w.role(roles[e.target]),
                    )
                )
    return w.packed("truth-title", lines, secret=False)


# --- the replay: a game record told whole ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Rejected:
    """The action a replay stopped on: its place among the record's actions, the action, the rule it broke."""

    index: int
    action: Action
    violation: RuleViolation


@dataclass(slots=True)
class _Story:
    """A replay's lines so far, and what a line needs that its event does not say."""

    w: _Words
    lines: list[str] = field(default_factory=list)
    round: int = 0
    roles: dict[Seat, Role] = field(default_factory=dict)
    chancellor: Seat | None = None
    """The Chancellor of the session under way (the enactment names them)."""
    tracker: int = 0
    veto_refused: bool = False
    vote: VoteCast | None = None
    """The vote the last line tells: the count that follows it joins that line."""

    def say(self, message_id: str, **params: object) -> None:
        """A line of the story: indented under its round, flush left before the first."""
        text = self.w.t(message_id, **params)
        self.lines.append(_STORY_INDENT + text if self.round else text)
        self.vote = None

    def head(self, message_id: str, **params: object) -> None:
        """A heading (a round, the end), after an empty line."""
        self.lines += ["", self.w.t(message_id, **params)]

    def name(self, seat: Seat) -> str:
        return self.w.name(seat)

    def cards(self, policies: Iterable[Policy], separator: str | None = None) -> str:
        joiner = self.w.catalog.list_separator if separator is None else separator
        return joiner.join(_letter(self.w, p) for p in policies)


_STORY_INDENT: Final = "  "
_Teller = Callable[[Any, _Story], None]
_TELLERS: dict[type[Event], _Teller] = {}
_E = TypeVar("_E", bound=Event)


def _tells(cls: type[_E]) -> Callable[[Callable[[_E, _Story], None]], Callable[[_E, _Story], None]]:
    def register(fn: Callable[[_E, _Story], None]) -> Callable[[_E, _Story], None]:
        _TELLERS[cls] = fn
        return fn

    return register


def told_events() -> frozenset[type[Event]]:
    """Every event class ``replay_timeline`` can tell (a test checks it is every event)."""
    return frozenset(_TELLERS)


def _letter(w: _Words, policy: Policy) -> str:
    """A card as the replay writes it: one letter."""
    return w.t("replay-liberal-card" if policy is Policy.LIBERAL else "replay-fascist-card")


def replay_timeline(
    events: Sequence[Event],
    table: TableInfo,
    catalog: Catalog,
    *,
    said: Mapping[int, Sequence[Claim]] | None = None,
    rejected: Rejected | None = None,
) -> list[str]:
    """A game record told whole, one line per event, by round (``moderator replay``): every secret included
    (roles, hands, discards, investigation results, peeks, reshuffled orders), for reading once it is over.

    A vote's anonymous count joins the line of the vote it follows. ``said[n]`` are the claims said after the
    first ``n`` events, each told as the speaker's words in quotes, never as a fact; ``rejected`` is the
    action the replay stopped on, told last.
    """
    story = _Story(_Words(table, catalog, PLAIN))
    for count, event in enumerate(events, start=1):
        _TELLERS[type(event)](event, story)
        for claim in (said or {}).get(count, ()):
            _tell_claim(claim, story)
    if rejected is not None:
        story.head("replay-stopped", index=rejected.index, broken=replay_rejection(rejected, table, catalog))
    return story.lines


def replay_rejection(rejected: Rejected, table: TableInfo, catalog: Catalog) -> str:
    """Who tried to do what, and the rule it breaks: ``Bob cannot investigate Dee: No player may be ...``."""
    w = _Words(table, catalog, PLAIN)
    m = move(rejected.action)
    kind = m.kind.value.replace("_", "-")
    if m.kind is MoveKind.VETO_REPLY:
        kind = "accept-veto" if m.yes else "refuse-veto"
    attempt = w.t(
        f"replay-cannot-{kind}",
        name=w.name(rejected.action.seat),
        target="" if m.target is None else w.name(m.target),
        card="" if m.card is None else _letter(w, m.card),
        vote=w.vote(bool(m.yes)),
    )
    return w.t("replay-broken", attempt=attempt, rule=w.t(f"replay-rule-{rejected.violation.code}"))


def _tell_claim(claim: Claim, s: _Story) -> None:
    speaker = s.name(claim.speaker)
    match claim:
        case SessionClaim(office=Office.PRESIDENT, hand=held, passed=passed):
            s.say("replay-claim-president", speaker=speaker, drawn=s.cards(held), passed=s.cards(passed))
        case SessionClaim(hand=held, passed=passed) if passed:
            s.say("replay-claim-chancellor", speaker=speaker, received=s.cards(held), passed=s.cards(passed))
        case SessionClaim(hand=held):
            s.say("replay-claim-chancellor-veto", speaker=speaker, received=s.cards(held))
        case InvestigationClaim(target=target, party=party):
            s.say("replay-claim-investigation", speaker=speaker, target=s.name(target), party=s.w.party(party))
        case PeekClaim(policies=policies):
            s.say("replay-claim-peek", speaker=speaker, cards=s.cards(policies))
        case Accusation(target=target, sure=sure):
            s.say("replay-claim-accusation" if sure else "replay-claim-distrust", speaker=speaker,
                  target=s.name(target))
        case Clearance(target=target, sure=sure):
            s.say("replay-claim-clearance" if sure else "replay-claim-trust", speaker=speaker, target=s.name(target))
        case _:
            assert_never(claim)


@_tells(GameStarted)
def _tell_game(e: GameStarted, s: _Story) -> None:
    s.lines.append(s.w.t("replay-game", players=e.players))


@_tells(RoleDealt)
def _tell_role(e: RoleDealt, s: _Story) -> None:
    s.roles[e.seat] = e.role
    known = s.w.catalog.list_separator.join(s.w.t("replay-known", name=s.name(o), role=s.w.role(r)) for o, r in e.known)
    mid = "replay-seat-knows" if known else "replay-seat"
    seat = s.w.t(mid, number=e.seat + 1, name=s.name(e.seat), role=s.w.role(e.role), known=known)
    s.lines.append(_STORY_INDENT + seat)  # under the heading of the seats


@_tells(PresidentialCandidateChosen)
def _tell_round(e: PresidentialCandidateChosen, s: _Story) -> None:
    s.round += 1
    s.head("replay-round-special" if e.special_election else "replay-round", round=s.round,
           president=s.name(e.president))


@_tells(ChancellorNominated)
def _tell_nominated(e: ChancellorNominated, s: _Story) -> None:
    s.say("replay-nominated", president=s.name(e.president), chancellor=s.name(e.chancellor))


@_tells(VoteCast)
def _tell_vote(e: VoteCast, s: _Story) -> None:
    s.say("replay-vote-changed" if e.changed else "replay-vote", name=s.name(e.seat), vote=s.w.vote(e.ja))
    s.vote = e


@_tells(VoteProgressed)
def _tell_count(e: VoteProgressed, s: _Story) -> None:
    vote = s.vote
    if vote is None:  # no vote line to join
        s.say("replay-vote-progress", cast=e.votes_cast, voters=e.voters)
        return
    s.lines.pop()
    mid = "replay-vote-changed-counted" if vote.changed else "replay-vote-counted"
    s.say(mid, name=s.name(vote.seat), vote=s.w.vote(vote.ja), cast=e.votes_cast, voters=e.voters)


@_tells(ElectionDecided)
def _tell_election(e: ElectionDecided, s: _Story) -> None:
    ja = sum(1 for _, vote in e.votes if vote)
    votes = s.w.catalog.list_separator.join(
        s.w.t("replay-ballot", name=s.name(seat), vote=s.w.vote(vote)) for seat, vote in e.votes
    )
    mid = "replay-election-elected" if e.elected else "replay-election-rejected"
    s.say(mid, votes=votes, ja=ja, nein=len(e.votes) - ja)


@_tells(ElectionTrackerAdvanced)
def _tell_tracker(e: ElectionTrackerAdvanced, s: _Story) -> None:
    s.tracker = e.election_tracker
    s.say("replay-tracker-chaos" if s.tracker >= CHAOS_AT else "replay-tracker", tracker=s.tracker)


@_tells(ChancellorNotHitler)
def _tell_not_hitler(e: ChancellorNotHitler, s: _Story) -> None:
    s.say("replay-not-hitler", chancellor=s.name(e.chancellor))


@_tells(TermLimitsCleared)
def _tell_term_limits(e: TermLimitsCleared, s: _Story) -> None:
    s.say("replay-term-limits")


@_tells(LegislativeSessionStarted)
def _tell_session(e: LegislativeSessionStarted, s: _Story) -> None:
    s.chancellor, s.veto_refused = e.chancellor, False
    mid = "replay-session-veto" if e.veto_unlocked else "replay-session"
    s.say(mid, president=s.name(e.president), chancellor=s.name(e.chancellor))


@_tells(PoliciesDrawn)
def _tell_drawn(e: PoliciesDrawn, s: _Story) -> None:
    s.say("replay-drawn", president=s.name(e.president), cards=s.cards(e.policies))


@_tells(PolicyDiscarded)
def _tell_discarded(e: PolicyDiscarded, s: _Story) -> None:
    s.say("replay-discarded", name=s.name(e.seat), card=s.cards((e.policy,)))


@_tells(PoliciesHandedOver)
def _tell_handed_over(e: PoliciesHandedOver, s: _Story) -> None:
    s.say("replay-handed-over", president=s.name(e.president), chancellor=s.name(e.chancellor))


@_tells(PoliciesReceived)
def _tell_received(e: PoliciesReceived, s: _Story) -> None:
    mid = "replay-kept" if s.veto_refused else "replay-received-veto" if e.veto_allowed else "replay-received"
    s.say(mid, chancellor=s.name(e.chancellor), cards=s.cards(e.policies))


@_tells(VetoProposed)
def _tell_veto(e: VetoProposed, s: _Story) -> None:
    s.say("replay-veto-proposed", chancellor=s.name(e.chancellor))


@_tells(VetoAnswered)
def _tell_veto_answer(e: VetoAnswered, s: _Story) -> None:
    s.veto_refused = not e.accepted
    s.say("replay-veto-accepted" if e.accepted else "replay-veto-refused", president=s.name(e.president))


@_tells(PolicyEnacted)
def _tell_enacted(e: PolicyEnacted, s: _Story) -> None:
    tracker, chancellor = s.tracker, s.chancellor
    s.tracker, s.chancellor = 0, None  # an enactment ends the session and puts the tracker back to 0
    policy = s.w.t("replay-a-liberal-policy" if e.policy is Policy.LIBERAL else "replay-a-fascist-policy")
    track = s.w.t("replay-track", liberal=e.liberal_policies, fascist=e.fascist_policies)
    if e.by_chaos:  # a power the policy would grant is ignored
        power = power_for(len(s.w.table.names), e.fascist_policies) if e.policy is Policy.FASCIST else None
        s.say("replay-chaos" if power is None else "replay-chaos-power", policy=policy, track=track, tracker=tracker,
              power="" if power is None else s.w.catalog.term(power.value))
        return
    assert chancellor is not None, "a government enacts in its session"
    s.say("replay-enacted-reset" if tracker else "replay-enacted", chancellor=s.name(chancellor), policy=policy,
          track=track, tracker=tracker)


@_tells(VetoUnlocked)
def _tell_veto_unlocked(e: VetoUnlocked, s: _Story) -> None:
    s.say("replay-veto-unlocked")


@_tells(DeckReshuffled)
def _tell_reshuffled(e: DeckReshuffled, s: _Story) -> None:
    s.say("replay-reshuffled", count=e.draw_pile)


@_tells(DrawPileShuffled)
def _tell_new_pile(e: DrawPileShuffled, s: _Story) -> None:
    s.say("replay-new-pile", order=s.cards(e.order, separator=""))


@_tells(PresidentialPowerGranted)
def _tell_power(e: PresidentialPowerGranted, s: _Story) -> None:
    s.say("replay-power", president=s.name(e.president), power=s.w.catalog.term(e.power.value))


@_tells(LoyaltyInvestigated)
def _tell_investigates(e: LoyaltyInvestigated, s: _Story) -> None:
    s.say("replay-investigates", president=s.name(e.president), target=s.name(e.target))


@_tells(PartyMembershipSeen)
def _tell_membership(e: PartyMembershipSeen, s: _Story) -> None:
    s.say("replay-membership", president=s.name(e.president), target=s.name(e.target), party=s.w.party(e.party))


@_tells(SpecialElectionCalled)
def _tell_special_election(e: SpecialElectionCalled, s: _Story) -> None:
    s.say("replay-special-election", president=s.name(e.president), target=s.name(e.target))


@_tells(PolicyPeekUsed)
def _tell_peek(e: PolicyPeekUsed, s: _Story) -> None:
    s.say("replay-peek", president=s.name(e.president))


@_tells(TopPoliciesSeen)
def _tell_peeked(e: TopPoliciesSeen, s: _Story) -> None:
    s.say("replay-peeked", president=s.name(e.president), cards=s.cards(e.policies))


@_tells(PlayerExecuted)
def _tell_executed(e: PlayerExecuted, s: _Story) -> None:
    role = s.roles[e.target]
    mid = "replay-executed-hitler" if role is Role.HITLER else "replay-executed-not-hitler"
    s.say(mid, president=s.name(e.president), target=s.name(e.target), role=s.w.role(role))


@_tells(GameEnded)
def _tell_end(e: GameEnded, s: _Story) -> None:
    s.head(f"replay-won-{e.winner.value}-{e.reason.value.replace('_', '-')}")


# --- claims: what players say ------------------------------------------------------------------------------


def claim_messages(
    said: Sequence[Claim], board: PublicView, table: TableInfo, catalog: Catalog, *, caps: Capabilities = PLAIN
) -> list[Message]:
    """Claims as a person at the table says them, each line naming its speaker, under a line saying they are
    claims (players may lie): never as facts. With a text limit, as few messages as fit, each with that line."""
    if not said:
        return []
    w = _Words(table, catalog, caps)
    header = w.t("claims-header")
    chunks: list[list[str]] = [[header]]
    limit = w.limit
    for claim in said:
        line = _claim_line(claim, board, w)
        if limit is not None and len(chunks[-1]) > 1 and len(w.sent(w.join([*chunks[-1], line]))) > limit:
            chunks.append([header])
        chunks[-1].append(line)
    return [w.message("claims-header", chunk) for chunk in chunks]


def _claim_hand(policies: Sequence[Policy], w: _Words) -> str:
    # A hand claim tells counts, not order: the catalog has a phrase for each count of each size.
    key = "".join(p.value for p in policies).lower()
    return w.t(f"claim-hand-{key}") if key else ""


def _claim_line(claim: Claim, board: PublicView, w: _Words) -> str:
    speaker = w.name(claim.speaker)
    match claim:
        case SessionClaim(office=office, session=index, hand=held, passed=passed):
            session = board.sessions[index] if index < len(board.sessions) else None
            if office is Office.PRESIDENT:
                other = w.name(session.chancellor) if session is not None else ""
                return w.t("claim-president", speaker=speaker, chancellor=other, drawn=_claim_hand(held, w),
                           passed=_claim_hand(passed, w))
            other = w.name(session.president) if session is not None else ""
            return w.t("claim-chancellor", speaker=speaker, president=other, received=_claim_hand(held, w))
        case InvestigationClaim(target=target, party=party):
            return w.t("claim-investigation", speaker=speaker, target=w.name(target), party=w.party(party))
        case PeekClaim(policies=policies):
            return w.t("claim-peek", speaker=speaker, cards=w.cards(policies))
        case Accusation(target=target, sure=sure):
            return w.t("claim-accusation" if sure else "claim-distrust", speaker=speaker, target=w.name(target))
        case Clearance(target=target, sure=sure):
            return w.t("claim-clearance" if sure else "claim-trust", speaker=speaker, target=w.name(target))
        case _:
            assert_never(claim)


# --- help: written from the grammar ------------------------------------------------------------------------


def help_messages(catalog: Catalog, *, caps: Capabilities = PLAIN, host: bool = False) -> list[Message]:
    """What a person may type on this channel (the host's words too, for the host), from the grammar: every word
    help names is one the channel takes. Long form: a line per word and what it does; short form (a text
    limit): the words in a few lines."""
    g = grammar()
    w = _Words(TableInfo(()), catalog, caps)
    shown: list[tuple[Verb, str]] = []
    for verb, rule in RULES.items():
        if not rule.help or (rule.who is Who.HOST and not host) or not offered(verb, caps):
            continue
        word = g.shown(verb, catalog.lang, caps.reserved_words)
        if word is not None:
            shown.append((verb, caps.word_style.write(word)))
    lines = [w.t("help-typed" if caps.typed and not w.compact else "help")]
    if not w.compact:
        lines += [_help_line(w, verb, word) for verb, word in shown]
        return [w.message("help", lines)]
    limit = w.limit or SMS_LIMIT
    for mid, who in (("help-anyone", False), ("help-host", True)):
        words = [word for verb, word in shown if (RULES[verb].who is Who.HOST) is who]
        while words:  # as many words as fit one text with the line's own words
            take = len(words)
            while take > 1 and len(w.sent(w.t(mid, words=", ".join(words[:take])))) > limit:
                take -= 1
            lines.append(w.t(mid, words=", ".join(words[:take])))
            words = words[take:]
    return w.packed("help", lines, secret=False)


def _help_line(w: _Words, verb: Verb, word: str) -> str:
    """Help's line for one word: the word, what must follow it (``rename Sam``), and what it does."""
    if RULES[verb].args is Args.REQUIRED:
        word = f"{word} {w.t(f'args-{verb.value}')}"
    return w.t("help-line", word=word, what=w.t(f"word-{verb.value}"))


def needs_more(verb: Verb, catalog: Catalog, *, caps: Capabilities = PLAIN) -> Message:
    """The answer to a word typed alone that needs more after it (``claim``, ``rename``): help's line for it, with
    what follows it."""
    w = _Words(TableInfo(()), catalog, caps)
    word = grammar().shown(verb, catalog.lang, caps.reserved_words) or verb.value
    word = caps.word_style.write(word)
    lines = [w.t("input-word-alone", word=word, args=w.t(f"args-{verb.value}"))]
    if not w.compact:
        lines.append(_help_line(w, verb, word))
    return w.message("input-word-alone", lines)
