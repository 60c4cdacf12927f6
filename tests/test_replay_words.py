"""``moderator replay`` in every language and theme: the timeline's sentences come from the catalogs through
render.py (``replay_timeline``), classic English by default, ``--lang`` and ``--theme`` for the others.

A German timeline has no English left in it, a corporate one none of the classic theme's words, end to end from a
game played and recorded at the console; and every line the timeline can write renders in every catalog."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from moderator import record as records
from moderator.catalog import Catalog, languages, literals, messages_dir, plural_forms, plural_specs, read_file
from moderator.cli import main
from moderator.engine import Event, Party, Policy, Power, Role, RuleViolation, WinReason, errors
from moderator.engine import events as ev
from moderator.moves import Move, MoveKind, action
from moderator.render import Rejected, TableInfo, replay_rejection, replay_timeline, told_events
from tests.test_render import CATALOGS, corpus_claims, recording, worst_names

GOLDEN = Path(__file__).parent / "golden"
RECORDS = sorted(p for p in GOLDEN.glob("*.json") if not p.name.endswith(".expected.json"))
F, L = Policy.FASCIST, Policy.LIBERAL
ROOT = messages_dir()


# --- every line the timeline can write ------------------------------------------------------------------


def corpus_story() -> list[Event]:
    """A story with every kind of line the timeline writes, each variant once (it need not be one game)."""
    roles = (Role.HITLER, Role.FASCIST, Role.FASCIST, Role.FASCIST) + (Role.LIBERAL,) * 6
    return [
        ev.GameStarted(10),
        *(ev.RoleDealt(seat, role, ((0, Role.HITLER),) if role is Role.FASCIST else ())
          for seat, role in enumerate(roles)),
        ev.VoteProgressed(0, 10),  # a count that follows no vote stands alone
        ev.PresidentialCandidateChosen(0, False),
        ev.ChancellorNominated(0, 1),
        ev.VoteCast(0, True, False), ev.VoteProgressed(1, 10),
        ev.VoteCast(0, False, True), ev.VoteProgressed(1, 10),
        ev.VoteCast(1, True, False),
        ev.VoteCast(1, False, True),
        ev.ElectionDecided(0, 1, ((0, False), (1, False)), False),
        ev.ElectionTrackerAdvanced(1),
        ev.PresidentialCandidateChosen(1, True),
        ev.ElectionDecided(1, 2, ((0, True), (1, True), (2, False)), True),
        ev.ChancellorNotHitler(2),
        ev.LegislativeSessionStarted(1, 2, False),
        ev.PoliciesDrawn(1, (F, F, L)), ev.PolicyDiscarded(1, L), ev.PoliciesHandedOver(1, 2),
        ev.PoliciesReceived(2, (F, F), False), ev.PolicyDiscarded(2, F),
        ev.PolicyEnacted(F, False, 0, 1),  # the tracker goes back from 1
        ev.PresidentialPowerGranted(1, Power.INVESTIGATE_LOYALTY),
        ev.LoyaltyInvestigated(1, 4), ev.PartyMembershipSeen(1, 4, Party.LIBERAL),
        ev.PresidentialPowerGranted(1, Power.SPECIAL_ELECTION), ev.SpecialElectionCalled(1, 5),
        ev.PresidentialPowerGranted(1, Power.POLICY_PEEK), ev.PolicyPeekUsed(1), ev.TopPoliciesSeen(1, (L, F, F)),
        ev.PresidentialPowerGranted(1, Power.EXECUTION),
        ev.PlayerExecuted(1, 6), ev.PlayerExecuted(1, 0),
        ev.LegislativeSessionStarted(5, 7, True),
        ev.PoliciesDrawn(5, (F, L, L)), ev.PolicyDiscarded(5, L), ev.PoliciesHandedOver(5, 7),
        ev.PoliciesReceived(7, (F, L), True), ev.VetoProposed(7), ev.VetoAnswered(5, True),
        ev.LegislativeSessionStarted(5, 7, True),
        ev.PoliciesReceived(7, (F, L), True), ev.VetoProposed(7), ev.VetoAnswered(5, False),
        ev.PoliciesReceived(7, (F, L), False), ev.PolicyDiscarded(7, F),
        ev.PolicyEnacted(L, False, 1, 1),  # the tracker was at 0
        ev.VetoUnlocked(),
        ev.ElectionTrackerAdvanced(3), ev.TermLimitsCleared(),
        ev.PolicyEnacted(F, True, 1, 4),  # its power is ignored
        ev.ElectionTrackerAdvanced(3),
        ev.PolicyEnacted(L, True, 2, 4),
        ev.DeckReshuffled(12), ev.DrawPileShuffled((L, F) * 6),
        *(ev.GameEnded(winner, reason, roles) for winner, reason in (
            (Party.LIBERAL, WinReason.POLICIES), (Party.FASCIST, WinReason.POLICIES),
            (Party.LIBERAL, WinReason.HITLER_EXECUTED), (Party.FASCIST, WinReason.HITLER_ELECTED))),
    ]


def corpus_rejections() -> list[Rejected]:
    """Every kind of action rejected, and every rule broken."""
    moves = [
        Move(MoveKind.NOMINATE, target=1), Move(MoveKind.VOTE, yes=True), Move(MoveKind.VOTE, yes=False),
        Move(MoveKind.DISCARD, card=L), Move(MoveKind.ENACT, card=F), Move(MoveKind.VETO),
        Move(MoveKind.VETO_REPLY, yes=True), Move(MoveKind.VETO_REPLY, yes=False), Move(MoveKind.INVESTIGATE, target=2),
        Move(MoveKind.SPECIAL_ELECTION, target=3), Move(MoveKind.EXECUTE, target=4),
    ]
    violations = [c(0) for c in vars(errors).values()
                  if isinstance(c, type) and issubclass(c, RuleViolation) and c is not RuleViolation]
    out = [Rejected(index, action(0, m), errors.OutOfTurn(0)) for index, m in enumerate(moves)]
    return out + [Rejected(7, action(0, moves[0]), violation) for violation in violations]


def replay_corpus(table: TableInfo, catalog: Catalog) -> list[str]:
    """Every line the replay timeline writes, in every variant: the story, every claim, every rejection."""
    story = corpus_story()
    lines = replay_timeline(story, table, catalog, said={len(story): corpus_claims()},
                            rejected=corpus_rejections()[0])
    return lines + [replay_rejection(rejected, table, catalog) for rejected in corpus_rejections()]


def replay_ids() -> set[str]:
    """The message ids the replay timeline uses, in any catalog."""
    used: set[str] = set()
    for theme, lang in CATALOGS:
        catalog = recording(theme, lang)
        replay_corpus(TableInfo(worst_names(), theme), catalog)
        used |= {mid for mid, _ in catalog.log}
    return used


QUOTED = re.compile(r'"[^"]+"|«[^»]+»')
"""A span of words in quotation marks."""


def test_the_timeline_tells_every_event() -> None:
    every = {c for c in vars(ev).values() if isinstance(c, type) and issubclass(c, Event) and c is not Event}
    assert told_events() == every


@pytest.mark.parametrize("theme,lang", CATALOGS)
def test_every_line_of_the_timeline_renders_in_every_catalog(theme: str, lang: str) -> None:
    catalog = Catalog.load(theme, lang)
    lines = replay_corpus(TableInfo(worst_names(), theme), catalog)
    claims = corpus_claims()
    told = [line for line in lines if line.strip()]
    assert not [line for line in told if "{" in line or "}" in line]
    # Every claim is told as its speaker's words in quotes (the language's own: "...", «...»).
    assert sum(QUOTED.search(line) is not None for line in told) == len(claims)


def test_the_english_timeline_names_each_broken_rule_as_the_engine_states_it() -> None:
    """The rule a rejected action breaks reads the same in the English timeline as in the engine's own words
    (which the ``--json`` summary and standard error carry too)."""
    english = Catalog.load()
    table = TableInfo(("Ann", "Bob", "Cy", "Dee", "Eve"))
    for rejected in corpus_rejections():
        assert replay_rejection(rejected, table, english).endswith(": " + rejected.violation.rule)


# --- in the words of every language and theme -----------------------------------------------------------


def _words(text: str) -> set[str]:
    """The words of ``text``, case-folded (two letters or more: card letters are no words)."""
    return {w.casefold() for w in re.findall(r"[^\W\d_]{2,}", text)}


def english() -> set[str]:
    """The words the English timeline writes of its own (its sentences, every plural form, its terms) that German
    does not: less the German terms (Hitler, Veto, Chaos...) and "in", which both languages write."""
    catalog = Catalog.load("classic", "en")
    texts = [*catalog.terms.values()]
    for template in (catalog.template(mid) for mid in replay_ids()):
        forms = [form for spec in plural_specs(template) for form in plural_forms(spec).values()]
        texts += [literals(template), *forms]
    german_terms = _words(" ".join(Catalog.load("classic", "de").terms.values()))
    return set().union(*(_words(text) for text in texts)) - german_terms - {"in"}


NAMES = {"ann", "bob", "cy", "dee", "eve", "fay", "gus", "hal", "ivy", "computer"}
"""The names of the players in the golden records and at the console."""


def timelines(theme: str, lang: str) -> list[str]:
    """The timeline of every golden record (every event kind, rejected actions) in this theme and language."""
    catalog = Catalog.load(theme, lang)
    return [records.timeline(records.replay(records.loads(p.read_bytes())), catalog) for p in RECORDS]


def test_a_german_timeline_has_no_english_left() -> None:
    words = english()
    for theme in ("classic", "corporate"):
        for text in timelines(theme, "de"):
            assert not (_words(text) - NAMES) & words, sorted((_words(text) - NAMES) & words)
            assert text.startswith("Eine Partie ") and "\nRunde 1: " in text


CLASSIC_VERBS = {
    "en": {"enact", "enacts", "execute", "executes", "investigates", "legislative", "presidential", "party", "country"},
    "de": {"erlässt", "hinrichten", "überprüfen", "land"},
}
"""The classic theme's words in the timeline's sentences that are no terms (a government enacts, the country)."""


def test_a_corporate_timeline_has_none_of_the_classic_theme_words() -> None:
    for lang in ("en", "de"):
        classic = _words(" ".join(read_file(ROOT / "classic" / f"{lang}.toml").terms.values())) | CLASSIC_VERBS[lang]
        corporate = _words(" ".join(read_file(ROOT / "corporate" / f"{lang}.toml").terms.values()))
        for text in timelines("corporate", lang):
            assert not _words(text) & (classic - corporate), sorted(_words(text) & (classic - corporate))


def test_a_theme_and_a_language_are_each_their_own_timeline() -> None:
    first = RECORDS[0]
    told = {(theme, lang): records.timeline(records.replay(records.loads(first.read_bytes())),
                                            Catalog.load(theme, lang))
            for theme, lang in CATALOGS}
    assert len(set(told.values())) == len(CATALOGS)
    assert told["classic", "en"] == records.timeline(records.replay(records.loads(first.read_bytes())))


# --- end to end: a game played at the console, recorded, replayed ---------------------------------------


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A whole game of computer players at the console (they claim too), recorded as ``play --record`` does."""
    path = tmp_path_factory.mktemp("replay") / "game.json"
    assert main(["play", "--watch", "--players", "7", "--seed", "4", "--record", str(path)]) == 0
    return path


