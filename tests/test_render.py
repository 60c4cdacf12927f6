"""Rendering: nothing reaches a recipient that the rules keep from them; the deal looks the same for every
role; prompts offer exactly the legal actions. Also home of the rendering corpus test_catalog.py reuses."""

from __future__ import annotations

import dataclasses
import random
import re
from collections.abc import Iterator
from typing import Any, Final

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from moderator.catalog import SMS_LIMIT, Catalog, is_gsm7, languages, themes
from moderator.channels import Capabilities, Kind
from moderator.claims import Accusation, Claim, Clearance, InvestigationClaim, Office, PeekClaim, SessionClaim
from moderator.engine import (
    AnswerVeto,
    CallSpecialElection,
    CastVote,
    DiscardPolicy,
    EnactPolicy,
    Event,
    ExecutePlayer,
    GameState,
    InvestigateLoyalty,
    KnownSession,
    NominateChancellor,
    Party,
    Phase,
    PlayerView,
    Policy,
    Power,
    ProposeVeto,
    PublicSession,
    PublicView,
    Role,
    RuleViolation,
    WinReason,
    apply,
    awaiting,
    errors,
    known_roles,
    legal_actions,
    new_game,
    opening_events,
    public_view,
    view_for,
)
from moderator.engine import events as ev
from moderator.engine.types import ROLE_COUNTS
from moderator.grammar import RULES, Args
from moderator.render import (
    DEAL_MIN_PAD,
    DEAL_PAD,
    InputProblem,
    Message,
    TableInfo,
    batch_messages,
    board_messages,
    claim_messages,
    deal_length,
    event_messages,
    help_messages,
    input_message,
    knowledge_messages,
    needs_more,
    prompt,
    rules_messages,
    truth_timeline,
    violation_message,
    waiting_messages,
)

CATALOGS = [(theme, lang) for theme in themes() for lang in languages(theme)]
"""Every theme in every language it has a file for (a new catalog file is covered by every test that loops)."""
F, L = Policy.FASCIST, Policy.LIBERAL


# --- helpers --------------------------------------------------------------------------------------------


class Recording(Catalog):
    """A catalog that notes every message id and the params it was filled in with."""

    log: list[tuple[str, dict[str, object]]]
    """Set by ``recording`` (the frozen dataclass's fields stay the catalog's)."""

    def text(self, message_id: str, *, sms: bool = False, **params: object) -> str:
        self.log.append((message_id, params))
        return super().text(message_id, sms=sms, **params)


def caps_of(sms: bool) -> Capabilities:
    """What the renderer is told about the channel: an SMS phone's capabilities, or a channel without limits."""
    from moderator.transports.sms import CAPABILITIES

    return CAPABILITIES if sms else Capabilities()


def sms_limit(lang: str) -> int:
    """The characters one SMS in ``lang`` may have: one GSM-7 segment, or two UCS-2 ones for another script."""
    from moderator.transports.sms import limit

    return limit(lang)


def recording(theme: str, lang: str) -> Recording:
    """A fresh recording copy of a loaded catalog."""
    base = Catalog.load(theme, lang)
    rec = Recording(base.theme, base.lang, base.files, base.terms)
    object.__setattr__(rec, "log", [])
    return rec


def worst_names(players: int = 10) -> tuple[str, ...]:
    """Twenty-character names; the first ten characters of two collide, so SMS needs its seat tags."""
    names = [
        f"{chr(65 + i)}{'abcdefghijklmnopqrstuvwxyz'[i : i + 9]}Worstcase{i:0>1}"[:20].ljust(20, "x")
        for i in range(players)
    ]
    names[1] = names[0][:10] + "Collision1"
    return tuple(names)


def token_names(players: int, rng: random.Random, longest: int = 10) -> tuple[str, ...]:
    """Distinct names that occur in no catalog text, none inside another, so a name in a text is unambiguous.

    At most ten characters by default, so that SMS shows them whole."""
    out: list[str] = []
    while len(out) < players:
        name = "Q" + "".join(rng.choice("zqxjkvw") for _ in range(rng.randint(3, longest - 1)))
        if all(name not in o and o not in name for o in out):
            out.append(name)
    return tuple(out)


def play(players: int, seed: int) -> Iterator[tuple[GameState, GameState, tuple[Event, ...]]]:
    """A random game: (state before, state after, events) for the deal and for every action."""
    rng = random.Random(seed)
    state = new_game(players, seed=seed)
    yield state, state, opening_events(state)
    while state.phase is not Phase.GAME_OVER:
        owed = awaiting(state)
        if state.phase is Phase.ELECTION and rng.random() < 0.15:
            # Sometimes a voter changes an earlier vote.
            owed = tuple(s for s in range(players) if legal_actions(state, s))
        seat = rng.choice(owed)
        action = rng.choice(legal_actions(state, seat))
        before = state
        state, events = apply(state, action)
        yield before, state, events


# --- a corpus: every message kind, at its longest --------------------------------------------------------


def _base_view(players: int = 10) -> PlayerView:
    return view_for(new_game(players, seed=7, first_president=0), 0)


