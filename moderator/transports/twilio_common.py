"""What the Twilio channels (SMS, WhatsApp) share: the REST client, the signed webhooks, delivery reports, the
lookup of a message sent before a crash, Twilio's errors as the port's failures, and folding what is due for one
address into as few messages as fit.

It is plumbing, not a channel (it exports no ``SPEC``): each channel module gives it its own paths, limits and
capabilities. Twilio carries SMS and WhatsApp through the same Messages API and signs every webhook the same way,
with the account's auth token over the URL it called (``MODERATOR_PUBLIC_URL`` + the path) and the form.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Protocol

import phonenumbers
import requests
from babel.languages import get_official_languages
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route
from twilio.base.exceptions import TwilioException, TwilioRestException
from twilio.http.http_client import TwilioHttpClient
from twilio.request_validator import RequestValidator
from twilio.rest import Client
from twilio.twiml.messaging_response import MessagingResponse

from ..catalog import DEFAULT_LANGUAGE, languages
from ..channels import (
    Capabilities,
    Delivered,
    Kind,
    NotStored,
    Outbound,
    PermanentFailure,
    Port,
    Refused,
    Result,
    Running,
    StatusScale,
    TemporaryFailure,
    Unreachable,
)
from ..commands import number
from ..settings import Settings

log = logging.getLogger(__name__)

PROVIDER: Final = "Twilio"
MAX_BODY: Final = 64 * 1024
"""Bytes of a webhook body the server lets through at most (counted as it streams, before the signature check
parses the form). Twilio posts ``application/x-www-form-urlencoded``: about 20 fields and a Body of at most 1,600
characters (percent-encoded, up to 12 bytes each: about 19 KB), plus up to ten media URLs. 64 KB is generous."""
FINAL_STATUSES: Final = frozenset({"delivered", "undelivered", "failed", "canceled", "read"})
NOT_DELIVERED: Final = frozenset({"undelivered", "failed"})
"""Statuses that mean the message never reached the phone."""
STATUS_ORDER: Final = {"accepted": 0, "scheduled": 0, "queued": 1, "sending": 2, "sent": 3}
"""Twilio's callbacks may arrive out of order: a later report of an earlier status changes nothing."""
STATUSES: Final = StatusScale(STATUS_ORDER, FINAL_STATUSES, NOT_DELIVERED)
LOOKUP_LIMIT: Final = 20
"""Newest messages to a phone looked at to find one sent before a crash (a burst to one phone is a few)."""


def refused() -> Refused:
    """Twilio refuses the account or its key (answered 401): the line names the settings, never their values."""
    return Refused(PROVIDER, "TWILIO_ACCOUNT_SID or TWILIO_AUTH_TOKEN", "check them in the Twilio Console")


def unreachable(exc: OSError) -> Unreachable | None:
    """Twilio out of reach, if ``exc`` (from requests, under the twilio client) says no connection was made: nothing
    was sent. None for a failure after the request went (it may have been taken: the lookup decides)."""
    if isinstance(exc, requests.exceptions.ConnectTimeout):
        return Unreachable(PROVIDER, "the connection timed out")
    reason = getattr(exc.args[0], "reason", None) if exc.args else None
    if isinstance(exc, requests.exceptions.ConnectionError) and reason is not None and (
            "NewConnectionError" in type(reason).__name__ or "NameResolution" in type(reason).__name__):
        return Unreachable(PROVIDER, str(reason).split("): ", 1)[-1])  # without the host's and the path's words
    return None


# --- the account -----------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Account:
    """The Twilio account both channels use, and where this server is reached from the internet."""

    account_sid: str | None
    auth_token: str | None
    public_url: str
    """``MODERATOR_PUBLIC_URL`` (or this server's own address, which Twilio cannot reach)."""
    public: bool
    """A public address is set: Twilio can call back (delivery reports)."""
    api_url: str | None

    @classmethod
    def of(cls, settings: Settings) -> Account:
        env = settings.env
        public = settings.public_url
        return cls(account_sid=env.get("TWILIO_ACCOUNT_SID"), auth_token=env.get("TWILIO_AUTH_TOKEN"),
                   public_url=public or f"http://{settings.host}:{settings.port}", public=bool(public),
                   api_url=env.get("TWILIO_API_URL"))

    @property
    def complete(self) -> bool:
        return bool(self.account_sid and self.auth_token)

    def client(self, http_client: Any = None) -> Client:
        """The twilio REST client (``TWILIO_API_URL`` points it at a Twilio-compatible test server)."""
        client = Client(self.account_sid, self.auth_token, http_client=http_client or TwilioHttpClient(timeout=15))
        if self.api_url:
            client.api.base_url = self.api_url.rstrip("/")
        return client


