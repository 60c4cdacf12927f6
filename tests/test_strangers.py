"""Safe on the open internet, through the real wiring: ``create_app``'s guards under a TestClient, and ``moderator
serve`` itself (``tests.serve_driver``) in a process of its own with hostile clients on loopback.

Strangers may not post from another origin with a player's cookie, guess join or move codes faster than a person
types (on every way in, while ten phones behind one address join), open tables past the operator's limit, read
more of ``/healthz`` than ok or not, find a key in the log, fill the server with a chunked body, slow clients or
event streams, or flood the log. Every loop is bounded; every socket is on loopback.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import sqlite3
import statistics
import time
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from moderator.app import create_app
from moderator.commands import Join, MovePhone
from moderator.limits import JOIN_GUESSES_AT_ONCE, TABLE_EVERY, TABLES_AT_ONCE
from moderator.lobby import CODE_ALPHABET
from moderator.settings import Settings
from tests.fake_telegram import TOKEN, user
from tests.fake_twilio import AUTH_TOKEN, FakeTwilio
from tests.fakes import FakeClock, Harness
from tests.serve_app import LOCAL, SECRET, Server, WebhookBotAPI, env
from tests.serve_driver import http, moderator_serve, post, slow_clients, sms_text, telegram_update, timed
from tests.test_host_controls import move_code
from tests.test_service import NAMES, human_table
from tests.web_table import SAME_ORIGIN

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # Starlette 1.x asks for httpx2; httpx works the same here
    from starlette.testclient import TestClient

ROOT = Path(__file__).resolve().parent.parent
STRANGER = ("198.51.100.23", 40000)
VENUE = ("203.0.113.50", 40000)
"""Every phone at the venue, behind its NAT."""


def wrong_codes(real: str, count: int) -> list[str]:
    """``count`` join codes of the right shape that are not ``real``."""
    codes = [f"XXXX{c}" for c in CODE_ALPHABET] + [f"YYYY{c}" for c in CODE_ALPHABET]
    return [c for c in codes if c != real][:count]


# --- the pages under create_app -------------------------------------------------------------------------------


@dataclass
class Site:
    """``serve``'s app with the browser channel on, its clock in the test's hands; devices at chosen addresses."""

    client: TestClient
    clock: FakeClock
    db: Path

    def device(self, address: tuple[str, int] = STRANGER, **headers: str) -> TestClient:
        """Another browser (its own cookies) on the same app and event loop, at ``address``."""
        other = TestClient(self.client.app, headers={**SAME_ORIGIN, **headers}, client=address)
        other.portal = self.client.portal
        return other

    def open(self, device: TestClient, name: str = "Host", **form: str) -> str:
        """``device`` opens a table (as host, not playing); its id."""
        response = device.post("/new", data={"name": name, **form}, follow_redirects=False)
        assert response.status_code == 303, (response.status_code, response.text)
        return str(response.headers["location"].rsplit("/", 1)[1])

    def code(self, device: TestClient, table_id: str) -> str:
        found = re.search(r'class="code">(\w+)<', device.get(f"/host/{table_id}").text)
        assert found is not None
        return found.group(1)

    def join(self, phone: TestClient, code: str, name: str) -> int:
        """The join page's "play in this browser": the POST's status (303: seated)."""
        page = phone.get(f"/join/{code}")
        if page.status_code != 200:
            return int(page.status_code)
        nonce = re.search(r'name="nonce" value="(\w+)"', page.text)
        assert nonce is not None
        return int(phone.post(f"/join/{code}", data={"name": name, "nonce": nonce.group(1)},
                              follow_redirects=False).status_code)

    def tables(self) -> int:
        with sqlite3.connect(self.db) as db:
            return int(db.execute("SELECT count(*) FROM game_tables").fetchone()[0])

    def seats(self, table_id: str) -> list[str]:
        with sqlite3.connect(self.db) as db:
            return [r[0] for r in db.execute("SELECT name FROM seats WHERE table_id = ? ORDER BY position",
                                             (table_id,))]


@contextlib.contextmanager
def site(tmp_path: Path, **extra: str) -> Iterator[Site]:
    db = tmp_path / "site.db"
    clock = FakeClock()
    settings = Settings.load({"MODERATOR_DB": str(db), "MODERATOR_WEB": "on", **extra}, cwd=tmp_path)
    with TestClient(create_app(settings, deliver=False, clock=clock), headers=SAME_ORIGIN,
                    client=("192.0.2.1", 40000)) as client:
        yield Site(client, clock, db)


def test_a_post_from_another_origin_with_the_hosts_cookie_is_refused_and_changes_nothing(tmp_path: Path) -> None:
    with site(tmp_path) as s:
        host = s.client
        table_id = s.open(host)
        phone = s.device(VENUE)
        assert s.join(phone, s.code(host, table_id), "Ann") == 303
        before = s.seats(table_id)
        for origin in ({"Origin": "http://evil.example"}, {"Origin": "null"}, {"Origin": "http://testserver:8080"},
                       {"Origin": "", "Referer": "http://evil.example/page"}):
            # The cookies ride along (SameSite=Strict would hold them back only on another *site*).
            assert host.post(f"/host/{table_id}", data={"do": "computers"}, headers=origin).status_code == 403
            assert phone.post(f"/play/{table_id}", data={"token": "x", "decision": "1"},
                              headers=origin).status_code == 403
        bare = TestClient(s.client.app, client=VENUE, cookies=dict(host.cookies))
        bare.portal = s.client.portal
        assert bare.post(f"/host/{table_id}", data={"do": "computers"}).status_code == 403  # no Origin at all
        assert s.seats(table_id) == before
        # The page's own form (same origin) does it.
        assert host.post(f"/host/{table_id}", data={"do": "computers"}, follow_redirects=False).status_code == 303
        assert len(s.seats(table_id)) > len(before)


def test_pages_forbid_framing_and_sniffing_and_keep_their_address_to_this_site(tmp_path: Path) -> None:
    """Every page forbids framing, but the seat's page in Telegram (``/app/<table>``), which Telegram's web client
    alone may frame."""
    with site(tmp_path) as s:
        table_id = s.open(s.client)
        for path in ("/", f"/join/{s.code(s.client, table_id)}", f"/table/{table_id}", f"/host/{table_id}",
                     f"/play/{table_id}"):
            headers = s.client.get(path).headers
            assert headers["content-security-policy"] == "frame-ancestors 'none'", path
            assert headers["x-frame-options"] == "DENY" and headers["x-content-type-options"] == "nosniff", path
            assert headers["referrer-policy"] == "same-origin", path  # no-referrer would make forms send Origin: null
        app = s.client.get(f"/app/{table_id}").headers
        assert app["content-security-policy"] == "frame-ancestors https://web.telegram.org"
        assert "x-frame-options" not in app and app["x-content-type-options"] == "nosniff"
        assert s.client.get("/healthz").headers["x-content-type-options"] == "nosniff"


def test_guessing_join_codes_is_slowed_to_try_again_for_real_codes_too_while_ten_phones_at_one_address_join(
    tmp_path: Path,
) -> None:
    with site(tmp_path) as s:
        table_id = s.open(s.client)
        code = s.code(s.client, table_id)
        # Ten phones behind the venue's one address, all at once as the host reads the code out: every one
        # mistypes it first, nine of them twice, and no time passes; the last of them still joins at once.
        phones = [s.device(VENUE) for _ in range(10)]
        mistypes = iter(wrong_codes(code, 19))
        for n, phone in enumerate(phones):
            for _ in range(2 if n < 9 else 1):
                assert phone.get(f"/join/{next(mistypes)}").status_code == 404
        for n, phone in enumerate(phones):
            assert s.join(phone, code, f"P{n}") == 303, n
        assert len(s.seats(table_id)) == 10
        # A stranger guessing: twenty unknown codes, then every answer is the same "try again", the real code's too.
        second_host = s.device(("192.0.2.99", 1))
        other = s.open(second_host)
        real = s.code(second_host, other)
        stranger = s.device(STRANGER, **{"Accept-Language": "de"})
        answers = [stranger.get(f"/join/{guess}").status_code for guess in wrong_codes(real, JOIN_GUESSES_AT_ONCE)]
        assert answers == [404] * JOIN_GUESSES_AT_ONCE
        for response in (stranger.get(f"/join/{real}"), stranger.post(f"/join/{real}", data={"name": "Mallory"}),
                         stranger.get("/join/ZZZZZ")):
            assert response.status_code == 429
            assert 1 <= int(response.headers["retry-after"]) <= 6
            assert "Versuch es in" in response.text  # the catalog's words, in the browser's language
        assert s.seats(other) == []
        s.clock.advance(7)  # a person's pace: one more try every six seconds
        assert s.join(stranger, real, "Mallory") == 303


def test_opening_tables_is_one_a_minute_per_client_counted_behind_the_trusted_proxy(tmp_path: Path) -> None:
    with site(tmp_path) as s:
        first = s.device(STRANGER)
        s.open(first)
        again = first.post("/new", data={"name": "Host"}, follow_redirects=False)
        assert again.status_code == 429 and 55 <= int(again.headers["retry-after"]) <= 60
        assert "One new table a minute" in again.text
        s.open(s.device(VENUE))  # another address is not slowed
        # Behind the proxy on this machine, each client is its own; a stranger's X-Forwarded-For is not believed.
        proxy = ("127.0.0.1", 5000)
        s.open(s.device(proxy, **{"X-Forwarded-For": "198.51.100.1"}))
        s.open(s.device(proxy, **{"X-Forwarded-For": "198.51.100.2"}))
        spoofing = [s.device(STRANGER, **{"X-Forwarded-For": f"10.9.9.{i}"}).post(
            "/new", data={"name": "Host"}, follow_redirects=False).status_code for i in range(3)]
        assert spoofing == [429, 429, 429]
        assert s.tables() == 4
        s.clock.advance(61)
        s.open(first)
        assert s.tables() == 5


def test_with_the_operator_password_only_those_who_give_it_open_tables(tmp_path: Path) -> None:
    with site(tmp_path, MODERATOR_OPEN_PASSWORD="friends-only") as s:
        stranger = s.device(STRANGER)
        assert 'type="password" name="password"' in stranger.get("/").text
        for given in ({}, {"password": "guess"}, {"password": "FRIENDS-ONLY"}):
            refused = stranger.post("/new", data={"name": "Mallory", **given}, follow_redirects=False)
            assert refused.status_code == 403 and "not the password" in refused.text
        assert s.tables() == 0
        friend = s.device(VENUE)
        s.open(friend, password="friends-only")
        s.open(friend, password="friends-only")  # the operator's friends are not slowed
        assert s.tables() == 2


def test_a_malformed_post_new_opens_no_table(tmp_path: Path) -> None:
    with site(tmp_path) as s:
        form = "application/x-www-form-urlencoded"
        for body, kind in ((b"", None), (b"name=", form), (b"name=%20%20&play=1", form), (b"\xff\xfe{{", form),
                           (b'{"name": "A"}', "application/json")):
            headers = {"content-type": kind} if kind else {}
            response = s.client.post("/new", content=body, headers=headers, follow_redirects=False)
            assert response.status_code == 400, body
        assert s.tables() == 0


def test_cookies_are_secure_behind_a_trusted_https_proxy_and_only_there(tmp_path: Path) -> None:
    with site(tmp_path, MODERATOR_PUBLIC_URL="https://moderator.example.org") as s:
        proxied = {"X-Forwarded-Proto": "https", "X-Forwarded-For": "198.51.100.1", "Host": "moderator.example.org",
                   "Origin": "https://moderator.example.org"}
        response = s.device(("127.0.0.1", 5000), **proxied).post("/new", data={"name": "Host"},
                                                                 follow_redirects=False)
        assert response.status_code == 303 and "secure" in response.headers["set-cookie"].lower()
        # The same headers from anyone else are not believed: plain http, no Secure (and its Origin is not ours).
        spoofed = s.device(STRANGER, **{**proxied, "Origin": "http://moderator.example.org"}).post(
            "/new", data={"name": "Host"}, follow_redirects=False)
        assert spoofed.status_code == 303 and "secure" not in spoofed.headers["set-cookie"].lower()


def dockerfile_env(name: str) -> str:
    """The value ``deploy/Dockerfile`` gives ``name`` in its ``ENV``."""
    found = re.search(rf"\b{name}=(\S+)", (ROOT / "deploy" / "Dockerfile").read_text())
    assert found is not None, name
    return found.group(1)


def test_in_the_docker_image_the_proxy_on_dockers_bridge_is_trusted_for_secure_cookies_and_client_addresses(
    tmp_path: Path,
) -> None:
    """The image's default (``MODERATOR_TRUSTED_PROXIES`` in the Dockerfile, CIDRs: uvicorn 0.31 or later reads
    those) believes the host's proxy, which reaches the container from the bridge gateway."""
    trusted = dockerfile_env("MODERATOR_TRUSTED_PROXIES")
    with site(tmp_path, MODERATOR_TRUSTED_PROXIES=trusted, MODERATOR_PUBLIC_URL="https://moderator.example.org") as s:
        proxy = {"X-Forwarded-Proto": "https", "Host": "moderator.example.org",
                 "Origin": "https://moderator.example.org"}
        for gateway, client in (("172.17.0.1", "198.51.100.1"), ("172.18.0.1", "198.51.100.2")):
            response = s.device((gateway, 5000), **proxy, **{"X-Forwarded-For": client}).post(
                "/new", data={"name": "Host"}, follow_redirects=False)
            assert response.status_code == 303 and "secure" in response.headers["set-cookie"].lower(), gateway
        # Two clients behind the same gateway each open their table: counted apart, not as the proxy.
        again = s.device(("172.17.0.1", 5000), **proxy, **{"X-Forwarded-For": "198.51.100.3"}).post(
            "/new", data={"name": "Host"}, follow_redirects=False)
        assert again.status_code == 303
        assert s.device(("172.17.0.1", 5000), **proxy, **{"X-Forwarded-For": "198.51.100.3"}).post(
            "/new", data={"name": "Host"}, follow_redirects=False).status_code == 429
        assert s.tables() == 3
        # The host's own curl reaches the container through the bridge too: outside, so ok and nothing more.
        assert s.device(("172.17.0.1", 5000)).get("/healthz").json() == {"ok": True}