def corpus_views() -> list[PlayerView]:
    """A view for every kind of prompt, with the longest lists and card names the rules allow."""
    v = _base_view()
    p = v.public
    targets = tuple(range(1, 10))

    def at(phase: Phase, actions: tuple[Any, ...], **changes: Any) -> PlayerView:
        public = dataclasses.replace(
            p, phase=phase, president=0, chancellor=changes.pop("chancellor", 1), **changes.pop("public", {})
        )
        return dataclasses.replace(v, public=public, legal_actions=actions, **changes)

    # Term limits as the last elected government left them: with five alive only its Chancellor (3); with more,
    # its President (3) and Chancellor (5), or one of them where the other is the Candidate now.
    five_alive = {"alive": (True,) * 5 + (False,) * 5, "term_limited": (3,),
                  "sessions": (PublicSession(2, 3, F, False),)}
    both = {"term_limited": (3, 5), "sessions": (PublicSession(3, 5, F, False),)}
    president_only = {"term_limited": (3, 0), "sessions": (PublicSession(3, 0, F, False),)}
    nominating = tuple(NominateChancellor(0, t) for t in (1, 2, 4))
    return [
        v,
        at(Phase.NOMINATION, nominating, chancellor=None, public=five_alive),
        at(Phase.NOMINATION, nominating, chancellor=None, public=both),
        at(Phase.NOMINATION, nominating, chancellor=None, public=president_only),
        at(Phase.ELECTION, (CastVote(0, True), CastVote(0, False))),
        at(Phase.ELECTION, (CastVote(0, True), CastVote(0, False)), vote=False),
        at(Phase.LEGISLATIVE_PRESIDENT, (DiscardPolicy(0, F), DiscardPolicy(0, L)), hand=(F, F, L)),
        at(Phase.LEGISLATIVE_PRESIDENT, (DiscardPolicy(0, F),), hand=(F, F, F)),
        at(
            Phase.LEGISLATIVE_CHANCELLOR,
            (EnactPolicy(0, F), EnactPolicy(0, L), ProposeVeto(0)),
            hand=(F, L),
            may_veto=True,
            chancellor=0,
        ),
        at(Phase.LEGISLATIVE_CHANCELLOR, (EnactPolicy(0, F), EnactPolicy(0, L)), hand=(F, L), chancellor=0),
        at(Phase.VETO, (AnswerVeto(0, True), AnswerVeto(0, False))),
        at(Phase.INVESTIGATE, tuple(InvestigateLoyalty(0, t) for t in targets)),
        at(Phase.SPECIAL_ELECTION, tuple(CallSpecialElection(0, t) for t in targets)),
        at(Phase.EXECUTION, tuple(ExecutePlayer(0, t) for t in targets)),
    ]


def corpus_knowledge() -> list[PlayerView]:
    """Views whose 'what do I know' is long: many governments, investigations and peeks, a hand and a vote."""
    v = _base_view()
    sessions = (
        KnownSession(0, 1, (F, F, F), F, (F, F), F, False),
        KnownSession(0, 2, (F, F, L), L, (F, F), None, True),
        KnownSession(3, 0, None, None, (F, L), L, False),
        KnownSession(4, 0, None, None, (F, F), None, True),
        KnownSession(0, 5, (F, F, F), F, (F, F), F, True),
    )
    rich = dataclasses.replace(
        v,
        role=Role.FASCIST,
        party=Party.FASCIST,
        known_roles=((1, Role.HITLER), (2, Role.FASCIST), (3, Role.FASCIST)),
        hand=(F, F, F),
        passed=(F, F),
        vote=True,
        sessions=sessions,
        investigations=((6, Party.LIBERAL), (7, Party.FASCIST)),
        peeks=((F, F, F), (L, F, F)),
    )
    return [
        v,
        rich,
        dataclasses.replace(rich, role=Role.HITLER, known_roles=()),
        dataclasses.replace(rich, role=Role.LIBERAL, party=Party.LIBERAL, known_roles=()),
    ]


def corpus_boards() -> list[PublicView]:
    """Public views in every phase, with long lists (term limits, executions, not-Hitler, investigations)."""
    p = _base_view().public
    busy = dataclasses.replace(
        p,
        alive=(True,) * 8 + (False,) * 2,
        term_limited=(3, 4),
        not_hitler=(1, 2, 3, 4, 5, 6),
        investigations=((0, 5), (1, 6)),
        veto_unlocked=True,
        liberal_policies=4,
        fascist_policies=5,
        election_tracker=2,
        draw_pile=12,
        discard_pile=10,
        votes_cast=9,
    )
    out = [p]
    for phase in Phase:
        if phase is Phase.GAME_OVER:
            continue
        awaiting_ = () if phase is Phase.ELECTION else (0,)
        out.append(
            dataclasses.replace(
                busy,
                phase=phase,
                president=0,
                chancellor=None if phase is Phase.NOMINATION else 1,
                awaiting=awaiting_,
                not_voted=(2, 3, 4, 5, 6, 7, 8, 9) if phase is Phase.ELECTION else (),
            )
        )
    out.append(
        dataclasses.replace(
            busy,
            phase=Phase.NOMINATION,
            president=0,
            chancellor=None,
            awaiting=(0,),
            alive=(True,) * 5 + (False,) * 5,
            term_limited=(3,),
        )
    )
    roles = (Role.HITLER,) + (Role.FASCIST,) * 3 + (Role.LIBERAL,) * 6
    out.append(
        dataclasses.replace(
            busy,
            phase=Phase.GAME_OVER,
            president=None,
            chancellor=None,
            awaiting=(),
            winner=Party.FASCIST,
            win_reason=WinReason.HITLER_ELECTED,
            roles=roles,
        )
    )
    return out


