"""The browser's share of the same features on every channel: the host page's controls (votes at the table,
reminders, theme, the table's language, any number of computer players, nudge, a stand-in, a seat moved to a new
device) and a seat's own (the President recording the table's votes, rename, language, leaving a lobby)."""

from __future__ import annotations

import re

from moderator.catalog import Catalog
from moderator.engine import Phase
from tests.web_table import TestClient, WebTable, choices, text_of

NAMES = ("Ann", "Bob", "Cy", "Dee", "Eve")
EN = Catalog.load("classic", "en")


def _nominate_someone(table: WebTable, table_id: str, phones: dict[str, TestClient]) -> str:
    """The Presidential Candidate nominates from their page; returns the President's name."""
    t = table.service.table(table_id)
    president: str = t.names[t.state.president]
    page = phones[president].get(f"/play/{table_id}/live").text
    pick = choices(page)[0]
    phones[president].post(f"/play/{table_id}", data=pick.fields)
    return president


def test_votes_at_the_table_switched_on_by_the_host_page_are_recorded_by_the_president(table: WebTable) -> None:
    table_id, code = table.open("Host", play=False)
    phones = {name: table.join(code, name) for name in NAMES}
    table.host_do(table_id, "tablevotes", on="1")
    assert EN.text("table-votes-on") in text_of(table.host.get(f"/host/{table_id}/live").text)
    table.host_do(table_id, "start")
    president = _nominate_someone(table, table_id, phones)
    t = table.service.table(table_id)
    assert t.state.phase is Phase.ELECTION
    others = [n for n in NAMES if n != president]
    assert not choices(phones[others[0]].get(f"/play/{table_id}/live").text)  # no ballot on the phones
    page = phones[president].get(f"/play/{table_id}/live").text
    assert EN.text("web-record-votes") in text_of(page)
    boxes = dict(re.findall(r'name="(ja-\d+)" value="([^"]+)"', page))
    assert sorted(boxes.values()) == sorted(NAMES)
    ja = {k: v for k, v in boxes.items() if v in NAMES[:3]}
    nonce = re.search(r'name="do" value="votes">\s*<input type="hidden" name="nonce" value="(\w+)"', page)
    assert nonce is not None
    phones[president].post(f"/play/{table_id}", data={"do": "votes", "nonce": nonce.group(1), **ja})
    t = table.service.table(table_id)
    assert t.state.phase is not Phase.ELECTION  # three of five voted Ja: elected, and the session began
    assert EN.text("web-record-votes") not in text_of(phones[president].get(f"/play/{table_id}/live").text)


def test_the_host_page_sets_reminders_and_the_theme(table: WebTable) -> None:
    table_id, _code = table.open("Ann")
    table.host_do(table_id, "reminders", minutes="3")
    assert table.service.table(table_id).row.options["reminder_minutes"] == 3
    page = table.host.get(f"/host/{table_id}/live").text
    assert '<option value="3" selected>' in page
    table.host_do(table_id, "reminders", minutes="0")
    assert not table.service.table(table_id).row.options.get("reminder_minutes")
    table.host_do(table_id, "theme", theme="corporate")
    assert table.service.table(table_id).row.theme == "corporate"
    table.host_do(table_id, "theme", theme="no-such-theme")  # not offered: changes nothing
    assert table.service.table(table_id).row.theme == "corporate"


def test_the_host_page_sets_the_tables_language_for_a_host_who_only_runs_the_table(table: WebTable) -> None:
    table_id, code = table.open("Host", play=False)
    de = Catalog.load("classic", "de")
    assert EN.text("web-table-screen") in table.host.get(f"/table/{table_id}").text
    table.host_do(table_id, "language", language="de")
    assert de.text("web-table-screen") in table.host.get(f"/table/{table_id}").text
    for name in NAMES:
        table.join(code, name)
    table.host_do(table_id, "start")
    table.host_do(table_id, "language", language="en")  # in a game too
    assert EN.text("web-table-screen") in table.host.get(f"/table/{table_id}").text
    assert 'name="theme"' in table.host.get(f"/host/{table_id}/live").text  # and the theme, as /theme takes
    table.host_do(table_id, "theme", theme="corporate")
    assert table.service.table(table_id).row.theme == "corporate"
    table.host_do(table_id, "language", language="xx")  # not offered: changes nothing
    assert EN.text("web-table-screen") in table.host.get(f"/table/{table_id}").text


