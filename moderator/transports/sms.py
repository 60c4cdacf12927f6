"""The SMS channel over Twilio: text messages in through a signed webhook, the outbox out through the REST API.

It translates and nothing else. ``POST /sms`` is Twilio's incoming-message webhook: the request's
``X-Twilio-Signature`` is checked against ``MODERATOR_PUBLIC_URL`` + ``/sms`` (the URL Twilio called, also behind
a proxy), the text becomes a command (``parse``) and an ``Inbound`` for the service with the ``MessageSid`` as
its id, so a retried webhook changes nothing; the reply is empty TwiML. Everything the players receive goes
through the outbox: ``SmsChannel`` folds what is due for one phone into as few texts as fit its language's limit
(one GSM-7 segment, transliterated, for a language GSM-7 writes; two UCS-2 segments for another script), and
sends each with the twilio ``Client``; ``POST /sms/status`` hands Twilio's delivery reports to the service.

Twilio's own keywords (``STOP``, ``START``, ``HELP`` ...) are never game commands. Twilio answers them itself; an
opt-out also becomes ``OptOut`` (that phone is never prompted again, and the host is told what to do), an opt-in
``OptIn`` (the host is told; YES too, then counts as a vote), and ``HELP`` the game's own how-to, after Twilio's.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final
from urllib.parse import quote

from starlette.routing import BaseRoute
from twilio.rest import Client

from ..catalog import (
    DEFAULT_LANGUAGE,
    DEFAULT_THEME,
    SMS_LIMIT,
    UCS2_LIMIT,
    Catalog,
    is_gsm7,
    sms_segments,
)
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
from ..commands import (
    Ask,
    Command,
    Decide,
    Inbound,
    OptIn,
    OptOut,
    Query,
)
from ..grammar import fold as fold_words
from ..grammar import grammar
from ..qr import qr_text
from ..settings import Settings
from . import twilio_common
from .twilio_common import MAX_BODY as MAX_BODY  # re-exported: the body limit of the SMS webhooks
from .twilio_common import Account, Messages
from .twilio_common import language_of as language_of  # re-exported: the SMS channel's names for them
from .twilio_common import normalise_number as normalise_number

log = logging.getLogger(__name__)

CHANNEL: Final = "sms"
WEBHOOK_PATH: Final = "/sms"
STATUS_PATH: Final = "/sms/status"
"""Twilio's delivery status callbacks for the texts we send (``status_callback``)."""
# Twilio's reserved keywords (Advanced Opt-Out defaults): Twilio acts on a message that is exactly one of these
# words. They are never game commands, whatever else the message says.
OPT_OUT_WORDS: Final = frozenset({"stop", "stopall", "unsubscribe", "cancel", "end", "quit", "revoke", "optout"})
OPT_IN_WORDS: Final = frozenset({"start", "yes", "unstop"})
HELP_WORDS: Final = frozenset({"help", "info"})
RESERVED_WORDS: Final = OPT_OUT_WORDS | OPT_IN_WORDS | HELP_WORDS
PASSED_ON: Final = frozenset({"yes"})
"""Keywords Twilio acts on and still passes on to the webhook, which may mean something at the table."""
PREVIEW_LINES: Final = 4
"""Lines of a text a locked phone shows in its notification preview: iOS shows up to four lines (about 178
characters, widely reported); Android shows one line collapsed, and Messages' expanded notification a few (README,
"Secrets on the lock screen")."""
CAPABILITIES: Final = Capabilities(
    buttons=False, text_limit=SMS_LIMIT, unicode_limit=UCS2_LIMIT, gsm7=True, paid_per_message=True,
    word_style=WordStyle.CAPITALS, reserved_words=RESERVED_WORDS - PASSED_ON, preview_lines=PREVIEW_LINES,
)
"""One GSM-7 segment per text (two UCS-2 segments in a language GSM-7 cannot write), options written into the
text, every text costs, and a private text's secret starts below what a lock screen shows."""

OPTED_OUT_ERROR: Final = 21610
"""Twilio's error code for a send to a number that replied STOP."""


