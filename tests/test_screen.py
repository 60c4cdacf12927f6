"""The table screen on a TV, in Debian's headless Chromium (the same server and browser as tests/test_browser.py):
its text sizes and that nothing is cut off at 1920x1080 and 1280x720, a vote that leaves the board alone, the
reveal of every ballot, the roles at the end, the table's language, narration, and no secret anywhere on it.

Phones are devices without a browser (httpx, each its own cookies); the browser is the TV. ``SCREEN_SHOTS=<dir>``
keeps a screenshot of every layout looked at.
"""

from __future__ import annotations

import json
import os
import random
import re
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from moderator.catalog import Catalog
from tests import test_browser
from tests.test_browser import NAMES, Server, settled

pytest.importorskip("selenium.webdriver")  # (tests.test_browser has skipped this module if there is no Selenium)
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

server = test_browser.server  # the same server for each test (Chromium is conftest's, one for the run)
EN = Catalog.load("classic", "en")
SIZES = ((1920, 1080), (1280, 720))
BUTTON = re.compile(r'<form method="post" class="inline">(.*?)</form>', re.S)


def choosing(word: str) -> Callable[[list[str]], int]:
    """A phone's choice: the option labelled ``word``."""
    return lambda labels: labels.index(word)


def refreshed(least: int) -> Callable[[Any], bool]:
    """A wait's condition: the screen's live part has been swapped in at least ``least`` times."""
    return lambda d: int(d.find_element(By.ID, "live").get_attribute("data-refreshes") or 0) >= least


class Table:
    """Five phones at a table opened by a host without a seat; the browser is its screen."""

    def __init__(self, server: Server, *, lang: str = "en", names: tuple[str, ...] = NAMES) -> None:
        self.server = server
        self.names = names
        host = server.client()
        host.headers["Accept-Language"] = lang
        page = host.post("/new", data={"name": "Host", "theme": "classic"})
        self.id = str(page.url).rsplit("/", 1)[1]
        found = re.search(r'class="code">(\w+)<', page.text)
        assert found is not None
        self.code = found.group(1)
        self.host = host
        self.phones: dict[str, httpx.Client] = {}
        for name in names:
            phone = server.client()
            phone.headers["Accept-Language"] = lang
            phone.post(f"/join/{self.code}", data={"name": name})
            self.phones[name] = phone

    def start(self) -> None:
        self.host.post(f"/host/{self.id}", data={"do": "start", "nonce": "go"})

    def options(self, name: str) -> list[tuple[str, dict[str, str]]]:
        """The buttons on a phone's page now: (label, form fields)."""
        page = self.phones[name].get(f"/play/{self.id}/live").text
        out = []
        for form in BUTTON.findall(page):
            label = re.search(r'<button class="choice"[^>]*>([^<]*)', form)
            if label:
                out.append((label.group(1), dict(re.findall(r'name="(\w+)" value="([^"]*)"', form))))
        return out

    def press(self, name: str, choose: Callable[[list[str]], int]) -> bool:
        options = self.options(name)
        if not options:
            return False
        _, fields = options[choose([label for label, _ in options])]
        self.phones[name].post(f"/play/{self.id}", data=fields)
        return True

    def owing(self) -> list[str]:
        """Who owes a decision (a voter who voted may still change it, but owes nothing)."""
        pages = {name: self.phones[name].get(f"/play/{self.id}/live").text for name in self.names}
        return [name for name, page in pages.items() if BUTTON.search(page) and 'data-waiting="1"' not in page]

    def vote(self, ballots: dict[str, bool], lang: str = "en") -> None:
        """The candidate nominates (the first name offered), then everyone votes as ``ballots`` says."""
        catalog = Catalog.load("classic", lang)
        ja, nein = catalog.term("ja"), catalog.term("nein")
        for name in self.owing():
            self.press(name, lambda labels: 0)  # the nomination
        for name, vote in ballots.items():
            word = ja if vote else nein
            self.press(name, choosing(word))

    def play_out(self, rng: random.Random, before: Callable[[], None] = lambda: None) -> None:
        """Random decisions (Ja in votes, to keep games short) until the game is over."""
        ja = EN.term("ja")
        for _ in range(400):
            if self.server.status(self.id) == "over":
                return
            before()
            owing = self.owing()
            assert owing, "nobody owes a decision, yet the game is not over"
            name = rng.choice(owing)
            self.press(name, lambda labels: labels.index(ja) if ja in labels else rng.randrange(len(labels)))
        raise AssertionError("the game did not end")

    def secrets(self) -> list[str]:
        """Every secret message the phones were sent (roles, hands, investigations)."""
        with sqlite3.connect(self.server.db) as db:
            bodies = [json.loads(b) for (b,) in db.execute("SELECT body FROM outbox WHERE table_id = ?", (self.id,))]
        return [b["text"] for b in bodies if b.get("secret")]