def corpus_events() -> list[Event]:
    """Every event class with every variant that changes its words, at ten players."""
    votes_6_4 = tuple((s, s < 6) for s in range(10))
    votes_5_5 = tuple((s, s % 2 == 0) for s in range(10))
    roles = (Role.HITLER,) + (Role.FASCIST,) * 3 + (Role.LIBERAL,) * 6
    out: list[Event] = [
        ev.GameStarted(10),
        ev.RoleDealt(0, Role.LIBERAL, ()),
        ev.RoleDealt(0, Role.HITLER, ()),
        ev.RoleDealt(0, Role.FASCIST, ((1, Role.HITLER), (2, Role.FASCIST), (3, Role.FASCIST))),
        ev.RoleDealt(0, Role.HITLER, ((1, Role.FASCIST),)),  # 5-6 players
        ev.RoleDealt(0, Role.FASCIST, ((1, Role.HITLER),)),
        ev.PresidentialCandidateChosen(0, False),
        ev.PresidentialCandidateChosen(0, True),
        ev.ChancellorNominated(0, 1),
        ev.VoteCast(0, True, False),
        ev.VoteCast(0, False, True),
        ev.VoteProgressed(9, 10),
        ev.ElectionDecided(0, 1, votes_6_4, True),
        ev.ElectionDecided(0, 1, votes_5_5, False),
        ev.ElectionDecided(0, 1, tuple((s, True) for s in range(10)), True),
        ev.ElectionDecided(0, 1, tuple((s, False) for s in range(10)), False),
        ev.ElectionTrackerAdvanced(2),
        ev.ElectionTrackerAdvanced(3),
        ev.ChancellorNotHitler(1),
        ev.TermLimitsCleared(),
        ev.LegislativeSessionStarted(0, 1, False),
        ev.LegislativeSessionStarted(0, 1, True),
        ev.PoliciesDrawn(0, (F, F, F)),
        ev.PolicyDiscarded(0, F),
        ev.PolicyDiscarded(0, L),
        ev.PoliciesHandedOver(0, 1),
        ev.PoliciesReceived(1, (F, F), True),
        ev.VetoProposed(1),
        ev.VetoAnswered(0, True),
        ev.VetoAnswered(0, False),
        ev.PolicyEnacted(F, False, 4, 5),
        ev.PolicyEnacted(L, True, 4, 5),
        ev.VetoUnlocked(),
        ev.DeckReshuffled(12),
        ev.DrawPileShuffled((F, L, F)),
        *(ev.PresidentialPowerGranted(0, power) for power in Power),
        ev.LoyaltyInvestigated(0, 1),
        ev.PartyMembershipSeen(0, 1, Party.FASCIST),
        ev.PartyMembershipSeen(0, 1, Party.LIBERAL),
        ev.SpecialElectionCalled(0, 1),
        ev.PolicyPeekUsed(0),
        ev.TopPoliciesSeen(0, (F, F, F)),
        ev.PlayerExecuted(0, 1),
        ev.GameEnded(Party.LIBERAL, WinReason.POLICIES, roles),
        ev.GameEnded(Party.FASCIST, WinReason.POLICIES, roles),
        ev.GameEnded(Party.LIBERAL, WinReason.HITLER_EXECUTED, roles),
        ev.GameEnded(Party.FASCIST, WinReason.HITLER_ELECTED, roles),
    ]
    return out


def corpus_log() -> list[Event]:
    """A finished game's log with every kind of line the truth timeline writes."""
    roles = (Role.HITLER,) + (Role.FASCIST,) * 3 + (Role.LIBERAL,) * 6
    return [
        ev.PoliciesDrawn(0, (F, F, L)),
        ev.PolicyDiscarded(0, L),
        ev.PoliciesReceived(1, (F, F), False),
        ev.PolicyDiscarded(1, F),
        ev.PolicyEnacted(F, False, 0, 1),
        ev.PolicyEnacted(F, True, 0, 2),
        ev.PoliciesDrawn(2, (F, F, F)),
        ev.PolicyDiscarded(2, F),
        ev.PoliciesReceived(3, (F, F), True),
        ev.VetoProposed(3),
        ev.VetoAnswered(2, True),
        ev.PoliciesDrawn(4, (F, F, L)),
        ev.PolicyDiscarded(4, F),
        ev.PoliciesReceived(5, (F, L), True),
        ev.VetoProposed(5),
        ev.VetoAnswered(4, False),
        ev.PoliciesReceived(5, (F, L), False),
        ev.PolicyDiscarded(5, L),
        ev.PolicyEnacted(F, False, 0, 3),
        ev.PartyMembershipSeen(6, 7, Party.FASCIST),
        ev.TopPoliciesSeen(8, (F, L, F)),
        ev.PlayerExecuted(9, 0),
        ev.GameEnded(Party.LIBERAL, WinReason.HITLER_EXECUTED, roles),
    ]


