"""A group at a fast table: it hears each result before the next prompt reaches a seat, never more than 20 calls
a minute (across restarts too), and no counter or board edit ever delays a result.

End to end through a real python-telegram-bot Application against the fake Bot API (tests/fake_telegram.py), and
the outbox's order rule through the ``Sender`` with recording channels."""

from __future__ import annotations

import random
from typing import Any

import pytest

from moderator.catalog import Catalog
from moderator.channels import Capabilities, Kind, Outbound
from moderator.commands import Choose, Inbound, Press
from moderator.delivery import PACE_KEPT, Sender
from moderator.engine import Phase
from moderator.store import Store, TableRow, TableStatus
from moderator.transports.telegram import ASIDE_PATIENCE, CHANNEL, GROUP_INTERVAL, GROUP_PER_MINUTE
from tests.fake_telegram import buttons
from tests.fakes import RecordingChannel
from tests.telegram_table import TelegramTable, _is_game, group_chat

EN = Catalog.load("classic", "en")
NAMES = ["Ann", "Bob", "Cy", "Dee", "Eve", "Fay", "Gus"]
GROUP = group_chat(-100600)
pytestmark = pytest.mark.anyio


async def _quick_table(t: TelegramTable, seed: int, group: dict[str, Any] | None = GROUP) -> None:
    """Seven people at a table in the group (or none), dealt with ``seed``, the game started; they will press half
    a second after a prompt."""
    t.typing = 0.0
    t.seed = seed
    await t.boot()
    await t.open_and_start(NAMES, group=group, pause=4.0)


async def _rounds(t: TelegramTable, rounds: int) -> None:
    """``rounds`` of the sender, half a second apart, as its worker wakes under serve."""
    for _ in range(rounds):
        t.clock.advance(0.5)
        await t.bot.deliver()


def _presidents_prompt(t: TelegramTable) -> tuple[str, dict[str, Any]]:
    """The President, who alone has a prompt now, and that prompt."""
    president = next(n for n in NAMES if t.prompt(n) is not None)
    prompt = t.prompt(president)
    assert prompt is not None
    return president, prompt


async def _press_first(t: TelegramTable, name: str, prompt: dict[str, Any]) -> None:
    """``name`` presses the first button of ``prompt``, a message in their private chat."""
    chat = t.chat_of(name)
    t.pressed.add((chat, prompt["message_id"]))
    await t.press(name, chat, prompt["message_id"], buttons(prompt)[0]["callback_data"])


async def _president_nominates(t: TelegramTable) -> str:
    """Once everything is delivered, the President presses the first name offered; the President's name."""
    await t.settle()
    president, prompt = _presidents_prompt(t)
    await _press_first(t, president, prompt)
    return president


async def _press_quickly(t: TelegramTable, rng: random.Random, presses: int) -> None:
    """Whoever has a prompt presses a random answer half a second after it shows, as a fast table does."""
    for _ in range(20 * presses):
        if presses <= 0 or t.table().status == "over":
            return
        waiting = [(n, m) for n in NAMES if (m := t.prompt(n)) is not None]
        t.clock.advance(0.5)
        if not waiting:
            await t.bot.deliver()
            continue
        name, message = rng.choice(waiting)
        chat = t.chat_of(name)
        t.pressed.add((chat, message["message_id"]))
        button = rng.choice([b for b in buttons(message) if _is_game(b["callback_data"])])
        await t.press(name, chat, message["message_id"], button["callback_data"])
        presses -= 1
        _assert_no_prompt_before_the_group(t)


def _assert_no_prompt_before_the_group(t: TelegramTable) -> None:
    """No message to a seat went out while the group still waited for something queued before it (but the
    counter and the board, which wait for the group's spare minutes, and an aside, which leads to no prompt)."""
    overtaken = t.store.execute(
        "SELECT count(*) FROM outbox AS p JOIN outbox AS g ON g.table_id = p.table_id AND g.id < p.id"
        " WHERE g.address = ? AND g.status = 'pending'"
        " AND json_extract(g.body, '$.kind') NOT IN ('counter', 'board', 'aside')"
        " AND p.address != ? AND p.status = 'sent' AND json_extract(p.body, '$.kind') != 'echo'",
        (str(GROUP["id"]), str(GROUP["id"])),
    ).fetchone()[0]
    assert overtaken == 0