def look(driver: Any, width: int, height: int) -> None:
    """The browser's viewport exactly ``width`` x ``height`` CSS pixels (a TV at that resolution)."""
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})


def open_screen(driver: Any, table: Table) -> None:
    driver.get(f"{table.server.url}/table/{table.id}")
    WebDriverWait(driver, 10).until(lambda d: d.execute_script(
        "return [...document.images].every((i) => i.complete)"))


# Visible text smaller than ``least`` px, and any element outside the viewport or clipped by a box it is in (the
# truth timeline scrolls by itself: its box counts, not its lines). The board image's own captions are pixels.
PROBLEMS = """
const least = arguments[0];
const small = [], cut = [];
const W = innerWidth, H = innerHeight;
const inScroller = (el) => el.closest('#truth') && el.id !== 'truth';
for (const el of document.querySelectorAll('#live *, .narrate')) {
  const r = el.getBoundingClientRect();
  if (r.width <= 1 || r.height <= 1 || getComputedStyle(el).visibility === 'hidden') continue;
  const text = [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim());
  if (text && parseFloat(getComputedStyle(el).fontSize) < least) small.push(el.tagName + ': ' + el.textContent);
  if (inScroller(el)) continue;
  let box = {left: 0, top: 0, right: W, bottom: H};
  for (let up = el.parentElement; up; up = up.parentElement) {
    if (getComputedStyle(up).overflow !== 'visible' && up !== document.body && up !== document.documentElement) {
      const b = up.getBoundingClientRect();
      box = {left: Math.max(box.left, b.left), top: Math.max(box.top, b.top),
             right: Math.min(box.right, b.right), bottom: Math.min(box.bottom, b.bottom)};
    }
  }
  if (r.left < box.left - 1 || r.top < box.top - 1 || r.right > box.right + 1 || r.bottom > box.bottom + 1)
    cut.push(el.tagName + '.' + el.className + ': ' + el.textContent.slice(0, 60));
}
return {small, cut, scrolls: document.documentElement.scrollHeight > H || document.documentElement.scrollWidth > W};
"""


def check_layout(driver: Any, what: str) -> None:
    """At both sizes: text at least 32 px at 1080p, nothing cut off, no scrolling."""
    shots = os.environ.get("SCREEN_SHOTS")
    for width, height in SIZES:
        look(driver, width, height)
        driver.execute_script("document.getElementById('live').dispatchEvent(new Event('live:swapped'))")  # refit
        found = driver.execute_script(PROBLEMS, 32 * height / 1080)
        if shots:
            Path(shots).mkdir(parents=True, exist_ok=True)
            driver.save_screenshot(f"{shots}/{what}-{width}x{height}.png")
        assert not found["small"], f"{what} at {width}x{height}: text too small: {found['small'][:5]}"
        assert not found["cut"], f"{what} at {width}x{height}: cut off: {found['cut'][:5]}"
        assert not found["scrolls"], f"{what} at {width}x{height}: the page scrolls"


def live_text(driver: Any) -> str:
    return str(driver.execute_script("return document.getElementById('live').innerText"))


