"""The complete state of one game, secrets included, and how a new game is set up."""

from __future__ import annotations

import dataclasses
import hashlib
import secrets
import struct
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from .errors import InvalidSetup
from .types import (
    MAX_PLAYERS,
    MIN_PLAYERS,
    POLICY_DECK,
    ROLE_COUNTS,
    Party,
    Phase,
    Policy,
    Role,
    Seat,
    WinReason,
    hitler_knows_fascists,
)


@dataclass(frozen=True, slots=True)
class Session:
    """The truth about one legislative session: what was drawn, discarded and enacted or vetoed."""

    president: Seat
    chancellor: Seat
    drawn: tuple[Policy, ...]
    president_discard: Policy
    received: tuple[Policy, ...]
    enacted: Policy | None
    veto_proposed: bool


@dataclass(frozen=True, slots=True)
class Setup:
    """What a game was set up with: never changes during the game, and is all a game record needs to start."""

    seed: int
    """Secret: seeds every shuffle the game makes by itself."""
    deck: tuple[Policy, ...]
    """The initial policy deck, top first."""
    first_president: Seat
    reshuffles: tuple[tuple[Policy, ...], ...] = field(default=(), compare=False)
    """Prescribed orders for the first reshuffles (from a game record); the seed shuffles after them.

    An input, not part of the game: the reshuffles that happened are in ``History.reshuffles``, so a game and
    its replay from a record compare equal.
    """


@dataclass(frozen=True, slots=True)
class History:
    """What the game has accumulated: the truth about every session, power use and reshuffle."""

    sessions: tuple[Session, ...] = ()
    investigations: tuple[tuple[Seat, Seat], ...] = ()
    """(President, target) for every Investigate Loyalty, in order."""
    peeks: tuple[tuple[Seat, tuple[Policy, ...]], ...] = ()
    """(President, top three) for every Policy Peek, in order."""
    not_hitler: tuple[Seat, ...] = ()
    """Chancellors publicly confirmed not Hitler."""
    reshuffles: tuple[tuple[Policy, ...], ...] = ()
    """The order of every reshuffle so far, top first."""


@dataclass(eq=True, slots=True)
class Core:
    """Everything about one game but the open vote's ballots and the step count: what a vote leaves alone.

    Not frozen on purpose: ``apply`` builds the next core from a shallow copy of the slots and sets what
    changed. Once a ``GameState`` holds it, nothing changes it. Every field holds an immutable value (ints,
    enums, tuples, frozen dataclasses); what rarely changes is grouped in ``setup`` and ``history`` to keep
    that copy small.
    """

    players: int
    roles: tuple[Role, ...]
    setup: Setup
    draw_pile: tuple[Policy, ...]
    discard_pile: tuple[Policy, ...]
    liberal_policies: int
    fascist_policies: int
    election_tracker: int
    phase: Phase
    president: Seat | None
    """The President or Presidential Candidate."""
    chancellor: Seat | None
    """The Chancellor Candidate during the election, then the elected Chancellor until the session ends."""
    rotation: Seat
    """The presidency passes next to the first living seat after this one (a special election leaves it on the
    caller)."""
    last_president: Seat | None
    last_chancellor: Seat | None
    """The last elected government, term-limited; None after chaos until the next successful election."""
    alive: tuple[bool, ...]
    hand: tuple[Policy, ...]
    """The President's three policies, then the Chancellor's two."""
    president_discard: Policy | None
    """The President's discard in the session under way."""
    veto_refused: bool
    """The President refused a veto in the session under way."""
    history: History
    winner: Party | None
    win_reason: WinReason | None

    def __repr__(self) -> str:
        # The default repr would print roles, hands and the seed into any log or traceback that shows a state.
        return f"<Core players={self.players} phase={self.phase.value}>"


