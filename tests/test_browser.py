"""The browser channel in a real browser: Debian's Chromium, headless, driven by Selenium through Debian's
chromedriver (nothing downloads a browser), against ``moderator serve``'s app under uvicorn on loopback.

A whole 5-player game through five phone pages (one browser; each phone is its own cookie jar, swapped in),
a whole game by pass-and-play on the host's device, and the table screen following a vote without a reload.
Without /usr/bin/chromium these tests are skipped, except on CI (``CI`` set), where that is a failure.
"""

from __future__ import annotations

import contextlib
import random
import re
import sqlite3
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from moderator.app import create_app
from moderator.catalog import Catalog
from moderator.settings import Settings
from tests.serve_driver import free_port

NAMES = ("Ann", "Bob", "Cy", "Dee", "Eve")

pytest.importorskip("selenium.webdriver")  # Chromium itself is conftest's ``browser``, which skips without it
from selenium.common.exceptions import StaleElementReferenceException, WebDriverException  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.expected_conditions import staleness_of  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402


class Server:
    """``serve``'s app with the browser channel on, under uvicorn in a thread, on a free loopback port."""

    def __init__(self, db: Path, env: dict[str, str] | None = None, **options: Any) -> None:
        """``env``: the settings (else the browser channel alone on ``db``); ``options``: ``create_app``'s (no
        delivery unless they say so)."""
        import uvicorn

        self.db = db
        self.port = free_port()
        settings = Settings.load(env or {"MODERATOR_DB": str(db), "MODERATOR_WEB": "on"}, cwd=db.parent)
        self.app = create_app(settings, **{"deliver": False, **options})
        config = uvicorn.Config(self.app, host="127.0.0.1", port=self.port,
                                log_level="warning", timeout_graceful_shutdown=1)
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> Server:
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            assert time.monotonic() < deadline, "uvicorn did not start"
            time.sleep(0.05)
        return self

    def __exit__(self, *exc: object) -> None:
        # As `serve` does on SIGTERM: open event streams end now.
        self.app.state.channels["web"].state.close()
        self.server.should_exit = True
        self.thread.join(15)

    def status(self, table_id: str) -> str:
        with sqlite3.connect(self.db) as db:
            return str(db.execute("SELECT status FROM game_tables WHERE id = ?", (table_id,)).fetchone()[0])

    def client(self) -> httpx.Client:
        """A device without a browser (its own cookies)."""
        # A page's POST says where it comes from, as a browser's does (the server refuses one that does not).
        return httpx.Client(base_url=self.url, follow_redirects=True, timeout=10, headers={"Origin": self.url})


@pytest.fixture
def server(tmp_path: Path, browser: Any) -> Iterator[Server]:
    """Here (and in test_screen) ``server`` is the app under uvicorn, which Chromium (conftest's ``browser``) reaches
    over loopback; it stands in for conftest's app under a TestClient."""
    browser.delete_all_cookies()
    # Every test starts at the same size: a phone's emulated size would otherwise outlive the test that set it.
    browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    browser.set_window_size(1280, 900)
    with Server(tmp_path / "browser.db") as running:
        yield running


def host_opens(server: Server, *, play: bool) -> tuple[httpx.Client, str, str]:
    """The host opens a table from a device without a browser; returns (host device, table id, join code)."""
    host = server.client()
    page = host.post("/new", data={"name": "Host", "theme": "classic", **({"play": "1"} if play else {})})
    table_id = str(page.url).rsplit("/", 1)[1]
    code = re.search(r'class="code">(\w+)<', page.text)
    assert code is not None
    return host, table_id, code.group(1)


def table_of_five(server: Server, *, table_votes: bool = False) -> tuple[str, dict[str, httpx.Client]]:
    """Five phones (devices without a browser) at a started table, its votes cast by hand at the table if
    ``table_votes``; returns (table id, phones by name)."""
    host, table_id, code = host_opens(server, play=False)
    if table_votes:
        host.post(f"/host/{table_id}", data={"do": "tablevotes", "on": "1", "nonce": "hands"})
    phones = {}
    for name in NAMES:
        phone = server.client()
        phone.post(f"/join/{code}", data={"name": name})
        phones[name] = phone
    host.post(f"/host/{table_id}", data={"do": "start", "nonce": "go"})
    return table_id, phones