def corpus_violations() -> list[RuleViolation]:
    """One instance of every rule violation, in a phase it can happen in."""
    kinds = [
        c
        for c in vars(errors).values()
        if isinstance(c, type) and issubclass(c, RuleViolation) and c is not RuleViolation
    ]
    out: list[RuleViolation] = []
    for cls in kinds:
        out.append(cls(0, Phase.LEGISLATIVE_CHANCELLOR))
    out.append(errors.OutOfTurn(0, None))
    out.extend(errors.OutOfTurn(0, phase) for phase in Phase)
    return out


def corpus(table: TableInfo, catalog: Catalog, *, sms: bool) -> list[Message]:
    """Every message kind the renderer produces, each at its longest for ``table``."""
    out: list[Message] = []
    board_goes_on = dataclasses.replace(_base_view().public, alive=(True,) * 5 + (False,) * 5)
    for event in corpus_events():
        out += event_messages(event, None, table, catalog, caps=caps_of(sms), board=board_goes_on)
        for seat in event.audience.seats:
            out += event_messages(event, seat, table, catalog, caps=caps_of(sms), board=board_goes_on)
    out += event_messages(ev.GameStarted(5), None, TableInfo(table.names[:5], table.theme), catalog, caps=caps_of(sms))
    handing_over = dataclasses.replace(board_goes_on, phase=Phase.LEGISLATIVE_CHANCELLOR)  # the President's discard
    out += event_messages(ev.PolicyDiscarded(0, Policy.LIBERAL), 0, table, catalog, caps=caps_of(sms),
                          board=handing_over)
    voting = dataclasses.replace(board_goes_on, phase=Phase.ELECTION)  # votes still open: a vote can change
    for changed in (False, True):
        out += event_messages(ev.VoteCast(0, True, changed), 0, table, catalog, caps=caps_of(sms), board=voting)
    for view in corpus_views():

        message = prompt(view, table, catalog, caps=caps_of(sms))
        assert message is not None
        out.append(message)
    for view in corpus_knowledge():
        out += knowledge_messages(view, table, catalog, caps=caps_of(sms))
    for public in corpus_boards():
        out += board_messages(public, table, catalog, caps=caps_of(sms))
        out += waiting_messages(public, table, catalog, caps=caps_of(sms))
        if public.phase is Phase.ELECTION:  # the computer players' votes wait for the people's
            out += board_messages(public, dataclasses.replace(table, computers_wait=True), catalog, caps=caps_of(sms))
    out += truth_timeline(corpus_log(), table, catalog, caps=caps_of(sms))
    out += [violation_message(e, table, catalog, caps=caps_of(sms)) for e in corpus_violations()]
    options = [table.name(s, short=sms) for s in range(3)]
    out += [input_message(p, table, catalog, caps=caps_of(sms), text="x" * 300, options=options) for p in InputProblem]
    out += help_messages(catalog, caps=caps_of(sms), host=True)
    out += [needs_more(verb, catalog, caps=caps_of(sms)) for verb, rule in RULES.items()
            if rule.args is Args.REQUIRED and rule.help]
    out += help_messages(catalog, caps=dataclasses.replace(caps_of(sms), typed=True))
    # (A channel whose every message is paid for, without a text limit: help's long form names what texts cost.)
    if not sms:
        out += help_messages(catalog, caps=Capabilities(paid_per_message=True), host=True)
    for players in (None, 5, 10):
        out += rules_messages(players, catalog, caps=caps_of(sms))
    claims_board = dataclasses.replace(board_goes_on, sessions=(PublicSession(8, 9, F, False),))
    out += claim_messages(corpus_claims(), claims_board, table, catalog, caps=caps_of(sms))
    return out


def corpus_claims() -> list[Claim]:
    """Every kind of claim, with every hand a claim can name, by the longest names."""
    hands = [(F, F, F), (F, F, L), (F, L, L), (L, L, L)]
    out: list[Claim] = [SessionClaim(8, Office.PRESIDENT, 0, drawn, drawn[1:]) for drawn in hands]
    out += [SessionClaim(9, Office.CHANCELLOR, 0, held, held[:1]) for held in ((F, F), (F, L), (L, L))]
    out += [SessionClaim(9, Office.CHANCELLOR, 0, (L, L), (L,)), SessionClaim(9, Office.CHANCELLOR, 0, (F, F), ())]
    out += [InvestigationClaim(8, 9, party) for party in Party]
    out += [PeekClaim(8, 1, (F, L, F)), Accusation(9, 8), Clearance(8, 7)]
    out += [Accusation(9, 8, sure=False), Clearance(8, 7, sure=False)]
    return out


# --- the deal -------------------------------------------------------------------------------------------


def _deals(
    players: int, seed: int, table: TableInfo, catalog: Catalog, sms: bool
) -> dict[int, list[Message]]:
    state = new_game(players, seed=seed)
    return {
        e.seat: event_messages(e, e.seat, table, catalog, caps=caps_of(sms))
        for e in opening_events(state)
        if isinstance(e, ev.RoleDealt)
    }


