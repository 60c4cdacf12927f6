"""The lobby: opening a table, taking and reclaiming seats, the seating order, computer players, the start."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from typing import Any, Final

from . import record as records
from .bots import Memory
from .catalog import DEFAULT_LANGUAGE, DEFAULT_THEME, Catalog, UnknownCatalog
from .channels import Kind, Outbound
from .commands import Inbound, Join, OpenTable
from .context import Context
from .engine import awaiting, new_game, opening_events
from .engine.types import MAX_PLAYERS, MIN_PLAYERS
from .fanout import (
    announce_seats,
    knowledge,
    prompt_for,
    public_recipients,
    publish,
    say,
    say_seating,
    seat_mark,
    show_seats,
    start_controls,
    tell,
    words,
)
from .names import clean_name, has_letters, match_name, name_taken, names_in, reader_word, unique_name
from .outbox import COMPUTER_CHANNEL, Outgoing, Reply
from .store import SeatRow, TableRow, TableStatus
from .tables import HOST_LANGUAGE, PUBLIC_LANGUAGE, Table, decision_id

CODE_ALPHABET: Final = "ACDEFHJKMNPRTUVWXY3479"
"""Join-code characters: no look-alikes (0/O, 1/I/L, 2/Z, 5/S, 6/G, 8/B) and no vowels that spell words."""
CODE_LENGTH: Final = 5
ID_ALPHABET: Final = "abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789"
ID_LENGTH: Final = 12
"""A table's own id (about 70 bits): it names the table in button data and in its screen's URL."""
MOVE_CODES: Final = "move_codes"
"""Table option: one-time codes that move a seat to a new phone, and the seat each moves."""


def open_table(ctx: Context, inbound: Inbound, command: OpenTable, out: Outgoing) -> Table | None:
    """A new table hosted by the sender (in the group it was typed in, if asked there)."""
    now = out.now
    theme = command.theme or DEFAULT_THEME
    language = inbound.language or DEFAULT_LANGUAGE
    reply = Reply(inbound.channel, inbound.address, language)
    sender = f"{inbound.channel}:{inbound.address}"
    if (wait := ctx.openings.peek(sender, now)) > 0:
        # Each table is a lobby kept for days: a loop of "newgame" (or a stranger's) must not add them without end.
        say(ctx, out, reply, DEFAULT_THEME, "open-try-again", minutes=math.ceil(wait / 60))
        return None
    try:
        Catalog.load(theme, language)
    except UnknownCatalog:
        say(ctx, out, reply, DEFAULT_THEME, "unknown-theme", theme=theme)
        return None
    if command.seat and (other := ctx.tables.seated_elsewhere(inbound.channel, inbound.address, "")) is not None:
        # One person, one table: a second seat's prompts and the answers to them would be mixed up.
        if other.status is TableStatus.LOBBY:
            say(ctx, out, reply, other.row.theme, "open-seated-elsewhere-lobby", code=other.row.code or "")
        else:
            say(ctx, out, reply, other.row.theme, "seated-elsewhere")
        return None
    name = clean_name(command.name)
    # Never a number ("1" would read as an option's number in every list of names), nor "You".
    unfit = command.seat and (not has_letters(name) or reader_word(name))
    if unfit and command.ask_name:
        say(ctx, out, reply, theme, "name-reserved" if reader_word(name) else "name-refused", name=name)
        return None
    table_id = "".join(ctx.codes.choice(ID_ALPHABET) for _ in range(ID_LENGTH))
    code = new_code(ctx)
    public = command.public and inbound.chat is not None
    row = TableRow(
        id=table_id,
        code=code,
        status=TableStatus.LOBBY,
        theme=theme,
        host_channel=inbound.channel,
        host_address=inbound.address,
        public_channel=inbound.channel if public else None,
        public_address=inbound.chat if public else None,
        options={"physical_voting": command.physical_voting, HOST_LANGUAGE: language,
                 **({PUBLIC_LANGUAGE: language} if public else {})},
        game=0,
        setup=None,
        decision_step=0,
    )
    ctx.store.insert_table(row, now)
    # Only a table opened and stored counts: a refused one (a wrong theme), or one the disk refused, costs nothing.
    out.committed.append(lambda: ctx.openings.check(sender, now))
    seats = []
    refused = ""  # the name the host gave that cannot be one (they are told once the table is open)
    if command.seat:
        if unfit:
            # The table opens all the same (Telegram names the host after their account); the host may rename.
            refused, name = name, ctx.catalog(theme, language).text("host-name")
        seats.append(SeatRow(0, name, inbound.channel, inbound.address, language, False))
    ctx.store.replace_seats(table_id, seats)
    table = Table(row, seats)
    ctx.tables.add(table)
    out.table_id = table_id
    # A channel may show the join code (a QR code, a button) in the group the table was opened in: there it
    # speaks to the table, not to the host.
    if public:
        text = words(ctx, reply, theme, "table-opened-group", code=code)
    else:
        text = words(ctx, reply, theme, "table-opened", code=code)
    out.put(reply.channel, reply.address, Outbound(
        Kind.JOIN, text, table=table_id, join_code=code, shown_in=row.public_address,
        options=start_controls(), language=language, message_id="table-opened",
    ))
    if refused:
        say(ctx, out, reply, theme, "host-name-refused", name=refused, host=seats[0].name)
    return table


def new_code(ctx: Context) -> str:
    """A join code no open table has."""
    while True:
        code = "".join(ctx.codes.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))
        if ctx.store.table_by_code(code) is None:
            return code


def join(ctx: Context, inbound: Inbound, command: Join, out: Outgoing) -> Table | None:
    """Take a seat with a join code (or move a seat here with a move code); returns the table it is about."""
    language = inbound.language or DEFAULT_LANGUAGE
    reply = Reply(inbound.channel, inbound.address, language)
    code = command.code.strip().upper()
    table = ctx.tables.by_code(code)
    wait = ctx.guesses.attempt(f"{inbound.channel}:{inbound.address}", table is not None or _moves(ctx, code),
                               out.now)
    if wait > 0:
        # The same answer for a real code and a guess: a guesser learns nothing until the bucket refills.
        say(ctx, out, reply, DEFAULT_THEME, "try-again", seconds=math.ceil(wait))
        return None
    if table is None:
        moved = reclaim(ctx, inbound, code, out)
        if moved is None:
            say(ctx, out, reply, DEFAULT_THEME, "no-such-table", code=code)
        return moved
    out.table_id = table.id
    theme = table.row.theme
    caps = ctx.caps(inbound.channel)
    if table.status is not TableStatus.LOBBY:
        say(ctx, out, reply, theme, "lobby-closed")
    elif table.seat_of(inbound.channel, inbound.address) is not None:
        say(ctx, out, reply, theme, "already-seated")
    elif (other := ctx.tables.seated_elsewhere(inbound.channel, inbound.address, table.id)) is not None:
        # One person, one table: a second seat's prompts and the answers to them would be mixed up.
        if other.status is TableStatus.LOBBY:
            say(ctx, out, reply, theme, "seated-elsewhere-lobby", code=other.row.code or "")
        else:
            say(ctx, out, reply, theme, "seated-elsewhere")
    elif len(table.seats) >= MAX_PLAYERS:
        say(ctx, out, reply, theme, "table-full", most=MAX_PLAYERS)
    elif not (name := clean_name(command.name)) and not caps.forms:
        # The QR code's text carries no name: ask for one before the seat is taken.
        say(ctx, out, reply, theme, "name-asked", code=code)
    elif not has_letters(name) and caps.forms:
        # A page's form is still in front of its person: no word on what to type.
        say(ctx, out, reply, theme, "name-refused")
    elif not has_letters(name):
        say(ctx, out, reply, theme, "name-refused-join", code=code)
    elif reader_word(name) and caps.forms:
        say(ctx, out, reply, theme, "name-reserved", name=name)
    elif reader_word(name):
        say(ctx, out, reply, theme, "name-reserved-join", name=name, code=code)
    else:
        name = unique_name(name, table.names)
        table.reseat(ctx.store, [*table.seats, SeatRow(0, name, inbound.channel, inbound.address, language, False)])
        if table.group is None:
            say(ctx, out, reply, theme, "table-joined", name=name, players=len(table.seats))
            announce_seats(ctx, table, out, "seat-taken", name=name)
        else:
            # The group's seat list first: the welcome goes with the list that shows the new seat (a paced group
            # holds it that long at most), and one still waiting when the deal comes goes with the deal.
            announce_seats(ctx, table, out, "seat-taken", name=name)
            say(ctx, out, reply, theme, "table-joined", name=name, players=len(table.seats))
    return table


def _moves(ctx: Context, code: str) -> bool:
    """True if ``code`` is some seat's move code."""
    return any(code in table.row.options.get(MOVE_CODES, {}) for table in ctx.tables.with_move_code(code))


