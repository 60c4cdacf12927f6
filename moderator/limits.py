"""Rate limits that are pure bookkeeping (no web server in them), so the service can own its rules with them:
token buckets per client, the guessing rule for join codes, and who may open tables (and how many).

``moderator.guard`` re-exports them for the web routes; the service keeps one ``JoinGuard`` (``Context.guesses``)
for every way in.
"""

from __future__ import annotations

import hmac
import math
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Final

Clock = Callable[[], float]


class RateLimiter:
    """Token buckets, one per key: ``burst`` tries at once, then ``rate`` more per second. At most ``max_keys``
    buckets are kept (the least recently used goes first: forgetting one only forgives its debt)."""

    def __init__(self, rate: float, burst: float, *, max_keys: int = 10_000, clock: Clock = time.monotonic) -> None:
        assert rate > 0 and burst >= 1 and max_keys > 0
        self.rate, self.burst, self.max_keys, self.clock = rate, float(burst), max_keys, clock
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()

    def _tokens(self, key: str, now: float) -> float:
        tokens, stamp = self._buckets.get(key, (self.burst, now))
        return min(self.burst, tokens + max(0.0, now - stamp) * self.rate)

    def peek(self, key: str, now: float | None = None) -> float:
        """Seconds until ``key`` may try again (0: now), without using a try."""
        now = self.clock() if now is None else now
        return max(0.0, (1.0 - self._tokens(key, now)) / self.rate)

    def check(self, key: str, now: float | None = None) -> float:
        """Use one try of ``key``: 0 if it was allowed (and is counted), else the seconds to wait (not counted)."""
        now = self.clock() if now is None else now
        tokens = self._tokens(key, now)
        if tokens < 1.0:
            return (1.0 - tokens) / self.rate
        self._buckets[key] = (tokens - 1.0, now)
        self._buckets.move_to_end(key)
        while len(self._buckets) > self.max_keys:
            self._buckets.popitem(last=False)
        return 0.0

    def __len__(self) -> int:
        return len(self._buckets)


JOIN_GUESSES_PER_MINUTE: Final = 10
"""Unknown codes one client may try a minute once its first ``JOIN_GUESSES_AT_ONCE`` are used: a person typing five
letters needs some seconds for each. Known codes never count."""
JOIN_GUESSES_AT_ONCE: Final = 20
"""Unknown codes one client may try at once: a venue's ten phones behind one address, all typing the code the host
just read out, can mistype it 19 times between them (each once, most twice) and all still join without a wait
(with only ten at once, ten phones that each mistyped once left the last one's right code a "try again in
6 seconds"). A guesser gains ten codes once, then types at the same ten a minute."""


def join_guesses(clock: Clock = time.monotonic) -> RateLimiter:
    """The bucket for unknown join or seat-move codes: 20 at once, then one every 6 s, per client."""
    return RateLimiter(JOIN_GUESSES_PER_MINUTE / 60, JOIN_GUESSES_AT_ONCE, clock=clock)


PIN_GUESSES: Final = 5
"""Wrong PINs a pass-and-play seat takes at once before the device must wait; then one a minute. A player who
mistypes their own PIN has four more tries; someone trying all 10,000 PINs of another's seat needs a week."""


def pin_guesses(clock: Clock = time.monotonic) -> JoinGuard:
    """The guessing rule for a pass-and-play seat's PIN, kept per seat: ``PIN_GUESSES`` wrong ones at once, then
    one a minute, and while the seat waits even the right PIN gets the same "try again in …"."""
    return JoinGuard(RateLimiter(1 / 60, PIN_GUESSES, clock=clock))


def table_openings(clock: Clock = time.monotonic) -> RateLimiter:
    """The bucket for opening tables without the operator's password: one per client a minute."""
    return RateLimiter(1 / 60, 1, clock=clock)


TABLES_AT_ONCE: Final = 5
"""Tables one sender (a Telegram account, a phone number) may open at once; then one every ``TABLE_EVERY``
seconds. A host who opened in the wrong chat, or tried the bot first, opens again at once; a loop of ``newgame``
adds a dozen lobbies an hour, not thousands."""
TABLE_EVERY: Final = 300.0


def sender_openings(clock: Clock = time.monotonic) -> RateLimiter:
    """The bucket for tables each sender opens, on every channel (``Context.openings``): ``TABLES_AT_ONCE``, then
    one every five minutes. A browser opens each table as a new sender: ``OpenGate`` limits its address."""
    return RateLimiter(1 / TABLE_EVERY, TABLES_AT_ONCE, clock=clock)


class JoinGuard:
    """Joining with a code, on every way in (``/join/<code>``, ``POST /join/<code>``, Telegram ``/start <code>``,
    SMS ``JOIN``, seat-move codes): only unknown codes use the client's tries, and once they are used up every
    attempt, with a known code or not, gets the same "try again in …" until the bucket refills. So a stranger
    learns whether a code exists at most ``JOIN_GUESSES_PER_MINUTE`` times a minute once its first
    ``JOIN_GUESSES_AT_ONCE`` are used (no faster than a person could type codes), while a table's ten phones joining
    from one address are never slowed, even if each mistypes the code first."""

    def __init__(self, limiter: RateLimiter | None = None, *, clock: Clock = time.monotonic) -> None:
        self.limiter = limiter if limiter is not None else join_guesses(clock)

    def attempt(self, key: str, known: bool, now: float | None = None) -> float:
        """0: answer this attempt as usual (a miss is counted); else the seconds to wait, and the answer must be
        the same whether ``known`` or not."""
        wait = self.limiter.peek(key, now)
        if wait > 0:
            return wait
        if not known:
            self.limiter.check(key, now)
        return 0.0


class OpenGate:
    """Who may open a table under ``serve``. With an operator ``password`` only those who give it (wrong ones use
    the client's tries, so it cannot be guessed quickly); without one anybody, one table per client a minute."""

    def __init__(self, password: str | None = None, *, limiter: RateLimiter | None = None,
                 clock: Clock = time.monotonic) -> None:
        self.password = password or None
        self.limiter = limiter if limiter is not None else table_openings(clock)

    def check(self, key: str, given: str | None = None, now: float | None = None) -> float:
        """0: open it; a number of seconds: try again then; ``math.inf``: not without the password."""
        if self.password is None:
            return self.limiter.check(key, now)
        wait = self.limiter.peek(key, now)
        if wait > 0:
            return wait
        if given is not None and hmac.compare_digest(given.encode(), self.password.encode()):
            return 0.0
        self.limiter.check(key, now)
        return math.inf