# --- configuration ----------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SmsSettings:
    """The SMS channel's part of the settings."""

    account: Account
    sender: str | None
    """``TWILIO_FROM``: the number texts come from (E.164); also the number in the join QR code."""
    messaging_service_sid: str | None
    region: str | None
    """``MODERATOR_SMS_REGION`` (e.g. ``US``): how to read a number written without a country code."""

    @classmethod
    def of(cls, settings: Settings) -> SmsSettings:
        env = settings.env
        return cls(
            account=Account.of(settings),
            sender=normalise_number(env["TWILIO_FROM"]) if "TWILIO_FROM" in env else None,
            messaging_service_sid=env.get("TWILIO_MESSAGING_SERVICE_SID"),
            region=env.get("MODERATOR_SMS_REGION"),
        )

    @property
    def complete(self) -> bool:
        """True when Twilio can be used: an account, its token, and a number or a Messaging Service."""
        return self.account.complete and bool(self.sender or self.messaging_service_sid)

    @property
    def webhook_url(self) -> str:
        """The URL Twilio is configured to call, which its signature covers."""
        return self.account.public_url + WEBHOOK_PATH

    @property
    def status_url(self) -> str:
        """The status callback URL Twilio calls, which its signature covers."""
        return self.account.public_url + STATUS_PATH

    @property
    def status_callback(self) -> str | None:
        """Where Twilio reports each text's delivery (``MODERATOR_PUBLIC_URL`` + ``/sms/status``); None without a
        public URL, since Twilio could not reach a local address."""
        return self.status_url if self.account.public else None

    def client(self, http_client: object = None) -> Client:
        """The twilio REST client (``TWILIO_API_URL`` points it at a Twilio-compatible test server)."""
        return self.account.client(http_client)


# --- text in: what a player's SMS means ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Keyword:
    """A Twilio keyword: ``opt_out`` (STOP and friends), or one Twilio answers itself (START, HELP ...)."""

    word: str

    @property
    def opt_out(self) -> bool:
        return self.word in OPT_OUT_WORDS


def parse(text: str) -> Command | Keyword:
    """What an SMS asks for: a Twilio keyword, a word of the grammar (numbers and vote words included), else
    free text, which the service matches against the options of the phone's newest prompt and the names."""
    raw = " ".join(text.split())
    words = fold_words(raw).split()
    # YES is an opt-in word Twilio still passes on: at a vote it is a vote (the grammar's "yes").
    if len(words) == 1 and words[0] in RESERVED_WORDS and words[0] not in PASSED_ON:
        return Keyword(words[0])
    return grammar().parse(raw, CAPABILITIES.reserved_words) or Decide("?", raw)


# --- the webhook ------------------------------------------------------------------------------------------


class SmsGateway:
    """Turns one incoming SMS (the webhook's form fields) into one input for the service, and a status callback
    into a delivery report."""

    def __init__(self, port: Port, *, region: str | None = None, kick: Callable[[], None] = lambda: None) -> None:
        self.port = port
        self.region = region
        self.kick = kick

    def receive(self, params: Mapping[str, str]) -> bool:
        """Handle one incoming message; False if it was not for us (no valid sender, not an SMS)."""
        sid = params.get("MessageSid") or params.get("SmsSid")
        address = normalise_number(params.get("From", ""), self.region)
        if not sid or address is None:
            return False
        body = params.get("Body", "")
        meaning = parse(body)
        if isinstance(meaning, Keyword):
            # Twilio acts on these words itself (and answers them); the table hears what they change.
            if meaning.opt_out:
                meaning = OptOut()
            elif meaning.word in OPT_IN_WORDS:
                meaning = OptIn()
            else:
                meaning = Ask(Query.HOWTO)  # Twilio's own answer says nothing of the game: ours follows it
        elif fold_words(body) in PASSED_ON & OPT_IN_WORDS:
            # YES opts a phone that texted STOP back in at Twilio as well: texts reach it again, so the table hears
            # of it first (nothing changes for a phone that never stopped), then YES counts as what it says.
            self.port.handle(Inbound(CHANNEL, address, OptIn(), external_id=f"{sid}:opt-in",
                                     language=language_of(address), raw=body))
        self.port.handle(Inbound(CHANNEL, address, meaning, external_id=sid, language=language_of(address), raw=body))
        self.kick()
        return True

    def delivery(self, params: Mapping[str, str]) -> bool:
        """A status callback for a text we sent; False if it names no text of ours or no known status."""
        known = twilio_common.report(self.port, CHANNEL, params)
        self.kick()
        return known