def join_page(settings: Settings) -> Callable[[str], str | None]:
    """The address of a join code's page (every way to take a seat), if the server has a public address."""
    public = settings.public_url
    return lambda code: f"{public}/join/{code}" if public else None


def checker(account: Account, network: Any, channel: str) -> Callable[[], Awaitable[None]]:
    """``Running.check`` of a Twilio channel: asks Twilio for the account (``check_account``) with a client of its
    own (the sender's is used on the sender's thread meanwhile)."""

    async def check() -> None:
        await asyncio.to_thread(check_account, account.client(network), account.account_sid or "", channel)

    return check


def check_account(client: Client, account_sid: str, channel: str) -> None:
    """Ask Twilio for the account: ``Refused`` if it refuses the account or its key, ``Unreachable`` if it cannot
    be reached or is unwell (messages still come in through the webhook meanwhile)."""
    try:
        client.api.v2010.accounts(account_sid).fetch()
    except TwilioRestException as exc:
        if exc.status in (401, 403):
            raise refused() from None
        if exc.status == 429 or exc.status >= 500:
            raise Unreachable(PROVIDER, f"it answered {exc.status}") from None
        log.info("%s: Twilio answered %d when asked for the account; messages are tried as they come", channel,
                 exc.status)
    except OSError as exc:
        raise (unreachable(exc) or Unreachable(PROVIDER, type(exc).__name__)) from None


# --- phone numbers ---------------------------------------------------------------------------------------------


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
    """The language a number's country suggests (the first of its official languages, CLDR's, that a catalog
    speaks: German for Austria, Persian for Iran), if any; None means the default. ``LANGUAGE xx`` changes it."""
    region = phonenumbers.region_code_for_number(phonenumbers.parse(number))
    spoken = get_official_languages(region, de_facto=True) if region else ()
    return next((lang for lang in spoken if lang in languages()), None)


# --- the webhooks ----------------------------------------------------------------------------------------------


def twiml(reply: str | None = None) -> Response:
    """Twilio's answer to an incoming message: empty, or one message back."""
    answer = MessagingResponse()
    if reply is not None:
        answer.message(reply)
    return Response(str(answer), media_type="application/xml")


def status_of(params: Mapping[str, str]) -> tuple[str, str] | None:
    """A status callback's message SID and status (lower case), or None if it names no known status."""
    sid = params.get("MessageSid") or params.get("SmsSid") or ""
    status = (params.get("MessageStatus") or params.get("SmsStatus") or "").lower()
    if not sid or not (status in STATUS_ORDER or status in FINAL_STATUSES):
        return None
    return sid, status


def report(port: Port, channel: str, params: Mapping[str, str]) -> bool:
    """Hand one status callback to the service; False if it names no message of ours or no known status."""
    found = status_of(params)
    if found is None:
        return False
    sid, status = found
    known = port.delivery_report(channel, sid, status, params.get("ErrorCode") or None, STATUSES)
    if known and status in NOT_DELIVERED:
        log.info("a message on %s was reported %s (error %s)", channel, status, params.get("ErrorCode") or "-")
    return known


class Gateway(Protocol):
    """What a Twilio channel's webhooks hand their forms to (``Running.state`` of that channel)."""

    def receive(self, params: Mapping[str, str]) -> bool:
        """An incoming message to the port; False if the form names no usable sender or message."""
        ...

    def delivery(self, params: Mapping[str, str]) -> bool:
        """A delivery report; False if it names no message of ours or no known status."""
        ...