def host_opens_in_browser(driver: Any, server: Server) -> str:
    """Ann opens a table on the browser's front page and lands on its host page; returns the table id."""
    driver.get(f"{server.url}/")
    driver.find_element(By.NAME, "name").send_keys("Ann")
    driver.find_element(By.CSS_SELECTOR, "form.open button").click()
    WebDriverWait(driver, 10).until(lambda d: "/host/" in d.current_url)
    return str(driver.current_url.rsplit("/", 1)[1])


EN = Catalog.load("classic", "en")
JA = EN.term("ja")


def gone(element: Any) -> Any:
    """Waits until the element left the page: swapped out, or its page replaced by the next one (chromedriver
    then answers with a WebDriverException of its own rather than a stale element)."""
    def check(_driver: Any) -> bool:
        try:
            return bool(staleness_of(element)(_driver))
        except WebDriverException:
            return True
    return check


def decide(driver: Any, rng: random.Random) -> None:
    """Lift the cover over the prompt (the reader taps "reveal") and press one of its buttons: Ja in a vote, so
    that governments form and games stay short, else one at random. Waits until the answer's page replaced
    this one. A part of the page swapped in by the event stream meanwhile is read again."""
    for _ in range(5):
        try:
            for cover in driver.find_elements(By.CSS_SELECTOR, "details.secret:not([open]) > summary"):
                if cover.find_elements(By.XPATH, "..//button[@class='choice']"):
                    cover.click()
            buttons = [b for b in driver.find_elements(By.CSS_SELECTOR, "button.choice") if b.is_displayed()]
            ja = [b for b in buttons if b.text == JA]
            button = ja[0] if ja else rng.choice(buttons)
            button.click()
        except StaleElementReferenceException:
            continue
        # Looked for every 50 ms, not Selenium's 500: a whole game waits here after every tap.
        WebDriverWait(driver, 10, poll_frequency=0.05).until(gone(button))
        return
    raise AssertionError("the prompt kept changing under the reader")


def add_seat(driver: Any, name: str) -> None:
    """The host types ``name`` into the host page's add form and presses add, then waits until the form was
    swapped for the next (the next name goes into that one). A form the event stream swapped meanwhile is read
    again."""
    for _ in range(5):
        try:
            field = driver.find_element(By.CSS_SELECTOR, "form.add input[name=name]")
            field.clear()
            field.send_keys(name)
            button = driver.find_element(By.CSS_SELECTOR, "form.add button")
            button.click()
        except StaleElementReferenceException:
            continue
        WebDriverWait(driver, 10).until(gone(button))
        return
    raise AssertionError("the add form kept changing under the host")


def test_a_five_player_game_plays_through_five_phone_pages_in_chromium(server: Server, browser: Any) -> None:
    host, table_id, code = host_opens(server, play=False)
    jars: dict[str, list[dict[str, Any]]] = {}
    for name in NAMES:
        browser.delete_all_cookies()
        browser.get(f"{server.url}/join/{code}")
        browser.find_element(By.NAME, "name").send_keys(name)
        browser.find_element(By.CSS_SELECTOR, "button.primary").click()
        WebDriverWait(browser, 10).until(lambda d: f"/play/{table_id}" in d.current_url)
        assert browser.find_element(By.TAG_NAME, "h1").text == name
        jars[name] = browser.get_cookies()
    host.post(f"/host/{table_id}", data={"do": "start", "nonce": "go"})
    assert server.status(table_id) == "playing"
    rng = random.Random(11)
    answered: set[tuple[str, str]] = set()
    decisions = 0
    # Whose turn it is, the test reads without the browser (each phone's own cookie, the live part of its page);
    # every decision is then made in the browser, on that phone's page.
    peek = {name: server.client() for name in NAMES}
    for name, jar in jars.items():
        for cookie in jar:
            peek[name].cookies.set(cookie["name"], cookie["value"])
    while server.status(table_id) != "over":
        moved = False
        owing = [n for n in NAMES if 'class="prompt"' in peek[n].get(f"/play/{table_id}/live").text]
        for name in rng.sample(owing, len(owing)):
            browser.delete_all_cookies()
            for cookie in jars[name]:
                browser.add_cookie({k: v for k, v in cookie.items() if k != "expiry"})
            browser.get(f"{server.url}/play/{table_id}")
            prompt = browser.find_elements(By.CSS_SELECTOR, "section.prompt")
            if not prompt or (name, prompt[0].get_attribute("data-decision")) in answered:
                continue
            answered.add((name, prompt[0].get_attribute("data-decision")))
            decide(browser, rng)
            moved = True
            decisions += 1
            break
        assert moved, "no phone shows a decision, yet the game is not over"
        assert decisions < 300
    browser.get(f"{server.url}/table/{table_id}")
    live = browser.execute_script("return document.getElementById('live').innerText")
    assert Catalog.load("classic", "en").text("truth-title") in live