def routes(settings: SmsSettings) -> list[BaseRoute]:
    """``POST /sms`` and ``POST /sms/status``, each checked against Twilio's signature."""

    def not_stored(params: Mapping[str, str]) -> str:
        """Send it again, in the language the sender's number suggests, as one text."""
        number = normalise_number(params.get("From", ""), settings.region)
        language = (language_of(number) if number else None) or DEFAULT_LANGUAGE
        return fit_sms(Catalog.load(DEFAULT_THEME, language).text(NOT_STORED_MESSAGE), language)

    return twilio_common.routes(settings.account, CHANNEL, WEBHOOK_PATH, STATUS_PATH, not_stored)


# --- text out ---------------------------------------------------------------------------------------------


def limit(language: str) -> int:
    """The characters one text in ``language`` may have: one GSM-7 segment, or two UCS-2 ones (``CAPABILITIES``)."""
    return CAPABILITIES.limit(language) or SMS_LIMIT


def fit_sms(text: str, language: str) -> str:
    """``text`` as one text in its language: transliterated where it goes in GSM-7, and cut (logged: the renderer
    should never need it)."""
    plain = CAPABILITIES.written(text, language)
    most = limit(language)
    if len(plain) > most:
        log.warning("an SMS was %d characters; cut to %d", len(plain), most)
        plain = plain[: most - 3] + "..."
    return plain


@dataclass(frozen=True, slots=True)
class Text:
    """One SMS text sent or tried: the messages it carried (their places in the batch), and what Twilio answered."""

    parts: tuple[int, ...]
    result: Result


@dataclass
class SmsChannel:
    """The channel for phones: what is due for one phone goes out as few one-segment texts as it can (``fold``),
    one ``messages.create`` each; Twilio's errors are mapped to the port's failures."""

    client: Client
    sender: str | None = None
    messaging_service_sid: str | None = None
    on_join_code: Callable[[str], None] | None = None
    """Called with a table's join code when its host is told it (``moderator sms`` prints the QR code)."""
    status_callback: str | None = None
    """The URL Twilio reports each text's delivery status to (``SmsSettings.status_callback``), if any."""
    capabilities: Capabilities = CAPABILITIES
    screen_url: Callable[[str], str | None] = lambda table: None
    """The address of a table's screen, if the browser channel is on and reachable (``Runtime.screen_url``): the
    host's join code and the end of a game carry it, where it fits."""
    join_page: Callable[[str], str | None] = lambda code: None
    """The address of a join code's page (every way to take a seat, as links and QR codes), if the server has a
    public address: the host's join code carries it, where it fits."""
    messages: Messages = field(init=False)

    def __post_init__(self) -> None:
        self.messages = Messages(self.client, self.sender, self.messaging_service_sid, self.status_callback)

    def send_batch(self, address: str, messages: Sequence[Outbound]) -> list[Result]:
        """Deliver everything due for one phone, oldest first, folded into one-segment texts."""
        results: list[Result] = [Delivered()] * len(messages)
        for text in self.send_texts(address, messages):
            for i in text.parts:
                results[i] = text.result
        return results

    def send_texts(self, address: str, messages: Sequence[Outbound]) -> list[Text]:
        """Each text sent for these messages, in order (what it carried, and its SID or its failure)."""
        out: list[Text] = []
        failure: TemporaryFailure | PermanentFailure | None = None
        for group in fold(messages):
            if failure is not None:
                out.append(Text(tuple(group), failure))  # nothing later overtakes a failed text
                continue
            parts = [messages[i] for i in group]
            result = self._create(address, parts)
            out.append(Text(tuple(group), result))
            if isinstance(result, Delivered):
                codes = [m.join_code for m in parts if m.kind is Kind.JOIN and m.join_code]
                if codes and self.on_join_code is not None:
                    self.on_join_code(codes[0])
            elif isinstance(result, PermanentFailure) and str(OPTED_OUT_ERROR) not in str(result):
                pass  # this text can never go; the next ones may
            else:
                failure = result
        return out

    def _create(self, address: str, parts: Sequence[Outbound]) -> Result:
        language = parts[-1].language
        body = with_links(fit_sms(merged_text(parts), language), parts, self.screen_url, self.join_page)
        handed = [m.handed for m in parts if m.handed is not None]
        return self.messages.create(address, body, min(handed) if handed else None, sms_segments(body))


