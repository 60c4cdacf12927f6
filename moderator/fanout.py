"""Who hears what: events rendered for every recipient entitled to them, prompts for whoever owes a decision,
and the service's own replies and announcements.

Every event says who may see it (``audience``); ``publish`` renders it only for those seats, in each seat's
language and for its channel's capabilities, and once for the table's public chat if the event is public.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import fields
from typing import Any, Final

from . import render
from .board_view import board_of
from .channels import Kind, Option, Outbound, Seating
from .claims import Claim
from .context import Context
from .engine import Event, Phase, awaiting, public_view, view_for
from .engine.events import ElectionDecided, GameEnded, LegislativeSessionStarted
from .outbox import Outgoing, Reply
from .render import Message
from .store import SeatRow, TableStatus
from .tables import Table, decision_id, remember

PUBLIC_RESULTS: Final = "public_results"
"""Table option: ``"host"`` sends public results to the host only, not to every paid-per-message seat (cost)."""
PUBLIC_TO_HOST: Final = "host"


# --- the service's own words ------------------------------------------------------------------------------


def words(ctx: Context, to: Reply, theme: str, message_id: str, /, **params: Any) -> str:
    """One of the service's own messages for a recipient (in the short form if its channel needs it); a name, a
    code or a list of seats that runs the other way than the sentence's language is isolated in it."""
    compact = ctx.caps(to.channel).text_limit is not None
    return ctx.catalog(theme, to.language).said(message_id, sms=compact, **params)


def say(ctx: Context, out: Outgoing, to: Reply, theme: str, message_id: str, /, *, kind: Kind = Kind.NOTE,
        **params: Any) -> None:
    """A private reply from the service's own messages (lobby, host controls)."""
    text = words(ctx, to, theme, message_id, **params)
    out.put(to.channel, to.address, Outbound(kind, text, message_id=message_id, table=out.table_id,
                                             language=to.language))


def tell(ctx: Context, table: Table, out: Outgoing, message_id: str, /, *, kind: Kind = Kind.NOTE,
         **params: Any) -> None:
    """A public announcement from the service: to the group, or to every seat if there is none."""
    for reply in public_recipients(ctx, table):
        say(ctx, out, reply, table.row.theme, message_id, kind=kind, **params)


def tell_host(ctx: Context, table: Table, out: Outgoing, message_id: str, /, **params: Any) -> None:
    """A private note to the table's host."""
    host = Reply(table.row.host_channel, table.row.host_address, table.host_language)
    say(ctx, out, host, table.row.theme, message_id, **params)


def public_recipients(ctx: Context, table: Table) -> Iterator[Reply]:
    """Where public results go: the table's group chat, else every human seat that gets them."""
    group = table.group
    if group is not None:
        yield Reply(group[0], group[1], table.public_language)
        return
    for seat in table.seats:
        if not seat.computer and gets_public(ctx, table, seat):
            yield Reply(seat.channel, seat.address, seat.language)


def gets_public(ctx: Context, table: Table, seat: SeatRow) -> bool:
    """False for a paid-per-message seat when the host chose "host only" (``public_results``): the host reads
    the results out."""
    if table.row.options.get(PUBLIC_RESULTS) != PUBLIC_TO_HOST or not ctx.caps(seat.channel).paid_per_message:
        return True
    return table.is_host(seat.channel, seat.address)


# --- the lobby's seat list -------------------------------------------------------------------------------


def seat_mark(name: str) -> str:
    """A short fingerprint of one seat's name: a move control names the person it moves, so one pressed on a list
    drawn before other moves (quick presses, the list not yet redrawn) still moves that person."""
    return f"{zlib.crc32(name.encode()) & 0xFFFFFFFF:08x}"


# The controls' labels are signs, not words: the same in every language and theme.
_UP: Final = "\u2b06\ufe0f "
_COMPUTER: Final = "\U0001f916 +1"
_GO: Final = "\u25b6\ufe0f"


def lobby_controls(table: Table) -> tuple[Option, ...]:
    """The host's seat controls: move a seat up one place (the seat's person, wherever they sit when it is
    pressed), add a computer player, start."""
    ups = tuple(Option(_UP + seat.name, f"u{seat_mark(seat.name)}") for seat in table.seats[1:])
    return (*ups, *start_controls())


def start_controls() -> tuple[Option, ...]:
    """Add a computer player, start the game."""
    return Option(_COMPUTER, "cpu"), Option(_GO, "go")


