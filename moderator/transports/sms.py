"""The SMS channel over Twilio: text messages in through a signed webhook, the outbox out through the REST API.

Usage::

    TWILIO_ACCOUNT_SID=AC... TWILIO_AUTH_TOKEN=... TWILIO_FROM=+15017122661 \\
    MODERATOR_PUBLIC_URL=https://moderator.example.org moderator sms

It translates and nothing else. ``POST /sms`` is Twilio's incoming-message webhook: the request's
``X-Twilio-Signature`` is checked against ``MODERATOR_PUBLIC_URL`` + ``/sms`` (the URL Twilio called, also behind
a proxy), the text becomes a command (``parse``) and an ``Inbound`` for ``Service.handle`` with the
``MessageSid`` as its id, so a retried webhook changes nothing; the reply is empty TwiML. Everything the players
receive goes through the outbox: ``SmsChannel`` folds what is due for one phone into as few texts as fit one
segment each, and ``SmsChannel`` sends each with the twilio ``Client``.

Twilio's own keywords (``STOP``, ``START``, ``HELP`` ...) are never game commands. Twilio answers them itself; an
opt-out also becomes ``OptOut`` (nothing more is queued for that phone, and the host is told).

Threads: the service runs on the web server's event loop thread (its SQLite connection belongs to that
thread); the sender runs on its own thread with its own ``Store`` connection to the same database file.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import re
import threading
import time
import unicodedata
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final
from urllib.parse import quote

import phonenumbers
import qrcode
import qrcode.image.svg
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from twilio.base.exceptions import TwilioException
from twilio.http.http_client import TwilioHttpClient
from twilio.request_validator import RequestValidator
from twilio.rest import Client
from twilio.twiml.messaging_response import MessagingResponse

from ..catalog import SMS_LIMIT, languages, sms_segments, to_gsm7
from ..commands import (
    AddComputers,
    Ask,
    Choose,
    Command,
    Decide,
    Host,
    HostCommand,
    Inbound,
    Join,
    MovePhone,
    MoveSeat,
    OpenTable,
    OptOut,
    Query,
    RemoveSeat,
    Seating,
    SetLanguage,
    SetTheme,
    Start,
)
from ..service import PermanentFailure, Sender, Service, TemporaryFailure
from ..store import OutboxRow, Store, default_path

log = logging.getLogger(__name__)

CHANNEL: Final = "sms"
"""The channel name in the store (``service.SMS_CHANNELS`` makes the renderer write one-segment texts for it)."""
WEBHOOK_PATH: Final = "/sms"
STATUS_PATH: Final = "/sms/status"
"""Twilio's delivery status callbacks for the texts we send (``status_callback``)."""
FINAL_STATUSES: Final = frozenset({"delivered", "undelivered", "failed", "canceled", "read"})
NOT_DELIVERED: Final = frozenset({"undelivered", "failed"})
"""Statuses that mean the text never reached the phone."""
_STATUS_ORDER: Final = {"accepted": 0, "scheduled": 0, "queued": 1, "sending": 2, "sent": 3}
"""Twilio's callbacks may arrive out of order: a later report of an earlier status changes nothing."""

# Twilio's reserved keywords (Advanced Opt-Out defaults): Twilio acts on a message that is exactly one of these
# words. They are never game commands, whatever else the message says.
OPT_OUT_WORDS: Final = frozenset({"stop", "stopall", "unsubscribe", "cancel", "end", "quit", "revoke", "optout"})
OPT_IN_WORDS: Final = frozenset({"start", "yes", "unstop"})
HELP_WORDS: Final = frozenset({"help", "info"})
RESERVED_WORDS: Final = OPT_OUT_WORDS | OPT_IN_WORDS | HELP_WORDS

OPTED_OUT_ERROR: Final = 21610
"""Twilio's error code for a send to a number that replied STOP."""
GERMAN_REGIONS: Final = frozenset({"DE", "AT", "LI"})
"""Numbers from these countries get German messages when a German catalog exists (``LANGUAGE xx`` changes it)."""


