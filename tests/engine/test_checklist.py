"""The rule tests cover every item of the rules checklist, sections B1-B15."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re

import tests.engine as package

CHECKLIST_ITEMS = tuple(range(1, 108))
"""Items 1-107: sections B1 (players, roles, setup) to B15 (win conditions) of the rules checklist."""

_LEADING_ITEMS = re.compile(r"^Items? (\d+(?:, \d+)*)\b")


def _rule_tests():
    for info in pkgutil.iter_modules(package.__path__):
        if not info.name.startswith("test_"):
            continue
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        for name, function in inspect.getmembers(module, inspect.isfunction):
            if name.startswith("test_") and function.__module__ == module.__name__:
                yield f"{info.name}.{name}", function


def test_every_rule_test_docstring_starts_with_its_checklist_items():
    """Every rule test says which checklist item(s) it checks, first thing in its docstring."""
    missing = [
        name
        for name, function in _rule_tests()
        if name != "test_checklist.test_every_checklist_item_has_a_test"
        and name != "test_checklist.test_every_rule_test_docstring_starts_with_its_checklist_items"
        and not _LEADING_ITEMS.match(inspect.getdoc(function) or "")
    ]
    assert missing == []


def test_every_checklist_item_has_a_test():
    """Every checklist item 1-107 is named at the start of at least one rule test's docstring."""
    covered: set[int] = set()
    for _, function in _rule_tests():
        match = _LEADING_ITEMS.match(inspect.getdoc(function) or "")
        if match:
            covered.update(int(n) for n in match.group(1).split(", "))
    assert sorted(set(CHECKLIST_ITEMS) - covered) == []
    assert covered <= set(CHECKLIST_ITEMS) | {108, 109, 110, 111, 112, 113, 114, 115}