def test_the_systemd_unit_and_compose_give_the_server_the_files_its_connection_limits_need() -> None:
    """Every connection is an open file: the files the unit and compose allow hold the default limits whole
    (``fit_to_files`` leaves them as they are), and each file says why it raises systemd's 1,024."""
    from moderator.httpserver import Limits, fit_to_files

    unit = (ROOT / "deploy" / "moderator.service").read_text()
    compose = (ROOT / "deploy" / "compose.yaml").read_text()
    found = re.search(r"^LimitNOFILE=(\d+)$", unit, re.M)
    assert found is not None
    soft = re.search(r"nofile:\s*\n\s*soft: (\d+)\s*\n\s*hard: (\d+)", compose)
    assert soft is not None
    for files in (int(found.group(1)), int(soft.group(1)), int(soft.group(2))):
        assert fit_to_files(Limits(), files) == Limits(), files
    assert "open file" in unit and "1,024" in unit and "open file" in compose


def test_healthz_tells_strangers_only_ok_and_this_machine_everything(tmp_path: Path) -> None:
    with site(tmp_path) as s:
        assert s.device(STRANGER).get("/healthz").json() == {"ok": True}
        assert s.device(("127.0.0.1", 5000), **{"X-Forwarded-For": "198.51.100.1"}).get("/healthz").json() == {
            "ok": True}  # through the proxy on this machine: a stranger too
        mine = s.device(LOCAL).get("/healthz").json()
        assert mine["ok"] is True and mine["channels"] == {"web": "up"}
        assert "version" in mine and "outbox_backlog" in mine


