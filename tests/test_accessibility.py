"""Pages everyone can use, in Debian's headless Chromium (the same server and browser as tests/test_browser.py):

- axe-core (``tests/accessibility.py``: pinned, installed by ``make test``) finds no violation of any impact, under
  WCAG 2.0, 2.1 and 2.2 A and AA and axe's best practices, on the join page, a seat's page at every kind of
  prompt and at the end, the table screen in the lobby, mid-game and at the end, the host's page, the front page
  and the pass-and-play pages;
- a blind player plays a whole game on their own phone through Chromium's accessibility tree alone, as a screen
  reader does: what they hear is the live region's announcement, what they press is found by its role and its
  accessible name (``Accessibility.queryAXTree``), never by a CSS selector.
"""

from __future__ import annotations

import random
import time
from typing import Any

import httpx
import pytest

from moderator.catalog import Catalog
from moderator.engine import Phase, Role, awaiting
from tests import test_browser
from tests.accessibility import axe_source, report, violations
from tests.test_browser import NAMES, Server, buttons_of, host_opens, in_browser, phone_size

pytest.importorskip("selenium.webdriver")  # (tests.test_browser has skipped this module if there is no Selenium)

server = test_browser.server  # the same server for each test (Chromium is conftest's, one for the run)
EN = Catalog.load("classic", "en")
SEVEN = ("Ann", "Bob", "Cy", "Dee", "Eve", "Fay", "Gus")


def axe() -> str:
    source = axe_source()
    if source is None:
        pytest.skip("axe-core is not installed here (`make test` installs it)")
    return source


def as_device(driver: Any, srv: Server, client: httpx.Client, path: str) -> None:
    """The browser becomes this device (its cookies) and opens ``path``."""
    driver.delete_all_cookies()
    driver.get(f"{srv.url}/join/none")  # on the server's origin, so its cookies can be set
    for name, value in client.cookies.items():
        driver.add_cookie({"name": name, "value": value, "path": "/"})
    driver.get(f"{srv.url}{path}")


class Checked:
    """Every page looked at and what axe-core found on it."""

    def __init__(self, driver: Any, srv: Server) -> None:
        self.driver, self.srv, self.source = driver, srv, axe()
        self.found: dict[str, list[dict[str, Any]]] = {}

    def page(self, what: str, client: httpx.Client | None, path: str) -> None:
        if client is None:
            self.driver.delete_all_cookies()
            self.driver.get(f"{self.srv.url}{path}")
        else:
            as_device(self.driver, self.srv, client, path)
        time.sleep(0.4)  # the live part's scripts have run (a title, a live region)
        self.found[what] = violations(self.driver, self.source)

    def assert_none(self, expected: set[str]) -> None:
        assert expected <= set(self.found), sorted(expected - set(self.found))
        bad = {what: found for what, found in self.found.items() if found}
        assert not bad, "\n".join(f"--- {what}\n{report(found)}" for what, found in bad.items())


def buttons(client: httpx.Client, table_id: str) -> list[tuple[str, dict[str, str]]]:
    """The prompt's buttons on a phone's page now: (words, form fields)."""
    return buttons_of(client.get(f"/play/{table_id}/live").text)