def test_pass_and_play_plays_a_whole_game_on_one_device_in_chromium_with_pins(server: Server, browser: Any) -> None:
    table_id = host_opens_in_browser(browser, server)
    for name in NAMES[1:]:
        add_seat(browser, name)
    seats = settled(browser).until(lambda d: [li.text for li in d.find_elements(By.CSS_SELECTOR, "ol.seats li")])
    assert [s.split()[0] for s in seats] == list(NAMES)
    start = EN.text("web-start")
    browser.find_element(By.XPATH, f"//button[text()='{start}']").click()
    settled(browser).until(lambda d: d.find_elements(By.CSS_SELECTOR, "ul.pass"))  # started, in place
    phone_size(browser)  # the host's phone, passed around the table
    rng = random.Random(5)
    turns = 0
    pins: dict[str, str] = {}
    guessed: set[str] = set()
    browser.get(f"{server.url}/host/{table_id}")
    while server.status(table_id) != "over":
        if "/pass/" in browser.current_url:
            # Between two players: the next one's name, and nothing of the seat before.
            assert not browser.find_elements(By.CSS_SELECTOR, "details.secret, button.choice")
            heading = browser.find_element(By.TAG_NAME, "h1").text
            name = next(n for n in NAMES if EN.text("web-pass-to", name=n) == heading)
            browser.find_element(By.CSS_SELECTOR, ".pass-to a.done").click()
        else:
            owing = browser.find_elements(By.XPATH, "//ul[@class='pass']/li[span[@class='owes']]/a")
            assert owing, "nobody owes a decision, yet the game is not over"
            if turns > 3:  # the names page shows what the whole table saw
                assert EN.text("web-latest") in browser.find_element(By.TAG_NAME, "body").text
            link = rng.choice(owing)
            name = link.text
            link.click()
        if name in pins:
            if name not in guessed:  # (once a name: a seat takes only a few wrong PINs a minute)
                # Another name's seat does not open without its PIN...
                guessed.add(name)
                field = browser.find_element(By.CSS_SELECTOR, "form.pin input[name=pin]")
                field.send_keys("0000" if pins[name] != "0000" else "1111")
                field.submit()
                WebDriverWait(browser, 10, ignored_exceptions=[StaleElementReferenceException]).until(
                    lambda d: EN.text("web-pin-wrong") in d.find_element(By.TAG_NAME, "body").text)
                assert not browser.find_elements(By.CSS_SELECTOR, "details[id^=cover-]")
            field = browser.find_element(By.CSS_SELECTOR, "form.pin input[name=pin]")
            field.send_keys(pins[name])  # ...and opens with it
            field.submit()
        cover = WebDriverWait(browser, 10).until(
            lambda d: d.find_element(By.CSS_SELECTOR, "details[id^=cover-] > summary"))
        # Face down until the player taps: nothing of the seat is visible to whoever passed the device on.
        assert not any(b.is_displayed() for b in browser.find_elements(By.CSS_SELECTOR, "button.choice"))
        done = browser.find_element(By.CSS_SELECTOR, ".bar a.done")
        assert browser.execute_script("return arguments[0].getBoundingClientRect().bottom <= window.innerHeight", done)
        if name not in pins:  # the first time at the device: this player sets a PIN
            pins[name] = f"{NAMES.index(name) + 1}" * 4
            field = browser.find_element(By.CSS_SELECTOR, "form.pin input[name=pin]")
            field.send_keys(pins[name])
            field.submit()
            WebDriverWait(browser, 10).until(gone(field))
            cover = browser.find_element(By.CSS_SELECTOR, "details[id^=cover-] > summary")
        cover.click()
        done = browser.find_element(By.CSS_SELECTOR, ".bar a.done")
        assert browser.execute_script("return arguments[0].getBoundingClientRect().bottom <= window.innerHeight", done)
        decide(browser, rng)
        WebDriverWait(browser, 10).until(lambda d: "/pass/" in d.current_url or d.current_url.endswith(table_id))
        turns += 1
        assert turns < 300
    assert len(pins) == len(NAMES)
    browser.get(f"{server.url}/table/{table_id}")
    # The table screen is laid out for a TV: on a phone's width the story scrolls in its own box.
    assert EN.text("truth-title") in browser.execute_script("return document.getElementById('live').innerText")


