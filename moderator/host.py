"""What the host may do (pause, resume, nudge, end, rematch, where public results go, the cost so far,
reminders, a seat's move to a new phone, the theme) and what anyone may set for themselves (their language);
and what the service hears about reachability (an opted-out phone, a blocked bot, a group that moved)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import replace
from typing import Final, assert_never

from .catalog import DEFAULT_LANGUAGE, Catalog, UnknownCatalog, languages, own_name, sms_segments
from .channels import Kind
from .commands import Away, HostCommand
from .context import Context
from .engine import awaiting
from .fanout import (
    PUBLIC_RESULTS,
    PUBLIC_TO_HOST,
    knowledge,
    prompt_again,
    prompt_for,
    reveal_roles,
    say,
    say_seating,
    tell,
)
from .lobby import CODE_ALPHABET, CODE_LENGTH, MOVE_CODES, pass_host, rematch, show_lobby
from .names import match_name
from .outbox import COMPUTER_CHANNEL, Outgoing, Reply
from .render import isolated
from .store import TableStatus
from .tables import AWAY, HOST_LANGUAGE, LIVE, OPTED_OUT, PUBLIC_LANGUAGE, STOPPED_HOST, Table, recall

GAME_CONTROLS: Final[Mapping[TableStatus, tuple[HostCommand, ...]]] = {
    TableStatus.PLAYING: (HostCommand.PAUSE, HostCommand.NUDGE, HostCommand.END),
    TableStatus.PAUSED: (HostCommand.RESUME, HostCommand.END),
    TableStatus.OVER: (HostCommand.REMATCH,),
}
"""The host's controls of a game that each table status takes, in the order a page offers them; the others are
refused in that status, on every channel."""
_BY_STATUS: Final = frozenset(c for controls in GAME_CONTROLS.values() for c in controls)


def game_controls(status: TableStatus) -> tuple[HostCommand, ...]:
    """The host's controls of the game a table in ``status`` takes (``GAME_CONTROLS``)."""
    return GAME_CONTROLS.get(status, ())


def host_command(ctx: Context, table: Table, command: HostCommand, reply: Reply, out: Outgoing) -> None:
    """One host control."""
    now = out.now
    theme = table.row.theme
    if command in _BY_STATUS and command not in game_controls(table.status):
        say(ctx, out, reply, theme, "nothing-to-nudge" if command is HostCommand.NUDGE else "game-not-started")
        return
    match command:
        case HostCommand.PAUSE:
            table.set_status(ctx.store, TableStatus.PAUSED, now)
            tell(ctx, table, out, "game-paused")
        case HostCommand.RESUME:
            table.set_status(ctx.store, TableStatus.PLAYING, now)
            tell(ctx, table, out, "game-resumed")
            nudge(ctx, table, reply, out)
        case HostCommand.NUDGE:
            nudge(ctx, table, reply, out)
        case HostCommand.END:
            table.set_status(ctx.store, TableStatus.OVER, now)
            tell(ctx, table, out, "game-ended-by-host", kind=Kind.END)
            if table.state is not None:  # the game is over: who was who is no longer a secret
                reveal_roles(ctx, table, out)
        case HostCommand.REMATCH:
            rematch(ctx, table, reply, out)
        case HostCommand.PUBLIC_TO_HOST | HostCommand.PUBLIC_TO_ALL:
            to_host = command is HostCommand.PUBLIC_TO_HOST
            table.set_option(ctx.store, now, **{PUBLIC_RESULTS: PUBLIC_TO_HOST if to_host else "all"})
            if to_host:
                say(ctx, out, reply, theme, "public-results-host")
            else:
                say(ctx, out, reply, theme, "public-results-all")
        case HostCommand.COST:
            units, delivered, failed = paid_units(ctx, table)
            if delivered or failed:
                say(ctx, out, reply, theme, "sms-cost-delivery", segments=units, delivered=delivered, failed=failed)
            else:
                say(ctx, out, reply, theme, "sms-cost", segments=units)