def test_every_page_of_a_game_passes_axe_core_at_every_kind_of_prompt(server: Server, browser: Any) -> None:
    checked = Checked(browser, server)
    host, table_id, code = host_opens(server, play=False)
    phones: dict[str, httpx.Client] = {}
    checked.page("join page", None, f"/join/{code}")
    for name in SEVEN:
        phones[name] = server.client()
        phones[name].post(f"/join/{code}", data={"name": name})
    checked.page("table screen, lobby", None, f"/table/{table_id}")
    checked.page("host page, lobby", host, f"/host/{table_id}")
    phone_size(browser)
    checked.page("seat page, lobby", phones["Ann"], f"/play/{table_id}")
    host.post(f"/host/{table_id}", data={"do": "start", "nonce": "go"})
    service = server.app.state.service
    seen: set[str] = set()
    vetoed = False
    for _ in range(300):
        t = service.table(table_id)
        if t.state.phase is Phase.GAME_OVER:
            break
        hitler = t.state.roles.index(Role.HITLER)
        owing = [(n, b) for n in SEVEN if (b := buttons(phones[n], table_id))]
        name, options = next(((n, b) for n, b in owing if not (t.state.phase is Phase.ELECTION and
                                                              'data-waiting' in phones[n].get(
                                                                  f"/play/{table_id}/live").text)), owing[0])
        labels = [label for label, _ in options]
        kind = t.state.phase.value
        if EN.text("choice-propose-veto") in labels:
            kind = "enact with a veto"
        if kind not in seen:  # a prompt of a kind not looked at yet: in the browser, at a phone's size
            seen.add(kind)
            checked.page(f"seat page: {kind}", phones[name], f"/play/{table_id}")
        voted = [n for n in SEVEN if 'data-waiting="1"' in phones[n].get(f"/play/{table_id}/live").text]
        if voted and "changing a vote" not in seen:
            seen.add("changing a vote")
            checked.page("seat page: changing a vote", phones[voted[0]], f"/play/{table_id}")
        fascist, liberal = EN.term("fascist_card"), EN.term("liberal_card")
        # Steered to every power: Ja, fascist policies, a veto once, and nobody touches Hitler.
        if EN.term("ja") in labels:
            pick = labels.index(EN.term("ja"))
        elif kind == "enact with a veto" and not vetoed:
            vetoed, pick = True, labels.index(EN.text("choice-propose-veto"))
        elif EN.text("choice-veto-refuse") in labels:
            pick = labels.index(EN.text("choice-veto-refuse"))
        elif any(liberal in label for label in labels) and t.state.phase is Phase.LEGISLATIVE_PRESIDENT:
            pick = next(i for i, label in enumerate(labels) if liberal in label)
        elif any(fascist in label for label in labels):
            pick = next(i for i, label in enumerate(labels) if fascist in label)
        else:
            pick = next(i for i, label in enumerate(labels) if not label.endswith(t.names[hitler]))
        phones[name].post(f"/play/{table_id}", data=options[pick][1])
        if kind == "election" and "table screen, mid-game" not in checked.found and t.state.liberal_policies + \
                t.state.fascist_policies:
            browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
            checked.page("table screen, mid-game", None, f"/table/{table_id}")
            checked.page("host page, mid-game", host, f"/host/{table_id}")
            phone_size(browser)
    assert server.status(table_id) == "over"
    assert {"nomination", "election", "legislative_president", "legislative_chancellor", "enact with a veto", "veto",
            "investigate", "special_election", "execution"} <= seen
    t = service.table(table_id)
    out = next(n for n in SEVEN if not t.state.alive[SEVEN.index(n)])
    checked.page("seat page, the end, executed", phones[out], f"/play/{table_id}")
    checked.page("seat page, the end", phones[next(n for n in SEVEN if n != out)], f"/play/{table_id}")
    browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    checked.page("table screen, the end", None, f"/table/{table_id}")
    checked.page("host page, the end", host, f"/host/{table_id}")
    checked.assert_none({"join page", "table screen, lobby", "table screen, mid-game", "table screen, the end",
                         "host page, lobby", "host page, mid-game", "host page, the end", "seat page, lobby",
                         "seat page, the end", "seat page, the end, executed"})