def _group_texts(t: TelegramTable) -> list[tuple[int, str]]:
    """(call index, text) of every new message in the group."""
    return [(i, str(c.params.get("text", ""))) for i, c in enumerate(t.api.calls)
            if c.method == "sendMessage" and c.chat_id == GROUP["id"]]


async def test_the_ballots_reach_nobody_but_the_president_before_the_group_has_the_nomination(
    telegram: TelegramTable,
) -> None:
    t = telegram
    await _quick_table(t, 3)
    await t.settle()
    president, prompt = _presidents_prompt(t)
    # Something goes to the group just before the nomination, so the nomination must wait for its slot.
    await t.say(NAMES[1], "/board", chat=GROUP)
    t.clock.advance(0.5)
    start = len(t.api.calls)
    await _press_first(t, president, prompt)
    nominated = EN.text("chancellor-nominated", president=president, chancellor="x").split(" nominates")[0]
    assert not any(f"{nominated} nominates" in text for _, text in _group_texts(t))  # paced, not yet
    assert all(t.prompt(n) is None for n in NAMES if n != president)  # ...and so is every ballot
    # but the President's own, who knows the nomination: it is the message they pressed, asking again.
    own = t.prompt(president)
    assert own is not None and own["message_id"] == prompt["message_id"]
    await _rounds(t, int(GROUP_INTERVAL / 0.5) + 1)
    told = next(i for i, text in _group_texts(t) if f"{nominated} nominates" in text)
    ballots = [i for i, c in enumerate(t.api.calls) if i >= start and c.method == "sendMessage"
               and (c.chat_id or 0) > 0
               and any(_is_game(b.get("callback_data", "")) for row in
                       c.params.get("reply_markup", {}).get("inline_keyboard", []) for b in row)]
    assert ballots and all(i > told for i in ballots)
    assert all(t.prompt(n) is not None for n in NAMES)  # everyone alive votes


async def test_at_a_fast_table_no_prompt_reaches_a_seat_before_the_group_has_the_result_it_follows(
    telegram: TelegramTable
) -> None:
    t = telegram
    await _quick_table(t, 8)
    await _press_quickly(t, random.Random(8), presses=10_000)  # asserts the order after every press
    assert t.table().status == "over"


@pytest.mark.parametrize("restarts", [0, 6])
async def test_the_group_never_gets_more_than_20_calls_a_minute_across_restarts(
    telegram: TelegramTable, restarts: int
) -> None:
    t = telegram
    await _quick_table(t, 5)
    rng = random.Random(5)
    for _ in range(restarts):  # a restart every few seconds: each new process must know the minute's calls
        await _press_quickly(t, rng, presses=6)
        await t.stop()
        await t.boot()
    await _press_quickly(t, rng, presses=10_000)
    await t.settle(600.0)
    assert t.api.max_per_minute(GROUP["id"]) <= GROUP_PER_MINUTE
    assert t.table().status == "over"


async def test_people_joining_within_seconds_cost_the_group_one_edit_of_the_seat_list_per_turn(
    telegram: TelegramTable,
) -> None:
    """Six people follow the QR code's link half a second apart: the group's seat list, paced to a call every
    3 s, is edited once per turn to show everyone who joined meanwhile (was: one edit per join, all at once, and
    the game's start waited for the minute's calls they took)."""
    t = telegram
    t.typing = 0.0
    t.seed = 3
    await t.boot()
    await t.say(NAMES[0], "/newgame", chat=GROUP)
    code = t.join_code(GROUP["id"])
    for name in NAMES[1:]:
        t.clock.advance(0.5)
        await t.say(name, f"/start {code}")
    await t.settle()
    lobby = [c for c in t.api.calls if c.chat_id == GROUP["id"] and c.method in ("sendMessage", "editMessageText")]
    assert len(lobby) <= 3, [c.params.get("text") for c in lobby]  # one send, then an edit a turn at most
    shown = t.api.texts(GROUP["id"])[-1]
    assert all(name in shown for name in NAMES) and f"{len(NAMES)} players" in shown