def test_the_table_screen_fits_a_tv_from_lobby_to_the_end_at_1080p_and_720p(server: Server, browser: Any) -> None:
    table = Table(server)
    open_screen(browser, table)
    # The lobby: the join code's QR big under its title, and this screen's own short address with its QR.
    heading = browser.find_element(By.CSS_SELECTOR, ".join h1")
    assert heading.text == EN.text("web-scan-to-join")
    look(browser, 1920, 1080)
    qr = browser.find_element(By.CSS_SELECTOR, ".join figure svg").rect
    assert qr["height"] >= 600  # of 1080
    own = browser.find_element(By.CSS_SELECTOR, ".own a")
    assert own.text == f"127.0.0.1:{server.port}/tv/{table.code}"
    check_layout(browser, "lobby")
    table.start()
    open_screen(browser, table)
    waiting = browser.find_element(By.CSS_SELECTOR, ".waiting").text
    assert any(name in waiting for name in NAMES)
    check_layout(browser, "nomination")
    table.vote({"Ann": True, "Bob": False, "Cy": True, "Dee": False, "Eve": True})
    WebDriverWait(browser, 10).until(lambda d: d.find_elements(By.CSS_SELECTOR, ".reveal"))
    check_layout(browser, "reveal")
    table.play_out(random.Random(3))
    open_screen(browser, table)
    check_layout(browser, "end")


TEN = ("Alexandra", "Bartholomew", "Cornelius", "Dominique", "Evangeline", "Friederike", "Gwendolyn",
       "Hildegard", "Ignatius", "Josephine")
"""Ten players, the most a table seats, with long names."""


def whole(driver: Any, names: str) -> None:
    """At both sizes, every name ``names`` selects in full on one line: none cut short with an ellipsis or broken."""
    for width, height in SIZES:
        look(driver, width, height)
        cut = driver.execute_script(
            "return [...document.querySelectorAll(arguments[0])].filter((e) => e.scrollWidth > e.clientWidth"
            " || e.getClientRects().length > 1 || e.getBoundingClientRect().height > 1.5 * parseFloat("
            "getComputedStyle(e).fontSize) * 1.2).map((e) => e.textContent)", names)
        assert cut == [], f"names cut short or broken at {width}x{height}: {cut}"


def test_ten_long_names_fit_the_screen_at_1080p_and_720p_from_lobby_to_the_end(server: Server, browser: Any) -> None:
    table = Table(server, names=TEN)
    open_screen(browser, table)
    assert [li.text for li in browser.find_elements(By.CSS_SELECTOR, ".lobby ol.seats li")] == list(TEN)
    check_layout(browser, "ten-lobby")
    table.start()
    open_screen(browser, table)
    check_layout(browser, "ten-nomination")
    for name in table.owing():
        table.press(name, lambda labels: 0)  # the nomination: now the screen waits for all ten votes, by name
    settled(browser).until(lambda d: all(n in d.find_element(By.CSS_SELECTOR, ".waiting").text for n in TEN))
    check_layout(browser, "ten-vote")
    ja, nein = EN.term("ja"), EN.term("nein")
    for n, name in enumerate(TEN):
        table.press(name, choosing(ja if n % 3 else nein))
    WebDriverWait(browser, 10).until(lambda d: len(d.find_elements(By.CSS_SELECTOR, ".reveal li")) == len(TEN))
    check_layout(browser, "ten-reveal")  # every one of the ten ballots on screen, none cut off
    whole(browser, ".reveal .name")
    for _ in range(20):  # on to the next vote: the ten names waited for, under the last one's ten ballots
        owing = table.owing()
        if len(owing) == len(TEN):
            break
        table.press(owing[0], lambda labels: 0)
    settled(browser).until(lambda d: all(n in d.find_element(By.CSS_SELECTOR, ".waiting").text for n in TEN))
    assert len(browser.find_elements(By.CSS_SELECTOR, ".reveal li")) == len(TEN)
    check_layout(browser, "ten-second-vote")
    table.play_out(random.Random(10))
    open_screen(browser, table)
    assert len(browser.find_elements(By.CSS_SELECTOR, "ul.roles li")) == len(TEN)
    check_layout(browser, "ten-end")
    whole(browser, "ul.roles .name")


