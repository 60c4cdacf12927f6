"""The browser channel in a real browser: Debian's Chromium, headless, driven by Selenium through Debian's
chromedriver (nothing downloads a browser), against ``moderator serve``'s app under uvicorn on loopback.

A whole 5-player game through five phone pages (one browser; each phone is its own cookie jar, swapped in),
a whole game by pass-and-play on the host's device, and the table screen following a vote without a reload.
Without /usr/bin/chromium these tests are skipped, except on CI (``CI`` set), where that is a failure.
"""

from __future__ import annotations

import os
import random
import re
import shutil
import socket
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

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
NAMES = ("Ann", "Bob", "Cy", "Dee", "Eve")

if not (shutil.which(CHROMIUM) and shutil.which(CHROMEDRIVER)):
    if os.environ.get("CI"):
        raise RuntimeError("CI needs Debian's chromium and chromium-driver (the Makefile's test target installs them)")
    pytest.skip("Debian's chromium and chromium-driver are not installed", allow_module_level=True)

webdriver = pytest.importorskip("selenium.webdriver")
from selenium.common.exceptions import StaleElementReferenceException  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.expected_conditions import staleness_of  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402


class Server:
    """``serve``'s app with the browser channel on, under uvicorn in a thread, on a free loopback port."""

    def __init__(self, db: Path) -> None:
        import uvicorn

        self.db = db
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        settings = Settings.load({"MODERATOR_DB": str(db), "MODERATOR_WEB": "on"}, cwd=db.parent)
        config = uvicorn.Config(create_app(settings, deliver=False), host="127.0.0.1", port=self.port,
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
        self.server.config.app.state.channels["web"].state.close()
        self.server.should_exit = True
        self.thread.join(15)

    def status(self, table_id: str) -> str:
        with sqlite3.connect(self.db) as db:
            return str(db.execute("SELECT status FROM game_tables WHERE id = ?", (table_id,)).fetchone()[0])

    def client(self) -> httpx.Client:
        """A device without a browser (its own cookies)."""
        # A page's POST says where it comes from, as a browser's does (the server refuses one that does not).
        return httpx.Client(base_url=self.url, follow_redirects=True, timeout=10, headers={"Origin": self.url})


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service as DriverService

    options = Options()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-quic", f"--user-data-dir={tmp_path_factory.mktemp('chromium')}"):
        options.add_argument(flag)
    os.environ.setdefault("SE_OFFLINE", "true")  # Selenium Manager must not look for a browser of its own
    driver = webdriver.Chrome(service=DriverService(executable_path=CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(20)
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture
def server(tmp_path: Path, browser: Any) -> Iterator[Server]:
    browser.delete_all_cookies()
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


JA = Catalog.load("classic", "en").term("ja")


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
        WebDriverWait(driver, 10).until(staleness_of(button))
        return
    raise AssertionError("the prompt kept changing under the reader")


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
    assert Catalog.load("classic", "en").text("truth-title") in browser.find_element(By.TAG_NAME, "body").text


def test_pass_and_play_plays_a_whole_game_on_one_device_in_chromium(server: Server, browser: Any) -> None:
    browser.get(f"{server.url}/")
    browser.find_element(By.NAME, "name").send_keys("Ann")
    browser.find_element(By.CSS_SELECTOR, "form.open button").click()
    WebDriverWait(browser, 10).until(lambda d: "/host/" in d.current_url)
    table_id = browser.current_url.rsplit("/", 1)[1]
    for name in NAMES[1:]:
        browser.find_element(By.CSS_SELECTOR, "form.add input[name=name]").send_keys(name)
        button = browser.find_element(By.CSS_SELECTOR, "form.add button")
        button.click()
        WebDriverWait(browser, 10).until(staleness_of(button))  # the next page, not this one, gets the next name
    seats = [li.text for li in browser.find_elements(By.CSS_SELECTOR, "ol.seats li")]
    assert [s.split()[0] for s in seats] == list(NAMES)
    start = Catalog.load("classic", "en").text("web-start")
    browser.find_element(By.XPATH, f"//button[text()='{start}']").click()
    rng = random.Random(5)
    turns = 0
    while server.status(table_id) != "over":
        browser.get(f"{server.url}/host/{table_id}")
        owing = browser.find_elements(By.XPATH, "//ul[@class='pass']/li[span[@class='owes']]/a")
        assert owing, "nobody owes a decision, yet the game is not over"
        rng.choice(owing).click()
        cover = browser.find_element(By.CSS_SELECTOR, "details[id^=cover-] > summary")
        # Face down until the player taps: nothing of the seat is visible to whoever passed the device on.
        assert not any(b.is_displayed() for b in browser.find_elements(By.CSS_SELECTOR, "button.choice"))
        cover.click()
        decide(browser, rng)
        assert browser.current_url.endswith(f"/host/{table_id}")  # back to the names: pass the device on
        turns += 1
        assert turns < 300
    browser.get(f"{server.url}/table/{table_id}")
    assert Catalog.load("classic", "en").text("truth-title") in browser.find_element(By.TAG_NAME, "body").text


def test_the_table_screen_follows_a_vote_without_a_reload(server: Server, browser: Any) -> None:
    host, table_id, code = host_opens(server, play=False)
    phones = {}
    for name in NAMES:
        phone = server.client()
        phone.post(f"/join/{code}", data={"name": name})
        phones[name] = phone
    host.post(f"/host/{table_id}", data={"do": "start", "nonce": "go"})
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
    web = server.server.config.app.state.channels["web"].state
    web.slots = StreamSlots(per_table=0)  # full: every stream of this table is answered 503
    browser.get(f"{server.url}/table/{table_id}")
    browser.execute_script("window.sameDocument = 'yes';")
    time.sleep(1.0)  # refused (a browser's EventSource gives up on a 503 for good)
    server.client().post(f"/join/{code}", data={"name": "Zed"})  # a change while the page has no stream
    web.slots = StreamSlots()
    WebDriverWait(browser, 20).until(lambda d: "Zed" in d.find_element(By.ID, "live").text)
    assert browser.execute_script("return window.sameDocument") == "yes"  # caught up in place, not reloaded
    assert web.slots.open(table_id) == 1