def seating_text(table: Table, *, short: bool = False, gsm7: bool = True, numbered: bool = True) -> str:
    """The seats in order (``short``: names as a short message shows them, transliterated for ``gsm7``)."""
    info = table.info()
    names = [info.name(seat, short=short, gsm7=gsm7) for seat in range(len(table.names))]
    return ", ".join(f"{i + 1}. {name}" if numbered else name for i, name in enumerate(names))


def seating_words(ctx: Context, to: Reply, table: Table, message_id: str, /, *, numbered: bool = True,
                  **params: Any) -> str:
    """A message that lists the seats (``seating``): with the names as given, or shortened where one text of the
    channel would not hold them (ten 20-character names)."""
    text = words(ctx, to, table.row.theme, message_id, seating=seating_text(table, numbered=numbered), **params)
    caps = ctx.caps(to.channel)
    limit = caps.limit(to.language)
    if limit is not None and len(caps.written(text, to.language)) > limit:
        short = seating_text(table, short=True, gsm7=caps.transliterates(to.language), numbered=numbered)
        text = words(ctx, to, table.row.theme, message_id, seating=short, **params)
    return text


def say_seating(ctx: Context, out: Outgoing, to: Reply, table: Table, message_id: str, /, *, numbered: bool = True,
                **params: Any) -> None:
    """A private reply that lists the seats (see ``seating_words``)."""
    text = seating_words(ctx, to, table, message_id, numbered=numbered, **params)
    out.put(to.channel, to.address, Outbound(Kind.NOTE, text, message_id=message_id, table=out.table_id,
                                             language=to.language))


def announce_seats(ctx: Context, table: Table, out: Outgoing, message_id: str, /, *, closed: bool = False,
                   **params: Any) -> None:
    """The seat list to the table (one lobby message a channel may edit in place); the host, and the group
    the host opened the table in, get the seating controls with it."""
    for reply in public_recipients(ctx, table):
        show_seats(ctx, table, out, reply, message_id, closed=closed, **params)


def show_seats(ctx: Context, table: Table, out: Outgoing, reply: Reply, message_id: str, /, *,
               closed: bool = False, **params: Any) -> None:
    """The seat list to one recipient."""
    host = table.is_host(reply.channel, reply.address) or reply.address == table.row.public_address
    controls = lobby_controls(table) if host and not closed else ()
    text = seating_words(ctx, reply, table, message_id, players=len(table.seats), **params)
    out.put(reply.channel, reply.address, Outbound(
        Kind.LOBBY, text, table=table.id, seating=Seating(table.names, controls, open=not closed),
        # A closed list belongs to the game's first decision: the game's opening lines say it again.
        decision=table.row.decision_step if closed else None, language=reply.language, message_id=message_id,
    ))



# --- the game ---------------------------------------------------------------------------------------------


def prompt_for(ctx: Context, table: Table, seat: SeatRow) -> Message | None:
    """What this seat must decide now, for its channel; None if nothing."""
    if table.state is None:
        return None
    catalog = ctx.catalog(table.row.theme, seat.language)
    return render.prompt(view_for(table.state, seat.position), table.info(), catalog, caps=ctx.caps(seat.channel))


