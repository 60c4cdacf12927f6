"""The browser channel through the real ``serve`` app: phone pages, pass-and-play, the table screen, seat tokens,
and privacy (no page or event stream shows a secret its viewer may not know)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import html
import logging
import random
import re
import shutil
import sqlite3
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from urllib.parse import quote, urlencode

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from moderator import render
from moderator.board import layout
from moderator.catalog import BUNDLED, Catalog
from moderator.commands import HostCommand
from moderator.engine import Role, awaiting, view_for
from moderator.limits import JOIN_GUESSES_AT_ONCE, PIN_GUESSES
from moderator.render import InputProblem
from moderator.transports import web
from tests.web_table import TestClient, WebTable, browser_beside, choices, every_channel, text_of

NAMES = ("Ann", "Bob", "Cy", "Dee", "Eve")


def five_started(wt: WebTable) -> tuple[str, dict[str, TestClient]]:
    """Five phones at a table the host opened (without a seat) and started; returns (table id, phones by name)."""
    table_id, code = wt.open("Host", play=False)
    phones = {name: wt.join(code, name) for name in NAMES}
    wt.host_do(table_id, "start")
    return table_id, phones


def president_of(wt: WebTable, table_id: str, phones: dict[str, TestClient]) -> TestClient:
    """The phone of the table's President (or Presidential Candidate)."""
    t = wt.service.table(table_id)
    return phones[t.seats[t.state.president].name]


def _lines(text: str) -> set[str]:
    """The lines of a message that can carry a secret (the deal's padding of dashes carries none)."""
    return {line for line in text.splitlines() if len(line) >= 8 and any(c.isalpha() for c in line)}


def secret_lines(wt: WebTable, table_id: str) -> dict[str | None, set[str]]:
    """Every line of every secret a seat holds (its messages and its recap), by address."""
    out: dict[str | None, set[str]] = {}
    for address, text in wt.bodies(secret=True):
        out.setdefault(address, set()).update(_lines(text))
    t = wt.service.table(table_id)
    if t.state is not None:
        catalog = Catalog.load(t.row.theme, "en")
        for seat in t.seats:
            for m in render.knowledge_messages(view_for(t.state, seat.position), t.info(), catalog):
                out.setdefault(seat.address, set()).update(_lines(m.text))
    return out


def assert_private(wt: WebTable, table_id: str, pages: dict[str | None, str]) -> None:
    """No page shows a line of another seat's secrets that it does not hold itself (None: the table screen)."""
    held = secret_lines(wt, table_id)
    public = set().union(*(_lines(text) for _, text in wt.bodies(secret=False)))  # rules quoted in a deal, say
    public.add(Catalog.load("classic", "en").text("deal-goal"))  # the rules: every page offers them
    everything = set().union(*held.values()) - public
    for viewer, page in pages.items():
        visible = text_of(page)
        for line in everything - held.get(viewer, set()):
            assert line not in visible, f"{viewer or 'the table screen'} shows another seat's secret: {line!r}"


def test_a_five_player_game_plays_through_five_phone_pages_and_no_page_leaks(table: WebTable) -> None:
    table_id, phones = five_started(table)
    assert table.status(table_id) == "playing"
    rng = random.Random(7)
    answered: set[tuple[str, str]] = set()
    screen = table.device()
    for _ in range(400):
        if table.status(table_id) == "over":
            break
        pages = {name: phone.get(f"/play/{table_id}/live").text for name, phone in phones.items()}
        addresses = {table.service.table(table_id).seats[i].address: n for i, n in enumerate(NAMES)}
        by_address = {a: pages[n] for a, n in addresses.items()}
        assert_private(table, table_id, {**by_address, None: screen.get(f"/table/{table_id}/live").text})
        owed = [
            (n, c) for n in NAMES for c in [choices(pages[n])] if c and (n, c[0].fields["decision"]) not in answered
        ]
        assert owed, "nobody owes a decision, yet the game is not over"
        name, options = rng.choice(owed)
        pick = rng.choice(options)
        response = phones[name].post(f"/play/{table_id}", data=pick.fields, follow_redirects=False)
        assert response.status_code == 303 and response.headers["location"] == f"/play/{table_id}"
        answered.add((name, pick.fields["decision"]))
    assert table.status(table_id) == "over"
    final = text_of(screen.get(f"/table/{table_id}").text)
    catalog = Catalog.load("classic", "en")
    assert catalog.text("truth-title") in final  # the truth timeline, with every role, once it is over


def test_pass_and_play_plays_a_whole_game_on_the_host_device(table: WebTable) -> None:
    table_id, _code = table.open("Ann")
    for name in NAMES[1:]:
        table.host_do(table_id, "add", name=name)
    table.host_do(table_id, "start")
    rng = random.Random(3)
    turns = 0
    while table.status(table_id) != "over":
        names = table.host.get(f"/host/{table_id}/live").text
        owing = re.findall(r'href="(/host/\w+/seat/\d+)"><bdi>[^<]*</bdi></a> <span class="owes">', names)
        assert owing, "pass-and-play shows nobody who owes a decision"
        # The names list is for everyone around the device: it shows no seat's secret.
        assert_private(table, table_id, {None: names})
        seat_url = rng.choice(owing)
        page = table.host.get(seat_url).text
        assert '<details class="secret" id="cover-' in page  # the seat's page starts covered: pass it face down
        pick = rng.choice(choices(page))
        response = table.host.post(seat_url, data=pick.fields, follow_redirects=False)
        # Pass the device on: a screen that names the next player and shows no seat's secret.
        assert response.headers["location"] == f"/host/{table_id}/pass/{seat_url.rsplit('/', 1)[1]}"
        passing = table.host.get(response.headers["location"])
        assert passing.status_code == 200
        assert_private(table, table_id, {None: passing.text})
        turns += 1
        assert turns < 400
    assert table.status(table_id) == "over"