def paid_units(ctx: Context, table: Table) -> tuple[int, int, int]:
    """Units (SMS segments) this table's game has sent or queued on paid-per-message channels, and of those sent
    how many the channel reported delivered and not delivered (0 and 0 without reports)."""
    since = float(table.row.options.get("started", 0.0))
    paid = sorted(name for name, caps in ctx.capabilities.items() if caps.paid_per_message)
    queued = sum(
        sms_segments(text) for _, sent_at, text in ctx.store.outbox_texts(table.id, paid, since) if sent_at is None
    )
    statuses = ctx.store.delivery_statuses(table.id, since)
    failed = statuses.get("undelivered", 0) + statuses.get("failed", 0)
    return sum(statuses.values()) + queued, statuses.get("delivered", 0) + statuses.get("read", 0), failed


def nudge(ctx: Context, table: Table, reply: Reply, out: Outgoing) -> None:
    """Prompt again everyone who owes a decision (never a random action on their behalf)."""
    if table.state is None or table.status is not TableStatus.PLAYING:
        say(ctx, out, reply, table.row.theme, "nothing-to-nudge")
        return
    names = prompt_again(ctx, table, out)
    say(ctx, out, reply, table.row.theme, "nudge", names=", ".join(names))


# --- reminders (off by default) -----------------------------------------------------------------------------


def set_reminders(ctx: Context, table: Table, minutes: int | None, reply: Reply, out: Outgoing) -> None:
    """Reminders on (after ``minutes`` without a decision) or off."""
    now = out.now
    table.set_option(ctx.store, now, reminder_minutes=minutes if minutes and minutes > 0 else None)
    table.arm_reminder(ctx.store, now)
    if table.row.options["reminder_minutes"]:
        say(ctx, out, reply, table.row.theme, "reminders-set", minutes=table.row.options["reminder_minutes"])
    else:
        say(ctx, out, reply, table.row.theme, "reminders-off")


def remind(ctx: Context, table: Table, out: Outgoing) -> None:
    """A reminder that fell due: whoever owes a decision is told so and gets the prompt again."""
    minutes = table.row.options.get("reminder_minutes") or 0
    theme = table.row.theme

    def note(reply: Reply) -> None:
        say(ctx, out, reply, theme, "reminder", minutes=minutes)

    prompt_again(ctx, table, out, note)


# --- seats, words and looks -----------------------------------------------------------------------------------


def move_phone(ctx: Context, table: Table, name: str, reply: Reply, out: Outgoing) -> None:
    """A one-time code for the host to give a player whose phone died: sent from another phone, the seat moves."""
    found = match_name(name, table.names)
    if found is None:
        say_seating(ctx, out, reply, table, "seating-mismatch", numbered=False)
        return
    code = "".join(ctx.codes.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH + 2))
    codes = {**table.row.options.get(MOVE_CODES, {}), code: table.names.index(found)}
    table.set_option(ctx.store, out.now, **{MOVE_CODES: codes})
    say(ctx, out, reply, table.row.theme, "move-code", name=found, code=code)


def set_language(ctx: Context, table: Table, seat: int | None, lang: str, reply: Reply, out: Outgoing, *,
                 group: bool = False, host: bool = False) -> None:
    """The sender's language; typed in the table's group by the host, the group's too. A host without a seat
    (who only runs the table) sets the host's language, which a table without a group shows (its screen)."""
    if not lang:
        say(ctx, out, reply, table.row.theme, "languages", language=reply.language, languages=choices(ctx, reply))
        return
    try:
        Catalog.load(table.row.theme, lang)
    except UnknownCatalog:
        say(ctx, out, reply, table.row.theme, "unknown-language", language=lang, languages=choices(ctx, reply))
        return
    if seat is not None:
        table.seats[seat] = replace(table.seats[seat], language=lang)
        ctx.store.replace_seats(table.id, table.seats)
    elif host:
        table.set_option(ctx.store, out.now, **{HOST_LANGUAGE: lang})
    if group:
        table.set_option(ctx.store, out.now, **{PUBLIC_LANGUAGE: lang})
    say(ctx, out, Reply(reply.channel, reply.address, lang), table.row.theme, "language-set", language=lang)


def choices(ctx: Context, reply: Reply) -> str:
    """Every language a catalog speaks, by its code, and by its own name too where a message has room (not one SMS):
    ``de (Deutsch), en (English), es (español), fa (فارسی)``."""
    if ctx.caps(reply.channel).text_limit is not None:
        return ", ".join(languages())
    # The list runs left to right (its codes are Latin): a name written right to left is isolated in it.
    return ", ".join(f"{lang} ({isolated(own_name(lang), rtl=False)})" for lang in languages())


