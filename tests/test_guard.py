"""``moderator.guard``: bodies bounded while they stream (chunked too) before any route parses them, multipart
refused, security headers, the Origin check, rate limits on guessing codes and opening tables, the client's address
behind trusted proxies, and logs without secrets or floods. In-process and loopback only; bounded in time."""

from __future__ import annotations

import asyncio
import json
import logging
import math
import os
import select
import socket
import subprocess
import sys
import time
import urllib.request
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, Response
from starlette.routing import Route

from moderator.guard import (
    DEFAULT_BODY_LIMIT,
    JOIN_GUESSES_AT_ONCE,
    Hiding,
    JoinGuard,
    OpenGate,
    OriginCheck,
    RateLimitedLog,
    RateLimiter,
    Redact,
    SecurityHeaders,
    StreamingBodyLimit,
    Throttle,
    TrustedProxies,
    client_address,
    join_guesses,
    quiet_third_party_loggers,
    rate_key,
    redact,
    secret_values,
    too_many,
    trusted_proxies_setting,
    try_again,
)
from moderator.transports.sms import MAX_BODY as TWILIO_BODY_LIMIT

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # Starlette 1.x asks for httpx2; httpx works the same here
    from starlette.testclient import TestClient

ROOT = Path(__file__).resolve().parent.parent