def reclaim(ctx: Context, inbound: Inbound, code: str, out: Outgoing) -> Table | None:
    """A seat's move code, sent from a new phone: the seat moves there. None if no table has that code."""
    now = out.now
    for table in ctx.tables.with_move_code(code):
        codes: dict[str, int] = dict(table.row.options.get(MOVE_CODES, {}))
        if code not in codes:
            continue
        out.table_id = table.id
        position = codes[code]
        seated = table.seat_of(inbound.channel, inbound.address)
        if seated is not None and seated != position:
            # One phone, one seat: a phone that plays another seat here would act and read for both.
            say(ctx, out, Reply(inbound.channel, inbound.address, table.seats[seated].language), table.row.theme,
                "already-seated")
            return table
        del codes[code]
        old = table.seats[position]
        language = inbound.language or old.language
        table.seats[position] = replace(old, channel=inbound.channel, address=inbound.address, language=language)
        ctx.store.replace_seats(table.id, table.seats)
        table.set_option(ctx.store, now, **{MOVE_CODES: codes})
        reply = Reply(inbound.channel, inbound.address, language)
        say(ctx, out, reply, table.row.theme, "phone-moved", name=old.name)
        if table.state is not None:
            knowledge(ctx, table, position, reply, out)
            prompt = prompt_for(ctx, table, table.seats[position])
            if position in awaiting(table.state) and prompt is not None:
                out.add(inbound.channel, inbound.address, prompt, decision=table.row.decision_step, table=table.id,
                        language=language)
        return table
    return None