# --- the service's rule on every way in --------------------------------------------------------------------------


@contextlib.contextmanager
def _telegram_and_sms(tmp_path: Path) -> Iterator[tuple[Server, FakeClock]]:
    """``moderator serve``'s app with Telegram and SMS on (no sender), and the clock its limits run by."""
    db = tmp_path / "m.db"
    api, twilio, clock = WebhookBotAPI(clock=lambda: 1_800_000_000.0), FakeTwilio(), FakeClock()
    app = create_app(Settings.load(env(db), cwd=tmp_path), network={"telegram": api, "sms": twilio}, deliver=False,
                     clock=clock)
    with TestClient(app, client=LOCAL) as client:
        yield Server(client, api, twilio, db), clock


def test_guessing_by_telegram_start_and_sms_join_is_slowed_per_account_and_a_real_table_still_fills(
    tmp_path: Path,
) -> None:
    with _telegram_and_sms(tmp_path) as (s, clock):
        host, mallory = user(501, "Ann"), user(666, "Mallory")
        assert s.update(s.say(host, "/newgame")) == 200
        [(code,)] = s.rows("SELECT code FROM game_tables")

        def said(channel: str, address: str) -> list[str]:
            return [r[0] for r in s.rows("SELECT message_id FROM outbox WHERE channel = ? AND address = ? "
                                         "ORDER BY id", (channel, address))]

        for n, guess in enumerate(wrong_codes(code, JOIN_GUESSES_AT_ONCE)):
            assert s.update(s.say(mallory, f"/start {guess}")) == 200
            assert s.text("+12025550666", f"JOIN {guess} Mal", f"SMguess{n}") == 200
        assert s.update(s.say(mallory, f"/start {code}")) == 200
        assert s.text("+12025550666", f"JOIN {code} Mal", "SMreal") == 200
        for channel, address in (("telegram", "666"), ("sms", "+12025550666")):
            assert said(channel, address) == ["no-such-table"] * JOIN_GUESSES_AT_ONCE + ["try-again"], channel
        # Everyone else joins as ever, on either channel.
        for n in range(4):
            assert s.update(s.say(user(510 + n, f"T{n}"), f"/start {code}")) == 200
            assert s.text(f"+1202555070{n}", f"JOIN {code} S{n}", f"SMok{n}") == 200
        assert len(s.rows("SELECT name FROM seats")) == 9
        clock.advance(7)
        assert s.update(s.say(mallory, f"/start {code}")) == 200
        assert "Mallory" in [r[0] for r in s.rows("SELECT name FROM seats")]