@pytest.mark.parametrize("theme,lang", CATALOGS)
@pytest.mark.parametrize("sms", [False, True])
def test_every_deal_has_the_same_shape(theme: str, lang: str, sms: bool) -> None:
    catalog = Catalog.load(theme, lang)
    rng = random.Random(f"{theme}{lang}{sms}")
    for players in range(5, 11):
        for names in (
            worst_names(players),
            token_names(players, rng, 20),
            tuple(f"P{i}" for i in range(players)),
        ):
            table = TableInfo(names, theme)
            expected = deal_length(table, catalog, caps=caps_of(sms))
            roles_seen: set[Role] = set()
            shapes: set[tuple[int, str, int, int]] = set()
            for seed in range(
                4
            ):  # several deals at the same table: the length must not depend on who is what
                state = new_game(players, seed=seed)
                roles_seen.update(state.roles)
                for messages in _deals(players, seed, table, catalog, sms).values():
                    assert len(messages) == 1
                    (m,) = messages
                    lines = m.text.split("\n")
                    assert m.secret and m.message_id == "deal-role" and not m.choices
                    assert lines[-1] == DEAL_PAD * len(lines[-1]) and len(lines[-1]) >= DEAL_MIN_PAD
                    shapes.add((len(messages), lines[0], len(lines), len(m.text)))
            assert roles_seen == set(Role)
            assert len(shapes) == 1, (players, shapes)
            assert shapes.pop()[3] == expected
            if sms:
                assert expected <= sms_limit(lang)


@pytest.mark.parametrize("players", range(5, 11))
def test_the_deal_names_exactly_the_known_roles(players: int) -> None:
    """Rules B1 items 4-6: who knows whom, for every role at every table size."""
    names = token_names(players, random.Random(players))
    table = TableInfo(names)
    for theme, lang in CATALOGS:
        catalog = Catalog.load(theme, lang)
        for seed in range(3):
            state = new_game(players, seed=seed)
            for seat, (m,) in _deals(players, seed, table, catalog, False).items():
                known = {s for s, _ in known_roles(state.roles, seat)}
                named = {s for s, name in enumerate(names) if name in m.text}
                assert named == known
                role = state.roles[seat]
                if role is Role.LIBERAL:
                    assert not known
                elif role is Role.HITLER:
                    assert len(known) == (1 if players <= 6 else 0)
                else:
                    assert len(known) == 1 + ROLE_COUNTS[players][1] - 1


# --- privacy over random games --------------------------------------------------------------------------

# Message ids that may carry a secret; none of them may ever reach the public channel.
SECRET_IDS = frozenset(
    {
        "private-header",
        "vote-recorded",
        "vote-recorded-last",
        "vote-changed",
        "policy-discarded",
        "party-membership-seen",
        "top-policies-seen",
        "prompt-vote-change",
        "prompt-discard",
        "prompt-enact",
        "prompt-enact-veto",
        "knowledge-title",
        "know-hand",
        "know-passed",
        "know-vote",
        "know-session-president",
        "know-session-president-vetoed",
        "know-session-chancellor",
        "know-session-chancellor-vetoed",
        "know-investigation",
        "know-peek",
        "truth-title",
        "truth-session",
        "truth-session-veto",
        "truth-session-veto-refused",
        "truth-chaos",
        "truth-investigation",
        "truth-peek",
        "truth-execution",
    }
)
SECRET_ID_PREFIXES = ("deal-",)
# Public ids whose params may carry a vote word: the votes, all at once, after the last one is in.
VOTE_REVEAL_IDS = frozenset({"election-elected", "election-rejected"})


def _secret_words(catalog: Catalog) -> tuple[set[str], set[str]]:
    """(role, party and card words; vote words) of a catalog."""
    t = catalog.terms
    hidden = {
        t[k]
        for k in (
            "liberal",
            "fascist",
            "hitler",
            "liberal_party",
            "fascist_party",
            "liberal_card",
            "fascist_card",
        )
    }
    return hidden, {t["ja"], t["nein"]}


def _values(params: dict[str, object]) -> set[str]:
    """Every list element of every string param (lists are joined with ', ')."""
    out: set[str] = set()
    for value in params.values():
        if isinstance(value, str):
            out.update(part.strip() for part in value.split(","))
    return out


NOT_HITLER_IDS: Final = frozenset({"chancellor-not-hitler", "player-executed-not-hitler"})
"""Public facts about a name and the word Hitler: in Persian the name comes right before it ("X هیتلر نیست")."""


def _check_public(
    log: list[tuple[str, dict[str, object]]],
    messages: list[Message],
    catalog: Catalog,
    state: GameState,
    names: tuple[str, ...],
    game_over: bool,
) -> None:
    hidden, votes = _secret_words(catalog)
    for mid, params in log:
        assert mid not in SECRET_IDS and not mid.startswith(SECRET_ID_PREFIXES), mid
        if game_over:
            continue
        assert mid != "roles-revealed"
        leaked = _values(params) & (hidden if mid in VOTE_REVEAL_IDS else hidden | votes)
        assert not leaked, (mid, params)
    for m in messages:
        assert not m.secret and not m.choices
        if game_over or m.message_id in NOT_HITLER_IDS:
            continue
        for _seat, name in enumerate(names):
            for word in hidden:
                # A role or party word right after a player's name ("Ann: Fascist", "Ann (Hitler)"); not the first
                # part of a compound (Portuguese "Ana (Engenheiro-Chefe)" is the Chancellor's title, not a role).
                assert not re.search(re.escape(name) + r"\W{0,3}" + re.escape(word) + r"\b(?!-)", m.text), m.text