class Clock:
    """A monotonic clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


# --- bounded bodies, in process -----------------------------------------------------------------------------


def run(app: Any, scope: dict[str, Any], chunks: Iterator[bytes]) -> tuple[list[dict[str, Any]], int]:
    """Call an ASGI app with a body streamed as ``chunks``; (what it sent, how many chunks it was asked for)."""
    sent: list[dict[str, Any]] = []
    asked = 0

    async def receive() -> dict[str, Any]:
        nonlocal asked
        asked += 1
        chunk = next(chunks, None)
        if chunk is None:
            return {"type": "http.request", "body": b"", "more_body": False}
        return {"type": "http.request", "body": chunk, "more_body": True}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    asyncio.run(app(scope, receive, send))
    return sent, asked


def http_scope(path: str, *, method: str = "POST", headers: list[tuple[bytes, bytes]] | None = None,
               scheme: str = "http") -> dict[str, Any]:
    return {"type": "http", "method": method, "path": path, "headers": headers or [], "scheme": scheme,
            "query_string": b"", "client": ("203.0.113.9", 5555), "server": ("127.0.0.1", 8000)}


class Reader:
    """A route that reads its whole body, as ``request.form()`` and ``request.body()`` do."""

    def __init__(self) -> None:
        self.bytes = 0
        self.finished = False

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        request = Request(scope, receive)
        async for chunk in request.stream():
            self.bytes += len(chunk)
        self.finished = True
        await PlainTextResponse("read")(scope, receive, send)


def endless(size: int = 64 * 1024) -> Iterator[bytes]:
    while True:
        yield b"x" * size


def test_a_chunked_body_over_the_limit_is_refused_413_and_the_route_never_sees_more_than_the_limit() -> None:
    route = Reader()
    app = StreamingBodyLimit(route, {"/sms": TWILIO_BODY_LIMIT})
    sent, asked = run(app, http_scope("/sms"), endless())  # no Content-Length: a chunked body, without end
    assert sent[0]["status"] == 413 and (b"connection", b"close") in sent[0]["headers"]
    assert route.bytes <= TWILIO_BODY_LIMIT and not route.finished
    assert asked == 2  # one 64 KB chunk fits, the next crosses the limit and is the last one read


def test_a_declared_length_over_the_limit_is_refused_before_anything_is_read() -> None:
    route = Reader()
    app = StreamingBodyLimit(route, {"/telegram": 1024 * 1024})
    headers = [(b"content-length", str(1024 * 1024 + 1).encode())]
    sent, asked = run(app, http_scope("/telegram", headers=headers), endless())
    assert sent[0]["status"] == 413 and asked == 0 and route.bytes == 0


def test_each_path_has_its_limit_and_everything_else_the_small_default() -> None:
    app = StreamingBodyLimit(Reader(), {"/telegram": 1024 * 1024, "/sms": TWILIO_BODY_LIMIT})
    assert app.limit_for("/telegram") == 1024 * 1024
    assert app.limit_for("/sms/status") == TWILIO_BODY_LIMIT
    assert app.limit_for("/smsx") == app.limit_for("/new") == app.limit_for("/") == DEFAULT_BODY_LIMIT


def test_a_body_under_the_limit_reaches_the_route_whole() -> None:
    route = Reader()
    chunks = iter([b"a" * 1000, b"b" * 1000])
    sent, _ = run(StreamingBodyLimit(route), http_scope("/new"), chunks)
    assert sent[0]["status"] == 200 and route.bytes == 2000 and route.finished


@pytest.mark.parametrize("kind", [b"multipart/form-data; boundary=x", b"Multipart/Form-Data"])
def test_multipart_is_refused_415_where_no_channel_sends_it(kind: bytes) -> None:
    route = Reader()
    sent, asked = run(StreamingBodyLimit(route), http_scope("/sms", headers=[(b"content-type", kind)]), endless())
    assert sent[0]["status"] == 415 and asked == 0
    allowed = StreamingBodyLimit(Reader(), multipart=("/upload",))
    sent, _ = run(allowed, http_scope("/upload", headers=[(b"content-type", kind)]), iter([b"--x--"]))
    assert sent[0]["status"] == 200


def test_a_client_gone_mid_body_leaves_no_traceback(caplog: pytest.LogCaptureFixture) -> None:
    async def gone() -> dict[str, Any]:
        return {"type": "http.disconnect"}

    async def nowhere(message: Any) -> None:
        pass  # as uvicorn's send after a disconnect

    app = StreamingBodyLimit(Starlette(routes=[Route("/sms", _form_route, methods=["POST"])]))
    caplog.set_level(logging.DEBUG)
    kind = [(b"content-type", b"application/x-www-form-urlencoded")]
    asyncio.run(app(http_scope("/sms", headers=kind), gone, nowhere))  # Starlette's ClientDisconnect stops here
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


async def _form_route(request: Request) -> Response:
    await request.form()
    return PlainTextResponse("ok")


# --- bounded bodies, through the real server ------------------------------------------------------------------


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, int, Path]]:
    """(port, pid, its temporary directory) of ``tests.guarded_app`` under ``GuardedServer``."""
    tmp = tmp_path_factory.mktemp("served-tmp")
    env = {**os.environ, "TMPDIR": str(tmp), "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen([sys.executable, "-m", "tests.guarded_app", "{}"], stdout=subprocess.PIPE,
                               env=env, cwd=ROOT, text=True)
    try:
        assert process.stdout is not None
        port = int(process.stdout.readline())
        yield port, process.pid, tmp
    finally:
        process.kill()
        process.wait(timeout=10)


def stats(port: int) -> dict[str, Any]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/stats", timeout=5) as response:
        return dict(json.loads(response.read()))


def stream_chunked(port: int, path: str, total: int, kind: bytes = b"application/x-www-form-urlencoded") -> bytes:
    """POST up to ``total`` bytes as a chunked body; stop at the first answer, and return it."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(b"POST " + path.encode() + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: " + kind +
                     b"\r\nTransfer-Encoding: chunked\r\n\r\n")
        chunk = b"a" * 65536
        frame = b"%x\r\n" % len(chunk) + chunk + b"\r\n"
        sent = 0
        try:
            if select.select([sock], [], [], 0.2)[0]:  # refused on its headers alone (415)
                return sock.recv(4096)
            while sent < total:
                sock.sendall(frame)
                sent += len(chunk)
                if select.select([sock], [], [], 0)[0]:
                    break
            return sock.recv(4096)
        except OSError:  # the server closed while we were still sending: its answer may be lost with the reset
            return b""


def test_a_chunked_50_mb_body_to_the_sms_webhook_costs_the_server_almost_no_memory(
        served: tuple[int, int, Path]) -> None:
    port, _, _ = served
    before = stats(port)
    answer = stream_chunked(port, "/sms", 50 * 1024 * 1024)
    after = stats(port)
    assert answer.startswith(b"HTTP/1.1 413") or answer == b""
    assert after["received"]["sms"] == before["received"]["sms"]  # the form was never parsed
    assert after["rss_kb"] - before["rss_kb"] < 4 * 1024, (before, after)


