"""SMS segments per game: computer players play whole games by text message through the SMS transport.

Every seat is a phone. Each decision is made by the computer player of ``moderator.bots`` from what that seat
may know, and sent as the text a person would type (the option's number); the service's replies go out through
``SmsChannel`` into a stub Twilio client that counts texts. Reported per player count, for "public results by
SMS to every phone" and "public results to the host's phone only" (the host texts HOSTONLY before GO):
segments sent and received per game (from GO to the end), and in the lobby.

Target (issue 5): a 7-player all-SMS game with public results on the host phone only sends fewer than 120
segments on average. "floor" is one text per phone per input that sends it anything: what perfect folding
would reach without holding back a result for later (every result reaches the host when it happens).
Goals (issue 16), 7 players, results on the host's phone only: with votes by text within 5 % of the floor;
with votes at the table (the host texts TABLEVOTES on; the table votes with cards, the President texts who
voted Ja) at most 60 segments per game. US$/game prices segments both ways at Twilio's US list price.
``--by-message`` prints which messages go to which phone how often (7 players, host phone only).
Then per language (every catalog; issue 35): a 7-player game with every phone in that language, votes by text.
A language GSM-7 writes goes in one GSM-7 segment per text; another script (Persian) in UCS-2, at most two
segments per text, so its games cost more segments: the table says how many, with everyday Latin names and, for
a language in another script, with names in its script too (a mixed table isolates each Latin name).

    python benchmarks/sms_cost.py [--games 30] [--seed 1] [--by-message [--table-votes]] [--languages en,fa]
"""

from __future__ import annotations

import argparse
import random
import re
import statistics
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from moderator.bots import ComputerPlayer, Memory
from moderator.catalog import SMS_LIMIT, UCS2_LIMIT, gsm7_language, is_gsm7, languages, sms_segments
from moderator.channels import Delivered
from moderator.delivery import Sender
from moderator.engine import CastVote, Phase, awaiting, view_for
from moderator.moves import token as action_token
from moderator.service import Service
from moderator.store import Store
from moderator.transports.sms import CAPABILITIES, CHANNEL, SmsChannel, SmsGateway, Text

TARGET = 120
FLOOR_MARGIN = 0.05
"""Issue 16's goal for votes by text: within 5 % of the floor."""
TABLE_VOTES_GOAL = 60
"""Issue 16's goal for votes at the table: at most 60 segments per game (7 players, host phone only)."""
PRICE_PER_SEGMENT = 0.0083
PRICE_READ = "read 2026-12-02: the US long-code list price per SMS segment, outbound and inbound alike, as quoted" \
    " from twilio.com/en-us/sms/pricing/us in July 2026"
NAMES = ("Anna", "Ben", "Chloe", "David", "Emma", "Finn", "Grace", "Hugo", "Ines", "Jonas")
"""Everyday first names (the tests check every text with 20-character names; ``--long-names`` measures those)."""
LONG_NAMES = ("Alexandra", "Bartholomew", "Constance", "Dominique", "Evangeline", "Fitzgerald", "Gwendolyn",
              "Hieronymus", "Isadora", "Jeremiah")
SCRIPT_NAMES = {
    "fa": ("زهرا", "علی", "مریم", "رضا", "فاطمه", "حسین", "نرگس", "امیر", "سارا", "محمد"),
    "ru": ("Анна", "Борис", "Вера", "Дмитрий", "Елена", "Иван", "Ольга", "Павел", "Мария", "Сергей"),
}
"""Everyday names in the script of a language GSM-7 cannot write, for the per-language rows (where one exists)."""


@dataclass(frozen=True)
class _Sent:
    """What ``messages.create`` answers: the message's SID and segment count."""

    sid: str
    num_segments: str
    status: str = "queued"


@dataclass
class StubTwilio:
    """Stands in for ``twilio.rest.Client``: ``messages.create`` counts what would be sent."""

    texts: list[tuple[str, str]] = field(default_factory=list)

    @property
    def messages(self) -> StubTwilio:
        return self

    def create(self, to: str, body: str, **_: Any) -> _Sent:
        # One GSM-7 segment, or (a language GSM-7 cannot write) at most two UCS-2 ones.
        assert (len(body) <= SMS_LIMIT and is_gsm7(body)) or (len(body) <= UCS2_LIMIT and sms_segments(body) <= 2), body
        self.texts.append((to, body))
        return _Sent(f"SM{len(self.texts):032x}", str(sms_segments(body)))


class CountingChannel(SmsChannel):
    """``SmsChannel`` that also notes, per text, the phone and the message ids it carried."""

    carried: list[tuple[str, tuple[str, ...]]]

    def send_texts(self, address: str, messages: Any) -> list[Text]:
        texts = super().send_texts(address, messages)
        self.carried.extend((address, tuple(messages[i].message_id for i in t.parts))
                            for t in texts if isinstance(t.result, Delivered))
        return texts