def test_the_table_screen_follows_a_vote_without_a_reload(server: Server, browser: Any) -> None:
    table_id, phones = table_of_five(server)
    browser.get(f"{server.url}/table/{table_id}")
    browser.execute_script("window.sameDocument = 'yes';")
    before = browser.find_element(By.ID, "live").text

    def press_all() -> None:
        for phone in phones.values():
            page = phone.get(f"/play/{table_id}/live").text
            for form in re.findall(r'<form method="post" class="inline">(.*?)</form>', page):
                if 'class="choice"' in form:
                    fields = dict(re.findall(r'name="(\w+)" value="([^"]*)"', form))
                    phone.post(f"/play/{table_id}", data=fields)
                    break

    press_all()  # the candidate nominates; whoever is fetched after that votes already
    press_all()  # the rest vote (a vote may change until the last one); the last vote closes the election
    catalog = Catalog.load("classic", "en")
    closed = (catalog.text("web-nothing-owed"),)
    try:
        WebDriverWait(browser, 10).until(lambda d: d.find_element(By.ID, "live").text != before
                                         and "Ja" in d.find_element(By.ID, "live").text)
    except StaleElementReferenceException:  # swapped while read: read again
        WebDriverWait(browser, 10).until(lambda d: "Ja" in d.find_element(By.ID, "live").text)
    assert browser.execute_script("return window.sameDocument") == "yes"  # updated in place, not reloaded
    assert int(browser.find_element(By.ID, "live").get_attribute("data-refreshes")) >= 1
    assert closed[0] not in browser.find_element(By.ID, "live").text  # the screen is no seat's page


def test_a_page_whose_event_stream_the_server_refused_opens_it_again_and_catches_up(server: Server,
                                                                                      browser: Any) -> None:
    from moderator.guard import StreamSlots

    _host, table_id, code = host_opens(server, play=False)
    web = server.app.state.channels["web"].state
    class Full(StreamSlots):  # every stream is answered 503; counts this table's refusals (not other pages')
        refused = 0

        def acquire(self, table: str) -> bool:
            Full.refused += table == table_id
            return False

    web.slots = Full()
    browser.get(f"{server.url}/table/{table_id}")
    browser.execute_script("window.sameDocument = 'yes';")
    # Refused (a browser's EventSource gives up on a 503 for good); on a busy machine that takes a while.
    WebDriverWait(browser, 20).until(lambda d: Full.refused >= 1)
    server.client().post(f"/join/{code}", data={"name": "Zed"})  # a change while the page has no stream
    web.slots = StreamSlots()
    WebDriverWait(browser, 20).until(lambda d: "Zed" in d.find_element(By.ID, "live").text)
    assert browser.execute_script("return window.sameDocument") == "yes"  # caught up in place, not reloaded
    assert web.slots.open(table_id) == 1


