"""Start-up, network and storage faults as a host meets them (issue 31): ``moderator telegram`` and ``moderator serve``
as real processes against stand-ins for Telegram and Twilio on this machine (one that refuses the token or the
account's key, one nobody listens on, one that comes up late), and a database the process cannot write.

Each fault is one clear line (none per try), the other channels stay up (the SMS webhook and a browser page answer
throughout), ``/healthz`` names each channel's state to this machine and only ok or not to anyone else, and no byte
the process wrote holds the token or the key (``written_without_secrets``).
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
import resource
import sqlite3
import time
import warnings
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from moderator.app import CHANNELS, create_app
from moderator.channels import (
    Capabilities,
    Delivered,
    Outbound,
    Refused,
    Result,
    Running,
    Runtime,
    Unreachable,
)
from moderator.commands import Decide, Inbound
from moderator.grammar import grammar
from moderator.settings import Settings
from tests.fake_telegram import user
from tests.fake_twilio import incoming, signature
from tests.serve_driver import http, post
from tests.stand_in import Moderator, StandIn, free_port, moderator

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # Starlette 1.x asks for httpx2; httpx works the same here
    from starlette.testclient import TestClient

TOKEN = "123456789:AAF-SECRETtelegramToken_0123456789abcdef"
"""A bot token shaped as BotFather's, easy to find in any output."""
ACCOUNT = "AC" + "7" * 32
KEY = "SECRETtwilioKey0123456789abcdef01"
"""The Twilio account's auth token."""
HOOK_SECRET = "SECRETwebhook_0123456789"
SECRETS = (TOKEN, TOKEN.split(":")[1], KEY, HOOK_SECRET)
PUBLIC_URL = "https://moderator.example.org"
NUMBER = "+15017122661"
REFUSED_TOKEN = "Telegram refused TELEGRAM_TOKEN: check it with @BotFather"
REFUSED_KEY = "Twilio refused TWILIO_ACCOUNT_SID or TWILIO_AUTH_TOKEN: check them in the Twilio Console"
OUT_OF_REACH = "Telegram cannot be reached"
BACK = "Telegram can be reached again"


@pytest.fixture
def providers() -> Iterator[StandIn]:
    """Telegram and Twilio on this machine, taking the right token and key."""
    stand_in = StandIn(token=TOKEN, account=ACCOUNT, key=KEY).start()
    try:
        yield stand_in
    finally:
        stand_in.stop()


def env(tmp_path: Path, telegram: str, twilio: str | None = None, *, port: int | None = None,
        **extra: str) -> dict[str, str]:
    """The settings of a host who configured the token (and the Twilio number), with the providers' URLs
    (``TELEGRAM_API_URL``, ``TWILIO_API_URL``) pointing at the stand-ins; ``port``: a web server's settings too."""
    settings = {"MODERATOR_DB": str(tmp_path / "m.db"), "TELEGRAM_TOKEN": TOKEN, "TELEGRAM_API_URL": telegram}
    if twilio is not None:
        settings |= {"TWILIO_ACCOUNT_SID": ACCOUNT, "TWILIO_AUTH_TOKEN": KEY, "TWILIO_FROM": NUMBER,
                     "TWILIO_API_URL": twilio}
    if port is not None:
        settings |= {"MODERATOR_HOST": "127.0.0.1", "MODERATOR_PORT": str(port), "MODERATOR_PUBLIC_URL": PUBLIC_URL,
                     "MODERATOR_WEB": "on", "TELEGRAM_WEBHOOK_SECRET": HOOK_SECRET}
    return settings | extra


def written_without_secrets(process: Moderator, tmp_path: Path) -> list[str]:
    """The lines the process wrote, once every byte of its output (and every file it wrote) was searched for the
    token, its secret part, the account's key and the webhook's secret; none may be there, nor a traceback."""
    everything = process.written() + b"".join(f.read_bytes() for f in tmp_path.rglob("*") if f.is_file())
    for secret in SECRETS:
        assert secret.encode() not in everything, f"{secret} in what moderator wrote"
    lines = process.lines()
    assert not [line for line in lines if "Traceback" in line or "never retrieved" in line], "\n".join(lines)
    return lines


def said_once(process: Moderator, tmp_path: Path, *words: str) -> list[str]:
    """The lines the process wrote (``written_without_secrets``), each of ``words`` in exactly one of them."""
    lines = written_without_secrets(process, tmp_path)
    assert [count(lines, said) for said in words] == [1] * len(words), "\n".join(lines)
    return lines


