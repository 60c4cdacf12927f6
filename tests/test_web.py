"""The browser channel through the real ``serve`` app: phone pages, pass-and-play, the table screen, seat tokens,
and privacy (no page or event stream shows a secret its viewer may not know)."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from moderator import render
from moderator.render import InputProblem
from moderator.catalog import Catalog
from moderator.engine import view_for
from moderator.transports import web
from tests.web_table import WebTable, choices, text_of

NAMES = ("Ann", "Bob", "Cy", "Dee", "Eve")


@pytest.fixture
def table(tmp_path: Path) -> WebTable:
    with WebTable(tmp_path / "web.db") as wt:
        yield wt


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
    everything = set().union(*held.values()) - public
    for viewer, page in pages.items():
        visible = text_of(page)
        for line in everything - held.get(viewer, set()):
            assert line not in visible, f"{viewer or 'the table screen'} shows another seat's secret: {line!r}"


def test_a_five_player_game_plays_through_five_phone_pages_and_no_page_leaks(table: WebTable) -> None:
    table_id, code = table.open("Host", play=False)
    phones = {name: table.join(code, name) for name in NAMES}
    table.host_do(table_id, "start")
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
        owed = [(n, c) for n in NAMES for c in [choices(pages[n])] if c and (n, c[0].fields["decision"]) not in answered]
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
    table_id, code = table.open("Ann")
    for name in NAMES[1:]:
        table.host_do(table_id, "add", name=name)
    table.host_do(table_id, "start")
    rng = random.Random(3)
    turns = 0
    while table.status(table_id) != "over":
        names = table.host.get(f"/host/{table_id}/live").text
        owing = re.findall(r'href="(/host/\w+/seat/\d+)">[^<]*</a> <span class="owes">', names)
        assert owing, "pass-and-play shows nobody who owes a decision"
        seat_url = rng.choice(owing)
        page = table.host.get(seat_url).text
        assert '<details class="secret" id="cover-' in page  # the seat's page starts covered: pass it face down
        pick = rng.choice(choices(page))
        response = table.host.post(seat_url, data=pick.fields, follow_redirects=False)
        assert response.headers["location"] == f"/host/{table_id}"  # back to the names: pass the device on
        turns += 1
        assert turns < 400
    assert "over" == table.status(table_id)


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
    table_id, code = table.open("Host", play=False)
    phones = {name: table.join(code, name) for name in NAMES}
    table.host_do(table_id, "start")
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
    table_id, code = table.open("Host", play=False)
    phones = {name: table.join(code, name) for name in NAMES}
    table.host_do(table_id, "start")
    t = table.service.table(table_id)
    president = phones[t.seats[t.state.president].name]
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
    table_id, code = table.open("Ann")
    for name in ("Bob", "Cy"):
        table.host_do(table_id, "add", name=name)
    table.host_do(table_id, "move", name="Cy", position="2")
    assert table.service.table(table_id).names == ("Ann", "Cy", "Bob")
    table.host_do(table_id, "remove", name="Bob")
    assert table.service.table(table_id).names == ("Ann", "Cy")


def test_the_event_stream_carries_no_content(table: WebTable, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(web, "STREAM_SECONDS", 0.3)
    table_id, code = table.open("Ann")
    body = table.device().get(f"/table/{table_id}/events").text
    assert set(filter(None, body.split("\n"))) <= {"retry: 500", "data: changed", ":"}


def test_an_unknown_or_closed_join_code_takes_no_seat(table: WebTable) -> None:
    phone = table.device()
    assert phone.post("/join/AAAAA", data={"name": "Zed"}).status_code == 404
    table_id, code = table.open("Ann")
    table.host_do(table_id, "computers")
    table.host_do(table_id, "start")
    assert phone.post(f"/join/{code}", data={"name": "Zed"}).status_code == 404
    assert "Zed" not in table.service.table(table_id).names