# --- a phone's page at a phone's size ----------------------------------------------------------------------------

_FORM = re.compile(r'<form method="post" class="inline">(.*?)</form>', re.S)


def phone_size(driver: Any) -> None:
    """390 by 844 CSS pixels at three device pixels each, and touch, as a phone shows the page."""
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": 390, "height": 844, "deviceScaleFactor": 3, "mobile": True})


def buttons_of(page: str) -> list[tuple[str, dict[str, str]]]:
    """(label, form fields) of each prompt button of a page's live part."""
    out = []
    for form in _FORM.findall(page):
        label = re.search(r'<button class="choice"[^>]*>([^<]*)', form)
        if label:
            out.append((label.group(1).strip(), dict(re.findall(r'name="(\w+)" value="([^"]*)"', form))))
    return out


def president_of(table_id: str, phones: dict[str, httpx.Client]) -> str:
    """The one phone that owes a decision at the start: the presidential candidate."""
    owing = [n for n, p in phones.items() if buttons_of(p.get(f"/play/{table_id}/live").text)]
    assert len(owing) == 1
    return owing[0]


def nominate(table_id: str, phone: httpx.Client) -> None:
    _label, fields = buttons_of(phone.get(f"/play/{table_id}/live").text)[0]
    assert phone.post(f"/play/{table_id}", data=fields).status_code == 200


def in_browser(driver: Any, server: Server, table_id: str, phone: httpx.Client) -> None:
    """The browser becomes this phone (its cookie) and opens its page at a phone's size."""
    driver.delete_all_cookies()
    driver.get(f"{server.url}/join/none")  # on the server's origin, so its cookie can be set
    for name, value in phone.cookies.items():
        driver.add_cookie({"name": name, "value": value, "path": "/"})
    phone_size(driver)
    driver.get(f"{server.url}/play/{table_id}")
    driver.execute_script("window.sameDocument = 'yes';")


def a_ballot_in_browser(driver: Any, server: Server) -> None:
    """At a ``table_of_five``, the candidate nominates and the browser becomes a voter's phone, its ballot shown."""
    table_id, phones = table_of_five(server)
    president = president_of(table_id, phones)
    voter = next(n for n in NAMES if n != president)
    nominate(table_id, phones[president])
    in_browser(driver, server, table_id, phones[voter])


@contextlib.contextmanager
def offline(driver: Any) -> Iterator[None]:
    """The browser's network is down inside the block and back up after it, also when the block fails."""
    driver.execute_cdp_cmd("Network.enable", {})
    conditions = {"latency": 0, "downloadThroughput": -1, "uploadThroughput": -1}
    driver.execute_cdp_cmd("Network.emulateNetworkConditions", {"offline": True, **conditions})
    try:
        yield
    finally:
        driver.execute_cdp_cmd("Network.emulateNetworkConditions", {"offline": False, **conditions})


def votes_recorded(server: Server) -> int:
    """How many "your vote is recorded / changed" answers the outbox holds (one per vote a seat cast)."""
    with sqlite3.connect(server.db) as db:
        return int(db.execute("SELECT count(*) FROM outbox WHERE message_id IN ('vote-recorded', 'vote-changed')")
                   .fetchone()[0])


def settled(driver: Any, seconds: float = 10) -> Any:
    """A wait that reads the page again when the event stream swapped its part meanwhile."""
    return WebDriverWait(driver, seconds, ignored_exceptions=[StaleElementReferenceException])


def status_says(driver: Any, text: str) -> bool:
    line = driver.find_element(By.ID, "sending")
    return bool(line.is_displayed() and line.text == text)


def owed_buttons(driver: Any) -> list[Any]:
    """The prompt's buttons, after lifting the cover over it if there is one."""
    for cover in driver.find_elements(By.CSS_SELECTOR, "#owed details.secret:not([open]) > summary"):
        cover.click()
    return [b for b in driver.find_elements(By.CSS_SELECTOR, "#owed button.choice") if b.is_displayed()]