@dataclass(eq=True, repr=False, slots=True)
class GameState:
    """Everything about one game, secrets included. A value: nothing changes it once ``apply`` has returned it.

    Split in two for speed: the ballots of the open vote and the step count live here, everything else in a
    shared ``Core``, so a vote (most of a game's actions) copies four slots instead of twenty-odd. Every
    ``Core`` field reads through a property of the same name; ``replace`` builds a changed copy.
    """

    core: Core
    ja: int
    """The open vote's Ja votes as a bit mask (bit i: seat i); 0 outside an election."""
    unvoted: int
    """The open vote's living seats that have not voted yet, as a bit mask (bit i: seat i); 0 otherwise."""
    step: int
    """How many actions have been applied; a prompt made at step k is stale once the step moves on."""

    def __repr__(self) -> str:
        # The default repr would print roles, hands and the seed into any log or traceback that shows a state.
        return f"<GameState players={self.core.players} step={self.step} phase={self.core.phase.value}>"

    def replace(self, **changes: Any) -> GameState:
        """A copy with the named fields (``Core`` fields, ``ja``, ``unvoted``, ``step``) changed: rigged tests."""
        ja, unvoted = changes.pop("ja", self.ja), changes.pop("unvoted", self.unvoted)
        step = changes.pop("step", self.step)
        core = dataclasses.replace(self.core, **changes) if changes else self.core
        return GameState(core, ja, unvoted, step)

    @property
    def votes(self) -> tuple[bool | None, ...]:
        """The open vote, per seat: True for Ja, False for Nein, None for not (yet) voted."""
        core = self.core
        if core.phase is not Phase.ELECTION:
            return (None,) * core.players
        ja, unvoted, alive = self.ja, self.unvoted, core.alive
        return tuple(
            None if not alive[seat] or unvoted >> seat & 1 else ja >> seat & 1 == 1 for seat in range(core.players)
        )

    # The Core fields, read through (the engine itself reads ``core`` directly).

    @property
    def players(self) -> int:
        """How many seats the game has, the dead included."""
        return self.core.players

    @property
    def roles(self) -> tuple[Role, ...]:
        """Every seat's secret role."""
        return self.core.roles

    @property
    def setup(self) -> Setup:
        """What the game was set up with."""
        return self.core.setup

    @property
    def draw_pile(self) -> tuple[Policy, ...]:
        """The draw pile, top first."""
        return self.core.draw_pile

    @property
    def discard_pile(self) -> tuple[Policy, ...]:
        """The discard pile, oldest first."""
        return self.core.discard_pile

    @property
    def liberal_policies(self) -> int:
        """Liberal policies enacted."""
        return self.core.liberal_policies

    @property
    def fascist_policies(self) -> int:
        """Fascist policies enacted."""
        return self.core.fascist_policies

    @property
    def election_tracker(self) -> int:
        """Failed governments in a row since the last enactment."""
        return self.core.election_tracker

    @property
    def phase(self) -> Phase:
        """What the game is waiting for."""
        return self.core.phase

    @property
    def president(self) -> Seat | None:
        """The President or Presidential Candidate."""
        return self.core.president

    @property
    def chancellor(self) -> Seat | None:
        """The Chancellor Candidate during the election, then the elected Chancellor until the session ends."""
        return self.core.chancellor

    @property
    def rotation(self) -> Seat:
        """The presidency passes next to the first living seat after this one."""
        return self.core.rotation

    @property
    def last_president(self) -> Seat | None:
        """The last elected President, term-limited unless five or fewer are alive; None after chaos."""
        return self.core.last_president

    @property
    def last_chancellor(self) -> Seat | None:
        """The last elected Chancellor, term-limited; None after chaos."""
        return self.core.last_chancellor

    @property
    def alive(self) -> tuple[bool, ...]:
        """Per seat: not executed."""
        return self.core.alive

    @property
    def hand(self) -> tuple[Policy, ...]:
        """The President's three policies, then the Chancellor's two."""
        return self.core.hand

    @property
    def president_discard(self) -> Policy | None:
        """The President's discard in the session under way."""
        return self.core.president_discard

    @property
    def veto_refused(self) -> bool:
        """The President refused a veto in the session under way."""
        return self.core.veto_refused

    @property
    def history(self) -> History:
        """Every session, power use and reshuffle so far."""
        return self.core.history

    @property
    def winner(self) -> Party | None:
        """The winning party once the game is over."""
        return self.core.winner

    @property
    def win_reason(self) -> WinReason | None:
        """How the game was won, once it is over."""
        return self.core.win_reason

    @property
    def seed(self) -> int:
        """The secret seed of every shuffle."""
        return self.core.setup.seed

    @property
    def sessions(self) -> tuple[Session, ...]:
        """The truth about every finished legislative session."""
        return self.core.history.sessions

    @property
    def investigations(self) -> tuple[tuple[Seat, Seat], ...]:
        """(President, target) for every Investigate Loyalty, in order."""
        return self.core.history.investigations

    @property
    def not_hitler(self) -> tuple[Seat, ...]:
        """Chancellors publicly confirmed not Hitler."""
        return self.core.history.not_hitler

    @property
    def veto_unlocked(self) -> bool:
        """Veto power holds for every session that starts with five or more fascist policies enacted."""
        return self.core.fascist_policies >= 5

    @property
    def alive_count(self) -> int:
        """How many players are alive."""
        return self.core.alive.count(True)


_NO_HISTORY = History()


