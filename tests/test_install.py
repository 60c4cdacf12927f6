"""A normal install works away from the checkout: the wheel carries the catalogs and the fonts.

The wheel is built from a copy of the checkout and installed into a fresh virtual environment outside it. That
environment borrows the dependencies this one already has (a path file, not an install), so nothing is
downloaded; the project itself comes only from the wheel.
"""

from __future__ import annotations

import html
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import time
import zipfile
from pathlib import Path

import httpx
import pytest

from moderator.catalog import Catalog, languages, themes
from tests.serve_driver import free_port

ROOT = Path(__file__).resolve().parent.parent
LEFT_BEHIND = shutil.ignore_patterns(".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", ".*_cache",
                                     ".hypothesis", "*.db*")


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtual environment with moderator installed from a wheel built from this checkout."""
    base = tmp_path_factory.mktemp("install")
    source = base / "source"
    shutil.copytree(ROOT, source, ignore=LEFT_BEHIND)
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation", "--no-index",
         "--wheel-dir", str(base / "dist"), str(source)],
        check=True, capture_output=True,
    )
    (wheel,) = (base / "dist").glob("moderator-*.whl")
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", "--no-deps", "--no-index",
         str(wheel)],
        check=True, capture_output=True,
    )
    # The dependencies this environment has, without its editable moderator (a path file's own path files,
    # such as the editable finder's, are not read).
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()
    (Path(site) / "borrowed-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return venv


def away_from_the_checkout(cwd: Path) -> dict[str, str]:
    """This environment's variables without those that would lead the installed moderator back to the checkout."""
    env = {k: v for k, v in os.environ.items() if k not in ("MODERATOR_MESSAGES", "PYTHONPATH", "MODERATOR_DB")}
    env["HOME"] = str(cwd)  # the default database goes under ~/.local/share
    return env


