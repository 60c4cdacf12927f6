"""The table service end to end: whole games through ``Service.handle`` with a recording channel, the deal,
privacy over random games, bad input, persistence and delivery, and many tables at once.

Every human seat plays as a phone would: it reads the newest prompt it was sent and presses one of its buttons
(``Choose(token, decision)``). Lobby and host controls have their own files.
"""

from __future__ import annotations

import itertools
import random
from collections import Counter
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from moderator import record as records
from moderator.catalog import Catalog
from moderator.commands import (
    AddComputers,
    Ask,
    Choose,
    Decide,
    Host,
    HostCommand,
    Inbound,
    Join,
    MoveSeat,
    Query,
    RecordVotes,
    Start,
)
from moderator.delivery import Sender
from moderator.engine import Phase, Role, awaiting, known_roles, public_view
from moderator.engine import events as ev
from moderator.engine.types import ROLE_COUNTS
from moderator.grammar import grammar
from moderator.service import Service
from moderator.store import Store
from tests.fakes import FakeClock, Harness, RecordingChannel

NAMES = ("Ximena", "Quentin", "Zora", "Yusuf", "Wanda", "Kasimir", "Ulla", "Olek", "Ines", "Vito")
"""Player names that appear in no catalog text, so finding one in a message means the message names them."""
PLAYER_COUNTS = range(5, 11)
EN = Catalog.load("classic", "en")

SECRET_IDS = frozenset(
    {
        "deal-role",
        "vote-recorded",
        "vote-recorded-last",
        "vote-changed",
        "prompt-vote-change",
        "prompt-discard",
        "prompt-enact",
        "prompt-enact-veto",
        "policy-discarded",
        "party-membership-seen",
        "top-policies-seen",
        "knowledge-title",
    }
)
"""Every message id that carries a secret; a secret message with any other id fails the privacy test."""
REPLY_PREFIXES = ("input-", "violation-")
LOBBY_REPLIES = frozenset({"table-opened", "table-joined", "seat-taken", "game-starting"})
GAME_ENDED_IDS = frozenset(
    {
        "game-ended-liberal-policies",
        "game-ended-fascist-policies",
        "game-ended-hitler-executed",
        "game-ended-hitler-elected",
    }
)


def test_names_appear_in_no_catalog_text() -> None:
    for theme, lang in [("classic", "en"), ("classic", "de"), ("corporate", "en"), ("corporate", "de")]:
        catalog = Catalog.load(theme, lang)
        for message_id in catalog.message_ids():
            for sms in (False, True):
                template = catalog.template(message_id, sms=sms)
                assert not any(name in template for name in NAMES), (theme, lang, message_id)
        assert not any(name in term for term in catalog.terms.values() for name in NAMES)


def human_table(players: int, *, seed: int = 1, **options: Any) -> tuple[Harness, str, list[str]]:
    """A started game where every seat is a human at address p0… (p0 hosts)."""
    h = Harness(seed=seed, **options)
    table_id, _, addresses = h.seat_table(NAMES[:players])
    h.start(table_id)
    return h, table_id, addresses


def replayed(h: Harness, table_id: str) -> records.Replay:
    export = h.service.export(table_id)
    assert export is not None
    result = records.replay(records.parse(export))
    assert result.error is None
    return result


def ended_at(ids: list[str]) -> int:
    """Index of the game-ended message in an inbox (len if none)."""
    return next((i for i, m in enumerate(ids) if m in GAME_ENDED_IDS), len(ids))


# --- whole games -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("players", PLAYER_COUNTS)
def test_whole_game_with_every_seat_human(players: int) -> None:
    h, table_id, addresses = human_table(players, seed=players)
    moves = h.play_out(table_id, random.Random(players))
    table = h.table(table_id)
    state = table.state
    assert state is not None and state.phase is Phase.GAME_OVER and moves > 0
    assert table.row.status == "over"
    assert len(table.actions) == state.step == moves
    roles = ", ".join(f"{NAMES[s]}: {EN.term(role.value)}" for s, role in enumerate(state.roles))
    for address in addresses:
        ids = h.channel.ids(address)
        end = ended_at(ids)
        assert end < len(ids), f"{address} was not told the game ended"
        assert ids[end + 1:] == ["truth-title"], ids[end:]
        # "X is not Hitler" whenever the rules make it public, to everyone.
        for event_kind, message_id in ((ev.ChancellorNotHitler, "chancellor-not-hitler"),
                                       (ev.PlayerExecuted, "player-executed")):
            assert ids.count(message_id) == sum(1 for e in table.log if isinstance(e, event_kind))
        survived = [
            e for e in table.log if isinstance(e, ev.PlayerExecuted) and state.roles[e.target] is not Role.HITLER
        ]
        assert ids.count("player-executed-not-hitler") == len(survived)
        assert roles in h.channel.inbox(address)[end]["text"]
        assert h.channel.inbox(address)[-1]["text"].startswith(EN.text("truth-title"))
    # Everyone got the same public story (prompts and private messages aside).
    stories = {tuple(b["text"] for b in h.channel.inbox(a) if not b["secret"] and not b["choices"]
                     and b["message_id"] not in ("table-joined", "table-opened", "seat-taken"))
               for a in addresses}
    assert len(stories) == 1
    # The service's game is the replay of its game record, and of what it stored.
    result = replayed(h, table_id)
    assert result.state == state
    assert list(result.events) == table.log
    assert h.store.event_count(table_id, table.row.game) == len(table.log)
    assert h.store.backlog() == 0