def test_a_seat_page_opens_only_with_its_own_token(table: WebTable) -> None:
    table_id, code = table.open("Host", play=False)
    ann = table.join(code, "Ann")
    assert ann.get(f"/play/{table_id}").status_code == 200
    stranger = table.device()
    assert stranger.get(f"/play/{table_id}").status_code == 403
    stranger.cookies.set(web.SEAT_COOKIE + table_id, "forged-token")
    assert stranger.get(f"/play/{table_id}").status_code == 403
    assert stranger.get(f"/host/{table_id}").status_code == 403
    assert stranger.get(f"/host/{table_id}?key=forged").status_code == 403
    assert stranger.post(f"/host/{table_id}", data={"do": "start"}).status_code == 403
    # Ann's own token opens her page, not the host's device nor a pass-and-play seat.
    assert ann.get(f"/host/{table_id}").status_code == 403
    assert ann.get(f"/host/{table_id}/seat/0").status_code == 403
    assert table.device().get("/play/AAAAAAAAAAAA").status_code == 404


def test_another_phone_cannot_decide_for_a_seat(table: WebTable) -> None:
    table_id, phones = five_started(table)
    t = table.service.table(table_id)
    president = t.seats[t.state.president].name
    other = next(n for n in NAMES if n != president)
    nominate = choices(phones[president].get(f"/play/{table_id}/live").text)[0]
    step = t.state.step
    # Another seat posts the President's button: it is that seat's own (illegal) move, refused; nothing changes.
    phones[other].post(f"/play/{table_id}", data=nominate.fields)
    assert table.service.table(table_id).state.step == step
    table.device().post(f"/play/{table_id}", data=nominate.fields)
    assert table.service.table(table_id).state.step == step


def test_a_double_tap_decides_once_and_an_old_button_is_refused(table: WebTable) -> None:
    table_id, phones = five_started(table)
    president = president_of(table, table_id, phones)
    first, second = choices(president.get(f"/play/{table_id}/live").text)[:2]
    president.post(f"/play/{table_id}", data=first.fields)
    step = table.service.table(table_id).state.step
    president.post(f"/play/{table_id}", data=first.fields)  # the same form again: dropped
    president.post(f"/play/{table_id}", data={**second.fields, "nonce": "fresh"})  # an old button: stale
    assert table.service.table(table_id).state.step == step
    feed = text_of(president.get(f"/play/{table_id}").text)
    assert Catalog.load("classic", "en").text(InputProblem.STALE.value, text="") in feed


def test_the_lobby_screen_shows_the_join_qr_and_the_seats(table: WebTable) -> None:
    table_id, code = table.open("Ann")
    table.join(code, "Bob")
    page = table.device().get(f"/table/{table_id}").text
    assert "<svg" in page and f"/join/{code}" in page
    assert "Ann" in text_of(page) and "Bob" in text_of(page)
    table.host_do(table_id, "computers")
    table.host_do(table_id, "start")
    assert table.status(table_id) == "playing"
    page = table.device().get(f"/table/{table_id}").text
    assert f"/table/{table_id}/board.png" in page and "<svg" not in page  # the join code is spent
    image = table.device().get(f"/table/{table_id}/board.png")
    assert image.status_code == 200 and image.content.startswith(b"\x89PNG")


def test_the_host_orders_and_removes_seats_from_the_lobby(table: WebTable) -> None:
    table_id, _code = table.open("Ann")
    for name in ("Bob", "Cy"):
        table.host_do(table_id, "add", name=name)
    table.host_do(table_id, "move", name="Cy", position="2")
    assert table.service.table(table_id).names == ("Ann", "Cy", "Bob")
    # Removing asks first (live.js asks a form's data-confirm), and each control names its seat to a screen reader.
    catalog = Catalog.load("classic", "en")
    page = table.host.get(f"/host/{table_id}/live").text
    asks = re.search(r'<form method="post" class="inline" data-confirm="([^"]+)">(?:(?!</form>).)*'
                     r'name="do" value="remove"(?:(?!</form>).)*name="name" value="Bob"', page, re.S)
    assert asks is not None and html.unescape(asks.group(1)) == catalog.text("web-remove-confirm", name="Bob")
    assert f'<span class="hidden"> {catalog.text("web-move-up", name="Bob")}</span>' in page
    table.host_do(table_id, "remove", name="Bob")
    assert table.service.table(table_id).names == ("Ann", "Cy")