def health(port: int, *, stranger: bool = False) -> tuple[int, dict[str, Any]]:
    """``/healthz`` as this machine asks it, or as anyone else (a request through the proxy on this machine)."""
    forwarded = "X-Forwarded-For: 198.51.100.7\r\n" if stranger else ""
    status, _, body = http(port, f"GET /healthz HTTP/1.1\r\nHost: x\r\n{forwarded}Connection: close\r\n\r\n".encode())
    return status, json.loads(body)


def page(port: int) -> int:
    """A browser page (the form that opens a table)."""
    return http(port, b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")[0]


def text(port: int, sid: str, words: str = "HELP", phone: str = "+12025550111") -> tuple[int, bytes]:
    """An SMS as Twilio posts it, signed with the account's key."""
    form = incoming(phone, words, sid, to=NUMBER)
    status, _, body = http(port, post(port, "/sms", urlencode(form).encode(), {
        "Content-Type": "application/x-www-form-urlencoded",
        "X-Twilio-Signature": signature(f"{PUBLIC_URL}/sms", form, KEY)}))
    return status, body


def update(port: int, update_id: int, words: str) -> int:
    """A Telegram update as Telegram posts it to the webhook."""
    return http(port, post(port, "/telegram", json.dumps(message(update_id, words)).encode(),
                           {"Content-Type": "application/json", "X-Telegram-Bot-Api-Secret-Token": HOOK_SECRET}))[0]


def message(update_id: int, words: str, person: int = 501) -> dict[str, Any]:
    """An update: ``words`` typed by a person in their private chat with the bot."""
    sender = user(person, "Ann")
    entities = [{"type": "bot_command", "offset": 0, "length": len(words.split()[0])}] if words[:1] == "/" else []
    return {"update_id": update_id, "message": {
        "message_id": update_id, "from": sender, "chat": {"id": sender["id"], "type": "private", "first_name": "Ann"},
        "date": int(time.time()), "text": words, "entities": entities}}


def serving(process: Moderator, port: int) -> None:
    """Once its channels started and it listens (``/healthz`` answers, healthy or not)."""
    process.wait_for("serving on")
    deadline = time.monotonic() + 10
    while True:
        try:
            health(port)
            return
        except OSError:
            assert time.monotonic() < deadline, "moderator serve does not listen"
            time.sleep(0.05)


def count(lines: list[str], words: str) -> int:
    return sum(1 for line in lines if words in line)


def rows(tmp_path: Path, sql: str) -> list[tuple[Any, ...]]:
    with sqlite3.connect(f"file:{tmp_path / 'm.db'}?mode=ro", uri=True) as conn:
        return conn.execute(sql).fetchall()


def eventually(check: Any, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "it never happened"
        time.sleep(0.05)


# --- a token Telegram refuses ----------------------------------------------------------------------------------


def test_a_refused_token_ends_moderator_telegram_with_one_line_naming_the_setting_and_exit_2(
        tmp_path: Path) -> None:
    refusing = StandIn(token="another-bot:token").start()
    try:
        with moderator("telegram", env(tmp_path, refusing.url), tmp_path) as process:
            assert process.exit_code() == 2
    finally:
        refusing.stop()
    assert len(said_once(process, tmp_path, REFUSED_TOKEN)) <= 3
    assert refusing.calls("getMe") == 1  # refused is refused: no second try


def test_a_token_revoked_while_polling_ends_moderator_telegram_with_the_same_line(
        tmp_path: Path, providers: StandIn) -> None:
    with moderator("telegram", env(tmp_path, providers.url), tmp_path) as process:
        process.wait_for("polls for updates")
        providers.revoke()
        assert process.exit_code() == 2
    said_once(process, tmp_path, REFUSED_TOKEN)


def test_under_serve_a_refused_token_turns_telegram_off_and_the_sms_webhook_and_the_pages_answer(
        tmp_path: Path) -> None:
    telegram_refuses = StandIn(token="another-bot:token", account=ACCOUNT, key=KEY).start()
    port = free_port()
    try:
        # Every library at its most talkative: still no key in any line.
        settings = env(tmp_path, telegram_refuses.url, telegram_refuses.url, port=port, MODERATOR_LOG_LEVEL="debug")
        with moderator("serve", settings, tmp_path) as process:
            serving(process, port)
            status, report = health(port)
            assert status == 503 and not report["ok"]
            assert report["channels"] == {"sms": "up", "telegram": "refused", "web": "up"}
            assert health(port, stranger=True) == (503, {"ok": False})
            assert text(port, "SM-refused-1")[0] == 200 and page(port) == 200
            assert update(port, 1, "/help") == 503  # Telegram would try again: nothing here takes it now
            assert process.stop() == 0
    finally:
        telegram_refuses.stop()
    said_once(process, tmp_path, REFUSED_TOKEN, "channels on: sms, web; refused: telegram")


def test_under_serve_a_token_revoked_while_running_stops_telegram_alone_and_its_messages_wait(
        tmp_path: Path, providers: StandIn) -> None:
    port = free_port()
    with moderator("serve", env(tmp_path, providers.url, providers.url, port=port), tmp_path) as process:
        serving(process, port)
        assert health(port)[0] == 200
        providers.revoke(twilio=False)
        assert update(port, 1, "/newgame") == 200  # stored; its answer is refused at sending
        process.wait_for(REFUSED_TOKEN)
        eventually(lambda: health(port)[1]["channels"]["telegram"] == "refused")
        waiting = rows(tmp_path, "SELECT count(*) FROM outbox WHERE channel = 'telegram' AND status = 'pending'")
        assert waiting[0][0] >= 1
        # Games on the other channels go on: a text opens a table and its host is answered.
        assert text(port, "SM-open-1", "NEWGAME Cy")[0] == 200
        eventually(lambda: any(t["To"] == "+12025550111" for t in providers.texts))
        assert page(port) == 200 and update(port, 2, "/help") == 503
        assert process.stop() == 0
    lines = said_once(process, tmp_path, REFUSED_TOKEN)
    assert re.search(r"stopped; [1-9]\d* messages wait in the outbox", lines[-1])


# --- Telegram out of reach -------------------------------------------------------------------------------------


def test_telegram_out_of_reach_at_start_is_one_line_and_polling_goes_on_where_it_was_once_it_is_back(
        tmp_path: Path, providers: StandIn) -> None:
    with moderator("telegram", env(tmp_path, providers.url), tmp_path) as process:  # a table opened before
        process.wait_for("polls for updates")
        providers.bot.updates.append(message(1, "/newgame"))
        eventually(lambda: rows(tmp_path, "SELECT count(*) FROM seats") == [(1,)])
        assert process.stop() == 0
    providers.stop()
    late = StandIn(token=TOKEN, port=providers.port)
    late.bot = providers.bot  # the same Telegram, with the same chats, back on the same address
    try:
        with moderator("telegram", env(tmp_path, late.url), tmp_path) as process:
            process.wait_for(OUT_OF_REACH)
            late.start(up_after=1.5)
            process.wait_for(BACK)
            process.wait_for("polls for updates")
            late.bot.updates.append(message(2, "/computers 4"))
            eventually(lambda: rows(tmp_path, "SELECT count(*) FROM seats") == [(5,)])  # the same lobby, filled
            assert process.stop() == 0
    finally:
        late.stop()
    said_once(process, tmp_path, OUT_OF_REACH, BACK)


def test_telegram_lost_while_polling_is_one_line_then_one_when_it_is_back(
        tmp_path: Path, providers: StandIn) -> None:
    with moderator("telegram", env(tmp_path, providers.url), tmp_path) as process:
        process.wait_for("polls for updates")
        providers.stop()
        process.wait_for(OUT_OF_REACH)
        time.sleep(2)  # tries after 1 and 2 s: none of them a line
        providers.start()
        process.wait_for(BACK, timeout=30)
        providers.bot.updates.append(message(1, "/newgame"))
        eventually(lambda: rows(tmp_path, "SELECT count(*) FROM seats") == [(1,)])
        assert process.stop() == 0
    said_once(process, tmp_path, OUT_OF_REACH, BACK)


def test_under_serve_telegram_out_of_reach_leaves_the_rest_up_and_it_starts_once_telegram_is_there(
        tmp_path: Path, providers: StandIn) -> None:
    late = StandIn(token=TOKEN)  # nobody listens there yet
    port = free_port()
    try:
        with moderator("serve", env(tmp_path, late.url, providers.url, port=port), tmp_path) as process:
            serving(process, port)
            late.start(up_after=1.5)
            answers: list[tuple[int, str]] = []
            while not answers or answers[-1][1] != "up":
                status, report = health(port)
                answers.append((status, report["channels"]["telegram"]))
                assert text(port, f"SM-{len(answers)}")[0] == 200 and page(port) == 200
                hook = update(port, len(answers), "/help")
                if status == 503 and health(port)[1]["channels"]["telegram"] == "retrying":
                    assert hook == 503  # Telegram would try again
                time.sleep(0.1)
            assert answers[0] == (503, "retrying") and set(answers) == {(503, "retrying"), (200, "up")}
            assert health(port)[1]["channels"] == {"sms": "up", "telegram": "up", "web": "up"}
            assert late.calls("setWebhook") == 1 and update(port, 1000, "/help") == 200
            assert process.stop() == 0
    finally:
        late.stop()
    said_once(process, tmp_path, OUT_OF_REACH, BACK)


# --- Twilio refuses the account's key ----------------------------------------------------------------------------


def test_under_serve_a_refused_twilio_key_turns_sms_off_in_one_line_and_the_rest_answers(
        tmp_path: Path, providers: StandIn) -> None:
    twilio_refuses = StandIn(token=TOKEN, account=ACCOUNT, key="another key").start()
    port = free_port()
    try:
        with moderator("serve", env(tmp_path, providers.url, twilio_refuses.url, port=port), tmp_path) as process:
            serving(process, port)
            eventually(lambda: health(port)[1]["channels"]["sms"] == "refused")
            assert health(port)[1]["channels"] == {"sms": "refused", "telegram": "up", "web": "up"}
            assert update(port, 1, "/help") == 200 and page(port) == 200 and text(port, "SM-1")[0] == 503
            assert process.stop() == 0
        with moderator("sms", env(tmp_path, providers.url, twilio_refuses.url, port=free_port()),
                       tmp_path) as alone:
            assert alone.exit_code() == 2  # nothing else to serve
    finally:
        twilio_refuses.stop()
    for ran in (process, alone):
        said_once(ran, tmp_path, REFUSED_KEY)


def test_under_serve_a_twilio_key_revoked_while_sending_turns_sms_off_and_its_texts_wait(
        tmp_path: Path, providers: StandIn) -> None:
    port = free_port()
    with moderator("serve", env(tmp_path, providers.url, providers.url, port=port), tmp_path) as process:
        serving(process, port)
        providers.revoke(telegram=False)
        assert text(port, "SM-2", "NEWGAME Cy")[0] == 200
        process.wait_for(REFUSED_KEY)
        eventually(lambda: health(port)[1]["channels"]["sms"] == "refused")
        assert rows(tmp_path, "SELECT count(*) FROM outbox WHERE channel = 'sms' AND status = 'pending'")[0][0] >= 1
        assert update(port, 1, "/help") == 200 and page(port) == 200
        assert process.stop() == 0
    said_once(process, tmp_path, REFUSED_KEY)


# --- a database that cannot be written -------------------------------------------------------------------------


def test_while_the_database_cannot_be_written_healthz_says_so_every_time_and_the_log_twice(
        tmp_path: Path, providers: StandIn) -> None:
    telegram = StandIn(token=TOKEN).start()
    port = free_port()
    try:
        with moderator("serve", env(tmp_path, telegram.url, providers.url, port=port), tmp_path) as process:
            serving(process, port)
            assert text(port, "SM-before", "NEWGAME Cy")[0] == 200
            telegram.stop()  # an answer waits to be delivered through the whole fault
            assert update(port, 1, "/newgame") == 200
            process.wait_for(OUT_OF_REACH)
            before = len(process.lines())
            # Every write of the process fails from now on, as on a full or read-only disk (its output is a pipe),
            # for longer than the 5 s between two reminder rounds, which write too.
            resource.prlimit(process.pid, resource.RLIMIT_FSIZE, (0, resource.RLIM_INFINITY))
            telegram.start()  # back, but nothing can be marked as handed to it until the disk takes writes
            answers: list[tuple[int, dict[str, Any]]] = []
            refused, end = 0, time.monotonic() + 5.5
            while time.monotonic() < end:
                status, body = text(port, f"SM-full-{len(answers)}", "COMPUTERS 4")
                refused += status == 503 or b"again" in body
                refused += update(port, 100 + len(answers), "/newgame") == 503
                answers.append(health(port))
                time.sleep(0.25)
            resource.prlimit(process.pid, resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
            back = process.wait_for("the database can be written again", after=before)
            process.wait_for(BACK)
            eventually(lambda: health(port)[0] == 200)
            eventually(lambda: telegram.bot.texts(501) != [])  # the answer that waited went out
            assert process.stop() == 0
    finally:
        telegram.stop()
    assert {(status, report["database"]) for status, report in answers} == {(503, "not writable")}
    assert refused == 2 * len(answers) and f"{refused} inputs were refused meanwhile" in back
    lines = said_once(process, tmp_path, "the database cannot be written")[before:]
    assert [line for line in lines if " ERROR " in line] == [next(x for x in lines if "cannot be written" in x)]


# --- any channel: what it says of its provider is all it takes ------------------------------------------------------


class Flaky:
    """A fourth channel, as WhatsApp would be: it only says what its provider answers. Its provider cannot be
    reached at the first start, then takes it, then refuses its key while it delivers."""

    name = "flaky"
    capabilities = Capabilities(buttons=True)

    def __init__(self) -> None:
        self.starts = 0
        self.refusing = False
        self.sent: list[Outbound] = []

    def off(self, settings: Settings) -> str | None:
        return None

    def routes(self, settings: Settings) -> Sequence[BaseRoute]:
        async def post(request: Request) -> Response:
            runtime: Runtime = request.app.state.channels[self.name].state
            said = (await request.json())["say"]
            runtime.port.handle(Inbound(self.name, str(request.path_params["address"]),
                                        grammar().parse(said, frozenset()) or Decide("?", said), external_id=said))
            return Response(status_code=204)

        return [Route("/flaky/{address}", post, methods=["POST"])]

    def webhooks(self, settings: Settings) -> Mapping[str, int]:
        return {"/flaky/ann": 1024}

    def send_batch(self, address: str, messages: Sequence[Outbound]) -> list[Result]:
        if self.refusing:
            return [Refused("Flaky", "FLAKY_KEY", "ask Flaky for a new one")] * len(messages)
        self.sent.extend(messages)
        return [Delivered()] * len(messages)

    @contextlib.asynccontextmanager
    async def start(self, settings: Settings, runtime: Runtime) -> AsyncIterator[Running]:
        self.starts += 1
        if self.starts == 1:
            raise Unreachable("Flaky", "no route to host")
        runtime.delivery(self.name, self)
        yield Running(runtime)


def test_a_channel_that_says_unreachable_and_refused_is_retried_reported_and_stopped_alone_by_the_wiring(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    flaky = Flaky()
    settings = Settings.load({"MODERATOR_DB": str(tmp_path / "m.db"), "MODERATOR_WEB": "on"}, cwd=tmp_path)
    caplog.set_level(logging.INFO, logger="moderator")
    with TestClient(create_app(settings, channels=(*CHANNELS, flaky)), client=("127.0.0.1", 50000)) as client:
        assert client.get("/healthz").json()["channels"] == {"flaky": "retrying", "web": "up"}
        assert client.post("/flaky/ann", json={"say": "open Ann"}).status_code == 503
        eventually(lambda: client.get("/healthz").status_code == 200)  # started again after a second
        assert client.post("/flaky/ann", json={"say": "open Ann"}).status_code == 204
        eventually(lambda: flaky.sent != [])
        flaky.refusing = True
        assert client.post("/flaky/ann", json={"say": "help"}).status_code == 204
        eventually(lambda: client.get("/healthz").json()["channels"] == {"flaky": "refused", "web": "up"})
        assert client.get("/").status_code == 200 and client.post("/flaky/ann", json={"say": "x"}).status_code == 503
    waiting = rows(tmp_path, "SELECT attempts FROM outbox WHERE channel = 'flaky' AND status = 'pending'")
    assert waiting and all(attempts == 0 for (attempts,) in waiting)  # no try spent: they go at the next start
    said = [r.getMessage() for r in caplog.records if "Flaky" in r.getMessage()]
    assert said == ["Flaky cannot be reached (no route to host); flaky tries again, waiting up to 30 s between tries",
                    "Flaky can be reached again after 1 s; flaky is up",
                    "Flaky refused FLAKY_KEY: ask Flaky for a new one; flaky is off, its messages wait in the outbox "
                    "for the next start"]
