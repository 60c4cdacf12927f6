"""Decisions: a pressed button, a typed answer or the votes recorded at the table become actions; the engine
applies them; what happened is published. Also the computer players' moves and the questions a seat may ask."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Final

from . import claims, moves, render
from . import record as records
from .bots import SPEECH_EVENTS, SPEECH_ROUNDS, speaking_order, speech_rng
from .channels import Kind, Option, Outbound
from .claims import Accusation, Claim, ClaimError, Clearance, InvestigationClaim, Office, SessionClaim
from .commands import Choose, Decide, Inbound, Press, Query, RecordVotes, Speak, number
from .context import Context
from .engine import (
    Action,
    CastVote,
    DiscardPolicy,
    EnactPolicy,
    Event,
    GameState,
    Party,
    Phase,
    Policy,
    PublicView,
    RuleViolation,
    apply,
    awaiting,
    public_view,
    view_for,
)
from .engine.events import VoteCast, VoteProgressed
from .fanout import knowledge, prompt_again, prompt_for, publish, say, show_claims, words
from .grammar import RULES, Verb, Who, fold, grammar, offered
from .lobby import show_lobby
from .names import TYPED_KEYS, match_name, name_candidates, names_in, spoken_candidates
from .outbox import Outgoing, Reply, in_toast
from .render import InputProblem
from .store import TableStatus
from .tables import COMPUTERS_WAIT, DECISIONS_PER_GAME, LIVE, Said, Table

CLAIM_LENGTH: Final = 60
"""What a player claims is read up to this many characters, on every channel (a page's field takes no more)."""


def decide(ctx: Context, table: Table, seat: int | None, inbound: Inbound, command: Choose | Decide | RecordVotes,
           reply: Reply, out: Outgoing) -> None:
    """One decision from a seat: checked against the table's state, applied, published; or refused privately."""
    theme = table.row.theme
    state = table.state
    raw = inbound.raw
    if seat is None:
        say(ctx, out, reply, theme, "not-at-table")
        return
    if state is None or table.status is TableStatus.LOBBY:
        say(ctx, out, reply, theme, "game-not-started")
        return
    if table.seats[seat].computer:
        say(ctx, out, reply, theme, "seat-stood-in")  # a computer player has the seat until the host gives it back
        return
    if isinstance(command, Decide) and command.kind == "?":
        command = _typed_answer(ctx, table, inbound, command)
    if isinstance(command, Choose) and command.decision is None and _is_number(command.token):
        command = _numbered(ctx, inbound, command)
    if table.status is TableStatus.PAUSED:
        say(ctx, out, reply, theme, "game-is-paused")
        return
    if table.status is not TableStatus.PLAYING:
        # Finished, or ended by the host mid-game: nothing is decided any more (a rematch starts anew).
        problem(ctx, table, reply, out, InputProblem.NOTHING_OWED, raw, toast=inbound.press is not None)
        return
    if isinstance(command, Choose) and command.decision is not None and command.decision != table.row.decision_step:
        if not _vote_over(ctx, table, command, reply, out, toast=inbound.press is not None):
            problem(ctx, table, reply, out, InputProblem.STALE, raw, toast=inbound.press is not None)
        return
    actions: list[Action]
    match command:
        case Choose(token=token):
            action = _chosen(state, seat, token)
            if action is None:
                problem(ctx, table, reply, out, InputProblem.UNPARSEABLE, raw)
                return
            actions = [action]
        case Decide(kind=kind, argument=argument):
            decided = _typed(ctx, table, seat, kind, argument, reply, out, raw)
            if decided is None:
                return
            actions = [decided]
        case RecordVotes(ja=ja_names):
            recorded = _recorded_votes(ctx, table, seat, ja_names, reply, out, raw)
            if recorded is None:
                return
            actions = recorded
    try:
        play(ctx, table, actions, out)
    except RuleViolation as violation:
        catalog = ctx.catalog(theme, reply.language)
        out.add(reply.channel, reply.address,
                render.violation_message(violation, table.info(), catalog, caps=ctx.caps(reply.channel)),
                table=table.id, language=reply.language)
        return
    out.applied += len(actions)
    if inbound.press is not None:
        _answer_press(ctx, table, seat, actions, inbound.press, reply, out)


def _vote_over(ctx: Context, table: Table, command: Choose, reply: Reply, out: Outgoing, *, toast: bool) -> bool:
    """A ballot pressed after its vote closed answers with how the vote went; False if it was no ballot."""
    decision = command.decision
    action = moves.parse_token(0, command.token)
    if decision is None or not isinstance(action, CastVote) or decision // DECISIONS_PER_GAME != table.row.game:
        return False
    found = ctx.store.event_after(table.id, table.row.game, "election-decided", decision % DECISIONS_PER_GAME)
    if found is None:
        return False
    ja = sum(1 for _, v in found["votes"] if v)
    nein = len(found["votes"]) - ja
    president, chancellor = table.names[found["president"]], table.names[found["chancellor"]]
    theme = table.row.theme
    if found["elected"]:
        text = words(ctx, reply, theme, "input-vote-over-elected", president=president, chancellor=chancellor,
                     ja=ja, nein=nein)
    else:
        text = words(ctx, reply, theme, "input-vote-over-rejected", president=president, chancellor=chancellor,
                     ja=ja, nein=nein)
    if toast and ctx.caps(reply.channel).toasts:
        out.notice = text
    else:
        out.put(reply.channel, reply.address, Outbound(Kind.NOTE, text, table=table.id, language=reply.language,
                                                       message_id="input-vote-over"))
    return True


def _is_number(text: str) -> bool:
    return number(text, 3) is not None  # an option's number: at most three digits


def _newest_prompt(ctx: Context, inbound: Inbound) -> Outbound | None:
    """The newest prompt this address was sent (not one still on its way), or None."""
    last = ctx.store.last_prompt(inbound.channel, inbound.address)
    return None if last is None else Outbound.from_json(last[1], last[0])


def _numbered(ctx: Context, inbound: Inbound, command: Choose) -> Choose:
    """A typed number answers the newest prompt this address was sent (not one still on its way)."""
    prompt = _newest_prompt(ctx, inbound)
    if prompt is None:
        return command
    index = int(command.token) - 1
    if 0 <= index < len(prompt.options):
        return Choose(prompt.options[index].token, prompt.decision)
    return Choose(command.token, prompt.decision)


def _typed_answer(ctx: Context, table: Table, inbound: Inbound, command: Decide) -> Choose | Decide:
    """Free text that names one option of the newest prompt this address was sent (exactly, or as the unambiguous
    start of one), or a vote word; else as it was."""
    typed = command.argument or inbound.raw
    text = fold(typed)
    prompt = _newest_prompt(ctx, inbound)
    if prompt is not None and text:
        chosen = match_label(typed, prompt.options)
        if chosen is not None:
            return Choose(chosen.token, prompt.decision)
    if text in ("ja", "nein"):
        return Decide("vote", text)
    return command


def option_named(ctx: Context, table: Table, inbound: Inbound) -> Choose | None:
    """A typed line that is, whole, the label of one option of the prompt this address was sent for the decision
    the table waits on: that option, before any command word the line begins with ("Computer 2", a computer
    player's name, is not "computers 2"; a player may be called "Board"). None otherwise."""
    if table.status is not TableStatus.PLAYING or inbound.press is not None or not inbound.raw:
        return None
    prompt = _newest_prompt(ctx, inbound)
    if prompt is None or prompt.decision != table.row.decision_step:
        return None
    chosen = _exact_label(inbound.raw, prompt.options)
    return None if chosen is None else Choose(chosen.token, prompt.decision)


def a_name(table: Table, inbound: Inbound) -> Decide | None:
    """A typed line that is, whole, a player's name while a game is under way: an answer to a prompt (which says
    so if its options have no such name), never the command word it begins with ("Computer 1" at a vote is not
    "computers 1", which would only say that the seats can no longer change). None otherwise."""
    if table.status not in LIVE or inbound.press is not None or not inbound.raw:
        return None
    if grammar().verb("".join(inbound.raw.split())) is not None:
        return None  # a command's word and nothing more ("board") stays the command, whoever is called that
    named = any(key(name) == key(inbound.raw) for key in TYPED_KEYS for name in table.names)
    return Decide("?", inbound.raw) if named else None


def needs_more(ctx: Context, table: Table, inbound: Inbound, reply: Reply, out: Outgoing, *, host: bool) -> bool:
    """A word typed alone that needs more after it (``claim``, ``rename``, ``accuse``) is answered with help's
    line for it: what follows it and what it does. False (nothing said) for any other line, and for a word that is
    an option's whole label or one this person is not offered."""
    if inbound.press is not None or not inbound.raw:
        return False
    caps = ctx.caps(reply.channel)
    verb = grammar().alone(inbound.raw, caps.reserved_words)
    if verb is None or not RULES[verb].help or not offered(verb, caps) or (RULES[verb].who is Who.HOST and not host):
        return False
    if option_named(ctx, table, inbound) is not None:
        return False
    message = render.needs_more(verb, ctx.catalog(table.row.theme, reply.language), caps=caps)
    out.add(reply.channel, reply.address, message, table=table.id, language=reply.language)
    return True



def _exact_label(typed: str, options: Sequence[Option]) -> Option | None:
    """The one option whose whole label is the typed text (compared as ``names.TYPED_KEYS`` say, closest first),
    or None (none, or two alike)."""
    for key in TYPED_KEYS:
        wanted = key(typed)
        exact = [o for o in options if wanted and key(o.label) == wanted]
        if exact:
            return exact[0] if len(exact) == 1 else None
    return None


def match_label(typed: str, options: Sequence[Option]) -> Option | None:
    """The option typed text names: its whole label, else the one label it starts (two letters at least) or that
    starts it (a label of three letters at least followed by more: "Annabelle" for "Annabel"); None if none or
    more than one."""
    exact = _exact_label(typed, options)
    if exact is not None:
        return exact
    for key in TYPED_KEYS:
        folded = key(typed)
        labels = [(key(o.label), o) for o in options]
        starts = [
            o for label, o in labels if label and folded
            and ((len(folded) >= 2 and label.startswith(folded)) or (len(label) >= 3 and folded.startswith(label)))
        ]
        if starts:
            return starts[0] if len(starts) == 1 else None
    return None


def _chosen(state: GameState, seat: int, token: str) -> Action | None:
    token = token.strip()
    if _is_number(token):
        # A numbered option of the current prompt: the same order as the prompt's choices.
        legal = view_for(state, seat).legal_actions
        index = int(token) - 1
        return legal[index] if 0 <= index < len(legal) else None
    return moves.parse_token(seat, token)


def _typed(ctx: Context, table: Table, seat: int, kind: str, argument: str | None, reply: Reply, out: Outgoing,
           raw: str) -> Action | None:
    if kind == "vote" and table.state is not None and table.state.phase is Phase.VETO:
        kind = "veto_reply"  # "yes" to the President's "agree to the veto?" is an answer to it, not a ballot
    entry: dict[str, object] = {"player": table.names[seat], "action": kind}
    arg = (argument or "").strip()
    match kind:
        case "nominate" | "investigate" | "special_election" | "execute":
            candidates = name_candidates(arg, table.names)
            if len(candidates) != 1:
                found = InputProblem.AMBIGUOUS if candidates else InputProblem.UNPARSEABLE
                problem(ctx, table, reply, out, found, raw, candidates)
                return None
            entry["target"] = candidates[0]
        case "vote":
            # Words of every theme and language (yes, Dafür, approve) are the grammar's, not a map of our own.
            said = grammar().verb(arg)
            entry["vote"] = {Verb.JA: "ja", Verb.NEIN: "nein"}.get(said, arg.lower()) if said else arg.lower()
        case "discard" | "enact":
            entry["card"] = arg.upper()[:1]
        case "veto_reply":
            entry["accept"] = grammar().verb(arg) in (Verb.ACCEPT, Verb.JA)
    try:
        return records.parse_action(table.names, entry)
    except records.RecordError:
        problem(ctx, table, reply, out, InputProblem.UNPARSEABLE, raw)
        return None


def _recorded_votes(ctx: Context, table: Table, seat: int, ja_names: Sequence[str], reply: Reply, out: Outgoing,
                    raw: str) -> list[Action] | None:
    state = table.state
    assert state is not None
    if not table.row.options.get("physical_voting") or state.phase is not Phase.ELECTION or seat != state.president:
        problem(ctx, table, reply, out, InputProblem.NOTHING_OWED, raw)
        return None
    ja: set[int] = set()
    for name in names_in(ja_names, table.names):
        found = match_name(name, table.names)
        if found is None:
            problem(ctx, table, reply, out, InputProblem.UNPARSEABLE, raw)
            return None
        ja.add(table.names.index(found))
    # Computer players (and stand-ins) voted by themselves, secretly until the result: only the hands are recorded.
    owed = set(awaiting(state))
    return [CastVote(s, s in ja) for s in range(state.players) if state.alive[s] and s in owed]


def problem(ctx: Context, table: Table, reply: Reply, out: Outgoing, found: InputProblem, raw: str,
            options: Sequence[str] = (), *, toast: bool = False) -> None:
    """A private reply to input that could not be used; shown at once instead (``toast``) where the channel can."""
    catalog = ctx.catalog(table.row.theme, reply.language)
    caps = ctx.caps(reply.channel)
    seat = table.seat_of(reply.channel, reply.address)
    state = table.state
    owes = (seat is not None and state is not None and table.status is TableStatus.PLAYING
            and seat in awaiting(state) and not table.seats[seat].computer)
    if found is InputProblem.UNPARSEABLE and state is not None and _is_number(raw.strip(" .#()")):
        # A number: out of turn, or past the prompt's options. The true reason, not "I did not understand".
        found = InputProblem.NO_SUCH_OPTION if owes else InputProblem.NOTHING_OWED
    message = render.input_message(found, table.info(), catalog, caps=caps, text=raw, options=options)
    if toast and caps.toasts:
        out.notice = message.text.split("\n", 1)[0]
        return
    out.add(reply.channel, reply.address, message, table=table.id, language=reply.language)
    again = not caps.buttons or (caps.typed and found is InputProblem.NO_SUCH_OPTION)
    if owes and again and seat is not None and found is not InputProblem.NOTHING_OWED:
        # Without buttons the options are only in the text: a refusal repeats them (the prompt again); where
        # people only type, a number past the options shows them again too.
        prompt = prompt_for(ctx, table, table.seats[seat])
        if prompt is not None:
            out.add(reply.channel, reply.address, prompt, decision=table.row.decision_step, table=table.id,
                    language=reply.language)


def play(ctx: Context, table: Table, actions: Sequence[Action], out: Outgoing) -> None:
    """Apply actions in order (all or none), log them, and publish what happened."""
    state = table.state
    assert state is not None
    now = out.now
    events: list[Event] = []
    before = state.phase
    for action in actions:
        state, new = apply(state, action)  # a RuleViolation here leaves everything as it was
        events.extend(new)
    n = len(table.actions)
    for i, action in enumerate(actions):
        entry = records.action_to_json(table.record_names, action)
        ctx.store.append_action(table.id, table.row.game, n + i, entry, now)
        table.actions.append(entry)
    table.state = state
    # Only a vote keeps the phase; every other action starts a new decision, and old buttons go stale.
    new_decision = state.phase is not before or any(not isinstance(a, CastVote) for a in actions)
    publish(ctx, table, events, out, now, new_decision=new_decision)
    if state.phase is Phase.GAME_OVER:
        return
    if new_decision and state.phase is Phase.ELECTION:
        hold_computer_votes(ctx, table, now)
    talk = any(type(e) in SPEECH_EVENTS for e in events)
    results = any(e.audience.everyone and type(e) not in _NO_RESULT for e in events)
    if talk or (results and any(said.shown is None for said in table.said)):
        speak(ctx, table, out, [seat for seat, row in enumerate(table.seats) if row.computer] if talk else [])


_NO_RESULT: frozenset[type[Event]] = frozenset((VoteCast, VoteProgressed))
"""Public events that are no result a held claim could ride along with (a vote's progress)."""


def speak(ctx: Context, table: Table, out: Outgoing, seats: Sequence[int]) -> None:
    """Claims shown now, with the results just published: those a person made since the last result, then what
    the computer players in ``seats`` have to say, in speaking order and answering each other; stored, heard by
    every computer player (claims are public speech: nothing in them is taken as true)."""
    state = table.state
    assert state is not None
    logged = len(table.log)
    held = [n for n, said in enumerate(table.said) if said.shown is None]
    heard: list[Claim] = []
    computers = set(seats)
    for _ in range(SPEECH_ROUNDS):
        quiet = True
        for seat in speaking_order(public_view(state)):
            if seat not in computers or seat not in table.memories:
                continue
            rng = speech_rng(state.setup.seed, seat, state.step)
            for claim in ctx.computer.claims(view_for(state, seat), table.memories[seat], rng):
                quiet = False
                heard.append(claim)
                for position, memory in table.memories.items():
                    table.memories[position] = memory.hear(claim)
        if quiet:
            break
    if held:
        ctx.store.show_claims(table.id, table.row.game, held, logged)
        for n in held:
            table.said[n] = replace(table.said[n], shown=logged)
    if heard:
        ctx.store.append_claims(table.id, table.row.game, len(table.said),
                                [(state.step, logged, logged, claims.to_json(claim)) for claim in heard])
        table.said.extend(Said(state.step, logged, logged, claim) for claim in heard)
    shown = [table.said[n].claim for n in held] + heard
    if shown:
        show_claims(ctx, table, out, shown)


def speak_up(ctx: Context, table: Table, seat: int | None, command: Speak, reply: Reply, out: Outgoing) -> None:
    """A person's claim: stored and heard by the computer players at once, shown to the table with the next
    result (it rides along with it); the speaker is told so. Only its form is checked, never its truth."""
    theme = table.row.theme
    state = table.state
    if seat is None:
        say(ctx, out, reply, theme, "not-at-table")
        return
    if state is None or table.status is TableStatus.LOBBY:
        say(ctx, out, reply, theme, "game-not-started")
        return
    if table.seats[seat].computer:
        say(ctx, out, reply, theme, "seat-stood-in")
        return
    if table.status is not TableStatus.PLAYING and table.status is not TableStatus.PAUSED:
        problem(ctx, table, reply, out, InputProblem.NOTHING_OWED, command.argument)
        return
    public = public_view(state)
    if not public.alive[seat]:
        say(ctx, out, reply, theme, "claim-refused")
        return
    claim = _claim(table, seat, replace(command, argument=command.argument[:CLAIM_LENGTH]), public)
    if isinstance(claim, _Unnamed):
        found = InputProblem.AMBIGUOUS if claim.candidates else InputProblem.NO_SUCH_PLAYER
        problem(ctx, table, reply, out, found, claim.typed, claim.candidates or table.names)
        return
    if claim is None:
        say(ctx, out, reply, theme, "claim-refused")
        return
    if claim == Accusation(seat, seat):
        say(ctx, out, reply, theme, "claim-accuse-yourself")
        return
    if claim == Clearance(seat, seat):
        say(ctx, out, reply, theme, "claim-trust-yourself")
        return
    catalog = ctx.catalog(theme, reply.language)
    line = render.claim_messages([claim], public, table.info(), catalog, caps=ctx.caps(reply.channel))[0]
    if any(said.claim == claim for said in table.said):
        # Said once, it is heard and told once: the same words again would only be announced twice.
        say(ctx, out, reply, theme, "claim-repeated", claim=line.text.split("\n", 1)[1])
        return
    logged = len(table.log)
    ctx.store.append_claims(table.id, table.row.game, len(table.said),
                            [(state.step, logged, None, claims.to_json(claim))])
    table.said.append(Said(state.step, logged, None, claim))
    for position, memory in table.memories.items():
        table.memories[position] = memory.hear(claim)
    say(ctx, out, reply, theme, "claim-noted", claim=line.text.split("\n", 1)[1])


@dataclass(frozen=True, slots=True)
class _Unnamed:
    """A claim about a player whose name no one has (``candidates`` empty) or several have."""

    typed: str
    candidates: tuple[str, ...]


def _claim(table: Table, seat: int, command: Speak, public: PublicView) -> Claim | _Unnamed | None:
    """The claim a person typed, if its form fits what the seat did: cards about its latest session, a party
    about a player it investigated, or a player it accuses or trusts (themselves too: the caller refuses that
    with its own words); a name that is no one's, or several players', as such."""
    words = command.argument.split()
    if command.kind in ("accuse", "trust"):
        # A claim is only talk, and its speaker is told how it was heard: a declined name is taken ("oskarżam
        # Boba"), as a decision's never is.
        named = spoken_candidates(command.argument, table.names)
        if len(named) != 1:
            return _Unnamed(command.argument, tuple(named))
        target = table.names.index(named[0])
        return Accusation(seat, target) if command.kind == "accuse" else Clearance(seat, target)
    cards = [_cards(word) for word in words]
    if words and all(c is not None for c in cards):
        return _session_claim(seat, [c for c in cards if c is not None], public)
    if len(words) >= 2 and (party := grammar().cards.get(fold(words[-1]))) is not None:
        typed = " ".join(words[:-1])
        named = spoken_candidates(typed, table.names)
        if len(named) != 1:
            return _Unnamed(typed, tuple(named))
        target = table.names.index(named[0])
        if (seat, target) in public.investigations:
            return InvestigationClaim(seat, target, Party.LIBERAL if party == "L" else Party.FASCIST)
    return None


def _cards(word: str) -> tuple[Policy, ...] | None:
    # "FFL", "ffl", or a card word of any theme and language ("fascist"): one or more policies.
    known = grammar().cards.get(fold(word))
    if known is not None:
        return (Policy(known),)
    letters = word.upper()
    return tuple(Policy(c) for c in letters) if letters and set(letters) <= {"L", "F"} else None


def _session_claim(seat: int, groups: list[tuple[Policy, ...]], public: PublicView) -> SessionClaim | None:
    index = next((i for i in reversed(range(len(public.sessions)))
                  if seat in (public.sessions[i].president, public.sessions[i].chancellor)), None)
    if index is None:
        return None
    session = public.sessions[index]
    held = [p for group in groups[:1] for p in group]
    if len(groups) == 1 and len(held) > 3:
        return None
    if seat == session.president:
        if len(groups) == 2:
            passed = list(groups[1])
        else:
            # "claim FFL": what a President drawing these hands over, keeping what was enacted.
            # "claim FFL": the President hands over what a liberal would, keeping the enacted policy if it can.
            passed = list(held)
            for drop in (Policy.FASCIST, Policy.LIBERAL):
                if len(held) == 3 and drop in held:
                    passed = list(held)
                    passed.remove(drop)
                    if session.enacted is None or session.enacted in passed:
                        break
        office = Office.PRESIDENT
    else:
        passed = [] if session.enacted is None else [session.enacted]
        office = Office.CHANCELLOR
    try:
        return SessionClaim(seat, office, index, tuple(held), tuple(passed))
    except ClaimError:
        return None


def _answer_press(ctx: Context, table: Table, seat: int, actions: Sequence[Action], press: Press, reply: Reply,
                  out: Outgoing) -> None:
    """The pressed message shows the choice: the first confirmation to the presser carries the press (else a bare
    one), with the options it keeps (a vote can be changed until the last one is in). A press without a message
    (``Press.ref`` empty: chosen on the seat's page in the channel's app) is shown on the chat's latest prompt,
    never in a toast: the chat must show what the page decided."""
    state = table.state
    assert state is not None
    vote = isinstance(actions[-1], CastVote)
    # A vote can be changed while the election is open: the ballot keeps its buttons (the change prompt's).
    still = prompt_for(ctx, table, table.seats[seat]) if state.phase is Phase.ELECTION else None
    kept = still is not None and vote
    options = tuple(Option(c.label, moves.token(c.action)) for c in still.choices) if kept and still else ()
    if vote and ctx.caps(reply.channel).toasts and press.ref:
        # A vote is confirmed where it was pressed, in the toast, and the ballot stays as it is: its buttons
        # change the vote until the last one is in, and answer with the result after. The confirmation is kept
        # with the press, as it would have gone without toasts, for a channel too late to show the toast.
        for index, message in out.to(reply.channel, reply.address):
            if message.kind is Kind.ECHO:
                echo = out.drop(index)
                out.notice = in_toast(echo)
                out.answer = replace(echo, press=press, options=options, decision=table.row.decision_step)
                return

    for index, message in out.to(reply.channel, reply.address):
        if message.kind is Kind.ECHO and message.press is None:
            out.change(index, press=press, options=options, decision=table.row.decision_step)
            return
    # Nothing confirmed it in words: the choice itself is shown, behind a spoiler if it says a secret (a vote, a
    # card); a nomination or a power's target is said to the table anyway.
    secret = isinstance(actions[-1], CastVote | DiscardPolicy | EnactPolicy)
    echo = Outbound(Kind.ECHO, "", secret=secret, options=options, decision=table.row.decision_step,
                    table=table.id, press=press, language=reply.language, message_id="choice-shown")
    mine = list(out.to(reply.channel, reply.address))
    if not secret and len(mine) == 1 and mine[0][1].kind is Kind.PROMPT and not mine[0][1].secret:
        # The presser's only news is their next question (the President's ballot, where the table hears the
        # nomination elsewhere): it is shown where they pressed, under the choice, rather than in a new message.
        index, ask = mine[0]
        out.drop(index)
        echo = replace(echo, options=ask.options, decision=ask.decision, follows=ask.text)
    out.put(reply.channel, reply.address, echo)


def hold_computer_votes(ctx: Context, table: Table, now: float) -> None:
    """An election opened: the computer players vote once every person at the table has voted, or after
    ``ctx.vote_pause`` seconds (the service's tick lets them), so that what a person says before voting (a claim,
    an accusation) is heard first. Stored with the table and its deadline, so a restart keeps the wait; a person
    who plays at their own pace (``Capabilities.own_pace``: the console) is waited for however long. Nothing
    waits with votes at the table, without a pause, or where people or computer players vote alone."""
    state = table.state
    assert state is not None
    owing = [table.seats[seat] for seat in awaiting(state)]
    if ctx.vote_pause <= 0 or table.row.options.get("physical_voting") or {s.computer for s in owing} != {True, False}:
        return  # nothing to wait for: no pause, votes at the table, or only people (or only computers) vote
    table.set_option(ctx.store, now, **{COMPUTERS_WAIT: table.row.decision_step})
    unhurried = any(ctx.caps(s.channel).own_pace for s in owing if not s.computer)
    ctx.store.set_deadline(table.id, COMPUTERS_WAIT, None if unhurried else now + ctx.vote_pause)


def run_computers(ctx: Context, table_id: str, limit: int = 10_000) -> int:
    """Let computer players make every decision they owe, one transaction each; returns how many. Their votes
    wait while ``Table.computers_wait``."""
    if not ctx.drive_computers:
        return 0
    table = ctx.tables.get(table_id)
    done = 0
    while table is not None and table.state is not None and table.status is TableStatus.PLAYING and done < limit:
        state = table.state
        owing = [s for s in awaiting(state) if table.seats[s].computer]
        if not owing or table.computers_wait:
            break
        seat = owing[0]
        rng = random.Random(f"{state.setup.seed}/computer/{seat}/{state.step}")
        action = ctx.computer.choose(view_for(state, seat), table.memories[seat], rng)
        try:
            with ctx.store.transaction():
                out = Outgoing(table_id, ctx.clock())
                play(ctx, table, [action], out)
                ctx.store.enqueue(out.stored(ctx.tables.muted), out.now)
        except BaseException:
            ctx.tables.forget([table_id])
            raise
        done += 1
    return done


# --- questions ------------------------------------------------------------------------------------------------


def help_for(ctx: Context, theme: str, reply: Reply, out: Outgoing, *, host: bool) -> None:
    """What the asker may type on their channel (the host's words too, for the host)."""
    catalog = ctx.catalog(theme, reply.language)
    for message in render.help_messages(catalog, caps=ctx.caps(reply.channel), host=host):
        out.add(reply.channel, reply.address, message, table=out.table_id, language=reply.language)


def ask(ctx: Context, table: Table, seat: int | None, query: Query, reply: Reply, out: Outgoing) -> None:
    """A question anyone may ask at any time, answered privately."""
    theme = table.row.theme
    state = table.state
    caps = ctx.caps(reply.channel)
    match query:
        case Query.HELP:
            help_for(ctx, theme, reply, out, host=table.is_host(reply.channel, reply.address))
        case Query.RULES:
            players = len(table.seats) if state is None else state.players
            rules = render.rules_messages(players if players >= 5 else None, ctx.catalog(theme, reply.language),
                                          caps=caps)
            for message in rules:
                out.add(reply.channel, reply.address, message, table=table.id, language=reply.language)
        case Query.HOWTO:
            say(ctx, out, reply, theme, "how-to")
        case Query.BOARD | Query.WAITING:
            if state is None:
                show_lobby(ctx, table, reply, out)
                return
            catalog = ctx.catalog(theme, reply.language)
            shown = render.board_messages if query is Query.BOARD else render.waiting_messages
            for message in shown(public_view(state), table.info(), catalog, caps=caps):
                out.add(reply.channel, reply.address, message, table=table.id, language=reply.language)
        case Query.PROMPT:
            if seat is not None and state is not None and table.status is TableStatus.PLAYING:
                prompt_again(ctx, table, out, seat=seat)
        case Query.WHOAMI | Query.BACK:
            if query is Query.BACK and (seat is None or state is None):
                return  # back before the game: nothing was missed (the lobby's messages still come)
            if seat is None or state is None:
                say(ctx, out, reply, theme, "not-at-table" if seat is None else "game-not-started")
                return
            knowledge(ctx, table, seat, reply, out)
            if query is Query.BACK and table.status is TableStatus.PLAYING:
                prompt_again(ctx, table, out, seat=seat)  # the table may be waiting for this very seat