@dataclass
class Tally:
    sent: int = 0
    received: int = 0
    elections: int = 0
    floor: int = 0
    carried: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)


def play(players: int, seed: int, host_only: bool, names: tuple[str, ...] = NAMES,
         table_votes: bool = False, language: str = "en") -> tuple[Tally, Tally]:
    """One game; (lobby, game) segments sent and received. ``table_votes``: votes at the table (the host texts
    TABLEVOTES on; each seat's vote is cast with cards, and the President texts who voted Ja). ``language``: every
    phone texts LANGUAGE in the lobby."""
    rng = random.Random(seed)
    store = Store(memory=True)
    service = Service(store, seed=lambda: rng.getrandbits(64), clock=_Clock(), capabilities={CHANNEL: CAPABILITIES})
    twilio = StubTwilio()
    channel = CountingChannel(twilio, "+15017122661")  # type: ignore[arg-type]
    channel.carried = []
    sender = Sender(store, {CHANNEL: channel})
    gateway = SmsGateway(service)
    phones = [f"+1202555{1000 + i:04d}" for i in range(players)]
    ids = iter(range(1, 10**9))
    lobby, game = Tally(), Tally()
    tally = lobby

    def text(phone: str, body: str) -> None:
        tally.received += sms_segments(body)
        before = len(twilio.texts)
        gateway.receive({"From": phone, "Body": body, "MessageSid": f"SM{next(ids):032d}"})
        while sender.deliver_due():
            pass
        tally.sent += sum(sms_segments(b) for _, b in twilio.texts[before:])
        tally.floor += len({to for to, _ in twilio.texts[before:]})

    text(phones[0], f"NEWGAME {names[0]}")
    code = re.search(r"([A-Z0-9]{5})\.?\s*$", twilio.texts[-1][1])
    assert code is not None, twilio.texts[-1]
    for i in range(1, players):
        text(phones[i], f"JOIN {code.group(1)} {names[i]}")
    if language != "en":
        for phone in phones:
            text(phone, f"LANGUAGE {language}")
    if host_only:
        text(phones[0], "HOSTONLY")
    if table_votes:
        text(phones[0], "TABLEVOTES on")
    tally = game
    mark = len(channel.carried)
    text(phones[0], "GO")
    table = service.table(store.tables_of(CHANNEL, phones[0])[0].id)
    assert table is not None and table.state is not None
    bot = ComputerPlayer()
    while table.state.phase is not Phase.GAME_OVER:
        state = table.state
        if table_votes and state.phase is Phase.ELECTION:
            assert state.president is not None
            ja = [names[s] for s in awaiting(state)
                  if bot.choose(view_for(state, s), memory_of(table, s), rng) == CastVote(s, True)]
            text(phones[state.president], " ".join(["VOTES", *ja]))
            table = service.table(table.row.id)  # type: ignore[assignment]
            assert table is not None and table.state is not None
            continue
        seat = rng.choice(awaiting(state))
        action = bot.choose(view_for(state, seat), memory_of(table, seat), rng)
        last = store.last_prompt(CHANNEL, phones[seat])
        assert last is not None and last[1]["decision"] == table.row.decision_step, "a seat owes a decision unasked"
        tokens = [token for _, token in last[1]["options"]]
        text(phones[seat], str(tokens.index(action_token(action)) + 1))
        table = service.table(table.row.id)  # type: ignore[assignment]
        assert table is not None and table.state is not None
    game.elections = sum(1 for e in table.log if e.kind == "election-decided")
    game.carried = [("host" if to == phones[0] else "seat", ids) for to, ids in channel.carried[mark:]]
    return lobby, game


def memory_of(table: Any, seat: int) -> Memory:
    """What a seat has been shown so far, as a computer player remembers it."""
    memory = Memory(seat)
    for event in table.log:
        if event.audience.includes(seat):
            memory = memory.observe(event)
    return memory