def test_a_loop_of_newgame_by_telegram_and_sms_opens_five_tables_then_one_every_five_minutes_per_sender(
    tmp_path: Path,
) -> None:
    with _telegram_and_sms(tmp_path) as (s, clock):
        mallory, phone = user(666, "Mallory"), "+12025550666"

        def said(channel: str, address: str) -> list[str]:
            return [r[0] for r in s.rows("SELECT message_id FROM outbox WHERE channel = ? AND address = ? "
                                         "AND message_id IN ('table-opened', 'open-try-again') ORDER BY id",
                                         (channel, address))]

        def tables(channel: str, address: str) -> int:
            return len(s.rows("SELECT id FROM game_tables WHERE host_channel = ? AND host_address = ?",
                              (channel, address)))

        for n in range(8):  # open, leave (the lobby closes), open again: a script, faster than any host
            assert s.update(s.say(mallory, "/newgame")) == 200 and s.update(s.say(mallory, "/leave")) == 200
            assert s.text(phone, "NEWGAME Mal", f"SMopen{n}") == 200 and s.text(phone, "LEAVE", f"SMleave{n}") == 200
        for channel, address in (("telegram", "666"), ("sms", phone)):
            assert said(channel, address) == ["table-opened"] * TABLES_AT_ONCE + ["open-try-again"] * 3, channel
            assert tables(channel, address) == TABLES_AT_ONCE
        assert "Try again in 5 minutes." in [r[0] for r in s.rows(
            "SELECT body FROM outbox WHERE address = '666' AND message_id = 'open-try-again'")][-1]
        assert s.update(s.say(user(501, "Ann"), "/newgame")) == 200  # anyone else opens as ever
        assert tables("telegram", "501") == 1
        clock.advance(TABLE_EVERY)
        assert s.update(s.say(mallory, "/newgame")) == 200
        assert tables("telegram", "666") == TABLES_AT_ONCE + 1