def test_the_host_page_adds_any_number_of_computer_players(table: WebTable) -> None:
    table_id, _code = table.open("Ann")
    table.host_do(table_id, "computers-n", count="7")
    assert len(table.service.table(table_id).seats) == 8
    page = table.host.get(f"/host/{table_id}/live").text
    assert 'max="2"' in page  # two seats are still free
    table.host_do(table_id, "computers-n", count="5")  # more than fit: the table fills, nothing breaks
    assert len(table.service.table(table_id).seats) == 10
    assert 'name="count"' not in table.host.get(f"/host/{table_id}/live").text


def test_a_seat_moves_to_a_new_browser_with_the_host_pages_one_time_code(table: WebTable) -> None:
    table_id, code = table.open("Host", play=False)
    phones = {name: table.join(code, name) for name in NAMES}
    table.host_do(table_id, "start")
    table.host_do(table_id, "newdevice", name="Cy")
    host_page = table.host.get(f"/host/{table_id}/live").text
    found = re.search(r'href="http://testserver/move/(\w+)"', host_page)
    assert found is not None and "<svg" in host_page  # a link and its QR code
    move = found.group(1)
    new_phone = table.device()
    assert new_phone.get(f"/move/{move}").status_code == 200
    response = new_phone.post(f"/move/{move}", data={"nonce": "n1"}, follow_redirects=False)
    assert response.status_code == 303 and response.headers["location"] == f"/play/{table_id}"
    page = new_phone.get(f"/play/{table_id}/live").text
    assert "<h1><bdi>Cy</bdi></h1>" in page
    assert EN.text("knowledge-title") in text_of(page)  # what the seat knows came along
    assert phones["Cy"].get(f"/play/{table_id}/live").status_code == 403  # the dead phone's cookie is spent
    third = table.device()
    assert third.post(f"/move/{move}", data={"nonce": "n2"}, follow_redirects=False).status_code == 404  # once


def test_a_computer_stands_in_and_gives_the_seat_back_from_the_host_page(table: WebTable) -> None:
    table_id, code = table.open("Host", play=False)
    phones = {name: table.join(code, name) for name in NAMES}
    table.host_do(table_id, "start")
    president = table.service.table(table_id).names[table.service.table(table_id).state.president]
    table.host_do(table_id, "standin", name=president)
    t = table.service.table(table_id)
    assert t.state.phase is not Phase.NOMINATION or t.names[t.state.president] != president  # it played on
    assert EN.text("web-give-back") in text_of(table.host.get(f"/host/{table_id}/live").text)
    table.host_do(table_id, "return", name=president)
    assert not table.service.table(table_id).seats[NAMES.index(president)].computer
    assert phones[president].get(f"/play/{table_id}/live").status_code == 200


def test_the_host_page_nudges_whoever_the_table_waits_for(table: WebTable) -> None:
    table_id, code = table.open("Host", play=False)
    for name in NAMES:
        table.join(code, name)
    table.host_do(table_id, "start")
    t = table.service.table(table_id)
    president = t.names[t.state.president]
    table.host_do(table_id, "nudge")
    assert EN.text("nudge", names=president) in text_of(table.host.get(f"/host/{table_id}/live").text)


def test_a_player_renames_sets_a_language_and_leaves_the_lobby_from_their_page(table: WebTable) -> None:
    table_id, code = table.open("Ann")
    phone = table.join(code, "Bob")
    phone.post(f"/play/{table_id}", data={"do": "rename", "name": "Robert", "nonce": "r1"})
    assert table.service.table(table_id).names == ("Ann", "Robert")
    phone.post(f"/play/{table_id}", data={"do": "language", "language": "de", "nonce": "l1"})
    assert table.service.table(table_id).seats[1].language == "de"
    page = phone.get(f"/play/{table_id}").text
    assert 'lang="de"' in page and Catalog.load("classic", "de").text("web-leave") in text_of(page)
    response = phone.post(f"/play/{table_id}", data={"do": "leave", "nonce": "x1"}, follow_redirects=False)
    assert response.headers["location"] == f"/join/{code}"  # back to the join page, to sit down again
    assert table.service.table(table_id).names == ("Ann",)


def test_a_player_says_a_claim_to_the_table_from_their_page(table: WebTable) -> None:
    table_id, code = table.open("Host", play=False)
    phones = {name: table.join(code, name) for name in NAMES}
    table.host_do(table_id, "start")
    page = phones["Ann"].get(f"/play/{table_id}/live").text
    assert 'name="do" value="speak"' in page
    phones["Ann"].post(f"/play/{table_id}", data={"do": "speak", "kind": "accuse", "text": "Bob", "nonce": "s1"})
    ann = table.service.table(table_id).seats[0].address
    noted = EN.text("claim-noted", claim="").strip()
    assert any(a == ann and text.startswith(noted) for a, text in table.bodies(secret=False))
