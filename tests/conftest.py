"""Fixtures every test module may ask for by name: a Telegram bot, ``serve``'s app, a browser table, Chromium,
catalogs read from a folder of the test's own.

Async tests are ``async def test_...`` in a module marked ``pytestmark = pytest.mark.anyio`` (AnyIO's pytest
plugin, which Starlette's AnyIO brings): each runs on a fresh asyncio loop, with its async fixtures on the same
loop. Helpers that are not fixtures live in the modules beside this one (``fakes``, ``telegram_table``,
``serve_app``, ``web_table``, ``serve_driver``), where tests import them.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

import pytest

from moderator.app import create_app
from moderator.catalog import ENV_VAR, clear_cache
from moderator.settings import Settings
from tests.fake_twilio import FakeTwilio
from tests.serve_app import LOCAL, Server, TestClient, WebhookBotAPI, env
from tests.telegram_table import TelegramTable
from tests.web_table import WebTable

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--long", action="store_true", help="run the long runs too (the tests marked long)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Without ``--long``, a test marked ``long`` is skipped (and counted as skipped): the budget of ``make test``
    (README, "Tests") has no room for minutes of kills or hundreds of tables."""
    if config.getoption("--long"):
        return
    skip = pytest.mark.skip(reason="a long run: pytest --long runs it")
    for item in items:
        if item.get_closest_marker("long") is not None:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    """Async tests run on asyncio, as the moderator does (AnyIO would also offer trio, which Selenium installs)."""
    return "asyncio"


@pytest.fixture
async def telegram(tmp_path: Path) -> AsyncIterator[TelegramTable]:
    """People on Telegram and a bot on a fresh database (dealt with seed 5; set ``.seed`` before ``boot`` for
    another), not booted yet; its bot is stopped after the test, whatever happened."""
    table = TelegramTable(tmp_path / "m.db", seed=5)
    yield table
    await table.stop()


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    """``serve``'s app on a fresh database, Telegram and SMS on with the fakes at the network edge, running under
    a TestClient that connects from this machine."""
    db = tmp_path / "m.db"
    api = WebhookBotAPI(clock=lambda: 1_800_000_000.0)
    twilio = FakeTwilio()
    app = create_app(Settings.load(env(db), cwd=tmp_path), network={"telegram": api, "sms": twilio},
                     deliver=False)
    with TestClient(app, raise_server_exceptions=False, client=LOCAL) as client:
        yield Server(client, api, twilio, db)


@pytest.fixture
def table(tmp_path: Path) -> Iterator[WebTable]:
    """``serve``'s app with the browser channel on, on a fresh database; its host's browser is ``.host``."""
    with WebTable(tmp_path / "web.db") as wt:
        yield wt


@pytest.fixture
def catalogs_in() -> Callable[[Path], AbstractContextManager[None]]:
    """``with catalogs_in(folder):`` reads every catalog from ``folder`` (``MODERATOR_MESSAGES``, the cache cleared
    on the way in and out); after the block, failed or not, the bundled catalogs again."""

    @contextmanager
    def reading(folder: Path) -> Iterator[None]:
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv(ENV_VAR, str(folder))
            clear_cache()
            try:
                yield
            finally:
                clear_cache()

    return reading


@pytest.fixture(scope="session")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """Debian's Chromium, headless, driven through Debian's chromedriver: one for the whole run (each test that
    uses it clears its cookies and size first). Skipped without them, except on CI, where that is a failure."""
    if not (shutil.which(CHROMIUM) and shutil.which(CHROMEDRIVER)):
        if os.environ.get("CI"):
            raise RuntimeError("CI needs Debian's chromium and chromium-driver (make test installs them)")
        pytest.skip("Debian's chromium and chromium-driver are not installed")
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service as DriverService

    options = Options()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-quic", f"--user-data-dir={tmp_path_factory.mktemp('chromium')}"):
        options.add_argument(flag)
    os.environ.setdefault("SE_OFFLINE", "true")  # Selenium Manager must not look for a browser of its own
    driver = webdriver.Chrome(service=DriverService(executable_path=CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(20)
    try:
        yield driver
    finally:
        driver.quit()