def set_theme(ctx: Context, table: Table, theme: str, reply: Reply, out: Outgoing) -> None:
    """The table's theme (its words and colours) from now on."""
    try:
        Catalog.load(theme, DEFAULT_LANGUAGE)
    except UnknownCatalog:
        say(ctx, out, reply, table.row.theme, "unknown-theme", theme=theme)
        return
    table.update(ctx.store, out.now, theme=theme)
    tell(ctx, table, out, "theme-set", theme=theme)


# --- reachability -------------------------------------------------------------------------------------------------


def opted_out(ctx: Context, channel: str, address: str, out: Outgoing, why: Away = Away.STOPPED) -> None:
    """The sender's channel will not deliver to them any more (until they opt in, or for ``why``, until they
    write): drop what waits, never prompt them again, and tell each table's host once, with what they can do
    while the game waits. A host who opted out can no longer hear the table: the host role passes to the next
    person at it, and the table is told; a host the channel stopped reaching for another reason keeps the role
    (any message of theirs brings them back)."""
    ctx.store.drop_pending(channel, address)
    key = f"{channel} {address}"
    for table in ctx.tables.of(channel, address):
        seat = table.seat_of(channel, address)
        if seat is None or table.status not in (TableStatus.LOBBY, *LIVE) or table.opted_out(channel, address):
            continue
        out.table_id = table.id
        name = table.seats[seat].name
        table.set_option(ctx.store, out.now, **{OPTED_OUT: [*table.row.options.get(OPTED_OUT, []), key]})
        if why.until_heard:
            table.set_option(ctx.store, out.now, **{AWAY: {**table.row.options.get(AWAY, {}), key: why.value}})
        if table.is_host(channel, address):
            if why is Away.STOPPED and pass_host(ctx, table, out, "host-opted-out", old=name):
                table.set_option(ctx.store, out.now, **{STOPPED_HOST: key})
            continue
        host = Reply(table.row.host_channel, table.row.host_address, table.host_language)
        match why:
            case Away.STOPPED:
                say(ctx, out, host, table.row.theme, "player-opted-out", name=name)
            case Away.SILENT:
                say(ctx, out, host, table.row.theme, "player-silent", name=name)
            case Away.BLOCKED:
                say(ctx, out, host, table.row.theme, "player-blocked", name=name)
            case Away.SANDBOX:
                say(ctx, out, host, table.row.theme, "player-sandbox", name=name)
            case _:
                assert_never(why)


def opted_in(ctx: Context, channel: str, address: str, out: Outgoing, *, heard: bool = False) -> None:
    """The sender opted back in to their channel (``heard``: wrote again, after their channel stopped reaching them
    for a reason their writing ends): messages reach them again; each table's host is told, and a host who had
    opted out hears who hosts now. A seat in a game gets what it knows and the decision the table waits for."""
    key = f"{channel} {address}"
    for table in ctx.tables.of(channel, address):
        seat = table.seat_of(channel, address)
        if seat is None or not table.opted_out(channel, address):
            continue
        if heard and not table.away_until_heard(channel, address):
            continue  # an opt-out: only the opt-in word ends it
        out.table_id = table.id
        name = table.seats[seat].name
        table.set_option(ctx.store, out.now, **{OPTED_OUT: [a for a in table.row.options[OPTED_OUT] if a != key]})
        was_away = table.away_until_heard(channel, address)
        if was_away:
            table.set_option(ctx.store, out.now,
                             **{AWAY: {k: v for k, v in table.row.options[AWAY].items() if k != key}})
        if table.row.options.get(STOPPED_HOST) == key:
            table.set_option(ctx.store, out.now, **{STOPPED_HOST: None})
            host_name = next((s.name for s in table.seats if table.is_host(s.channel, s.address)), "")
            say(ctx, out, Reply(channel, address, table.seats[seat].language), table.row.theme, "host-opted-in",
                host=host_name)
        if table.status in (TableStatus.LOBBY, *LIVE) and not table.is_host(channel, address):
            host = Reply(table.row.host_channel, table.row.host_address, table.host_language)
            if was_away:
                say(ctx, out, host, table.row.theme, "player-back", name=name)
            else:
                say(ctx, out, host, table.row.theme, "player-opted-in", name=name)
        if table.status is TableStatus.LOBBY:
            show_lobby(ctx, table, Reply(channel, address, table.seats[seat].language), out)  # who joined since
        if table.state is not None and table.status is TableStatus.PLAYING:
            # What the seat missed since: what it knows, and the decision the table may be waiting for.
            knowledge(ctx, table, seat, Reply(channel, address, table.seats[seat].language), out)
            prompt_again(ctx, table, out, seat=seat)