def publish(ctx: Context, table: Table, events: Sequence[Event], out: Outgoing, now: float, *,
            new_decision: bool) -> None:
    """Log events, render them for every entitled recipient, and prompt whoever owes a new decision."""
    state = table.state
    assert state is not None
    ctx.store.append_events(table.id, table.row.game, len(table.log),
                            [(state.step, _kind(e), _payload(e)) for e in events])
    table.log.extend(events)
    for position, memory in table.memories.items():
        table.memories[position] = remember(memory, events)
    if new_decision:
        table.update(ctx.store, now, decision_step=decision_id(table.row.game, state.step))
        table.arm_reminder(ctx.store, now)
    over = state.phase is Phase.GAME_OVER
    if over:
        table.update(ctx.store, now, status=TableStatus.OVER)
    board = public_view(state)
    info = table.info()
    decision = table.row.decision_step
    group = table.group
    if group is not None:
        channel, address = group
        catalog = ctx.catalog(table.row.theme, table.public_language)
        caps = ctx.caps(channel)
        for message in render.batch_messages(events, None, info, catalog, board=board, caps=caps):
            out.add(channel, address, message, decision=decision, table=table.id, language=table.public_language)
        if caps.images:
            out.board(channel, address, board_of(board, info), table.row.game, table.public_language)
    waiting = set(awaiting(state)) if new_decision else set()
    physical = bool(table.row.options.get("physical_voting")) and state.phase is Phase.ELECTION
    start = len(table.log) - len(events)
    held, hold_from = _held_results(ctx, table, events, start, info, board, now)
    # An event renders the same for every seat that may see it (render's contract): once per language/channel.
    rendered: dict[tuple[int, str, str], list[Message]] = {}
    for seat in table.seats:
        if seat.computer:
            continue
        caps = ctx.caps(seat.channel)
        catalog = ctx.catalog(table.row.theme, seat.language)
        public = group is None and gets_public(ctx, table, seat)
        holds = public and info.table_votes and caps.paid_per_message
        indices = [*(held if holds else ()), *range(start, len(table.log))]
        for i in indices:
            event = table.log[i]
            audience = event.audience
            # The end reaches every seat, also where the host reads results out (HOSTONLY) or a group shows them
            # on another channel: who won, why, and who was who.
            end = isinstance(event, GameEnded) and (group is None or seat.channel != group[0])
            if not audience.includes(seat.position) or not (public or end or not audience.everyone):
                continue
            if holds and audience.everyone and hold_from is not None and i >= hold_from:
                continue  # this government's election rides with the session's result
            key = (i, seat.language, seat.channel)
            messages = rendered.get(key)
            if messages is None:
                messages = render.event_messages(event, seat.position, info, catalog, caps=caps, board=board)
                rendered[key] = messages
            for message in messages:
                out.add(seat.channel, seat.address, message, decision=decision, table=table.id,
                        language=seat.language)
        if seat.position in waiting and not physical:
            prompt = render.prompt(view_for(state, seat.position), info, catalog, caps=caps)
            if prompt is not None:
                out.add(seat.channel, seat.address, prompt, decision=decision, table=table.id, language=seat.language)
        if (physical and new_decision and seat.position == state.president
                and not render.nomination_tells_table_vote(board, info, catalog, caps)):  # else it was said already
            say(ctx, out, Reply(seat.channel, seat.address, seat.language), table.row.theme, "physical-vote-prompt")
    if over:
        finish(ctx, table, out)


HELD_RESULTS: Final = "held_results"
"""Table option (votes at the table): ``[game, log index]`` of an elected government's election, whose public
results phones that pay per text get with the session's result (the table saw the cards; the President and
Chancellor have their prompts), or None."""


def _held_results(ctx: Context, table: Table, events: Sequence[Event], start: int, info: render.TableInfo,
                  board: Any, now: float) -> tuple[list[int], int | None]:
    """With votes at the table: (log indices of public events held from an earlier input that ride with this
    one's, the log index from which this input's public events are held for a later one)."""
    if not info.table_votes:
        return [], None
    state = table.state
    assert state is not None
    mark = table.row.options.get(HELD_RESULTS)
    held: list[int] = []
    if mark is not None and mark[0] == table.row.game:
        catalog = ctx.catalog(table.row.theme, table.host_language)
        caps = next((ctx.caps(s.channel) for s in table.seats if ctx.caps(s.channel).paid_per_message), None)
        said = caps is not None and any(
            e.audience.everyone and render.event_messages(e, None, info, catalog, caps=caps, board=board)
            for e in events)
        if not said and state.phase is not Phase.GAME_OVER:
            return [], None  # nothing public to ride with yet: the election's results wait on
        # "They legislate, no talking" is over by now: the session's result says what came of it.
        held = [i for i in range(mark[1], start)
                if table.log[i].audience.everyone and not isinstance(table.log[i], LegislativeSessionStarted)]
        table.set_option(ctx.store, now, **{HELD_RESULTS: None})
    elected = [start + i for i, e in enumerate(events) if isinstance(e, ElectionDecided) and e.elected]
    if elected and state.phase in (Phase.LEGISLATIVE_PRESIDENT, Phase.LEGISLATIVE_CHANCELLOR):
        table.set_option(ctx.store, now, **{HELD_RESULTS: [table.row.game, elected[-1]]})
        return held, elected[-1]
    return held, None


_CLAIMED_AFTER: Final = frozenset(("policy-enacted", "policy-enacted-chaos", "veto-accepted", "deck-reshuffled",
                                   "loyalty-investigated", "policy-peek-used"))
"""The results computer players' claims follow (a session's end, an investigation, a peek)."""