def test_guessed_seat_move_codes_are_slowed_too_and_the_real_move_still_works() -> None:
    h, table_id, addresses = human_table(5, seed=21)
    h.send("p0", MovePhone(NAMES[2]))
    code = move_code(h)
    h.step = 0.0  # a script, not a person
    thief = "thief"
    guesses = [c for c in (code[:-2] + x + y for x in CODE_ALPHABET[:2] for y in CODE_ALPHABET)
               if c != code][:JOIN_GUESSES_AT_ONCE + 2]
    answers = []
    for guess in guesses:
        h.send(thief, Join(guess, "Thief"))
        answers.append(h.channel.ids(thief)[-1])
    assert answers == ["no-such-table"] * JOIN_GUESSES_AT_ONCE + ["try-again"] * 2
    h.send(thief, Join(code, "Thief"))  # the real move code: the same answer as a guess
    assert h.channel.ids(thief)[-1] == "try-again"
    assert h.table(table_id).seats[2].address == addresses[2]
    h.send("cy-new-phone", Join(code, ""))  # Cy's new phone has its own tries
    assert h.table(table_id).seats[2].address == "cy-new-phone"


def test_the_try_again_answer_says_how_long_in_the_players_language() -> None:
    h = Harness(step=0.0)
    for guess in wrong_codes("", JOIN_GUESSES_AT_ONCE + 1):
        h.send("p1", Join(guess, "Quentin"), language="de")
    reply = h.channel.inbox("p1")[-1]
    assert reply["message_id"] == "try-again"
    assert re.search(r"in [1-6] Sekunden", reply["text"]), reply["text"]


