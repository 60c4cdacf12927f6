"""Crash-test driver: scripted 7-player tables played through the real service, restartable at any point.

Usage: python tests/crash_driver.py DB_FILE SEED [--tables N] [--journal FILE]

Every seat is a human on the ``crash`` channel (address ``t{table}-p{seat}``). Each decision is a seeded
choice among the options of the prompt the seat was delivered, so the whole script is a pure function of
what was delivered. Inputs carry stable external ids derived from (table, seat, decision, option): an input
resent after a crash is deduplicated by the service.

The outbox is delivered through a channel that appends every message to a journal (one JSON line each,
fsync'd before the service marks it sent): after a crash a message may appear twice, never zero times.

The driver can be killed at any moment (``tests/test_crash.py`` does so with SIGKILL) and started again with
the same arguments: it reads what is already decided from the database (tables, the inputs it has handled)
and what was delivered from the journal, resends the answers still owed, and continues. When every table's
game is over and the outbox is empty it prints ``DONE`` and exits 0; a table that stops owing anything
before its game ends is a bug (exit 2).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import random
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from moderator.channels import Capabilities, Delivered, Outbound, Result
from moderator.commands import Choose, Inbound, Join, OpenTable, Start
from moderator.delivery import Sender
from moderator.service import Service
from moderator.store import Store

CHANNEL = "crash"
PLAYERS = 7


def address(table: int, seat: int) -> str:
    """The private address of a seat of scripted table ``table``."""
    return f"t{table}-p{seat}"


def parse_address(text: str) -> tuple[int, int]:
    """(table, seat) of a scripted address."""
    table, seat = text[1:].split("-p")
    return int(table), int(seat)


def game_seed(seed: int, table: int) -> int:
    """The fixed engine seed of scripted table ``table`` in run ``seed``."""
    digest = hashlib.sha256(f"crash/{seed}/{table}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def answer(seed: int, to: str, body: dict[str, Any]) -> tuple[str, str, int] | None:
    """The scripted reply to a delivered message: (token, external id, decision), or None if it asks nothing."""
    options = body.get("options") or [] if body.get("kind") == "prompt" else []
    decision = body.get("decision")
    if not options or decision is None:
        return None
    table, seat = parse_address(to)
    rng = random.Random(f"{seed}/{table}/{seat}/{decision}")
    token = options[rng.randrange(len(options))][1]
    return token, f"t{table}/p{seat}/d{decision}/{token}", int(decision)


def read_journal(path: Path) -> list[dict[str, Any]]:
    """Every complete line of the journal; a line cut short by a kill is dropped (its message is redelivered)."""
    if not path.exists():
        return []
    data = path.read_bytes()
    end = data.rfind(b"\n") + 1
    if end != len(data):
        with open(path, "r+b") as f:
            f.truncate(end)
            f.flush()
            os.fsync(f.fileno())
    return [json.loads(line) for line in data[:end].splitlines()]


def deliveries(journal: list[dict[str, Any]], reminder_lines: set[str], marker: str
               ) -> tuple[Counter[tuple[str, str]], Counter[tuple[str, str]], int]:
    """What a server's journal says reached each phone and chat: (SMS texts by address, lines of Telegram messages
    sent (not edited) by address, Telegram messages marked as a repeat), leaving out a restart's reminders (with
    the prompt sent in the same text) and the repeat marker's line."""
    texts: Counter[tuple[str, str]] = Counter()
    lines: Counter[tuple[str, str]] = Counter()
    repeats = 0
    reminded: set[str] = set()
    """Phones whose last text was a reminder alone: the next text there is the prompt it reminds of (a secret
    prompt is a text of its own, below the lock screen's filler), sent again on purpose."""
    for entry in journal:
        body = entry["text"].splitlines()
        if any(line in reminder_lines for line in body):
            if all(line in reminder_lines for line in body if line):
                reminded.add(entry["address"])
            continue
        if entry["address"] in reminded:
            reminded.discard(entry["address"])
            continue
        if entry["address"].startswith("sms:"):
            texts[(entry["address"], entry["text"])] += 1
        elif entry.get("api", "send") == "send":
            if body and body[0] == marker:
                repeats += 1
                continue
            lines.update((entry["address"], line) for line in body if line)
    return texts, lines, repeats


