"""Tells: how often a scorer that reads only the public record picks a fascist, against chance.

Usage: python benchmarks/tells.py [--games 500] [--first-seed 10000] [--records DIR] [--jobs 2]

Plays ``--games`` games of computer players with claims on, 5 to 10 players in turn (game i has 5 + i % 6 players
and seed first-seed + i), or reads every ``*.json`` game record in ``--records`` (``moderator simulate
--computers --record DIR`` writes them). Of each game the scorers see only what the whole table saw: who
governed, what was enacted, who investigated whom, who is alive, and every claim, with when it was said; the
roles only grade their picks. A person at the table who trusted a scorer would pick a fascist (Hitler included)
as often as its precision says; chance is how often a pick among the same candidates at random would.

Scorers (a "result" is a government's end: claims made until the next one answer it):
  (a) accusation = truth: the accused of every accusation is a fascist (candidates: the living but the
      speaker); (a+) the same, counting only accusations said as facts ("Bob is a fascist"), not "I do not
      trust Bob".
  (b) silence in a dispute: of a President and Chancellor whose claims about their session conflict, the one
      who does not accuse the other before the next result while the other does (candidates: the two).
  (c) an investigation claim its investigator follows with no accusation or clearance of the target before the
      next result: the investigator (candidates: the living).
  (d) the Chancellor who says "two fascist policies" after a fascist enactment whose President says he handed
      over a liberal one (candidates: the two).
  (e) after the fifth government, and what was said before the next nomination: every pick of (a) to (d) is a
      point, and each fascist policy a government enacted is a point for both its members; the top-scoring
      living seat (ties share the pick; candidates: the living).
Targets (the computer players issue): no scorer's precision above 0.85, and (e) within 0.20 of chance.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import defaultdict
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from moderator import record as records
from moderator.claims import Accusation, Clearance, InvestigationClaim, Office, SessionClaim, Spoken
from moderator.engine import Phase, Policy, PublicSession, PublicView, Role, apply, public_view
from moderator.simulate import computer_game

_F, _L = Policy.FASCIST, Policy.LIBERAL
MAX_PRECISION = 0.85
E_OVER_CHANCE = 0.20
SCORERS = ("a", "a+", "b", "c", "d", "e")
NAMES = {
    "a": "accusation = truth",
    "a+": "accusation said as a fact = truth",
    "b": "silent one in a dispute",
    "c": "investigation claim, no verdict",
    "d": "Chancellor's 'two fascist' against his President",
    "e": "sum of all, after the fifth government",
}


@dataclass(frozen=True, slots=True)
class PublicRecord:
    """What the whole table saw of one game: nothing secret (no role, no hand, no investigation result)."""

    players: int
    alive: tuple[tuple[bool, ...], ...]
    """Who was alive after k actions, for every k."""
    phases: tuple[Phase, ...]
    """The phase after k actions."""
    sessions: tuple[PublicSession, ...]
    ended: tuple[int, ...]
    """For each session, after how many actions it had ended (the step its result came at)."""
    investigations: tuple[tuple[int, int, int], ...]
    """(step, President, target) of every investigation."""
    claims: tuple[Spoken, ...]


def public_record(data: dict[str, Any]) -> tuple[PublicRecord, tuple[Role, ...]]:
    """A game record read as the table saw it, and (apart, for grading only) its roles."""
    record = records.parse(data)
    state = record.start()
    views: list[PublicView] = [public_view(state)]
    for action in record.actions:
        state, _ = apply(state, action)
        views.append(public_view(state))
    last = views[-1]
    ended = tuple(next(k for k, view in enumerate(views) if len(view.sessions) > i) for i in range(len(last.sessions)))
    investigations = tuple(
        (next(k for k, view in enumerate(views) if len(view.investigations) > j), president, target)
        for j, (president, target) in enumerate(last.investigations)
    )
    public = PublicRecord(
        players=last.players,
        alive=tuple(view.alive for view in views),
        phases=tuple(view.phase for view in views),
        sessions=last.sessions,
        ended=ended,
        investigations=investigations,
        claims=tuple(record.claims or ()),
    )
    return public, record.roles


@dataclass(frozen=True, slots=True)
class Pick:
    """One scorer's pick: the seat, and the candidates it was picked among (for chance); ``weight`` splits a
    tie."""

    seat: int
    candidates: tuple[int, ...]
    weight: float = 1.0


def _living(public: PublicRecord, step: int, but: int | None = None) -> tuple[int, ...]:
    return tuple(s for s, alive in enumerate(public.alive[step]) if alive and s != but)


def _next_result(public: PublicRecord, step: int) -> int:
    """The step of the first government's result after ``step`` (the game's last step if none)."""
    return next((end for end in public.ended if end > step), len(public.alive))


def _session_claims(public: PublicRecord) -> tuple[dict[int, Spoken], dict[int, Spoken]]:
    """Each session's first President claim and first Chancellor claim, by the members who could make them."""
    presidents: dict[int, Spoken] = {}
    chancellors: dict[int, Spoken] = {}
    for spoken in public.claims:
        claim = spoken.claim
        if not isinstance(claim, SessionClaim) or claim.session >= len(public.sessions):
            continue
        session = public.sessions[claim.session]
        if claim.office is Office.PRESIDENT and claim.speaker == session.president:
            presidents.setdefault(claim.session, spoken)
        elif claim.office is Office.CHANCELLOR and claim.speaker == session.chancellor:
            chancellors.setdefault(claim.session, spoken)
    return presidents, chancellors