def test_truth_timeline_tells_every_session_and_power() -> None:
    h, table_id, addresses = human_table(9, seed=11)
    h.play_out(table_id, random.Random(4))
    state = h.table(table_id).state
    assert state is not None
    truth = "\n".join(b["text"] for b in h.channel.inbox(addresses[0]) if b["message_id"] == "truth-title")
    for session in state.history.sessions:
        assert ", ".join(EN.term("liberal_card" if p.value == "L" else "fascist_card")
                         for p in session.drawn) in truth
    for president, target in state.history.investigations:
        assert f"{NAMES[president]} investigated {NAMES[target]}" in truth


@pytest.mark.parametrize("players", [5, 8])
def test_computer_players_fill_the_other_seats(players: int) -> None:
    h = Harness(seed=players)
    table_id, _ = h.open("p0", "Ximena")
    h.send("p1", Join(h.table(table_id).row.code or "", "Quentin"))
    h.send("p0", AddComputers(players - 2))
    assert [s.computer for s in h.table(table_id).seats] == [False, False] + [True] * (players - 2)
    h.start(table_id)
    h.play_out(table_id, random.Random(1))
    table = h.table(table_id)
    assert table.state is not None and table.state.phase is Phase.GAME_OVER
    assert replayed(h, table_id).state == table.state
    # Nothing is ever queued for a computer player.
    assert set(h.channel.sent) == {"p0", "p1"}
    assert h.store.execute("SELECT count(*) FROM outbox WHERE channel = 'computer'").fetchone()[0] == 0


def test_a_game_of_computers_watched_from_a_group() -> None:
    h = Harness(seed=5)
    table_id, _ = h.open("host", "Watcher", public=True, seat=False, chat="group")
    h.send("host", AddComputers(7))
    h.send("host", Start())
    table = h.table(table_id)
    assert table.state is not None and table.state.phase is Phase.GAME_OVER
    group = h.channel.ids("group")
    assert "deal-role" not in group and not any(b["secret"] for b in h.channel.inbox("group"))
    assert group[-1] == "truth-title" and ended_at(group) < len(group)
    assert h.channel.ids("host") == ["table-opened"]


def test_a_game_with_a_group_chat_keeps_secrets_out_of_the_group() -> None:
    h = Harness(seed=14)
    table_id, code = h.open("p0", NAMES[0], public=True, chat="group")
    addresses = ["p0"]
    for i in range(1, 7):
        h.send(f"p{i}", Join(code, NAMES[i]))
        addresses.append(f"p{i}")
    h.send("p0", Start(), chat="group")
    h.play_out(table_id, random.Random(14))
    table = h.table(table_id)
    assert table.state is not None and table.state.phase is Phase.GAME_OVER
    group = h.channel.inbox("group")
    assert not any(b["secret"] or b["choices"] for b in group)
    assert "chancellor-nominated" in [b["message_id"] for b in group]
    assert [b["message_id"] for b in group][-1] == "truth-title"
    for _seat, address in enumerate(addresses):
        ids = h.channel.ids(address)
        # Public events go to the group only; each phone gets its own secrets and prompts.
        assert "chancellor-nominated" not in ids and "truth-title" not in ids
        assert ids.count("deal-role") == 1
        assert all(b["secret"] or b["choices"] or b["message_id"] in LOBBY_REPLIES for b in h.channel.inbox(address))
    assert replayed(h, table_id).state == table.state


# --- the deal --------------------------------------------------------------------------------------------


def deal_messages(h: Harness, address: str) -> list[dict[str, Any]]:
    """What an address received from the game's start up to (not including) the first prompt or vote."""
    inbox = h.channel.inbox(address)
    # A channel paid per message has no "game started" text of its own: its deal says so.
    first = next(i for i, b in enumerate(inbox) if b["message_id"] in ("game-started", "deal-role"))
    out = []
    for body in inbox[first:]:
        if body["choices"]:
            continue
        out.append(body)
    return out


@pytest.mark.parametrize("channel_name", ["fake", "sms"])
@pytest.mark.parametrize("players", PLAYER_COUNTS)
def test_every_seat_gets_the_same_deal(players: int, channel_name: str) -> None:
    seen_roles: set[Role] = set()
    for seed in range(3):
        h, table_id, addresses = human_table(players, seed=100 * players + seed, channel_name=channel_name)
        state = h.table(table_id).state
        assert state is not None
        seen_roles |= set(state.roles)
        deals = {a: deal_messages(h, a) for a in addresses}
        shapes = {
            tuple((b["message_id"], b["secret"], len(b["text"]), b["text"].count("\n"), b["text"].split("\n")[0])
                  for b in deal)
            for deal in deals.values()
        }
        assert len(shapes) == 1, f"the deal differs between seats: {shapes}"
        (shape,) = shapes
        assert [m for m, *_ in shape].count("deal-role") == 1
        # Only the President is asked anything, and who the President is, is public.
        state = h.table(table_id).state
        assert state is not None and state.president is not None
        president = state.president
        prompted = [a for a in addresses if any(b["choices"] for b in h.channel.inbox(a))]
        assert prompted == [addresses[president]]
        # Each deal tells its own seat's role.
        for seat, address in enumerate(addresses):
            (deal,) = [b for b in deals[address] if b["message_id"] == "deal-role"]
            # (Below a phone's lock-screen preview: the filler lines under the header say nothing.)
            said = [line for line in deal["text"].split("\n")[1:] if line.strip(". ")]
            assert EN.term(state.roles[seat].value) in said[0]
    assert seen_roles == set(Role)