def routes(account: Account, channel: str, webhook_path: str, status_path: str,
           not_stored: Callable[[Mapping[str, str]], str]) -> list[BaseRoute]:
    """``POST webhook_path`` (incoming messages) and ``POST status_path`` (delivery reports) of ``channel``, each
    refused (403, logged) unless Twilio's signature checks against ``MODERATOR_PUBLIC_URL`` + the path and the form.
    An incoming message that could not be stored is answered with ``not_stored(form)``: Twilio never sends a webhook
    again, so the person must, and is told so in the answer itself (nothing can be put in the outbox now)."""
    assert account.auth_token, "the webhook needs TWILIO_AUTH_TOKEN to check signatures"
    validator = RequestValidator(account.auth_token)

    def gateway(request: Request) -> Gateway:
        running: Running = request.app.state.channels[channel]
        found: Gateway = running.state
        return found

    async def receive(request: Request, params: dict[str, str]) -> Response:
        try:
            if not gateway(request).receive(params):
                log.info("%s: ignored a webhook without a usable sender or message id", channel)
        except NotStored as exc:
            log.log(logging.DEBUG if exc.said else logging.ERROR,  # said once already by the store if ``said``
                    "%s: an input could not be stored (%s); its sender is asked to send it again", channel, exc)
            return twiml(not_stored(params))
        return twiml()

    async def status(request: Request, params: dict[str, str]) -> Response:
        if not gateway(request).delivery(params):
            log.info("%s: ignored a status callback for no message of ours", channel)
        return Response(status_code=204)

    def signed(path: str, handler: Callable[[Request, dict[str, str]], Awaitable[Response]]
               ) -> Callable[[Request], Awaitable[Response]]:
        public_url = account.public_url + path

        async def endpoint(request: Request) -> Response:
            form = await request.form(max_files=0)
            url = public_url + (f"?{request.url.query}" if request.url.query else "")
            signature = request.headers.get("X-Twilio-Signature", "")
            if not signature or not validator.validate(url, form, signature):
                log.warning("refused a request to %s without a valid Twilio signature", path)
                return Response(status_code=403)
            return await handler(request, {k: str(v) for k, v in form.items()})

        return endpoint

    return [Route(webhook_path, signed(webhook_path, receive), methods=["POST"]),
            Route(status_path, signed(status_path, status), methods=["POST"])]


# --- sending ---------------------------------------------------------------------------------------------------


@dataclass
class Messages:
    """One Twilio sender (a number, a WhatsApp sender or a Messaging Service): sends one message, asking Twilio
    first whether it took it already when it may have gone before a crash, and maps Twilio's errors."""

    client: Client
    sender: str | None = None
    messaging_service_sid: str | None = None
    status_callback: str | None = None
    error: int | None = None
    """Twilio's error code for the last message it refused for good (a 4xx answer), else None."""

    def origin(self) -> dict[str, str]:
        origin: dict[str, str] = (
            {"messaging_service_sid": self.messaging_service_sid}
            if self.messaging_service_sid
            else {"from_": self.sender or ""}
        )
        if self.status_callback:
            origin["status_callback"] = self.status_callback
        return origin

    def create(self, address: str, body: str, handed: float | None, units: int, **extra: str) -> Result:
        """Send ``body`` to ``address`` (``units``: what it costs if Twilio does not say); ``handed``: it may have
        gone before a crash, so Twilio is asked first."""
        self.error = None
        if handed is not None:
            try:
                taken = self.accepted(address, body, handed)
            except (TwilioException, OSError) as exc:
                if getattr(exc, "status", None) == 401:
                    return refused()
                outage = unreachable(exc) if isinstance(exc, OSError) else None
                return outage or TemporaryFailure(f"twilio lookup: {type(exc).__name__}")
            if taken is not None:
                return taken
        try:
            message = self.client.messages.create(to=address, body=body, **self.origin(), **extra)
        except TwilioException as exc:
            status = getattr(exc, "status", None)
            code = getattr(exc, "code", None)
            if status == 401:  # the account or its key: nothing goes until the settings change
                return refused()
            if status == 429 or (isinstance(status, int) and status >= 500):
                return TemporaryFailure(f"twilio {status} ({code})")
            self.error = code if isinstance(code, int) else None
            return PermanentFailure(f"twilio {status} ({code})")
        except OSError as exc:  # requests' connection errors and timeouts are OSErrors
            return unreachable(exc) or TemporaryFailure(f"network: {type(exc).__name__}")
        sid = getattr(message, "sid", None)
        segments = getattr(message, "num_segments", None)
        counted = number(str(segments)) if isinstance(segments, (int, str)) else None
        return Delivered(
            ref=sid if isinstance(sid, str) else None,
            units=units if counted is None else counted,
            status=str(getattr(message, "status", None) or "queued"),
        )

    def accepted(self, address: str, body: str, since: float) -> Delivered | None:
        """The message Twilio accepted for this address with this body since ``since`` (less a minute of clock
        skew), if any: found by recipient, sender and recency (a queued one has no send date yet, so not by
        date)."""
        sender = {} if self.messaging_service_sid else {"from_": self.sender or ""}
        for message in self.client.messages.list(to=address, limit=LOOKUP_LIMIT, **sender):
            created = message.date_created
            if message.body == body and (created is None or created.timestamp() >= since - 60.0):
                counted = number(message.num_segments) if message.num_segments else None
                return Delivered(ref=message.sid, units=1 if counted is None else counted,
                                 status=str(message.status or "queued"))
        return None


