"""The WhatsApp channel over Twilio: messages in through a signed webhook, the outbox out through the REST API.

It translates and nothing else, with the Twilio plumbing it shares with SMS (``twilio_common``). ``POST /whatsapp``
is the WhatsApp sender's incoming-message webhook, its ``X-Twilio-Signature`` checked against
``MODERATOR_PUBLIC_URL`` + ``/whatsapp``; addresses are ``whatsapp:+E.164``; the sender's WhatsApp profile name
(``ProfileName``) is their name when they join or open a table without typing one. Everything the players receive
goes through the outbox: what is due for one phone goes as one message (up to 1,600 characters, no segments), in
the catalogs' full sentences with names as written, the decision asked in ``*bold*``, a secret below the lines a
locked phone shows; ``POST /whatsapp/status`` hands Twilio's delivery reports to the service.

WhatsApp lets a business write freely only within 24 hours of the person's last message. The channel knows when
each phone last wrote (from the webhook, and after a restart from Twilio's own message log) and sends nothing
outside that window: the service hears the seat is away (``OptOut(Away.SILENT)``: the host is told once, nothing
is sent meanwhile), and the person's next message brings what they know and the decision the table waits for.
A template (``TWILIO_WHATSAPP_TEMPLATE_SID``) goes instead, once, only where the operator configured one. Twilio's
window error (63016), a number that blocked the business or is not on WhatsApp, and a phone that left the sandbox
say the same to the service, from the send or from a delivery report.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections import deque
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Final
from urllib.parse import quote

from starlette.routing import BaseRoute
from twilio.base.exceptions import TwilioException
from twilio.rest import Client

from ..catalog import DEFAULT_LANGUAGE, DEFAULT_THEME, Catalog
from ..channels import (
    NOT_STORED_MESSAGE,
    Capabilities,
    Delivered,
    JoinWay,
    Kind,
    Outbound,
    PermanentFailure,
    Port,
    Result,
    Running,
    Runtime,
    TemporaryFailure,
    WordStyle,
)
from ..commands import Away, Command, Decide, Inbound, Join, OpenTable, OptOut
from ..grammar import grammar
from ..settings import Settings
from . import twilio_common
from .twilio_common import MAX_BODY, Account, Messages, language_of, normalise_number

log = logging.getLogger(__name__)

CHANNEL: Final = "whatsapp"
WEBHOOK_PATH: Final = "/whatsapp"
STATUS_PATH: Final = "/whatsapp/status"
PREFIX: Final = "whatsapp:"
"""Twilio writes a WhatsApp address as ``whatsapp:`` and the number in E.164."""
TEXT_LIMIT: Final = 1600
"""Characters of one WhatsApp message through Twilio (no segments)."""
PREVIEW_LINES: Final = 4
"""Lines of a message a locked phone may show: as for a text (iOS shows up to four lines of a notification)."""
WINDOW: Final = 24 * 3600.0
"""Seconds after a person's last message in which WhatsApp lets the business write freely."""
WINDOW_MARGIN: Final = 60.0
"""Seconds before the window closes that the channel stops writing (a message takes a moment to reach Meta)."""
SANDBOX_NUMBER: Final = "+14155238886"
"""Twilio's WhatsApp sandbox sender: each phone first sends it the sandbox's own join message."""
AWAY_ERRORS: Final = {
    63016: Away.SILENT,  # outside the 24-hour window: only a template may go
    63015: Away.SANDBOX,  # the sandbox writes only to phones that joined it (in the last three days)
    63014: Away.BLOCKED,  # blocked by the person's action
    63003: Away.BLOCKED,  # not a WhatsApp number, or unreachable
    63024: Away.BLOCKED,  # an invalid recipient
}
"""Twilio's WhatsApp errors that mean a person cannot be written to until they write (by why)."""
CAPABILITIES: Final = Capabilities(
    typed=True, paid_per_message=True, word_style=WordStyle.PLAIN, preview_lines=PREVIEW_LINES,
)
"""The channel writes a prompt's options as a numbered list (answered by typing); the catalogs' full sentences
(no limit the renderer must keep: the channel folds within 1,600 characters), names as written, every message paid
for (no echoes, no counters; ``HOSTONLY``, ``ALLPHONES``, ``COST``), no carrier keywords, and a private message's
secret below what a lock screen shows."""


def address_of(raw: str, region: str | None = None) -> str | None:
    """A WhatsApp address (``whatsapp:+4915123456789``), or None if ``raw`` is not one."""
    if not raw.startswith(PREFIX):
        return None
    number = normalise_number(raw[len(PREFIX):], region)
    return None if number is None else PREFIX + number


