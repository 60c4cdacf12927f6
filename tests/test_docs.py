"""The documents say what is true: every example record in them replays (and ``--json`` prints the summary they
show), every measured figure names the command that prints it, and the deployment guide tells a host what the
README does about a Telegram group."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from moderator import record as records
from moderator.cli import main

ROOT = Path(__file__).resolve().parent.parent
DOCS = sorted([*ROOT.glob("docs/*.md"), ROOT / "README.md", ROOT / "deploy" / "README.md"])
_JSON = re.compile(r"```json\n(.*?)```", re.S)


def examples() -> list[tuple[str, int, str]]:
    """(document, index, text) of every JSON example in the documents that is a whole game record."""
    found = []
    for path in DOCS:
        for index, block in enumerate(_JSON.findall(path.read_text(encoding="utf-8"))):
            try:
                data = json.loads(block)
            except json.JSONDecodeError:
                continue  # a fragment (a field of a record, shown alone)
            if isinstance(data, dict) and "actions" in data:
                found.append((path.relative_to(ROOT).as_posix(), index, block))
    return found


def test_the_documents_have_example_records() -> None:
    assert any(doc == "docs/game-record.md" for doc, _, _ in examples())


@pytest.mark.parametrize(("doc", "index", "block"), examples(), ids=lambda v: str(v)[:20])
def test_every_example_record_in_the_documents_replays(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], doc: str, index: int, block: str) -> None:
    path = tmp_path / "example.json"
    path.write_text(block, encoding="utf-8")
    status = main(["replay", str(path), "--json"])
    out, err = capsys.readouterr()
    assert status == 0 and err == "", f"{doc}, example {index + 1}: {err}"
    assert json.loads(out)["error"] is None


def test_the_summary_docs_show_for_their_example_is_what_replay_prints(capsys: pytest.CaptureFixture[str]) -> None:
    text = (ROOT / "docs" / "game-record.md").read_text(encoding="utf-8")
    blocks = [json.loads(b) for b in _JSON.findall(text) if b.lstrip().startswith("{")]
    record = next(b for b in blocks if "actions" in b)
    shown = next(b for b in blocks if "applied" in b)
    assert records.summary(records.replay(records.parse(record))) == shown


def test_every_measured_figure_names_the_command_that_prints_it() -> None:
    text = (ROOT / "docs" / "scaling.md").read_text(encoding="utf-8")
    table = text.split("## Measured", 1)[1].split("\n\n", 2)[1]
    rows = [line for line in table.splitlines() if line.startswith("| ") and not line.startswith("| what ")]
    assert rows
    for row in rows:
        cells = [cell.strip() for cell in row.strip().strip("|").split(" | ")]
        assert len(cells) == 3, row
        command = cells[2]
        assert command.startswith(("`python benchmarks/", "the same")), row


def test_the_deployment_guide_says_what_the_readme_says_of_privacy_mode() -> None:
    """The README: make the bot an admin of the group, or turn privacy mode off; the guide must not say to turn
    it on (the bot would never see a vote typed in the group, nor take it off everyone's screen)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    guide = (ROOT / "deploy" / "README.md").read_text(encoding="utf-8")
    assert "Make the bot an admin of the group" in readme and "turn privacy mode off" in readme
    botfather = guide.split("## 1. Create the Telegram bot", 1)[1].split("\n## ", 1)[0]
    assert "bot an admin" in botfather
    assert re.search(r"`/setprivacy` → your bot → \*\*Disable\*\*", botfather)
    assert not re.search(r"/setprivacy[^\n]*\*\*Enable\*\*", botfather)