# --- privacy over random games ---------------------------------------------------------------------------


def cards_text(catalog: Catalog, policies: Any) -> str:
    return ", ".join(catalog.term("liberal_card" if p.value == "L" else "fascist_card") for p in policies)


def check_privacy(h: Harness, table_id: str, addresses: list[str], catalog: Catalog, sms: bool,
                  asked: Counter[str], replies: Counter[str]) -> None:
    """Every message each address received is one its seat may see, compared with the game's secrets."""
    table = h.table(table_id)
    state = table.state
    assert state is not None
    roles = state.roles
    names = table.info().short_names if sms else table.names
    header = catalog.text("private-header", sms=sms)
    log = table.log
    assert set(h.channel.sent) <= set(addresses), "a message went to an address with no seat"
    public_stories = set()
    for seat, address in enumerate(addresses):
        inbox = h.channel.inbox(address)
        start = next(i for i, b in enumerate(inbox) if b["message_id"] in ("game-started", "deal-role"))
        inbox = inbox[start:]
        ids = [b["message_id"] for b in inbox]
        end = ended_at(ids)
        by_id: dict[str, list[str]] = {}
        for body in inbox:
            by_id.setdefault(body["message_id"], []).append(body["text"])
        for i, body in enumerate(inbox):
            mid, text = body["message_id"], body["text"]
            assert body["secret"] == (mid in SECRET_IDS), mid
            if body["secret"]:
                assert text.startswith(header), mid
            if i < end and mid not in ("deal-role", "knowledge-title", "party-membership-seen"):
                # Before the end nobody reads another seat's role next to their name.
                for other in range(len(roles)):
                    if other != seat:
                        for word in {catalog.term(r.value) for r in Role}:
                            assert f"{names[other]}: {word}" not in text, (address, mid, text)
        # The deal: own role, and exactly the names the rules let this seat know.
        (deal,) = by_id["deal-role"]
        said = [line for line in deal.split("\n")[1:] if line.strip(". ")]  # the lock screen's filler lines apart
        assert catalog.term(roles[seat].value) in said[0]
        known = {other for other, _ in known_roles(roles, seat)}
        for other in range(len(roles)):
            if other != seat:
                assert (names[other] in deal) == (other in known), (seat, other, deal)
        # Votes: one private confirmation per own vote (SMS confirms nothing: it costs per message).
        own_votes = [e for e in log if isinstance(e, ev.VoteCast) and e.seat == seat]
        confirmations = sum(len(by_id.get(mid, [])) for mid in ("vote-recorded", "vote-recorded-last", "vote-changed"))
        assert confirmations == (0 if sms else len(own_votes))
        # The President's three cards and the Chancellor's two: only to them, the real cards, in order.
        drawn = [e.policies for e in log if isinstance(e, ev.PoliciesDrawn) and e.president == seat]
        assert len(drawn) == sum(1 for s in state.history.sessions if s.president == seat)
        assert [sorted(d) for d in drawn] == [
            sorted(s.drawn) for s in state.history.sessions if s.president == seat
        ]
        discard_prompts = by_id.get("prompt-discard", [])
        assert len(discard_prompts) == len(drawn)
        for cards, text in zip(drawn, discard_prompts, strict=True):
            assert cards_text(catalog, cards) in text
        received = [s.received for s in state.history.sessions if s.chancellor == seat]
        enact_prompts = by_id.get("prompt-enact", []) + by_id.get("prompt-enact-veto", [])
        assert len(enact_prompts) >= len(received)
        for text in enact_prompts:
            assert any(cards_text(catalog, r) in text for r in received), text
        # The President's own discard is confirmed; the Chancellor's other card is not (enacting one says it).
        discards = [s for s in state.history.sessions if s.president == seat]
        assert len(by_id.get("policy-discarded", [])) == (0 if sms else len(discards))

        # Investigation results: only to the investigator, the target's real party.
        mine = [t for p, t in state.history.investigations if p == seat]
        seen = by_id.get("party-membership-seen", [])
        assert len(seen) == len(mine)
        for target, text in zip(mine, seen, strict=True):
            party = catalog.term("liberal_party" if roles[target].party.value == "liberal" else "fascist_party")
            assert names[target] in text and party in text
        # Policy peeks: only to the President who peeked, the real top three.
        peeks = [top for p, top in state.history.peeks if p == seat]
        seen = by_id.get("top-policies-seen", [])
        assert len(seen) == len(peeks)
        for top, text in zip(peeks, seen, strict=True):
            assert cards_text(catalog, top) in text
        # What I know: only when asked, and about me.
        title = catalog.text("knowledge-title", sms=sms)
        answers = [t for t in by_id.get("knowledge-title", []) if title in t]
        assert len(answers) == asked[address]
        for text in answers:
            assert catalog.term(roles[seat].value) in text
        # Replies to bad input: one per bad input, only to its sender.
        assert sum(1 for m in ids if m.startswith(REPLY_PREFIXES)) == replies[address], ids
        public_stories.add(tuple(
            b["text"] for b in inbox
            if not b["secret"] and not b["choices"] and not b["message_id"].startswith(REPLY_PREFIXES)
            and b["message_id"] != "board-title"
        ))
    assert len(public_stories) == 1, "seats were told different public stories"


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    players=st.integers(5, 10),
    seed=st.integers(0, 2**32),
    catalog=st.sampled_from([("classic", "en"), ("classic", "de"), ("corporate", "en"), ("corporate", "de")]),
    sms=st.booleans(),
)
def test_no_private_message_reaches_anyone_else(
    players: int, seed: int, catalog: tuple[str, str], sms: bool
) -> None:
    theme, lang = catalog
    rng = random.Random(seed)
    h = Harness(seed=seed, channel_name="sms" if sms else "fake")
    table_id, _, addresses = h.seat_table(NAMES[:players], language=lang, theme=theme)
    h.start(table_id)
    asked: Counter[str] = Counter()
    replies: Counter[str] = Counter()
    while True:
        table = h.table(table_id)
        state = table.state
        assert state is not None
        if state.phase is Phase.GAME_OVER:
            break
        roll = rng.random()
        if roll < 0.04:
            address = rng.choice(addresses)
            h.send(address, Ask(Query.WHOAMI))
            asked[address] += 1
            continue
        if roll < 0.06:
            h.send(rng.choice(addresses), Ask(Query.BOARD))
            continue
        owing = awaiting(state)
        if roll < 0.09 and state.phase is not Phase.ELECTION:  # a voter may change their vote: not bad input
            idle = [a for s, a in enumerate(addresses) if s not in owing]
            if idle:
                # Someone who owes nothing presses a button anyway: an old prompt, or a current-looking one.
                address = rng.choice(idle)
                old = h.channel.last_prompt(address)
                if old is not None and rng.random() < 0.5:
                    h.press(address, rng, old)
                else:
                    h.send(address, Choose("vj", table.row.decision_step), raw="ja")
                replies[address] += 1
                continue
        h.press(addresses[rng.choice(owing)], rng)
    check_privacy(h, table_id, addresses, Catalog.load(theme, lang), sms, asked, replies)
    assert replayed(h, table_id).state == h.table(table_id).state