def show_claims(ctx: Context, table: Table, out: Outgoing, said: Sequence[Claim]) -> None:
    """Claims to wherever public results go, riding along with the last result queued there by this input (a
    message of their own only where there is none, or where they would not fit the channel's text limit)."""
    assert table.state is not None
    board, info = public_view(table.state), table.info()
    for reply in public_recipients(ctx, table):
        caps = ctx.caps(reply.channel)
        catalog = ctx.catalog(table.row.theme, reply.language)
        messages = render.claim_messages(said, board, info, catalog, caps=caps)
        results = [(i, m) for i, m in out.to(reply.channel, reply.address)
                   if not m.secret and m.kind in (Kind.NOTE, Kind.RESULT, Kind.END, Kind.ASIDE)]
        # After a session, an investigation or a peek, with its result; a person's claim, with the next result.
        queued = [(i, m) for i, m in results if m.message_id in _CLAIMED_AFTER] or results
        if queued and len(messages) == 1:
            index, last = queued[-1]
            joined = last.text + "\n" + messages[0].text
            limit = caps.limit(reply.language)
            if limit is None or len(caps.written(joined, reply.language)) <= limit:
                out.change(index, text=joined)
                continue
        for message in messages:
            out.add(reply.channel, reply.address, message, decision=table.row.decision_step, table=table.id,
                    language=reply.language)


def finish(ctx: Context, table: Table, out: Outgoing) -> None:
    """At the end: the truth timeline to the table (roles were revealed by the last event)."""
    info = table.info()
    for reply in public_recipients(ctx, table):
        catalog = ctx.catalog(table.row.theme, reply.language)
        for message in render.truth_timeline(table.log, info, catalog, caps=ctx.caps(reply.channel)):
            out.add(reply.channel, reply.address, message, table=table.id, language=reply.language)


def reveal_roles(ctx: Context, table: Table, out: Outgoing) -> None:
    """Who was who, to the table (a game the host ended: over is over)."""
    assert table.state is not None
    for reply in public_recipients(ctx, table):
        catalog = ctx.catalog(table.row.theme, reply.language)
        message = render.roles_message(table.state.roles, table.info(), catalog, caps=ctx.caps(reply.channel))
        out.add(reply.channel, reply.address, message, table=table.id, language=reply.language)


def prompt_again(ctx: Context, table: Table, out: Outgoing, note: Callable[[Reply], None] | None = None,
                 seat: int | None = None, waiting: frozenset[tuple[str, str]] = frozenset()) -> list[str]:
    """Send whoever owes a decision (of them only ``seat``, if given; none whose (channel, address) is in
    ``waiting``) its prompt again, after ``note(reply)`` if given; returns their names.

    With physical voting the table votes with cards: during an election the President owes the record of
    the votes, and nobody owes a button.
    """
    state = table.state
    assert state is not None
    physical = table.row.options.get("physical_voting") and state.phase is Phase.ELECTION
    if physical:
        assert state.president is not None
        owing = [table.seats[state.president]]
    else:
        owing = [table.seats[position] for position in awaiting(state)]
    if seat is not None:
        owing = [row for row in owing if row.position == seat]
    owing = [row for row in owing if (row.channel, row.address) not in waiting]
    for row in owing:
        if row.computer or table.opted_out(row.channel, row.address):
            continue  # an opted-out phone: the carrier refuses every text until it opts in
        reply = Reply(row.channel, row.address, row.language)
        if note is not None:
            note(reply)
        if physical:
            say(ctx, out, reply, table.row.theme, "physical-vote-prompt")
            continue
        prompt = prompt_for(ctx, table, row)
        if prompt is not None:
            out.add(row.channel, row.address, prompt, decision=table.row.decision_step, table=table.id,
                    language=row.language)
    return [row.name for row in owing]


# --- the event log ----------------------------------------------------------------------------------------

_KINDS: dict[type, str] = {}
_FIELDS: dict[type, tuple[str, ...]] = {}


def _kind(event: Event) -> str:
    """``event.kind``, worked out once per event class (it depends on the class only)."""
    kind = _KINDS.get(type(event))
    if kind is None:
        kind = _KINDS[type(event)] = event.kind
    return kind


def _payload(event: Event) -> str:
    """An event as JSON for the log (enums as their values)."""

    def value(v: Any) -> Any:
        if isinstance(v, tuple):
            return [value(x) for x in v]
        return v.value if hasattr(v, "value") else v

    names = _FIELDS.get(type(event))
    if names is None:
        names = _FIELDS[type(event)] = tuple(f.name for f in fields(event))
    return json.dumps({name: value(getattr(event, name)) for name in names})


def knowledge(ctx: Context, table: Table, position: int, reply: Reply, out: Outgoing) -> None:
    """Everything this seat knows, privately to ``reply`` (the seat's phone)."""
    assert table.state is not None
    catalog = ctx.catalog(table.row.theme, reply.language)
    for message in render.knowledge_messages(view_for(table.state, position), table.info(), catalog,
                                             caps=ctx.caps(reply.channel)):
        out.add(reply.channel, reply.address, message, table=table.id, language=reply.language)
