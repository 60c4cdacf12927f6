"""The Telegram channel end to end: a real python-telegram-bot Application against an in-process fake Bot API,
fed only with updates shaped as Telegram sends them."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import random
import signal
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from telegram.error import RetryAfter
from telegram.ext import AIORateLimiter

from moderator import app, cli
from moderator.catalog import Catalog, languages
from moderator.channels import Kind, Outbound
from moderator.grammar import grammar
from moderator.settings import Settings
from moderator.store import Store
from moderator.transports import telegram as telegram_transport
from moderator.transports.telegram import (
    CALLBACK_LIMIT,
    CHANNEL,
    GROUP_PER_MINUTE,
    MENU,
    SECRET_HEADER,
    TelegramSettings,
    build_application,
    compose,
    menu,
)
from tests.fake_telegram import (
    TOKEN,
    FakeBotAPI,
    buttons,
    callback_query_id,
    parse_html,
    pressed_at,
    private_chat,
    user,
)
from tests.telegram_table import Clock, TelegramTable, group_chat

EN = Catalog.load("classic", "en")
HEADER = EN.text("private-header")
STALE = EN.text("input-stale")
NAMES = ["Ann", "Bob", "Cy", "Dee", "Eve", "Fay", "Gus", "Hal", "Ivy", "Jo"]
GROUP = group_chat(-100500)
pytestmark = pytest.mark.anyio


def _check_delivery(t: TelegramTable, group: dict[str, Any] | None) -> None:
    """Everything was delivered, no HTML was refused, secrets were hidden, groups were paced."""
    statuses = dict(t.store.execute("SELECT status, count(*) FROM outbox GROUP BY status").fetchall())
    assert set(statuses) == {"sent"}, statuses
    for call in t.api.sends():
        text = str(call.params.get("text", call.params.get("caption", "")))
        if call.method == "editMessageText" and ("<tg-spoiler>" in text or HEADER in text):
            edited = t.api.chats[call.chat_id or 0].get(int(call.params["message_id"]), {})
            assert edited.get("has_protected_content"), text  # a secret is edited only into a protected message
        if "<tg-spoiler>" in text and call.method != "editMessageText":
            assert call.params.get("protect_content") and text.startswith(HEADER), text
        if HEADER in text and call.method != "editMessageText":
            assert text.startswith(HEADER) and call.params.get("protect_content"), text
        if call.chat_id is not None and call.chat_id < 0:
            assert HEADER not in text and "<tg-spoiler>" not in text, text
    if group is not None:
        assert t.api.max_per_minute(group["id"]) <= GROUP_PER_MINUTE
    assert len(t.api.of("answerCallbackQuery")) == t.presses


@pytest.mark.parametrize("players", [5, 7, 10])
@pytest.mark.parametrize("with_group", [True, False], ids=["group", "private"])
async def test_a_complete_game_driven_only_by_telegram_updates(
    telegram: TelegramTable, players: int, with_group: bool
) -> None:
    t = telegram
    t.seed = players
    await t.boot()
    names = NAMES[:players]
    group = GROUP if with_group else None
    qr_chat = await t.open_and_join(names, group=group)
    photo = t.api.of("sendPhoto")[0]
    assert photo.chat_id == qr_chat and photo.files == ["photo"]
    assert t.api.messages(qr_chat)[0]["reply_markup"]["inline_keyboard"][0][0]["url"].startswith(
        "https://t.me/ModeratorTestBot?start="
    )
    lobby_chat = qr_chat
    lobby = [m for m in t.api.messages(lobby_chat)
             if "text" in m and any(":L:" in b.get("callback_data", "") for b in buttons(m))]
    assert len(lobby) == 1  # one lobby message, edited in place as people joined
    assert all(n in lobby[0]["text"] for n in names)
    start = next(b for b in buttons(lobby[0]) if b["callback_data"].endswith(":L:go"))
    await t.press(names[0], lobby_chat, lobby[0]["message_id"], start["callback_data"])
    assert t.table().row.status == "playing"
    await t.play(names, random.Random(players))
    await t.settle()
    end_chats = [GROUP["id"]] if with_group else [t.chat_of(n) for n in names]
    for chat in end_chats:
        assert any("What really happened" in text for text in t.api.texts(chat)), chat
    _check_delivery(t, group)


async def _started(t: TelegramTable, players: int = 5, group: dict[str, Any] | None = GROUP) -> list[str]:
    await t.boot()
    names = NAMES[:players]
    await t.open_and_start(names, group=group)
    assert t.table().row.status == "playing"
    t.clock.advance(2)
    await t.bot.deliver()  # what private pacing held back
    return names


def _president(t: TelegramTable, names: list[str]) -> str:
    state = t.table().state
    assert state is not None and state.president is not None
    return names[state.president]


async def test_a_stale_button_is_answered_no_longer_current_and_changes_nothing(telegram: TelegramTable) -> None:
    t = telegram
    names = await _started(t)
    president = _president(t, names)
    prompt = t.prompt(president)
    assert prompt is not None
    first, second = buttons(prompt)[:2]
    chat = t.chat_of(president)
    await t.press(president, chat, prompt["message_id"], first["callback_data"])
    step = t.table().row.decision_step
    actions = len(t.table().actions)
    # The same prompt again, another name: the decision has moved on.
    await t.press(president, chat, prompt["message_id"], second["callback_data"])
    answer = t.api.of("answerCallbackQuery")[-1]
    assert answer.params["text"] == STALE
    assert t.table().row.decision_step == step and len(t.table().actions) == actions
    # The pressed prompt shows the choice, and now asks the President's own vote (the group heard the nomination):
    # its buttons are the ballot's, none of them a name.
    shown = t.api.chats[chat][prompt["message_id"]]
    assert first["text"] in shown["text"]
    assert not {b["text"] for b in buttons(shown)} & {first["text"], second["text"]}


async def test_a_button_pressed_by_another_user_changes_nothing(telegram: TelegramTable) -> None:
    t = telegram
    names = await _started(t)
    president = _president(t, names)
    intruder = next(n for n in names if n != president)
    prompt = t.prompt(president)
    assert prompt is not None
    before = len(t.table().actions)
    await t.press(intruder, t.chat_of(president), prompt["message_id"], buttons(prompt)[0]["callback_data"])
    assert len(t.table().actions) == before
    told = t.api.texts(t.chat_of(intruder))[-1]
    assert EN.text("violation-not-the-president") in told
    assert "reply_markup" in t.api.chats[t.chat_of(president)][prompt["message_id"]]  # untouched


async def test_a_group_member_without_a_seat_cannot_act(telegram: TelegramTable) -> None:
    t = telegram
    await t.boot()
    names = NAMES[:5]
    await t.open_and_join(names, group=GROUP)
    stranger = "Zed"
    lobby = next(m for m in t.api.messages(GROUP["id"]) if "reply_markup" in m and "text" in m)
    start = next(b for b in buttons(lobby) if b["callback_data"].endswith(":L:go"))
    await t.press(stranger, GROUP["id"], lobby["message_id"], start["callback_data"])
    assert t.table().row.status == "lobby"
    assert EN.text("not-host") in t.api.texts(t.chat_of(stranger))[-1]
    await t.say(names[0], "/startgame", chat=GROUP)
    before = len(t.table().actions)
    await t.say(stranger, "/ja", chat=GROUP)
    await t.say(stranger, "/whoami", chat=GROUP)
    assert len(t.table().actions) == before
    assert t.api.texts(t.chat_of(stranger))[-1] == EN.text("not-at-table")
    # /board in the group is answered in the group, for everyone.
    await t.say(stranger, "/board", chat=GROUP)
    await t.settle()
    assert any(EN.text("board-title") in text for text in t.api.texts(GROUP["id"]))


async def _voting(t: TelegramTable) -> list[str]:
    """A started game whose President nominated the first name offered: everyone has a ballot; the names."""
    names = await _started(t)
    president = _president(t, names)
    prompt = t.prompt(president)
    assert prompt is not None
    await t.press(president, t.chat_of(president), prompt["message_id"], buttons(prompt)[0]["callback_data"])
    await t.settle()  # the group hears the nomination first, then the ballots go out
    return names


async def test_a_vote_typed_in_the_group_is_not_counted_and_deleted(telegram: TelegramTable) -> None:
    t = telegram
    names = await _voting(t)
    voter = names[1]
    before = t.table().state
    await t.say(voter, "/ja", chat=GROUP)
    assert t.table().state is before  # nothing applied
    assert t.api.of("deleteMessage", GROUP["id"])
    assert EN.text("decide-in-private") in t.api.texts(t.chat_of(voter))[-1]
    # Typed in the private chat, the same vote counts, and the prompt shows it.
    await t.say(voter, "/ja")
    state = t.table().state
    assert state is not None and state.votes[names.index(voter)] is True


async def test_a_vote_typed_in_the_group_without_a_command_is_deleted_and_other_talk_is_left_alone(
    telegram: TelegramTable
) -> None:
    t = telegram
    voter = (await _voting(t))[1]
    before, inputs = t.table().state, t.store.execute("SELECT count(*) FROM inbound").fetchone()[0]
    calls = len(t.api.calls)
    # The table talks in its group: words that are no vote are none of the bot's business, even a command's.
    for talk in ("I trust Bob", "board", "whoami", "nominate Cy"):
        await t.say(voter, talk, chat=GROUP)
    assert t.api.calls[calls:] == []  # nothing deleted, nothing answered
    assert t.store.execute("SELECT count(*) FROM inbound").fetchone()[0] == inputs  # nor stored
    # A vote, or an option's number, would give a secret away: deleted, not counted, answered privately.
    for deleted, vote in enumerate(("ja", "2"), 1):
        await t.say(voter, vote, chat=GROUP)
        assert len(t.api.of("deleteMessage", GROUP["id"])) == deleted
        assert t.table().state is before
        assert EN.text("decide-in-private") in t.api.texts(t.chat_of(voter))[-1]


async def test_a_player_who_never_opened_the_bot_is_named_and_the_table_waits(telegram: TelegramTable) -> None:
    t = telegram
    await t.boot()
    names = NAMES[:5]
    host = names[0]
    t.api.never_opened.add(t.chat_of(host))  # opens the table in the group, never the private chat
    await t.open_and_start(names, group=GROUP)  # names[0] is the host
    await t.settle()
    unreachable = EN.text("player-unreachable", name=host)
    assert sum(unreachable in text for text in t.api.texts(GROUP["id"])) == 1
    assert not t.api.messages(t.chat_of(host))
    # Nobody moved for the host; once they open the chat, they learn their role and get their prompt.
    t.api.never_opened.clear()
    await t.say(host, "/start")
    assert t.api.texts(t.chat_of(host))[-1].startswith(HEADER)
    await t.say(host, "/nudge", chat=GROUP)
    state = t.table().state
    assert state is not None
    if state.president == 0:
        assert t.prompt(host) is not None
    await t.play(names, random.Random(3))


async def test_a_429_with_retry_after_is_delivered_after_the_wait(telegram: TelegramTable) -> None:
    t = telegram
    names = await _started(t)
    voter = names[2]
    chat = t.chat_of(voter)
    t.api.fail_once[("sendMessage", chat)] = (
        429, {"description": "Too Many Requests: retry after 7", "parameters": {"retry_after": 7}})
    president = _president(t, names)
    prompt = t.prompt(president)
    assert prompt is not None
    t.clock.advance(5)
    await t.press(president, t.chat_of(president), prompt["message_id"], buttons(prompt)[0]["callback_data"])
    assert t.prompt(voter) is None  # the vote prompt waits
    t.clock.advance(3)
    await t.bot.deliver()
    assert t.prompt(voter) is None
    t.clock.advance(5)
    await t.bot.deliver()
    assert t.prompt(voter) is not None
    assert len(t.api.of("sendMessage", chat)) == len(t.api.messages(chat)) + 1  # one refused, then one each


async def test_the_rate_limiter_never_sleeps_on_a_flood_inside_ptb() -> None:
    clock = Clock()
    api = FakeBotAPI(clock)
    app = build_application(TOKEN, request=api)
    assert isinstance(app.bot.rate_limiter, AIORateLimiter)
    # Telegram asks for 30 s: a limiter that slept on it would take that long; "at once" is well under it even on a
    # loaded machine (a bound of 1 s against a 2 s wait failed under load).
    api.fail_once[("sendMessage", 42)] = (429, {"description": "retry", "parameters": {"retry_after": 30}})
    async with app:
        started = time.monotonic()
        with pytest.raises(RetryAfter):  # back to the outbox at once, which waits without blocking
            await app.bot.send_message(42, "hello")
        assert time.monotonic() - started < 10.0 and len(api.of("sendMessage")) == 1
        message = await app.bot.send_message(42, "hello")
    assert message.text == "hello" and len(api.of("sendMessage")) == 2


def test_a_call_that_times_out_is_cancelled_before_it_is_retried(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(telegram_transport.channel, "API_TIMEOUT", 0.05)  # read where the channel calls
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    landed: list[str] = []

    async def slow_send() -> None:
        await asyncio.sleep(0.3)
        landed.append("sent")

    try:
        # No Bot: _call runs the coroutine it is given and never touches one (a real Bot would need a network).
        channel = telegram_transport.TelegramChannel(None, loop)  # type: ignore[arg-type]
        with pytest.raises(TimeoutError):
            channel._call(slow_send())
        time.sleep(0.5)
        assert landed == []  # the outbox retries it: the first attempt must not land as well
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(2)
        loop.close()


async def test_a_restart_mid_game_resumes_and_old_buttons_work_or_say_no_longer_current(
    telegram: TelegramTable
) -> None:
    t = telegram
    t.seed = 11
    names = await _started(t, 7)
    rng = random.Random(4)
    president = _president(t, names)
    old = t.prompt(president)
    assert old is not None
    await t.press(president, t.chat_of(president), old["message_id"], buttons(old)[0]["callback_data"])
    await t.settle()  # the group hears the nomination first, then the ballots go out
    # Everyone but one votes; then the bot process dies.
    voters = names[:-1]
    ballots = {}
    for name in voters:
        prompt = t.prompt(name)
        assert prompt is not None
        ballots[name] = prompt["message_id"]
        t.pressed.add((t.chat_of(name), prompt["message_id"]))
        await t.press(name, t.chat_of(name), prompt["message_id"], buttons(prompt)[0]["callback_data"])
    await t.stop()
    await t.boot()  # a new Application and Service on the same database file
    last = names[-1]
    prompt = t.prompt(last)
    assert prompt is not None
    await t.press(last, t.chat_of(last), prompt["message_id"], buttons(prompt)[1]["callback_data"])
    state = t.table().state
    assert state is not None and state.phase.value != "election"  # the vote closed after the restart
    # A vote is confirmed in the answer to the press (a toast only its voter sees), not by a message.
    assert t.api.of("answerCallbackQuery")[-1].params["text"].startswith("Your vote")
    assert not [m for m in t.api.messages(t.chat_of(last)) if "Your vote" in m.get("text", "")]
    # A ballot from before the restart keeps its buttons; the election is over, so a press says how it went.
    first = names[0]
    ballot = t.api.chats[t.chat_of(first)][ballots[first]]
    actions = len(t.table().actions)
    await t.press(first, t.chat_of(first), ballots[first], buttons(ballot)[1]["callback_data"])
    assert t.api.of("answerCallbackQuery")[-1].params["text"].startswith("That vote is over:")
    assert len(t.table().actions) == actions

    await t.play(names, rng)
    await t.settle()
    _check_delivery(t, GROUP)


async def test_names_with_markup_emoji_and_right_to_left_text(telegram: TelegramTable) -> None:
    names = ["<b>Ann</b>", "Tom & Jerry", "snake_case_x", "*star*", "\U0001f3b2 Dice", "\u05e9\u05dc\u05d5\u05dd",
             "\u0645\u0631\u062d\u0628\u0627"]
    t = telegram
    t.seed = 2
    await t.boot()
    await t.open_and_join(names, group=GROUP)
    lobby = [m for m in t.api.messages(GROUP["id"]) if "text" in m][-1]
    for name in names:
        assert name in lobby["text"]  # parsed by the strict fake: every name came through as typed
    await t.say(names[0], "/startgame", chat=GROUP)
    await t.play(names, random.Random(9))
    await t.settle()
    _check_delivery(t, GROUP)
    assert any("&lt;b&gt;Ann&lt;/b&gt;" in str(c.params.get("text")) for c in t.api.sends())


async def test_a_group_upgraded_to_a_supergroup_keeps_working(telegram: TelegramTable) -> None:
    t = telegram
    names = await _started(t)
    new = -1009999
    t.api.fail_once[("sendMessage", GROUP["id"])] = (
        400, {"description": "Bad Request: group chat was upgraded to a supergroup chat",
              "parameters": {"migrate_to_chat_id": new}})
    await t.play(names, random.Random(2), presses=3)  # a few presses: group messages go out
    assert t.table().row.public_address == str(new)
    supergroup = group_chat(new, kind="supergroup")
    await t.say(names[1], "/board", chat=supergroup)
    await t.settle()
    assert any(EN.text("board-title") in text for text in t.api.texts(new))


def test_secrets_start_with_a_neutral_line_and_hide_in_a_spoiler() -> None:
    body = Outbound(Kind.NOTE, f"{HEADER}\nYour secret role: Hitler & co <3", secret=True, message_id="deal-role")
    public = Outbound(Kind.CALL, "Ann nominates Bob.", message_id="chancellor-nominated")

    text, secret = compose([public, body])
    assert secret and text.startswith(HEADER + "\n\n")
    plain, entities = parse_html(text)
    spoiler = next(e for e in entities if e["type"] == "spoiler")
    assert "Hitler & co <3" in plain and plain.index("Hitler") >= spoiler["offset"]
    assert compose([public]) == ("Ann nominates Bob.", False)


async def test_commands_are_registered_in_every_language_and_buttons_fit_callback_data(telegram: TelegramTable) -> None:
    t = telegram
    await _started(t, 10)
    menus = t.api.of("setMyCommands")
    assert {c.params.get("language_code") for c in menus} == {None} | set(languages()) - {"en"}
    for call in menus:
        language = call.params.get("language_code") or "en"
        commands = [c["command"] for c in call.params["commands"]]
        assert commands == [c for c, _ in menu(language)] and len(commands) == len(MENU)
        for command in commands:  # every word the menu offers is one the bot takes
            assert grammar().parse("/" + command) is not None, command
    for call in t.api.sends():
        markup = call.params.get("reply_markup") or {}
        for row in markup.get("inline_keyboard", []):
            for button in row:
                assert len(button.get("callback_data", "").encode()) <= CALLBACK_LIMIT


async def _group_lobby(t: TelegramTable) -> tuple[list[str], dict[str, Any]]:
    """A 5-seat table opened in the group, everyone joined 4 s apart; returns the names and the lobby message."""
    await t.boot()
    names = NAMES[:5]
    await t.open_and_join(names, group=GROUP)
    t.clock.advance(5)
    await t.bot.deliver()
    return names, next(m for m in t.api.messages(GROUP["id"]) if "text" in m and "reply_markup" in m)


async def _seat_moves(t: TelegramTable, *presses: str,
                      leaves: str | None = None) -> tuple[tuple[str, ...], str, list[str | None]]:
    """A 5-seat lobby in the group; the host presses the first lobby message's "move up" buttons of the given
    names (as drawn when the lobby was complete) half a second apart, before the list is redrawn (``leaves``
    first leaves the table). Returns the seating order, the lobby as it reads at last and the answers."""
    names, lobby = await _group_lobby(t)
    drawn = {b["text"].split()[-1]: b["callback_data"] for b in buttons(lobby) if ":L:u" in b["callback_data"]}
    if leaves:
        await t.say(leaves, "leave")
    answered = len(t.api.of("answerCallbackQuery"))
    t.typing = 0.5  # presses half a second apart: the group's pace (3 s) has not redrawn the list between
    for name in presses:
        await t.press(names[0], GROUP["id"], lobby["message_id"], drawn[name])
    answers = [c.params.get("text") for c in t.api.of("answerCallbackQuery")[answered:]]
    await t.settle()
    return t.table().names, t.api.chats[GROUP["id"]][lobby["message_id"]]["text"], answers


async def _quick_lobby(t: TelegramTable, players: int = 7) -> tuple[list[str], dict[str, Any]]:
    """A table opened in the group that people join 0.8 s apart by the QR code's link (the group's pace, 3 s,
    holds its list meanwhile), started by the host 0.8 s after the last; returns the names and the lobby message
    as it was before the start."""
    t.typing = 0.0  # people tap, nobody types
    await t.boot()
    names = NAMES[:players]
    await t.say(names[0], "/newgame", chat=GROUP)
    code = t.join_code(GROUP["id"])
    for name in names[1:]:
        t.clock.advance(0.8)
        await t.say(name, f"/start {code}")
        await t.bot.deliver()
    t.clock.advance(0.8)
    await t.bot.deliver()
    lobby = next(m for m in t.api.messages(GROUP["id"]) if "text" in m and "reply_markup" in m)
    go = next(b for b in buttons(lobby) if b["callback_data"].endswith(":L:go"))
    await t.press(names[0], GROUP["id"], lobby["message_id"], go["callback_data"])
    await t.settle(30)
    return names, lobby


async def test_the_lobby_message_becomes_the_games_start_in_the_group(telegram: TelegramTable) -> None:
    """At the start the group's seat list shows the final order and the game's opening lines, its buttons gone:
    one message says it, not the closed list and a second message saying the order again."""
    t = telegram
    names, lobby = await _quick_lobby(t)
    start = t.api.chats[GROUP["id"]][lobby["message_id"]]
    order = ", ".join(f"{i}. {n}" for i, n in enumerate(names, 1))
    assert f"The game starts with 7 players, in this order: {order}." in start["text"]
    assert "A game of Secret Hitler begins with 7 players" in start["text"]
    assert not start.get("reply_markup", {}).get("inline_keyboard")  # no stale seat or start buttons
    opening = [m for m in t.api.messages(GROUP["id"]) if "A game of Secret Hitler begins" in m.get("text", "")]
    assert opening == [start]  # said once
    _check_delivery(t, GROUP)


async def test_a_lobby_message_that_cannot_be_edited_leaves_the_games_start_a_message_of_its_own(
        telegram: TelegramTable) -> None:
    t = telegram
    names, lobby = await _group_lobby(t)
    t.api.fail_once[("editMessageText", GROUP["id"])] = (400, {"description": "Bad Request: message to edit not "
                                                                              "found"})
    go = next(b for b in buttons(lobby) if b["callback_data"].endswith(":L:go"))
    await t.press(names[0], GROUP["id"], lobby["message_id"], go["callback_data"])
    await t.settle(30)
    start = [m for m in t.api.messages(GROUP["id"]) if "The game starts with 5 players" in m.get("text", "")]
    assert [m["message_id"] != lobby["message_id"] for m in start] == [True]
    assert "A game of Secret Hitler begins" in start[0]["text"]


async def test_at_a_quick_lobby_each_joiner_is_welcomed_once_never_before_the_group_shows_their_seat(
        telegram: TelegramTable) -> None:
    """Joins within a second: each welcome goes with the group's list that shows the seat (the group is paced),
    and one still waiting when the deal comes is at the head of the deal's message; nobody misses theirs."""
    t = telegram
    names, _ = await _quick_lobby(t)
    group_lists = [c for c in t.api.sends() if c.chat_id == GROUP["id"] and "in this order" in str(c.params)]
    folded = 0
    for number, name in enumerate(names[1:], 2):
        chat = t.chat_of(name)
        welcome = f"Welcome, {name}! You have a seat; {number} players are at the table."
        texts = t.api.texts(chat)
        holding = [i for i, text in enumerate(texts) if welcome in text]
        role = next(i for i, text in enumerate(texts) if "Your secret role" in text)
        assert len(holding) == 1 and holding[0] <= role, texts
        folded += holding[0] == role
        sent = next(c for c in t.api.sends() if c.chat_id == chat and welcome in str(c.params.get("text")))
        assert any(c.at <= sent.at and f"{number}. {name}" in str(c.params.get("text")) for c in group_lists)
    assert folded >= 1  # the last joiners' welcomes rode with the deal
    _check_delivery(t, GROUP)