def add_computers(ctx: Context, table: Table, count: int | None, reply: Reply, out: Outgoing) -> None:
    """The host fills seats with computer players (``count``; None: up to the fewest players a game needs). A full
    table, or nothing to add, is a private reply that changes nothing; more than fit adds those that fit, and says
    so."""
    if table.status is not TableStatus.LOBBY:
        say(ctx, out, reply, table.row.theme, "lobby-closed")
        return
    free = MAX_PLAYERS - len(table.seats)
    if free <= 0:
        say(ctx, out, reply, table.row.theme, "table-full", most=MAX_PLAYERS)
        return
    wanted = max(MIN_PLAYERS - len(table.seats), 0) if count is None else count
    if wanted <= 0:
        # Enough players for a game already (or none asked for): never "0 computer players joined".
        say(ctx, out, reply, table.row.theme, "computers-none", players=len(table.seats), least=MIN_PLAYERS,
            most=MAX_PLAYERS)
        return
    added = min(wanted, free)
    catalog = ctx.catalog(table.row.theme, reply.language)
    seats = list(table.seats)
    for _ in range(added):
        n = sum(1 for s in seats if s.computer) + 1
        name = unique_name(catalog.text("computer-name", n=n), [s.name for s in seats])
        seats.append(SeatRow(len(seats), name, COMPUTER_CHANNEL, f"{table.id}/{len(seats)}", DEFAULT_LANGUAGE, True))
    table.reseat(ctx.store, seats)
    if added < wanted:
        announce_seats(ctx, table, out, "computers-added-full", added=added, most=MAX_PLAYERS)
    else:
        announce_seats(ctx, table, out, "computers-added", added=added)


def reseat(ctx: Context, table: Table, names: Sequence[str], reply: Reply, out: Outgoing) -> None:
    """The host gives the whole seating order."""
    if not _in_lobby(ctx, table, reply, out):
        return
    picked = [match_name(n, table.names) for n in names_in(names, table.names)]
    if None in picked or len(set(picked)) != len(table.seats) or len(picked) != len(table.seats):
        say_seating(ctx, out, reply, table, "seating-mismatch", numbered=False)
        return
    by_name = {s.name: s for s in table.seats}
    table.reseat(ctx.store, [by_name[n] for n in picked if n])
    announce_seats(ctx, table, out, "seats-list")