def fold(messages: Sequence[Outbound]) -> list[list[int]]:
    """Messages due for one phone, in order, in groups that each go out as one text within its language's limit
    (one GSM-7 segment, or two UCS-2): ``twilio_common.fold``."""
    return twilio_common.fold(messages, CAPABILITIES, limit)


def merged_text(messages: Sequence[Outbound]) -> str:
    """The text of messages sent as one SMS, as the phone gets it (transliterated where its language goes in
    GSM-7): ``twilio_common.merged_text``."""
    return twilio_common.merged_text(messages, CAPABILITIES)


def with_links(body: str, parts: Sequence[Outbound], screen_url: Callable[[str], str | None],
               join_page: Callable[[str], str | None]) -> str:
    """The text with its join page's and table screen's addresses where they fit (``twilio_common.with_links``);
    in a language GSM-7 writes, only an address GSM-7 writes too."""
    return twilio_common.with_links(body, parts, screen_url, join_page, limit,
                                    lambda url, language: is_gsm7(url) or not CAPABILITIES.transliterates(language))


# --- joining ------------------------------------------------------------------------------------------------


def join_link(number: str, code: str) -> str:
    """An ``sms:`` link that opens a text to the table's number with ``JOIN <code>`` already typed."""
    return f"sms:{number}?body={quote(f'JOIN {code}')}"


def join_ways(number: str | None, code: str) -> list[JoinWay]:
    """Texting our number (no words of ours: they would need every language; what to text, and where)."""
    if not number:
        return []
    return [JoinWay("SMS", join_link(number, code), f"JOIN {code} \u2192 {number}")]


# --- the channel module's entry --------------------------------------------------------------------------------


class SmsSpec:
    """SMS through a Twilio number."""

    name: Final = CHANNEL
    capabilities: Final = CAPABILITIES

    def off(self, settings: Settings) -> str | None:
        if SmsSettings.of(settings).complete:
            return None
        return "it needs TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN, and TWILIO_FROM or TWILIO_MESSAGING_SERVICE_SID"

    def routes(self, settings: Settings) -> Sequence[BaseRoute]:
        return routes(SmsSettings.of(settings))

    def webhooks(self, settings: Settings) -> Mapping[str, int]:
        return {WEBHOOK_PATH: MAX_BODY, STATUS_PATH: MAX_BODY}

    @contextlib.asynccontextmanager
    async def start(self, settings: Settings, runtime: Runtime) -> AsyncIterator[Running]:
        sms = SmsSettings.of(settings)
        number = sms.sender

        def show(code: str) -> None:
            if number:
                link = join_link(number, code)
                print(qr_text(link), link, sep="\n", flush=True)

        client = sms.client(runtime.network(CHANNEL))
        channel = SmsChannel(client, sms.sender, sms.messaging_service_sid,
                             on_join_code=show if settings.print_join_codes else None,
                             status_callback=sms.status_callback, screen_url=runtime.screen_url,
                             join_page=twilio_common.join_page(settings))
        delivery = runtime.delivery(CHANNEL, channel)
        log.info("sms: webhook at %s", sms.webhook_url)

        yield Running(SmsGateway(runtime.port, region=sms.region, kick=delivery.kick),
                      lambda code: join_ways(number, code),
                      check=twilio_common.checker(sms.account, runtime.network(CHANNEL), CHANNEL))


SPEC: Final = SmsSpec()
