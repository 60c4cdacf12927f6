"""What each browser page shows, built from the service's tables (``screens`` holds the values; the browser
channel draws them). Who owes what, what a seat may see and which messages are its own are worked out here, by
the service, never by the channel.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable, Sequence
from typing import Final

from . import render
from .board import Board
from .board_view import board_of
from .bots import SPEECH_EVENTS
from .catalog import Catalog
from .channels import (
    Ballot,
    BoardView,
    HostView,
    Kind,
    Limits,
    Line,
    MoveCode,
    Option,
    Outbound,
    PassName,
    PromptView,
    Receipt,
    RevealView,
    ScreenSeat,
    ScreenView,
    SeatInfo,
    SeatView,
    Status,
    TableView,
)
from .claims import Claim
from .commands import Inbound
from .context import Context
from .engine import Action, Phase, awaiting, public_view, view_for
from .engine.events import ElectionDecided, GameEnded, GameStarted, VoteCast, VoteProgressed
from .engine.types import MAX_PLAYERS, MIN_PLAYERS
from .game import CLAIM_LENGTH
from .host import game_controls
from .lobby import MOVE_CODES
from .moves import MoveKind, move, token
from .names import NAME_LIMIT
from .outbox import COMPUTER_CHANNEL
from .render import TableInfo
from .store import TableStatus
from .tables import LIVE, Table

LATEST = 6
"""Public messages the table screen shows as the latest results."""
LIMITS: Final = Limits(MIN_PLAYERS, MAX_PLAYERS, name_length=NAME_LIMIT, claim_length=CLAIM_LENGTH)
"""The numbers the service holds every table's inputs to, as pages are told them (``channels.Pages.limits``)."""


