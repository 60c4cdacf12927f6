"""The seat's page inside Telegram (a Mini App) in a real browser: Debian's Chromium, headless, against
``moderator serve``'s app under uvicorn on loopback, Telegram and the browser pages on, a public https address,
only Telegram's Bot API faked (tests/fake_telegram.py).

Five people play on Telegram. Ann opens her seat as Telegram opens a Mini App: the address of the chat's
"Open my seat" button, with what Telegram signed for her and its colours in the fragment
(``#tgWebAppData=…&tgWebAppThemeParams=…``), no script of Telegram's; she decides every decision there. Bob, Cy,
Dee and Eve press their chat's buttons. The test looks at what each of them sees: Ann's role behind a cover, her
prompts on the page as her chat has them, a vote she taps there shown on her chat's prompt and counted once,
Telegram's colours, covers closed when Telegram hides the page, and the game's end on both.
"""

from __future__ import annotations

import itertools
import json
import random
import sqlite3
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode, urlsplit

import httpx
import pytest

from moderator.catalog import Catalog
from moderator.engine import Role
from moderator.transports.telegram import SECRET_HEADER
from tests.accessibility import axe_source, report, violations
from tests.fake_telegram import Pressed, buttons, callback_query_id, init_data, private_chat, user
from tests.fake_twilio import PUBLIC_URL, FakeTwilio
from tests.serve_app import SECRET, WebhookBotAPI, env
from tests.test_browser import Server

pytest.importorskip("selenium.webdriver")  # Chromium itself is conftest's ``browser``, which skips without it
from selenium.common.exceptions import StaleElementReferenceException, WebDriverException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

EN = Catalog.load("classic", "en")
JA = EN.term("ja")
NAMES = ("Ann", "Bob", "Cy", "Dee", "Eve")
ENDS = tuple(EN.text(f"game-ended-{how}") for how in ("liberal-policies", "fascist-policies", "hitler-executed",
                                                      "hitler-elected"))
THEME = {"bg_color": "#17212b", "text_color": "#f5f5f5", "hint_color": "#708499", "link_color": "#6ab3f3",
         "button_color": "#5288c1", "button_text_color": "#ffffff", "secondary_bg_color": "#232e3c"}
"""Telegram's dark theme, as a Telegram client passes it to a Mini App."""