async def test_a_result_never_waits_for_a_counter_edit(telegram: TelegramTable) -> None:
    t = telegram
    await _quick_table(t, 3)
    await _president_nominates(t)
    await t.settle()
    # Six vote slowly enough that the counter is edited and then held back by its interval.
    for name in NAMES[:6]:
        ballot = t.prompt(name)
        assert ballot is not None
        t.clock.advance(1.0)
        await _press_first(t, name, ballot)
    counters = [c for c in t.api.of("editMessageText", GROUP["id"]) if "voted" in str(c.params.get("text"))]
    assert counters  # the first count was shown; the later ones wait for the counter's interval
    last = t.prompt(NAMES[6])
    assert last is not None
    t.clock.advance(GROUP_INTERVAL)
    pressed = t.clock()
    await _press_first(t, NAMES[6], last)
    result = next(c for c in t.api.of("sendMessage", GROUP["id"]) if "Ja to" in str(c.params.get("text")))
    assert result.at - pressed <= GROUP_INTERVAL
    await t.settle()
    late = [c for c in t.api.of("editMessageText", GROUP["id"])
            if c.at >= result.at and "voted" in str(c.params.get("text"))]
    assert late == []  # the counters held back were folded into the result, never shown after it


async def test_the_board_is_edited_in_a_slot_of_its_own_and_shown_during_a_fast_game(telegram: TelegramTable) -> None:
    t = telegram
    await _quick_table(t, 8)
    await _press_quickly(t, random.Random(8), presses=10_000)
    await t.settle(600.0)
    group = [c.at for c in t.api.calls if c.chat_id == GROUP["id"] and c.method in
             ("sendMessage", "editMessageText", "editMessageMedia", "sendPhoto")]
    boards = [c.at for c in t.api.of("editMessageMedia", GROUP["id"])]
    assert len(boards) >= 2  # the board was shown again during the game, not only at its end
    for at in boards:
        others = [g for g in group if g != at]
        assert all(abs(g - at) >= GROUP_INTERVAL - 1e-6 for g in others)


async def _until_phase(t: TelegramTable, rng: random.Random, phase: Phase) -> None:
    """Quick presses until the game reaches ``phase`` (every prompt of it delivered)."""
    for _ in range(400):
        state = t.table().state
        assert state is not None and t.table().status != "over", f"the game ended before {phase}"
        if state.phase is phase:
            await t.settle()
            return
        await _press_quickly(t, rng, presses=1)
    raise AssertionError(phase)


async def _legislating(t: TelegramTable, group: dict[str, Any] | None = GROUP) -> tuple[str, str]:
    """A quick table (seed 3) plays to its first legislative session and its chats have a quiet moment: nothing
    but patience holds a line back. (President, Chancellor.)"""
    await _quick_table(t, 3, group)
    await _until_phase(t, random.Random(3), Phase.LEGISLATIVE_PRESIDENT)
    await _rounds(t, int(2 * GROUP_INTERVAL / 0.5))
    state = t.table().state
    assert state is not None and state.president is not None and state.chancellor is not None
    return NAMES[state.president], NAMES[state.chancellor]


async def _president_passes(t: TelegramTable) -> tuple[str, str, float]:
    """At the first legislative session (``_legislating``) the President discards; two seconds later (the sender
    waking every half second) the Chancellor has the policies while the group has not been told the President
    passed them. (President, Chancellor, when the President pressed.)"""
    president, chancellor = await _legislating(t)
    prompt = t.prompt(president)
    assert prompt is not None
    await _press_first(t, president, prompt)
    pressed = t.clock()
    await _rounds(t, 4)
    assert t.prompt(chancellor) is not None
    assert not any(f"{president} passed" in text for _, text in _group_texts(t))
    return president, chancellor, pressed