def test_the_event_stream_carries_no_content(table: WebTable, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(web.live, "STREAM_SECONDS", 0.3)  # the event stream's room
    table_id, _code = table.open("Ann")
    body = table.device().get(f"/table/{table_id}/events").text
    assert set(filter(None, body.split("\n"))) <= {"retry: 500", "data: changed", ":", "event:renew", "data:1"}
    assert body.endswith(web.live.RENEW)  # its renewal, said as such: a page tells it from the server gone


def test_an_unknown_or_closed_join_code_takes_no_seat(table: WebTable) -> None:
    phone = table.device()
    assert phone.post("/join/AAAAA", data={"name": "Zed"}).status_code == 404
    table_id, code = table.open("Ann")
    table.host_do(table_id, "computers")
    table.host_do(table_id, "start")
    late = phone.post(f"/join/{code}", data={"name": "Zed"}, headers={"Accept-Language": "de"})
    assert late.status_code == 404  # the game started meanwhile: the page says so, and what to do
    assert Catalog.load("classic", "de").text("web-stale-join-todo") in text_of(late.text)
    assert "Zed" not in table.service.table(table_id).names


def test_browser_telegram_and_sms_seats_play_one_game_together(tmp_path: Path) -> None:
    """A table opened on Telegram, joined by SMS and by three phones in the browser, played to the end, each seat
    deciding through its own channel."""
    import json

    from moderator.transports.telegram import callback
    from tests.fake_telegram import private_chat
    from tests.serve_app import ANN, open_table

    with every_channel(tmp_path) as s:
        app = s.client.app
        code = open_table(s)
        bob = "+12025550102"
        assert s.text(bob, f"JOIN {code} Bob", "SM-join") == 200
        phones = {}
        for name in ("Cy", "Dee", "Eve"):
            phone = browser_beside(s.client)
            assert phone.post(f"/join/{code}", data={"name": name}).status_code == 200
            phones[name] = phone
        assert s.update(s.say(ANN, "/startgame")) == 200
        service = app.state.service
        [(table_id,)] = s.rows("SELECT id FROM game_tables")  # the service's own connection is its thread's
        channels = {seat.name: seat.channel for seat in service.table(table_id).seats}
        assert channels == {"Ann": "telegram", "Bob": "sms", "Cy": "web", "Dee": "web", "Eve": "web"}
        rng = random.Random(2)
        for turn in range(600):
            t = service.table(table_id)
            if t.row.status == "over":
                break
            seat = t.seats[rng.choice(sorted(set(awaiting(t.state))))]
            step = len(t.actions)
            if seat.channel == "web":
                page = phones[seat.name].get(f"/play/{table_id}/live").text
                phones[seat.name].post(f"/play/{table_id}", data=rng.choice(choices(page)).fields)
            elif seat.channel == "sms":
                count = len(view_for(t.state, seat.position).legal_actions)
                assert s.text(bob, str(rng.randint(1, count)), f"SM{turn}") == 200
            else:
                prompts = [json.loads(b) for (b,) in s.rows(
                    "SELECT body FROM outbox WHERE channel = 'telegram' AND address = ? ORDER BY id",
                    (str(ANN["id"]),))]
                prompt = [p for p in prompts if p["kind"] == "prompt"][-1]
                data = callback(prompt["table"], prompt["decision"], rng.choice(prompt["options"])[1])
                query = {"id": f"q{turn}", "from": ANN, "chat_instance": "ci", "data": data,
                         "message": {"message_id": 1, "chat": private_chat(ANN), "date": 1_800_000_000, "text": "?"}}
                assert s.update({"update_id": 10_000 + turn, "callback_query": query}) == 200
            assert len(service.table(table_id).actions) > step, f"{seat.channel} seat {seat.name} did not decide"
        assert service.table(table_id).row.status == "over"
        # What the SMS and Telegram seats did reached the browser seats like anyone's.
        assert "Ann" in text_of(phones["Cy"].get(f"/play/{table_id}").text)


HOSTILE = st.one_of(st.binary(max_size=600), st.text(max_size=300).map(str.encode),
                    st.dictionaries(st.sampled_from(["token", "decision", "nonce", "do", "name", "position", "seat"]),
                                    st.text(max_size=80), max_size=6).map(lambda d: urlencode(d).encode()))


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(body=HOSTILE, route=st.sampled_from(["play", "host", "seat", "join", "screen", "new-get"]),
       content_type=st.sampled_from(["application/x-www-form-urlencoded", "multipart/form-data; boundary=x",
                                     "text/plain", "application/json", None]))
def test_hostile_requests_to_the_pages_never_give_a_5xx_nor_change_the_game(
    game: tuple[WebTable, str, TestClient], body: bytes, route: str, content_type: str | None
) -> None:
    table, table_id, phone = game
    before = (table.service.table(table_id).state.step, table.service.table(table_id).names, table.status(table_id))
    headers = {"content-type": content_type} if content_type else {}
    garbage = quote(body.decode("latin-1")[:100], safe="")
    match route:
        case "play":  # a seated phone, but a body that is no button of its prompt
            response = phone.post(f"/play/{table_id}", content=body, headers=headers)
        case "host":
            response = table.device().post(f"/host/{table_id}", content=body, headers=headers)
        case "seat":
            response = table.device().post(f"/host/{table_id}/seat/{garbage or 0}", content=body, headers=headers)
        case "join":
            response = table.device().post(f"/join/{garbage or 'X'}", content=body, headers=headers)
        case "screen":
            response = table.device().get(f"/table/{garbage or 'X'}/live")
        case _:
            response = table.device().get(f"/play/{garbage or 'X'}")
    assert response.status_code < 500, (route, response.status_code)
    after = (table.service.table(table_id).state.step, table.service.table(table_id).names, table.status(table_id))
    assert after == before


@pytest.fixture
def game(table: WebTable) -> tuple[WebTable, str, TestClient]:
    """A 5-player game under way; one of its phones."""
    table_id, phones = five_started(table)
    return table, table_id, phones[NAMES[0]]


def test_a_table_opened_on_telegram_links_its_table_screen(tmp_path: Path) -> None:
    import json
    import time

    from tests.fake_twilio import OUR_NUMBER, PUBLIC_URL
    from tests.serve_app import ANN, open_table

    with every_channel(tmp_path, deliver=True) as s:
        api, client = s.api, s.client
        open_table(s)
        [(table_id,)] = s.rows("SELECT id FROM game_tables")
        for _ in range(200):  # the sender thread delivers the join message
            photos = api.of("sendPhoto", ANN["id"])
            if photos:
                break
            time.sleep(0.05)
        markup = photos[0].params["reply_markup"]
        markup = json.loads(markup) if isinstance(markup, str) else markup
        urls = [b.get("url") for row in markup["inline_keyboard"] for b in row]
        assert f"{PUBLIC_URL}/table/{table_id}" in urls
        # The table screen shows every way to join: this server's page, Telegram and SMS, each with its QR code.
        screen = client.get(f"/table/{table_id}").text
        [(code,)] = s.rows("SELECT code FROM game_tables")
        for link in (f"{PUBLIC_URL}/join/{code}", f"https://t.me/ModeratorTestBot?start={code}",
                     f"sms:{OUR_NUMBER}?body=JOIN%20{code}"):
            assert f'href="{link}"' in screen
        join = screen.split('<section class="join">', 1)[1].split("</section>", 1)[0]
        assert join.count("<svg") == 3
        # And its own short address, with a QR code of its own, to open the screen on a TV.
        assert f'href="{PUBLIC_URL}/tv/{code}"' in screen and screen.count("<svg") == 4


def test_numbers_too_long_to_be_a_decision_or_a_seat_are_refused_quietly(
    game: tuple[WebTable, str, TestClient]
) -> None:
    table, table_id, phone = game
    step = table.service.table(table_id).state.step
    huge = "9" * 5000  # int() of this many digits raises in Python 3.11
    assert phone.post(f"/play/{table_id}", data={"token": "n1", "decision": huge}).status_code < 500
    assert table.host.post(f"/host/{table_id}", data={"do": "move", "name": "Ann", "position": huge}).status_code < 500
    assert table.host.get(f"/host/{table_id}/seat/{huge}").status_code == 403
    assert table.service.table(table_id).state.step == step


def test_the_table_screen_says_when_the_game_is_paused_or_ended_by_the_host(
    game: tuple[WebTable, str, TestClient]
) -> None:
    table, table_id, _ = game
    catalog = Catalog.load("classic", "en")
    table.host_do(table_id, "pause")
    assert catalog.text("game-paused") in text_of(table.device().get(f"/table/{table_id}").text)
    table.host_do(table_id, "resume")
    assert catalog.text("game-paused") not in text_of(table.device().get(f"/table/{table_id}").text)
    table.host_do(table_id, "end")
    screen = text_of(table.device().get(f"/table/{table_id}").text)
    assert catalog.text("game-ended-by-host") in screen
    t = table.service.table(table_id)
    hitler = t.names[t.state.roles.index(Role.HITLER)]
    assert re.search(rf"{hitler}\s+{catalog.term('hitler')}\n", screen)  # ended is over: the roles are shown


def test_a_refused_seat_shows_why_and_sets_no_cookie(table: WebTable) -> None:
    table_id, code = table.open("Ann")
    for i in range(9):
        table.host_do(table_id, "add", name=f"P{i}")
    phone = table.device()
    page = phone.post(f"/join/{code}", data={"name": "Eleven"})
    assert page.status_code == 200
    assert Catalog.load("classic", "en").text("table-full", most=10) in text_of(page.text)
    assert not phone.cookies and "Eleven" not in table.service.table(table_id).names


def test_a_refused_name_on_the_join_page_says_why_and_not_what_to_type(table: WebTable) -> None:
    """The join form is the way to try again: the reason, never "send join CODE …" (a typed command)."""
    table_id, code = table.open("Ann")
    words = Catalog.load("classic", "en")
    for name, why in (("You", words.text("name-reserved", name="You")), ("1234", words.text("name-refused")),
                      ("   ", words.text("name-refused"))):
        phone = table.device()
        page = text_of(phone.post(f"/join/{code}", data={"name": name}).text)
        assert why in page
        assert f"join {code}".casefold() not in page.casefold()
        assert not phone.cookies and list(table.service.table(table_id).names) == ["Ann"]


def test_a_rematch_starts_a_new_feed(table: WebTable) -> None:
    table_id, code = table.open("Host", play=False)
    phone = table.join(code, "Ann")
    table.host_do(table_id, "computers")
    table.host_do(table_id, "start")
    while table.status(table_id) != "over":  # Ann answers first, whatever she is asked
        options = choices(phone.get(f"/play/{table_id}/live").text)
        if options:
            phone.post(f"/play/{table_id}", data=options[0].fields)
    table.host_do(table_id, "rematch")
    assert table.status(table_id) == "playing"
    page = phone.get(f"/play/{table_id}/live").text
    covered_deals = page.count('<details class="secret" id="m')
    assert covered_deals == 1  # this game's deal; the last game's is not shown beside it


def test_a_browser_seat_at_a_table_whose_results_go_to_a_telegram_group_sees_them_on_its_page(
        tmp_path: Path) -> None:
    from tests.fake_telegram import group_chat
    from tests.serve_app import ANN

    with every_channel(tmp_path) as s:
        app = s.client.app
        update = s.say(ANN, "/newgame")
        update["message"]["chat"] = group_chat(-100777)
        assert s.update(update) == 200
        [(table_id, code, public)] = s.rows("SELECT id, code, public_address FROM game_tables")
        assert public == "-100777"
        phone = browser_beside(s.client)
        phone.post(f"/join/{code}", data={"name": "Cy"})
        assert s.update(s.say(ANN, "/computers 3")) == 200
        assert s.update(s.say(ANN, "/startgame")) == 200
        page = text_of(phone.get(f"/play/{table_id}/live").text)
        catalog = Catalog.load("classic", "en")
        assert catalog.text("web-latest") in page  # the public results the group gets, on Cy's page too
        t = app.state.service.table(table_id)
        assert f"{t.seats[t.state.president].name} is the Presidential Candidate" in page


def test_the_screens_short_address_opens_it_and_costs_a_guess_like_a_join_code(table: WebTable) -> None:
    table_id, code = table.open("Ann")
    tv = table.device()
    page = tv.get(f"/table/{table_id}").text
    assert f"/tv/{code}" in page  # shown on the lobby screen, with its QR code
    opened = tv.get(f"/tv/{code.lower()}", follow_redirects=False)
    assert opened.status_code == 303 and opened.headers["location"] == f"/table/{table_id}"
    guesser = table.device()
    answers = [guesser.get("/tv/ZZZZZ", follow_redirects=False).status_code for _ in range(JOIN_GUESSES_AT_ONCE + 5)]
    assert answers[0] == 404 and 429 in answers  # guessing codes here is as slow as joining


def test_the_board_address_stays_the_same_through_a_vote_and_changes_with_the_picture(table: WebTable) -> None:
    table_id, phones = five_started(table)
    screen = table.device()

    def address() -> str:
        size = layout(len(NAMES))
        found = re.search(rf'<img alt="" width="{size.width}" height="{size.height}" src="([^"]+)"', screen.get(
            f"/table/{table_id}/live").text)
        assert found is not None  # its size reserved: nothing moves while it loads
        return found.group(1).replace("&amp;", "&")

    def press(name: str, label: str | None = None) -> bool:
        options = choices(phones[name].get(f"/play/{table_id}/live").text)
        chosen = [o for o in options if label is None or o.label == label]
        if chosen:
            phones[name].post(f"/play/{table_id}", data=chosen[0].fields)
        return bool(chosen)

    before = address()
    [candidate] = [name for name in NAMES if choices(phones[name].get(f"/play/{table_id}/live").text)]
    assert press(candidate)  # the nomination: the board shows the nominee
    nominated = address()
    assert nominated != before
    image = screen.get(nominated)
    assert image.headers["cache-control"] == "private, max-age=86400"  # this picture may be kept
    assert screen.get(before).headers["cache-control"] == "no-store"  # an old address is today's picture
    ja = Catalog.load("classic", "en").term("ja")
    for name in NAMES[:3]:
        assert press(name, ja)
        assert address() == nominated  # a vote changes nothing drawn
    assert screen.get(nominated).content == image.content  # one picture for a TV and a phone alike


def test_the_card_art_favicon_and_manifest_are_served(table: WebTable) -> None:
    device = table.device()
    page = device.get("/").text
    assert 'rel="manifest" href="/static/art/manifest.webmanifest"' in page and "/static/art/favicon.svg" in page
    manifest = device.get("/static/art/manifest.webmanifest")
    assert manifest.headers["content-type"].startswith("application/manifest+json")
    for icon in manifest.json()["icons"]:
        assert device.get(f"/static/art/{icon['src']}").status_code == 200
    card = device.get("/static/art/corporate/role-hitler.svg")
    assert card.status_code == 200 and card.headers["content-type"].startswith("image/svg+xml")
    assert device.get("/favicon.ico", follow_redirects=False).headers["location"] == "/static/art/favicon.svg"
    assert device.get("/static/art/../../web.py").status_code == 404


def test_a_tap_sent_in_the_background_is_answered_counted_and_a_retry_says_it_is_a_repeat(table: WebTable) -> None:
    table_id, phones = five_started(table)
    president = president_of(table, table_id, phones)
    first, second = choices(president.get(f"/play/{table_id}/live").text)[:2]
    sent = {"X-Send": "1"}
    answer = president.post(f"/play/{table_id}", data=first.fields, headers=sent)
    assert answer.json() == {"counted": True, "repeat": False, "reply": ""}
    step = table.service.table(table_id).state.step
    again = president.post(f"/play/{table_id}", data=first.fields, headers=sent)  # the answer was lost: sent again
    assert again.json()["counted"] and again.json()["repeat"]
    late = president.post(f"/play/{table_id}", data={**second.fields, "nonce": "fresh"}, headers=sent)
    assert not late.json()["counted"] and late.json()["reply"]  # the question moved on, and the page says why
    assert table.service.table(table_id).state.step == step


def _unwritable(wt: WebTable, on: bool) -> None:
    """The database as a full or read-only disk (or a lock held too long) leaves it: no write commits."""
    store = wt.app.state.store
    portal = wt.host.portal
    assert portal is not None  # the app is running
    portal.call(lambda: store.execute(f"PRAGMA query_only={'ON' if on else 'OFF'}"))


def test_a_tap_that_cannot_be_stored_says_not_saved_tap_again_and_the_tap_again_counts(table: WebTable) -> None:
    table_id, code = table.open("Host", play=False)
    phones = {name: table.join(code, name) for name in NAMES}
    table.host_do(table_id, "start")
    t = table.service.table(table_id)
    president = phones[t.seats[t.state.president].name]
    page = president.get(f"/play/{table_id}").text
    not_saved = Catalog.load("classic", "en").text("web-not-saved")
    assert f'data-not-saved="{not_saved}"' in page  # seat.js has the words even for an answer without any
    first = choices(president.get(f"/play/{table_id}/live").text)[0]
    step = t.state.step
    _unwritable(table, True)
    answer = president.post(f"/play/{table_id}", data=first.fields, headers={"X-Send": "1"})
    assert answer.status_code == 503 and answer.headers["Retry-After"] == str(web.NOT_SAVED_RETRY)
    assert answer.headers[web.NOT_SAVED_HEADER] == "1"
    assert answer.json() == {"counted": False, "repeat": False, "saved": False, "reply": not_saved}
    plain = president.post(f"/play/{table_id}", data=first.fields, follow_redirects=False)  # without seat.js
    assert plain.status_code == 503 and not_saved in text_of(plain.text)
    assert f'href="/play/{table_id}"' in plain.text  # the way back to tap again
    host = table.host.post(f"/host/{table_id}", data={"do": "pause", "nonce": "p1"}, headers={"X-Send": "1"})
    assert host.status_code == 503 and host.json()["saved"] is False
    # The host's page has the words too (live.js shows them for a 503 that says nothing, as app.Durable's).
    assert f'data-not-saved="{not_saved}"' in table.host.get(f"/host/{table_id}").text
    _unwritable(table, False)
    assert table.service.table(table_id).state.step == step  # nothing of it happened
    again = president.post(f"/play/{table_id}", data=first.fields, headers={"X-Send": "1"})  # tapped again
    assert again.json() == {"counted": True, "repeat": False, "reply": ""}
    assert table.service.table(table_id).state.step != step


def test_the_join_pages_heading_is_words_that_need_no_emoji_font(table: WebTable) -> None:
    _table_id, code = table.open("Ann")
    page = table.device().get(f"/join/{code}").text
    assert f"<h1>{Catalog.load('classic', 'en').text('web-join-title', code=code)}</h1>" in page
    assert not re.search(r"[\U0001F300-\U0001FAFF\u2600-\u27BF]", text_of(page))  # no pictograph anywhere


def test_the_join_page_and_a_refusal_are_in_the_browsers_language(table: WebTable) -> None:
    _table_id, code = table.open("Host", play=False)
    german = {"Accept-Language": "de-DE,de;q=0.9"}
    page = table.device().get(f"/join/{code}", headers=german).text
    assert '<html lang="de" dir="ltr">' in page and Catalog.load("classic", "de").text("web-take-seat") in page
    assert "<style>" in page  # styled as every other page
    assert '<html lang="de" dir="ltr">' in table.device().get(f"/play/{_table_id}", headers=german).text  # 403


def test_an_executed_player_is_told_and_watches_the_game_on(table: WebTable) -> None:
    table_id, phones = five_started(table)
    t = table.service.table(table_id)
    out = next(s for s in range(len(NAMES)) if s != t.state.president)
    t.state = t.state.replace(alive=tuple(s != out for s in range(len(NAMES))))
    page = phones[t.seats[out].name].get(f"/play/{table_id}/live").text
    en = Catalog.load("classic", "en")
    assert en.text("web-executed") in text_of(page)
    assert not choices(page)  # no say in the game any more, and its board still shown
    assert 'class="board"' in page
    others = phones[t.seats[(out + 1) % len(NAMES)].name].get(f"/play/{table_id}/live").text
    assert en.text("web-executed") not in text_of(others)


def test_the_running_vote_count_is_one_line_that_updates(table: WebTable) -> None:
    table_id, phones = five_started(table)
    president = president_of(table, table_id, phones)
    president.post(f"/play/{table_id}", data=choices(president.get(f"/play/{table_id}/live").text)[0].fields)
    voters = list(phones.values())[:4]
    for phone in voters:
        phone.post(f"/play/{table_id}", data=choices(phone.get(f"/play/{table_id}/live").text)[0].fields)
    feed = text_of(list(phones.values())[4].get(f"/play/{table_id}/live").text)
    counts = [line for line in feed.splitlines() if re.fullmatch(r"\d of 5 have voted\.", line)]
    assert counts == ["4 of 5 have voted."]  # the feed's one line, not four (the board says it too, in its words)


def test_a_pass_and_play_pin_cannot_be_guessed_through(tmp_path: Path) -> None:
    now = [1_800_000_000.0]
    with WebTable(tmp_path / "pins.db", clock=lambda: now[0]) as table:
        table_id = pass_and_play(table)
        bob = f"/host/{table_id}/seat/1"
        for seat, pin in ((2, "1234"), (1, "4711")):
            table.host.post(f"/host/{table_id}/seat/{seat}/pin", data={"pin": pin})
            table.host.get(f"/host/{table_id}/pass/{seat}")  # passed on: the seat is locked again
        wrong = [table.host.post(f"{bob}/open", data={"pin": f"{n:04}"}) for n in range(PIN_GUESSES + 1)]
        en = Catalog.load("classic", "en")
        assert all(en.text("web-pin-wrong") in r.text for r in wrong[:-1])
        refused = wrong[-1]
        assert refused.status_code == 429 and int(refused.headers["Retry-After"]) == 60
        # While the seat waits, even its PIN gets the same answer: a guesser cannot tell a hit.
        right = table.host.post(f"{bob}/open", data={"pin": "4711"})
        assert right.status_code == 429 and text_of(right.text) == text_of(refused.text)
        assert '<details class="secret" id="cover-' not in right.text
        # Another seat on the device keeps its own tries.
        other = table.host.post(f"/host/{table_id}/seat/2/open", data={"pin": "0000"})
        assert other.status_code == 200 and en.text("web-pin-wrong") in other.text
        now[0] += 60  # a minute later, one more try
        opened = table.host.post(f"{bob}/open", data={"pin": "4711"})
        assert opened.status_code == 200 and '<details class="secret" id="cover-1"' in opened.text


def pass_and_play(wt: WebTable) -> str:
    """A started pass-and-play table: Ann opens it on the host's device and adds the four others there; its id."""
    table_id, _code = wt.open("Ann")
    for name in NAMES[1:]:
        wt.host_do(table_id, "add", name=name)
    wt.host_do(table_id, "start")
    return table_id


def the_host_device_with(wt: WebTable, name: str, value: str) -> TestClient:
    """Another browser holding the host device's cookies, one of them, ``name``, set to ``value``: a forger's."""
    cookies = {**dict(wt.host.cookies.items()), name: value}
    device = wt.device()
    for cookie, held in cookies.items():
        device.cookies.set(cookie, held)
    return device


def locked_with_pin(wt: WebTable, table_id: str, seat: int, pin: str) -> None:
    """The seat sets ``pin`` on the host's device and is passed on: it is locked again."""
    wt.host.post(f"/host/{table_id}/seat/{seat}/pin", data={"pin": pin})
    wt.host.get(f"/host/{table_id}/pass/{seat}")


def test_a_pin_cookie_made_without_the_servers_key_opens_no_seat(table: WebTable) -> None:
    table_id = pass_and_play(table)
    locked_with_pin(table, table_id, 1, "4711")
    bob, cookie = f"/host/{table_id}/seat/1", f"{web.PIN_COOKIE}{table_id}-1"
    host = table.service.pages.table_info(table_id).host_address
    said = f"pin|{host}|{table_id}|1|4711".encode()
    unkeyed = hashlib.sha256(said).hexdigest()
    other_key = hmac.new(b"not this server's key", said, hashlib.sha256).hexdigest()
    no_key = hmac.new(b"", said, hashlib.sha256).hexdigest()
    en = Catalog.load("classic", "en")
    for forged in (web.PIN_MAC + unkeyed, web.PIN_MAC + other_key, web.PIN_MAC + no_key):
        forger = the_host_device_with(table, cookie, forged)
        page = forger.post(f"{bob}/open", data={"pin": "4711"})
        assert en.text("web-pin-wrong") in page.text and '<details class="secret" id="cover-' not in page.text
    opened = table.host.post(f"{bob}/open", data={"pin": "4711"})  # the cookie the server made opens the seat
    assert opened.status_code == 200 and '<details class="secret" id="cover-1"' in opened.text
    # Nor does an "opened" cookie made from the PIN cookie, as before, open it without the PIN.
    table.host.get(f"/host/{table_id}/pass/1")
    for opened_as in (f"1.{table.host.cookies[cookie]}", f"1.{other_key}"):
        page = the_host_device_with(table, f"{web.OPEN_COOKIE}{table_id}", opened_as).get(bob)
        assert page.status_code == 200 and en.text("web-pin-ask", name="Bob") in text_of(page.text)
        assert '<details class="secret" id="cover-' not in page.text


def test_a_seat_locked_before_the_servers_key_stays_locked_and_its_pin_opens_it(table: WebTable) -> None:
    """A game under way across the upgrade: the old cookie still locks its seat; the right PIN opens it and
    leaves a cookie of today's form."""
    table_id = pass_and_play(table)
    host = table.service.pages.table_info(table_id).host_address
    before = hashlib.sha256(f"{host}|{table_id}|1|4711".encode()).hexdigest()[:32]
    cookie = f"{web.PIN_COOKIE}{table_id}-1"
    device = the_host_device_with(table, cookie, before)
    page = device.get(f"/host/{table_id}/seat/1").text
    assert f'action="/host/{table_id}/seat/1/open"' in page and 'id="cover-1"' not in page  # locked
    assert 'id="cover-1"' not in device.post(f"/host/{table_id}/seat/1/open", data={"pin": "1234"}).text
    assert device.post(f"/host/{table_id}/seat/1/open", data={"pin": "4711"}).text.count('id="cover-1"') == 1
    assert any((c.value or "").startswith(web.PIN_MAC) for c in device.cookies.jar if c.name == cookie)


def test_the_servers_secret_is_in_no_page_cookie_or_log(table: WebTable, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    with sqlite3.connect(table.db) as db:
        secret = bytes(db.execute("SELECT secret FROM server_secret").fetchone()[0])
    forms = {form for raw in (secret, table.service.pages.cookie_key()) for form in (
        raw.hex(), raw.hex().upper(), base64.b64encode(raw).decode(), base64.urlsafe_b64encode(raw).decode(),
        repr(raw))}
    table_id = pass_and_play(table)
    seat = f"/host/{table_id}/seat/0"
    answers = [table.host.get(seat), table.host.post(f"{seat}/pin", data={"pin": "1234"}),
               table.host.get(f"/host/{table_id}/pass/0"), table.host.post(f"{seat}/open", data={"pin": "0000"}),
               table.host.post(f"{seat}/open", data={"pin": "1234"}), table.host.get(seat),
               table.host.get(f"/host/{table_id}"), table.host.get(f"/table/{table_id}")]
    said = [r.text + repr(r.headers) for answer in answers for r in (*answer.history, answer)]
    said += [record.getMessage() for record in caplog.records] + [value for _, value in table.host.cookies.items()]
    assert caplog.records and not any(form in text for form in forms for text in said)


def test_a_host_control_sent_in_the_background_is_answered_and_counted_once(table: WebTable) -> None:
    table_id, _code = table.open("Ann")
    for name in ("Bob", "Cy"):
        table.host_do(table_id, "add", name=name)
    sent = {"X-Send": "1"}
    move = {"do": "move", "name": "Cy", "position": "2", "nonce": "n1.tap"}
    assert table.host.post(f"/host/{table_id}", data=move, headers=sent).json() == {"counted": True, "repeat": False}
    again = table.host.post(f"/host/{table_id}", data=move, headers=sent)  # the answer was lost: sent again
    assert again.json() == {"counted": True, "repeat": True}
    assert table.service.table(table_id).names == ("Ann", "Cy", "Bob")  # one place up once, not twice
    page = table.host.get(f"/host/{table_id}").text
    assert 'data-send="1"' in page  # the page posts its forms in the background


ON_BUTTON = r'<button class="choice"[^>]*>[^<]*<img class="card" src="/static/art/classic/'
"""A card drawn on a prompt's button, after its words."""


def test_phone_pages_show_the_seats_role_card_behind_its_cover_and_cards_on_the_buttons(table: WebTable) -> None:
    table_id, phones = five_started(table)
    t = table.service.table(table_id)
    for seat, name in enumerate(NAMES):
        page = phones[name].get(f"/play/{table_id}/live").text
        own = t.state.roles[seat].value
        # Only its own role's card, and only inside the "what you know" cover.
        assert re.findall(r"/static/art/classic/role-(\w+)\.svg", page) == [own]
        know = re.search(r'<details class="secret" id="know">.*?</details>', page, re.S)
        assert know is not None and f"role-{own}.svg" in know.group(0)
    president = phones[NAMES[t.state.president]]
    president.post(f"/play/{table_id}", data=choices(president.get(f"/play/{table_id}/live").text)[0].fields)
    for phone in phones.values():
        page = phone.get(f"/play/{table_id}/live").text
        assert re.findall(ON_BUTTON + r"(vote-\w+)\.svg", page) == ["vote-ja", "vote-nein"]
        phone.post(f"/play/{table_id}", data=choices(page)[0].fields)  # Ja
    t = table.service.table(table_id)
    page = phones[NAMES[t.state.president]].get(f"/play/{table_id}/live").text
    hand = view_for(t.state, t.state.president).hand
    shown = re.findall(ON_BUTTON + r"policy-(\w+)\.svg", page)
    assert len(shown) == len(choices(page)) and set(shown) == {p.name.lower() for p in hand}  # a card per button


def test_a_seats_own_controls_sent_in_the_background_are_answered_and_leaving_goes_to_the_join_page(
        table: WebTable) -> None:
    table_id, code = table.open("Host", play=False)
    ann = table.join(code, "Ann")
    sent = {"X-Send": "1"}
    assert 'data-send="1"' in ann.get(f"/play/{table_id}").text  # the page posts its forms in the background
    renamed = ann.post(f"/play/{table_id}", data={"do": "rename", "name": "Anna", "nonce": "r1.x"}, headers=sent)
    assert renamed.json()["counted"] and table.service.table(table_id).names == ("Anna",)
    left = ann.post(f"/play/{table_id}", data={"do": "leave", "nonce": "l1.x"}, headers=sent)
    assert left.json()["counted"] and left.json()["next"] == f"/join/{code}"
    assert table.service.table(table_id).names == ()


def test_every_field_takes_as_many_characters_as_the_service_reads(table: WebTable) -> None:
    from moderator.game import CLAIM_LENGTH
    from moderator.names import NAME_LIMIT

    def lengths(page: str, field: str) -> set[str]:
        return set(re.findall(rf'<input name="{field}" maxlength="(\d+)"', page))

    assert lengths(table.host.get("/").text, "name") == {str(NAME_LIMIT)}  # the host's name
    table_id, code = table.open("Host")
    assert lengths(table.host.get(f"/host/{table_id}/live").text, "name") == {str(NAME_LIMIT)}  # a player added
    assert lengths(table.host.get(f"/join/{code}").text, "name") == {str(NAME_LIMIT)}
    phones = {name: table.join(code, name) for name in NAMES[:4]}
    assert lengths(phones["Ann"].get(f"/play/{table_id}").text, "name") == {str(NAME_LIMIT)}  # a rename
    table.host_do(table_id, "start")
    assert lengths(phones["Ann"].get(f"/play/{table_id}").text, "text") == {str(CLAIM_LENGTH)}  # a claim


TEMPLATES = Path(web.__file__).parent / "templates"


def test_the_templates_have_no_words_of_their_own() -> None:
    # Every word on a page comes from the catalogs (and so is translated): a template holds markup, symbols and
    # the names of what it is given, never a sentence.
    for path in TEMPLATES.rglob("*.html"):
        text = re.sub(r"\{#.*?#\}|\{%.*?%\}|\{\{.*?\}\}", " ", path.read_text(encoding="utf-8"), flags=re.S)
        text = re.sub(r"<[^>]*>", " ", text)
        assert not re.findall(r"[^\W\d_]{2,}", text), path.name


def test_the_pages_name_exactly_the_messages_the_catalogs_are_checked_for() -> None:
    # WEB_MESSAGES is what the catalogs' check counts as used by the pages: it must not miss an id a page shows,
    # nor keep one no page shows any more (the templates, the channel, and the service's views for pages).
    named: set[str] = set()
    for path in [*TEMPLATES.rglob("*.html"), *Path(render.__file__).parent.rglob("*.py")]:
        text = re.sub(r"WEB_MESSAGES: Final = \(.*?\)", "", path.read_text(encoding="utf-8"), flags=re.S)
        named |= set(re.findall(r'"(web-[a-z-]+)"', text))
    families = {n for n in named if n.endswith("-") and n != "web-"}  # web-cover-<topic>
    controls = {f"web-{c.value}" for c in (HostCommand.PAUSE, HostCommand.RESUME, HostCommand.NUDGE,
                                           HostCommand.END, HostCommand.REMATCH)}  # "web-" ~ a host control
    shown = (named - families - {"web-"}) | controls
    listed = set(web.WEB_MESSAGES)
    assert shown <= listed, sorted(shown - listed)
    assert {m for m in listed - shown if not any(m.startswith(f) for f in families)} == set()


# --- a stale code -------------------------------------------------------------------------------------------


def test_a_stale_qr_code_answers_a_page_in_the_phones_language_that_says_what_to_do(tmp_path: Path) -> None:
    """A phone scans a QR code of last week's game (a join code, a table screen's short address): 404, a page in
    the language the browser asks for among the catalogs' (a French catalog added by a translator counts as
    soon as it exists), else English, saying to ask the host or scan again."""
    import shutil

    from tests.serve_driver import http, moderator_serve

    messages = tmp_path / "messages"
    shutil.copytree(Path(render.__file__).resolve().parent.parent / "messages", messages)
    (messages / "classic" / "fr.toml").write_text(
        '[messages]\nweb-stale-title = "Aucune table avec ce code"\n'
        'web-stale-join-todo = "Demandez le code de la table à l\'hôte, ou scannez de nouveau son code QR."\n',
        encoding="utf-8")

    def stale(port: int, path: str, accept: str) -> tuple[int, str, str]:
        status, headers, body = http(port, f"GET {path} HTTP/1.1\r\nHost: x\r\nAccept-Language: {accept}\r\n"
                                           f"Connection: close\r\n\r\n".encode())
        assert headers["content-type"].startswith("text/html"), headers
        page = body.decode()
        return status, re.search(r'<html lang="(\w+)"', page).group(1), text_of(page)  # type: ignore[union-attr]

    en, de = Catalog.load("classic", "en"), Catalog.load("classic", "de")
    with moderator_serve(tmp_path, MODERATOR_MESSAGES=str(messages)) as served:
        status, lang, text = stale(served.port, "/join/ZZZZZ", "de-DE,de;q=0.9,en;q=0.8")
        assert (status, lang) == (404, "de")
        assert de.text("web-stale-title") in text and de.text("web-stale-join-todo") in text
        status, lang, text = stale(served.port, "/tv/ZZZZZ", "de-CH")
        assert (status, lang) == (404, "de")
        assert de.text("web-stale-screen") in text and de.text("web-stale-screen-todo") in text
        status, lang, text = stale(served.port, "/join/QQQQQ", "fr-FR,fr;q=0.9")
        assert (status, lang) == (404, "fr")
        assert "Aucune table avec ce code" in text and "scannez de nouveau" in text
        assert en.text("web-stale-join") in text  # a line the translator has not done yet: in English
        status, lang, text = stale(served.port, "/join/%3Cscript%3E", "ja,en;q=0.5")
        assert (status, lang) == (404, "en") and "<script>" not in text
        assert en.text("web-stale-title") in text and en.text("web-stale-join-todo") in text


def test_a_browsers_regional_language_is_matched_by_its_base_code(table: WebTable) -> None:
    """``fa-IR`` is Persian, ``pt-BR`` Portuguese; a language without a catalog (``ja-JP``) falls to the next it
    asks for, then English."""
    _table_id, code = table.open("Host", play=False)
    for asked, lang in (("fa-IR,fa;q=0.9", "fa"), ("pt-BR,pt;q=0.9", "pt"), ("ja-JP,es;q=0.8", "es"),
                        ("ja-JP,ja;q=0.9", "en"), ("PT_br", "pt"), ("en;q=0.2, ES-mx;q=0.7", "es"),
                        ("de;q=0, fr", "fr"), ("*", "en")):
        page = table.device().get(f"/join/{code}", headers={"Accept-Language": asked}).text
        direction = "rtl" if lang == "fa" else "ltr"
        assert f'<html lang="{lang}" dir="{direction}">' in page, asked
        assert Catalog.load("classic", lang).text("web-take-seat") in page


def test_a_three_letter_language_is_not_taken_for_a_two_letter_one(
    table: WebTable, tmp_path: Path, catalogs_in: Callable[[Path], AbstractContextManager[None]]
) -> None:
    """Filipino (``fil``) is not Finnish (``fi``), though its code begins with Finnish's: with a Finnish catalog
    beside the others, a Filipino browser gets its next choice, a Finnish one Finnish."""
    folder = tmp_path / "messages"
    shutil.copytree(BUNDLED, folder)
    shutil.copy(folder / "classic" / "en.toml", folder / "classic" / "fi.toml")
    with catalogs_in(folder):
        _table_id, code = table.open("Host", play=False)
        for asked, lang in (("fil-PH,fil;q=0.9,es;q=0.5", "es"), ("fil", "en"), ("fi-FI", "fi")):
            page = table.device().get(f"/join/{code}", headers={"Accept-Language": asked}).text
            assert f'<html lang="{lang}" dir="ltr">' in page, asked


def test_the_end_leads_every_seats_page_and_the_hosts_an_executed_players_included(table: WebTable) -> None:
    table_id, phones = five_started(table)
    t = table.service.table(table_id)
    out = next(s for s in range(len(NAMES)) if s != t.state.president)
    t.state = t.state.replace(alive=tuple(s != out for s in range(len(NAMES))))
    en = Catalog.load("classic", "en")
    assert en.text("web-executed") in text_of(phones[t.seats[out].name].get(f"/play/{table_id}/live").text)
    table.host_do(table_id, "end")
    ended = en.text("game-ended-by-host")
    for name, phone in phones.items():
        words = [line.strip() for line in text_of(phone.get(f"/play/{table_id}/live").text).splitlines()
                 if line.strip()]
        assert words[:2] == [name, ended], f"{name}'s page begins {words[:4]}"  # right under the seat's name
    words = [line.strip() for line in text_of(table.host.get(f"/host/{table_id}/live").text).splitlines()
             if line.strip()]
    assert words[0] == ended, f"the host's page begins {words[:4]}"