async def test_the_host_orders_the_seats_with_buttons(telegram: TelegramTable) -> None:
    order, lobby_text, _ = await _seat_moves(telegram, "Eve")
    assert order == ("Ann", "Bob", "Cy", "Eve", "Dee")
    assert "4. Eve, 5. Dee" in lobby_text


async def test_quick_presses_of_the_lobbys_arrows_each_move_the_one_they_name_in_order(
        telegram: TelegramTable) -> None:
    """Move Cy up, then Eve up, within a second, on the list as it was drawn: both move (was: the second was
    answered with nothing and did nothing)."""
    order, lobby_text, answers = await _seat_moves(telegram, "Cy", "Eve")
    assert order == ("Ann", "Cy", "Bob", "Eve", "Dee")
    assert "1. Ann, 2. Cy, 3. Bob, 4. Eve, 5. Dee" in lobby_text  # the group's list, redrawn once paced
    assert answers == [None, None]


async def test_an_arrow_pressed_twice_quickly_moves_its_player_two_places(telegram: TelegramTable) -> None:
    order, _, _ = await _seat_moves(telegram, "Eve", "Eve")
    assert order == ("Ann", "Bob", "Eve", "Cy", "Dee")


async def test_a_quick_press_past_the_first_seat_is_refused_with_the_reason(telegram: TelegramTable) -> None:
    order, _, answers = await _seat_moves(telegram, "Bob", "Bob")  # the second would move Bob past the first seat
    assert order == ("Bob", "Ann", "Cy", "Dee", "Eve")
    assert answers == [None, EN.text("seat-first", name="Bob")]