def _said(public: PublicRecord, kind: type, speaker: int, target: int, start: int, stop: int) -> bool:
    return any(
        isinstance(s.claim, kind) and s.claim.speaker == speaker and getattr(s.claim, "target", None) == target
        and start <= s.step < stop
        for s in public.claims
    )


def _verdict(public: PublicRecord, speaker: int, target: int, start: int, stop: int) -> bool:
    return _said(public, Accusation, speaker, target, start, stop) or _said(public, Clearance, speaker, target,
                                                                           start, stop)


def picks(public: PublicRecord, until: int | None = None) -> dict[str, list[Pick]]:
    """Every pick of scorers (a) to (d) from what was said and done up to step ``until`` (all of it if None)."""
    last = len(public.alive) - 1 if until is None else until
    claims = [s for s in public.claims if s.step <= last]
    out: dict[str, list[Pick]] = {name: [] for name in ("a", "a+", "b", "c", "d")}
    for spoken in claims:
        claim = spoken.claim
        if isinstance(claim, Accusation) and claim.speaker != claim.target:
            pick = Pick(claim.target, _living(public, spoken.step, but=claim.speaker))
            out["a"].append(pick)
            if claim.sure:
                out["a+"].append(pick)
    presidents, chancellors = _session_claims(public)
    for index, president in presidents.items():
        chancellor = chancellors.get(index)
        if chancellor is None or max(president.step, chancellor.step) > last:
            continue
        p, c = president.claim, chancellor.claim
        assert isinstance(p, SessionClaim) and isinstance(c, SessionClaim)
        if c.hand == p.passed:
            continue
        start = public.ended[index]
        stop = min(_next_result(public, start), last + 1)
        by_p = _said(public, Accusation, p.speaker, c.speaker, start, stop)
        by_c = _said(public, Accusation, c.speaker, p.speaker, start, stop)
        if by_p != by_c:
            out["b"].append(Pick(c.speaker if by_p else p.speaker, (p.speaker, c.speaker)))
        if public.sessions[index].enacted is _F and c.hand == (_F, _F) and _L in p.passed:
            out["d"].append(Pick(c.speaker, (p.speaker, c.speaker)))
    for spoken in claims:
        claim = spoken.claim
        if not isinstance(claim, InvestigationClaim):
            continue
        if not any(s == claim.speaker and t == claim.target for _, s, t in public.investigations):
            continue
        stop = min(_next_result(public, spoken.step), last + 1)
        if not _verdict(public, claim.speaker, claim.target, spoken.step, stop) and stop > last:
            continue  # the game (or the window read) ended before a verdict could come
        if not _verdict(public, claim.speaker, claim.target, spoken.step, stop):
            out["c"].append(Pick(claim.speaker, _living(public, spoken.step)))
    return out


def fifth_government(public: PublicRecord) -> list[Pick]:
    """Scorer (e): the top-scoring living seat once the fifth government's result and what followed it until the
    next nomination are known (no pick if the game ended first)."""
    if len(public.sessions) < 5:
        return []
    cut = next((k for k in range(public.ended[4], len(public.phases)) if public.phases[k] is Phase.NOMINATION), None)
    if cut is None:
        return []
    score: dict[int, float] = defaultdict(float)
    for found in picks(public, cut).values():
        for pick in found:
            score[pick.seat] += 1.0
    for session in public.sessions[:5]:
        if session.enacted is _F:
            score[session.president] += 1.0
            score[session.chancellor] += 1.0
    living = _living(public, cut)
    best = max(score[s] for s in living)
    top = [s for s in living if score[s] == best]
    return [Pick(s, living, 1.0 / len(top)) for s in top]