def written(message: Outbound) -> str:
    """A message as the phone shows it: a prompt's question (its first line below a secret's header) in WhatsApp's
    ``*bold*``, then its options as a numbered list, one a line (answered by typing the number or the name)."""
    if message.kind is not Kind.PROMPT or not message.options:
        return message.text
    lines = message.text.split("\n")
    first = PREVIEW_LINES if message.secret and len(lines) > PREVIEW_LINES else 0
    question = lines[first].strip()
    if question and "*" not in question:
        lines[first] = f"*{question}*"
    return "\n".join([*lines, *(f"{i}. {option.label}" for i, option in enumerate(message.options, 1))])


# --- configuration ----------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class WhatsAppSettings:
    """The WhatsApp channel's part of the settings (the account is the one SMS uses)."""

    account: Account
    sender: str | None
    """``TWILIO_WHATSAPP_FROM``: the WhatsApp sender (``whatsapp:+E.164``), a WhatsApp-enabled Twilio number or
    the sandbox's."""
    template_sid: str | None
    """``TWILIO_WHATSAPP_TEMPLATE_SID``: an approved template (a Content SID) sent once to a player whose window
    closed, asking them to write; None: nothing goes outside the window."""
    sandbox_join: str | None
    """``TWILIO_WHATSAPP_SANDBOX_JOIN``: the sandbox's join message (``join <two words>``), shown on the join page."""
    region: str | None

    @classmethod
    def of(cls, settings: Settings) -> WhatsAppSettings:
        env = settings.env
        return cls(account=Account.of(settings), sender=address_of(env.get("TWILIO_WHATSAPP_FROM", "").strip()),
                   template_sid=env.get("TWILIO_WHATSAPP_TEMPLATE_SID") or None,
                   sandbox_join=env.get("TWILIO_WHATSAPP_SANDBOX_JOIN") or None,
                   region=env.get("MODERATOR_SMS_REGION"))

    @property
    def complete(self) -> bool:
        return self.account.complete and self.sender is not None

    @property
    def sandbox(self) -> bool:
        """The sender is Twilio's sandbox: phones join it first, and again every three days."""
        return self.sender == PREFIX + SANDBOX_NUMBER

    @property
    def status_callback(self) -> str | None:
        """Where Twilio reports each message's delivery; None without a public URL."""
        return self.account.public_url + STATUS_PATH if self.account.public else None


# --- the channel -------------------------------------------------------------------------------------------


@dataclass
class Window:
    """When each phone last wrote (the channel's clock), to keep to WhatsApp's 24 hours; what it does not know
    after a restart it asks Twilio once (the newest message from that phone)."""

    clock: Callable[[], float]
    lookup: Callable[[str], float | None] = lambda address: None
    heard: dict[str, float] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def wrote(self, address: str) -> None:
        with self.lock:
            self.heard[address] = self.clock()

    def closed(self, address: str) -> None:
        """Twilio said the window is closed: it stays so until they write."""
        with self.lock:
            self.heard[address] = float("-inf")

    def open(self, address: str) -> bool:
        """True if a free-form message may go to ``address`` now (unknown to Twilio too: Twilio decides)."""
        with self.lock:
            last = self.heard.get(address)
        if last is None:
            last = self.lookup(address)
            if last is None:
                return True
            with self.lock:
                last = self.heard.setdefault(address, last)
        return self.clock() - last < WINDOW - WINDOW_MARGIN