async def test_a_quick_chancellors_enactment_reaches_the_group_in_one_message_with_the_presidents_passing(
    telegram: TelegramTable,
) -> None:
    t = telegram
    president, chancellor, _ = await _president_passes(t)
    prompt = t.prompt(chancellor)
    assert prompt is not None
    await _press_first(t, chancellor, prompt)
    await t.settle()
    told = [text for _, text in _group_texts(t) if f"{president} passed" in text]
    enacted = EN.text("policy-enacted", policy="|", liberal=0, fascist=0).split("|")[0]  # "Enacted: "
    assert len(told) == 1 and told[0].startswith(
        EN.text("policies-handed-over", president=president, chancellor=chancellor) + "\n\n" + enacted)


async def test_a_slow_chancellors_group_hears_within_seconds_that_the_president_passed_the_policies(
    telegram: TelegramTable,
) -> None:
    t = telegram
    president, chancellor, pressed = await _president_passes(t)
    await _rounds(t, 40)  # the Chancellor takes their time
    told = [c for c in t.api.of("sendMessage", GROUP["id"]) if f"{president} passed" in str(c.params.get("text"))]
    assert len(told) == 1 and told[0].params["text"] == EN.text(
        "policies-handed-over", president=president, chancellor=chancellor)
    assert told[0].at - pressed <= ASIDE_PATIENCE + GROUP_INTERVAL


async def test_at_a_table_without_a_group_each_phone_hears_the_passing_and_a_quick_enactment_in_one_message(
    telegram: TelegramTable,
) -> None:
    t = telegram
    president, chancellor = await _legislating(t, group=None)
    prompt = t.prompt(president)
    assert prompt is not None
    await _press_first(t, president, prompt)
    await _rounds(t, 4)  # two seconds: the Chancellor has the policies, and decides
    policies = t.prompt(chancellor)
    assert policies is not None
    await _press_first(t, chancellor, policies)
    await t.settle()
    passing = EN.text("policies-handed-over", president=president, chancellor=chancellor)
    enacted = EN.text("policy-enacted", policy="|", liberal=0, fascist=0).split("|")[0]
    for name in NAMES:
        if name == chancellor:
            continue  # heard it with the policies
        told = [text for text in t.api.texts(t.chat_of(name)) if passing in text]
        assert len(told) == 1 and enacted in told[0].split(passing, 1)[1], name  # one message, one buzz


async def test_a_claim_said_while_the_president_decides_rides_with_the_passing_and_holds_no_chancellor_back(
    telegram: TelegramTable,
) -> None:
    t = telegram
    president, chancellor = await _legislating(t)
    speaker = next(n for n in NAMES if n not in (president, chancellor))
    await t.say(speaker, f"accuse {president}")  # heard by the table with the next result
    prompt = t.prompt(president)
    assert prompt is not None
    await _press_first(t, president, prompt)
    await _rounds(t, 4)
    policies = t.prompt(chancellor)
    assert policies is not None  # nothing the group waits for holds the Chancellor back
    await _press_first(t, chancellor, policies)
    await t.settle()
    told = [text for _, text in _group_texts(t) if f"{president} passed" in text]
    enacted = EN.text("policy-enacted", policy="|", liberal=0, fascist=0).split("|")[0]
    assert len(told) == 1 and f"{speaker}:" in told[0] and enacted in told[0]  # one message: passing, claim, policy


async def test_an_investigation_shows_its_party_in_the_prompt_the_president_pressed_and_nowhere_else(
    telegram: TelegramTable,
) -> None:
    t = telegram
    await _quick_table(t, 1012)
    await _until_phase(t, random.Random(1012), Phase.INVESTIGATE)
    state = t.table().state
    assert state is not None and state.president is not None
    president = NAMES[state.president]
    prompt = t.prompt(president)
    assert prompt is not None and prompt.get("has_protected_content")  # may not be forwarded, once it shows more
    chat = t.chat_of(president)
    before = len(t.api.messages(chat))
    button = buttons(prompt)[0]
    await _press_first(t, president, prompt)
    await t.settle()
    edited = t.api.chats[chat][prompt["message_id"]]
    seen = button["text"].split(": ")[-1]
    membership = EN.text("party-membership-seen", target=seen, party="|").split("|")[0]
    spoilers = [edited["text"][e["offset"]: e["offset"] + e["length"]]
                for e in edited["entities"] if e["type"] == "spoiler"]
    assert "reply_markup" not in edited and any(membership in s for s in spoilers)  # hidden until tapped
    assert not any(membership in text for text in t.api.texts(chat)[before:])  # no second message to say it
    assert not any(membership in text for text in t.api.texts(GROUP["id"]))