def test_a_multipart_body_leaves_no_temporary_file(served: tuple[int, int, Path]) -> None:
    port, _, tmp = served
    answer = stream_chunked(port, "/sms", 4 * 1024 * 1024, b"multipart/form-data; boundary=xyz")
    assert answer.startswith(b"HTTP/1.1 415")
    assert list(tmp.iterdir()) == []


# --- security headers -----------------------------------------------------------------------------------------


def pages_app() -> Starlette:
    async def page(request: Request) -> Response:
        return HTMLResponse("<p>hi</p>", headers={"Referrer-Policy": "no-referrer"})

    async def data(request: Request) -> Response:
        return PlainTextResponse("x")

    async def post(request: Request) -> Response:
        await request.body()
        return PlainTextResponse("done")

    return Starlette(routes=[Route("/page", page), Route("/data", data), Route("/new", post, methods=["POST"]),
                             Route("/app/T1", page), Route("/apple", page),
                             Route("/telegram", post, methods=["POST"]), Route("/sms/status", post, methods=["POST"])])


def test_pages_forbid_framing_and_sniffing_and_keep_their_address_to_this_site() -> None:
    with TestClient(SecurityHeaders(pages_app())) as client:
        page = client.get("/page")
        data = client.get("/data")
    assert page.headers["content-security-policy"] == "frame-ancestors 'none'"
    assert page.headers["x-frame-options"] == "DENY"
    assert page.headers["x-content-type-options"] == "nosniff"
    # same-origin, replacing the route's no-referrer: a same-origin POST then carries a real Origin
    assert page.headers.get_list("referrer-policy") == ["same-origin"]
    assert data.headers["x-content-type-options"] == "nosniff" and "x-frame-options" not in data.headers


def test_only_the_framed_paths_may_be_framed_and_only_by_the_origin_named_every_other_page_by_nobody() -> None:
    """The seat's page in Telegram (``/app/``) is a frame of Telegram's web client; nothing else is anyone's."""
    with TestClient(SecurityHeaders(pages_app(), framed={"/app/": "https://web.telegram.org"})) as client:
        framed, page, near = client.get("/app/T1"), client.get("/page"), client.get("/apple")
    assert framed.headers["content-security-policy"] == "frame-ancestors https://web.telegram.org"
    assert "x-frame-options" not in framed.headers  # it can name no origin: DENY would refuse Telegram too
    assert framed.headers["x-content-type-options"] == "nosniff"
    for other in (page, near):  # a path that merely starts alike is another page
        assert other.headers["content-security-policy"] == "frame-ancestors 'none'"
        assert other.headers["x-frame-options"] == "DENY"


# --- the Origin check -----------------------------------------------------------------------------------------


@pytest.fixture
def origin_client() -> Iterator[TestClient]:
    app = OriginCheck(pages_app(), exempt=("/telegram", "/sms"), public_url="https://moderator.example.org")
    with TestClient(app, base_url="http://play.local:8000") as client:
        yield client


def test_a_same_origin_post_goes_through(origin_client: TestClient) -> None:
    assert origin_client.post("/new", headers={"Origin": "http://play.local:8000"}).status_code == 200
    assert origin_client.post("/new", headers={"Origin": "https://moderator.example.org:443"}).status_code == 200


@pytest.mark.parametrize("origin", ["https://evil.example", "http://play.local:8001", "https://play.local:8000",
                                    "null", "moderator.example.org"])
def test_a_post_from_another_origin_is_refused_403(origin_client: TestClient, origin: str) -> None:
    assert origin_client.post("/new", headers={"Origin": origin}).status_code == 403


def test_without_origin_a_same_site_referer_will_do_and_nothing_at_all_will_not(origin_client: TestClient) -> None:
    assert origin_client.post("/new", headers={"Referer": "http://play.local:8000/join/ABCDE"}).status_code == 200
    assert origin_client.post("/new", headers={"Referer": "https://evil.example/x"}).status_code == 403
    assert origin_client.post("/new").status_code == 403


def test_the_signed_webhooks_and_reads_need_no_origin(origin_client: TestClient) -> None:
    assert origin_client.post("/telegram").status_code == 200
    assert origin_client.post("/sms/status", headers={"Origin": "https://evil.example"}).status_code == 200
    assert origin_client.get("/page", headers={"Origin": "https://evil.example"}).status_code == 200