def test_the_front_page_and_every_pass_and_play_page_pass_axe_core(server: Server, browser: Any) -> None:
    checked = Checked(browser, server)
    checked.page("front page", None, "/")
    host, table_id, _code = host_opens(server, play=True)
    for name in NAMES[1:]:
        host.post(f"/host/{table_id}", data={"do": "add", "name": name, "nonce": f"add-{name}"})
    host.post(f"/host/{table_id}", data={"do": "start", "nonce": "go"})
    phone_size(browser)
    checked.page("host page, pass and play", host, f"/host/{table_id}")
    checked.page("pass-and-play seat", host, f"/host/{table_id}/seat/1")
    host.post(f"/host/{table_id}/seat/1/pin", data={"pin": "1234"})
    checked.page("pass the device on", host, f"/host/{table_id}/pass/1")
    for cookie in [c for c in host.cookies.jar if c.name.startswith("open-")]:  # passed on: its PIN is asked for
        host.cookies.delete(cookie.name)
    checked.page("a seat's PIN", host, f"/host/{table_id}/seat/1")
    assert browser.find_elements("css selector", "form.pin")  # (the page looked at is the PIN's)
    checked.page("not this device's seat", server.client(), f"/play/{table_id}")
    checked.assert_none({"front page", "host page, pass and play", "pass-and-play seat", "pass the device on",
                         "a seat's PIN", "not this device's seat"})


# --- a game played by the accessibility tree -------------------------------------------------------------------


def settle(done: Any, seconds: float = 10) -> None:
    """Waits until ``done()`` is true."""
    deadline = time.monotonic() + seconds
    while not done():
        assert time.monotonic() < deadline, "the page did not change"
        time.sleep(0.05)


class ScreenReader:
    """What a screen reader has of a page: Chromium's accessibility tree, read and pressed through the DevTools
    protocol; a control found by its role and accessible name, never by a CSS selector."""

    def __init__(self, driver: Any) -> None:
        self.driver = driver

    def _root(self) -> int:
        return int(self.driver.execute_cdp_cmd("DOM.getDocument", {"depth": 0})["root"]["backendNodeId"])

    def find(self, role: str, name: str | None = None, within: int | None = None) -> list[dict[str, Any]]:
        """The nodes of ``role`` (and accessible ``name``) in the tree (under ``within``), in reading order."""
        params: dict[str, Any] = {"backendNodeId": within if within is not None else self._root(), "role": role}
        if name is not None:
            params["accessibleName"] = name
        nodes = self.driver.execute_cdp_cmd("Accessibility.queryAXTree", params)["nodes"]
        return [n for n in nodes if not n.get("ignored")]

    @staticmethod
    def name(node: dict[str, Any]) -> str:
        return str(node.get("name", {}).get("value", ""))

    def text(self, node: dict[str, Any]) -> str:
        """The words a reader hears inside ``node``."""
        return " ".join(self.name(n) for n in self.find("StaticText", within=node["backendDOMNodeId"])).strip()

    def heard(self) -> str:
        """What the polite live region says now (the announcement of a decision owed)."""
        regions = [n for n in self.find("status") if self._polite(n)]
        return " ".join(self.text(n) for n in regions).strip()

    @staticmethod
    def _polite(node: dict[str, Any]) -> bool:
        return any(p["name"] == "live" and p["value"]["value"] == "polite" for p in node.get("properties", []))

    @staticmethod
    def expanded(node: dict[str, Any]) -> str:
        """"true" or "false": whether a disclosure (a cover) is open."""
        return next((str(p["value"]["value"]).lower() for p in node.get("properties", []) if p["name"] == "expanded"),
                    "")

    def press(self, node: dict[str, Any]) -> None:
        """The reader's activation: the focus on the control, then Enter."""
        self.driver.execute_cdp_cmd("DOM.focus", {"backendNodeId": node["backendDOMNodeId"]})
        for kind in ("keyDown", "keyUp"):
            self.driver.execute_cdp_cmd("Input.dispatchKeyEvent", {
                "type": kind, "key": "Enter", "code": "Enter", "windowsVirtualKeyCode": 13,
                **({"text": "\r"} if kind == "keyDown" else {})})