def rgb(colour: str) -> str:
    """``#rrggbb`` as Selenium reads a computed colour."""
    r, g, b = (int(colour[i:i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r}, {g}, {b}, 1)"


class Telegram:
    """The people on Telegram, talking to the server through its webhook as Telegram delivers their updates;
    what each phone shows is the fake Bot API's memory of their chat."""

    def __init__(self, server: Server, api: WebhookBotAPI) -> None:
        self.api = api
        self.hook = httpx.Client(base_url=server.url, timeout=20, headers={SECRET_HEADER: SECRET})
        self.people = {name: user(30_000 + i, name) for i, name in enumerate(NAMES)}
        self.ids = itertools.count(1)
        self.pressed = Pressed(self._in_chat)

    def send(self, update: dict[str, Any]) -> None:
        assert self.hook.post("/telegram", json=update).status_code == 200

    def say(self, name: str, text: str) -> None:
        person, n = self.people[name], next(self.ids)
        message = {"message_id": n, "from": person, "date": int(time.time()), "text": text,
                   "chat": private_chat(person)}
        if text.startswith("/"):
            message["entities"] = [{"type": "bot_command", "offset": 0, "length": len(text.split()[0])}]
        self.send({"update_id": n, "message": message})

    def press(self, name: str, message: dict[str, Any], data: str) -> None:
        n = next(self.ids)
        self.pressed.add((self.people[name]["id"], message["message_id"]))
        query = {"id": callback_query_id(n, time.time()), "from": self.people[name], "message": message,
                 "chat_instance": f"ci{n}", "data": data}
        self.send({"update_id": n, "callback_query": query})

    def messages(self, name: str) -> list[dict[str, Any]]:
        return self._chat(self.people[name]["id"])

    def _chat(self, chat: int) -> list[dict[str, Any]]:
        for _ in range(5):  # the server's threads may be adding one meanwhile
            try:
                return [json.loads(json.dumps(m)) for m in self.api.messages(chat)]
            except RuntimeError:
                time.sleep(0.01)
        raise AssertionError("the chat kept changing")

    def _in_chat(self, chat: int, message_id: int) -> dict[str, Any] | None:
        return next((m for m in self._chat(chat) if m["message_id"] == message_id), None)

    def message(self, name: str, message_id: int) -> dict[str, Any]:
        return next(m for m in self.messages(name) if m["message_id"] == message_id)

    def prompt(self, name: str) -> dict[str, Any] | None:
        """The newest message with the game's buttons in this person's chat, if they have not pressed it."""
        chat = self.people[name]["id"]
        for message in reversed(self.messages(name)):
            if game_buttons(message):
                return None if (chat, message["message_id"]) in self.pressed else message
        return None


def game_buttons(message: dict[str, Any]) -> list[dict[str, Any]]:
    """A prompt's buttons of the game (``<table>:<decision>:<token>``; not the lobby's, not "Open my seat")."""
    out = []
    for button in buttons(message):
        parts = button.get("callback_data", "").split(":")
        if len(parts) == 3 and parts[1].isdigit():
            out.append(button)
    return out


def until(check: Callable[[], Any], what: str, seconds: float = 20.0) -> Any:
    deadline = time.monotonic() + seconds
    while not (found := check()):
        assert time.monotonic() < deadline, what
        time.sleep(0.05)
    return found


def seen(driver: Any, check: Callable[[Any], Any], seconds: float = 15.0) -> Any:
    """Waits until the page shows it, reading the page again when the event stream swapped its part meanwhile."""
    return WebDriverWait(driver, seconds, poll_frequency=0.05,
                         ignored_exceptions=[StaleElementReferenceException]).until(check)


def as_telegram_opens_it(button_url: str, server: Server, signed: str) -> str:
    """The address a Telegram client opens for a ``web_app`` button: the button's, with what Telegram signed and
    its colours in the fragment (``encodeURIComponent``'d). Here the public address is the loopback server, as a
    proxy in front of it would make it."""
    path = urlsplit(button_url).path
    fragment = urlencode({"tgWebAppData": signed, "tgWebAppVersion": "8.0", "tgWebAppPlatform": "android",
                          "tgWebAppThemeParams": json.dumps(THEME, separators=(",", ":"))}, quote_via=quote)
    return f"{server.url}{path}#{fragment}"


@pytest.fixture
def served(tmp_path: Path, browser: Any) -> Iterator[tuple[Server, Telegram]]:
    """``serve``'s app under uvicorn with Telegram (the fake Bot API) and the browser pages on, behind a public
    https address, delivering as it does under ``serve``; the people on Telegram."""
    browser.delete_all_cookies()
    browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    browser.set_window_size(1280, 900)
    db = tmp_path / "app.db"
    api = WebhookBotAPI(clock=time.time)
    with Server(db, env(db, MODERATOR_WEB="on"), network={"telegram": api, "sms": FakeTwilio()},
                deliver=True, deliver_every=0.05, seed=lambda: 3) as server:
        yield server, Telegram(server, api)


def seated_with_page(telegram: Telegram) -> dict[str, Any]:
    """``seated``, then the "Open my seat" button Ann's chat offers her (an inline ``web_app`` button)."""
    seated(telegram)
    opener: dict[str, Any] = until(
        lambda: next((b for m in telegram.messages("Ann") for b in buttons(m) if "web_app" in b), None),
        "Ann's chat never offered her seat's page")
    return opener


def seated(telegram: Telegram) -> str:
    """Ann opens a table in her chat, the others join by its link, she starts the game; the table's id."""
    telegram.say("Ann", "/newgame")
    join = until(lambda: [b["url"] for m in telegram.messages("Ann") for b in buttons(m) if "url" in b],
                 "Ann's chat never showed the join link")
    code = join[0].rsplit("=", 1)[1]
    for name in NAMES[1:]:
        telegram.say(name, f"/start {code}")
    telegram.say("Ann", "/startgame")
    return str(code)


def test_a_whole_game_with_one_player_deciding_in_the_mini_app_and_the_others_in_their_chats(
        served: tuple[Server, Telegram], browser: Any) -> None:
    server, telegram = served
    opener = seated_with_page(telegram)
    assert opener["web_app"]["url"].startswith(f"{PUBLIC_URL}/app/")
    table_id = opener["web_app"]["url"].rsplit("/", 1)[1]
    browser.get(as_telegram_opens_it(opener["web_app"]["url"], server, init_data(telegram.people["Ann"],
                                                                                  auth_date=int(time.time()))))
    seen(browser, lambda d: d.find_element(By.TAG_NAME, "h1").text == "Ann")  # her seat, and nobody else's

    # Telegram's colours, from the fragment (there is no Telegram script here).
    body = browser.find_element(By.TAG_NAME, "body")
    assert body.value_of_css_property("background-color") == rgb(THEME["bg_color"])
    assert body.value_of_css_property("color") == rgb(THEME["text_color"])
    assert {b.value_of_css_property("background-color") for b in browser.find_elements(By.CSS_SELECTOR,
            "button.choice")} <= {rgb(THEME["button_color"])}

    # Everyone can use it, in Telegram's colours: axe-core finds nothing (as on the browser seat's page).
    axe_finds_nothing(browser, "the Mini App at a nomination, in Telegram's dark colours")

    # Her role, behind a cover until she taps it; the cover closes when the page is hidden (another app).
    role = Role(seat_role(server, table_id, 0))
    know = browser.find_element(By.ID, "know")
    card = know.find_element(By.CSS_SELECTOR, "img.role")
    assert know.get_attribute("open") is None and not card.is_displayed()
    know.find_element(By.TAG_NAME, "summary").click()
    assert card.is_displayed() and card.get_attribute("alt") == EN.term(role.value)
    hidden_for_a_moment(browser)
    assert know.get_attribute("open") is None and not card.is_displayed()

    rng = random.Random(5)
    done: set[str] = set()
    votes_checked = False
    deadline = time.monotonic() + 240
    while server.status(table_id) != "over":
        assert time.monotonic() < deadline, "the game did not end"
        acted = False
        owed = owed_on_page(browser)
        if owed is not None and owed[0] not in done:
            decision, tokens = owed
            # Her chat has the same prompt, with the same choices (its buttons' words are shorter: a name).
            prompt = until(lambda: telegram.prompt("Ann"), "Ann's chat never showed the prompt her page shows")
            assert [b["callback_data"].split(":")[1:] for b in game_buttons(prompt)] == [
                [decision, token] for token in tokens], (tokens, prompt)
            telegram.pressed.add((telegram.people["Ann"]["id"], prompt["message_id"]))
            done.add(decision)
            before = len(actions(server, table_id))
            sent = ja_form(browser)
            label = tap(browser, rng)
            if label == JA and sent is not None and not votes_checked:
                votes_checked = True
                a_vote_on_the_page_is_the_chats(browser, server, telegram, table_id, prompt, before, sent)
            acted = True
        for name in NAMES[1:]:
            message = telegram.prompt(name)
            if message is not None:
                choices = game_buttons(message)
                ja = [b for b in choices if b["text"] == JA]
                telegram.press(name, message, (ja[0] if ja else rng.choice(choices))["callback_data"])
                acted = True
        if not acted:
            time.sleep(0.05)
    assert votes_checked and len(done) >= 2
    # The end, on her page and in her chat alike; her chat's menu no longer opens a seat.
    end = seen(browser, lambda d: next((e for e in ENDS if e in d.find_element(By.ID, "live").text), None), 20)
    until(lambda: any(end in m.get("text", "") for m in telegram.messages("Ann")), "Ann's chat never said the end")
    axe_finds_nothing(browser, "the Mini App at the end")
    until(lambda: telegram.api.menus.get(telegram.people["Ann"]["id"]) == {"type": "default"},
          "Ann's menu still opened a seat after the game")


def axe_finds_nothing(driver: Any, what: str) -> None:
    source = axe_source()
    if source is None:
        pytest.skip("axe-core is not installed here (`make test` installs it)")
    found = violations(driver, source)
    assert not found, f"--- {what}\n{report(found)}"


def seat_role(server: Server, table_id: str, seat: int) -> str:
    table = server.app.state.service.table(table_id)
    return str(table.state.roles[seat].value)


def hidden_for_a_moment(driver: Any) -> None:
    """The person looks at another app and comes back: the page is hidden (here: another tab is in front)."""
    page = driver.current_window_handle
    driver.switch_to.new_window("tab")
    seen(driver, lambda d: d.execute_script("return document.visibilityState") == "visible")
    driver.close()
    driver.switch_to.window(page)


def owed_on_page(driver: Any) -> tuple[str, list[str]] | None:
    """The decision the page says is owed now and its choices' tokens (None if none, or one already answered)."""
    for _ in range(5):
        try:
            owed = driver.find_elements(By.CSS_SELECTOR, "#owed:not([data-waiting])")
            if not owed:
                return None
            tokens = [i.get_attribute("value") for i in owed[0].find_elements(By.CSS_SELECTOR, "input[name=token]")]
            return str(owed[0].get_attribute("data-decision")), tokens
        except StaleElementReferenceException:
            continue
    raise AssertionError("the page kept changing under its reader")


def tap(driver: Any, rng: random.Random) -> str:
    """Ann lifts the prompt's cover if it has one, and taps Ja in a vote, else a choice at random; its words."""
    button = None
    for _ in range(5):
        try:
            for cover in driver.find_elements(By.CSS_SELECTOR, "#owed details.secret:not([open]) > summary"):
                cover.click()
            choices = [b for b in driver.find_elements(By.CSS_SELECTOR, "#owed button.choice") if b.is_displayed()]
            ja = [b for b in choices if b.text == JA]
            button = ja[0] if ja else rng.choice(choices)
            label = str(button.text)
            button.click()
            break
        except StaleElementReferenceException:
            continue
    else:
        raise AssertionError("the prompt kept changing under Ann")
    seen(driver, lambda d: d.find_element(By.ID, "sending").text == EN.text("web-sent") or gone(button))
    return label


def gone(element: Any) -> bool:
    try:
        element.is_enabled()
        return False
    except (StaleElementReferenceException, WebDriverException):
        return True


def actions(server: Server, table_id: str) -> list[dict[str, Any]]:
    """The game's actions as stored (each decision counted is one)."""
    with sqlite3.connect(server.db) as db:
        rows = db.execute("SELECT action FROM actions WHERE table_id = ? ORDER BY n", (table_id,)).fetchall()
    return [json.loads(a) for (a,) in rows]


def ja_form(driver: Any) -> dict[str, str] | None:
    """The fields the page's Ja button sends (None if the prompt has none)."""
    for form in driver.find_elements(By.CSS_SELECTOR, "#owed form"):
        if form.find_element(By.CSS_SELECTOR, "button.choice").get_attribute("textContent").strip() == JA:
            return {i.get_attribute("name"): i.get_attribute("value") for i in form.find_elements(By.TAG_NAME, "input")}
    return None


def a_vote_on_the_page_is_the_chats(driver: Any, server: Server, telegram: Telegram, table_id: str,
                                    prompt: dict[str, Any], before: int, sent: dict[str, str]) -> None:
    """Ann's Ja on the page: one action, her chat's prompt edited to show it behind a spoiler (its buttons kept: a
    vote may change until the last is in), and the same post again (the page's retry after a blip) counted once."""
    after = until(lambda: (a := actions(server, table_id)) and len(a) > before and a, "the vote was not counted")
    assert after[before:] == [{"player": "Ann", "action": "vote", "vote": "ja"}]
    shown = until(lambda: (m := telegram.message("Ann", prompt["message_id"]))["text"] != prompt["text"] and m,
                  "the chat's prompt never showed the vote")
    # The question as the prompt asked it, then the choice; its last line, the vote's counter, may have moved on
    # meanwhile (another person voted).
    question = prompt["text"].rsplit("\n\n", 1)[0] if "\n\n" in prompt["text"] else prompt["text"]
    assert shown["text"].startswith(question)
    hidden = [shown["text"][e["offset"]: e["offset"] + e["length"]] for e in shown.get("entities", ())
              if e["type"] == "spoiler"]
    assert hidden == [EN.text("vote-recorded", vote=JA)], shown["text"]  # the prompt went protected: the words
    assert game_buttons(shown) == game_buttons(prompt)
    again = driver.execute_async_script("""
        const [url, fields, done] = arguments;
        fetch(url, {method: "POST", body: new URLSearchParams(fields), headers: {"X-Send": "1"},
                    credentials: "same-origin"}).then((r) => r.json()).then(done, (e) => done(String(e)));
    """, driver.current_url.split("#")[0], sent)
    assert again["counted"] is True and again["repeat"] is True, again
    assert actions(server, table_id) == after  # (nobody else decides meanwhile: the others wait for this test)


LIGHT = {"bg_color": "#ffffff", "text_color": "#000000", "button_color": "#2481cc", "button_text_color": "#ffffff",
         "link_color": "#2481cc", "hint_color": "#999999", "secondary_bg_color": "#efeff3"}
BRIDGE = """
// Telegram's script as a Mini App sees it (telegram-web-app.js, from Telegram's servers, which tests do not
// reach): what it signed, its colours and sizes, and the events it passes on from the app.
window.Telegram = { WebApp: {
  initData: %(signed)s, themeParams: %(theme)s, viewportHeight: 640, viewportStableHeight: 600,
  handlers: {}, readied: false,
  ready() { this.readied = true; }, expand() {},
  onEvent(kind, handler) { (this.handlers[kind] = this.handlers[kind] || []).push(handler); },
  fire(kind) { for (const handler of this.handlers[kind] || []) handler.call(this); },
} };
"""


def test_with_telegrams_script_the_page_takes_its_data_and_colours_and_covers_close_when_telegram_deactivates_it(
        served: tuple[Server, Telegram], browser: Any) -> None:
    server, telegram = served
    opener = seated_with_page(telegram)
    signed = init_data(telegram.people["Ann"], auth_date=int(time.time()))
    script = BRIDGE % {"signed": json.dumps(signed), "theme": json.dumps(LIGHT)}
    added = browser.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": script})
    try:
        # The address without the fragment: all of it comes from Telegram's script.
        browser.get(f"{server.url}{urlsplit(opener['web_app']['url']).path}")
        seen(browser, lambda d: d.find_element(By.TAG_NAME, "h1").text == "Ann")
        assert browser.execute_script("return Telegram.WebApp.readied") is True
        body = browser.find_element(By.TAG_NAME, "body")
        assert body.value_of_css_property("background-color") == rgb(LIGHT["bg_color"])
        assert body.value_of_css_property("color") == rgb(LIGHT["text_color"])
        assert browser.execute_script(
            "return getComputedStyle(document.documentElement).getPropertyValue('--tg-viewport-stable-height')"
        ).strip() == "600px"
        # A theme whose buttons would not read (white on yellow): the page keeps its own buttons' colours.
        unreadable = {**LIGHT, "bg_color": "#f4f4f5", "button_color": "#ffe14d"}
        browser.execute_script("Telegram.WebApp.themeParams = arguments[0]; Telegram.WebApp.fire('themeChanged')",
                               unreadable)
        assert body.value_of_css_property("background-color") == rgb(unreadable["bg_color"])
        axe_finds_nothing(browser, "the Mini App in a theme whose buttons would not read")
        know = browser.find_element(By.ID, "know")
        know.find_element(By.TAG_NAME, "summary").click()
        assert know.get_attribute("open") is not None
        browser.execute_script("Telegram.WebApp.fire('deactivated')")  # Telegram put the Mini App away
        assert know.get_attribute("open") is None
        assert not know.find_element(By.CSS_SELECTOR, "img.role").is_displayed()
    finally:
        browser.execute_cdp_cmd("Page.removeScriptToEvaluateOnNewDocument", {"identifier": added["identifier"]})


def test_a_stranger_who_opens_the_page_is_told_it_is_not_theirs_and_sees_no_seat(
        served: tuple[Server, Telegram], browser: Any) -> None:
    server, telegram = served
    opener = seated_with_page(telegram)
    mallory = user(39_999, "Mallory")
    browser.get(as_telegram_opens_it(opener["web_app"]["url"], server, init_data(mallory, auth_date=int(time.time()))))
    seen(browser, lambda d: d.find_element(By.CSS_SELECTOR, "#live h1").text == EN.text("web-app-no-seat"))
    browser.get(f"{server.url}{urlsplit(opener['web_app']['url']).path}")  # no Telegram at all
    seen(browser, lambda d: d.find_element(By.CSS_SELECTOR, "#live h1").text == EN.text("web-app-not-signed"))
    assert not browser.get_cookies()
    assert not browser.find_elements(By.ID, "know")