# --- bad input -------------------------------------------------------------------------------------------


def snapshot(h: Harness, table_id: str) -> tuple[Any, ...]:
    table = h.table(table_id)
    rows = h.store.execute("SELECT count(*) FROM actions WHERE table_id = ?", (table_id,)).fetchone()[0]
    return (table.state, table.row, tuple(table.seats), len(table.actions), rows)


def until_phase(h: Harness, table_id: str, phase: Phase, rng: random.Random) -> None:
    """Play (pressing buttons) until the game reaches ``phase``."""
    for _ in range(500):
        state = h.table(table_id).state
        assert state is not None and state.phase is not Phase.GAME_OVER
        if state.phase is phase:
            return
        h.press(h.address_of(table_id, rng.choice(awaiting(state))), rng)
    raise AssertionError(f"never reached {phase}")


def only_reply(h: Harness, table_id: str, address: str, others: list[str], send: Any) -> dict[str, Any]:
    """Send bad input; assert exactly one private reply to the sender and nothing else changed."""
    before = snapshot(h, table_id)
    counts = h.channel.count()
    send()
    assert snapshot(h, table_id) == before
    after = h.channel.count()
    for other in others:
        if other != address:
            assert after.get(other, 0) == counts.get(other, 0), other
    assert after.get(address, 0) == counts.get(address, 0) + 1
    reply = h.channel.inbox(address)[-1]
    assert not reply["secret"] and not reply["choices"]
    return reply