class JournalChannel:
    """A channel that appends every delivered message to the journal, durably, before it counts as sent."""

    capabilities = Capabilities()

    def __init__(self, path: Path) -> None:
        self.file = open(path, "ab")  # noqa: SIM115 - open for the driver's lifetime
        self.fresh: list[dict[str, Any]] = []

    def send_batch(self, to: str, messages: Sequence[Outbound]) -> list[Result]:
        """Journal each message (fsync'd), and remember it for the driver to act on."""
        for message in messages:
            entry = {"address": to, "body": {**message.to_json(), "message_id": message.message_id}}
            self.file.write((json.dumps(entry, ensure_ascii=False, sort_keys=True) + "\n").encode())
            self.file.flush()
            os.fsync(self.file.fileno())
            self.fresh.append(entry)
        return [Delivered() for _ in messages]


class Driver:
    """Plays the scripted tables to their end, from whatever point the database and journal are at."""

    def __init__(self, db: Path, seed: int, tables: int, journal: Path) -> None:
        self.seed = seed
        self.tables = tables
        self.next_seed = 0
        self.store = Store(db)
        self.service = Service(self.store, seed=lambda: self.next_seed)
        self.service.resume_all()
        self.delivered = read_journal(journal)
        self.channel = JournalChannel(journal)
        self.sender = Sender(self.store, {CHANNEL: self.channel})
        rows = self.store.execute("SELECT external_id FROM inbound WHERE channel = ?", (CHANNEL,)).fetchall()
        self.handled = {r[0] for r in rows}
        self.resent = 0

    def send(self, to: str, command: Any, external_id: str) -> None:
        self.service.handle(Inbound(CHANNEL, to, command, external_id=external_id, language="en"))
        self.handled.add(external_id)

    def table_row(self, table: int) -> Any:
        rows = self.store.tables_of(CHANNEL, address(table, 0))
        return rows[0] if rows else None

    def set_up(self, table: int) -> None:
        """Open, fill and start a table, skipping whatever an earlier run already did."""
        host = address(table, 0)
        self.send(host, OpenTable("P0"), f"t{table}/open")
        row = self.table_row(table)
        assert row is not None, f"table {table} was not opened"
        if row.status == "lobby":
            for seat in range(1, PLAYERS):
                self.send(address(table, seat), Join(row.code, f"P{seat}"), f"t{table}/join/{seat}")
        self.next_seed = game_seed(self.seed, table)
        self.send(host, Start(), f"t{table}/start")

    def act_on(self, entry: dict[str, Any], *, resend: bool = False) -> None:
        """Answer a delivered prompt, unless the database says it was answered (``resend``: answer anyway)."""
        reply = answer(self.seed, entry["address"], entry["body"])
        if reply is None:
            return
        token, external_id, decision = reply
        if external_id in self.handled and not resend:
            return
        if resend:
            self.resent += 1
        self.send(entry["address"], Choose(token, decision), external_id)

    def run(self) -> int:
        """Play every table to its end; 0 when done, 2 if a game stopped owing anything before its end."""
        for table in range(self.tables):
            self.set_up(table)
        # Answers owed for prompts delivered before a crash, in delivery order. The last answered prompt is
        # sent once more, as a transport redelivering an update would: the service must drop it.
        last_answered = None
        for entry in self.delivered:
            reply = answer(self.seed, entry["address"], entry["body"])
            if reply is not None and reply[1] in self.handled:
                last_answered = entry
            self.act_on(entry)
        if last_answered is not None:
            self.act_on(last_answered, resend=True)
        while True:
            self.channel.fresh.clear()
            if not self.sender.deliver_due(limit=50):
                break
            for entry in list(self.channel.fresh):
                self.act_on(entry)
        unfinished = [t for t in range(self.tables) if self.table_row(t).status != "over"]
        if unfinished:
            print(f"STUCK tables {unfinished}", flush=True)
            return 2
        print(f"DONE resent={self.resent}", flush=True)
        return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("db", type=Path)
    parser.add_argument("seed", type=int)
    parser.add_argument("--serve", action="store_true", help="run the server of the HTTP crash test instead")
    parser.add_argument("--tables", type=int, default=4)
    parser.add_argument("--journal", type=Path, default=None, help="default: DB_FILE with .journal appended")
    args = parser.parse_args()
    if args.serve:
        serve(args.db, args.seed)
        return 0
    journal = args.journal or args.db.with_name(args.db.name + ".journal")
    return Driver(args.db, args.seed, args.tables, journal).run()