def _replay(capsys: pytest.CaptureFixture[str], path: Path, *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(["replay", str(path), *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_recorded_game_replays_in_german_with_no_english_left(
    recorded: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _replay(capsys, recorded, "--lang", "de")
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0] == "Eine Partie Secret Hitler mit 7 Spielern. Plätze und Rollen:"
    assert lines[-1].startswith("Spielende: Die ")
    assert any(" behauptet: \"" in line for line in lines)  # the computer players' claims, in German too
    assert not (_words(out) - NAMES) & english(), sorted((_words(out) - NAMES) & english())
    # Line for line the same story as in English.
    _, english_out, _ = _replay(capsys, recorded)
    assert [line == "" for line in english_out.splitlines()] == [line == "" for line in lines]


def test_a_recorded_game_replays_in_the_corporate_theme_in_either_language_any_case(
    recorded: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _replay(capsys, recorded, "--theme", "Corporate")
    assert (code, err) == (0, "")
    assert out.startswith("A game of Office Rat for 7 players. Seats and roles:\n")
    assert "Round 1: " in out and "CEO" in out and "Hitler" not in out and "President" not in out
    code, out, err = _replay(capsys, recorded, "--lang", "DE", "--theme", " CORPORATE ")
    assert (code, err) == (0, "")
    assert out.startswith("Eine Partie Büroratte mit 7 Spielern. Plätze und Rollen:\n")
    assert "Chefingenieur" in out and "Kanzler " not in out and "Gesetz" not in out


@pytest.mark.parametrize("lang", languages())
def test_a_recorded_game_replays_in_every_language(recorded: Path, capsys: pytest.CaptureFixture[str],
                                                    lang: str) -> None:
    catalog = Catalog.load("classic", lang)
    code, out, err = _replay(capsys, recorded, "--lang", lang.upper())
    assert (code, err) == (0, "")
    assert out.startswith(catalog.text("replay-game", players=7) + "\n")
    _, english, _ = _replay(capsys, recorded)
    assert len(out.splitlines()) == len(english.splitlines())  # every event told, one line each


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        (("--lang", "xx"), f"no language 'xx'; choose one of: {', '.join(languages())}"),
        (("--theme", "office"), "no theme 'office'; choose one of: classic, corporate"),
    ],
)
def test_a_wrong_language_or_theme_lists_the_choices(
    recorded: Path, capsys: pytest.CaptureFixture[str], args: tuple[str, ...], problem: str
) -> None:
    assert _replay(capsys, recorded, *args) == (2, "", f"moderator replay: {problem}\n")


def test_the_json_summary_is_the_same_in_every_language(capsys: pytest.CaptureFixture[str]) -> None:
    """``--json`` is data (docs/game-record.md): its error message stays the English sentence of the spec."""
    path = GOLDEN / "12-investigate-uniqueness.json"
    code, plain, _ = _replay(capsys, path, "--json")
    assert code == 1
    assert _replay(capsys, path, "--json", "--lang", "de", "--theme", "corporate")[1] == plain
    assert json.loads(plain)["error"]["message"] == (
        "Bob cannot investigate Dee: No player may be investigated twice in the same game."
    )


def test_standard_error_names_the_rejected_action_in_english_whatever_the_timeline_speaks(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = _replay(capsys, GOLDEN / "12-investigate-uniqueness.json", "--lang", "de")
    assert code == 1
    assert out.splitlines()[-1] == (
        "Aktion 25 zurückgewiesen: Bob kann Dee nicht überprüfen: "
        "Niemand darf in einer Partie zweimal überprüft werden."
    )
    assert err == ("moderator replay: action 25: Bob cannot investigate Dee: "
                   "No player may be investigated twice in the same game.\n")