# --- ``moderator serve`` itself, in a process of its own --------------------------------------------------------


def open_table(port: int) -> str:
    """A table opened from a page (``POST /new`` from this site); its id."""
    status, headers, _ = http(port, post(port, "/new", b"name=Host", {
        "Content-Type": "application/x-www-form-urlencoded", "Origin": f"http://127.0.0.1:{port}"}))
    assert status == 303, status
    return headers["location"].rsplit("/", 1)[1]


def test_moderator_serve_under_a_flood_of_slow_clients_answers_its_webhooks_at_once_in_bounded_files(
    tmp_path: Path,
) -> None:
    with moderator_serve(tmp_path, files=1024) as served:  # systemd's default, had the unit not raised it
        before = served.files()
        flood: list[socket.socket] = []
        try:
            flood = slow_clients(served.port, 900)
            time.sleep(0.5)  # the server takes in the last of them
            flooded = served.files()
            webhooks = [timed(served.port, telegram_update(served.port, n)) for n in range(1, 11)]
            webhooks += [timed(served.port, sms_text(served.port, f"SMflood{n}")) for n in range(10)]
            health = timed(served.port, b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        finally:
            for sock in flood:
                sock.close()
        log = served.lines()
    assert [status for status, _ in webhooks] == [200] * 20 and health[0] == 200
    slowest = max(seconds for _, seconds in webhooks)
    assert slowest < 1.0, webhooks
    assert flooded < 1024 - 100 and flooded <= before + 640 + 10, (before, flooded)  # 640: what fits in 1,024 files
    assert any("at most 640 connections" in line for line in log)
    # Refused connections are a few lines and a count, never a traceback per connection.
    assert not [line for line in log if "Too many open files" in line or "Traceback" in line]
    assert sum("closed a waiting connection" in line for line in log) <= 5
    print(f"\n900 slow clients: files {before} -> {flooded}; webhooks p50 "
          f"{statistics.median(s for _, s in webhooks) * 1000:.1f} ms, max {slowest * 1000:.1f} ms; "
          f"/healthz {health[1] * 1000:.1f} ms")


def test_a_chunked_50_mb_body_to_the_sms_webhook_is_refused_before_the_form_is_parsed(tmp_path: Path) -> None:
    from tests.test_guard import stream_chunked

    with moderator_serve(tmp_path) as served:
        before = served.rss_kb()
        answer = stream_chunked(served.port, "/sms", 50 * 1024 * 1024)
        grown = served.rss_kb() - before
        multipart = stream_chunked(served.port, "/sms/status", 4 * 1024 * 1024, b"multipart/form-data; boundary=x")
        log = served.lines()
    assert answer.startswith(b"HTTP/1.1 413") or answer == b""  # (a reset may swallow the answer)
    assert multipart.startswith(b"HTTP/1.1 415")
    assert grown < 8 * 1024, grown
    assert not [line for line in log if "Twilio signature" in line or "Exception" in line]  # never parsed


def test_a_body_that_grows_past_the_limit_with_a_broken_chunk_is_answered_once_and_leaves_no_traceback(
        tmp_path: Path) -> None:
    """The last chunk takes the body past the webhook's limit and a broken chunk follows it in the same packet:
    the server has answered 400 before the app reads the chunk, so the guard's 413 would be a second answer."""
    under = b"a" * (60 * 1024)
    over = b"a" * (6 * 1024)  # 66 KB in all: past /sms's 64 KB
    head = (b"POST /sms HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n")
    with moderator_serve(tmp_path) as served:
        answers = []
        for _ in range(3):
            with socket.create_connection(("127.0.0.1", served.port), timeout=5) as sock:
                sock.sendall(head + b"%x\r\n" % len(under) + under + b"\r\n")
                time.sleep(0.05)  # the route has read the first chunk and waits for more
                sock.sendall(b"%x\r\n" % len(over) + over + b"\r\nzz\r\n")
                answer = b""
                with contextlib.suppress(OSError):
                    while chunk := sock.recv(65536):
                        answer += chunk
            answers.append(answer)
        assert http(served.port, b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")[0] == 200
        time.sleep(0.3)
        log = served.lines()
    assert all(a.startswith(b"HTTP/1.1 400 ") and a.count(b"HTTP/1.1") == 1 for a in answers), answers
    assert not [line for line in log if "Traceback" in line or "Exception" in line or "MUST_CLOSE" in line], log


def test_the_logs_hold_no_key_and_only_what_the_operator_needs(tmp_path: Path) -> None:
    with moderator_serve(tmp_path) as served:
        table_id = open_table(served.port)
        key = "k3y-Of-The-Host_0123456789"
        assert http(served.port, f"GET /host/{table_id}?key={key}&lang=de HTTP/1.1\r\nHost: x\r\n"
                                 f"Connection: close\r\n\r\n".encode())[0] == 403
        assert http(served.port, b"GARBAGE\r\n\r\n")[0] == 400
        move = "QWERTYX"  # the shape of a seat's move code: whoever sends it first takes the seat
        moving = f"GET /move/{move} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode()
        assert http(served.port, moving)[0] == 200
        for n in range(1, 4):
            assert http(served.port, telegram_update(served.port, n))[0] == 200
        time.sleep(0.5)  # the access log is written after the answer
        log = served.lines()
    text = "\n".join(log)
    assert key not in text and TOKEN not in text and SECRET not in text and AUTH_TOKEN not in text
    assert move not in text and "GET /move/[redacted]" in text
    assert f"GET /host/{table_id}?key=[redacted]&lang=de" in text  # the access log, redacted
    assert "listening on 127.0.0.1 port" in text and "Uvicorn running" not in text  # uvicorn's INFO: quiet
    assert not [line for line in log if " INFO telegram" in line or " INFO httpx" in line or " INFO twilio" in line]


def test_event_streams_are_capped_per_table_with_503_and_give_their_slot_back(tmp_path: Path) -> None:
    def open_stream(port: int, table_id: str) -> tuple[socket.socket, int, dict[str, str]]:
        sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        sock.sendall(f"GET /table/{table_id}/events HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = sock.recv(4096)
            assert chunk, "closed before its headers"
            head += chunk
        lines = head.split(b"\r\n\r\n")[0].decode("latin-1").split("\r\n")
        headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
        return sock, int(lines[0].split()[1]), headers

    with moderator_serve(tmp_path) as served:
        table_id = open_table(served.port)
        streams = []
        try:
            for _ in range(40):  # ten phones, a screen and a host are a dozen
                sock, status, _ = open_stream(served.port, table_id)
                streams.append(sock)
                assert status == 200
            sock, status, headers = open_stream(served.port, table_id)
            sock.close()
            assert status == 503 and headers["retry-after"] == "15"
            streams.pop().close()
            deadline = time.monotonic() + 5
            while (found := open_stream(served.port, table_id))[1] != 200:  # the slot came back
                found[0].close()
                assert time.monotonic() < deadline
                time.sleep(0.05)
            streams.append(found[0])
            stopping = time.monotonic()
            os.kill(served.pid, signal.SIGTERM)  # as systemd stops it: open streams end at once
            while os.path.exists(f"/proc/{served.pid}") and Path(f"/proc/{served.pid}/status").read_text().find(
                    "State:\tZ") < 0:
                assert time.monotonic() - stopping < 10, "the server waited on its event streams"
                time.sleep(0.05)
        finally:
            for sock in streams:
                sock.close()
