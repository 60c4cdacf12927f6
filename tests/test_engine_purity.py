"""The engine is pure: standard library only, no I/O, no clock, no global randomness; apply changes nothing given."""

from __future__ import annotations

import ast
import random
import sys
from dataclasses import fields
from pathlib import Path

import pytest

from moderator.engine import (
    CastVote,
    GameState,
    NominateChancellor,
    Phase,
    RuleViolation,
    apply,
    awaiting,
    legal_actions,
    new_game,
)

ENGINE = Path(__file__).resolve().parents[1] / "moderator" / "engine"
ALLOWED_MODULES = {"__future__", "collections", "dataclasses", "enum", "functools", "hashlib", "secrets",
                   "struct", "typing"}
"""Standard-library modules the engine may use (hashlib/struct: shuffles from the seed; secrets: new seeds)."""
FORBIDDEN_CALLS = {"open", "print", "input", "time", "sleep", "now", "random", "shuffle", "choice", "randint"}


def _imports(tree: ast.AST) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found


def test_engine_imports_only_the_standard_library() -> None:
    """Every engine module imports only allowed standard-library modules or the engine itself."""
    for path in sorted(ENGINE.glob("*.py")):
        imported = _imports(ast.parse(path.read_text(encoding="utf-8")))
        assert imported <= ALLOWED_MODULES, (path.name, imported - ALLOWED_MODULES)
        assert all(name in sys.stdlib_module_names or name == "__future__" for name in imported)


def test_engine_does_no_io_and_reads_no_clock_or_global_random() -> None:
    """No call in the engine prints, reads, opens files, sleeps, reads the clock or uses the global RNG."""
    for path in sorted(ENGINE.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                func = node.func
                name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                assert name not in FORBIDDEN_CALLS, (path.name, node.lineno, name)


def test_the_same_seed_gives_the_same_game_whatever_the_global_random_state() -> None:
    """Games depend on their seed only: reseeding the global random module changes nothing."""
    def play(seed: int) -> list[object]:
        state = new_game(7, seed=seed)
        pick = random.Random(seed)
        trace: list[object] = [state.roles, state.draw_pile]
        while state.winner is None:
            seat = awaiting(state)[0]
            action = pick.choice(legal_actions(state, seat))
            state, events = apply(state, action)
            trace.extend(events)
        return trace

    random.seed(1)
    first = play(42)
    random.seed(2)
    assert play(42) == first


def _slots(state: GameState) -> dict[str, object]:
    # The state's own fields and every field of its core (which a vote shares with the next state).
    return {f.name: getattr(state, f.name) for f in fields(state)} | {
        f"core.{f.name}": getattr(state.core, f.name) for f in fields(state.core)
    }


def test_apply_never_changes_the_state_it_is_given() -> None:
    """Every field of the input state and of its core is the same object before and after apply, for every
    action of a game, and a rejected action changes nothing either."""
    state = new_game(8, seed=5)
    pick = random.Random(5)
    while state.winner is None:
        before = _slots(state)
        seat = awaiting(state)[0]
        illegal = CastVote(seat, True) if state.phase is Phase.NOMINATION else NominateChancellor(seat, seat)
        with pytest.raises(RuleViolation):
            apply(state, illegal)
        assert _slots(state) == before and all(_slots(state)[name] is value for name, value in before.items())
        action = pick.choice(legal_actions(state, seat))
        after, _ = apply(state, action)
        assert all(_slots(state)[name] is value for name, value in before.items())
        assert after is not state
        assert after.core is not state.core or isinstance(action, CastVote)  # only a vote shares the core
        state = after