def test_bad_input_gets_one_private_reply_and_changes_nothing() -> None:
    rng = random.Random(3)
    h, table_id, addresses = human_table(7, seed=3)
    state = h.table(table_id).state
    assert state is not None and state.president is not None
    president = addresses[state.president]
    bystander = next(a for s, a in enumerate(addresses) if s not in (0, state.president))
    old = h.channel.last_prompt(president)
    assert old is not None

    def reply(address: str, command: Any, raw: str = "") -> dict[str, Any]:
        return only_reply(h, table_id, address, addresses, lambda: h.send(address, command, raw=raw))

    # Unparseable text and an unknown button.
    r = reply(president, Decide("?", "blorp"), raw="blorp")
    assert r["message_id"] == "input-unparseable" and "blorp" in r["text"]
    assert reply(president, Choose("zz", old["decision"]), raw="zz")["message_id"] == "input-unparseable"
    r = reply(president, Choose("99", None), raw="99")  # a number past the options: said so, not "not understood"
    assert r["message_id"] == "input-no-such-option" and "99" in r["text"]
    # A name that could mean two players (Ulla, Ulrich would be; here: every name starting with a letter).
    h2_names = [n for n in NAMES[:7] if n.startswith(("X", "Q", "Z", "Y", "W", "K", "U"))]
    assert len(h2_names) == 7
    r = reply(president, Decide("nominate", ""), raw="nominate")
    assert r["message_id"] == "input-unparseable"
    r = reply(president, Decide("nominate", "Nobody"), raw="nominate Nobody")
    assert r["message_id"] == "input-unparseable"
    # Out of turn: someone who is not the President nominates.
    r = reply(bystander, Choose(f"n{state.president}", old["decision"]), raw="n")
    assert r["message_id"].startswith("violation-")
    # Acting for another seat is impossible: a button always acts for the seat that pressed it.
    r = reply(bystander, Choose(old["choices"][0]["token"], old["decision"]), raw="press")
    assert r["message_id"].startswith("violation-")
    # Host controls from a player who is not the host.
    assert reply(bystander, Host(HostCommand.END))["message_id"] == "not-host"
    assert reply(bystander, Host(HostCommand.PAUSE))["message_id"] == "not-host"
    assert reply(bystander, MoveSeat(NAMES[0], 2))["message_id"] == "not-host"
    # Someone at no table.
    assert reply("stranger", Choose("vj", 0))["message_id"] == "not-at-table"
    assert reply("stranger", Ask(Query.WHOAMI))["message_id"] == "help"  # at no table: how to open or join one
    assert reply("stranger", Host(HostCommand.NUDGE))["message_id"] == "not-at-table"
    # A stale button: the nomination prompt after the nomination was made.
    h.press(president, rng, old)
    assert h.state(table_id).phase is Phase.ELECTION
    r = reply(president, Choose(old["choices"][-1]["token"], old["decision"]), raw="old")
    assert r["message_id"] == "input-stale"
    # Recording votes without physical voting.
    r = reply(president, RecordVotes(tuple(NAMES[:3])), raw="ja: …")
    assert r["message_id"] == "input-nothing-owed"


def test_ambiguous_name_lists_the_candidates() -> None:
    h = Harness(seed=2)
    names = ["Anna", "Annika", "Bert", "Carl", "Dora", "Emil", "Fritz"]
    table_id, _, addresses = h.seat_table(names)
    h.start(table_id)
    state = h.table(table_id).state
    assert state is not None and state.president is not None
    president = addresses[state.president]
    r = only_reply(h, table_id, president, addresses,
                   lambda: h.send(president, Decide("nominate", "ann"), raw="nominate ann"))
    assert r["message_id"] == "input-ambiguous"
    assert "Anna" in r["text"] and "Annika" in r["text"]
    # The exact name is not ambiguous.
    target = "Anna" if state.president != 0 else "Bert"
    h.send(president, Decide("nominate", target.lower()))
    assert h.state(table_id).chancellor == names.index(target)


def test_nobody_acts_at_another_table() -> None:
    h = Harness(seed=8)
    a_id, _, a_addresses = h.seat_table(NAMES[:5], prefix="a")
    b_id, _, b_addresses = h.seat_table(NAMES[5:10], prefix="b")
    h.start(a_id, host="a0")
    h.start(b_id, host="b0")
    a_state = h.table(a_id).state
    assert a_state is not None and a_state.president is not None
    # A player of table B presses the nominate button table A's President received.
    prompt = h.channel.last_prompt(a_addresses[a_state.president])
    assert prompt is not None
    intruder = b_addresses[1]
    before_a = snapshot(h, a_id)
    h.send(intruder, Choose(prompt["choices"][0]["token"], prompt["decision"]), raw="press")
    assert snapshot(h, a_id) == before_a
    assert h.channel.inbox(intruder)[-1]["message_id"].startswith(("violation-", "input-"))
    # Typed in table A's group chat by someone with no seat there: no seat, no move.
    h2 = Harness(seed=9)
    g_id, _ = h2.open("g0", NAMES[0], public=True, chat="groupA")
    code = h2.table(g_id).row.code or ""
    for i in range(1, 5):
        h2.send(f"g{i}", Join(code, NAMES[i]))
    h2.send("g0", Start(), chat="groupA")
    before = snapshot(h2, g_id)
    counts = h2.channel.count()
    h2.send("outsider", Choose("vj", h2.table(g_id).row.decision_step), chat="groupA", raw="ja")
    assert snapshot(h2, g_id) == before
    assert h2.channel.inbox("outsider")[-1]["message_id"] == "not-at-table"
    assert h2.channel.count()["groupA"] == counts["groupA"]


def test_a_typed_vote_and_a_numbered_option_work_like_buttons() -> None:
    rng = random.Random(1)
    h, table_id, addresses = human_table(5, seed=4)
    until_phase(h, table_id, Phase.ELECTION, rng)
    table = h.table(table_id)
    h.send(addresses[0], Decide("vote", "ja"), raw="ja")
    h.send(addresses[1], Choose("2", None), raw="2")  # the second option of the vote prompt: Nein
    assert table.state is not None
    votes = table.state.votes
    assert votes[0] is True and votes[1] is False
    mine = [b["text"] for b in h.channel.inbox(addresses[0]) if b["message_id"] == "vote-recorded"]
    assert len(mine) == 1 and EN.term("ja") in mine[0]