# --- configuration ----------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Settings:
    """What ``moderator sms`` reads from the environment."""

    account_sid: str | None
    auth_token: str | None
    sender: str | None
    """``TWILIO_FROM``: the number texts come from (E.164); also the number in the join QR code."""
    messaging_service_sid: str | None
    public_url: str
    api_url: str | None
    host: str
    port: int
    db_path: Path
    region: str | None
    """``MODERATOR_SMS_REGION`` (e.g. ``US``): how to read a number written without a country code."""
    status_callback: str | None = None
    """Where Twilio reports each text's delivery (``MODERATOR_PUBLIC_URL`` + ``/sms/status``); None without a
    public URL, since Twilio could not reach a local address."""

    @classmethod
    def load(cls, environ: Mapping[str, str] | None = None) -> Settings:
        env = {k: v for k, v in (os.environ if environ is None else environ).items() if v}
        host = env.get("MODERATOR_HOST", "127.0.0.1")
        port = int(env.get("MODERATOR_PORT", "8000"))
        db = env.get("MODERATOR_DB")
        return cls(
            account_sid=env.get("TWILIO_ACCOUNT_SID"),
            auth_token=env.get("TWILIO_AUTH_TOKEN"),
            sender=normalise_number(env["TWILIO_FROM"]) if "TWILIO_FROM" in env else None,
            messaging_service_sid=env.get("TWILIO_MESSAGING_SERVICE_SID"),
            public_url=env.get("MODERATOR_PUBLIC_URL", f"http://{host}:{port}").rstrip("/"),
            api_url=env.get("TWILIO_API_URL"),
            host=host,
            port=port,
            db_path=Path(db).expanduser() if db else default_path(),
            region=env.get("MODERATOR_SMS_REGION"),
            status_callback=env["MODERATOR_PUBLIC_URL"].rstrip("/") + STATUS_PATH if "MODERATOR_PUBLIC_URL" in env
            else None,
        )

    @property
    def complete(self) -> bool:
        """True when Twilio can be used: an account, its token, and a number or a Messaging Service."""
        return bool(self.account_sid and self.auth_token and (self.sender or self.messaging_service_sid))

    @property
    def webhook_url(self) -> str:
        """The URL Twilio is configured to call, which its signature covers."""
        return self.public_url + WEBHOOK_PATH

    @property
    def status_url(self) -> str:
        """The status callback URL Twilio calls, which its signature covers."""
        return self.public_url + STATUS_PATH

    def client(self, http_client: Any = None) -> Client:
        """The twilio REST client (``TWILIO_API_URL`` points it at a Twilio-compatible test server)."""
        client = Client(self.account_sid, self.auth_token, http_client=http_client or TwilioHttpClient(timeout=15))
        if self.api_url:
            client.api.base_url = self.api_url.rstrip("/")
        return client


def normalise_number(raw: str, region: str | None = None) -> str | None:
    """A phone number in E.164 (``+4915123456789``), or None if it is not a valid phone number."""
    if not re.fullmatch(r"\+?[0-9 ().\-/]{3,}", raw.strip()):
        return None  # "whatsapp:+1...", an alphanumeric sender, a short code name
    try:
        number = phonenumbers.parse(raw.strip(), region)
    except phonenumbers.NumberParseException:
        return None
    if not phonenumbers.is_valid_number(number):
        return None
    return phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164)


def language_of(number: str) -> str | None:
    """The language a number's country suggests, if we have a catalog for it; None means the default."""
    region = phonenumbers.region_code_for_number(phonenumbers.parse(number))
    return "de" if region in GERMAN_REGIONS and "de" in languages() else None


# --- text in: what a player's SMS means ---------------------------------------------------------------------

