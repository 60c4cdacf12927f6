"""A table in Persian, in Debian's headless Chromium: the seat's page, the host's page and the table screen read right
to left, a Latin name and a Persian name each in its own direction at the start (the right) of its line, the board
drawn in Persian; axe-core finds nothing wrong with any of them."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from moderator.catalog import direction
from tests import test_browser
from tests.test_accessibility import Checked, as_device
from tests.test_browser import Server, phone_size

pytest.importorskip("selenium.webdriver")

server = test_browser.server
PERSIAN = {"Accept-Language": "fa-IR,fa;q=0.9"}
NAMES = ("Ann", "زهرا", "Bob", "مریم کاظمی", "Алексей")
LATIN, FARSI = "Ann", "زهرا"


@pytest.fixture
def persian(browser: Any) -> Iterator[Any]:
    """Chromium asking for Persian first (its Accept-Language), as a Persian host's browser does; then as before."""
    agent = browser.execute_script("return navigator.userAgent")
    browser.execute_cdp_cmd("Emulation.setUserAgentOverride", {"userAgent": agent, "acceptLanguage": PERSIAN[
        "Accept-Language"]})
    try:
        yield browser
    finally:
        browser.execute_cdp_cmd("Emulation.setUserAgentOverride", {"userAgent": agent, "acceptLanguage": "en-US"})


def _persian_table(srv: Server) -> tuple[httpx.Client, str, dict[str, httpx.Client]]:
    """A host opens a table from a Persian browser and five Persian phones join; returns (host, table id, phones)."""
    host = srv.client()
    host.headers.update(PERSIAN)
    page = host.post("/new", data={"name": "میزبان", "theme": "classic"})
    table_id = str(page.url).rsplit("/", 1)[1]
    code = page.text.split('class="code">', 1)[1].split("<", 1)[0]
    phones = {}
    for name in NAMES:
        phones[name] = srv.client()
        phones[name].headers.update(PERSIAN)
        phones[name].post(f"/join/{code}", data={"name": name})
    return host, table_id, phones


_NAMES_SHOWN = """
return Array.from(document.querySelectorAll('li > bdi:first-child, h1 > bdi:first-child')).map(b => {
  const line = b.parentElement, style = getComputedStyle(line), box = line.getBoundingClientRect();
  return {name: b.textContent, direction: getComputedStyle(b).direction, right: b.getBoundingClientRect().right,
          start: box.right - parseFloat(style.paddingRight) - parseFloat(style.borderRightWidth)};
});
"""


def _reads_right_to_left(driver: Any) -> None:
    page = driver.execute_script("return [document.documentElement.lang, document.documentElement.dir,"
                                 " getComputedStyle(document.body).direction]")
    assert page == ["fa", "rtl", "rtl"]


def _names_in_place(driver: Any, names: tuple[str, ...]) -> None:
    """Each name leads its line at the right, in its own direction: Latin and Cyrillic left to right, Persian right
    to left."""
    shown = {n["name"]: n for n in driver.execute_script(_NAMES_SHOWN)}
    for name in names:
        assert name in shown, (name, sorted(shown))
        assert shown[name]["direction"] == direction(name), shown[name]
        assert abs(shown[name]["right"] - shown[name]["start"]) < 2, shown[name]


def test_a_persian_seat_page_host_page_and_table_screen_read_right_to_left_with_each_name_in_its_place(
    server: Server, persian: Any
) -> None:
    browser = persian
    host, table_id, phones = _persian_table(server)
    phone_size(browser)
    as_device(browser, server, phones[LATIN], f"/play/{table_id}")
    _reads_right_to_left(browser)
    _names_in_place(browser, (LATIN, *NAMES))  # its own name above, every seat in the lobby's list
    host.post(f"/host/{table_id}", data={"do": "start", "nonce": "go"})
    as_device(browser, server, phones[FARSI], f"/play/{table_id}")
    time.sleep(0.3)
    _reads_right_to_left(browser)
    _names_in_place(browser, (FARSI,))
    browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    as_device(browser, server, host, f"/host/{table_id}")
    _reads_right_to_left(browser)
    _names_in_place(browser, NAMES)  # every seat's row: its name, then what the host may do with it
    browser.get(f"{server.url}/table/{table_id}")
    time.sleep(0.3)
    _reads_right_to_left(browser)
    # The board at the side a Persian reader starts from (the right), the story beside it; the board in Persian.
    board, story = (browser.execute_script(f"return document.querySelector('{s}').getBoundingClientRect()")
                    for s in (".tv .main", ".tv .side"))
    assert board["left"] > story["right"] - 1
    assert "lang=fa" in browser.execute_script("return document.querySelector('.board img').src")


def test_the_persian_pages_pass_axe_core(server: Server, persian: Any) -> None:
    browser = persian
    checked = Checked(browser, server)
    host, table_id, phones = _persian_table(server)
    checked.page("table screen, lobby", None, f"/table/{table_id}")
    checked.page("host page, lobby", host, f"/host/{table_id}")
    phone_size(browser)
    checked.page("seat page, lobby", phones[LATIN], f"/play/{table_id}")
    host.post(f"/host/{table_id}", data={"do": "start", "nonce": "go"})
    checked.page("seat page, a game", phones[FARSI], f"/play/{table_id}")
    browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    checked.page("table screen, a game", None, f"/table/{table_id}")
    checked.page("host page, a game", host, f"/host/{table_id}")
    checked.assert_none({"table screen, lobby", "host page, lobby", "seat page, lobby", "seat page, a game",
                         "table screen, a game", "host page, a game"})