def test_vote_progress_is_anonymous_then_every_vote_is_named() -> None:
    rng = random.Random(2)
    h, table_id, addresses = human_table(7, seed=6)
    until_phase(h, table_id, Phase.ELECTION, rng)
    for seat in range(6):
        h.press(addresses[seat], rng)
    progress = [b["text"] for b in h.channel.inbox(addresses[6]) if b["message_id"] == "vote-progress"]
    assert progress[-1] == EN.text("vote-progress", cast=6, voters=7)
    assert not any(name in text for text in progress for name in NAMES)
    h.press(addresses[6], rng)
    result = next(b["text"] for b in reversed(h.channel.inbox(addresses[3]))
                  if b["message_id"].startswith("election-"))
    assert all(name in result for name in NAMES[:7])


def test_questions_at_any_time() -> None:
    h, table_id, addresses = human_table(6, seed=7)
    state = h.table(table_id).state
    assert state is not None and state.president is not None
    counts = h.channel.count()
    h.send(addresses[2], Ask(Query.WHOAMI))
    h.send(addresses[3], Ask(Query.BOARD))
    h.send(addresses[4], Ask(Query.WAITING))
    after = h.channel.count()
    assert after[addresses[2]] == counts[addresses[2]] + 1
    assert h.channel.ids(addresses[2])[-1] == "knowledge-title"
    assert EN.term(state.roles[2].value) in h.channel.inbox(addresses[2])[-1]["text"]
    waiting = NAMES[state.president]
    for address in addresses[3:5]:
        assert h.channel.ids(address)[-1] == "board-title"
        assert waiting in h.channel.inbox(address)[-1]["text"].split("\n")[-1]
    for address in (addresses[0], addresses[1], addresses[5]):
        assert after[address] == counts[address]


# --- persistence and delivery ----------------------------------------------------------------------------


def test_a_repeated_external_id_is_ignored() -> None:
    rng = random.Random(1)
    h, table_id, addresses = human_table(5, seed=12)
    until_phase(h, table_id, Phase.ELECTION, rng)
    decision = h.table(table_id).row.decision_step
    h.send(addresses[0], Choose("vj", decision), external_id="tg-1")
    before = snapshot(h, table_id)
    counts = h.channel.count()
    h.send(addresses[0], Choose("vn", decision), external_id="tg-1")
    h.send(addresses[0], Choose("vj", decision), external_id="tg-1")
    assert snapshot(h, table_id) == before
    assert h.channel.count() == counts
    assert h.state(table_id).votes[0] is True


def test_restart_resumes_every_game_and_delivers_what_was_pending(tmp_path: Any) -> None:
    path = tmp_path / "moderator.db"
    clock = FakeClock()
    channel = RecordingChannel()
    h = Harness(Store(path), seed=21, clock=clock, channel=channel)
    rng = random.Random(5)
    # Two tables mid-game: one all human, one with computer players (and one paused).
    t1, _, _ = h.seat_table(NAMES[:6])
    h.start(t1)
    for _ in range(15):
        state = h.table(t1).state
        assert state is not None
        h.press(h.address_of(t1, rng.choice(awaiting(state))), rng)
    t2, _ = h.open("c0", "Carla")
    h.send("c0", AddComputers(6))
    h.start(t2, host="c0")
    t3, _, _ = h.seat_table(NAMES[:5], prefix="q")
    h.start(t3, host="q0")
    h.send("q0", Host(HostCommand.PAUSE))
    states = {t: h.table(t).state for t in (t1, t2, t3)}
    rows = {t: h.table(t).row for t in (t1, t2, t3)}
    # A last move whose messages are committed but not yet delivered when the process dies.
    state = h.table(t1).state
    assert state is not None
    owing = h.address_of(t1, awaiting(state)[0])
    prompt = channel.last_prompt(owing)
    assert prompt is not None
    choice = prompt["choices"][0]
    h.service.handle(Inbound("fake", owing, Choose(choice["token"], prompt["decision"]), external_id="last"))
    pending = h.store.backlog()
    assert pending > 0
    states[t1] = h.table(t1).state
    rows[t1] = h.table(t1).row
    h.store.close()

    store = Store(path)
    service = Service(store, clock=clock)
    resumed = service.resume_all()
    assert set(resumed) == {t for t in (t1, t2, t3) if rows[t].status in ("playing", "paused")}
    assert {t1, t3} <= set(resumed)
    for t in (t1, t2, t3):
        table = service.table(t)
        assert table is not None
        assert table.state == states[t]
        assert table.row == rows[t]
    sender = Sender(store, {"fake": channel}, clock=clock)
    delivered = 0
    while n := sender.deliver_due():
        delivered += n
    assert delivered == pending and store.backlog() == 0
    # The input whose messages were pending is not handled twice if the channel delivers it again.
    service.handle(Inbound("fake", owing, Choose(choice["token"], prompt["decision"]), external_id="last"))
    again = service.table(t1)
    assert again is not None
    assert store.backlog() == 0 and again.state == states[t1]
    # The game goes on from where it stopped, in the new process.
    h.service, h.store, h.sender = service, store, sender
    h.play_out(t1, rng)
    assert replayed(h, t1).state == h.table(t1).state
    h.send("q0", Host(HostCommand.RESUME))
    assert h.table(t3).row.status == "playing"
    store.close()


