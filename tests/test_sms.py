"""The SMS channel: Twilio's webhook signed exactly as Twilio signs it, whole games played only by text message,
keywords and Twilio's reserved words, opt-out, one GSM-7 segment per text in every theme and language, cost
controls, the REST client's errors, the join QR code and ``moderator sms``."""

from __future__ import annotations

import itertools
import random
import re
import unicodedata
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pytest

from moderator import cli
from moderator.app import create_app
from moderator.catalog import (
    SMS_LIMIT,
    UCS2_LIMIT,
    Catalog,
    gsm7_language,
    is_gsm7,
    languages,
    sms_segments,
    themes,
)
from moderator.channels import (
    Capabilities,
    Delivered,
    Kind,
    Option,
    Outbound,
    PermanentFailure,
    Refused,
    Result,
    TemporaryFailure,
)
from moderator.commands import (
    AddComputers,
    Ask,
    Choose,
    Decide,
    Host,
    HostCommand,
    Inbound,
    Join,
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
from moderator.delivery import Sender
from moderator.engine import Phase, awaiting
from moderator.game import match_label
from moderator.grammar import Verb, grammar
from moderator.qr import qr_png, qr_svg, qr_text
from moderator.service import Service
from moderator.settings import Settings
from moderator.store import Store
from moderator.tables import Table
from moderator.transports.sms import (
    CAPABILITIES,
    CHANNEL,
    PREVIEW_LINES,
    RESERVED_WORDS,
    SPEC,
    Keyword,
    SmsChannel,
    SmsSettings,
    fold,
    join_link,
    merged_text,
    normalise_number,
    parse,
)
from tests.fake_twilio import (
    ACCOUNT_SID,
    AUTH_TOKEN,
    OUR_NUMBER,
    PUBLIC_URL,
    FakeTwilio,
    client,
    incoming,
    signature,
    status_report,
)
from tests.fakes import as_body

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # Starlette 1.x asks for httpx2; httpx works the same here
    from starlette.testclient import TestClient

WEBHOOK = f"{PUBLIC_URL}/sms"
ENV = {
    "TWILIO_ACCOUNT_SID": ACCOUNT_SID,
    "TWILIO_AUTH_TOKEN": AUTH_TOKEN,
    "TWILIO_FROM": OUR_NUMBER,
    "MODERATOR_PUBLIC_URL": PUBLIC_URL,
}
HEADER = {lang: "\n".join([Catalog.load("classic", lang).text("private-header", sms=True),
                            *["."] * (PREVIEW_LINES - 1)]) for lang in languages()}
"""A private text's first lines: the neutral header, then filler down to below a lock screen's preview."""
NAMES = ("Ximena", "Quentin", "Zora", "Yusuf", "Wanda", "Kasimir", "Ulla", "Olek", "Ines", "Vito")
LONG_NAMES = (
    "Maximilianus Ærøsund",  # 20 characters each, many of them outside GSM-7
    "Bartholomäus Çelik-Ø",
    "Konstantinopoulos Ḱā",
    "Wolfgang Ŝtraßenbahn",
    "Anneliese Müller-Lüd",
    "Jean-Baptiste Lefèvr",
    "Gwendolyn Łukasiewic",
    "Przemysław Żółtowski",
    "Đorđe Šćepanović-Ivo",
    "Zoë Ṁacḋonald-Ffions",
)
PERSIAN_LONG_NAMES = (
    "محمدرضا حسین\u200cزاده فر",  # 20 characters each, as Persian writes them (a non-joiner inside some)
    "فاطمه سادات موسوی\u200cنی",
    "علی\u200cاکبر شریعتمدارین",
    "زهرا کریمی خوانسارین",
    "امیرحسین طباطبایی یز",
    "نرگس رضایی اصفهانی\u200cز",
    "سیدمهدی هاشمی\u200cنژاد ر",
    "مریم قاسمی دهکردی\u200cنی",
    "کیومرث پوراحمدیان کر",
    "پریسا نوروزی گیلانیا",
)


def number(i: int) -> str:
    return f"+1202555{1000 + i:04d}"


class TickingClock:
    """Time that moves a little at every look (sends get distinct times, as with a real clock)."""

    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        self.now += 0.001
        return self.now


class Phones:
    """A Twilio number with the moderator behind it: every input through the signed webhook, every text out
    through ``SmsChannel`` into the fake Twilio."""

    def __init__(self, seed: int = 1) -> None:
        self.fake = FakeTwilio()
        self.settings = SmsSettings.of(Settings.load(ENV))
        self.channel = SmsChannel(client(self.fake), OUR_NUMBER, status_callback=self.settings.status_callback,
                                  join_page=lambda code: f"{PUBLIC_URL}/join/{code}")  # as ``SPEC.start`` wires it
        self.clock = TickingClock()
        rng = random.Random(seed)
        self.app = create_app(Settings.load(ENV), channels=(SPEC,), store_factory=lambda: Store(memory=True),
                              deliver=False, seed=lambda: rng.getrandbits(64), clock=self.clock,
                              network={CHANNEL: FakeTwilio()})  # asked for the account at start: not Twilio
        self.http = TestClient(self.app)
        self.http.__enter__()
        self.sender = self.call(lambda: Sender(self.service.store, {CHANNEL: self.channel}, clock=self.clock))

        self.sids = itertools.count(1)
        self.others: dict[str, Any] = {}

    def close(self) -> None:
        self.http.__exit__(None, None, None)

    @property
    def service(self) -> Service:
        service: Service = self.app.state.service
        return service

    def call(self, fn: Callable[[], Any]) -> Any:
        """Run ``fn`` on the app's thread, where the service and its SQLite connection live."""
        assert self.http.portal is not None
        return self.http.portal.call(fn)

    def post(self, form: dict[str, str], *, sign_for: str = WEBHOOK, path: str = "/sms",
             sig: str | None = None, headers: bool = True) -> Any:
        head = {"X-Twilio-Signature": sig if sig is not None else signature(sign_for, form)} if headers else {}
        return self.http.post(path, data=form, headers=head)

    def text(self, phone: str, body: str, sid: str | None = None) -> None:
        """``phone`` texts ``body`` to our number; then everything due is delivered."""
        response = self.post(incoming(phone, body, sid or f"SM{next(self.sids):032x}"))
        assert response.status_code == 200, response.text
        assert response.text == '<?xml version="1.0" encoding="UTF-8"?><Response />'
        assert response.headers["content-type"].startswith("application/xml")
        self.deliver()

    def deliver(self) -> None:
        def drain() -> None:
            while self.sender.deliver_due():
                pass
            for sender in self.others.values():
                while sender.deliver_due():
                    pass
        self.call(drain)

    def inbox(self, phone: str) -> list[str]:
        return self.fake.to(phone)

    def table_of(self, phone: str) -> Table:
        def find() -> Table:
            row = self.service.store.tables_of(CHANNEL, phone)[0]
            table = self.service.table(row.id)
            assert table is not None
            return table
        found: Table = self.call(find)
        return found

    def code(self, host: str) -> str:
        match = re.search(r" ([A-Z0-9]{5})\.(?:\n|$)", self.inbox(host)[-1])
        assert match, self.inbox(host)[-1]
        return match.group(1)


@pytest.fixture
def phones_dealt() -> Iterator[Callable[[int], Phones]]:
    """Opens ``Phones`` whose games are dealt from a test's own seed; every one is closed after the test."""
    opened: list[Phones] = []

    def dealt(seed: int) -> Phones:
        opened.append(Phones(seed=seed))
        return opened[-1]

    yield dealt
    for p in opened:
        p.close()


@pytest.fixture
def phones(phones_dealt: Callable[[int], Phones]) -> Phones:
    """A Twilio number with the moderator behind it, its games dealt from seed 1."""
    return phones_dealt(1)


def numbered(text: str) -> list[str] | None:
    """The labels of a text's numbered options, in any language (its last line ends ``1 Ann, 2 Bob``), or None."""
    line = text.rsplit("\n", 1)[-1]
    for start in re.finditer(r"(?:^|(?<=\s))1 ", line):
        parts = line[start.start():].split(", ")
        if all(part.startswith(f"{i} ") for i, part in enumerate(parts, 1)):
            return [part[len(f"{i} "):] for i, part in enumerate(parts, 1)]
    return None


def options_of(text: str) -> list[str]:
    """The labels of a prompt's numbered options: ``Reply: 1 Ann, 2 Bob`` gives [Ann, Bob]."""
    labels = numbered(text)
    assert labels, text
    return labels


def last_prompt(p: Phones, phone: str) -> str:
    for text in reversed(p.inbox(phone)):
        if numbered(text):
            return text
    raise AssertionError(f"{phone} has no prompt: {p.inbox(phone)}")


def open_table(p: Phones, names: tuple[str, ...], *, seating: bool = True) -> list[str]:
    phones = [number(i) for i in range(len(names))]
    p.text(phones[0], f"newgame {names[0]}")
    code = p.code(phones[0])
    for i, name in enumerate(names[1:], 1):
        p.text(phones[i], f"Join {code.lower()} {name}")
        assert p.inbox(phones[i])[-1].startswith("Welcome") or p.inbox(phones[i])
    if seating:
        order = list(names[1:]) + [names[0]]
        p.text(phones[0], "SEATS " + ", ".join(order))
        return [phones[names.index(n)] for n in order]
    return phones


def play_by_text(p: Phones, rng: random.Random, *, limit: int = 3000) -> Table:
    """Everyone texts answers to their newest prompt until the game ends: a number, a name, or JA/NEIN."""
    for _ in range(limit):
        table = p.table_of(number(0))
        state = table.state
        assert state is not None
        if table.row.status == "over":
            return table
        seat = rng.choice(awaiting(state))
        phone = table.seats[seat].address
        labels = options_of(last_prompt(p, phone))
        pick = rng.randrange(len(labels))
        style = rng.random()
        if state.phase is Phase.ELECTION and style < 0.3 and labels in (["Ja", "Nein"],):
            answer = labels[pick].upper()
        elif style < 0.5 and state.phase in (Phase.NOMINATION, Phase.EXECUTION, Phase.INVESTIGATE) and all(
            labels.count(label) == 1 for label in labels
        ):
            answer = f" {labels[pick].lower()}!"  # a name, with case and punctuation forgiven
        else:
            answer = f"{pick + 1}."
        before = state.step
        p.text(phone, answer)
        now = p.table_of(number(0)).state
        assert now is not None and (now.step > before or state.phase is Phase.ELECTION), (answer, labels)
    raise AssertionError("the game did not end")


def check_texts(p: Phones, phones: list[str]) -> None:
    """Every text fits its language's rule (one GSM-7 segment, or two UCS-2 ones for another script), and one that
    deals a role starts below what a lock screen shows."""
    language = {seat.address: seat.language for seat in p.table_of(phones[0]).seats}
    for phone, texts in p.fake.by_number().items():
        assert phone in phones, phone
        lang = language.get(phone, "en")
        catalog = Catalog.load("classic", lang)
        # A dealt role and a President's three cards, as the phone shows them (transliterated where GSM-7 writes).
        secrets = [CAPABILITIES.written(catalog.template(mid, sms=True).split("{")[0], lang)
                   for mid in ("deal-role", "prompt-discard")]
        assert all(secrets), secrets  # each begins with words of its own
        for text in texts:
            if gsm7_language(lang):
                assert len(text) <= SMS_LIMIT and is_gsm7(text), text
            else:
                assert len(text) <= UCS2_LIMIT and sms_segments(text) <= 2, text
            if any(secret in text for secret in secrets):
                assert text.startswith(CAPABILITIES.written(HEADER[lang], lang) + "\n"), text


# --- the webhook ----------------------------------------------------------------------------------------


def test_a_signed_request_is_handled_and_answered_with_empty_twiml(phones: Phones) -> None:
    phones.text(number(0), "NEWGAME Ann")
    # The join code, and its join page (the server has a public address; no table screen: the browser is off).
    opened = phones.inbox(number(0))[0]
    assert re.fullmatch(rf"Table open\. Join code: ([A-Z0-9]{{5}})\.\n{re.escape(PUBLIC_URL)}/join/\1", opened), opened
    request = phones.fake.requests[0]
    assert request["data"] == {"To": number(0), "From": OUR_NUMBER, "Body": phones.inbox(number(0))[0],
                               "StatusCallback": f"{PUBLIC_URL}/sms/status"}


@pytest.mark.parametrize(
    "how",
    ["unsigned", "empty signature", "wrong signature", "wrong token", "signed for another url",
     "signed for the internal url", "other fields than signed"],
)
def test_requests_not_signed_by_twilio_for_our_url_are_refused(phones: Phones, how: str) -> None:
    form = incoming(number(0), "NEWGAME Ann", "SM" + "1" * 32)
    response = {
        "unsigned": lambda: phones.post(form, headers=False),
        "empty signature": lambda: phones.post(form, sig=""),
        "wrong signature": lambda: phones.post(form, sig="bm90IGEgc2lnbmF0dXJl"),
        "wrong token": lambda: phones.post(form, sig=signature(WEBHOOK, form, token="another-token")),
        "signed for another url": lambda: phones.post(form, sign_for="https://evil.example.org/sms"),
        "signed for the internal url": lambda: phones.post(form, sign_for="http://testserver/sms"),
        "other fields than signed": lambda: phones.post(
            {**form, "Body": "JOIN ABCDE"}, sig=signature(WEBHOOK, form)
        ),
    }[how]()
    assert response.status_code == 403
    phones.deliver()
    assert phones.fake.sent == []
    assert phones.call(lambda: phones.service.store.tables_of(CHANNEL, number(0))) == []
    # The same message, properly signed, still counts: nothing of it was recorded.
    phones.text(number(0), "NEWGAME Ann", sid="SM" + "1" * 32)
    assert len(phones.inbox(number(0))) == 1


def test_the_signature_covers_the_query_string_and_the_default_port(phones: Phones) -> None:
    form = incoming(number(0), "NEWGAME Ann", "SM" + "2" * 32)
    assert phones.post(form, path="/sms?x=1", sign_for=WEBHOOK).status_code == 403
    assert phones.post(form, path="/sms?x=1", sign_for=WEBHOOK + "?x=1").status_code == 200
    form = incoming(number(1), "NEWGAME Bo", "SM" + "3" * 32)
    assert phones.post(form, sign_for=f"{PUBLIC_URL}:443/sms").status_code == 200


def test_a_replayed_message_sid_is_acknowledged_and_not_processed_twice(phones: Phones) -> None:
    phones.text(number(0), "NEWGAME Ann", sid="SMreplayed")
    phones.text(number(0), "NEWGAME Ann", sid="SMreplayed")  # Twilio retried the webhook
    assert len(phones.inbox(number(0))) == 1
    assert len(phones.call(lambda: phones.service.store.tables_of(CHANNEL, number(0)))) == 1


def test_a_sender_that_is_not_a_phone_number_is_ignored(phones: Phones) -> None:
    for sender in ("whatsapp:+12025550123", "Twilio", "+1", ""):
        response = phones.post(incoming(sender, "NEWGAME Ann", f"SM{sender or 'x'}"))
        assert response.status_code == 200
    phones.deliver()
    assert phones.fake.sent == []


def test_numbers_are_normalised_to_e164() -> None:
    assert normalise_number("+1 (202) 555-1000") == "+12025551000"
    assert normalise_number("+49 151 23456789") == "+4915123456789"
    assert normalise_number("(202) 555-1000", "US") == "+12025551000"
    assert normalise_number("0151 23456789", "DE") == "+4915123456789"
    assert normalise_number("202-555-1000") is None  # no country
    assert normalise_number("+1 555") is None and normalise_number("hello") is None


def test_a_german_number_gets_german_messages(phones: Phones) -> None:
    phones.text("+4915123456789", "NEWGAME Anna")
    assert phones.inbox("+4915123456789")[0].startswith(Catalog.load("classic", "de").text(
        "table-opened", sms=True, code="XXXXX")[:10])


# --- what a text means ----------------------------------------------------------------------------------

OPTIONS = (Option("Ann", "n1"), Option("Bob", "n2"), Option("Bobby", "n3"))


def out(text: str, *, kind: Kind = Kind.NOTE, secret: bool = False, options: tuple[Option, ...] = (),
        decision: int | None = None, message_id: str = "m") -> Outbound:
    """A message as the service hands it to the channel."""
    return Outbound(kind, text, secret=secret, options=options, decision=decision, message_id=message_id)


@pytest.mark.parametrize(
    "text,meaning",
    [
        ("NEWGAME Ann Lee", OpenTable("Ann Lee")),
        ("new game Ann", OpenTable("Ann")),
        ("neuer Tisch Anna", OpenTable("Anna")),
        ("Who am I?", Ask(Query.WHOAMI)),
        ("who", Ask(Query.WAITING)),
        ("Bob Ann", Decide("?", "Bob Ann")),
        ("newgame", OpenTable("")),
        ("JOIN acdef Bob", Join("ACDEF", "Bob")),
        ("  join   ACDEF   Mary Ann ", Join("ACDEF", "Mary Ann")),
        ("go", Start()),
        ("Go!", Start()),
        ("SEATS Ann, Mary Ann, Bob", Seating(("Ann", "Mary Ann", "Bob"))),
        ("order Ann Bob Cy", Seating(("Ann Bob Cy",))),  # one part: the service reads its words as names
        ("seats", Ask(Query.BOARD)),
        ("MOVE Bob 3", MoveSeat("Bob", 3)),
        ("remove Cy", RemoveSeat("Cy")),
        ("bots 2", AddComputers(2)),
        ("bots", AddComputers(None)),
        ("STATUS", Ask(Query.BOARD)),
        ("status?", Ask(Query.BOARD)),
        ("WhoAmI", Ask(Query.WHOAMI)),
        ("rules", Ask(Query.RULES)),
        ("?", Ask(Query.HELP)),
        ("waiting", Ask(Query.WAITING)),
        ("JA", Decide("vote", "ja")),
        ("ja.", Decide("vote", "ja")),
        ("Nein!", Decide("vote", "nein")),
        ("PAUSE", Host(HostCommand.PAUSE)),
        ("resume", Host(HostCommand.RESUME)),
        ("nudge", Host(HostCommand.NUDGE)),
        ("ENDGAME", Host(HostCommand.END)),
        ("rematch", Host(HostCommand.REMATCH)),
        ("HOSTONLY", Host(HostCommand.PUBLIC_TO_HOST)),
        ("ALLPHONES", Host(HostCommand.PUBLIC_TO_ALL)),
        ("cost", Host(HostCommand.COST)),
        ("language de", SetLanguage("de")),
        ("THEME corporate", SetTheme("corporate")),
        ("nominate Ann", Decide("nominate", "Ann")),
        ("hello there", Decide("?", "hello there")),
        ("stop please", Decide("?", "stop please")),  # a reserved word is never a game command
        ("yes 2", Decide("?", "yes 2")),
    ],
)
def test_texts_become_commands(text: str, meaning: object) -> None:
    assert parse(text) == meaning


def test_numbers_and_names_answer_the_last_prompt() -> None:
    # A number is an option of the newest prompt the phone was sent: the service knows which.
    assert parse("2") == Choose("2")
    assert parse(" #3 ") == Choose("3")
    assert parse("(1)") == Choose("1")
    assert parse("ann") == Decide("?", "ann")  # a name: the service matches it against the prompt's options

    def named(text: str, options: tuple[Option, ...] = OPTIONS) -> str | None:
        found = match_label(text, options)
        return None if found is None else found.token

    assert named("ann") == "n1"
    assert named("BOBBY!") == "n3"
    assert named("bob") == "n2"  # exact beats a longer name
    assert named("bo") is None  # Bob or Bobby: ask again
    assert named("Annabelle", (Option("Annabel", "x1"),)) == "x1"


def test_a_number_answers_the_prompt_the_phone_was_sent_not_one_still_on_its_way(phones: Phones) -> None:
    p = phones
    open_table(p, NAMES[:5])
    p.text(number(0), "GO")
    table = p.table_of(number(0))
    assert table.state is not None and table.state.president is not None
    president = table.seats[table.state.president].address
    prompt = last_prompt(p, president)
    labels = options_of(prompt)
    p.text(president, "2")
    table = p.table_of(number(0))
    assert table.state is not None and table.state.chancellor == table.names.index(
        next(n for n in table.names if n.startswith(labels[1][:10])))


@pytest.mark.parametrize("word", sorted(RESERVED_WORDS - {"yes"}))
def test_twilio_reserved_words_are_never_game_commands(word: str) -> None:
    for text in (word, word.upper(), f" {word.capitalize()}. "):
        meaning = parse(text)
        assert isinstance(meaning, Keyword) and meaning.word == word
    assert parse(f"{word} 1") == Decide("?", f"{word} 1")


def test_yes_which_twilio_passes_on_is_a_vote() -> None:
    for text in ("YES", "yes", " Yes. "):
        assert parse(text) == Decide("vote", "ja")


def test_start_of_a_phone_that_never_stopped_changes_nothing_and_help_gets_the_games_how_to(phones: Phones) -> None:
    phones.text(number(0), "NEWGAME Ann")
    for word in ("START", "unstop"):
        phones.text(number(0), word)
    assert len(phones.inbox(number(0))) == 1
    for word in ("HELP", "info"):
        phones.text(number(0), word)
        assert phones.inbox(number(0))[-1] == Catalog.load().text("how-to", sms=True)
    # A stranger's first text, whatever it says, gets how to open or join a table, in one text.
    for text in ("hello", "HELP", "9"):
        phones.text(number(7), text)
        assert "NEWGAME" in phones.inbox(number(7))[-1] and "JOIN" in phones.inbox(number(7))[-1]
    assert len(phones.inbox(number(7))) == 3



def test_anything_else_gets_a_one_line_hint(phones: Phones) -> None:
    p = phones
    open_table(p, NAMES[:5])
    p.text(number(0), "GO")
    p.text(number(1), "what now?")
    hint = p.inbox(number(1))[-1]
    assert hint == Catalog.load().text("input-unparseable", sms=True, text="what now?") + "\n" + \
        Catalog.load().text("nothing-changed", sms=True)
    p.text(number(1), "?")
    assert "BOARD" in p.inbox(number(1))[-1] and "help" not in p.inbox(number(1))[-1].lower()


# --- opening, joining, opting out -------------------------------------------------------------------------


def test_opening_joining_seating_and_going_by_text(phones: Phones) -> None:
    p = phones
    seats = open_table(p, NAMES[:5])
    assert p.inbox(number(1))[0].startswith("Welcome, Quentin! You have a seat; 2 players are at the table.")
    assert p.inbox(number(0))[-1].startswith("Seats: 1. Quentin, 2. Zora")
    p.text(number(0), "go")
    table = p.table_of(number(0))
    assert table.state is not None and [s.address for s in table.seats] == seats
    for phone in seats:
        deal = [t for t in p.inbox(phone) if "Role:" in t]
        assert len(deal) == 1 and deal[0].startswith(HEADER["en"] + "\n")
    # Only the host may start, seat or add computers.
    p.text(number(2), "bots 2")
    assert p.inbox(number(2))[-1] == Catalog.load().text("not-host", sms=True)


def test_a_number_seated_in_a_running_game_is_told_so(phones: Phones) -> None:
    p = phones
    open_table(p, NAMES[:5])
    p.text(number(0), "GO")
    p.text(number(9), "NEWGAME Vito")
    code = p.code(number(9))
    p.text(number(3), f"JOIN {code} Yusuf")
    assert p.inbox(number(3))[-1] == Catalog.load().text("seated-elsewhere", sms=True)
    assert len(p.call(lambda: p.service.store.tables_of(CHANNEL, number(9)))) == 1
    # Nothing changed at the table they are playing at.
    assert p.table_of(number(3)).seat_of(CHANNEL, number(3)) is not None


def test_a_player_who_opts_out_gets_nothing_more_and_the_host_is_told(phones: Phones) -> None:
    p = phones
    open_table(p, NAMES[:5])
    # Two texts wait for Zora when she texts STOP (delivery is late): they are never sent.
    p.call(lambda: p.service.handle(Inbound(CHANNEL, number(0), Start(), external_id="go")))
    pending = p.call(lambda: p.service.store.execute(
        "SELECT count(*) FROM outbox WHERE address = ? AND status = 'pending'", (number(2),)).fetchone()[0])
    assert pending >= 2
    before = len(p.inbox(number(2)))
    p.text(number(2), "STOP")
    # Until START nothing at all is queued for them: no answer, no result, no note (Twilio would refuse it).
    p.text(number(2), "STATUS")
    p.text(number(2), "HELP")
    table = p.table_of(number(0))
    assert table.state is not None and table.state.president is not None
    president = table.seats[table.state.president].address
    if president != number(2):
        p.text(president, "1")  # a nomination: a public result for every phone
    assert p.inbox(number(2))[before:] == []
    assert p.call(lambda: p.service.store.execute(
        "SELECT count(*) FROM outbox WHERE address = ? AND status = 'pending'", (number(2),)).fetchone()[0]) == 0
    assert not any("Role:" in t for t in p.inbox(number(2)))
    assert Catalog.load().text("player-opted-out", sms=True, name="Zora") in "\n".join(p.inbox(number(0)))
    cancelled = p.call(lambda: p.service.store.execute(
        "SELECT count(*) FROM outbox WHERE address = ? AND status = 'cancelled'", (number(2),)).fetchone()[0])
    assert cancelled == pending


def test_twilio_refusing_an_opted_out_number_drops_what_waits_for_it() -> None:
    fake = FakeTwilio()
    channel = SmsChannel(client(fake), OUR_NUMBER)
    fake.fail[number(1)] = [(400, 21610)]
    results = channel.send_batch(number(1), [out("a", kind=Kind.PROMPT, options=(Option("x", "n1"),)),
                                             out("b"), out("c")])
    assert [type(r) for r in results] == [PermanentFailure] * 3
    assert fake.sent == []


@pytest.mark.parametrize(
    "status,code,failure",
    [(429, 20429, TemporaryFailure), (500, 20500, TemporaryFailure), (503, 503, TemporaryFailure),
     (400, 21211, PermanentFailure), (400, 21610, PermanentFailure), (401, 20003, Refused)],
)
def test_twilio_errors_become_temporary_or_permanent_failures(status: int, code: int, failure: type) -> None:
    fake = FakeTwilio()
    fake.fail[number(1)] = [(status, code)]
    (result,) = SmsChannel(client(fake), OUR_NUMBER).send_batch(number(1), [out("hello")])
    assert isinstance(result, failure)


def test_temporary_failures_are_retried_in_order_with_back_off() -> None:
    fake = FakeTwilio()
    store = Store(memory=True)
    clock = TickingClock()
    store.enqueue([(None, CHANNEL, number(1), "m", out(f"text {i}").to_json()) for i in range(3)], clock())
    fake.fail[number(1)] = [(429, 20429), (500, 20500)]
    sender = Sender(store, {CHANNEL: SmsChannel(client(fake), OUR_NUMBER)}, clock=clock)
    assert sender.deliver_due() == 0
    clock.now += 1.5
    assert sender.deliver_due() == 0
    clock.now += 2.5
    assert sender.deliver_due() == 3
    assert fake.to(number(1)) == ["text 0\ntext 1\ntext 2"]


def test_a_messaging_service_and_a_test_api_url_are_used() -> None:
    settings = SmsSettings.of(Settings.load({**ENV, "TWILIO_FROM": "", "TWILIO_MESSAGING_SERVICE_SID": "MG" + "1" * 32,
                                             "TWILIO_API_URL": "http://127.0.0.1:4010/"}))
    fake = FakeTwilio()
    twilio = settings.client(http_client=fake)
    assert SmsChannel(twilio, settings.sender, settings.messaging_service_sid).send_batch(
        number(1), [out("hi")])[0] == Delivered(fake.sids_to(number(1))[0], 1, "queued")
    assert fake.sent == [{"To": number(1), "Body": "hi", "MessagingServiceSid": "MG" + "1" * 32}]
    assert fake.requests[0]["uri"].startswith("http://127.0.0.1:4010/2010-04-01/Accounts/")


# --- folding: what is due for one phone goes out as few one-segment texts as fit ------------------------


def test_folding_keeps_order_prompts_last_and_secrets_behind_the_header() -> None:
    h = HEADER["en"]
    bodies = [
        out("Public one.", message_id="a"),
        out(f"{h}\nRole: Liberal.\n---", secret=True, message_id="deal-role"),
        out("Public two.", message_id="b"),
        out(f"{h}\nSecret three.", secret=True, message_id="c"),
        out("Prompt. Reply: 1 A, 2 B", kind=Kind.PROMPT, options=(Option("A", "n0"),), message_id="p"),
        out("After the prompt.", message_id="d"),
        out("x" * 150, message_id="e"),
    ]
    groups = [[bodies[i] for i in g] for g in fold(bodies)]
    assert [[b.message_id for b in g] for g in groups] == [["a", "deal-role", "b", "c", "p"], ["d"], ["e"]]
    assert merged_text(groups[0]) == (
        f"{h}\nPublic one.\nRole: Liberal.\n---\nPublic two.\nSecret three.\nPrompt. Reply: 1 A, 2 B"
    )


def test_a_part_that_a_later_part_of_the_same_text_says_is_left_out() -> None:
    nominated = out("Ann nominates Bob as Chancellor. Vote now.", kind=Kind.CALL, decision=8)
    vote = out("President Ann, Chancellor Bob? Reply: 1 Ja, 2 Nein", kind=Kind.PROMPT, decision=8,
               options=(Option("Ja", "vj"),))
    candidate = out("Presidential Candidate: Cy.", kind=Kind.CALL, decision=9)
    enacted = out("Enacted: Liberal policy.", decision=9)
    assert merged_text([nominated, vote]) == vote.text
    assert merged_text([vote, nominated]) == f"{vote.text}\n{nominated.text}"  # only a later part says it again
    assert merged_text([enacted, candidate]) == "Enacted: Liberal policy.\nPresidential Candidate: Cy."
    nominate = out("Your Chancellor? Reply: 1 Ann", kind=Kind.PROMPT, decision=9, options=(Option("Ann", "n0"),))
    assert merged_text([enacted, candidate, nominate]) == "Enacted: Liberal policy.\nYour Chancellor? Reply: 1 Ann"
    other = out("Your Chancellor? Reply: 1 Ann", kind=Kind.PROMPT, decision=10, options=(Option("Ann", "n0"),))
    assert merged_text([candidate, other]) == f"{candidate.text}\n{other.text}"  # a prompt for another decision
    assert fold([nominated, vote]) == [[0, 1]]  # both delivered by the one text


# --- delivery status callbacks ---------------------------------------------------------------------------

STATUS = f"{PUBLIC_URL}/sms/status"


def test_texts_ask_twilio_for_status_callbacks_only_with_a_public_url(phones: Phones) -> None:
    phones.text(number(0), "NEWGAME Ann")
    assert phones.fake.sent[-1]["StatusCallback"] == STATUS
    local = SmsSettings.of(Settings.load({k: v for k, v in ENV.items() if k != "MODERATOR_PUBLIC_URL"}))
    assert local.status_callback is None and local.status_url == "http://127.0.0.1:8000/sms/status"


def started_game(p: Phones) -> int:
    """A 5-player game by text, started; returns how many texts were sent before GO."""
    open_table(p, NAMES[:5])
    before = len(p.fake.sent)
    p.text(number(0), "GO")
    return before


def report(p: Phones, form: dict[str, str]) -> Any:
    """Twilio posts a status callback, signed for the status URL."""
    return p.post(form, path="/sms/status", sign_for=STATUS)


def cost(p: Phones) -> str:
    p.text(number(0), "COST")
    return p.inbox(number(0))[-1]


@pytest.mark.parametrize("how", ["unsigned", "wrong token", "webhook url", "tampered"])
def test_status_callbacks_not_signed_by_twilio_for_the_status_url_are_refused(phones: Phones, how: str) -> None:
    p = phones
    started_game(p)
    sid = p.fake.sids_to(number(1))[-1]
    form = status_report(sid, "undelivered", number(1), error_code="30003")
    if how == "unsigned":
        response = p.post(form, path="/sms/status", headers=False)
    elif how == "wrong token":
        response = p.post(form, path="/sms/status", sig=signature(STATUS, form, token="not-our-token"))
    elif how == "webhook url":
        response = p.post(form, path="/sms/status", sign_for=WEBHOOK)
    else:
        response = p.post(form, path="/sms/status", sig=signature(STATUS, {**form, "MessageStatus": "delivered"}))
    assert response.status_code == 403
    p.deliver()
    host_texts = len(p.inbox(number(0)))
    assert "delivered" not in cost(p) and len(p.inbox(number(0))) == host_texts + 1  # nothing was recorded


def test_an_undelivered_text_to_a_seat_tells_the_host_once(phones: Phones) -> None:
    p = phones
    started_game(p)
    name = p.table_of(number(0)).seats[p.table_of(number(0)).seat_of(CHANNEL, number(1)) or 0].name
    told = Catalog.load().text("player-undelivered", sms=True, name=name)
    for sid in p.fake.sids_to(number(1)):
        for status in ("sent", "undelivered"):
            response = report(p, status_report(sid, status, number(1), error_code="30003"))
            assert response.status_code == 204
    p.deliver()
    assert p.inbox(number(0)).count(told) == 1
    assert not any(told in t for phone in (number(1), number(2)) for t in p.inbox(phone))


def test_cost_counts_segments_sent_and_what_twilio_reports_delivered(phones: Phones) -> None:
    p = phones
    go = started_game(p)
    before = cost(p)
    sent = int(re.findall(r"\d+", before)[0])
    assert before == Catalog.load().text("sms-cost", sms=True, segments=sent)
    sids = p.fake.sids_to(number(2))
    assert report(p, status_report(sids[-1], "failed", number(2), error_code="30006")).status_code == 204
    delivered = [f"SM{i:032x}" for i, m in enumerate(p.fake.sent, 1) if i > go and m["To"] in (number(1), number(3))]
    for sid in delivered:
        report(p, status_report(sid, "delivered", number(1)))
        report(p, status_report(sid, "sent", number(1)))  # late, out of order: ignored
    assert report(p, status_report("SM" + "f" * 32, "delivered", number(1))).status_code == 204  # not ours
    p.deliver()
    # Since the first COST: its reply and the host's note about the failed phone (this COST's reply is queued).
    assert cost(p) == Catalog.load().text(
        "sms-cost-delivery", sms=True, segments=sent + 2, delivered=len(delivered), failed=1
    )


# --- whole games by text --------------------------------------------------------------------------------


@pytest.mark.parametrize("players,seed", [(5, 3), (7, 4)])
def test_a_whole_game_played_only_by_text(players: int, seed: int, phones_dealt: Callable[[int], Phones]) -> None:
    p = phones_dealt(seed)
    rng = random.Random(seed)
    seats = open_table(p, NAMES[:players])
    started = len(p.fake.sent)
    p.text(number(0), "GO")
    table = play_by_text(p, rng)
    assert table.state is not None and table.state.phase is Phase.GAME_OVER
    check_texts(p, seats)
    for phone in seats:  # every phone hears the end: who won and who was who (no pointer to a screen that
        assert "win!" in p.inbox(phone)[-1] and "Hitler:" in p.inbox(phone)[-1]  # plain `sms` does not have)
        assert not any("Full story" in t for t in p.inbox(phone))
    # The host asks what the game cost: exactly the texts sent since GO.
    game_texts = len(p.fake.sent) - started
    p.text(number(0), "COST")
    assert p.inbox(number(0))[-1] == Catalog.load().text("sms-cost", sms=True, segments=game_texts)


def test_public_results_on_the_host_phone_only(phones: Phones) -> None:
    p = phones
    rng = random.Random(5)
    seats = open_table(p, NAMES[:7])
    p.text(number(1), "HOSTONLY")
    assert p.inbox(number(1))[-1] == Catalog.load().text("not-host", sms=True)
    p.text(number(0), "HOSTONLY")
    assert p.inbox(number(0))[-1] == Catalog.load().text("public-results-host", sms=True)
    marks = {phone: len(p.inbox(phone)) for phone in seats}
    p.text(number(0), "GO")
    play_by_text(p, rng)
    check_texts(p, seats)
    public = ("Elected", "Rejected", "Enacted", "The game starts", "win!")
    for phone in seats:
        got = p.inbox(phone)[marks[phone]:]
        if phone == number(0):
            assert any(t.startswith("Elected") or "\nElected" in t for t in got)
            assert any("win!" in t for t in got)
        else:
            # Only the end reaches them, in one text: who won, why, and who was who.
            assert not any(word in t for t in got[:-1] for word in public), got
            assert "win!" in got[-1] and "Hitler:" in got[-1], got[-1]
            assert any("Role:" in t for t in got) and any("Reply:" in t for t in got)
        assert not any("Full story" in t or "http" in t for t in got)  # no table screen under plain `moderator sms`
    p.text(number(0), "ALLPHONES")
    assert p.inbox(number(0))[-1] == Catalog.load().text("public-results-all", sms=True)


def test_a_mixed_table_of_sms_and_chat_players(phones: Phones) -> None:
    """Two phones text; three players use a chat channel (long messages, buttons) at the same table."""
    p = phones
    chat: dict[str, list[dict[str, Any]]] = {}

    class Chat:
        capabilities = Capabilities()

        def send_batch(self, address: str, messages: Sequence[Outbound]) -> list[Result]:
            chat.setdefault(address, []).extend(as_body(m) for m in messages)
            return [Delivered() for _ in messages]


    p.others["chat"] = p.call(lambda: Sender(p.service.store, {"chat": Chat()}, clock=p.clock))
    p.text(number(0), "NEWGAME Ximena")
    code = p.code(number(0))
    p.text(number(1), f"JOIN {code} Quentin")
    ids = itertools.count(1)

    def chat_input(address: str, command: Any) -> None:
        p.call(lambda: p.service.handle(Inbound("chat", address, command, external_id=f"c{next(ids)}")))
        p.deliver()

    for i, name in enumerate(("Zora", "Yusuf", "Wanda")):
        chat_input(f"chat{i}", Join(code, name))
    p.text(number(0), "GO")
    rng = random.Random(6)
    for _ in range(3000):
        table = p.table_of(number(0))
        assert table.state is not None
        if table.row.status == "over":
            break
        seat = rng.choice(awaiting(table.state))
        address = table.seats[seat].address
        if table.seats[seat].channel == CHANNEL:
            p.text(address, str(rng.randrange(len(options_of(last_prompt(p, address)))) + 1))
        else:
            prompt = next(b for b in reversed(chat[address]) if b["choices"])
            chat_input(address, Choose(rng.choice(prompt["choices"])["token"], prompt["decision"]))
    assert p.table_of(number(0)).row.status == "over"
    check_texts(p, [number(0), number(1)])
    # Chat players read the long sentences; phones the short ones.
    assert any(len(b["text"]) > SMS_LIMIT for bodies in chat.values() for b in bodies)
    assert any(b["message_id"] == "vote-recorded" for b in chat["chat0"])


def play_by_text_numbers(p: Phones, rng: random.Random) -> None:
    for _ in range(3000):
        table = p.table_of(number(0))
        assert table.state is not None
        if table.row.status == "over":
            return
        phone = table.seats[rng.choice(awaiting(table.state))].address
        p.text(phone, str(rng.randrange(len(options_of(last_prompt(p, phone)))) + 1))
    raise AssertionError("the game did not end")


def test_a_table_resumes_after_a_restart(tmp_path: Any) -> None:
    path = tmp_path / "moderator.db"
    fake = FakeTwilio()
    settings = Settings.load(ENV)
    rng = random.Random(9)
    for round_ in range(2):
        app = create_app(settings, channels=(SPEC,), store_factory=lambda: Store(path), network={CHANNEL: fake},
                         seed=lambda: rng.getrandbits(64))
        with TestClient(app) as http:
            def text(phone: str, body: str, sid: str) -> None:
                form = incoming(phone, body, sid)
                assert http.post("/sms", data=form, headers={"X-Twilio-Signature": signature(WEBHOOK, form)}
                                 ).status_code == 200
            if round_ == 0:
                text(number(0), "NEWGAME Ann", "SM1")
                wait_for(lambda: len(fake.to(number(0))) == 1)
                code = re.search(r" ([A-Z0-9]{5})\.(?:\n|$)", fake.to(number(0))[0])
                assert code
                for i in range(1, 5):
                    text(number(i), f"JOIN {code.group(1)} {NAMES[i]}", f"SMj{i}")
                text(number(0), "GO", "SMgo")
                wait_for(lambda: any("Reply:" in t for t in fake.sent_bodies()))
            else:
                # The new process knows the game: the board comes back, and a repeated id is still ignored.
                text(number(0), "GO", "SMgo")
                before = len(fake.sent)
                text(number(1), "STATUS", "SMstatus")
                wait_for(lambda: len(fake.sent) > before)  # noqa: B023 (called at once)
                assert any(m["Body"].startswith("Liberal 0/5") for m in fake.sent[before:] if m["To"] == number(1))


def wait_for(condition: Callable[[], bool], timeout: float = 10.0) -> None:
    import time

    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


# --- the join QR code and the command ---------------------------------------------------------------------


def test_the_join_qr_code_holds_an_sms_link() -> None:
    link = join_link(OUR_NUMBER, "ACDEF")
    assert link == "sms:+15017122661?body=JOIN%20ACDEF"
    assert qr_png(link).startswith(b"\x89PNG\r\n\x1a\n")
    svg = qr_svg(link)
    assert svg.startswith("<?xml") or "<svg" in svg[:200]
    text = qr_text(link)
    assert len(text.splitlines()) > 10 and set(text) - set(" \n\xa0") <= set("█▀▄")


def test_moderator_sms_qr_writes_png_svg_and_prints_text(tmp_path: Any, capsys: pytest.CaptureFixture[str],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TWILIO_FROM", OUR_NUMBER)
    png, svg = tmp_path / "join.png", tmp_path / "join.svg"
    assert cli.main(["sms-qr", "acdef", "--png", str(png), "--svg", str(svg)]) == 0
    out = capsys.readouterr().out
    assert "sms:+15017122661?body=JOIN%20ACDEF" in out and "▀" in out
    assert png.read_bytes().startswith(b"\x89PNG") and "<svg" in svg.read_text()


def test_moderator_sms_without_credentials_says_so_and_exits_2(capsys: pytest.CaptureFixture[str],
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    for key in ("TWILIO_ACCOUNT_SID", "TWILIO_AUTH_TOKEN", "TWILIO_FROM", "TWILIO_MESSAGING_SERVICE_SID"):
        monkeypatch.delenv(key, raising=False)
    assert cli.main(["sms"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and len(captured.err.strip().splitlines()) == 1
    monkeypatch.delenv("TWILIO_FROM", raising=False)
    assert cli.main(["sms-qr", "ACDEF"]) == 2


def test_opt_out_of_someone_at_no_table_changes_nothing() -> None:
    store = Store(memory=True)
    service = Service(store)
    service.handle(Inbound(CHANNEL, number(5), OptOut(), external_id="x"))
    assert store.backlog() == 0


# --- a real table of phones (issue 16) ----------------------------------------------------------------------


def test_one_phone_sits_at_one_table_and_is_told_how_to_leave_the_first(phones: Phones) -> None:
    p = phones
    p.text(number(0), "NEWGAME Zoe")
    first = p.code(number(0))
    p.text(number(5), "NEWGAME Ann")
    second = p.code(number(5))
    p.text(number(1), f"JOIN {first} Vic")
    p.text(number(1), f"JOIN {second} Vic")
    refusal = p.inbox(number(1))[-1]
    assert refusal == Catalog.load().text("seated-elsewhere-lobby", sms=True, code=first)
    assert "LEAVE" in refusal
    assert p.call(lambda: [t.id for t in p.service.tables.of(CHANNEL, number(1))]) == [p.table_of(number(0)).id]
    # Leaving the first table lets them join the second.
    p.text(number(1), "LEAVE")
    p.text(number(1), f"JOIN {second} Vic")
    assert p.inbox(number(1))[-1].startswith("Welcome, Vic!")
    assert p.table_of(number(5)).seat_of(CHANNEL, number(1)) is not None


def test_newgame_while_seated_at_another_table_is_refused_with_how_to_leave(phones: Phones) -> None:
    p = phones
    open_table(p, NAMES[:5])
    p.text(number(6), "NEWGAME Zoe")
    code = p.code(number(6))
    p.text(number(6), "NEWGAME Zoe")  # in the lobby of their own table
    assert p.inbox(number(6))[-1] == Catalog.load().text("open-seated-elsewhere-lobby", sms=True, code=code)
    p.text(number(0), "GO")
    p.text(number(2), "NEWGAME Zora")  # in a running game
    assert p.inbox(number(2))[-1] == Catalog.load().text("seated-elsewhere", sms=True)
    assert len(p.call(lambda: p.service.store.tables_of(CHANNEL, number(2)))) == 1
    assert len(p.call(lambda: p.service.store.tables_of(CHANNEL, number(6)))) == 1


def test_names_in_any_script_are_written_in_gsm7_and_a_name_without_letters_is_refused(phones: Phones) -> None:
    p = phones
    p.text(number(0), "NEWGAME Zoe")
    code = p.code(number(0))
    p.text(number(1), f"JOIN {code} Łukasz")
    assert p.inbox(number(1))[-1].startswith("Welcome, Lukasz!")
    p.text(number(2), f"JOIN {code} José")
    assert p.inbox(number(2))[-1].startswith("Welcome, José!")  # GSM-7 has é
    p.text(number(3), f"JOIN {code} Алексей")  # Cyrillic: an English text writes it in Latin letters
    assert p.inbox(number(3))[-1].startswith("Welcome, Aleksey!")
    assert p.table_of(number(0)).names[-1] == "Алексей"  # the name itself stays as its owner wrote it
    for name in ("\U0001f600\U0001f389", "#4", "5"):  # emoji, a number
        p.text(number(4), f"JOIN {code} {name}")
        assert p.inbox(number(4))[-1] == Catalog.load().text("name-refused-join", sms=True, code=code)
    assert len(p.table_of(number(0)).seats) == 4
    p.text(number(1), "RENAME 7")
    assert p.inbox(number(1))[-1] == Catalog.load().text("name-refused", sms=True)


# --- any script: names and numbers as people type them ------------------------------------------------------


def _nominate_by_typing(p: Phones, phones: list[str], target: str, typed: str) -> str:
    """The President texts ``typed`` to their nomination prompt, where ``target`` is an option (a round of Nein
    votes first if ``target`` is the President). Returns the President's phone."""
    table = p.table_of(phones[0])
    seat = table.names.index(target)
    assert table.state is not None
    if table.state.president == seat:
        president = phones[seat]
        p.text(president, "1")
        for phone in phones:
            p.text(phone, "NEIN")
        table = p.table_of(phones[0])
    assert table.state is not None and table.state.president is not None
    president = phones[table.state.president]
    before = len(p.inbox(president))
    p.text(president, typed)
    state = p.table_of(phones[0]).state
    assert state is not None and state.phase is Phase.ELECTION, p.inbox(president)[before:]
    assert state.chancellor == seat, (typed, state.chancellor is not None and table.names[state.chancellor])
    return president


@pytest.mark.parametrize(("name", "typed"), [
    ("José", "jose"),  # without its accent
    ("Алексей", "алексей"),  # a Cyrillic name as a Russian keyboard types it
    ("Алексей", "Aleksey"),  # as an English text shows it
    ("کریمی", "كريمي"),  # a Persian name typed with the Arabic kaf and yeh
    ("علی\u200cرضا", "علیرضا"),  # without its non-joiner
    ("علی\u200cرضا", "علي رضا"),  # with a space for the non-joiner, and the Arabic yeh
    ("فاطمه", "فاطمة"),  # a final teh marbuta for heh
])
def test_a_name_typed_without_its_accent_or_in_another_script_nominates_by_text(
        name: str, typed: str, phones_dealt: Callable[[int], Phones]) -> None:
    p = phones_dealt(3)
    names = ("Zoe", name, "Ann", "Bob", "Cy")
    phones = open_table(p, names, seating=False)
    p.text(phones[0], "GO")
    _nominate_by_typing(p, phones, name, typed)


def test_a_cyrillic_name_reads_in_latin_letters_in_an_english_text_and_as_written_in_a_persian_one(
        phones_dealt: Callable[[int], Phones]) -> None:
    p = phones_dealt(4)
    names = ("Zoe", "Алексей", "Ann", "Bob", "Cy")
    phones = open_table(p, names, seating=False)
    p.text(phones[2], "LANGUAGE fa")
    p.text(phones[0], "GO")
    assert any("Aleksey joined" in text for text in p.inbox(phones[0]))  # English: GSM-7, transliterated
    persian = p.inbox(phones[2])
    assert any("Алексей" in text and "\u2068" in text for text in persian)  # Persian: UCS-2, isolated
    assert not any("Aleksey" in text for text in persian)


def test_persian_digits_answer_a_prompt_and_take_a_seat_with_a_join_code(phones_dealt: Callable[[int], Phones]) -> None:
    p = phones_dealt(5)
    persian = str.maketrans("0123456789", "۰۱۲۳۴۵۶۷۸۹")
    p.text(number(0), "NEWGAME Zoe")
    code = p.code(number(0))
    for i, name in enumerate(("Ann", "Bob", "Cy", "Dee"), 1):
        typed = code.translate(persian) if i % 2 else code  # the code's digits as a Persian keyboard types them
        p.text(number(i), f"JOIN {typed} {name}")
        assert p.inbox(number(i))[-1].startswith(f"Welcome, {name}!"), (typed, p.inbox(number(i))[-1])
    p.text(number(0), "GO")
    state = p.table_of(number(0)).state
    assert state is not None and state.president is not None
    p.text(number(state.president), "۲")  # Persian two
    state = p.table_of(number(0)).state
    assert state is not None and state.phase is Phase.ELECTION
    p.text(number(0), "٢")  # an Arabic-Indic digit answers the ballot: 2 is Nein
    state = p.table_of(number(0)).state
    assert state is not None and state.votes[0] is False


def test_a_persian_players_texts_go_in_persian_within_two_ucs2_segments(phones_dealt: Callable[[int], Phones]) -> None:
    p = phones_dealt(6)
    iranian = "+989123456789"  # a number from Iran: Persian from the start
    p.text(number(0), "NEWGAME Zoe")
    code = p.code(number(0))
    p.text(iranian, f"JOIN {code} زهرا")
    welcome = p.inbox(iranian)[-1]
    assert welcome.startswith(Catalog.load("classic", "fa").text("table-joined", sms=True, name="زهرا", players=2))
    for phone in (number(1), number(2), number(3)):
        p.text(phone, f"JOIN {code} P{phone[-1]}")
    p.text(number(0), "GO")
    texts = p.inbox(iranian)
    assert texts and all(len(t) <= UCS2_LIMIT and sms_segments(t) <= 2 for t in texts)
    assert any(not is_gsm7(t) and sms_segments(t) == 2 for t in texts)  # a text longer than one UCS-2 segment
    assert any(t.startswith("\u2068P1\u2069 ") for t in texts)  # "P1 joined" in Persian: the Latin name isolated
    assert all(is_gsm7(t) for t in p.inbox(number(0)))  # the English host's stay GSM-7


def test_language_alone_or_a_wrong_one_lists_the_languages_there_are(phones: Phones) -> None:
    p = phones
    p.text(number(0), "NEWGAME Zoe")
    en = Catalog.load()
    codes = ", ".join(languages())
    p.text(number(0), "LANGUAGE")
    assert p.inbox(number(0))[-1] == en.text("languages", sms=True, language="en", languages=codes)
    p.text(number(0), "language xx")
    assert p.inbox(number(0))[-1] == en.text("unknown-language", sms=True, language="xx", languages=codes)
    p.text(number(0), "LANGUAGE ES")
    assert p.inbox(number(0))[-1] == Catalog.load("classic", "es").text("language-set", sms=True, language="es")


def test_a_name_the_texts_call_their_reader_is_refused_by_text(phones: Phones) -> None:
    p = phones
    p.text(number(0), "NEWGAME Zoe")
    code = p.code(number(0))
    p.text(number(1), f"JOIN {code} YOU")
    assert p.inbox(number(1))[-1] == Catalog.load().text("name-reserved-join", sms=True, name="YOU", code=code)
    assert len(p.table_of(number(0)).seats) == 1
    p.text(number(0), "RENAME Du")
    assert p.inbox(number(0))[-1] == Catalog.load().text("name-reserved", sms=True, name="Du")
    assert p.table_of(number(0)).names == ("Zoe",)


def test_bots_at_a_full_table_is_refused_in_one_text_and_more_than_fit_says_so(phones: Phones) -> None:
    p = phones
    p.text(number(0), "NEWGAME Zoe")
    code = p.code(number(0))
    for i in range(1, 8):
        p.text(number(i), f"JOIN {code} P{i}")
    p.text(number(0), "BOTS 5")
    assert p.inbox(number(1))[-1].startswith("Only 2 computer players joined, no more fit: 10 players.")
    before = {i: len(p.inbox(number(i))) for i in range(8)}
    p.text(number(0), "BOTS 1")
    assert p.inbox(number(0))[before[0]:] == ["This table is full: at most 10 players."]
    assert all(len(p.inbox(number(i))) == before[i] for i in range(1, 8))
    assert len(p.table_of(number(0)).seats) == 10


def test_a_qr_joiner_is_asked_for_a_name_before_taking_a_seat(phones: Phones) -> None:
    p = phones
    p.text(number(0), "NEWGAME Zoe")
    code = p.code(number(0))
    p.text(number(1), f"JOIN {code}")  # what the QR code's text says, sent as it is
    assert p.inbox(number(1))[-1] == Catalog.load().text("name-asked", sms=True, code=code)
    assert len(p.table_of(number(0)).seats) == 1
    p.text(number(1), f"JOIN {code} Sam")
    assert p.table_of(number(0)).names == ("Zoe", "Sam")


def test_a_host_without_a_name_is_never_called_by_a_number(phones: Phones) -> None:
    phones.text(number(0), "NEWGAME")
    assert phones.table_of(number(0)).names == (Catalog.load().text("host-name"),)


def a_started_game_and_one_players_phone(p: Phones) -> tuple[str, str]:
    """A five-phone game under HOSTONLY, started; a phone that is not the host's, and its seat's name."""
    seats = open_table(p, NAMES[:5])
    p.text(number(0), "HOSTONLY")
    p.text(number(0), "GO")
    phone = next(phone for phone in seats if phone != number(0))
    table = p.table_of(number(0))
    return phone, table.seats[[s.address for s in table.seats].index(phone)].name


def test_an_opted_out_seat_is_never_prompted_again_and_the_host_hears_what_to_do(phones: Phones) -> None:
    p = phones
    stopped, name = a_started_game_and_one_players_phone(p)
    p.text(stopped, "STOP")
    notice = Catalog.load().text("player-opted-out", sms=True, name=name)
    assert notice in p.inbox(number(0))[-1].split("\n")
    assert all(word in notice for word in ("START", "STANDIN", "NEWPHONE"))
    before = len(p.inbox(stopped))
    p.text(number(0), "NUDGE")
    p.call(lambda: p.service.tick())
    assert p.inbox(stopped)[before:] == []
    # START: texts reach them again, and the host is told.
    p.text(stopped, "START")
    assert p.inbox(number(0))[-1] == Catalog.load().text("player-opted-in", sms=True, name=name)
    assert not p.table_of(number(0)).opted_out(CHANNEL, stopped)


def test_yes_opts_a_stopped_phone_back_in_and_then_counts_as_a_vote(phones: Phones) -> None:
    # Twilio takes YES as an opt-in word too: the phone gets texts again, so the table must not keep waiting on it.
    p = phones
    stopped, name = a_started_game_and_one_players_phone(p)
    p.text(stopped, "STOP")
    assert p.table_of(number(0)).opted_out(CHANNEL, stopped)
    p.text(stopped, "YES")
    assert not p.table_of(number(0)).opted_out(CHANNEL, stopped)
    assert Catalog.load().text("player-opted-in", sms=True, name=name) in p.inbox(number(0))[-1].split("\n")
    # A phone that never stopped: YES is only what it says at the table (no vote open: nothing changed).
    other, other_name = next((s.address, s.name) for s in p.table_of(number(0)).seats
                             if s.address not in (number(0), stopped))
    before = len(p.inbox(number(0)))
    p.text(other, "YES")
    told = Catalog.load().text("player-opted-in", sms=True, name=other_name)
    assert all(told not in t for t in p.inbox(number(0))[before:])


def test_a_president_who_texts_a_computer_players_name_nominates_it(phones: Phones) -> None:
    # "Reply with an option's number or name": "Computer 1" is the option, not COMPUTERS 1 (a host's lobby word).
    p = phones
    open_table(p, NAMES[:4], seating=False)
    p.text(number(0), "COMPUTERS 1")
    p.text(number(0), "GO")
    table = p.table_of(number(0))
    assert table.state is not None and table.state.phase is Phase.NOMINATION and table.state.president is not None
    president = table.seats[table.state.president]
    assert not president.computer and "Computer 1" in options_of(last_prompt(p, president.address))
    p.text(president.address, "Computer 1")
    state = p.table_of(number(0)).state
    assert state is not None and state.phase is Phase.ELECTION
    assert state.chancellor is not None and table.names[state.chancellor] == "Computer 1"


def test_a_host_who_texts_a_carrier_stop_word_hands_the_table_to_the_next_person(phones: Phones) -> None:
    p = phones
    open_table(p, NAMES[:5], seating=False)
    p.text(number(0), "END")  # Twilio's opt-out word, not ENDGAME: nothing reaches the host any more
    table = p.table_of(number(1))
    assert table.is_host(CHANNEL, number(1))
    told = Catalog.load().text("host-opted-out", sms=True, old=NAMES[0], name=NAMES[1])
    assert all(told in p.inbox(number(i))[-1].split("\n") for i in range(1, 5))
    p.text(number(1), "GO")
    assert p.table_of(number(1)).state is not None
    before = len(p.inbox(number(0)))
    p.text(number(0), "START")
    back = "\n".join(p.inbox(number(0))[before:])
    assert Catalog.load().text("host-opted-in", sms=True, host=NAMES[1]) in back
    assert Catalog.load().text("knowledge-title", sms=True) in back  # and what the seat missed since STOP
    assert p.inbox(number(1))[-1] == Catalog.load().text("player-opted-in", sms=True, name=NAMES[0])


def test_a_refusal_at_a_prompt_repeats_its_options_and_a_number_out_of_turn_says_so(phones: Phones) -> None:
    p = phones
    open_table(p, NAMES[:5])
    p.text(number(0), "GO")
    table = p.table_of(number(0))
    assert table.state is not None and table.state.president is not None
    president = table.seats[table.state.president].address
    prompt = last_prompt(p, president)
    for typo, said in (("9", "There is no option 9."), ("zzz", 'I did not understand "zzz".')):
        p.text(president, typo)
        answer = p.inbox(president)[-1]
        assert answer.startswith(said) and answer.endswith(prompt), answer
        assert len(answer) <= SMS_LIMIT
    other = next(s.address for s in table.seats if s.address != president)
    p.text(other, "1")
    assert p.inbox(other)[-1].startswith(Catalog.load().text("input-nothing-owed", sms=True))


@pytest.mark.parametrize("names", [NAMES[:5], LONG_NAMES])
def test_status_is_one_text_that_names_whoever_the_table_waits_for(phones: Phones, names: tuple[str, ...]) -> None:
    p = phones
    open_table(p, names, seating=False)
    p.text(number(0), "GO")
    table = p.table_of(number(0))
    assert table.state is not None and table.state.president is not None
    short = table.info().short_names
    president = table.seats[table.state.president].address
    for phone in (number(1), president):
        before = len(p.inbox(phone))
        p.text(phone, "STATUS")
        assert len(p.inbox(phone)) == before + 1
        answer = p.inbox(phone)[-1]
        assert short[table.state.president] in answer.rsplit("\n", 1)[-1] and len(answer) <= SMS_LIMIT
    p.text(president, "1")  # a nomination: the vote is open
    table = p.table_of(number(0))
    assert table.state is not None and table.state.phase is Phase.ELECTION
    voted = [s.address for s in table.seats[:3]]
    for phone in voted:
        p.text(phone, "1")
    before = len(p.inbox(number(4)))
    p.text(number(4), "STATUS")
    assert len(p.inbox(number(4))) == before + 1
    waiting = p.inbox(number(4))[-1].rsplit("\n", 1)[-1]
    assert waiting.startswith("Still to vote: ")
    for seat in table.seats:
        assert (short[seat.position] in waiting) is (seat.address not in voted), (seat.name, waiting)


@pytest.mark.parametrize("players", [7, 10])
def test_the_lobby_list_is_one_text_with_twenty_character_names(phones: Phones, players: int) -> None:
    p = phones
    open_table(p, LONG_NAMES[:players], seating=False)
    for phone in (number(0), number(3)):
        p.text(phone, "STATUS")
        listed = p.inbox(phone)[-1]
        assert listed.startswith("Seats: 1. ") and len(listed) <= SMS_LIMIT and is_gsm7(listed), listed
        assert f"{players}. " in listed and not listed.endswith("...")
    p.text(number(0), "SEATS " + ", ".join(reversed(LONG_NAMES[:players])))
    assert p.table_of(number(0)).names[0].startswith(LONG_NAMES[players - 1][:5])
    listed = p.inbox(number(0))[-1]
    assert len(listed) <= SMS_LIMIT and f"{players}. " in listed and not listed.endswith("...")


def test_the_end_and_the_join_code_carry_the_table_screen_link_where_there_is_one() -> None:
    messages = [Outbound(Kind.END, "Five Liberal Policies are enacted: the Liberals win!\nHitler: Ann.",
                         message_id="game-ended-liberal-policies", table="T1")]
    with_screen, without = FakeTwilio(), FakeTwilio()
    SmsChannel(client(with_screen), OUR_NUMBER,
               screen_url=lambda table: f"https://example.org/table/{table}").send_batch(number(1), messages)
    assert with_screen.to(number(1)) == [messages[0].text + "\nhttps://example.org/table/T1"]
    SmsChannel(client(without), OUR_NUMBER).send_batch(number(1), messages)
    assert without.to(number(1)) == [messages[0].text]


def test_the_table_screen_link_follows_the_kind_of_message_never_its_id() -> None:
    screen = FakeTwilio()
    channel = SmsChannel(client(screen), OUR_NUMBER, screen_url=lambda table: f"https://example.org/table/{table}")
    renamed = Outbound(Kind.END, "The Liberals win!", message_id="renamed-end", table="T1")
    look_alike = Outbound(Kind.NOTE, "Paused.", message_id="game-ended-but-a-note", table="T1")
    channel.send_batch(number(1), [renamed])
    channel.send_batch(number(2), [look_alike])
    assert screen.to(number(1)) == ["The Liberals win!\nhttps://example.org/table/T1"]
    assert screen.to(number(2)) == ["Paused."]


@pytest.mark.parametrize("lang,theme,seed", [("en", "classic", 7), ("de", "corporate", 8)])
def test_votes_at_the_table_by_text_fit_one_segment_and_each_election_reaches_the_host_in_one_text(
        lang: str, theme: str, seed: int, caplog: pytest.LogCaptureFixture, phones_dealt: Callable[[int], Phones]
) -> None:
    p = phones_dealt(seed)
    rng = random.Random(seed)
    seats = open_table(p, LONG_NAMES, seating=False)
    if lang == "de":
        for phone in seats:
            p.text(phone, "LANGUAGE de")
    p.text(number(0), f"THEME {theme}")
    p.text(number(0), "HOSTONLY")
    p.text(number(0), "TABLEVOTES on")
    p.text(number(0), "go")
    for _ in range(3000):
        table = p.table_of(number(0))
        state = table.state
        assert state is not None
        if table.row.status == "over":
            break
        if state.phase is Phase.ELECTION:
            assert state.president is not None
            p.text(seats[1], "STATUS")
            ja = [table.names[s].split()[0] for s in range(len(seats)) if state.alive[s] and rng.random() < 0.6]
            p.text(table.seats[state.president].address, " ".join(["VOTES" if lang == "en" else "STIMMEN", *ja]))
            continue
        phone = table.seats[rng.choice(awaiting(state))].address
        p.text(phone, str(rng.randrange(len(options_of(last_prompt(p, phone)))) + 1))
    else:
        raise AssertionError("the game did not end")
    check_texts(p, seats)
    assert not [r for r in caplog.records if "was cut" in r.getMessage() or "cut to" in r.getMessage()]
    # The nomination is never a text of its own on the phones: it rides with the election's result.
    nominates = Catalog.load(theme, lang).text("chancellor-nominated", sms=True, president="X", chancellor="Y")
    assert not any(nominates.split("X", 1)[1].split("Y")[0] in t for t in p.inbox(number(0)))


def test_a_private_text_keeps_its_secret_below_the_lock_screen_preview(phones: Phones) -> None:
    p = phones
    seats = open_table(p, LONG_NAMES[:7])
    p.text(number(0), "GO")
    for phone in seats:
        p.text(phone, "WHOAMI")
        for text in p.inbox(phone):
            if "Role:" in text:
                preview, secret = text.split("\n")[:PREVIEW_LINES], text.split("\n")[PREVIEW_LINES:]
                assert "\n".join(preview) == HEADER["en"] and any("Role:" in line for line in secret)
                assert len(text) <= SMS_LIMIT


# --- every language at the table by text ----------------------------------------------------------------

CATALOGS = [(theme, lang) for lang in languages() for theme in themes()]
ASKED = (Verb.BOARD, Verb.WHOAMI, Verb.RULES, Verb.HELP)
"""What every player asks in their own words before playing."""


def word(verb: Verb, lang: str, reserved: frozenset[str] = frozenset()) -> str:
    """The word a speaker of ``lang`` types for ``verb`` (the one help shows in that language)."""
    shown = grammar().shown(verb, lang, reserved)
    assert shown, (verb, lang)
    return shown


def unisolated(text: str) -> str:
    """A text without the invisible marks that isolate a name or code running the other way (Persian's "fa")."""
    return re.sub("[\u2066-\u2069]", "", text)


RUSSIAN_LONG_NAMES = (
    "Александра Щербакова",  # 20 characters each, in Cyrillic letters
    "Святослав Преображен",
    "Евфросиния Вознесенс",
    "Владимир Краснощёков",
    "Анастасия Жемчужнико",
    "Ярослав Черепановски",
    "Мстислав Ржевский-Ко",
    "Екатерина Шереметьев",
    "Всеволод Тихомировск",
    "Людмила Верещагина-Ю",
)
SCRIPTS = {"LATIN": LONG_NAMES, "ARABIC": PERSIAN_LONG_NAMES, "CYRILLIC": RUSSIAN_LONG_NAMES}
"""Twenty-character names by script: Latin letters with accents, Persian, Russian."""


def names(theme: str, lang: str) -> tuple[str, ...]:
    """Names in the language's own script in the classic theme (its catalog's letters say which), and in another
    script in the corporate one (the languages take turns): every language meets its own names and foreign ones."""
    letter = next(c for c in Catalog.load("classic", lang).text("list-nobody") if c.isalpha())
    own = unicodedata.name(letter).split()[0]
    own = own if own in SCRIPTS else "LATIN"
    if theme == "classic":
        return SCRIPTS[own]
    others = [script for script in SCRIPTS if script != own]
    return SCRIPTS[others[languages().index(lang) % len(others)]]


SMS_GAMES = [(theme, lang, 10, 7 + n, names(theme, lang)) for n, (theme, lang) in enumerate(CATALOGS)]
SMS_GAMES += [("classic", "en", 5, 5, LONG_NAMES), ("corporate", "en", 6, 6, LONG_NAMES)]  # the fewest players


@pytest.mark.parametrize(("theme", "lang", "players", "seed", "people"), SMS_GAMES,
                         ids=[f"{t}-{lang}-{n}" for t, lang, n, _, _ in SMS_GAMES])
def test_a_whole_game_by_sms_in_every_language_fits_its_texts(theme: str, lang: str, players: int, seed: int,
                                                               people: tuple[str, ...],
                                                               phones_dealt: Callable[[int], Phones]) -> None:
    """Ten phones with twenty-character names play by text in the catalog's language, typing its words: every text
    fits its language's rule (one GSM-7 segment, transliterated, or two UCS-2 ones) and a secret starts below the
    lock screen's preview; every phone reads the game in its language and theme."""
    p = phones_dealt(seed)
    typed = {verb: word(verb, lang, RESERVED_WORDS) for verb in Verb}
    seats = [number(i) for i in range(players)]
    p.text(seats[0], f"{typed[Verb.OPEN]} {people[0]}")
    code = p.code(seats[0])
    for phone, name in zip(seats[1:], people[1:players], strict=True):
        p.text(phone, f"{typed[Verb.JOIN]} {code} {name}")
    for phone in seats:
        p.text(phone, f"{typed[Verb.LANGUAGE]} {lang}")
    p.text(seats[0], f"{typed[Verb.THEME]} {theme}")
    p.text(seats[0], typed[Verb.START])
    for phone in seats:
        for verb in ASKED:
            p.text(phone, "?" if verb is Verb.HELP else typed[verb])
    play_by_text_numbers(p, random.Random(seed))
    p.text(seats[0], typed[Verb.BOARD])
    check_texts(p, seats)
    catalog = Catalog.load(theme, lang)
    said = [CAPABILITIES.written(catalog.text("language-set", language=lang), lang),
            CAPABILITIES.written(catalog.template("deal-role", sms=True).split("{")[0], lang),  # the deal
            CAPABILITIES.written(catalog.text("rules-summary", sms=True), lang),  # in the theme's words
            CAPABILITIES.written(typed[Verb.RULES].upper(), lang)]  # help names the language's words
    for phone in seats:
        read = [unisolated(text) for text in p.inbox(phone)]
        assert [line for line in said if not any(line in text for text in read)] == [], phone