def press(driver: Any, index: int) -> None:
    """Tap the prompt's ``index``-th button (read again if the event stream swapped it meanwhile)."""
    for _ in range(5):
        try:
            owed_buttons(driver)[index].click()
            return
        except StaleElementReferenceException:
            continue
    raise AssertionError("the prompt kept changing under the reader")


def test_a_vote_is_changed_on_the_phone_page_with_big_buttons_well_apart(server: Server, browser: Any) -> None:
    a_ballot_in_browser(browser, server)
    ja, nein = owed_buttons(browser)
    assert (ja.text, nein.text) == (EN.term("ja"), EN.term("nein"))
    for button in (ja, nein):
        assert button.size["height"] >= 48 and button.size["width"] >= 120
    apart = abs(nein.location["x"] - (ja.location["x"] + ja.size["width"])) if nein.location["y"] == \
        ja.location["y"] else nein.location["y"] - (ja.location["y"] + ja.size["height"])
    assert apart >= 16  # px between the two: a thumb on one is not on the other
    ja.click()
    settled(browser).until(lambda d: status_says(d, EN.text("web-sent")))
    # The cover now says what it hides (the vote), and under it the vote may change: Ja is marked.
    settled(browser).until(lambda d: EN.text("web-cover-vote") in d.find_element(By.ID, "owed").text)
    settled(browser).until(lambda d: owed_buttons(d)[0].get_attribute("aria-pressed") == "true")
    press(browser, 1)  # Nein
    settled(browser).until(lambda d: owed_buttons(d)[1].get_attribute("aria-pressed") == "true")
    settled(browser).until(lambda d: owed_buttons(d)[0].get_attribute("aria-pressed") is None)
    assert browser.execute_script("return window.sameDocument") == "yes"  # never a page load
    with sqlite3.connect(server.db) as db:
        changed = db.execute("SELECT count(*) FROM outbox WHERE message_id = 'vote-changed'").fetchone()[0]
    assert changed == 1


def test_a_prompt_arriving_while_scrolled_down_is_brought_into_view(server: Server, browser: Any) -> None:
    table_id, phones = table_of_five(server)
    president = president_of(table_id, phones)
    voter = next(n for n in NAMES if n != president)
    in_browser(browser, server, table_id, phones[voter])
    assert not browser.find_elements(By.ID, "owed")
    title = browser.title
    browser.execute_script("window.scrollTo(0, document.body.scrollHeight);")
    assert browser.execute_script("return window.scrollY") > 200  # the page is long enough to be scrolled
    nominate(table_id, phones[president])
    settled(browser).until(lambda d: d.find_elements(By.ID, "owed"))

    def in_view(d: Any) -> bool:
        return bool(d.execute_script(
            "const r = document.getElementById('owed').getBoundingClientRect();"
            "return r.top >= 0 && r.top < window.innerHeight / 2;"))

    settled(browser, 5).until(in_view)
    assert browser.title == f"\u25cf {EN.text('web-your-turn')} \u00b7 {title}"


def test_a_tap_while_the_server_is_unreachable_is_counted_once_when_it_is_back(server: Server, browser: Any) -> None:
    a_ballot_in_browser(browser, server)
    before = votes_recorded(server)
    with offline(browser):
        press(browser, 0)
        settled(browser).until(lambda d: status_says(d, EN.text("web-offline")))
        time.sleep(1.5)  # a retry or two meanwhile, all refused by the network
        assert votes_recorded(server) == before
        assert browser.execute_script("return window.sameDocument") == "yes"  # no browser error page
    settled(browser, 15).until(lambda d: status_says(d, EN.text("web-sent")))
    assert votes_recorded(server) == before + 1
    time.sleep(1.0)
    assert votes_recorded(server) == before + 1  # once
    assert browser.execute_script("return window.sameDocument") == "yes"