class BrowserPages:
    """The ``channels.Pages`` the service offers the browser channel."""

    def __init__(self, ctx: Context, handle: Callable[[Inbound], Receipt],
                 observers: list[Callable[[str], None]]) -> None:
        self.ctx = ctx
        self.handle = handle
        """Where the pages' inputs go (``Service.handle``)."""
        self._observers = observers
        # A key of its own, not the secret itself (another use of the secret gets another key); read once, here,
        # on the service's thread.
        self._cookie_key = hmac.new(ctx.store.server_secret(), b"web cookies", hashlib.sha256).digest()

    def watch(self, observer: Callable[[str], None]) -> None:
        self._observers.append(observer)

    # --- tables -------------------------------------------------------------------------------------------

    def _table(self, table_id: str) -> Table | None:
        table = self.ctx.tables.get(table_id)
        return None if table is None or table.status is TableStatus.CLOSED else table

    def table_info(self, table_id: str) -> TableView | None:
        table = self._table(table_id)
        return None if table is None else _view(table)

    def table_by_code(self, code: str) -> TableView | None:
        table = self.ctx.tables.by_code(code)
        return None if table is None or table.status is TableStatus.CLOSED else _view(table)

    def table_by_move_code(self, code: str) -> TableView | None:
        found = [t for t in self.ctx.tables.with_move_code(code) if code in t.row.options.get(MOVE_CODES, {})]
        return _view(found[0]) if found and found[0].status is not TableStatus.CLOSED else None

    def join_attempt(self, client: str, known: bool) -> float:
        # The same buckets as every other way in (``lobby.join``), keyed apart: "ip:" is never a channel's name.
        return self.ctx.guesses.attempt(f"ip:{client}", known, self.ctx.clock())

    def cookie_key(self) -> bytes:
        return self._cookie_key

    def board(self, table_id: str) -> Board | None:
        table = self._table(table_id)
        if table is None or table.state is None:
            return None
        return board_of(public_view(table.state), table.info())

    def limits(self) -> Limits:
        return LIMITS

    # --- the seat's page ------------------------------------------------------------------------------------

    def seat_view(self, table_id: str, position: int, language: str) -> SeatView:
        table = self._table(table_id)
        assert table is not None
        seat = table.seats[position]
        catalog = self.ctx.catalog(table.row.theme, language)
        info = table.info()
        state = table.state
        feed = tuple(self.feed(seat.channel, seat.address, 40, this_game=True, table_id=table_id))
        if state is None or not table.row.game or table.status not in (*LIVE, TableStatus.OVER):
            return SeatView(seat.name, False, seats=table.names, feed=feed, language=seat.language)
        view = view_for(state, position)
        at_table = bool(table.row.options.get("physical_voting")) and state.phase is Phase.ELECTION
        # Not ``awaiting``: a voter who has voted may still change the vote until the last one is in.
        owed = table.status is TableStatus.PLAYING and not at_table
        message = render.prompt(view, info, catalog) if owed else None
        prompt = None
        if message is not None:
            options = tuple(Option(c.label, token(c.action)) for c in message.choices)
            chosen = None if view.vote is None else catalog.term("ja" if view.vote else "nein")
            prompt = PromptView(_private(message.text, message.secret), message.secret, options,
                                table.row.decision_step, cover=cover_of(message.message_id), chosen=chosen,
                                waiting=position not in awaiting(state),
                                cards=tuple(_card(c.action) for c in message.choices))
        knowledge = tuple(_private(m.text, m.secret) for m in render.knowledge_messages(view, info, catalog))
        status = _status(self.ctx, table, language)
        if not view.public.alive[position]:  # executed: told so, and the game goes on before their eyes
            status = (catalog.text("web-executed"), *status)
        records = table.status is TableStatus.PLAYING and at_table and state.president == position
        # The hands at the table: computer players have voted by themselves (their votes show with the result).
        voters = tuple(table.names[s] for s in awaiting(state)) if records else ()
        return SeatView(
            seat.name, True, prompt=prompt,
            owes_nothing=prompt is None and not records and table.status is TableStatus.PLAYING,
            record_votes=voters, language=seat.language, role=view.role.value,
            knowledge=knowledge, status=status,
            board=self._board_view(table, language),
            latest=tuple(text for text, _ in self._latest(table, language)) if table.group else None,
            feed=feed,
        )

    def feed(self, channel: str, address: str, limit: int, *, this_game: bool, table_id: str) -> list[Line]:
        table = self.ctx.tables.get(table_id)
        since = 0.0
        if this_game and table is not None and table.status is not TableStatus.LOBBY:
            since = float(table.row.options.get("started", 0.0))
        lines: list[Line] = []
        counter: int | None = None  # where the election's running count is, so a new count replaces it
        for outbox_id, message_id, body in self.ctx.store.messages_to(channel, address, limit, since):
            message = Outbound.from_json(body, message_id)
            if message.kind is Kind.PROMPT:
                continue  # old prompts: the live prompt above has the buttons
            line = Line(outbox_id, _private(message.text, message.secret), message.secret,
                        cover_of(message_id) if message.secret else "")
            if message.kind is Kind.COUNTER:
                if counter is not None:  # "3 of 5 have voted" replaces "2 of 5": one line that updates
                    del lines[counter]
                counter = len(lines)
            elif message.kind is Kind.RESULT:
                counter = None  # the election is decided: the next count is the next election's
            lines.append(line)
        return lines

    # --- the table screen -----------------------------------------------------------------------------------

    def screen_view(self, table_id: str, language: str) -> ScreenView:
        table = self._table(table_id)
        assert table is not None
        if table.status is TableStatus.LOBBY or table.state is None:
            return ScreenView(True, seats=table.names)
        catalog = self.ctx.catalog(table.row.theme, language)
        info, state = table.info(), table.state
        truth: tuple[str, ...] = ()
        ended = ""
        ending = next((e for e in reversed(table.log) if isinstance(e, GameEnded)), None)
        if table.status is TableStatus.OVER and ending is not None:
            truth = tuple(m.text for m in render.truth_timeline(table.log, info, catalog))
            ended = render.ended_line(ending, info, catalog)
        roles: tuple[ScreenSeat, ...] = ()
        if table.status is TableStatus.OVER:  # decided or ended by the host: the roles are no secret now
            roles = tuple(ScreenSeat(table.seats[s].name, state.alive[s], role.value, catalog.term(role.value))
                          for s, role in enumerate(state.roles))
        waiting = ""
        if table.status is TableStatus.PLAYING and (owing := awaiting(state)):
            # Who still owes a vote is no secret (at a real table, whose card is not yet down); how they vote is.
            waiting = render.waiting_line(owing, state.phase, info, catalog)
        latest = self._latest(table, language)
        return ScreenView(False, status=_status(self.ctx, table, language),
                          board=self._board_view(table, language), truth=truth,
                          latest=tuple(text for text, _ in latest), claimed=tuple(said for _, said in latest),
                          waiting=waiting,
                          reveal=_reveal(table, info, catalog), ended=ended, roles=roles)

    # --- the host's device ------------------------------------------------------------------------------------

    def host_view(self, table_id: str, language: str, local: Sequence[int]) -> HostView:
        table = self._table(table_id)
        assert table is not None
        state = table.state
        owing = set(awaiting(state)) if state is not None and table.status is TableStatus.PLAYING else set()
        names = tuple(PassName(p, table.seats[p].name, p in owing) for p in local)
        replies = tuple(
            line.text for line in self.feed(table.row.host_channel, table.row.host_address, 3, this_game=True,
                                            table_id=table_id) if not line.secret
        )
        board = self._board_view(table, language) if state is not None and table.status is not TableStatus.LOBBY \
            else None
        codes: dict[str, int] = table.row.options.get(MOVE_CODES, {})
        return HostView(seats=_view(table).seats, local=names, board=board, replies=replies,
                        table_votes=bool(table.row.options.get("physical_voting")),
                        reminder_minutes=int(table.row.options.get("reminder_minutes") or 0),
                        moves=tuple(MoveCode(table.names[p], c) for c, p in codes.items() if p < len(table.names)),
                        free_seats=max(MAX_PLAYERS - len(table.seats), 0),
                        controls=tuple(c.value for c in game_controls(table.status)),
                        seat_controls=table.status in LIVE)

    # --- pieces ---------------------------------------------------------------------------------------------

    def _board_view(self, table: Table, language: str) -> BoardView:
        assert table.state is not None
        catalog = self.ctx.catalog(table.row.theme, language)
        lines = tuple(m.text for m in render.board_messages(public_view(table.state), table.info(), catalog))
        return BoardView(lines)

    def _latest(self, table: Table, language: str) -> tuple[tuple[str, bool], ...]:
        """The latest public results, newest first, each with whether it is what players claim: the claims shown
        with a result come right after it, as one block of claims (the running vote count is on the board)."""
        assert table.state is not None
        catalog = self.ctx.catalog(table.row.theme, language)
        info, view = table.info(), public_view(table.state)
        after = _claims_after(table)
        latest: list[tuple[str, bool]] = []
        for index in reversed(range(len(table.log))):
            if len(latest) >= LATEST:
                break
            event = table.log[index]
            if index in after:
                said = render.claim_messages(after[index], view, info, catalog)
                latest.extend((m.text, True) for m in reversed(said))
            if event.audience.everyone and not isinstance(event, VoteProgressed):
                latest.extend(reversed([(m.text, False)
                                        for m in render.event_messages(event, None, info, catalog, board=view)]))
        return tuple(latest[:LATEST])