async def test_the_arrow_of_a_player_who_left_meanwhile_is_refused_with_the_reason(telegram: TelegramTable) -> None:
    order, _, answers = await _seat_moves(telegram, "Eve", leaves="Eve")
    assert order == ("Ann", "Bob", "Cy", "Dee")
    assert answers == [EN.text("seats-changed")]


async def test_computers_at_a_full_table_are_refused_in_the_hosts_chat_and_the_group_hears_nothing(
    telegram: TelegramTable
) -> None:
    t = telegram
    await t.boot()
    await t.open_and_join(NAMES, group=GROUP)
    await t.settle()
    group, host = len(t.api.texts(GROUP["id"])), len(t.api.texts(t.chat_of(NAMES[0])))
    await t.say(NAMES[0], "/computers", chat=GROUP)
    await t.settle()
    assert t.api.texts(t.chat_of(NAMES[0]))[host:] == ["This table is full: at most 10 players."]
    assert len(t.api.texts(GROUP["id"])) == group and len(t.table().seats) == 10


def test_settings_read_the_environment_then_a_dotenv_file(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("# bot\nTELEGRAM_TOKEN='123:abc'\nexport TELEGRAM_API_URL=http://localhost:8081\n"
                                   "MODERATOR_PORT=\"8001\"  # a comment after a quoted value\n")
    settings = Settings.load({"MODERATOR_DB": str(tmp_path / "x.db")}, tmp_path)
    telegram = TelegramSettings.of(settings)
    assert telegram.token == "123:abc" and telegram.api_url == "http://localhost:8081"
    assert settings.db_path == tmp_path / "x.db" and settings.port == 8001
    assert TelegramSettings.of(Settings.load({"TELEGRAM_TOKEN": "9:z"}, tmp_path)).token == "9:z"


class PollingBotAPI(FakeBotAPI):
    """The fake Bot API on a real clock, whose ``getUpdates`` waits a moment when nothing is waiting, as Telegram's
    long poll does (the fake's own answers at once)."""

    async def do_request(self, url: str, method: str, request_data: Any = None, *args: Any,
                         **kwargs: Any) -> tuple[int, bytes]:
        answer = await super().do_request(url, method, request_data, *args, **kwargs)
        if url.endswith("/getUpdates") and not self.updates:
            await asyncio.sleep(0.05)
        return answer


def test_moderator_telegram_answers_by_long_polling_and_stops_cleanly_on_sigterm(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The command itself (``app.TELEGRAM``: no web server, the bot polls): an update is answered and confirmed,
    and SIGTERM stops it with status 0, its table stored for the next start."""
    monkeypatch.setattr(app, "_logging", lambda: None)  # the test's own logging stays as it is
    monkeypatch.setattr(app, "safe_logs", lambda settings: None)
    api = PollingBotAPI(time.time)
    ann = user(10_001, "Ann")
    api.updates.append({"update_id": 1, "message": {
        "message_id": 1, "from": ann, "chat": private_chat(ann), "date": int(time.time()), "text": "/newgame",
        "entities": [{"type": "bot_command", "offset": 0, "length": 8}]}})
    settings = Settings.load({"TELEGRAM_TOKEN": TOKEN, "MODERATOR_DB": str(tmp_path / "m.db")}, cwd=tmp_path)
    answered = threading.Event()

    def stop_once_answered() -> None:
        for _ in range(400):  # at most 20 s; without an answer the command is left to fail the test
            joined = any("url" in b for m in api.messages(ann["id"]) for b in buttons(m))
            if joined and not api.updates and api.of("getUpdates")[-1].params.get("offset") == 2:
                answered.set()
                os.kill(os.getpid(), signal.SIGTERM)  # the command's handler takes it: a clean stop
                return
            time.sleep(0.05)

    threading.Thread(target=stop_once_answered, daemon=True).start()
    assert app.run(settings, app.TELEGRAM, network={"telegram": api}) == 0
    assert answered.is_set()
    assert not api.of("setWebhook") and api.of("deleteWebhook")  # polling, never a webhook
    store = Store(tmp_path / "m.db")
    try:
        assert [t.status for t in store.tables_of(CHANNEL, str(ann["id"]))] == ["lobby"]
    finally:
        store.close()


def test_moderator_telegram_without_a_token_says_so_and_exits_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TELEGRAM_TOKEN", raising=False)
    assert cli.main(["telegram"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "TELEGRAM_TOKEN" in err


async def test_a_group_upgraded_while_the_qr_code_is_sent_moves_only_the_group(telegram: TelegramTable) -> None:
    t = telegram
    await t.boot()
    new = -1007777
    t.api.migrated[GROUP["id"]] = new  # every send to the old group now answers migrate_to_chat_id
    names = NAMES[:5]
    await t.say(names[0], "/newgame", chat=GROUP)  # the QR code is sent into the group: it moved
    assert t.api.of("sendPhoto", new) and t.table().row.public_address == str(new)
    code = t.join_code(new)
    for name in names[1:]:
        await t.say(name, f"/start {code}")
    supergroup = group_chat(new, kind="supergroup")
    await t.say(names[0], "/startgame", chat=supergroup)
    await t.settle()
    assert t.table().row.status == "playing"
    # The host's role reached the host's private chat, never the group.
    assert any(text.startswith(HEADER) for text in t.api.texts(t.chat_of(names[0])))
    assert not any(HEADER in text for text in t.api.texts(new))


async def test_a_prompt_that_cannot_be_edited_never_stalls_the_table(telegram: TelegramTable) -> None:
    t = telegram
    names = await _started(t)
    president = _president(t, names)
    chat = t.chat_of(president)
    gone = {"description": "Bad Request: message to edit not found"}
    t.api.fail_once[("editMessageText", chat)] = (400, gone)
    prompt = t.prompt(president)
    assert prompt is not None
    t.pressed.add((chat, prompt["message_id"]))
    await t.press(president, chat, prompt["message_id"], buttons(prompt)[0]["callback_data"])
    await t.settle(30)
    edits = len(t.api.of("editMessageText", chat))
    assert t.prompt(president) is not None  # the vote prompt that came with the press was delivered
    # A vote needs no edit at all: it is confirmed in the answer to the press.
    voter = next(n for n in names if n != president)
    ballot = t.prompt(voter)
    assert ballot is not None
    before = len(t.api.messages(t.chat_of(voter)))
    t.api.fail_once[("editMessageText", t.chat_of(voter))] = (400, gone)
    t.pressed.add((t.chat_of(voter), ballot["message_id"]))
    await t.press(voter, t.chat_of(voter), ballot["message_id"], buttons(ballot)[0]["callback_data"])
    await t.settle(30)
    assert len(t.api.messages(t.chat_of(voter))) == before
    assert t.api.of("answerCallbackQuery")[-1].params["text"].startswith("Your vote")

    statuses = dict(t.store.execute("SELECT status, count(*) FROM outbox GROUP BY status").fetchall())
    assert set(statuses) == {"sent"}, statuses
    assert len(t.api.of("editMessageText", chat)) == edits  # the failed edit is not retried
    await t.play(names, random.Random(6))


async def test_after_a_restart_a_secret_prompt_shows_the_choice_in_a_spoiler(telegram: TelegramTable) -> None:
    t = telegram
    names = await _started(t)
    rng = random.Random(1)
    # Play until a prompt whose choice is a secret (discard, enact: a card) is waiting; then the bot restarts.
    while True:
        waiting = [(n, m) for n in names if (m := t.prompt(n)) is not None]
        secret = [(n, m) for n, m in waiting if m.get("has_protected_content")
                  and any(p in b["text"] for b in buttons(m) for p in ("Liberal", "Fascist"))]
        if secret:
            break
        await t.play(names, rng, presses=1)
    await t.stop()
    await t.boot()  # the channel no longer remembers the prompt: it is edited from the update's text
    name, prompt = secret[0]
    chat = t.chat_of(name)
    button = buttons(prompt)[0]
    t.pressed.add((chat, prompt["message_id"]))
    await t.press(name, chat, prompt["message_id"], button["callback_data"])
    await t.settle(30)
    edited = t.api.chats[chat][prompt["message_id"]]
    assert "reply_markup" not in edited and edited.get("edit_date")  # the edit went through
    spoilers = [edited["text"][e["offset"] : e["offset"] + e["length"]]
                for e in edited["entities"] if e["type"] == "spoiler"]
    assert spoilers and edited["text"].endswith(spoilers[-1])  # the choice shown last, hidden
    assert button["text"] in spoilers[-1]


def test_the_fake_accepts_the_html_telegram_accepts() -> None:
    text, entities = parse_html('<span class="tg-spoiler">a &amp; b</span> <a href="https://t.me/x?a=1&amp;b=2">l</a>'
                                " <blockquote>q</blockquote>")
    assert text == "a & b l q"
    assert [e["type"] for e in entities] == ["spoiler", "text_link", "blockquote"]
    assert entities[1]["url"] == "https://t.me/x?a=1&b=2"
    for refused in ("<span>x</span>", "<a>x</a>", '<b class="x">y</b>', "a < b"):
        with pytest.raises(ValueError):
            parse_html(refused)


async def test_superscript_and_other_unicode_digits_are_unparseable_not_a_crash(telegram: TelegramTable) -> None:
    t = telegram
    await t.boot()
    names = NAMES[:5]
    await t.open_and_join(names, group=GROUP)
    await t.say(names[0], "/computers \u00b2", chat=GROUP)  # t.feed asserts no handler failed
    await t.say(names[0], "/reminders \u00b2")
    await t.say(names[0], "/startgame", chat=GROUP)
    await t.settle(10)
    president = _president(t, names)
    before = len(t.api.messages(t.chat_of(president)))
    await t.say(president, "\u00b2")
    await t.say(president, "\u0663")  # an Arabic-Indic three: decimal, not ASCII
    assert len(t.api.messages(t.chat_of(president))) > before  # answered, as any text we cannot read
    prompt = t.prompt(president)
    assert prompt is not None
    table, _, token = buttons(prompt)[0]["callback_data"].split(":")
    await t.press(president, t.chat_of(president), prompt["message_id"], f"{table}:\u00b2:{token}")
    lobby = f"{table}:L:u\u00b2"
    await t.press(president, t.chat_of(president), prompt["message_id"], lobby)


async def test_newgame_takes_the_hosts_name_as_the_readme_writes_it(telegram: TelegramTable) -> None:
    t = telegram
    await t.boot()
    await t.say("Ann", "/newgame Annie")
    assert t.table().names == ("Annie",)
    await t.say("Ann", "/leave")
    await t.say("Ann", "/newgame corporate")  # a theme first: the name is Telegram's
    assert t.table().names == ("Ann",) and t.table().row.theme == "corporate"


async def test_a_group_that_refuses_the_qr_code_is_not_blamed_on_the_host(telegram: TelegramTable) -> None:
    t = telegram
    await t.boot()
    host = NAMES[0]
    kicked = {"description": "Forbidden: bot was kicked from the group chat"}
    t.api.fail_once[("sendPhoto", GROUP["id"])] = (403, kicked)
    await t.say(host, "/newgame", chat=GROUP)
    await t.settle(30)
    unreachable = EN.text("player-unreachable", name=host)
    everywhere = [text for chat in list(t.api.chats) for text in t.api.texts(chat)]
    assert not any(unreachable in text for text in everywhere)
    errors = [e for (e,) in t.store.execute("SELECT last_error FROM outbox WHERE status = 'failed'")]
    assert errors and all(str(GROUP["id"]) in e for e in errors), errors
    await t.say(host, "/whoami")  # the host's private chat works as before
    assert t.api.texts(t.chat_of(host))


async def test_a_group_hears_the_language_of_whoever_opened_the_table_there_and_of_the_host_later(
    telegram: TelegramTable
) -> None:
    t = telegram
    await t.boot()
    t.person("Ann", "de")  # her Telegram app speaks German
    await t.open_and_join(["Ann", "Bob"], group=GROUP)
    texts = "\n".join(t.api.texts(GROUP["id"]))
    assert "Bob ist dabei." in texts and "Bob joined." not in texts
    await t.say("Bob", "/language en", chat=GROUP)  # not the host: only his own language
    await t.say("Cy", "/start " + t.join_code(GROUP["id"]))
    assert "Cy ist dabei." in "\n".join(t.api.texts(GROUP["id"]))
    await t.say("Ann", "/language en", chat=GROUP)  # the host, in the group: the group's language
    await t.say("Dee", "/start " + t.join_code(GROUP["id"]))
    assert "Dee joined." in "\n".join(t.api.texts(GROUP["id"]))


# --- a press whose answer comes too late ------------------------------------------------------------------------


class _Phones:
    """People on Telegram talking to a ``moderator serve`` (tests.serve_driver) through its webhook, as Telegram
    delivers their updates; what each phone shows is Telegram's memory (``FAKE_TELEGRAM_MEMORY``)."""

    def __init__(self, memory: Path) -> None:
        self.memory = memory
        self.port = 0
        self.people = {name: user(20_000 + i, name) for i, name in enumerate(NAMES[:5])}
        self.ids = itertools.count(1)

    def telegram(self) -> dict[str, Any]:
        return dict(json.loads(self.memory.read_text())) if self.memory.exists() else {"chats": {}, "calls": []}

    def messages(self, name: str) -> list[dict[str, Any]]:
        chat = self.telegram()["chats"].get(str(self.people[name]["id"]), {})
        return [chat[k] for k in sorted(chat, key=int)]

    def deliver(self, update: dict[str, Any], timeout: float = 10.0) -> int:
        from tests.serve_app import SECRET
        from tests.serve_driver import http, post

        body = json.dumps(update).encode()
        raw = post(self.port, "/telegram", body, {"Content-Type": "application/json", SECRET_HEADER: SECRET})
        return http(self.port, raw, timeout)[0]

    def say(self, name: str, text: str) -> None:
        person = self.people[name]
        n = next(self.ids)
        message = {"message_id": n, "from": person, "date": int(time.time()), "text": text,
                   "chat": private_chat(person)}
        if text.startswith("/"):
            message["entities"] = [{"type": "bot_command", "offset": 0, "length": len(text.split()[0])}]
        assert self.deliver({"update_id": n, "message": message}) == 200

    def press_update(self, name: str, message: dict[str, Any], label: str) -> dict[str, Any]:
        """The update of ``name`` pressing the button ``label`` under ``message``, made now."""
        data = next(b["callback_data"] for b in buttons(message) if b["text"] == label)
        n = next(self.ids)
        query = {"id": callback_query_id(n, time.time()), "from": self.people[name], "message": message,
                 "chat_instance": "ci", "data": data}
        return {"update_id": n, "callback_query": query}

    def until(self, what: Any, timeout: float = 20.0) -> Any:
        deadline = time.monotonic() + timeout
        while not (found := what()):
            assert time.monotonic() < deadline, "the phones never showed it"
            time.sleep(0.1)
        return found


def test_a_vote_pressed_while_the_bot_was_down_past_telegrams_answer_window_shows_that_it_counted(
        tmp_path: Path) -> None:
    """Bob votes, and the server is killed between his press and its answer; Cy votes while it is down. When it
    is back, past Telegram's answer window (shortened here), Telegram delivers both presses again and answers
    "query is too old" to the toasts: each voter's phone still shows, in a private message, the vote recorded."""
    from tests.serve_driver import moderator_serve

    memory, hang = tmp_path / "telegram.json", tmp_path / "hang"
    phones = _Phones(memory)
    recorded = EN.text("vote-recorded", vote=EN.term("ja"))
    with moderator_serve(tmp_path, FAKE_TELEGRAM_MEMORY=str(memory), FAKE_TELEGRAM_ANSWER_WINDOW="1.5",
                         FAKE_TELEGRAM_HANG=str(hang)) as served:
        phones.port = served.port
        phones.say("Ann", "/newgame")
        join = phones.until(lambda: [b["url"] for m in phones.messages("Ann") for b in buttons(m) if "url" in b])
        code = join[0].rsplit("=", 1)[1]
        for name in NAMES[1:5]:
            phones.say(name, f"/start {code}")
        phones.say("Ann", "/startgame")

        def prompt(name: str) -> dict[str, Any] | None:
            shown = [m for m in phones.messages(name) if any(":" in b.get("callback_data", "")
                                                             and ":L:" not in b["callback_data"] for b in buttons(m))]
            return shown[-1] if shown else None

        president = phones.until(lambda: next((n for n in NAMES[:5] if prompt(n)), None))
        nomination = prompt(president)
        assert nomination is not None
        assert phones.deliver(phones.press_update(president, nomination, buttons(nomination)[0]["text"])) == 200
        def ballot(name: str) -> dict[str, Any] | None:
            shown = prompt(name)
            return shown if shown is not None and EN.term("ja") in [b["text"] for b in buttons(shown)] else None

        phones.until(lambda: ballot("Bob") and ballot("Cy"))
        bob = phones.press_update("Bob", ballot("Bob") or {}, EN.term("ja"))
        cy = phones.press_update("Cy", ballot("Cy") or {}, EN.term("ja"))
        hang.touch()  # Telegram's answer to Bob's press will not come back before the kill

        def unanswered() -> None:
            with contextlib.suppress(Exception):  # the server dies before it answers
                phones.deliver(bob, 30.0)

        threading.Thread(target=unanswered, daemon=True).start()
        phones.until(lambda: any(c["method"] == "answerCallbackQuery"
                                 and c["params"].get("callback_query_id") == bob["callback_query"]["id"]
                                 for c in phones.telegram()["calls"]))  # stored, its answer on its way
        os.kill(served.pid, signal.SIGKILL)
    hang.unlink()
    pressed = pressed_at(cy["callback_query"]["id"]) or 0.0
    time.sleep(max(0.0, pressed + 1.6 - time.time()))  # the answer window of both presses passes while it is down
    with moderator_serve(tmp_path, FAKE_TELEGRAM_MEMORY=str(memory), FAKE_TELEGRAM_ANSWER_WINDOW="1.5") as served:
        phones.port = served.port
        assert phones.deliver(bob) == 200  # Telegram delivers the update again: a repeat, already counted
        assert phones.deliver(cy) == 200  # pressed while the bot was down
        for name in ("Bob", "Cy"):
            phones.until(lambda name=name: any(recorded in m.get("text", "") for m in phones.messages(name)))
        answers = [c for c in phones.telegram()["calls"] if c["method"] == "answerCallbackQuery"]
    too_late = {bob["callback_query"]["id"], cy["callback_query"]["id"]}
    assert {c["params"]["callback_query_id"] for c in answers[-2:]} == too_late  # each answered too late
    with sqlite3.connect(tmp_path / "serve.db") as db:
        votes = [json.loads(a) for (a,) in db.execute("SELECT action FROM actions")]
    assert [v["player"] for v in votes if v["action"] == "vote"] == ["Bob", "Cy"]  # each once


async def test_a_telegram_apps_regional_language_is_matched_by_its_base_code(telegram: TelegramTable) -> None:
    """``fa-IR`` is Persian, ``es-419`` Spanish and ``pt-BR`` Portuguese; a language without a catalog is English."""
    absent = next(code for code in ("ja-JP", "ko-KR", "tr-TR", "zh-CN") if code[:2] not in languages())
    t = telegram
    await t.boot()
    t.person("Ann", "fa-IR")
    t.person("Bob", "es-419")
    t.person("Cy", "pt-BR")
    t.person("Di", absent)
    await t.open_and_join(["Ann", "Bob", "Cy", "Di"], group=GROUP)
    persian = Catalog.load("classic", "fa")
    # The group speaks its opener's language; the Latin name and seat list isolated in the Persian sentence.
    seated = persian.text("seat-taken", name="\u2068Di\u2069", players=4,
                          seating="\u20681. Ann, 2. Bob, 3. Cy, 4. Di\u2069")
    assert t.api.texts(GROUP["id"])[-1] == seated
    for name, lang in (("Bob", "es"), ("Cy", "pt"), ("Di", "en")):
        await t.say(name, "/whoami")
        assert t.api.texts(t.chat_of(name))[-1] == Catalog.load("classic", lang).text("game-not-started")