def test_behind_a_trusted_proxy_the_origin_is_the_https_one_it_was_asked_for() -> None:
    # uvicorn's ProxyHeadersMiddleware has set the scheme from X-Forwarded-Proto; the Host is the proxy's.
    check = OriginCheck(pages_app(), exempt=())
    headers = [(b"host", b"moderator.example.org"), (b"origin", b"https://moderator.example.org")]
    assert check.allowed(http_scope("/new", headers=headers, scheme="https"))
    assert not check.allowed(http_scope("/new", headers=headers, scheme="http"))


# --- rate limits ----------------------------------------------------------------------------------------------


def test_a_token_bucket_allows_its_burst_then_says_how_long_to_wait() -> None:
    clock = Clock()
    limiter = RateLimiter(rate=1 / 6, burst=3, clock=clock)
    assert [limiter.check("a") for _ in range(3)] == [0.0, 0.0, 0.0]
    assert limiter.check("a") == pytest.approx(6.0)
    assert limiter.check("b") == 0.0  # another client has its own
    clock.now += 6
    assert limiter.check("a") == 0.0 and limiter.peek("a") == pytest.approx(6.0)


def test_a_rate_limiter_keeps_a_bounded_number_of_keys() -> None:
    limiter = RateLimiter(rate=1, burst=1, max_keys=100, clock=Clock())
    for i in range(10_000):
        limiter.check(f"client-{i}")
    assert len(limiter) == 100


def test_ten_phones_behind_one_address_all_join_and_a_guesser_is_told_to_try_again() -> None:
    clock = Clock()
    joins = JoinGuard(join_guesses(clock))
    venue = rate_key("198.51.100.7")
    for _ in range(19):  # a table of ten at the same moment, each mistyping once first, nine of them twice
        assert joins.attempt(venue, known=False) == 0.0
    for _ in range(10):
        assert joins.attempt(venue, known=True) == 0.0
    stranger = rate_key("203.0.113.50")
    assert [joins.attempt(stranger, known=False) for _ in range(JOIN_GUESSES_AT_ONCE)] == [0.0] * JOIN_GUESSES_AT_ONCE
    wait = joins.attempt(stranger, known=False)
    assert 0 < wait <= 6.0
    # Out of tries, a known code gets the same answer: the eleventh guess tells nothing.
    assert joins.attempt(stranger, known=True) == pytest.approx(wait)
    clock.now += 60
    assert joins.attempt(stranger, known=True) == 0.0


def test_guessing_is_no_faster_than_typing() -> None:
    clock = Clock()
    joins = JoinGuard(join_guesses(clock))
    answered = 0
    for _ in range(3600):  # one try a second for an hour
        answered += joins.attempt("guesser", known=False) == 0.0
        clock.now += 1
    assert answered <= JOIN_GUESSES_AT_ONCE + 60 * 10  # the burst, then ten a minute


def test_try_again_answers_429_with_retry_after_and_the_catalogs_words() -> None:
    sent: list[dict[str, Any]] = []

    async def send(message: Any) -> None:
        sent.append(message)

    asyncio.run(try_again(send, 41.2, "Zu viele Versuche."))  # the words come from the client's catalog
    assert sent[0]["status"] == 429 and (b"retry-after", b"42") in sent[0]["headers"]
    assert sent[1]["body"] == b"Zu viele Versuche."
    response = too_many(300)
    assert response.status_code == 429 and response.headers["retry-after"] == "300"
    assert response.body == b"Too Many Requests" and response.headers["cache-control"] == "no-store"


def test_opening_tables_without_a_password_is_one_a_minute_per_client() -> None:
    clock = Clock()
    gate = OpenGate(clock=clock)
    assert gate.check("a") == 0.0
    assert gate.check("a") == pytest.approx(60.0)
    assert gate.check("b") == 0.0
    clock.now += 60
    assert gate.check("a") == 0.0


def test_with_the_operator_password_only_those_who_give_it_open_tables() -> None:
    clock = Clock()
    gate = OpenGate("table-for-friends", clock=clock)
    assert gate.check("a", "table-for-friends") == 0.0
    assert gate.check("a", "table-for-friends") == 0.0  # the operator's friends are not slowed
    assert gate.check("b") == math.inf
    assert gate.check("b", "guess") == pytest.approx(60.0)
    assert gate.check("b", "table-for-friends") > 0  # wrong tries cost time: no quick guessing