@dataclass
class WhatsAppChannel:
    """What is due for one phone goes as one message where it fits (``fold``), the decision in bold; nothing
    outside the phone's 24-hour window; Twilio's errors mapped to the port's failures and to the seat's absence."""

    messages: Messages
    window: Window
    template_sid: str | None = None
    capabilities: Capabilities = CAPABILITIES
    screen_url: Callable[[str], str | None] = lambda table: None
    join_page: Callable[[str], str | None] = lambda code: None
    away: deque[tuple[str, Away]] = field(default_factory=deque)
    """Phones found unreachable while sending, for the service (``reports``, on the event loop)."""
    templated: set[str] = field(default_factory=set)
    """Phones sent the template since their window closed (once each)."""

    def send_batch(self, address: str, messages: Sequence[Outbound]) -> list[Result]:
        """Deliver everything due for one phone, oldest first, in as few messages as fit."""
        if not self.window.open(address):
            self._away(address, Away.SILENT)
            self._template(address)
            return [PermanentFailure("outside the 24-hour window")] * len(messages)
        results: list[Result] = [Delivered()] * len(messages)
        failure: Result | None = None
        for group in fold(messages):
            if failure is not None:
                for i in group:
                    results[i] = failure  # nothing later overtakes a failed message
                continue
            parts = [messages[i] for i in group]
            result = self._create(address, parts)
            for i in group:
                results[i] = result
            why = AWAY_ERRORS.get(self.messages.error or 0)
            if why is not None:
                self._away(address, why)
                failure = result
            elif isinstance(result, TemporaryFailure):
                failure = result
        return results

    def _create(self, address: str, parts: Sequence[Outbound]) -> Result:
        body = merged_text(parts)
        body = twilio_common.with_links(body, parts, self.screen_url, self.join_page, lambda language: TEXT_LIMIT)
        if len(body) > TEXT_LIMIT:
            log.warning("a WhatsApp message was %d characters; cut to %d", len(body), TEXT_LIMIT)
            body = body[: TEXT_LIMIT - 3] + "..."
        handed = [m.handed for m in parts if m.handed is not None]
        return self.messages.create(address, body, min(handed) if handed else None, 1)

    def _away(self, address: str, why: Away) -> None:
        if why is Away.SILENT:
            self.window.closed(address)
        self.away.append((address, why))

    def _template(self, address: str) -> None:
        """The configured template, once per closed window (it asks the person to write); nothing without one."""
        if self.template_sid is None or address in self.templated:
            return
        self.templated.add(address)
        try:
            self.messages.client.messages.create(to=address, content_sid=self.template_sid, **self.messages.origin())
        except (TwilioException, OSError) as exc:
            log.info("whatsapp: the template could not be sent (%s)", type(exc).__name__)

    def wrote(self, address: str) -> None:
        """The phone wrote: its window is open again for 24 hours (and a template may go again when it closes)."""
        self.window.wrote(address)
        self.templated.discard(address)


def merged_text(messages: Sequence[Outbound]) -> str:
    """The text of messages sent as one, as the phone gets it (``twilio_common.merged_text``)."""
    return twilio_common.merged_text(messages, CAPABILITIES, written)


def fold(messages: Sequence[Outbound]) -> list[list[int]]:
    """Messages due for one phone in groups that each go as one message of at most 1,600 characters."""
    return twilio_common.fold(messages, CAPABILITIES, lambda language: TEXT_LIMIT, written)


def last_heard(client: Client, sender: str, address: str) -> float | None:
    """When ``address`` last wrote to ``sender``, from Twilio's message log (None: never, or Twilio cannot say)."""
    try:
        for message in client.messages.list(from_=address, to=sender, limit=1):
            when = message.date_sent or message.date_created
            return None if when is None else float(when.timestamp())
    except (TwilioException, OSError) as exc:
        log.info("whatsapp: could not ask Twilio when a phone last wrote (%s)", type(exc).__name__)
    return None


# --- the webhook ------------------------------------------------------------------------------------------


def parse(text: str) -> Command:
    """What a WhatsApp message asks for: a word of the grammar (numbers and vote words included), else free text,
    which the service matches against the options of the phone's newest prompt and the names."""
    raw = " ".join(text.split())
    return grammar().parse(raw, CAPABILITIES.reserved_words) or Decide("?", raw)


def named(command: Command, profile: str) -> Command:
    """The command with the WhatsApp profile name as the name where none was typed (the service's name rules
    apply to it as to any)."""
    profile = " ".join(profile.split())
    if not profile:
        return command
    if isinstance(command, (Join, OpenTable)) and not command.name:
        return replace(command, name=profile)
    return command


class WhatsAppGateway:
    """Turns one incoming WhatsApp message into one input for the service, and a status callback into a delivery
    report (and, for an error that says so, the seat's absence)."""

    def __init__(self, port: Port, channel: WhatsAppChannel, *, region: str | None = None,
                 kick: Callable[[], None] = lambda: None) -> None:
        self.port = port
        self.channel = channel
        self.region = region
        self.kick = kick

    def receive(self, params: Mapping[str, str]) -> bool:
        """Handle one incoming message; False if it was not for us (no WhatsApp sender or no message id)."""
        sid = params.get("MessageSid") or params.get("SmsSid")
        address = address_of(params.get("From", ""), self.region)
        if not sid or address is None:
            return False
        body = params.get("Body", "")
        command = named(parse(body), params.get("ProfileName", ""))
        self.channel.wrote(address)
        self.port.handle(Inbound(CHANNEL, address, command, external_id=sid,
                                 language=language_of(address[len(PREFIX):]), raw=body))
        self.kick()
        return True

    def delivery(self, params: Mapping[str, str]) -> bool:
        """A status callback for a message we sent; False if it names no message of ours."""
        found = twilio_common.status_of(params)
        code = params.get("ErrorCode") or ""
        why = AWAY_ERRORS.get(int(code)) if code.isdigit() else None
        address = address_of(params.get("To", ""), self.region)
        if found is not None and why is not None and address is not None:
            sid, status = found
            if status in twilio_common.NOT_DELIVERED:
                if why is Away.SILENT:
                    self.channel.window.closed(address)
                self.port.handle(Inbound(CHANNEL, address, OptOut(why), external_id=f"{sid}:away"))
        known = twilio_common.report(self.port, CHANNEL, params)
        self.kick()
        return known

    async def reports(self) -> int:
        """(On the loop, after each delivery round.) The phones the channel found away, for the service."""
        told = 0
        while self.channel.away:
            address, why = self.channel.away.popleft()
            self.port.handle(Inbound(CHANNEL, address, OptOut(why)))
            told += 1
        return told