class _Clock:
    """Time that moves a little at every look, so sends have distinct times."""

    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        self.now += 0.001
        return self.now


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=30, help="games per row (default 30)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--long-names", action="store_true", help="ten-letter names instead of everyday ones")
    parser.add_argument("--by-message", action="store_true", help="texts by phone and messages carried")
    parser.add_argument("--table-votes", action="store_true", help="--by-message with votes at the table")
    parser.add_argument("--languages", help="comma-separated codes for the per-language rows (default: every one)")
    args = parser.parse_args(argv)
    if args.by_message:
        return by_message(args.games, args.seed, LONG_NAMES if args.long_names else NAMES, args.table_votes)
    print(f"SMS segments per game, {args.games} games per row (game: GO to the end; lobby: NEWGAME to GO),"
          f" {'ten-letter' if args.long_names else 'everyday'} names")
    print(f"{'players':>7}  {'votes':<8} {'public results':<15} {'sent':>7} {'min':>5} {'max':>5} {'floor':>6}"
          f" {'received':>9} {'elections':>9} {'sent/election':>13} {'lobby':>11} {'US$/game':>9}")
    verdicts = []
    names = LONG_NAMES if args.long_names else NAMES
    for players in (5, 7, 10):
        for table_votes in (False, True):
            for host_only in (False, True):
                games = [play(players, args.seed * 10_000 + players * 100 + g, host_only, names, table_votes)
                         for g in range(args.games)]
                sent = [g.sent for _, g in games]
                average = statistics.mean(sent)
                received = statistics.mean(g.received for _, g in games)
                lobby_sent = statistics.mean(lb.sent for lb, _ in games)
                lobby = f"{lobby_sent:.0f}/{statistics.mean(lb.received for lb, _ in games):.0f}"
                label = "host phone only" if host_only else "every phone"
                votes = "at table" if table_votes else "by text"
                elections = statistics.mean(g.elections for _, g in games)
                floor = statistics.mean(g.floor for _, g in games)
                dollars = (average + received) * PRICE_PER_SEGMENT
                print(f"{players:>7}  {votes:<8} {label:<15} {average:>7.1f} {min(sent):>5} {max(sent):>5}"
                      f" {floor:>6.1f} {received:>9.1f} {elections:>9.1f} {average / elections:>13.1f}"
                      f" {lobby:>11} {dollars:>9.2f}")
                if players == 7 and host_only and not table_votes:
                    within = average <= floor * (1 + FLOOR_MARGIN)
                    verdicts.append(
                        f"goal: 7 players, votes by text, host phone only, within {FLOOR_MARGIN:.0%} of the floor"
                        f" ({floor:.1f}): {average:.1f} ({average / floor - 1:+.1%}) {'meets' if within else 'MISSES'}"
                    )
                    verdicts.append(
                        f"target (issue 5): the same game < {TARGET} sent on average: {average:.1f}"
                        f" {'meets' if average < TARGET else 'MISSES'} (median {statistics.median(sent):.0f};"
                        f" {sum(1 for n in sent if n < TARGET) / len(sent):.0%} of games under {TARGET})"
                    )
                if players == 7 and host_only and table_votes:
                    verdicts.append(
                        f"goal: 7 players, votes at the table, host phone only, at most {TABLE_VOTES_GOAL} sent:"
                        f" {average:.1f} {'meets' if average <= TABLE_VOTES_GOAL else 'MISSES'}"
                    )
    print("\n".join(verdicts))
    print(f"US$/game: segments sent and received at Twilio's US list price of ${PRICE_PER_SEGMENT} per segment each"
          f" way ({PRICE_READ}); carrier fees and the number's rent are extra")
    per_language(args.games, args.seed, args.languages.split(",") if args.languages else list(languages()))
    return 0


def per_language(games: int, seed: int, langs: list[str]) -> None:
    """Segments per 7-player game with every phone in one language, votes by text."""
    print(f"\nSMS segments per 7-player game by language, votes by text, {games} games per row (sent from GO to the"
          " end; mean, min-max)")
    print(f"{'language':<9} {'texts':<24} {'names':<6} {'every phone':>17} {'host phone only':>17}")
    for lang in langs:
        alphabet = "GSM-7, 1 segment" if gsm7_language(lang) else "UCS-2, up to 2 segments"
        sets = [("Latin", NAMES)] + ([("own", SCRIPT_NAMES[lang])] if lang in SCRIPT_NAMES else [])
        for label, names in sets:
            cells = []
            for host_only in (False, True):
                sent = [play(7, seed * 10_000 + 700 + g, host_only, names, language=lang)[1].sent
                        for g in range(games)]
                cells.append(f"{statistics.mean(sent):.1f} ({min(sent)}-{max(sent)})")
            print(f"{lang:<9} {alphabet:<24} {label:<6} {cells[0]:>17} {cells[1]:>17}")


def by_message(games: int, seed: int, names: tuple[str, ...], table_votes: bool = False) -> int:
    """Texts per game of 7 players, host phone only, by recipient (host or another seat) and messages carried."""
    played = [play(7, seed * 10_000 + 700 + g, True, names, table_votes)[1] for g in range(games)]
    counts: Counter[tuple[str, tuple[str, ...]]] = Counter(c for g in played for c in g.carried)
    print(f"texts per game, 7 players, host phone only, {games} games: {statistics.mean(g.sent for g in played):.1f}"
          f" (floor {statistics.mean(g.floor for g in played):.1f})")
    for (who, ids), n in counts.most_common():
        print(f"{n / games:7.2f}  {who:<5} {' + '.join(ids)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