def move_seat(ctx: Context, table: Table, name: str, position: int, reply: Reply, out: Outgoing) -> None:
    """The host moves one seat to a place in the order (1-based)."""
    if not _in_lobby(ctx, table, reply, out):
        return
    found = match_name(name, table.names)
    if found is None or not 1 <= position <= len(table.seats):
        say_seating(ctx, out, reply, table, "seating-mismatch", numbered=False)
        return
    order = [s for s in table.seats if s.name != found]
    order.insert(position - 1, next(s for s in table.seats if s.name == found))
    table.reseat(ctx.store, order)
    announce_seats(ctx, table, out, "seats-list")


def remove_seat(ctx: Context, table: Table, name: str, reply: Reply, out: Outgoing) -> None:
    """The host takes a seat out of the lobby; its player is told."""
    if not _in_lobby(ctx, table, reply, out):
        return
    found = match_name(name, table.names)
    if found is None:
        say_seating(ctx, out, reply, table, "seating-mismatch", numbered=False)
        return
    gone = next(s for s in table.seats if s.name == found)
    table.reseat(ctx.store, [s for s in table.seats if s is not gone])
    say(ctx, out, Reply(gone.channel, gone.address, gone.language), table.row.theme, "seat-removed", name=found)
    announce_seats(ctx, table, out, "seats-list")


def lobby_control(ctx: Context, table: Table, token: str, reply: Reply, out: Outgoing) -> None:
    """One of the host's seat controls (``fanout.lobby_controls``). A move names the person it moves, one place up
    from wherever they sit now: quick presses on a list not yet redrawn each apply, in order. One whose person
    left (or was renamed), or sits first already, is refused with the reason."""
    if token == "go":
        start(ctx, table, reply, out)
    elif token == "cpu":
        add_computers(ctx, table, 1, reply, out)
    elif token.startswith("u") and _in_lobby(ctx, table, reply, out):
        named = [seat for seat in table.seats if seat_mark(seat.name) == token[1:]]
        theme = table.row.theme
        if len(named) != 1:  # (a control of an older kind, after an upgrade, names nobody either)
            _refused(ctx, table, reply, out, "seats-changed", words(ctx, reply, theme, "seats-changed"))
        elif named[0].position == 0:
            _refused(ctx, table, reply, out, "seat-first", words(ctx, reply, theme, "seat-first", name=named[0].name))
        else:
            move_seat(ctx, table, named[0].name, named[0].position, reply, out)  # one place up (1-based)


def _refused(ctx: Context, table: Table, reply: Reply, out: Outgoing, message_id: str, text: str) -> None:
    """Why a control did nothing, where it was pressed: a toast where the channel has them, else a message."""
    if ctx.caps(reply.channel).toasts:
        out.notice = text
    else:
        out.put(reply.channel, reply.address, Outbound(Kind.NOTE, text, table=table.id, language=reply.language,
                                                       message_id=message_id))



def show_lobby(ctx: Context, table: Table, reply: Reply, out: Outgoing) -> None:
    """The seat list, asked for (the board before a game)."""
    if table.status is TableStatus.LOBBY:
        show_seats(ctx, table, out, reply, "seats-list")
    else:
        say_seating(ctx, out, reply, table, "seats-list", players=len(table.seats))


def _in_lobby(ctx: Context, table: Table, reply: Reply, out: Outgoing) -> bool:
    if table.status is not TableStatus.LOBBY:
        say(ctx, out, reply, table.row.theme, "lobby-closed")
        return False
    return True