# --- over HTTP: the real ``moderator serve`` process, killed and restarted ------------------------------------
#
# ``python tests/crash_driver.py --serve DB_FILE`` runs ``moderator serve``'s app under uvicorn (settings from the
# environment, ``serve_env``) with the Bot API and Twilio's REST API replaced by fakes that journal every message
# they accept (fsync'd before they answer, so before the outbox marks it sent). ``HttpPlayers`` plays scripted
# 7-player tables through its webhooks and pages, Telegram, SMS and browser seats mixed at every table: one input at
# a time, the next only once the server has delivered everything the last one caused, so a run is a pure function
# of the seed however slow the machine is and wherever the server is killed. An input the server did not answer is
# sent again once it is back: the same update or MessageSid, and a browser's tap with the same nonce, as seat.js
# sends it again (also after a 5xx).

SECRET = "crash-webhook-secret"
FAST: Final = 1000
"""How much faster than the wall's the server's clock runs."""
FAST_AT: Final = 1_800_000_000.0
WALL_AT: Final = 1_790_000_000.0
"""The server's clock reads ``FAST_AT`` when the wall's reads ``WALL_AT``."""


def wall_time(server_time: float) -> float:
    """The wall-clock time a time of the server's (fast) clock stands for."""
    return (server_time - FAST_AT) / FAST + WALL_AT


def seat_channel(table: int, seat: int) -> str:
    """Telegram, SMS and browser seats take turns around every table (hosts alternate Telegram and SMS)."""
    if seat == 0:
        return "telegram" if table % 2 == 0 else "sms"
    return ("telegram", "sms", "web")[(table + seat) % 3]


def seat_token(table: int, seat: int) -> str:
    """A browser seat's token (its cookie): fixed, so its address is known before it joins."""
    return f"crash-browser-{table}-{seat}-" + hashlib.sha256(f"{table}/{seat}".encode()).hexdigest()[:16]


def seat_address(table: int, seat: int) -> str:
    """The address the service knows a scripted seat by: a Telegram user id, an E.164 number, a browser's hash."""
    from moderator.transports.web import address_of

    match seat_channel(table, seat):
        case "telegram":
            return str(10_000 + 10 * table + seat)
        case "web":
            return address_of(seat_token(table, seat))
    return f"+12025551{table % 10}{seat:02d}"


def serve_env(db: Path, port: int) -> dict[str, str]:
    """The environment of the server process."""
    from tests.fake_telegram import TOKEN
    from tests.fake_twilio import ACCOUNT_SID, AUTH_TOKEN, OUR_NUMBER

    return {
        **os.environ,
        "MODERATOR_DB": str(db),
        "MODERATOR_HOST": "127.0.0.1",
        "MODERATOR_PORT": str(port),
        "MODERATOR_PUBLIC_URL": f"http://127.0.0.1:{port}",
        "TELEGRAM_TOKEN": TOKEN,
        "TELEGRAM_WEBHOOK_SECRET": SECRET,
        "TWILIO_ACCOUNT_SID": ACCOUNT_SID,
        "TWILIO_AUTH_TOKEN": AUTH_TOKEN,
        "TWILIO_FROM": OUR_NUMBER,
        "MODERATOR_WEB": "on",
        "PYTHONPATH": str(Path(__file__).resolve().parent.parent),
    }