def test_a_vote_neither_moves_nor_fetches_the_board_again(server: Server, browser: Any) -> None:
    table = Table(server)
    table.start()
    for name in table.owing():
        table.press(name, lambda labels: 0)  # the nomination: the board shows the nominee
    open_screen(browser, table)
    look(browser, 1920, 1080)
    board = browser.find_element(By.CSS_SELECTOR, ".board img")
    before = board.rect
    assert (board.get_dom_attribute("width"), board.get_dom_attribute("height")) == ("1200", "886")  # reserved
    browser.execute_script("arguments[0].dataset.mark = 'first'", board)
    # Fetched over the network (a picture the browser takes again from its cache costs nothing and shows at once).
    fetched = ("return performance.getEntriesByType('resource')"
               ".filter((e) => e.name.includes('board.png') && e.transferSize > 0).length")
    assert browser.execute_script(fetched) == 1
    refreshes = int(browser.find_element(By.ID, "live").get_attribute("data-refreshes") or 0)
    ja = EN.term("ja")
    for name in NAMES[:3]:  # votes, but not the last: the election is still open
        table.press(name, lambda labels: labels.index(ja))
        refreshes += 1
        WebDriverWait(browser, 10).until(refreshed(refreshes))
    board = browser.find_element(By.CSS_SELECTOR, ".board img")
    assert board.get_attribute("data-mark") == "first"  # the same element, never blanked
    assert board.rect == before
    assert browser.execute_script(fetched) == 1
    # Who is still to vote, by name.
    waiting = browser.find_element(By.CSS_SELECTOR, ".waiting").text
    assert "Dee" in waiting and "Eve" in waiting and "Ann" not in waiting


def test_the_reveal_names_every_voter_with_their_ballot(server: Server, browser: Any) -> None:
    table = Table(server)
    table.start()
    open_screen(browser, table)
    ballots = {"Ann": True, "Bob": False, "Cy": True, "Dee": False, "Eve": False}
    table.vote(ballots)
    WebDriverWait(browser, 10).until(lambda d: d.find_elements(By.CSS_SELECTOR, ".reveal li"))
    shown = {li.find_element(By.CSS_SELECTOR, ".name").text: li.get_attribute("class")
             for li in browser.find_elements(By.CSS_SELECTOR, ".reveal li")}
    assert shown == {name: "ja" if vote else "nein" for name, vote in ballots.items()}
    cards = [img.get_attribute("src") for img in browser.find_elements(By.CSS_SELECTOR, ".reveal img")]
    assert all(re.search(r"/static/art/classic/vote-(ja|nein)\.svg$", src) for src in cards)
    assert browser.execute_script("return [...document.images].every((i) => i.naturalWidth > 0)")
    assert "rejected" in browser.find_element(By.CSS_SELECTOR, ".reveal").get_attribute("class")


def test_the_end_screen_shows_every_role_on_its_seat_and_the_winner(server: Server, browser: Any) -> None:
    table = Table(server)
    table.start()
    table.play_out(random.Random(8))
    look(browser, 1920, 1080)  # (not whatever size the test before left)
    open_screen(browser, table)
    seats = [(li.find_element(By.CSS_SELECTOR, ".name").text, li.find_element(By.CSS_SELECTOR, ".role").text)
             for li in browser.find_elements(By.CSS_SELECTOR, "ul.roles li")]
    # As the phones were told at the end: "The roles: Ann: Liberal, ...".
    feed = table.phones["Ann"].get(f"/play/{table.id}/live").text
    roles = EN.text("roles-revealed", roles=", ".join(f"{n}: {r}" for n, r in seats))
    assert roles in feed.replace("&#x27;", "'")
    assert [n for n, _ in seats] == list(NAMES)
    ended = browser.find_element(By.CSS_SELECTOR, "h1.ended")
    assert float(ended.value_of_css_property("font-size").rstrip("px")) >= 48
    assert ended.text and ended.text in feed
    assert EN.text("truth-title") in live_text(browser)