def start(ctx: Context, table: Table, reply: Reply, out: Outgoing) -> None:
    """A new game with the seats as they are (from the lobby, or a rematch after a game)."""
    if table.status not in (TableStatus.LOBBY, TableStatus.OVER):
        say(ctx, out, reply, table.row.theme, "lobby-closed")
        return
    players = len(table.seats)
    if not MIN_PLAYERS <= players <= MAX_PLAYERS:
        say(ctx, out, reply, table.row.theme, "player-count", players=players, least=MIN_PLAYERS, most=MAX_PLAYERS)
        return
    now = out.now
    state = new_game(players, seed=ctx.seed())
    setup = records.to_json(table.names, state, [])
    del setup["actions"]
    game = table.row.game + 1
    # The join code stops taking players; the table keeps its own id for everything after.
    options = {**table.row.options, "started": now}  # the cost of this game counts from here
    table.update(ctx.store, now, status=TableStatus.PLAYING, code=None, setup=setup, game=game,
                 decision_step=decision_id(game, 0), options=options)
    ctx.store.append_setup(table.id, game, setup, now)  # kept per game: a rematch leaves this one exportable
    table.state, table.actions, table.log, table.said = state, [], [], []
    table.memories = {s.position: Memory(s.position) for s in table.seats if s.computer}
    announce_seats(ctx, table, out, "game-starting", closed=True)
    publish(ctx, table, opening_events(state), out, now, new_decision=True)


def rematch(ctx: Context, table: Table, reply: Reply, out: Outgoing) -> None:
    """The next game at this table, the same seats."""
    tell(ctx, table, out, "rematch")
    start(ctx, table, reply, out)


def leave(ctx: Context, table: Table, seat: int | None, reply: Reply, out: Outgoing) -> None:
    """The sender leaves the lobby; a host who leaves hands the table to the next person at it (or closes it, if
    nobody else is there). In a game a seat cannot just go: the host can have a computer player stand in."""
    if seat is None:
        say(ctx, out, reply, table.row.theme, "not-at-table")
        return
    if table.status is not TableStatus.LOBBY:
        say(ctx, out, reply, table.row.theme, "leave-in-game")
        return
    gone = table.seats[seat]
    table.reseat(ctx.store, [s for s in table.seats if s is not gone])
    say(ctx, out, reply, table.row.theme, "you-left")
    if table.is_host(gone.channel, gone.address) and not pass_host(ctx, table, out):
        table.set_status(ctx.store, TableStatus.CLOSED, out.now)
        return
    announce_seats(ctx, table, out, "seat-left", name=gone.name)


def pass_host(ctx: Context, table: Table, out: Outgoing, message_id: str = "host-passed", **params: Any) -> bool:
    """The host role to the next person at the table (in seating order) the table can reach; False if nobody is
    left to take it. The table is told (``message_id``)."""
    nxt = next((s for s in table.seats if not s.computer and not table.is_host(s.channel, s.address)
                and not table.opted_out(s.channel, s.address)), None)
    if nxt is None:
        return False
    table.update(ctx.store, out.now, host_channel=nxt.channel, host_address=nxt.address)
    tell(ctx, table, out, message_id, name=nxt.name, **params)
    return True


def rename(ctx: Context, table: Table, seat: int | None, name: str, reply: Reply, out: Outgoing) -> None:
    """The sender's name from now on. In a game it changes the name shown, never the game's record."""
    if seat is None:
        say(ctx, out, reply, table.row.theme, "not-at-table")
        return
    cleaned = clean_name(name)
    if not has_letters(cleaned):
        say(ctx, out, reply, table.row.theme, "name-refused")
        return
    if reader_word(cleaned):
        say(ctx, out, reply, table.row.theme, "name-reserved", name=cleaned)
        return
    old = table.seats[seat]
    if name_taken(cleaned, [other.name for other in table.seats if other is not old]):
        # Another's name (or the same letters without their accents): every list would show two alike, and what
        # anyone typed for either would mean both.
        say(ctx, out, reply, table.row.theme, "name-taken", name=cleaned)
        return
    new = cleaned
    table.seats[seat] = replace(old, name=new)
    ctx.store.replace_seats(table.id, table.seats)
    lobby = table.status is TableStatus.LOBBY
    for to in public_recipients(ctx, table):
        # The one renamed is told in the second person: their own chat never reads "Player is now called Zoé".
        yours = (to.channel, to.address) == (old.channel, old.address)
        if lobby and yours:
            show_seats(ctx, table, out, to, "you-renamed", name=new)
        elif lobby:
            show_seats(ctx, table, out, to, "renamed", old=old.name, name=new)
        elif yours:
            say(ctx, out, to, table.row.theme, "you-renamed-in-game", name=new)
        else:
            say(ctx, out, to, table.row.theme, "renamed-in-game", old=old.name, name=new)