class Journal:
    """Appends one JSON line per accepted message, fsync'd before the fake answers."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.file = open(path, "ab")  # noqa: SIM115 - open for the server's lifetime

    def write(self, to: str, text: str, api: str = "send", *, sender: str | None = None,
              created: float | None = None) -> None:
        """One accepted message (``api``: ``send``, or ``edit`` for a message edited in place; a text: its sender
        and when Twilio created it)."""
        entry: dict[str, Any] = {"address": to, "text": text, "api": api}
        if created is not None:
            entry.update({"from": sender, "created": created})
        self.file.write((json.dumps(entry, ensure_ascii=False) + "\n").encode())
        self.file.flush()
        os.fsync(self.file.fileno())


def serve(db: Path, seed: int) -> None:
    """(The server process.) ``moderator serve``'s app with journaling fakes; every table's game seed is a
    function of ``seed`` and how many tables had started before it (set-up is sequential)."""
    import sqlite3

    import uvicorn

    from moderator.app import KEEP_ALIVE, create_app
    from moderator.settings import Settings
    from tests.fake_telegram import FakeBotAPI
    from tests.fake_twilio import FakeTwilio

    journal = Journal(db.with_name(db.name + ".journal"))

    class BotAPI(FakeBotAPI):
        def _result(self, api: str, params: dict[str, Any], chat: int | None) -> Any:
            if api == "setWebhook":
                return True
            result = super()._result(api, params, chat)
            if api in ("sendMessage", "editMessageText"):
                journal.write(f"telegram:{chat}", self._text(params)[0], "send" if api == "sendMessage" else "edit")
            elif api == "sendPhoto":
                journal.write(f"telegram:{chat}", self._text(params, "caption")[0])
            return result

    class Twilio(FakeTwilio):
        def request(self, method: str, uri: str, params: Any = None, data: Any = None, *args: Any,
                    **kwargs: Any) -> Any:
            response = super().request(method, uri, params, data, *args, **kwargs)
            if method == "POST" and response.status_code < 300:  # a text accepted (a GET looks texts up)
                form = dict(data or {})
                journal.write(f"sms:{form['To']}", str(form["Body"]), sender=str(form.get("From", "")),
                              created=self.created[-1])
            return response

    def table_seed() -> int:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
            started = conn.execute("SELECT count(*) FROM game_tables WHERE status != 'lobby'").fetchone()[0]
        return game_seed(seed, int(started))

    def fast() -> float:
        """A clock a thousand times faster than the wall's (and later after every restart): the Telegram channel
        paces counters to a few per minute, and the script waits for every message before its next input."""
        return FAST_AT + (time.time() - WALL_AT) * FAST

    # Twilio remembers the texts it accepted across the server's restarts (a lookup after a crash finds them).
    earlier = [e for e in read_journal(journal.path) if e["address"].startswith("sms:") and "created" in e]
    twilio = Twilio(clock=fast,
                    sent=[{"To": e["address"].removeprefix("sms:"), "From": e["from"], "Body": e["text"]}
                          for e in earlier],
                    created=[float(e["created"]) for e in earlier])
    settings = Settings.load()
    # Delivery looks for due messages every 10 ms, not 500: the script waits for every delivery before its next input
    # (and the Telegram channel's paced vote counters then go within 10 ms of their turn).
    app = create_app(settings, network={"telegram": BotAPI(clock=fast), "sms": twilio}, seed=table_seed,
                     clock=fast, deliver_every=0.01)
    uvicorn.run(app, host=settings.host, port=settings.port, log_level="warning", timeout_keep_alive=KEEP_ALIVE)


class Server:
    """``crash_driver.py --serve`` in a child process on a fixed port, started again after every kill."""

    def __init__(self, db: Path, seed: int) -> None:
        self.db, self.seed = db, seed
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = int(s.getsockname()[1])
        self.process: subprocess.Popen[bytes] | None = None
        self.lock = threading.Lock()
        self.starts = 0
        self.log = open(db.with_name(db.name + ".server.log"), "ab")  # noqa: SIM115 - every server's stderr
        """Every server's stderr (a pipe nobody reads would stop a server that logs much once it is full)."""
        self.restarts: list[float] = []
        """Wall-clock times at which a server was started after a kill."""

    def start(self) -> None:
        with self.lock:
            self.process = subprocess.Popen(
                [sys.executable, __file__, str(self.db), str(self.seed), "--serve"],
                env=serve_env(self.db, self.port), stdout=subprocess.DEVNULL, stderr=self.log)
            self.starts += 1
        self.wait_up()

    def wait_up(self, timeout: float = 60.0) -> None:
        """Return once the server answers /healthz (after a kill, the killer starts the next one)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1) as s:
                    s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                    if s.recv(64).startswith(b"HTTP/1.1 200"):
                        return
            except OSError:
                pass
            time.sleep(0.05)
        raise AssertionError("the server did not come up")

    def kill(self) -> None:
        """SIGKILL, and start the next one at once."""
        with self.lock:
            assert self.process is not None
            self.process.send_signal(signal.SIGKILL)
            self.process.wait()
            self.restarts.append(time.time())
        self.start()

    def stop(self) -> None:
        with self.lock:
            if self.process is not None and self.process.poll() is None:
                self.process.terminate()
                try:
                    self.process.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    self.process.kill()
                    self.process.wait()
            self.process = None
            self.log.flush()


class HttpPlayers:
    """The scripted seats of every table, playing through the server's webhooks (see the section's comment)."""

    def __init__(self, db: Path, seed: int, tables: int, port: int, *, wait_up: Any = None) -> None:
        import http.client

        self.db, self.seed, self.tables, self.port = db, seed, tables, port
        self.wait_up = wait_up or (lambda: None)
        """Called after a request got no answer: returns once a server is listening again."""
        self._connection: http.client.HTTPConnection | None = None
        self.ids = iter(range(1, 10**9))
        self.accepted: list[tuple[str, str]] = []
        """(channel, external id) of every input the server answered 200."""
        self.requests = 0
        """Requests sent so far (each sent again counts once more)."""
        self.retries = 0
        self.retried: Counter[str] = Counter()
        """Requests sent again, by the path's first part (``telegram``, ``sms``, ``join`` and ``play``: a browser)."""
        self.answer = b""
        """The body of the last answer."""

    # --- HTTP -------------------------------------------------------------------------------------------

    def _post(self, path: str, body: bytes, headers: dict[str, str], *, again_on_5xx: bool = False) -> int:
        """POST until the server answers (it may be down, or killed while it handles this): the status
        (``again_on_5xx``: a 5xx is sent again too, as seat.js does). The answer's body is in ``self.answer``."""
        import http.client

        while True:
            self.requests += 1
            try:
                if self._connection is None:
                    self._connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
                self._connection.request("POST", path, body, headers)
                response = self._connection.getresponse()
                self.answer = response.read()
                if again_on_5xx and response.status >= 500:
                    raise http.client.HTTPException(f"answered {response.status}")
                return response.status
            except (OSError, http.client.HTTPException):
                if self._connection is not None:
                    self._connection.close()
                    self._connection = None
                self.retries += 1
                self.retried[path.split("/")[1]] += 1
                self.wait_up()

    def telegram(self, update: dict[str, Any], external_id: str) -> None:
        from moderator.transports.telegram import SECRET_HEADER

        status = self._post("/telegram", json.dumps(update).encode(),
                            {"Content-Type": "application/json", SECRET_HEADER: SECRET})
        assert status == 200, f"telegram webhook answered {status}"
        self.accepted.append(("telegram", external_id))

    def sms(self, sender: str, text: str) -> None:
        from urllib.parse import urlencode

        from tests.fake_twilio import incoming, signature

        sid = f"SM{next(self.ids):032d}"
        form = incoming(sender, text, sid)
        url = f"http://127.0.0.1:{self.port}/sms"
        status = self._post("/sms", urlencode(form).encode(), {
            "Content-Type": "application/x-www-form-urlencoded", "X-Twilio-Signature": signature(url, form)})
        assert status == 200, f"sms webhook answered {status}"
        self.accepted.append(("sms", sid))

    def browser(self, table: int, seat: int, path: str, form: dict[str, str]) -> int:
        """A browser seat's POST, as its page sends it (its cookie, its Origin; a tap with ``X-Send``); a form's
        ``nonce`` is its input's id, the same when it is sent again."""
        from urllib.parse import urlencode

        from moderator.transports.web import SEAT_COOKIE

        row = self.table_row(table)
        assert row is not None
        status = self._post(path, urlencode(form).encode(), {
            "Content-Type": "application/x-www-form-urlencoded", "Origin": f"http://127.0.0.1:{self.port}",
            "Cookie": f"{SEAT_COOKIE}{row[0]}={seat_token(table, seat)}", "X-Send": "1"}, again_on_5xx=True)
        return status

    # --- the seats --------------------------------------------------------------------------------------

    def say(self, table: int, seat: int, text: str) -> None:
        """A seat types ``text`` (a Telegram command, or an SMS)."""
        address = seat_address(table, seat)
        if seat_channel(table, seat) == "sms":
            self.sms(address, text)
            return
        person = {"id": int(address), "is_bot": False, "first_name": f"P{seat}", "language_code": "en"}
        message: dict[str, Any] = {"message_id": next(self.ids), "from": person, "date": 1_800_000_000,
                                   "chat": {"id": int(address), "type": "private", "first_name": f"P{seat}"},
                                   "text": text}
        if text.startswith("/"):
            message["entities"] = [{"type": "bot_command", "offset": 0, "length": len(text.split()[0])}]
        update_id = next(self.ids)
        self.telegram({"update_id": update_id, "message": message}, str(update_id))

    def press(self, table: int, seat: int, prompt: dict[str, Any], token: str) -> None:
        """A Telegram seat presses a prompt's button (the message it was on is long gone: no edit applies)."""
        from moderator.transports.telegram import callback

        address = int(seat_address(table, seat))
        person = {"id": address, "is_bot": False, "first_name": f"P{seat}", "language_code": "en"}
        query_id = f"q{next(self.ids)}"
        query = {"id": query_id, "from": person, "chat_instance": str(address),
                 "data": callback(prompt["table"], prompt["decision"], token),
                 "message": {"message_id": 1, "date": 1_800_000_000, "text": "?",
                             "chat": {"id": address, "type": "private", "first_name": f"P{seat}"}}}
        self.telegram({"update_id": next(self.ids), "callback_query": query}, f"cb:{query_id}")

    def tap(self, table: int, seat: int, prompt: dict[str, Any], token: str) -> None:
        """A browser seat taps a prompt's button (in the background, as seat.js does: the answer is JSON)."""
        nonce = f"t{table}s{seat}d{prompt['decision']}"
        status = self.browser(table, seat, f"/play/{prompt['table']}",
                              {"token": token, "decision": str(prompt["decision"]), "nonce": nonce})
        assert status == 200, f"the seat's page answered {status}"
        if json.loads(self.answer).get("counted"):
            self.accepted.append(("web", f"web:{nonce}"))

    # --- what the server did (read from the database, committed) ------------------------------------------

    def _rows(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        import sqlite3

        with contextlib.closing(sqlite3.connect(f"file:{self.db}?mode=ro", uri=True, timeout=30)) as conn:
            return conn.execute(sql, params).fetchall()

    def settle(self, timeout: float = 60.0) -> None:
        """Wait until the outbox is delivered: whatever the last input caused has reached its phones."""
        deadline = time.monotonic() + timeout
        while self._rows("SELECT count(*) FROM outbox WHERE status = 'pending'")[0][0]:
            assert time.monotonic() < deadline, "the outbox is not delivered"
            time.sleep(0.01)

    def table_row(self, table: int) -> tuple[str, str | None, str] | None:
        """(id, join code, status) of a scripted table, found by its host's address."""
        rows = self._rows("SELECT id, code, status FROM game_tables WHERE host_address = ?",
                          (seat_address(table, 0),))
        return rows[0] if rows else None

    def prompt(self, table: int, seat: int) -> dict[str, Any] | None:
        """The newest prompt delivered to a seat."""
        rows = self._rows(
            "SELECT body FROM outbox WHERE channel = ? AND address = ? AND status = 'sent'"
            " AND json_extract(body, '$.kind') = 'prompt' ORDER BY id DESC LIMIT 1",
            (seat_channel(table, seat), seat_address(table, seat)))
        return json.loads(rows[0][0]) if rows else None

    # --- the script -------------------------------------------------------------------------------------

    def set_up(self, table: int) -> None:
        """Open the table (its host first), seat the six others in order, start."""
        host_sms = seat_channel(table, 0) == "sms"
        self.say(table, 0, "NEWGAME P0" if host_sms else "/newgame")
        self.settle()
        row = self.table_row(table)
        assert row is not None and row[1], f"table {table} has no join code"
        for seat in range(1, PLAYERS):
            match seat_channel(table, seat):
                case "web":
                    nonce = f"t{table}s{seat}join"
                    status = self.browser(table, seat, f"/join/{row[1]}", {"name": f"P{seat}", "nonce": nonce})
                    assert status == 303, f"the join page answered {status}"
                    self.accepted.append(("web", f"web:{nonce}"))
                case "sms":
                    self.say(table, seat, f"JOIN {row[1]} P{seat}")
                case _:
                    self.say(table, seat, f"/start {row[1]}")
            self.settle()
        self.say(table, 0, "GO" if host_sms else "/startgame")
        self.settle()

    def play(self) -> None:
        """Every table set up one after the other, then one answer at a time until every game is over."""
        for table in range(self.tables):
            self.set_up(table)
        answered: set[tuple[int, int, int]] = set()
        while True:
            moved = False
            for table in range(self.tables):
                row = self.table_row(table)
                assert row is not None
                if row[2] != "playing":
                    continue
                for seat in range(PLAYERS):
                    prompt = self.prompt(table, seat)
                    if prompt is None or prompt.get("decision") is None:
                        continue
                    key = (table, seat, int(prompt["decision"]))
                    if key in answered:
                        continue
                    answered.add(key)
                    rng = random.Random(f"{self.seed}/{table}/{seat}/{prompt['decision']}")
                    index = rng.randrange(len(prompt["options"]))
                    if seat_channel(table, seat) == "sms":
                        self.say(table, seat, str(index + 1))
                    elif seat_channel(table, seat) == "web":
                        self.tap(table, seat, prompt, prompt["options"][index][1])
                    else:
                        self.press(table, seat, prompt, prompt["options"][index][1])
                    self.settle()
                    moved = True
                    break
                if moved:
                    break
            if not moved:
                break
        stuck = [t for t in range(self.tables) if (self.table_row(t) or ("", "", ""))[2] != "over"]
        assert not stuck, f"tables {stuck} stopped before their game ended"


def play_while_killed(db: Path, seed: int, tables: int, kills: Sequence[tuple[int, float]]
                      ) -> tuple[HttpPlayers, Server, list[float]]:
    """Play ``HttpPlayers``' tables through a ``Server`` SIGKILLed and started again once for each of ``kills``:
    (request, seconds), that many seconds after the players have sent that many requests and the last kill is
    done; the players, the stopped server, and how long each kill that landed (before the games ended) took
    until ``/healthz`` answered again."""
    server = Server(db, seed)
    server.start()
    done = threading.Event()
    up: list[float] = []

    def killer() -> None:
        for request, delay in kills:
            while players.requests < request:
                if done.wait(0.005):
                    return
            if done.wait(delay):
                return
            started = time.perf_counter()
            server.kill()
            up.append(time.perf_counter() - started)

    players = HttpPlayers(db, seed, tables, server.port, wait_up=lambda: time.sleep(0.05))
    thread = threading.Thread(target=killer, daemon=True)
    try:
        thread.start()
        players.play()
        done.set()
        thread.join()
        players.settle()
    finally:
        # Also when a game got stuck: no killer may outlive the run and no server may outlive the test.
        done.set()
        thread.join()
        server.stop()
    return players, server, up


if __name__ == "__main__":
    sys.exit(main())