def unreachable(ctx: Context, channel: str, address: str, out: Outgoing, *, undelivered: bool = False) -> None:
    """A channel cannot reach this address (blocked, never opened a chat; ``undelivered``: the carrier reports
    its texts undelivered): the host and the group are told who it is, at every table where it has a seat; the
    game waits for them as for anyone."""
    for reply, theme, name in _told_about(ctx, channel, address, out):
        if undelivered:
            say(ctx, out, reply, theme, "player-undelivered", name=name)
        else:
            say(ctx, out, reply, theme, "player-unreachable", name=name)


def not_sent(ctx: Context, channel: str, address: str, table_id: str, out: Outgoing) -> None:
    """A message of this table to this address failed for good on our side (its delivery crashed): the host and
    the group are told who it is (never what it said)."""
    for reply, theme, name in _told_about(ctx, channel, address, out, table_id=table_id):
        say(ctx, out, reply, theme, "player-not-sent", name=name)


def _told_about(ctx: Context, channel: str, address: str, out: Outgoing, *,
                table_id: str | None = None) -> Iterator[tuple[Reply, str, str]]:
    """(who, theme, the seat's name) to tell about a seat: the host (unless it is them) and the group, at every
    table where the address has a seat (or at ``table_id`` only)."""
    for table in ctx.tables.of(channel, address):
        seat = table.seat_of(channel, address)
        if seat is None or table.status not in (TableStatus.LOBBY, *LIVE) or table_id not in (None, table.id):
            continue
        if table.opted_out(channel, address):
            continue  # the host was told why nothing reaches them (an opt-out, a closed window, a block)
        out.table_id = table.id
        name = table.seats[seat].name
        if not table.is_host(channel, address):
            yield Reply(table.row.host_channel, table.row.host_address, table.host_language), table.row.theme, name
        group = table.group
        if group is not None:
            yield Reply(group[0], group[1], table.public_language), table.row.theme, name




def set_table_voting(ctx: Context, table: Table, on: bool, reply: Reply, out: Outgoing) -> None:
    """Votes at the table (with hands or cards, the President records who voted Ja), or on every phone; set in
    the lobby (or after a game, for the rematch)."""
    if table.status not in (TableStatus.LOBBY, TableStatus.OVER):
        say(ctx, out, reply, table.row.theme, "table-votes-not-now")
        return
    table.set_option(ctx.store, out.now, physical_voting=on)
    if on:
        tell(ctx, table, out, "table-votes-on")
    else:
        tell(ctx, table, out, "table-votes-off")


def stand_in(ctx: Context, table: Table, name: str, back: bool, reply: Reply, out: Outgoing) -> None:
    """A computer player takes over the seat of a player who is away, or gives it back; the game goes on from
    that seat's own knowledge (its memory is rebuilt from what the seat was shown)."""
    seat = table.seat_named(name)
    if table.state is None or table.status not in LIVE:
        say(ctx, out, reply, table.row.theme, "game-not-started")
        return
    if seat is None:
        say_seating(ctx, out, reply, table, "seating-mismatch", numbered=False)
        return
    row = table.seats[seat]
    if row.channel == COMPUTER_CHANNEL or row.computer is not back:
        say(ctx, out, reply, table.row.theme, "stand-in-refused", name=row.name)
        return
    table.seats[seat] = replace(row, computer=not back)
    ctx.store.replace_seats(table.id, table.seats)
    player = Reply(row.channel, row.address, row.language)
    if back:
        del table.memories[seat]
        tell(ctx, table, out, "stand-in-back", name=row.name)
        knowledge(ctx, table, seat, player, out)
        prompt = prompt_for(ctx, table, table.seats[seat])
        if seat in awaiting(table.state) and prompt is not None:
            out.add(row.channel, row.address, prompt, decision=table.row.decision_step, table=table.id,
                    language=row.language)
    else:
        table.memories[seat] = recall(seat, table)
        tell(ctx, table, out, "stand-in", name=row.name)