async def test_a_nomination_shows_the_name_chosen_in_plain_words_and_the_presidents_ballot_under_it(
    telegram: TelegramTable,
) -> None:
    t = telegram
    await _quick_table(t, 3)
    await t.settle()
    president, prompt = _presidents_prompt(t)
    assert prompt.get("has_protected_content")
    chosen = buttons(prompt)[0]["text"]
    chat = t.chat_of(president)
    before = len(t.api.messages(chat))
    await _press_first(t, president, prompt)
    await t.settle()
    edited = t.api.chats[chat][prompt["message_id"]]
    ballot = EN.text("prompt-vote", president=president, chancellor=chosen, options="")
    assert edited["text"].endswith(f"\u27a1\ufe0f {chosen}\n\n{ballot}")
    assert not any(chosen in edited["text"][e["offset"]: e["offset"] + e["length"]]
                   for e in edited.get("entities", ()) if e["type"] == "spoiler")  # the table hears it anyway
    assert len(t.api.messages(chat)) == before  # no second message: the ballot is where they pressed
    assert [b["text"] for b in buttons(edited)][:2] == [EN.term("ja"), EN.term("nein")]
    assert t.prompt(president) is not None
    await _press_first(t, president, edited)
    votes = t.table().actions[-1]
    assert votes == {"player": president, "action": "vote", "vote": "ja"}


async def _nominated(t: TelegramTable) -> tuple[str, str, dict[str, Any]]:
    """A quick table's first President presses the first name offered; (President, nominee, the pressed prompt)."""
    await _quick_table(t, 3)
    await t.settle()
    president, prompt = _presidents_prompt(t)
    nominee = buttons(prompt)[0]["text"]
    await _press_first(t, president, prompt)
    return president, nominee, prompt


async def test_a_president_who_types_a_vote_after_nominating_votes_on_the_ballot_under_the_nomination(
    telegram: TelegramTable,
) -> None:
    t = telegram
    president, _, _ = await _nominated(t)
    await t.settle()
    await t.say(president, "1")  # the ballot's first option, as the message they look at offers it
    assert t.table().actions[-1] == {"player": president, "action": "vote", "vote": "ja"}
    other = next(n for n in NAMES if n != president)
    await t.say(other, "nein")
    assert t.table().actions[-1] == {"player": other, "action": "vote", "vote": "nein"}


async def test_a_restart_before_the_nomination_is_shown_gives_the_president_one_ballot_and_no_reminder(
    telegram: TelegramTable,
) -> None:
    t = telegram
    await _quick_table(t, 3)
    await t.settle()
    president, prompt = _presidents_prompt(t)
    chat = t.chat_of(president)
    t.api.fail_once[("editMessageText", chat)] = (500, {"description": "Internal Server Error"})
    await _press_first(t, president, prompt)  # the edit that shows the choice and the ballot fails: it waits
    t.store.alive(t.clock())  # the run's heartbeat; then it is killed: no clean stop is recorded
    await t.stop()
    await t.boot()
    assert president not in t.service.returned()  # their ballot still waits to be shown: no reminder, no copy
    await t.settle()
    texts = t.api.texts(chat)
    assert not any(EN.text("reminder-restart") in text for text in texts)
    ballot = EN.text("prompt-vote", president=president, chancellor="|", options="").split("|")[0]
    asking = [m for m in t.api.messages(chat) if ballot in m.get("text", "") and buttons(m)]
    assert [m["message_id"] for m in asking] == [prompt["message_id"]]  # one ballot: the pressed message