# --- the client's address ---------------------------------------------------------------------------------------


def scope_from(peer: str, forwarded: str | None = None) -> dict[str, Any]:
    headers = [(b"x-forwarded-for", forwarded.encode())] if forwarded else []
    return {"type": "http", "client": (peer, 4000), "headers": headers}


def test_x_forwarded_for_counts_only_from_a_trusted_proxy() -> None:
    trusted = TrustedProxies.parse("127.0.0.1, ::1, 172.16.0.0/12")
    assert client_address(scope_from("172.18.0.1", "203.0.113.9"), trusted) == "203.0.113.9"
    assert client_address(scope_from("198.51.100.1", "203.0.113.9"), trusted) == "198.51.100.1"
    # A client's own X-Forwarded-For comes first; the proxy appends the address it saw.
    assert client_address(scope_from("127.0.0.1", "6.6.6.6, 203.0.113.9:5000"), trusted) == "203.0.113.9"
    assert client_address(scope_from("127.0.0.1", "172.18.0.5"), trusted) == "172.18.0.5"
    assert "10.0.0.1" not in trusted and "anything" not in trusted
    assert "10.0.0.1" in TrustedProxies.parse("*")


def test_the_trusted_proxies_are_one_setting_with_a_default_for_a_proxy_on_this_machine() -> None:
    assert trusted_proxies_setting({}) == "127.0.0.1,::1"
    assert trusted_proxies_setting({"FORWARDED_ALLOW_IPS": "172.16.0.0/12"}) == "172.16.0.0/12"
    assert trusted_proxies_setting({"MODERATOR_TRUSTED_PROXIES": "10.0.0.2", "FORWARDED_ALLOW_IPS": "x"}) == \
        "10.0.0.2"


def test_an_ipv6_client_is_counted_by_its_64() -> None:
    assert rate_key("2001:db8:1:2:aaaa::1") == rate_key("2001:db8:1:2:bbbb::2") == "2001:db8:1:2::/64"
    assert rate_key("::ffff:203.0.113.9") == "203.0.113.9" == rate_key("203.0.113.9")


def test_healthz_tells_strangers_only_ok_and_this_machine_everything() -> None:
    from moderator.guard import public_health

    report = {"ok": True, "version": "0.1.0", "channels": ["telegram"], "outbox_backlog": 3}
    assert public_health(report, scope_from("127.0.0.1")) == report
    assert public_health(report, scope_from("::1")) == report
    assert public_health(report, scope_from("203.0.113.9")) == {"ok": True}
    # Through the proxy on this machine: the peer is loopback, but it forwards for someone else.
    assert public_health(report, scope_from("127.0.0.1", "203.0.113.9")) == {"ok": True}
    assert public_health({"ok": False, "database": "unreachable"}, scope_from("10.0.0.1")) == {"ok": False}


# --- logs -------------------------------------------------------------------------------------------------------


def test_the_access_log_carries_no_host_key_and_no_bot_token(caplog: pytest.LogCaptureFixture) -> None:
    access = logging.getLogger("uvicorn.access")
    access.addFilter(redacting := Redact())
    try:
        caplog.set_level(logging.INFO, logger="uvicorn.access")
        access.info('%s - "%s %s HTTP/%s" %d', "203.0.113.9:1", "GET", "/host/abcdefghijkl?key=SECRETKEY&lang=de",
                    "1.1", 303)
    finally:
        access.removeFilter(redacting)
    line = caplog.records[-1].getMessage()
    assert "SECRETKEY" not in line and "/host/abcdefghijkl?key=[redacted]&lang=de" in line
    assert redact("POST https://api.telegram.org/bot123456:AAE-x_y/sendMessage") == \
        "POST https://api.telegram.org/bot[redacted]/sendMessage"
    assert redact("/x?token=abc;secret=def") == "/x?token=[redacted];secret=[redacted]"


