"""``moderator catalog check PATH``: a translator's new or changed file, checked by file and line; and every shipped
catalog passes it. Adding a language is one file: no code names a language."""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path

import pytest

import moderator
from moderator.catalog import DEFAULT_LANGUAGE, messages_dir
from moderator.catalog_check import check, key_lines
from moderator.cli import main

ROOT = messages_dir()
FILES = sorted(ROOT.glob("*/*.toml"))


def _label(path: Path) -> str:
    return f"{path.parent.name}/{path.name}"


@pytest.mark.parametrize("path", FILES, ids=_label)
def test_every_shipped_catalog_passes_the_check(path: Path) -> None:
    report = check(path)
    assert not report.problems, "\n".join(map(str, report.problems))
    assert report.notes  # what its language needs is said all the same


def _draft(tmp_path: Path, name: str, text: str) -> Path:
    """A messages folder with the shipped catalogs and one more file (``classic/ru.toml``, say)."""
    root = tmp_path / "messages"
    shutil.copytree(ROOT, root)
    path = root / name
    path.write_text(text, encoding="utf-8")
    return path


def _russian(tmp_path: Path, change: dict[str, str]) -> Path:
    """A Russian draft: the English catalog with some lines replaced (``key`` -> its new line, "" to drop it)."""
    lines = []
    for line in (ROOT / "classic" / "en.toml").read_text(encoding="utf-8").splitlines():
        key = line.split(" = ", 1)[0]
        if " = " in line and key in change:
            if change[key]:
                lines.append(change[key])
            continue
        lines.append(line)
    return _draft(tmp_path, "classic/ru.toml", "\n".join(lines) + "\n")


def _found(path: Path) -> list[str]:
    return [str(p) for p in check(path).problems]


def test_a_draft_hears_of_missing_and_extra_keys_and_placeholders_with_file_and_line(tmp_path: Path) -> None:
    path = _russian(tmp_path, {
        "list-nobody": "",  # missing
        "nothing-changed": 'nothing-chanegd = "Ничего не изменилось."',  # a typo: extra, and the right one missing
        "deal-role": 'deal-role = "Ваша роль: {rol}. {term.party_membership}: {party}."',
    })
    lines = path.read_text(encoding="utf-8").splitlines()
    found = _found(path)
    header = lines.index("[messages]") + 1
    assert f"{path}:{header}: [messages] missing 2: list-nobody, nothing-changed" in found
    typo = next(n for n, line in enumerate(lines, 1) if line.startswith("nothing-chanegd"))
    assert any(f.startswith(f"{path}:{typo}: [messages] nothing-chanegd: no such key") for f in found)
    role = next(n for n, line in enumerate(lines, 1) if line.startswith("deal-role"))
    assert f"{path}:{role}: [messages] deal-role: placeholders differ from the reference: has {{rol}}; lacks {{role}}" \
        in found


def test_a_draft_hears_which_plural_forms_its_language_needs(tmp_path: Path) -> None:
    path = _russian(tmp_path, {
        "vote-progress": 'vote-progress = "{cast} из {voters} {cast:plural:one=проголосовал|other=проголосовали}."',
        "reminders-set": 'reminders-set = "Через {minutes:plural:one=# минуту|few=# минуты|many=# минут|other=# минуты'
                         '|two=# минуты}."',
    })
    found = _found(path)
    assert any(re.fullmatch(rf"{re.escape(str(path))}:\d+: \[messages\] vote-progress: plural forms lack few, many "
                            r"\(Russian \(русский\) needs one, few, many, other\)", f) for f in found), found
    assert any("reminders-set: plural forms two are no category of Russian" in f for f in found), found
    notes = check(path).notes
    assert any("every count needs the plural forms one, few, many, other" in n for n in notes)
    assert any("SMS in UCS-2, at most two segments (134 characters)" in n for n in notes)


def test_a_typed_word_may_mean_one_thing_only(tmp_path: Path) -> None:
    path = _russian(tmp_path, {
        "board": 'board = "доска, status, b"',  # "status" is board in English too: the same meaning is fine
        "rules": 'rules = "правила, help"',  # "help" is English help: two meanings
        "ja": 'ja = "да, no"',  # "no" is Nein in English and Spanish
    })
    found = _found(path)
    clash = r"\[words\] rules: 'help' also means (classic/en\.toml )?\[words\] help: a typed word may mean one thing"
    assert any(re.search(clash, f) for f in found), found
    assert any("[words] ja: 'no' also means" in f and "nein" in f for f in found), found
    assert not [f for f in found if ": [words] board:" in f]
    assert main(["catalog", "check", str(path)]) == 1


def test_a_latin_language_hears_of_a_character_an_sms_would_drop(tmp_path: Path) -> None:
    text = (ROOT / "classic" / "es.toml").read_text(encoding="utf-8")
    path = _draft(tmp_path, "classic/es.toml", text.replace('list-nobody = "nadie"', 'list-nobody = "nadie ☺"'))
    found = _found(path)
    assert any("[messages] list-nobody: an SMS in GSM-7 cannot carry ☺" in f for f in found), found


def test_a_file_that_is_no_toml_says_where(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _draft(tmp_path, "classic/pt.toml", '[terms]\ngame = "Secret Hitler"\npresident = "Presidente\n')
    assert main(["catalog", "check", str(path)]) == 1
    out = capsys.readouterr().out
    assert out.startswith(f"{path}:3: is no TOML file")


def test_a_finished_file_passes_and_says_what_its_language_needs(capsys: pytest.CaptureFixture[str]) -> None:
    path = ROOT / "classic" / "fa.toml"
    assert main(["catalog", "check", str(path)]) == 0
    out = capsys.readouterr().out
    assert out == (f"{path}: Persian (فارسی), theme classic: written right to left; every count needs the plural forms "
                   "one, other (CLDR); SMS in UCS-2, at most two segments (134 characters)\n")


def test_a_new_language_is_one_file_and_no_code(
    tmp_path: Path, catalogs_in: Callable[[Path], AbstractContextManager[None]]
) -> None:
    """A copy of a catalog under a new language's code is a language everywhere: the play and replay choices,
    LANGUAGE, the SMS alphabet. And no module of the code names a language other than the default."""
    root = tmp_path / "messages"
    shutil.copytree(ROOT, root)
    shutil.copy(root / "classic" / "es.toml", root / "classic" / "it.toml")
    from moderator.catalog import gsm7_language, languages

    with catalogs_in(root):
        assert "it" in languages() and gsm7_language("it")
        assert main(["catalog", "check", str(root / "classic" / "it.toml")]) == 0
    code = Path(moderator.__file__).resolve().parent
    named = re.compile(r"""["'](de|es|fa|fr|it|pt|pl|ru)["']""")
    offenders = [f"{p.relative_to(code)}:{n}: {line.strip()}" for p in sorted(code.rglob("*.py"))
                 for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if named.search(line)]
    assert not offenders, offenders
    assert DEFAULT_LANGUAGE == "en"


def test_key_lines_finds_each_key_and_table() -> None:
    text = '[terms]\na = "x"\n\n[messages]\n# c\nb = """one\nc = two"""\nd = "y"\n'
    assert key_lines(text) == {("", "terms"): 1, ("terms", "a"): 2, ("", "messages"): 4, ("messages", "b"): 6,
                               ("messages", "d"): 8}