def test_computer_players_owed_a_move_at_a_crash_move_after_restart(tmp_path: Any) -> None:
    path = tmp_path / "moderator.db"
    # A process that dies after a human's move is committed, before the computers' moves: simulated by a
    # service that does not drive computer players.
    h = Harness(Store(path), seed=31, drive_computers=False)
    table_id, _ = h.open("p0", "Ximena")
    h.send("p0", AddComputers(4))
    h.send("p0", Start())
    state = h.table(table_id).state
    assert state is not None
    rng = random.Random(3)
    while all(s == 0 for s in awaiting(state)):
        h.press("p0", rng)
        state = h.table(table_id).state
        assert state is not None
    assert any(s != 0 for s in awaiting(state))
    step = state.step
    h.store.close()
    store = Store(path)
    service = Service(store, clock=h.clock)
    assert service.resume_all() == [table_id]
    table = service.table(table_id)
    assert table is not None and table.state is not None
    assert table.state.step > step
    assert table.state.phase is Phase.GAME_OVER or set(awaiting(table.state)) == {0}
    # What the computers did is in the record, and replays to the same game.
    result = records.replay(records.parse(service.export(table_id)))
    assert result.state == table.state
    store.close()


def test_a_failed_transaction_leaves_nothing_behind() -> None:
    h, table_id, addresses = human_table(5, seed=13)
    state = h.table(table_id).state
    assert state is not None and state.president is not None
    president = addresses[state.president]
    prompt = h.channel.last_prompt(president)
    assert prompt is not None
    before = snapshot(h, table_id)
    backlog = h.store.backlog()

    def broken(*args: Any, **kwargs: Any) -> None:
        raise OSError("disk full")

    with pytest.MonkeyPatch.context() as patch, pytest.raises(OSError):
        patch.setattr(h.store, "enqueue", broken)
        h.send(president, Choose(prompt["choices"][0]["token"], prompt["decision"]), external_id="once")
    assert snapshot(h, table_id) == before
    assert h.store.backlog() == backlog
    # The same input, redelivered by the channel, is handled: its id was not recorded either.
    h.send(president, Choose(prompt["choices"][0]["token"], prompt["decision"]), external_id="once")
    assert h.state(table_id).phase is Phase.ELECTION


def test_temporary_failures_are_retried_with_back_off_in_order() -> None:
    clock = FakeClock()
    channel = RecordingChannel(temporary={"p1": 3})
    h = Harness(seed=1, clock=clock, channel=channel, step=0.0)
    h.seat_table(NAMES[:3])
    # p1's welcome failed; nothing after it overtakes it, and the others get theirs at once.
    assert channel.inbox("p1") == []
    assert channel.ids("p2") == ["table-joined", "seat-taken"]
    tries = [clock.now]
    for _ in range(60):
        clock.advance(0.25)
        before = len(channel.attempts)
        h.deliver()
        if "p1" in channel.attempts[before:]:
            tries.append(clock.now)
        if channel.inbox("p1"):
            break
    assert channel.ids("p1") == ["table-joined", "seat-taken", "seat-taken"]
    # Back-off doubles: the second try a second after the first, then two, then four.
    assert [b - a for a, b in itertools.pairwise(tries)] == [1.0, 2.0, 4.0]
    assert h.store.backlog() == 0


def test_retry_after_from_the_channel_is_respected() -> None:
    clock = FakeClock()
    channel = RecordingChannel(temporary={"p0": 1}, retry_after=30.0)
    h = Harness(seed=1, clock=clock, channel=channel)
    h.open("p0", "Ximena")
    assert channel.inbox("p0") == []
    clock.advance(29)
    h.deliver()
    assert channel.inbox("p0") == []
    clock.advance(1)
    h.deliver()
    assert channel.ids("p0") == ["table-opened"]


def test_a_permanent_failure_marks_the_message_failed() -> None:
    channel = RecordingChannel(permanent={"p1"})
    h = Harness(seed=1, channel=channel)
    h.seat_table(NAMES[:3])
    assert channel.inbox("p1") == []
    assert channel.ids("p2") == ["table-joined", "seat-taken"]
    failed = h.store.execute("SELECT address, status, last_error FROM outbox WHERE status != 'sent'").fetchall()
    assert failed and all(r[0] == "p1" and r[1] == "failed" and r[2] == "blocked" for r in failed)
    assert h.store.backlog() == 0
    tries = channel.attempts.count("p1")
    h.deliver()
    assert channel.attempts.count("p1") == tries


def test_too_many_temporary_failures_give_up() -> None:
    clock = FakeClock()
    channel = RecordingChannel(temporary={"p0": 100})
    h = Harness(seed=1, clock=clock, channel=channel)
    h.open("p0", "Ximena")
    for _ in range(12):
        clock.advance(400)
        h.deliver()
    status = h.store.execute("SELECT status, attempts FROM outbox WHERE address = 'p0'").fetchall()
    assert status == [("failed", h.sender.max_attempts)]


# --- many tables at once ---------------------------------------------------------------------------------