# --- folding what is due for one address into few messages -------------------------------------------------


def strip_header(text: str, caps: Capabilities) -> str:
    """A secret part's text without its neutral header (the merged text has one header for all)."""
    return "\n".join(text.split("\n")[caps.preview_lines:])


def shown(messages: Sequence[Outbound]) -> list[Outbound]:
    """The parts of one message that are written out: those no later part says again. A call to decide is said
    again by the prompt for that decision; a closed seat list by the opening of the game it started. The
    left-out part still counts as delivered (it was, in other words)."""
    out = []
    for i, m in enumerate(messages):
        later = messages[i + 1:]
        if m.kind is Kind.CALL and any(n.kind is Kind.PROMPT and n.decision == m.decision for n in later):
            continue
        closed = m.kind is Kind.LOBBY and m.seating is not None and not m.seating.open
        if closed and any(n.decision == m.decision for n in later):
            continue
        out.append(m)
    return out


def merged_text(messages: Sequence[Outbound], caps: Capabilities,
                text: Callable[[Outbound], str] | None = None) -> str:
    """The text of messages sent as one, as the phone gets it (``Capabilities.written``, or ``text``): the header
    first if any is secret, then every part in order (less the parts a later one says again)."""
    parts_shown = shown(messages)
    texts = [text(m) if text is not None else caps.written(m.text, m.language) for m in parts_shown]
    if len(texts) == 1:
        return texts[0]
    secret = [t for m, t in zip(parts_shown, texts, strict=True) if m.secret]
    parts = [strip_header(t, caps) if m.secret else t for m, t in zip(parts_shown, texts, strict=True)]
    header = secret[0].split("\n")[:caps.preview_lines] if secret else []
    return "\n".join(header + parts)


def fold(messages: Sequence[Outbound], caps: Capabilities, limit: Callable[[str], int],
         text: Callable[[Outbound], str] | None = None) -> list[list[int]]:
    """Messages due for one address, in order, in groups (of their places) that each go out as one message within
    its language's ``limit``.

    A group ends with a prompt (its options stay last), and a secret part makes the whole message start with the
    neutral private header. The deal may share a message: it is padded to one length for every role, so what
    shares it, and the message's length, depend on public facts only.
    """
    groups: list[list[int]] = []
    for i in range(len(messages)):
        last = groups[-1] if groups else None
        if (last is not None and messages[last[-1]].kind is not Kind.PROMPT
                and messages[last[-1]].language == messages[i].language
                and len(merged_text([messages[j] for j in [*last, i]], caps, text)) <= limit(messages[i].language)):
            last.append(i)
        else:
            groups.append([i])
    return groups


def with_links(body: str, parts: Sequence[Outbound], screen_url: Callable[[str], str | None],
               join_page: Callable[[str], str | None], limit: Callable[[str], int],
               writable: Callable[[str, str], bool] = lambda url, language: True) -> str:
    """The message, and on new lines after a join code its join page's address, and after a join code or a game's
    end the table screen's, each where it exists, the message still fits its ``limit`` and the address can be
    written in its alphabet (links only where they exist: no table screen without the browser channel)."""
    urls = [join_page(m.join_code) for m in parts if m.kind is Kind.JOIN and m.join_code]
    linked = [m.table for m in parts if m.table and m.kind in (Kind.JOIN, Kind.END)]
    urls += [screen_url(linked[-1])] if linked else []
    language = parts[-1].language if parts else DEFAULT_LANGUAGE
    for url in urls:
        if url and len(body) + 1 + len(url) <= limit(language) and writable(url, language):
            body += "\n" + url
    return body
