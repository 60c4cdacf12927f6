"""What the table may know (``public_view``) and what one seat may know (``view_for``), and nothing more."""

from __future__ import annotations

from dataclasses import dataclass

from .actions import Action, ProposeVeto
from .rules import eligible_chancellors, legal_actions
from .state import GameState, Session, known_roles
from .types import FEW_ALIVE, Party, Phase, Policy, Role, Seat, WinReason


@dataclass(frozen=True, slots=True)
class PublicSession:
    """A legislative session as the table saw it: who governed and what was enacted (None: vetoed)."""

    president: Seat
    chancellor: Seat
    enacted: Policy | None
    veto_proposed: bool


@dataclass(frozen=True, slots=True)
class KnownSession:
    """A legislative session as one member of that government knows it."""

    president: Seat
    chancellor: Seat
    drawn: tuple[Policy, ...] | None
    """The three drawn policies: the President's knowledge only."""
    discarded: Policy | None
    """The President's discard: the President's knowledge only."""
    received: tuple[Policy, ...]
    """The two policies the Chancellor received."""
    enacted: Policy | None
    veto_proposed: bool


@dataclass(frozen=True, slots=True)
class PublicView:
    """Everything the whole table may know. Before the game ends it holds no role, card or deck order."""

    players: int
    step: int
    phase: Phase
    president: Seat | None
    chancellor: Seat | None
    liberal_policies: int
    fascist_policies: int
    election_tracker: int
    draw_pile: int
    discard_pile: int
    veto_unlocked: bool
    alive: tuple[bool, ...]
    term_limited: tuple[Seat, ...]
    """Seats that may not be nominated Chancellor now."""
    eligible_chancellors: tuple[Seat, ...]
    """During a nomination: whom the candidate may nominate."""
    votes_cast: int
    """During an election: how many have voted, never who voted how."""
    awaiting: tuple[Seat, ...]
    """Who the table waits for; empty during an election, whose progress is anonymous."""
    not_voted: tuple[Seat, ...]
    """During an election: the living seats whose vote is not in yet (that a seat has voted is as public as a
    ballot card held back at a real table; how it voted is not)."""
    sessions: tuple[PublicSession, ...]
    investigations: tuple[tuple[Seat, Seat], ...]
    """(President, target) of every investigation; the result is the President's secret."""
    not_hitler: tuple[Seat, ...]
    winner: Party | None
    win_reason: WinReason | None
    roles: tuple[Role, ...] | None
    """Every role, once the game is over."""
    truth: tuple[Session, ...] | None
    """Once the game is over: every session's real hands, discards and enactment."""


@dataclass(frozen=True, slots=True)
class PlayerView:
    """Everything one seat may know: the public view plus its own secrets."""

    seat: Seat
    role: Role
    party: Party
    known_roles: tuple[tuple[Seat, Role], ...]
    public: PublicView
    hand: tuple[Policy, ...]
    """The policies this seat holds right now (President: three, then Chancellor: two)."""
    passed: tuple[Policy, ...]
    """As President during this session: the two policies handed to the Chancellor."""
    may_veto: bool
    vote: bool | None
    """This seat's vote in the open election, if cast."""
    sessions: tuple[KnownSession, ...]
    """The sessions this seat governed in, as it knows them."""
    investigations: tuple[tuple[Seat, Party], ...]
    """(target, party) for each investigation this seat made."""
    peeks: tuple[tuple[Policy, ...], ...]
    """The top three policies, top first, for each Policy Peek this seat made."""
    legal_actions: tuple[Action, ...]


def public_view(state: GameState) -> PublicView:
    """What the whole table may know now."""
    phase = state.phase
    over = phase is Phase.GAME_OVER
    limited: tuple[Seat, ...] = ()
    if state.last_chancellor is not None:
        limited = (state.last_chancellor,)
        if state.last_president is not None and state.alive_count > FEW_ALIVE:
            limited = (state.last_president, state.last_chancellor)
        # An executed player cannot be nominated anyway; listing them as term-limited would say they might be.
        limited = tuple(seat for seat in limited if state.alive[seat])
    return PublicView(
        players=state.players,
        step=state.step,
        phase=phase,
        president=state.president,
        chancellor=state.chancellor,
        liberal_policies=state.liberal_policies,
        fascist_policies=state.fascist_policies,
        election_tracker=state.election_tracker,
        draw_pile=len(state.draw_pile),
        discard_pile=len(state.discard_pile),
        veto_unlocked=state.veto_unlocked,
        alive=state.alive,
        term_limited=limited,
        eligible_chancellors=eligible_chancellors(state) if phase is Phase.NOMINATION else (),
        votes_cast=len(state.votes) - state.votes.count(None),
        awaiting=_public_awaiting(state),
        not_voted=tuple(seat for seat, vote in enumerate(state.votes) if vote is None and state.alive[seat])
        if phase is Phase.ELECTION else (),
        sessions=tuple(
            PublicSession(s.president, s.chancellor, s.enacted, s.veto_proposed) for s in state.sessions
        ),
        investigations=state.investigations,
        not_hitler=state.not_hitler,
        winner=state.winner,
        win_reason=state.win_reason,
        roles=state.roles if over else None,
        truth=state.sessions if over else None,
    )


def _public_awaiting(state: GameState) -> tuple[Seat, ...]:
    match state.phase:
        case Phase.ELECTION | Phase.GAME_OVER:
            return ()
        case Phase.LEGISLATIVE_CHANCELLOR:
            assert state.chancellor is not None
            return (state.chancellor,)
        case _:
            assert state.president is not None
            return (state.president,)


def view_for(state: GameState, seat: Seat) -> PlayerView:
    """Everything this seat may know now: its role, what the rules let it know, and its own secrets."""
    role = state.roles[seat]
    phase = state.phase
    holds = (phase is Phase.LEGISLATIVE_PRESIDENT and seat == state.president) or (
        phase in (Phase.LEGISLATIVE_CHANCELLOR, Phase.VETO) and seat == state.chancellor
    )
    passed = (
        state.hand
        if phase in (Phase.LEGISLATIVE_CHANCELLOR, Phase.VETO) and seat == state.president
        else ()
    )
    actions = legal_actions(state, seat)
    return PlayerView(
        seat=seat,
        role=role,
        party=role.party,
        known_roles=known_roles(state.roles, seat),
        public=public_view(state),
        hand=state.hand if holds else (),
        passed=passed,
        may_veto=any(isinstance(a, ProposeVeto) for a in actions),
        vote=state.votes[seat] if phase is Phase.ELECTION else None,
        sessions=tuple(
            KnownSession(
                s.president,
                s.chancellor,
                s.drawn if seat == s.president else None,
                s.president_discard if seat == s.president else None,
                s.received,
                s.enacted,
                s.veto_proposed,
            )
            for s in state.sessions
            if seat in (s.president, s.chancellor)
        ),
        investigations=tuple(
            (target, state.roles[target].party) for president, target in state.investigations if president == seat
        ),
        peeks=tuple(top for president, top in state.history.peeks if president == seat),
        legal_actions=actions,
    )