def test_a_blind_player_plays_a_whole_game_by_the_accessibility_tree(server: Server, browser: Any) -> None:
    host, table_id, code = host_opens(server, play=False)
    phones = {}
    for name in NAMES:
        phones[name] = server.client()
        phones[name].post(f"/join/{code}", data={"name": name})
    host.post(f"/host/{table_id}", data={"do": "start", "nonce": "go"})
    in_browser(browser, server, table_id, phones["Ann"])  # Ann's own phone; the others play without a browser
    reader = ScreenReader(browser)
    service = server.app.state.service
    # The page as a screen reader finds it: one main landmark, one main heading (her name).
    assert len(reader.find("main")) == 1
    assert [reader.name(h) for h in reader.find("heading", "Ann")] == ["Ann"]
    turn = EN.text("web-your-turn")
    rng = random.Random(7)
    answered: list[str] = []
    opened = False
    for _ in range(400):
        t = service.table(table_id)
        if t.state.phase is Phase.GAME_OVER:
            break
        owes = 0 in awaiting(t.state)
        others = [n for n in NAMES[1:] if buttons(phones[n], table_id)
                  and 'data-waiting' not in phones[n].get(f"/play/{table_id}/live").text]
        if not owes and others:
            name = rng.choice(others)
            options = buttons(phones[name], table_id)
            labels = [label for label, _ in options]
            pick = labels.index(EN.term("ja")) if EN.term("ja") in labels else rng.randrange(len(options))
            phones[name].post(f"/play/{table_id}", data=options[pick][1])
            continue
        # Ann owes a decision: she hears it, then finds her answers by what they are called.
        deadline = time.monotonic() + 10
        while not reader.heard().startswith(turn):
            assert time.monotonic() < deadline, "a decision owed was not announced"
            time.sleep(0.1)
        heard = reader.heard()
        prompt = reader.find("region", turn)
        assert len(prompt) == 1
        covers = reader.find("DisclosureTriangle", within=prompt[0]["backendDOMNodeId"])
        if covers:  # a secret behind its cover: the announcement names the cover; the reader opens it
            assert heard == f"{turn}: {reader.name(covers[0]).split(EN.text('web-reveal'))[0].strip()}"
            root = prompt[0]["backendDOMNodeId"]
            if not opened:  # (once: it closes by the same key and opens again)
                for expanded in ("true", "false"):
                    reader.press(reader.find("DisclosureTriangle", within=root)[0])
                    settle(lambda e=expanded, r=root: reader.expanded(
                        reader.find("DisclosureTriangle", within=r)[0]) == e)
                opened = True
            reader.press(reader.find("DisclosureTriangle", within=root)[0])
            settle(lambda r=root: bool(reader.find("button", within=r)))
        else:  # the question itself, as the region reads it
            assert " ".join(heard[len(turn) + 2:].split()) in " ".join(reader.text(prompt[0]).split())
        choices = [n for n in reader.find("button", within=prompt[0]["backendDOMNodeId"]) if reader.name(n)]
        assert choices, f"no answer to {heard!r} in the tree"
        names = [reader.name(n) for n in choices]
        pick = names.index(EN.term("ja")) if EN.term("ja") in names else rng.randrange(len(choices))
        before = service.table(table_id).state.step
        reader.press(choices[pick])
        answered.append(f"{heard} -> {names[pick]}")
        deadline = time.monotonic() + 10
        while service.table(table_id).state.step == before:
            assert time.monotonic() < deadline, f"pressing {names[pick]!r} did nothing"
            time.sleep(0.1)
    else:
        raise AssertionError(f"the game did not end in 400 decisions: {answered[-5:]}")
    # (The service's table is over in memory a moment before its transaction is committed: the row follows.)
    settle(lambda: server.status(table_id) == "over")
    assert len(answered) >= 3, answered
    # Every decision was heard first, and none of her answers needed a selector, a colour or a look.
    assert all(line.startswith(turn) for line in answered)