def run_installed(venv: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(venv / "bin" / "moderator"), *args], cwd=cwd, env=away_from_the_checkout(cwd),
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("theme", themes())
@pytest.mark.parametrize("lang", languages())
def test_an_installed_wheel_plays_a_game_in_every_theme_and_language(
    installed: Path, tmp_path: Path, theme: str, lang: str
) -> None:
    where = run_installed(installed, "play", "--help", cwd=tmp_path)
    assert where.returncode == 0, where.stderr
    # Under the environment the game below runs in: a PYTHONPATH naming the checkout must not pass this check.
    located = subprocess.run([str(installed / "bin" / "python"), "-c", "import moderator; print(moderator.__file__)"],
                             cwd=tmp_path, env=away_from_the_checkout(tmp_path), capture_output=True, text=True,
                             check=True).stdout.strip()
    assert Path(located).is_relative_to(installed), "moderator must come from the wheel, not the checkout"
    done = run_installed(installed, "play", "--watch", "--players", "5", "--seed", "3", "--theme", theme,
                         "--lang", lang, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    words = Catalog.load(theme, lang)
    assert words.term("president") in done.stdout
    assert words.text("truth-title") in done.stdout


def test_the_wheel_carries_every_catalog_the_colours_the_fonts_the_pages_and_py_typed(installed: Path) -> None:
    (wheel,) = installed.parent.joinpath("dist").glob("moderator-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    messages = ROOT / "messages"
    for path in messages.rglob("*"):
        if path.is_file():
            assert f"moderator/messages/{path.relative_to(messages).as_posix()}" in names
    assert "moderator/py.typed" in names
    web = ROOT / "moderator" / "transports" / "web"
    for folder in ("templates", "assets"):  # every page's template, its style, scripts and card art
        for path in (web / folder).rglob("*"):
            if path.is_file() and "__pycache__" not in path.parts:
                assert f"moderator/transports/web/{path.relative_to(web).as_posix()}" in names


def test_an_installed_wheel_draws_its_board_with_its_own_fonts_and_health_finds_nothing_missing(
    installed: Path, tmp_path: Path
) -> None:
    """What ``/healthz`` checks, asked of the installed package on a machine with no fonts of its own (Pillow
    finds none of the same name), and a board with accented names drawn in every theme."""
    env = away_from_the_checkout(tmp_path)
    env["XDG_DATA_HOME"] = env["XDG_DATA_DIRS"] = str(tmp_path / "no-fonts")
    script = (
        "from moderator import board, board_view, catalog\n"
        "from moderator.engine import new_game, public_view\n"
        "from moderator.render import TableInfo\n"
        "print(catalog.problems() + board.font_problems())\n"
        "print(catalog.BUNDLED)\n"
        "names = ('Jörg', 'Zoë', 'Ça', 'Ødegård', 'Ünal')\n"
        "for theme in catalog.themes():\n"
        "    drawn = board_view.board_of(public_view(new_game(5, seed=1)), TableInfo(names, theme))\n"
        "    print(board.render_png(drawn, catalog.Catalog.load(theme, 'de'))[:8].hex())\n"
    )
    done = subprocess.run([str(installed / "bin" / "python"), "-c", script], cwd=tmp_path, env=env,
                          capture_output=True, text=True, check=True)
    problems, bundled, *pngs = done.stdout.splitlines()
    assert problems == "[]"
    assert Path(bundled).is_relative_to(installed), "the catalogs and fonts must come from the wheel"
    assert pngs == [b"\x89PNG\r\n\x1a\n".hex()] * len(themes())


def test_an_installed_wheel_serves_every_page_of_a_table_played_in_browsers(installed: Path, tmp_path: Path) -> None:
    """``moderator play --web`` from the wheel alone: the pages' templates, style, scripts and card art are the
    installed package's (a page it could not render would be a 500, or words missing)."""
    script = "import moderator.transports.web as w; print(w.__file__)"
    where = subprocess.run([str(installed / "bin" / "python"), "-c", script],
                           cwd=tmp_path, env=away_from_the_checkout(tmp_path), capture_output=True, text=True,
                           check=True).stdout.strip()
    assert Path(where).is_relative_to(installed), "the browser channel must come from the wheel"
    port = free_port()
    server = subprocess.Popen([str(installed / "bin" / "moderator"), "play", "--web", "--host", "127.0.0.1", "--port",
                               str(port)], cwd=tmp_path, env=away_from_the_checkout(tmp_path), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    try:
        printed = ""
        while "Host, on this device only:" not in printed:
            line = server.stdout.readline() if server.stdout else ""
            assert line, f"moderator play --web stopped: {server.stderr.read() if server.stderr else ''}"
            printed += line
        host_url = re.search(r"Host, on this device only: (\S+)", printed)
        code = re.search(r"/join/(\w+)", printed)
        assert host_url is not None and code is not None
        base = f"http://127.0.0.1:{port}"
        en = Catalog.load("classic", "en")

        def device() -> httpx.Client:
            return httpx.Client(base_url=base, follow_redirects=True, timeout=10, headers={"Origin": base})

        def shows(client: httpx.Client, path: str, *words: str, status: int = 200) -> str:
            answer = client.get(path)
            assert answer.status_code == status, (path, answer.status_code)
            assert answer.headers["content-type"].startswith("text/html"), path
            text = html.unescape(answer.text)
            for word in words:
                assert word in text, (path, word)
            return text

        host, phone, stranger = device(), device(), device()
        for _ in range(100):  # until it listens
            try:
                host.get("/healthz")
                break
            except httpx.TransportError:
                time.sleep(0.1)
        shows(stranger, "/", en.text("web-open-title"), "<style>")
        table_id = host.get(host_url.group(1)).url.path.rsplit("/", 1)[1]  # the key sets the host's cookie
        shows(host, f"/host/{table_id}", en.text("web-host-page"), en.text("web-scan-to-join"), "<svg")
        shows(phone, f"/join/{code.group(1)}", en.text("web-play-here"))
        assert phone.post(f"/join/{code.group(1)}", data={"name": "Ann"}).url.path == f"/play/{table_id}"
        shows(phone, f"/play/{table_id}", "Ann", en.text("web-seats"))
        shows(stranger, f"/table/{table_id}", en.text("web-table-screen"), en.text("web-this-screen"))
        assert stranger.get(f"/tv/{code.group(1)}").url.path == f"/table/{table_id}"
        for do, fields in (("add", {"name": "Bob"}), ("computers-n", {"count": "3"}), ("start", {})):
            host.post(f"/host/{table_id}", data={"do": do, "nonce": do, **fields})
        shows(phone, f"/play/{table_id}", en.text("knowledge-title"), "/static/art/classic/role-")
        shows(stranger, f"/table/{table_id}/live", f"/table/{table_id}/board.png")
        assert stranger.get(f"/table/{table_id}/board.png").headers["content-type"] == "image/png"
        page = shows(host, f"/host/{table_id}", en.text("web-pass-title"), en.text("web-pause"))
        bob = re.search(rf'/host/{table_id}/seat/(\d+)"', page)
        assert bob is not None
        shows(host, f"/host/{table_id}/seat/{bob.group(1)}", en.text("web-only-you", name="Bob"),
              en.text("web-pin-offer"))
        host.post(f"/host/{table_id}/seat/{bob.group(1)}/pin", data={"pin": "1234"})
        host.get(f"/host/{table_id}/pass/{bob.group(1)}")  # passed on: the seat is locked again
        shows(host, f"/host/{table_id}/seat/{bob.group(1)}", en.text("web-pin-ask", name="Bob"))
        host.post(f"/host/{table_id}", data={"do": "newdevice", "name": "Ann", "nonce": "new"})
        move = re.search(r"/move/(\w+)", host.get(f"/host/{table_id}/live").text)
        assert move is not None
        shows(stranger, f"/move/{move.group(1)}", en.text("web-move-take"))
        shows(stranger, f"/play/{table_id}", en.text("web-not-your-seat"), status=403)
        assert stranger.get("/static/art/favicon.svg").headers["content-type"].startswith("image/svg+xml")
    finally:
        server.terminate()
        server.wait(30)