def _claims_after(table: Table) -> dict[int, list[Claim]]:
    """The claims shown so far, by the index of the result in the log they rode along with: for a computer
    player's, the session's end, investigation or peek it speaks of; for a person's, the next result after it."""
    after: dict[int, list[Claim]] = {}
    log = table.log
    for said in table.said:
        if said.shown is None:
            continue  # said by a person since the last result: it waits for the next one
        # Back from when it was shown: the last session's end, investigation or peek, else the last public result
        # (a person's claim said before a vote rides with the vote's result). A computer player's is close by.
        first = said.logged if said.logged < said.shown else 0
        found: int | None = None
        for i in reversed(range(first, said.shown)):
            event = log[i]
            if not event.audience.everyone or isinstance(event, (VoteCast, VoteProgressed)):
                continue
            if type(event) in SPEECH_EVENTS:
                found = i
                break
            found = i if found is None else found
        if found is not None:
            after.setdefault(found, []).append(said.claim)
    return after


_COVERS = {
    "deal-role": "role", "knowledge-title": "knowledge", "party-membership-seen": "investigation",
    "top-policies-seen": "peek", "policy-discarded": "cards", "prompt-discard": "cards", "prompt-enact": "cards",
    "prompt-enact-veto": "cards", "prompt-vote-change": "vote", "vote-recorded": "vote", "vote-changed": "vote",
}
"""What a secret message's cover says it hides (``web-cover-<topic>``), by the message's catalog id."""


def cover_of(message_id: str) -> str:
    """The topic a cover over this secret message names (``web-cover-<topic>`` in the catalogs)."""
    return _COVERS.get(message_id, "secret")


def _private(text: str, secret: bool) -> str:
    """A secret's text without its neutral header line: on a page the cover says that much already."""
    return text.split("\n", 1)[1] if secret and "\n" in text else text


def _card(action: Action) -> str:
    """The project's card an answer shows on a page: a policy's or a ballot's; else none."""
    m = move(action)
    if m.card is not None:
        return f"policy-{m.card.name.lower()}"
    return ("vote-ja" if m.yes else "vote-nein") if m.kind is MoveKind.VOTE else ""


def _reveal(table: Table, info: TableInfo, catalog: Catalog) -> RevealView | None:
    """This game's latest decided election, from its public event (the ballots are public once all are in)."""
    for event in reversed(table.log):
        if isinstance(event, GameStarted):
            return None
        if isinstance(event, ElectionDecided):
            assert event.audience.everyone
            ballots = tuple(Ballot(info.name(seat), ja, catalog.term("ja" if ja else "nein"))
                            for seat, ja in event.votes)
            return RevealView(render.vote_title(event, info, catalog), event.elected, ballots)
    return None


def _status(ctx: Context, table: Table, language: str) -> tuple[str, ...]:
    """A paused game, or one the host ended before it was decided, says so (the board alone would not)."""
    catalog = ctx.catalog(table.row.theme, language)
    if table.status is TableStatus.PAUSED:
        return (catalog.text("game-paused"),)
    if table.status is TableStatus.OVER and not any(isinstance(e, GameEnded) for e in table.log):
        assert table.state is not None
        roles = render.roles_message(table.state.roles, table.info(), catalog).text
        return catalog.text("game-ended-by-host"), roles
    return ()


def _view(table: Table) -> TableView:
    seats = tuple(SeatInfo(s.position, s.name, s.channel, s.address, s.language, s.computer,
                           stand_in=s.computer and s.channel != COMPUTER_CHANNEL) for s in table.seats)
    step = table.state.step if table.state is not None else 0
    language = table.public_language if table.group else table.host_language
    return TableView(
        id=table.id, code=table.row.code, status=Status(table.status.value), theme=table.row.theme,
        language=language, host_channel=table.row.host_channel, host_address=table.row.host_address, seats=seats,
        group=table.group is not None, game=table.row.game,
        # Changes whenever the board may have: game, step (every action is one), theme. Public facts only.
        board_version=f"{table.row.game}.{step}.{table.row.theme}",
    )