def test_the_screen_speaks_the_tables_language_not_the_tvs(server: Server, browser: Any) -> None:
    table = Table(server, lang="de")  # the host and phones speak German; the TV's Chromium asks for English
    de = Catalog.load("classic", "de")
    open_screen(browser, table)
    assert browser.find_element(By.TAG_NAME, "html").get_attribute("lang") == "de"
    assert browser.find_element(By.CSS_SELECTOR, ".join h1").text == de.text("web-scan-to-join")
    table.start()
    table.vote(dict.fromkeys(NAMES, True), lang="de")
    open_screen(browser, table)
    assert browser.find_element(By.CSS_SELECTOR, ".latest h2").text == de.text("web-latest")
    assert "lang=de" in browser.find_element(By.CSS_SELECTOR, ".board img").get_attribute("src")


SPEECH_STUB = """
window.spoken = [];
window.shown = new Set();
const note = () => document.querySelectorAll('[data-say]').forEach((e) => window.shown.add(e.dataset.say));
document.addEventListener('live:swapped', note, true);
document.addEventListener('DOMContentLoaded', note);
const speech = {speak: (u) => window.spoken.push({text: u.text, lang: u.lang}), cancel: () => {}};
Object.defineProperty(window, 'speechSynthesis', {value: speech, configurable: true});
"""


def test_narration_is_off_until_turned_on_then_reads_each_public_result_and_no_secret(server: Server,
                                                                                      browser: Any) -> None:
    table = Table(server)
    script = browser.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": SPEECH_STUB})
    try:
        table.start()
        open_screen(browser, table)
        table.vote(dict.fromkeys(NAMES, True))
        WebDriverWait(browser, 10).until(lambda d: d.find_elements(By.CSS_SELECTOR, ".reveal"))
        assert browser.execute_script("return window.spoken") == []  # off by default
        browser.find_element(By.ID, "narrate").click()
        table.play_out(random.Random(4))
        WebDriverWait(browser, 10).until(lambda d: d.find_elements(By.CSS_SELECTOR, "h1.ended"))
        shown = set(browser.execute_script("return [...window.shown]"))
        spoken = browser.execute_script("return window.spoken")
        texts = [s["text"] for s in spoken]
        assert texts and {s["lang"] for s in spoken} == {"en"}
        assert set(texts) <= shown  # only what the screen shows
        assert len(texts) == len(set(texts))  # each once
        assert browser.find_element(By.CSS_SELECTOR, "h1.ended").text in texts  # the winner is read out
        for secret in table.secrets():
            assert secret not in texts and not any(secret in t for t in texts)
        # A reload keeps narration on (the choice is this screen's), and does not read the old results again.
        browser.refresh()
        assert browser.find_element(By.ID, "narrate").is_selected()
        assert browser.execute_script("return window.spoken") == []
    finally:
        browser.execute_cdp_cmd("Page.removeScriptToEvaluateOnNewDocument", {"identifier": script["identifier"]})
        browser.execute_script("localStorage.clear()")


def test_no_screen_part_or_event_stream_holds_a_secret(server: Server, browser: Any) -> None:
    table = Table(server)
    table.start()
    tv = server.client()
    parts: list[str] = []

    def read() -> None:
        parts.append(tv.get(f"/table/{table.id}").text)
        parts.append(tv.get(f"/table/{table.id}/live").text)

    table.play_out(random.Random(6), before=read)
    secrets = table.secrets()
    assert secrets
    roles = re.compile("|".join(re.escape(f"{n}: {EN.term(r)}") for n in NAMES for r in ("liberal", "fascist",
                                                                                          "hitler")))
    for part in parts:
        assert 'class="roles"' not in part and not roles.search(part)  # the roles only once the game is over
        for secret in secrets:
            assert secret not in part
    with tv.stream("GET", f"/table/{table.id}/events") as stream:
        table.host.post(f"/host/{table.id}", data={"do": "rematch", "nonce": "again"})
        lines = []
        for line in stream.iter_lines():
            lines.append(line)
            if line.startswith("data:"):
                break
    assert all(line in ("retry: 500", "", ":", "data: changed") for line in lines)