def test_a_seats_move_code_is_in_no_log_line(caplog: pytest.LogCaptureFixture) -> None:
    """A move code hands its seat (and its role) to whoever sends it first: the access log says only that one was
    used."""
    access = logging.getLogger("uvicorn.access")
    access.addFilter(redacting := Redact())
    try:
        caplog.set_level(logging.INFO, logger="uvicorn.access")
        for method in ("GET", "POST"):
            access.info('%s - "%s %s HTTP/%s" %d', "203.0.113.9:1", method, "/move/QWERTYX?lang=de", "1.1", 200)
    finally:
        access.removeFilter(redacting)
    lines = [record.getMessage() for record in caplog.records[-2:]]
    assert all("QWERTYX" not in line and "/move/[redacted]?lang=de" in line for line in lines), lines
    assert redact("/join/ABCDE") == "/join/ABCDE"  # a join code is on the table's screen for all to see


def test_a_key_of_the_settings_is_hidden_in_every_line_a_handler_writes_tracebacks_included() -> None:
    """Whatever a library puts in a message or an exception (PTB: "The token `…` was rejected by the server"), the
    settings' keys never reach the output; a value too short to be a key is left alone."""
    token = "123456:AAF-SEKRITtoken_0123456789"
    env = {"TELEGRAM_TOKEN": token, "TWILIO_AUTH_TOKEN": "SEKRITtwilioKey0123",
           "TELEGRAM_WEBHOOK_SECRET": "hook-SEKRIT1", "MODERATOR_OPEN_PASSWORD": "abc",
           "TWILIO_ACCOUNT_SID": "AC0123456789"}
    secrets = secret_values(env)
    assert set(secrets) == {token, token.split(":")[1], "SEKRITtwilioKey0123", "hook-SEKRIT1"}
    hiding = Hiding(logging.Formatter("%(levelname)s %(message)s"), secrets)
    try:
        raise ValueError(f"The token `{token}` was rejected by the server.")
    except ValueError as exc:
        record = logging.LogRecord("telegram", logging.ERROR, __file__, 1, "failed with %s and %s", (exc, env),
                                   sys.exc_info())
    line = hiding.format(record)
    assert "SEKRIT" not in line and line.count("[redacted]") >= 4 and "Traceback" in line
    assert "abc" in line and "AC0123456789" in line  # not keys: said as they are


def test_third_party_libraries_log_warnings_only_unless_asked() -> None:
    names = ("twilio", "httpx", "telegram", "uvicorn.error")
    old = {n: logging.getLogger(n).level for n in names}
    try:
        assert quiet_third_party_loggers({}) == logging.WARNING
        assert all(logging.getLogger(n).level == logging.WARNING for n in names)
        assert quiet_third_party_loggers({"MODERATOR_LOG_LEVEL": "debug"}) == logging.DEBUG
    finally:
        for name, level in old.items():
            logging.getLogger(name).setLevel(level)


def test_a_flood_of_one_kind_of_line_is_a_few_lines_and_a_count(caplog: pytest.LogCaptureFixture) -> None:
    clock = Clock()
    limited = RateLimitedLog(logging.getLogger("moderator.test"), every=60, burst=3, clock=clock)
    caplog.set_level(logging.INFO, logger="moderator.test")
    for _ in range(1000):
        limited.warning("refused", "refused a connection")
    assert len(caplog.records) == 3 and limited.held_back("refused") == 997
    clock.now += 61
    limited.warning("refused", "refused a connection")
    assert "997 more" in caplog.records[3].getMessage() and len(caplog.records) == 5


def test_a_throttled_logger_drops_repeats_and_says_how_many(caplog: pytest.LogCaptureFixture) -> None:
    clock = Clock()
    logger = logging.getLogger("moderator.test.throttled")
    logger.addFilter(throttle := Throttle(every=60, burst=2, clock=clock))
    try:
        caplog.set_level(logging.WARNING, logger=logger.name)
        for _ in range(500):
            logger.warning("Invalid HTTP request received.")
        logger.warning("another line")
        clock.now += 60
        logger.warning("Invalid HTTP request received.")
    finally:
        logger.removeFilter(throttle)
    lines = [r.getMessage() for r in caplog.records]
    assert lines[:3] == ["Invalid HTTP request received.", "Invalid HTTP request received.", "another line"]
    assert lines[3] == "Invalid HTTP request received. (498 more in 60 s)" and len(lines) == 4


def test_measured_pace_is_bounded() -> None:
    from moderator.guard import pace

    start = time.monotonic()
    asyncio.run(pace(start, 0.05))
    assert 0.05 <= time.monotonic() - start < 1.0