def _check_private(
    event: Event,
    seat: int,
    messages: list[Message],
    state: GameState,
    catalog: Catalog,
    names: tuple[str, ...],
    sms: bool,
) -> None:
    header = catalog.text("private-header", sms=False)
    for m in messages:
        assert m.secret
        assert m.text.split("\n")[0] in (header, catalog.text("private-header", sms=True))
    if isinstance(event, ev.RoleDealt):
        # The deal's length bound renders hypothetical deals too, so check the text, not the log: the
        # names are unique tokens, so a name in the text is that player.
        (m,) = messages
        known = {s for s, _ in known_roles(state.roles, seat)}
        assert {s for s, n in enumerate(names) if n in m.text} == known
        role = state.roles[seat]
        own = catalog.text(
            "deal-role",
            sms=sms,
            role=catalog.term(role.value),
            party=catalog.term(role.party.value + "_party"),
        )
        assert own in m.text


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    players=st.integers(5, 10),
    seed=st.integers(0, 2**32),
    which=st.sampled_from(CATALOGS),
    sms=st.booleans(),
)
def test_no_message_tells_a_recipient_more_than_the_rules_allow(
    players: int, seed: int, which: tuple[str, str], sms: bool
) -> None:
    catalog = recording(*which)
    names = token_names(players, random.Random(seed))
    table = TableInfo(names, which[0])
    gsm7 = caps_of(sms).transliterates(which[1])
    shown = tuple(table.name(seat, short=sms, gsm7=gsm7) for seat in range(players))
    over = False
    for _before, after, events in play(players, seed):
        board = public_view(after)
        for event in events:
            over = over or isinstance(event, ev.GameEnded)
            catalog.log.clear()
            public = event_messages(event, None, table, catalog, caps=caps_of(sms), board=board)
            public_log = list(catalog.log)
            _check_public(public_log, public, catalog, after, shown, over)
            for seat in range(players):
                if not event.audience.includes(seat):
                    with pytest.raises(AssertionError):
                        event_messages(event, seat, table, catalog, caps=caps_of(sms), board=board)
                    continue
                catalog.log.clear()
                mine = event_messages(event, seat, table, catalog, caps=caps_of(sms), board=board)
                if event.audience.everyone:
                    assert mine == public  # a public event reads the same for everyone
                else:
                    _check_private(event, seat, mine, after, catalog, shown, sms)
        catalog.log.clear()
        board_text = board_messages(board, table, catalog, caps=caps_of(sms))
        board_log = list(catalog.log)
        _check_public(board_log, board_text, catalog, after, shown, after.phase is Phase.GAME_OVER)


# --- prompts, knowledge, violations ---------------------------------------------------------------------


@pytest.mark.parametrize("players", range(5, 11))
def test_prompts_offer_exactly_the_legal_actions(players: int) -> None:
    theme, lang = CATALOGS[players % len(CATALOGS)]
    catalog = Catalog.load(theme, lang)
    table = TableInfo(token_names(players, random.Random(players)), theme)
    for seed in range(3):
        for _, state, _ in play(players, seed * 100 + players):
            for seat in range(players):
                view = view_for(state, seat)
                for sms in (False, True):
                    message = prompt(view, table, catalog, caps=caps_of(sms))
                    if not view.legal_actions:
                        assert message is None
                        continue
                    assert message is not None
                    assert tuple(c.action for c in message.choices) == view.legal_actions
                    labels = [c.label for c in message.choices]
                    assert len(set(labels)) == len(labels)
                    shows_secret = bool(view.hand) or view.vote is not None
                    assert message.secret == shows_secret
                    if message.secret:
                        assert message.text.split("\n")[0] == catalog.text("private-header", sms=sms)
                    if sms:
                        for i, label in enumerate(labels, 1):
                            assert f"{i} {label}" in message.text
                        assert len(message.text) <= sms_limit(lang)


def test_knowledge_is_private_and_complete() -> None:
    catalog = Catalog.load()
    for players in (5, 7, 10):
        names = token_names(players, random.Random(players))
        table = TableInfo(names)
        for _, state, _ in play(players, players):
            for seat in range(players):
                view = view_for(state, seat)
                for sms in (False, True):
                    messages = knowledge_messages(view, table, catalog, caps=caps_of(sms))
                    assert messages and all(m.secret for m in messages)
                    text = "\n".join(m.text for m in messages)
                    assert catalog.term(view.role.value) in text
                    for other, _ in view.known_roles:
                        assert table.name(other, short=sms) in text
                    for target, _ in view.investigations:
                        assert table.name(target, short=sms) in text
                    if sms:
                        assert all(len(m.text) <= SMS_LIMIT for m in messages)