async def test_a_vote_chosen_on_the_seats_page_keeps_the_nomination_and_the_question_on_the_chats_message(
    telegram: TelegramTable,
) -> None:
    t = telegram
    president, nominee, prompt = await _nominated(t)
    await t.settle()
    chat = t.chat_of(president)
    ballot = t.prompt(president)
    assert ballot is not None and ballot["message_id"] == prompt["message_id"]
    ja = buttons(ballot)[0]
    table, decision, token = ja["callback_data"].split(":")
    t.service.handle(Inbound(CHANNEL, str(chat), Choose(token, int(decision)), table=table,
                             external_id="page:ja", press=Press("", "", ja["text"])))
    await t.settle()
    shown = t.api.chats[chat][prompt["message_id"]]["text"]
    question = EN.text("prompt-vote", president=president, chancellor=nominee, options="")
    assert f"\u27a1\ufe0f {nominee}\n\n{question}" in shown
    assert shown.endswith(EN.text("vote-recorded", vote=EN.term("ja")))


# --- the outbox's order rule, for any channel that declares it -----------------------------------------------

def test_a_public_first_channel_holds_a_tables_later_messages_to_its_people_and_no_other_channel_waits() -> None:
    store = Store(memory=True)
    store.insert_table(TableRow("T", None, TableStatus.PLAYING, "classic", "slow", "101", "slow", "-1", {}, 1,
                                None, 0), 0.0)
    slow = RecordingChannel(capabilities=Capabilities(public_first=True), retry_after=5.0)
    slow.temporary["-1"] = 1  # the group cannot take its result yet
    other = RecordingChannel()
    clock = [10.0]
    sender = Sender(store, {"slow": slow, "other": other}, clock=lambda: clock[0])

    def note(kind: Kind, text: str) -> dict[str, object]:
        return Outbound(kind, text).to_json()

    store.enqueue([
        ("T", "slow", "101", "echo", note(Kind.ECHO, "your own choice")),
        ("T", "slow", "-1", "result", note(Kind.RESULT, "elected")),
        ("T", "slow", "101", "prompt", note(Kind.PROMPT, "choose a policy")),
        ("T", "slow", "102", "echo", note(Kind.ECHO, "your vote")),
        ("T", "other", "+1555", "prompt", note(Kind.PROMPT, "the same news by text")),
        (None, "slow", "103", "note", note(Kind.NOTE, "at no table")),
    ], 10.0)
    sender.deliver_due()
    assert [b["text"] for b in slow.inbox("101")] == ["your own choice"]  # the prompt waits for the group
    assert [b["text"] for b in slow.inbox("102")] == ["your vote"]  # a person's own answer never waits
    assert other.inbox("+1555") and slow.inbox("103")
    clock[0] += 5.0
    sender.deliver_due()
    sender.deliver_due()
    assert [b["text"] for b in slow.inbox("-1")][:1] == ["elected"]
    assert [b["text"] for b in slow.inbox("101")] == ["your own choice", "choose a policy"]
    order = [(a, b["text"]) for a, b in slow.log]
    assert order.index(("-1", "elected")) < order.index(("101", "choose a policy"))
    store.close()


async def test_stored_paces_older_than_they_matter_are_forgotten_and_recent_ones_kept(
    telegram: TelegramTable,
) -> None:
    t = telegram
    store = Store(t.db)
    pace = '{"free": 1.0, "window": [1.0]}'
    store.set_paces(CHANNEL, {"-100900": pace}, t.clock() - PACE_KEPT - 1.0)  # a group of months ago
    store.set_paces(CHANNEL, {"-100901": pace}, t.clock() - 60.0)  # a group a minute ago
    store.close()
    await _quick_table(t, 3)
    await t.settle()
    kept = dict(t.store.execute("SELECT address, updated FROM pacing").fetchall())
    assert "-100900" not in kept
    assert "-100901" in kept and str(GROUP["id"]) in kept