_HOST_WORDS: Final[dict[str, HostCommand]] = {
    "pause": HostCommand.PAUSE,
    "resume": HostCommand.RESUME,
    "nudge": HostCommand.NUDGE,
    "endgame": HostCommand.END,
    "rematch": HostCommand.REMATCH,
    "hostonly": HostCommand.PUBLIC_TO_HOST,
    "allphones": HostCommand.PUBLIC_TO_ALL,
    "cost": HostCommand.COST,
    "segments": HostCommand.COST,
}
_QUESTIONS: Final[dict[str, Query]] = {
    "status": Query.BOARD,
    "board": Query.BOARD,
    "whoami": Query.WHOAMI,
    "me": Query.WHOAMI,
    "role": Query.WHOAMI,
    "waiting": Query.WAITING,
    "who": Query.WAITING,
    "rules": Query.RULES,
    "regeln": Query.RULES,
    "commands": Query.HELP,
    "hint": Query.HELP,
}
_VERBS: Final[dict[str, str]] = {
    "nominate": "nominate",
    "investigate": "investigate",
    "elect": "special_election",
    "execute": "execute",
    "discard": "discard",
    "enact": "enact",
}


@dataclass(frozen=True, slots=True)
class Keyword:
    """A Twilio keyword: ``opt_out`` (STOP and friends), or one Twilio answers itself (START, HELP ...)."""

    word: str

    @property
    def opt_out(self) -> bool:
        return self.word in OPT_OUT_WORDS


def _fold(text: str) -> str:
    """Text as compared: GSM-7 letters, case-folded, punctuation dropped, single spaces."""
    plain = to_gsm7(unicodedata.normalize("NFKC", text)).casefold()
    return " ".join(re.sub(r"[^\w\s]", " ", plain).split())


def _numbered(text: str) -> str | None:
    """``2``, ``#2``, ``2.``, ``(2)``: the option number, or None."""
    match = re.fullmatch(r"\W*(\d{1,2})\W*", text)
    return match.group(1) if match else None