@pytest.mark.parametrize("theme,lang", CATALOGS)
def test_violations_and_bad_input_get_a_clear_reply_without_secrets(theme: str, lang: str) -> None:
    catalog = recording(theme, lang)
    table = TableInfo(worst_names())
    nothing_changed = catalog.text("nothing-changed")
    phases = {catalog.text("phase-" + p.value.replace("_", "-")) for p in Phase} | {
        catalog.text("phase-unknown")
    }
    for error in corpus_violations():
        catalog.log.clear()
        m = violation_message(error, table, catalog)
        assert not m.secret and not m.choices and m.message_id == "violation-" + error.code
        assert m.text.endswith(nothing_changed)
        # Structurally secret-free: the only thing filled in is the (public) phase the game is in.
        for mid, params in catalog.log:
            assert mid.startswith(("violation-", "phase-", "nothing-changed"))
            assert set(params) <= {"phase"} and set(params.values()) <= phases
    for problem in InputProblem:
        m = input_message(problem, table, catalog, text="nominate zzz", options=["A", "B"])
        assert not m.secret and m.text.endswith(nothing_changed)
    long = input_message(InputProblem.UNPARSEABLE, table, catalog, text="x" * 500)
    assert "x" * 21 not in long.text


def test_execution_says_not_hitler_only_when_the_game_goes_on() -> None:
    catalog = Catalog.load()
    table = TableInfo(tuple("ABCDEFG"))
    goes_on = dataclasses.replace(_base_view(7).public, alive=(True,) * 6 + (False,))
    over = dataclasses.replace(goes_on, phase=Phase.GAME_OVER)
    e = ev.PlayerExecuted(0, 6)
    assert [m.message_id for m in event_messages(e, None, table, catalog, board=goes_on)] == [
        "player-executed",
        "player-executed-not-hitler",
    ]
    assert [m.message_id for m in event_messages(e, None, table, catalog, board=over)] == ["player-executed"]
    five = dataclasses.replace(goes_on, alive=(True,) * 5 + (False,) * 2)
    assert [m.message_id for m in event_messages(e, None, table, catalog, board=five)][
        -1
    ] == "note-five-alive"


def test_a_games_end_is_of_the_end_kind_for_everyone() -> None:
    catalog = Catalog.load()
    table = TableInfo(tuple("ABCDEFG"))
    roles = (Role.HITLER, Role.FASCIST, Role.FASCIST) + (Role.LIBERAL,) * 4
    for winner, reason in ((Party.LIBERAL, WinReason.POLICIES), (Party.FASCIST, WinReason.HITLER_ELECTED)):
        for recipient in (None, 0, 3):
            messages = event_messages(ev.GameEnded(winner, reason, roles), recipient, table, catalog)
            assert [m.kind for m in messages] == [Kind.END]


def test_batch_messages_filters_by_audience_in_order() -> None:
    catalog = Catalog.load()
    table = TableInfo(tuple("ABCDEFG"))
    state = new_game(7, seed=1)
    events = opening_events(state)
    board = public_view(state)
    public = batch_messages(events, None, table, catalog, board=board)
    assert [m.message_id for m in public] == ["game-started", "presidential-candidate"]
    mine = batch_messages(events, 3, table, catalog, board=board)
    assert [m.message_id for m in mine] == ["game-started", "deal-role", "presidential-candidate"]


def test_the_truth_timeline_tells_every_government_after_the_end_only() -> None:
    catalog = recording("classic", "en")
    players = 7
    table = TableInfo(token_names(players, random.Random(0)))
    for seed in range(5):
        played = list(play(players, seed))
        state = played[-1][1]
        log: list[Event] = [event for _, _, events in played for event in events]
        assert state.phase is Phase.GAME_OVER
        with pytest.raises(ValueError):
            truth_timeline([e for e in log if not isinstance(e, ev.GameEnded)], table, catalog)
        catalog.log.clear()
        messages = truth_timeline(log, table, catalog)
        ids = [mid for mid, _ in catalog.log]
        assert len(messages) == 1 and not messages[0].secret
        assert sum(mid.startswith("truth-session") for mid in ids) == len(state.history.sessions)
        assert ids.count("truth-investigation") == len(state.history.investigations)
        assert ids.count("truth-peek") == len(state.history.peeks)
        assert ids.count("truth-execution") == state.alive.count(False)
        sms = truth_timeline(log, table, catalog, caps=caps_of(True))
        assert all(len(m.text) <= SMS_LIMIT and is_gsm7(m.text) for m in sms)


def test_short_names_are_short_distinct_and_gsm7() -> None:
    table = TableInfo(worst_names()[:9] + ("Zoë 😀 Łukasz",))
    short = table.short_names
    assert len(set(short)) == len(short)
    assert all(0 < len(n) <= 10 and is_gsm7(n) for n in short)
    assert short[-1].startswith("Zoe")


def test_the_last_vote_is_not_told_it_can_change() -> None:
    """Only while the vote is open may a vote change; the one that closes it is confirmed without that offer."""
    catalog = Catalog.load("classic", "en")
    table = TableInfo(tuple(f"P{i}" for i in range(5)))
    open_vote = dataclasses.replace(_base_view().public, phase=Phase.ELECTION)
    closed = dataclasses.replace(_base_view().public, phase=Phase.LEGISLATIVE_PRESIDENT)
    still_open = event_messages(ev.VoteCast(0, True, False), 0, table, catalog, board=open_vote)
    last = event_messages(ev.VoteCast(0, True, False), 0, table, catalog, board=closed)
    assert "can change" in still_open[0].text
    assert "can change" not in last[0].text and "last" in last[0].text


EN_TABLE = TableInfo(tuple(f"P{i}" for i in range(7)))