def routes(settings: WhatsAppSettings) -> list[BaseRoute]:
    """``POST /whatsapp`` and ``POST /whatsapp/status``, each checked against Twilio's signature."""

    def not_stored(params: Mapping[str, str]) -> str:
        """Send it again, in the language the sender's number suggests."""
        number = address_of(params.get("From", ""), settings.region)
        language = (language_of(number[len(PREFIX):]) if number else None) or DEFAULT_LANGUAGE
        return Catalog.load(DEFAULT_THEME, language).text(NOT_STORED_MESSAGE)

    return twilio_common.routes(settings.account, CHANNEL, WEBHOOK_PATH, STATUS_PATH, not_stored)


# --- joining ------------------------------------------------------------------------------------------------


def join_link(sender: str, text: str) -> str:
    """A ``wa.me`` link that opens WhatsApp to our sender with ``text`` already typed."""
    return f"https://wa.me/{sender.removeprefix(PREFIX).lstrip('+')}?text={quote(text)}"


def join_ways(settings: WhatsAppSettings, code: str) -> list[JoinWay]:
    """Writing to our WhatsApp sender (for the sandbox, its own join message first)."""
    sender = settings.sender
    if sender is None:
        return []
    number = sender.removeprefix(PREFIX)
    ways = []
    if settings.sandbox_join:
        ways.append(JoinWay("WhatsApp sandbox", join_link(sender, settings.sandbox_join),
                            f"{settings.sandbox_join} \u2192 {number}"))
    ways.append(JoinWay("WhatsApp", join_link(sender, f"JOIN {code}"), f"JOIN {code} \u2192 {number}"))
    return ways


# --- the channel module's entry --------------------------------------------------------------------------------


class WhatsAppSpec:
    """WhatsApp through a Twilio WhatsApp sender."""

    name: Final = CHANNEL
    capabilities: Final = CAPABILITIES

    def off(self, settings: Settings) -> str | None:
        if WhatsAppSettings.of(settings).complete:
            return None
        return "it needs TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN and TWILIO_WHATSAPP_FROM (whatsapp:+...)"

    def routes(self, settings: Settings) -> Sequence[BaseRoute]:
        return routes(WhatsAppSettings.of(settings))

    def webhooks(self, settings: Settings) -> Mapping[str, int]:
        return {WEBHOOK_PATH: MAX_BODY, STATUS_PATH: MAX_BODY}

    @contextlib.asynccontextmanager
    async def start(self, settings: Settings, runtime: Runtime) -> AsyncIterator[Running]:
        wa = WhatsAppSettings.of(settings)
        assert wa.sender is not None
        sender = wa.sender
        client = wa.account.client(runtime.network(CHANNEL))
        window = Window(runtime.clock, lambda address: last_heard(client, sender, address))
        channel = WhatsAppChannel(Messages(client, sender, status_callback=wa.status_callback), window,
                                  template_sid=wa.template_sid, screen_url=runtime.screen_url,
                                  join_page=twilio_common.join_page(settings))
        gateway: WhatsAppGateway | None = None

        async def reports() -> int:
            return 0 if gateway is None else await gateway.reports()

        delivery = runtime.delivery(CHANNEL, channel, after_round=reports)
        gateway = WhatsAppGateway(runtime.port, channel, region=wa.region, kick=delivery.kick)
        log.info("whatsapp: webhook at %s%s%s", wa.account.public_url, WEBHOOK_PATH,
                 " (the sandbox: each phone first sends its join message)" if wa.sandbox else "")

        yield Running(gateway, lambda code: join_ways(wa, code),
                      check=twilio_common.checker(wa.account, runtime.network(CHANNEL), CHANNEL))


SPEC: Final = WhatsAppSpec()