def test_a_tap_the_server_could_not_store_says_not_saved_and_counts_when_tapped_again(server: Server,
                                                                                     browser: Any) -> None:
    table_id, phones = table_of_five(server)
    president = president_of(table_id, phones)
    voter = next(n for n in NAMES if n != president)
    nominate(table_id, phones[president])
    in_browser(browser, server, table_id, phones[voter])
    before = votes_recorded(server)
    locked = sqlite3.connect(server.db, isolation_level=None)  # another process holds the write lock too long
    locked.execute("BEGIN EXCLUSIVE")
    try:
        press(browser, 0)
        settled(browser, 15).until(lambda d: status_says(d, EN.text("web-not-saved")))
    finally:
        locked.execute("ROLLBACK")
        locked.close()
    time.sleep(2.5)  # not sent again by itself: the player decides again on what the page shows
    assert votes_recorded(server) == before
    assert browser.execute_script("return window.sameDocument") == "yes"  # still on the page, no error page
    press(browser, 0)  # the buttons are there to tap again
    settled(browser, 10).until(lambda d: status_says(d, EN.text("web-sent")))
    assert votes_recorded(server) == before + 1


def test_a_tap_refused_because_the_question_moved_on_says_so(server: Server, browser: Any) -> None:
    table_id, phones = table_of_five(server)
    president = president_of(table_id, phones)
    in_browser(browser, server, table_id, phones[president])
    with offline(browser):
        press(browser, 0)
        settled(browser).until(lambda d: status_says(d, EN.text("web-offline")))
        nominate(table_id, phones[president])  # the same seat decided meanwhile on another device
    line = browser.find_element(By.ID, "sending")
    settled(browser, 15).until(lambda d: "refused" in (line.get_attribute("class") or ""))
    assert line.text and line.text != EN.text("web-sent")


def test_a_cover_closes_when_the_page_is_hidden_and_says_what_it_hides(server: Server, browser: Any) -> None:
    table_id, phones = table_of_five(server)
    in_browser(browser, server, table_id, phones["Ann"])
    role = browser.find_element(By.CSS_SELECTOR, ".feed details.secret")
    assert role.find_element(By.TAG_NAME, "summary").text.startswith(EN.text("web-cover-role"))
    assert EN.text("private-header") not in browser.find_element(By.ID, "live").get_attribute("textContent")
    role.find_element(By.TAG_NAME, "summary").click()
    assert role.get_attribute("open") is not None
    page = browser.current_window_handle
    browser.switch_to.new_window("tab")  # the page goes to the background: it is hidden
    browser.close()
    browser.switch_to.window(page)
    assert browser.execute_script("return document.querySelectorAll('details.secret[open]').length") == 0


