"""Accessibility checks for the browser tests: axe-core (pinned in the Makefile, installed by ``make test`` from
the npm registry into ``.axe/``, which git ignores) injected into the page under test, and Chromium's own
accessibility tree read through the DevTools protocol (``Accessibility.queryAXTree``), as a screen reader reads it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Final

AXE_VERSION: Final = "4.14.1"
AXE: Final = Path(__file__).resolve().parents[1] / ".axe" / "node_modules" / "axe-core" / "axe.min.js"
TAGS: Final = ("wcag2a", "wcag2aa", "wcag21aa", "wcag22aa", "best-practice")
"""The rules run: WCAG 2.0, 2.1 and 2.2 at levels A and AA, and axe's best practices."""


def axe_source() -> str | None:
    """axe-core's script, or None if ``make test`` has not installed it (on CI that is a failure)."""
    if AXE.is_file():
        return AXE.read_text(encoding="utf-8")
    if os.environ.get("CI"):
        raise RuntimeError(f"axe-core {AXE_VERSION} is not installed: `make test` installs it into .axe/")
    return None


_RUN = """
const done = arguments[arguments.length - 1];
axe.run(document, {runOnly: {type: 'tag', values: arguments[0]}, resultTypes: ['violations']})
  .then((r) => done({version: axe.version, violations: r.violations.map((v) => ({
      id: v.id, impact: v.impact, help: v.help,
      nodes: v.nodes.map((n) => n.target.join(' ') + ': ' + n.failureSummary.replace(/\\s+/g, ' '))}))}))
  .catch((e) => done({error: String(e)}));
"""


def violations(driver: Any, source: str) -> list[dict[str, Any]]:
    """Every axe-core violation of the page now open in ``driver``, of any impact ("incomplete" results, which
    need a person to judge, are not violations)."""
    if not driver.execute_script("return !!window.axe"):
        driver.execute_script(source)
    driver.set_script_timeout(60)
    result = driver.execute_async_script(_RUN, list(TAGS))
    assert "error" not in result, result
    assert result["version"] == AXE_VERSION
    return list(result["violations"])


def report(found: list[dict[str, Any]]) -> str:
    """Violations as lines a person reads: the rule, its impact, and where."""
    return "\n".join(f"{v['id']} ({v['impact']}): {v['help']}\n    " + "\n    ".join(v["nodes"][:4]) for v in found)