def known_roles(roles: Sequence[Role], seat: Seat) -> tuple[tuple[Seat, Role], ...]:
    """The other seats' roles this seat is told at the deal.

    Fascists know each other and Hitler; Hitler knows the fascist only in 5-6 player games; liberals know nobody.
    """
    mine = roles[seat]
    if mine is Role.LIBERAL or (mine is Role.HITLER and not hitler_knows_fascists(len(roles))):
        return ()
    return tuple((other, role) for other, role in enumerate(roles) if other != seat and role is not Role.LIBERAL)


_T = TypeVar("_T")


def _words(seed: int, label: str, count: int) -> tuple[int, ...]:
    # Random 32-bit words from a keyed hash: cheaper than seeding a Mersenne Twister (~7 us), repeatable from
    # the seed, and unpredictable to players who do not know it. The label separates the deal, the deck, the
    # first President and every reshuffle.
    if count <= 16:
        # One block holds sixteen words: every shuffle of a standard game needs no more.
        return _SIXTEEN_WORDS.unpack(hashlib.blake2b(f"{seed}/{label}/0".encode(), digest_size=64).digest())
    words: tuple[int, ...] = ()
    block = 0
    while len(words) < count:
        digest = hashlib.blake2b(f"{seed}/{label}/{block}".encode(), digest_size=64).digest()
        words += _SIXTEEN_WORDS.unpack(digest)
        block += 1
    return words


_SIXTEEN_WORDS = struct.Struct(">16I")


def shuffled(items: Sequence[_T], seed: int, label: str) -> tuple[_T, ...]:
    """``items`` in an order fixed by ``seed`` and ``label``: a Fisher-Yates shuffle driven by a keyed hash."""
    result = list(items)
    words = _words(seed, label, len(result) - 1)
    for i in range(len(result) - 1, 0, -1):
        # A 32-bit word modulo at most 17: the bias against a perfect shuffle is below 17 / 2**32.
        j = words[i - 1] % (i + 1)
        result[i], result[j] = result[j], result[i]
    return tuple(result)


def new_seed() -> int:
    """A fresh secret seed for a real game (tests pass fixed seeds instead)."""
    return secrets.randbits(64)


def new_game(
    players: int,
    *,
    seed: int | None = None,
    roles: Sequence[Role] | None = None,
    deck: Sequence[Policy] | None = None,
    first_president: Seat | None = None,
    reshuffles: Sequence[Sequence[Policy]] = (),
) -> GameState:
    """A new game: roles dealt, deck shuffled, first Presidential Candidate chosen, all from ``seed``.

    Roles, deck and first President may be given (rigged games for tests and game records); whatever is not
    given is drawn at random from the seed. Raises ``InvalidSetup`` for a table the rules do not allow.
    """
    if not MIN_PLAYERS <= players <= MAX_PLAYERS:
        raise InvalidSetup(f"Secret Hitler is for 5 to 10 players, not {players}")
    if seed is None:
        seed = new_seed()
    liberals, fascists = ROLE_COUNTS[players]
    if roles is None:
        roles = shuffled([Role.LIBERAL] * liberals + [Role.FASCIST] * fascists + [Role.HITLER], seed, "roles")
    else:
        roles = tuple(Role(r) for r in roles)
    counts = (roles.count(Role.LIBERAL), roles.count(Role.FASCIST), roles.count(Role.HITLER))
    if len(roles) != players or counts != (liberals, fascists, 1):
        raise InvalidSetup(f"{players} players need {liberals} liberals, {fascists} fascists and Hitler")
    deck = shuffled(POLICY_DECK, seed, "deck") if deck is None else tuple(Policy(p) for p in deck)
    if len(deck) != len(POLICY_DECK) or deck.count(Policy.LIBERAL) != POLICY_DECK.count(Policy.LIBERAL):
        raise InvalidSetup("the policy deck must hold 6 liberal and 11 fascist policies")
    if first_president is None:
        first_president = _words(seed, "first-president", 1)[0] % players
    if not 0 <= first_president < players:
        raise InvalidSetup("the first President must be one of the players")
    core = Core(
        players=players,
        roles=roles,
        setup=Setup(
            seed=seed,
            deck=deck,
            first_president=first_president,
            reshuffles=tuple(tuple(Policy(p) for p in order) for order in reshuffles) if reshuffles else (),
        ),
        draw_pile=deck,
        discard_pile=(),
        liberal_policies=0,
        fascist_policies=0,
        election_tracker=0,
        phase=Phase.NOMINATION,
        president=first_president,
        chancellor=None,
        rotation=first_president,
        last_president=None,
        last_chancellor=None,
        alive=(True,) * players,
        hand=(),
        president_discard=None,
        veto_refused=False,
        history=_NO_HISTORY,
        winner=None,
        win_reason=None,
    )
    return GameState(core, ja=0, unvoted=0, step=0)