@dataclass
class Tally:
    """Picks of one scorer: how many (weighted), how many were fascists, and what chance would have made."""

    picks: float = 0.0
    fascists: float = 0.0
    chance: float = 0.0

    def add(self, pick: Pick, roles: Sequence[Role]) -> None:
        """Count one pick against the roles."""
        fascist = [roles[s] is not Role.LIBERAL for s in pick.candidates]
        self.picks += pick.weight
        self.fascists += pick.weight * (roles[pick.seat] is not Role.LIBERAL)
        self.chance += pick.weight * sum(fascist) / len(fascist)

    def merge(self, other: Tally) -> None:
        """Add another chunk's counts."""
        self.picks += other.picks
        self.fascists += other.fascists
        self.chance += other.chance


@dataclass
class Scores:
    """Every scorer's tally, over all games and (for (e)) per player count."""

    tallies: dict[str, Tally] = field(default_factory=lambda: {name: Tally() for name in SCORERS})
    by_players: dict[int, Tally] = field(default_factory=dict)
    games: int = 0

    def merge(self, other: Scores) -> None:
        """Add another chunk's scores."""
        for name, tally in other.tallies.items():
            self.tallies[name].merge(tally)
        for players, tally in other.by_players.items():
            self.by_players.setdefault(players, Tally()).merge(tally)
        self.games += other.games


def score(records_json: Sequence[dict[str, Any]]) -> Scores:
    """Every scorer's picks over these game records, graded."""
    scores = Scores()
    for data in records_json:
        public, roles = public_record(data)
        scores.games += 1
        for name, found in picks(public).items():
            for pick in found:
                scores.tallies[name].add(pick, roles)
        for pick in fifth_government(public):
            scores.tallies["e"].add(pick, roles)
            scores.by_players.setdefault(public.players, Tally()).add(pick, roles)
    return scores


def _played(job: tuple[int, int, int]) -> Scores:
    first, start, stop = job
    played = []
    for seed in range(start, stop):
        game = computer_game(5 + (seed - first) % 6, seed)
        names = [f"P{s + 1}" for s in range(game.state.players)]
        played.append(records.to_json(names, game.state, game.actions, game.claims))
    return score(played)


def _read(paths: Sequence[str]) -> Scores:
    return score([json.loads(Path(p).read_text(encoding="utf-8")) for p in paths])


def main() -> None:
    """Print each scorer's precision against chance, and whether the targets hold."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=500)
    parser.add_argument("--first-seed", type=int, default=10_000)
    parser.add_argument("--records", type=Path, metavar="DIR", help="score the game records in DIR instead")
    parser.add_argument(
        "--jobs", type=int, default=len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 2
    )
    args = parser.parse_args()
    began = time.perf_counter()
    scores = Scores()
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        if args.records is not None:
            paths = sorted(str(p) for p in args.records.glob("*.json"))
            chunks = [paths[i : i + 50] for i in range(0, len(paths), 50)]
            results = pool.map(_read, chunks)
        else:
            first = args.first_seed
            jobs = [(first, s, min(s + 25, first + args.games)) for s in range(first, first + args.games, 25)]
            results = pool.map(_played, jobs)
        for part in results:
            scores.merge(part)
    seconds = time.perf_counter() - began
    last = args.first_seed + args.games - 1
    source = str(args.records) if args.records is not None else f"seeds {args.first_seed}-{last}"
    print(f"tells in {scores.games} games of computer players, 5 to 10 players ({source}); picks are fascists")
    print(f"{'scorer':<6} {'what it picks':<50} {'picks':>7} {'precision':>9} {'chance':>7} {'over':>6}")
    held = True
    for name in SCORERS:
        tally = scores.tallies[name]
        if not tally.picks:
            print(f"({name:<4}) {NAMES[name]:<50} {0:>7} {'-':>9} {'-':>7} {'-':>6}")
            continue
        precision, chance = tally.fascists / tally.picks, tally.chance / tally.picks
        held = held and precision <= MAX_PRECISION and (name != "e" or precision - chance <= E_OVER_CHANCE)
        print(f"({name:<4}) {NAMES[name]:<50} {tally.picks:>7.0f} {precision:>9.3f} {chance:>7.3f} "
              f"{precision - chance:>+6.3f}")
    for players in sorted(scores.by_players):
        tally = scores.by_players[players]
        print(f"       (e) at {players:>2} players: {tally.picks:>5.0f} picks, precision "
              f"{tally.fascists / tally.picks:.3f}, chance {tally.chance / tally.picks:.3f}")
    print(f"targets (no precision above {MAX_PRECISION:.2f}, (e) within {E_OVER_CHANCE:.2f} of chance) "
          f"{'hold' if held else 'do NOT hold'}; {args.jobs} processes, {seconds:.0f} s wall")


if __name__ == "__main__":
    main()