def _match_label(folded: str, prompt: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The choice of the last prompt whose label the text names: exactly, or as an unambiguous start."""
    if not prompt or not folded:
        return None
    choices = [c for c in prompt.get("choices") or [] if isinstance(c, dict)]
    labels = [(_fold(str(c.get("label", ""))), c) for c in choices]
    exact = [c for label, c in labels if label == folded]
    if len(exact) == 1:
        return exact[0]
    starts = [
        c for label, c in labels
        if label and ((len(folded) >= 2 and label.startswith(folded)) or (len(label) >= 3 and folded.startswith(label)))
    ]
    return starts[0] if len(starts) == 1 else None


def parse(text: str, prompt: Mapping[str, Any] | None = None) -> Command | Keyword:
    """What an SMS asks for. ``prompt`` is the last prompt this phone was sent (its choices and decision):
    a number or a name picks one of its options. Anything else asks the service, which answers with a hint."""
    raw = " ".join(text.split())
    folded = _fold(raw)
    words = folded.split()
    if len(words) == 1 and words[0] in RESERVED_WORDS:
        return Keyword(words[0])
    if raw.strip() == "?":
        return Ask(Query.HELP)
    decision = prompt.get("decision") if prompt else None
    number = _numbered(raw)
    if number is not None:
        choices = (prompt or {}).get("choices") or []
        index = int(number) - 1
        if 0 <= index < len(choices):
            return Choose(str(choices[index]["token"]), decision)
        return Choose(number, decision)
    if not words or words[0] in RESERVED_WORDS:
        return Decide("?", raw)
    head, args = words[0], words[1:]
    rest = raw.split(None, 1)[1] if len(raw.split(None, 1)) > 1 else ""
    if head in ("newgame", "new") and (head == "newgame" or args[:1] == ["game"]):
        name = rest if head == "newgame" else rest.split(None, 1)[1] if len(rest.split(None, 1)) > 1 else ""
        return OpenTable(name.strip())
    if head == "join" and args:
        code, _, name = rest.partition(" ")
        return Join(code.strip().upper(), name.strip())
    if folded in ("go", "los"):
        return Start()
    if head in ("seats", "order"):
        if not args:
            return Ask(Query.BOARD)
        names = [n for n in re.split(r"\s*,\s*" if "," in rest else r"\s+", rest.strip()) if n]
        return Seating(tuple(names))
    if head == "move" and len(args) >= 2 and args[-1].isdigit():
        return MoveSeat(rest.rsplit(None, 1)[0], int(args[-1]))
    if head in ("remove", "kick") and args:
        return RemoveSeat(rest)
    if head in ("bots", "computers"):
        return AddComputers(int(args[0]) if args and args[0].isdigit() else None)
    if head == "newphone" and args:
        return MovePhone(rest)
    if head in ("language", "lang", "sprache") and len(args) == 1:
        return SetLanguage(args[0])
    if head == "theme" and len(args) == 1:
        return SetTheme(args[0])
    if head == "results" and args in (["host"], ["all"]):
        return Host(HostCommand.PUBLIC_TO_HOST if args == ["host"] else HostCommand.PUBLIC_TO_ALL)
    if len(words) == 1 and head in _HOST_WORDS:
        return Host(_HOST_WORDS[head])
    if len(words) == 1 and head in _QUESTIONS:
        return Ask(_QUESTIONS[head])
    chosen = _match_label(folded, prompt)
    if chosen is not None:
        return Choose(str(chosen["token"]), decision)
    if folded in ("ja", "nein"):
        return Decide("vote", folded)
    if head in _VERBS and args:
        return Decide(_VERBS[head], rest)
    return Decide("?", raw)


# --- the webhook ------------------------------------------------------------------------------------------


class SmsGateway:
    """Turns one incoming SMS (the webhook's form fields) into one input for the service."""

    def __init__(self, service: Service, *, region: str | None = None) -> None:
        self.service = service
        self.region = region

    def receive(self, params: Mapping[str, str]) -> bool:
        """Handle one incoming message; False if it was not for us (no valid sender, not an SMS)."""
        sid = params.get("MessageSid") or params.get("SmsSid")
        address = normalise_number(params.get("From", ""), self.region)
        if not sid or address is None:
            return False
        body = params.get("Body", "")
        meaning = parse(body, self.service.store.last_prompt(CHANNEL, address))
        if isinstance(meaning, Keyword):
            if not meaning.opt_out:
                return True  # Twilio answers START and HELP itself; they mean nothing at the table
            meaning = OptOut()
        self.service.handle(
            Inbound(CHANNEL, address, meaning, external_id=sid, language=language_of(address), raw=body)
        )
        return True


    def delivery(self, params: Mapping[str, str]) -> bool:
        """Record a status callback for a text we sent; False if it names no text of ours or no known status.

        The first text to a seat's phone that is reported undelivered or failed tells the host (and the
        table's group), once per table and phone: the game waits for that player as for anyone.
        """
        sid = params.get("MessageSid") or params.get("SmsSid") or ""
        status = (params.get("MessageStatus") or params.get("SmsStatus") or "").lower()
        store = self.service.store
        text = store.sms_text(sid) if sid else None
        if text is None or not (status in _STATUS_ORDER or status in FINAL_STATUSES):
            return False
        if text.status in FINAL_STATUSES or _STATUS_ORDER.get(status, 9) < _STATUS_ORDER.get(text.status, 9):
            return True  # already final, or an older report that arrived late
        told = text.table_id is not None and bool(
            set(store.sms_statuses(text.table_id, 0.0, text.address)) & NOT_DELIVERED
        )
        with store.transaction():
            store.set_sms_status(sid, status, params.get("ErrorCode") or None, self.service.clock())
        if status in NOT_DELIVERED and not told:
            log.info("an SMS was reported %s (error %s)", status, params.get("ErrorCode") or "-")
            self.service.unreachable(CHANNEL, text.address, undelivered=True)
        return True


def _twiml() -> Response:
    return Response(str(MessagingResponse()), media_type="application/xml")


def create_app(
    settings: Settings,
    store_factory: Callable[[], Store],
    *,
    channel: SmsChannel | None = None,
    deliver_every: float | None = 0.5,
    **service_options: Any,
) -> Starlette:
    """The web app: ``POST /sms``. On start it opens the store, resumes every table and (with ``channel`` and
    ``deliver_every``) starts the sender thread, which opens its own ``store_factory()`` connection."""
    assert settings.auth_token, "the webhook needs TWILIO_AUTH_TOKEN to check signatures"
    validator = RequestValidator(settings.auth_token)

    async def signed(request: Request, public_url: str, path: str) -> dict[str, str] | None:
        """The form Twilio sent to ``public_url``, or None (logged) if its signature does not check."""
        form = await request.form()
        url = public_url + (f"?{request.url.query}" if request.url.query else "")
        signature = request.headers.get("X-Twilio-Signature", "")
        if not signature or not validator.validate(url, form, signature):
            log.warning("refused a request to %s without a valid Twilio signature", path)
            return None
        return {k: str(v) for k, v in form.items()}

    async def webhook(request: Request) -> Response:
        params = await signed(request, settings.webhook_url, WEBHOOK_PATH)
        if params is None:
            return Response(status_code=403)
        gateway: SmsGateway = request.app.state.gateway
        if not gateway.receive(params):
            log.info("ignored an SMS webhook without a usable sender or message id")
        return _twiml()

    async def status(request: Request) -> Response:
        params = await signed(request, settings.status_url, STATUS_PATH)
        if params is None:
            return Response(status_code=403)
        gateway: SmsGateway = request.app.state.gateway
        if not gateway.delivery(params):
            log.info("ignored a status callback for no text of ours")
        return Response(status_code=204)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        store = store_factory()
        service = Service(store, **service_options)
        app.state.gateway = SmsGateway(service, region=settings.region)
        app.state.service = service
        service.resume_all()
        worker = None
        if channel is not None and deliver_every is not None:
            worker = SenderThread(store_factory, channel, interval=deliver_every)
            worker.start()
        try:
            yield
        finally:
            if worker is not None:
                worker.stop()
            store.close()

    routes = [Route(WEBHOOK_PATH, webhook, methods=["POST"]), Route(STATUS_PATH, status, methods=["POST"])]
    return Starlette(routes=routes, lifespan=lifespan)


# --- text out ---------------------------------------------------------------------------------------------


def fit_sms(text: str) -> str:
    """``text`` as one GSM-7 segment: transliterated, and cut (logged: the renderer should never need it)."""
    plain = to_gsm7(text)
    if len(plain) > SMS_LIMIT:
        log.warning("an SMS was %d characters; cut to %d", len(plain), SMS_LIMIT)
        plain = plain[: SMS_LIMIT - 3] + "..."
    return plain


@dataclass(frozen=True, slots=True)
class Text:
    """One SMS text sent or tried: the messages it carried, Twilio's SID and segment count if it went out, or
    its failure."""

    parts: tuple[dict[str, Any], ...]
    sid: str | None = None
    segments: int = 0
    status: str = "queued"
    failure: Exception | None = None


@dataclass
class SmsChannel:
    """The service's ``Channel`` for phones: what is due for one phone goes out as few one-segment texts as it
    can (``fold``), one ``messages.create`` each; Twilio's errors are mapped to the Sender's failures."""

    client: Client
    sender: str | None = None
    messaging_service_sid: str | None = None
    on_join_code: Callable[[str], None] | None = None
    """Called with a table's join code when its host is told it (``moderator sms`` prints the QR code)."""
    status_callback: str | None = None
    """The URL Twilio reports each text's delivery status to (``Settings.status_callback``), if any."""
    texts: int = 0
    """Texts sent so far (each one segment)."""

    def send(self, address: str, body: dict[str, Any]) -> None:
        """Deliver one message (see ``send_batch``)."""
        result = self.send_batch(address, [body])[0]
        if result is not None:
            raise result

    def send_batch(self, address: str, bodies: Sequence[dict[str, Any]]) -> list[Exception | None]:
        """Deliver everything due for one phone, oldest first, folded into one-segment texts."""
        results: list[Exception | None] = []
        for text in self.send_texts(address, bodies):
            results.extend([text.failure] * len(text.parts))
        return results

    def send_texts(self, address: str, bodies: Sequence[dict[str, Any]]) -> list[Text]:
        """Each text sent for these messages, in order (what it carried, and its SID or its failure)."""
        out: list[Text] = []
        failure: Exception | None = None
        for group in fold(bodies):
            if failure is not None:
                out.append(Text(tuple(group), failure=failure))  # nothing later overtakes a failed text
                continue
            text = self._create(address, group)
            out.append(text)
            failure = text.failure
            codes = [str(b["join_code"]) for b in group if b.get("join_code")]
            if failure is None and codes and self.on_join_code is not None:
                self.on_join_code(codes[0])
            if isinstance(failure, PermanentFailure) and str(OPTED_OUT_ERROR) not in str(failure):
                failure = None  # this text can never go; the next ones may
        return out

    def _create(self, address: str, group: list[dict[str, Any]]) -> Text:
        origin: dict[str, str] = (
            {"messaging_service_sid": self.messaging_service_sid}
            if self.messaging_service_sid
            else {"from_": self.sender or ""}
        )
        if self.status_callback:
            origin["status_callback"] = self.status_callback
        body = fit_sms(merged_text(group))
        try:
            message = self.client.messages.create(to=address, body=body, **origin)
        except TwilioException as exc:
            status = getattr(exc, "status", None)
            code = getattr(exc, "code", None)
            if status == 429 or (isinstance(status, int) and status >= 500):
                return Text(tuple(group), failure=TemporaryFailure(f"twilio {status} ({code})"))
            return Text(tuple(group), failure=PermanentFailure(f"twilio {status} ({code})"))
        except OSError as exc:  # requests' connection errors and timeouts are OSErrors
            return Text(tuple(group), failure=TemporaryFailure(f"network: {exc}"))
        self.texts += 1
        sid = getattr(message, "sid", None)
        segments = getattr(message, "num_segments", None)
        return Text(
            tuple(group),
            sid=sid if isinstance(sid, str) else None,
            segments=int(segments) if isinstance(segments, (int, str)) and str(segments).isdecimal()
            else sms_segments(body),
            status=str(getattr(message, "status", None) or "queued"),
        )


def _strip_header(text: str) -> str:
    return text.split("\n", 1)[1] if "\n" in text else ""


IMPLIED_BY: Final[Mapping[str, frozenset[str]]] = {
    # In one text, a part is left out when a later part says the same: the vote prompt names the President
    # and the Chancellor, the nomination prompt tells its reader they are the candidate, and the game's first
    # line repeats the start. The left-out part still counts as delivered (it was, in other words).
    "chancellor-nominated": frozenset({"prompt-vote"}),
    "presidential-candidate": frozenset({"prompt-nominate"}),
    "presidential-candidate-special": frozenset({"prompt-nominate"}),
    "game-starting": frozenset({"game-started"}),
}


def fold(bodies: Iterable[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Messages due for one phone, in order, in groups that each go out as one text of at most one segment.

    A group ends with a prompt (its options stay last), and a secret part makes the whole text start with the
    neutral private header. The deal may share a text: it is padded to one length for every role, so what
    shares it, and the text's length, depend on public facts only.
    """
    groups: list[list[dict[str, Any]]] = []
    for body in bodies:
        last = groups[-1] if groups else None
        if last is not None and not last[-1].get("choices") and len(merged_text([*last, body])) <= SMS_LIMIT:
            last.append(body)
        else:
            groups.append([body])
    return groups


def _shown(bodies: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The parts of one text that are written out: those no later part implies (``IMPLIED_BY``)."""
    ids = [b.get("message_id") for b in bodies]
    return [
        b for i, b in enumerate(bodies)
        if not IMPLIED_BY.get(str(ids[i]), frozenset()).intersection(ids[i + 1:])
    ]


def merged_text(bodies: Sequence[dict[str, Any]]) -> str:
    """The text of messages sent as one SMS: the header first if any is secret, then every part in order
    (less the parts a later one implies)."""
    shown = _shown(bodies)
    texts = [to_gsm7(str(b.get("text", ""))) for b in shown]
    if len(texts) == 1:
        return texts[0]
    secret = [t for b, t in zip(shown, texts, strict=True) if b.get("secret")]
    parts = [_strip_header(t) if b.get("secret") else t for b, t in zip(shown, texts, strict=True)]
    header = [secret[0].split("\n", 1)[0]] if secret else []
    return "\n".join(header + parts)


class SmsSender(Sender):
    """The service's ``Sender`` for SMS: like ``SmsChannel.send_batch``, it folds what is due for one phone into
    one-segment texts, and records each text it sent (Twilio's SID, table, segments), so the service can count
    what a game cost (``COST``) and a status callback can find the text it reports on."""

    def __init__(self, store: Store, channel: SmsChannel, **options: Any) -> None:
        super().__init__(store, {CHANNEL: channel}, **options)
        self.channel = channel
        self._stamp = 0.0

    def _deliver(self, limit: int) -> int:
        """Send what is due; returns how many outbox messages went out (``deliver_due`` records them)."""
        now = self.clock()
        by_phone: dict[str, list[OutboxRow]] = {}
        sent: list[tuple[str, str | None, str, int, str]] = []
        for row in self.store.due(now, limit, channels=[CHANNEL]):
            by_phone.setdefault(row.address, []).append(row)
        delivered = 0
        try:
            for address, rows in by_phone.items():
                bodies = [{**r.body, "message_id": r.message_id, "outbox_id": r.id} for r in rows]
                by_id = {r.id: r for r in rows}
                for text in self.channel.send_texts(address, bodies):
                    stamp = self._next_stamp()
                    for body in text.parts:
                        delivered += self._settle(by_id[body["outbox_id"]], text.failure, now, stamp)
                    if text.sid is not None:
                        table = by_id[text.parts[0]["outbox_id"]].table_id
                        sent.append((text.sid, table, address, text.segments, text.status))
        finally:
            if sent:  # what went out is counted (COST) and its status callbacks find it
                self.store.record_sms(sent, now)
        return delivered

    def _next_stamp(self) -> float:
        self._stamp = max(self.clock(), self._stamp + 1e-6)
        return self._stamp


@dataclass
class SenderThread:
    """Runs the service's ``Sender`` for SMS on its own thread with its own store connection until stopped."""

    store_factory: Callable[[], Store]
    channel: SmsChannel
    interval: float = 0.5
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="sms-sender", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)

    def _run(self) -> None:
        store = self.store_factory()
        sender = SmsSender(store, self.channel)
        try:
            while not self._stop.is_set():
                try:
                    busy = sender.deliver_due()
                except Exception:  # a bug must not stop delivery for every table
                    log.exception("the SMS sender failed; trying again")
                    busy = 0
                if not busy:
                    self._stop.wait(self.interval)
        finally:
            store.close()


# --- the join QR code -------------------------------------------------------------------------------------


def join_link(number: str, code: str) -> str:
    """An ``sms:`` link that opens a text to the table's number with ``JOIN <code>`` already typed."""
    return f"sms:{number}?body={quote(f'JOIN {code}')}"


def qr_png(data: str) -> bytes:
    """A QR code as PNG bytes."""
    buffer = io.BytesIO()
    qrcode.make(data, error_correction=qrcode.constants.ERROR_CORRECT_M, box_size=10, border=4).save(buffer)
    return buffer.getvalue()


def qr_svg(data: str) -> str:
    """A QR code as one SVG document (a single path: prints sharp at any size)."""
    image = qrcode.make(data, image_factory=qrcode.image.svg.SvgPathImage, border=4)
    text: str = image.to_string(encoding="unicode")
    return text


def qr_text(data: str) -> str:
    """A QR code drawn with half-block characters, for a terminal."""
    code = qrcode.QRCode(border=2)
    code.add_data(data)
    code.make(fit=True)
    out = io.StringIO()
    code.print_ascii(out=out, invert=True)
    return out.getvalue()


def serve(settings: Settings) -> int:
    """``moderator sms``: the webhook under uvicorn, the sender thread, every table resumed."""
    import uvicorn

    client = settings.client()
    number = settings.sender

    def show(code: str) -> None:
        if number:
            link = join_link(number, code)
            print(qr_text(link), link, sep="\n", flush=True)

    channel = SmsChannel(client, settings.sender, settings.messaging_service_sid, on_join_code=show,
                         status_callback=settings.status_callback)
    app = create_app(settings, lambda: Store(settings.db_path), channel=channel, clock=time.time)
    log.info("SMS webhook at %s", settings.webhook_url)
    uvicorn.run(app, host=settings.host, port=settings.port, log_level="info")
    return 0