def test_many_tables_interleaved_never_cross() -> None:
    rng = random.Random(9)
    h = Harness(seed=9)
    tables = {}
    for t, players in enumerate((5, 7, 10, 6)):
        table_id, _, addresses = h.seat_table(NAMES[:players], prefix=f"t{t}-")
        tables[table_id] = addresses
    for table_id, addresses in tables.items():
        h.start(table_id, host=addresses[0])
    open_ = set(tables)
    while open_:
        table_id = rng.choice(sorted(open_))
        table = h.table(table_id)
        state = table.state
        assert state is not None
        if state.phase is Phase.GAME_OVER:
            open_.discard(table_id)
            continue
        h.press(table.seats[rng.choice(awaiting(state))].address, rng)
    for table_id, addresses in tables.items():
        table = h.table(table_id)
        assert replayed(h, table_id).state == table.state
        for address in addresses:
            # Every message names only this table's outbox rows.
            rows = h.store.execute("SELECT DISTINCT table_id FROM outbox WHERE address = ?", (address,)).fetchall()
            assert rows == [(table_id,)]
            assert ended_at(h.channel.ids(address)) < len(h.channel.ids(address))
        prompts = [b for a in addresses for b in h.channel.inbox(a) if b.get("table")]
        assert all(b["table"] == table_id for b in prompts)


def test_role_counts_match_the_rules() -> None:
    for players in PLAYER_COUNTS:
        h, table_id, _ = human_table(players, seed=players)
        state = h.table(table_id).state
        assert state is not None
        liberals, fascists = ROLE_COUNTS[players]
        assert Counter(state.roles) == {Role.LIBERAL: liberals, Role.FASCIST: fascists, Role.HITLER: 1}
        assert public_view(state).president == state.president


def test_a_superscript_or_other_unicode_digit_is_unparseable_not_a_crash() -> None:
    h, table_id, addresses = human_table(7, seed=3)
    state = h.table(table_id).state
    assert state is not None and state.president is not None
    president = addresses[state.president]
    old = h.channel.last_prompt(president)
    assert old is not None

    def reply(command: Any, raw: str) -> dict[str, Any]:
        return only_reply(h, table_id, president, addresses, lambda: h.send(president, command, raw=raw))

    for token in ("\u00b2", "n\u00b2"):  # "²".isdigit() is true, and int("²") raises
        assert reply(Choose(token, None), raw=token)["message_id"] == "input-unparseable"
        assert reply(Choose(token, old["decision"]), raw=token)["message_id"] == "input-unparseable"
    # An Arabic-Indic digit is a digit: "x٣" is read as "x3" is.
    assert reply(Choose("x\u0663", old["decision"]), raw="x\u0663")["message_id"] == \
        reply(Choose("x3", old["decision"]), raw="x3")["message_id"]


def test_every_typed_or_sent_number_is_read_one_way_decimal_digits_of_any_script() -> None:
    from moderator.commands import MoveSeat, number
    from moderator.grammar import grammar
    from moderator.moves import parse_token

    assert [number(t) for t in ("0", "07", "12", "\u0663", "\u06f1\u06f2")] == [0, 7, 12, 3, 12]  # ٣ ۱۲
    assert [number(t) for t in ("", "\u00b2", "-1", "1.5", " 1")] == [None] * 5
    assert number("123", 2) is None and number("12", 2) == 12
    for typed in ("computers \u00b2", "move Ann \u00b3", "reminders \u00b2"):
        assert grammar().parse(typed) is None, typed
    assert grammar().parse("move Ann \u0663") == MoveSeat("Ann", 3)  # a Persian keyboard's digits
    assert grammar().parse("computers 3") is not None and grammar().parse("reminders 10") is not None
    assert parse_token(0, "n\u00b2") is None


def test_an_exported_record_lists_every_reshuffle_and_replays_the_same_game_without_its_seed() -> None:
    """docs/game-record.md: a record meant to be replayed anywhere lists every reshuffle; without the seed it
    is still the same game."""
    reshuffled = 0
    for seed in range(1, 40):
        h, table_id, _ = human_table(7, seed=seed)
        h.play_out(table_id, random.Random(seed))
        table = h.table(table_id)
        assert table.state is not None
        export = h.service.export(table_id)
        assert export is not None
        assert len(export["reshuffles"]) == len(table.state.history.reshuffles)
        if not export["reshuffles"]:
            continue
        reshuffled += 1
        del export["seed"]
        result = records.replay(records.parse(export))
        assert result.error is None
        assert result.events == tuple(table.log)
        assert result.state.winner is table.state.winner and result.state.step == table.state.step
        if reshuffled == 3:
            return
    raise AssertionError(f"only {reshuffled} of 39 seeded games reshuffled")


@pytest.mark.parametrize(("typed", "accepted"), [("annehmen", True), ("ablehnen", False), ("yes", True), ("no", False)])
def test_a_president_answers_a_veto_with_the_words_of_any_language(typed: str, accepted: bool) -> None:
    """A typed answer to a proposed veto goes through the grammar: annehmen or yes agrees, ablehnen or no refuses
    (yes and no are ballots elsewhere; here they answer the question the President was asked)."""
    rng = random.Random(14)
    h, table_id, _ = human_table(5, seed=14)  # seed 14 reaches a proposed veto with these presses
    until_phase(h, table_id, Phase.VETO, rng)
    state = h.table(table_id).state
    assert state is not None and state.president is not None
    tracker = state.election_tracker
    command = grammar().parse(typed)
    assert command is not None
    h.send(h.address_of(table_id, state.president), command, raw=typed)
    after = h.table(table_id).state
    assert after is not None
    if accepted:
        assert after.phase is not Phase.VETO and after.election_tracker != tracker  # both discarded, tracker moved
    else:
        assert after.phase is Phase.LEGISLATIVE_CHANCELLOR and after.election_tracker == tracker