def test_an_open_cover_stays_open_while_the_event_stream_is_renewed_and_shuts_when_the_server_is_gone(
        server: Server, browser: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The President reads their cards while every phone's event stream is renewed (every 20 s at a table; every
    second here): the cover stays open. A stream that ends without saying it is renewed is the server gone."""
    from moderator.transports.web import live

    monkeypatch.setattr(live, "STREAM_SECONDS", 1.0)
    table_id, phones = table_of_five(server)
    streams: list[str] = []
    stream = live.Live.stream

    def counted(self: live.Live, table: str) -> Any:
        streams.append(table)
        return stream(self, table)

    monkeypatch.setattr(live.Live, "stream", counted)
    in_browser(browser, server, table_id, phones["Ann"])
    covers = "return document.querySelectorAll('details.secret[open]').length"
    role = browser.find_element(By.CSS_SELECTOR, ".feed details.secret > summary")
    role.click()
    assert browser.execute_script(covers) == 1
    opened = streams.count(table_id)
    WebDriverWait(browser, 20).until(lambda d: streams.count(table_id) >= opened + 2)  # two renewals
    WebDriverWait(browser, 5).until(lambda d: d.execute_script("return document.readyState") == "complete")
    assert browser.execute_script(covers) == 1, "the cover shut on the stream's renewal"
    server.app.state.channels["web"].state.live.close()  # as the server stopping ends them
    settled(browser).until(lambda d: d.execute_script(covers) == 0)


def seat_order(driver: Any) -> list[str]:
    return [li.text.split()[0] for li in driver.find_elements(By.CSS_SELECTOR, "ol.seats li")]


def test_the_host_pages_seat_arrows_and_add_work_in_place_without_a_page_load(server: Server, browser: Any) -> None:
    phone_size(browser)
    table_id = host_opens_in_browser(browser, server)
    browser.execute_script("window.sameDocument = 'yes';")
    for name in ("Bob", "Cy", "Dee"):
        settled(browser).until(lambda d: d.find_element(By.CSS_SELECTOR, "form.add input[name=name]")).send_keys(name)
        browser.find_element(By.CSS_SELECTOR, "form.add button").click()
        settled(browser).until(lambda d, name=name: seat_order(d)[-1:] == [name])
    browser.execute_script("window.scrollTo(0, document.body.scrollHeight)")
    arrow = "//ol[@class='seats']/li[starts-with(., 'Dee')]//button[text()='\u2191']"
    for _ in range(2):  # Dee two places up, with two quick taps on her arrow as each part comes in
        before = seat_order(browser)
        settled(browser).until(lambda d: d.find_element(By.XPATH, arrow)).click()
        settled(browser).until(lambda d, before=before: seat_order(d) != before)
    assert seat_order(browser) == ["Ann", "Dee", "Bob", "Cy"]
    with sqlite3.connect(server.db) as db:
        names = [n for (n,) in db.execute("SELECT name FROM seats WHERE table_id = ? ORDER BY position", (table_id,))]
    assert names == ["Ann", "Dee", "Bob", "Cy"]
    assert browser.execute_script("return window.sameDocument") == "yes"  # never a page load
    assert browser.execute_script("return window.scrollY") > 0  # nor a jump to the top


def test_the_host_page_says_a_tap_was_not_saved_and_clears_it_when_the_tap_again_counts(server: Server,
                                                                                         browser: Any) -> None:
    phone_size(browser)
    table_id = host_opens_in_browser(browser, server)
    browser.execute_script("window.sameDocument = 'yes';")
    locked = sqlite3.connect(server.db, isolation_level=None)  # another process holds the write lock too long
    locked.execute("BEGIN EXCLUSIVE")
    try:
        settled(browser).until(lambda d: d.find_element(By.CSS_SELECTOR, "form.add input[name=name]")).send_keys("Bob")
        browser.find_element(By.CSS_SELECTOR, "form.add button").click()
        settled(browser, 15).until(lambda d: status_says(d, EN.text("web-not-saved")))
    finally:
        locked.execute("ROLLBACK")
        locked.close()
    browser.find_element(By.CSS_SELECTOR, "form.add button").click()  # the name is still typed: tap again
    settled(browser).until(lambda d: seat_order(d)[-1:] == ["Bob"])
    settled(browser).until(lambda d: not d.find_element(By.ID, "sending").is_displayed())  # nothing stale left
    with sqlite3.connect(server.db) as db:
        bobs = db.execute("SELECT count(*) FROM seats WHERE table_id = ? AND name = 'Bob'", (table_id,)).fetchone()[0]
    assert bobs == 1
    assert browser.execute_script("return window.sameDocument") == "yes"


def test_the_president_records_the_tables_votes_on_the_page_without_a_page_load(server: Server, browser: Any) -> None:
    table_id, phones = table_of_five(server, table_votes=True)
    president = president_of(table_id, phones)
    nominate(table_id, phones[president])
    in_browser(browser, server, table_id, phones[president])
    for name in NAMES[:3]:
        browser.find_element(By.CSS_SELECTOR, f".record input[value='{name}']").click()
    browser.find_element(By.CSS_SELECTOR, ".record button").click()
    settled(browser).until(lambda d: status_says(d, EN.text("web-sent")))
    settled(browser).until(lambda d: not d.find_elements(By.CSS_SELECTOR, ".record"))  # the election is decided
    with sqlite3.connect(server.db) as db:
        decided = db.execute("SELECT count(*) FROM events WHERE table_id = ? AND kind LIKE '%election%decided%'",
                             (table_id,)).fetchone()[0]
    assert decided == 1
    assert browser.execute_script("return window.sameDocument") == "yes"  # never a page load
