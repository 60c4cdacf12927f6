"""WhatsApp messages per game, and their cost beside SMS's: computer players play whole 7-player games by WhatsApp
through the WhatsApp transport (every seat a phone), each decision typed as a person would (the option's number);
the service's replies go out through ``WhatsAppChannel`` into a stub Twilio client that counts messages. The same
games by SMS (``benchmarks/sms_cost.py``'s ``play``) give the SMS column.

Reported for "public results to every phone" and "to the host's phone only" (HOSTONLY): messages sent and received
per game (from GO to the end), their mean with a 95 % interval over the games, and the cost per game.
Prices are parameters. Defaults: Twilio's fee of $0.005 per WhatsApp message each way, and no Meta charge for
replies inside the customer-service window (both as published in 2025); SMS at $0.0083 per segment each way
(Twilio's US list price, as ``sms_cost.py`` reads it).

    python benchmarks/whatsapp_cost.py [--games 30] [--players 7] [--seed 1] [--whatsapp-fee 0.005]
        [--meta-fee 0.0] [--sms-price 0.0083]
"""

from __future__ import annotations

import argparse
import random
import re
import statistics
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from sms_cost import NAMES, PRICE_PER_SEGMENT, _Clock, memory_of
from sms_cost import play as play_sms

from moderator.bots import ComputerPlayer
from moderator.delivery import Sender
from moderator.engine import Phase, awaiting, view_for
from moderator.moves import token as action_token
from moderator.service import Service
from moderator.store import Store
from moderator.transports.twilio_common import Messages
from moderator.transports.whatsapp import (
    CAPABILITIES,
    CHANNEL,
    TEXT_LIMIT,
    WhatsAppChannel,
    WhatsAppGateway,
    Window,
)

WHATSAPP_FEE = 0.005
META_FEE = 0.0
PRICES_READ = "as published in 2025 (read 2026-12-06): Twilio's WhatsApp fee per message, sent or received; " \
    "Meta charges nothing for replies inside the 24-hour customer-service window"


@dataclass(frozen=True)
class _Sent:
    sid: str
    num_segments: str = "1"
    status: str = "queued"


@dataclass
class StubTwilio:
    """Stands in for ``twilio.rest.Client``: ``messages.create`` counts what would be sent."""

    sent: list[tuple[str, str]] = field(default_factory=list)

    @property
    def messages(self) -> StubTwilio:
        return self

    def create(self, to: str, body: str, **_: Any) -> _Sent:
        assert len(body) <= TEXT_LIMIT, len(body)
        self.sent.append((to, body))
        return _Sent(f"SM{len(self.sent):032x}")


def play(players: int, seed: int, host_only: bool) -> tuple[int, int]:
    """One WhatsApp game: (messages sent, messages received) from GO to the end."""
    rng = random.Random(seed)
    clock = _Clock()
    store = Store(memory=True)
    service = Service(store, seed=lambda: rng.getrandbits(64), clock=clock, capabilities={CHANNEL: CAPABILITIES})
    twilio = StubTwilio()
    channel = WhatsAppChannel(Messages(twilio, "whatsapp:+14155238886"), Window(clock))  # type: ignore[arg-type]
    sender = Sender(store, {CHANNEL: channel})
    gateway = WhatsAppGateway(service, channel)
    phones = [f"whatsapp:+1202555{1000 + i:04d}" for i in range(players)]
    ids = iter(range(1, 10**9))
    counted = {"sent": 0, "received": 0}

    def say(phone: str, body: str) -> None:
        counted["received"] += 1
        before = len(twilio.sent)
        gateway.receive({"From": phone, "Body": body, "MessageSid": f"SM{next(ids):032d}"})
        while sender.deliver_due():
            pass
        counted["sent"] += len(twilio.sent) - before

    say(phones[0], f"newgame {NAMES[0]}")
    code = re.search(r" ([A-Z0-9]{5})\.", twilio.sent[-1][1])
    assert code is not None, twilio.sent[-1]
    for i in range(1, players):
        say(phones[i], f"join {code.group(1)} {NAMES[i]}")
    if host_only:
        say(phones[0], "hostonly")
    counted.update(sent=0, received=0)
    say(phones[0], "go")
    table = service.table(store.tables_of(CHANNEL, phones[0])[0].id)
    assert table is not None and table.state is not None
    bot = ComputerPlayer()
    while table.state.phase is not Phase.GAME_OVER:
        state = table.state
        seat = rng.choice(awaiting(state))
        action = bot.choose(view_for(state, seat), memory_of(table, seat), rng)
        last = store.last_prompt(CHANNEL, phones[seat])
        assert last is not None and last[1]["decision"] == table.row.decision_step, "a seat owes a decision unasked"
        tokens = [token for _, token in last[1]["options"]]
        say(phones[seat], str(tokens.index(action_token(action)) + 1))
        table = service.table(table.row.id)  # type: ignore[assignment]
        assert table is not None and table.state is not None
    return counted["sent"], counted["received"]


def interval(values: list[float]) -> str:
    """Mean ± a 95 % interval of the mean (normal approximation)."""
    mean = statistics.fmean(values)
    half = 1.96 * statistics.stdev(values) / len(values) ** 0.5 if len(values) > 1 else 0.0
    return f"{mean:7.1f} ± {half:4.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=30)
    parser.add_argument("--players", type=int, default=7)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--whatsapp-fee", type=float, default=WHATSAPP_FEE, help="US$ per message, each way")
    parser.add_argument("--meta-fee", type=float, default=META_FEE, help="US$ per message Meta charges")
    parser.add_argument("--sms-price", type=float, default=PRICE_PER_SEGMENT, help="US$ per SMS segment, each way")
    args = parser.parse_args()
    print(f"{args.players} players, {args.games} games from seed {args.seed}; prices {PRICES_READ}")
    print(f"WhatsApp ${args.whatsapp_fee} + Meta ${args.meta_fee} per message; SMS ${args.sms_price} per segment")
    print(f"{'public results':<16} {'WA sent':>15} {'WA received':>15} {'WA $/game':>10} "
          f"{'SMS sent':>15} {'SMS received':>15} {'SMS $/game':>10}")
    for host_only in (False, True):
        seeds = [args.seed + g for g in range(args.games)]
        wa = [play(args.players, s, host_only) for s in seeds]
        sms = [play_sms(args.players, s, host_only)[1] for s in seeds]
        wa_cost = [(sent + got) * args.whatsapp_fee + sent * args.meta_fee for sent, got in wa]
        sms_cost = [(t.sent + t.received) * args.sms_price for t in sms]
        print(f"{'host phone only' if host_only else 'every phone':<16} "
              f"{interval([float(s) for s, _ in wa]):>15} {interval([float(r) for _, r in wa]):>15} "
              f"{statistics.fmean(wa_cost):10.3f} "
              f"{interval([float(t.sent) for t in sms]):>15} {interval([float(t.received) for t in sms]):>15} "
              f"{statistics.fmean(sms_cost):10.3f}")


if __name__ == "__main__":
    main()