def test_a_tie_says_a_government_needs_a_majority() -> None:
    catalog = Catalog.load("classic", "en")
    tie = tuple((s, s % 2 == 0) for s in range(6))
    text = event_messages(ev.ElectionDecided(0, 1, tie, False), None, EN_TABLE, catalog)[0].text
    assert "A tie is not a majority" in text
    lost = tuple((s, s == 0) for s in range(6))
    assert "tie" not in event_messages(ev.ElectionDecided(0, 1, lost, False), None, EN_TABLE, catalog)[0].text


def test_a_special_election_of_the_next_in_line_says_they_preside_twice() -> None:
    catalog = Catalog.load("classic", "en")
    board = dataclasses.replace(_base_view(7).public, alive=(True, False, True) + (True,) * 4)
    next_in_line = event_messages(ev.SpecialElectionCalled(0, 2), None, EN_TABLE, catalog, board=board)[0].text
    assert "P2 was next in line anyway" in next_in_line  # seat 1 is dead: seat 2 follows seat 0
    other = event_messages(ev.SpecialElectionCalled(0, 4), None, EN_TABLE, catalog, board=board)[0].text
    assert "next in line" not in other


def test_the_nomination_prompt_names_who_is_term_limited() -> None:
    catalog = Catalog.load("classic", "en")
    view = _base_view(7)
    public = dataclasses.replace(view.public, phase=Phase.NOMINATION, president=0, term_limited=(3, 5))
    message = prompt(dataclasses.replace(view, public=public), EN_TABLE, catalog)
    assert message is not None and "Term-limited, so not on the list: P3, P5" in message.text


def test_the_board_shows_each_slots_power_and_the_next_one() -> None:
    catalog = Catalog.load("classic", "en")
    public = dataclasses.replace(_base_view(7).public, fascist_policies=2)
    text = "\n".join(m.text for m in board_messages(public, EN_TABLE, catalog))
    assert "2 Investigate Loyalty, 3 Special Election (next), 4 Execution, 5 Execution, 6 Fascists win" in text


def test_rules_for_a_table_cover_powers_term_limits_tracker_chaos_and_veto() -> None:
    catalog = Catalog.load("classic", "en")
    five = "\n".join(m.text for m in rules_messages(5, catalog))
    assert "With 5 players" in five and "3 Policy Peek" in five and "Hitler and the Fascist know each other" in five
    for words in ("Term limits", "Election Tracker", "chaos", "veto", "A tie is a rejection"):
        assert words in five
    assert "With 9 players" in "\n".join(m.text for m in rules_messages(9, catalog))
    assert "players the" not in "\n".join(m.text for m in rules_messages(None, catalog))


def test_a_nomination_says_which_office_made_each_name_term_limited() -> None:
    """Five alive: only the last Chancellor is limited, and is called that; more: the last government, or the one
    of it who is not the Candidate now."""
    catalog = Catalog.load()
    table = TableInfo(tuple("ABCDEFGHIJ"))
    notes = []
    for view in corpus_views()[1:4]:
        message = prompt(view, table, catalog)
        assert message is not None
        notes += [line for line in message.text.split("\n") if line.startswith("Term-limited")]
    assert notes == [
        "Term-limited, so not on the list: D (the last elected Chancellor).",
        "Term-limited, so not on the list: D, F (the last elected government).",
        "Term-limited, so not on the list: D (the last elected President).",
    ]
# --- names in another direction than their sentence -----------------------------------------------------


FSI, PDI = "\u2068", "\u2069"


def test_a_name_running_the_other_way_is_isolated_in_its_sentence() -> None:
    """A Persian name in an English sentence, a Latin one in a Persian sentence: between FSI and PDI, so that a
    phone takes the sentence's direction from its own words and the name keeps its place. A name running the
    sentence's way is left as it is."""
    table = TableInfo(("زهرا", "Bob", "Алексей", "Cy", "Dee"))
    nominated = ev.ChancellorNominated(0, 1)
    english = event_messages(nominated, None, table, Catalog.load("classic", "en"))[0].text
    assert english.startswith(f"{FSI}زهرا{PDI} nominates Bob as Chancellor.")
    persian = event_messages(nominated, None, table, Catalog.load("classic", "fa"))[0].text
    assert "زهرا" in persian and f"{FSI}زهرا" not in persian and f"{FSI}Bob{PDI}" in persian
    # By SMS, an English text writes the Persian name in Latin letters (no isolate needed); a Persian text keeps the
    # Cyrillic and Latin names, each isolated, or a list of them isolated once (ten isolates would not fit).
    sms = event_messages(nominated, None, table, Catalog.load("classic", "en"), caps=caps_of(True))[0].text
    assert FSI not in sms and "zhr" in sms
    election = ev.ElectionDecided(0, 1, ((0, True), (1, False), (2, False), (3, True), (4, False)), False)
    text = event_messages(election, None, table, Catalog.load("classic", "fa"), caps=caps_of(True))[0].text
    # ... and a Persian list is written with the Persian comma (CLDR's, without its direction mark).
    assert f"{FSI}Bob، Алексей، Dee{PDI}" in text and f"زهرا، {FSI}Cy{PDI}" in text


def test_a_quote_of_what_was_typed_is_isolated_too() -> None:
    reply = input_message(InputProblem.UNPARSEABLE, TableInfo(("Ann",)), Catalog.load("classic", "fa"), text="hello")
    assert f"{FSI}hello{PDI}" in reply.text
