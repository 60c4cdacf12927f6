"""The table screen through whole 10-player games: how many public results it showed and read aloud out of how many
there were, and the smallest text on a 1920x1080 TV, the board image's included.

Usage: python benchmarks/screen.py [--games 2] [--seed 1]

Ten phones (devices without a browser, names of 20 characters: the longest a name may be) play each game; the
screen is Debian's headless Chromium at 1920x1080 with read-aloud on and ``speechSynthesis.speak`` recorded (as
tests/test_screen.py does). After each tap the screen is given time to catch up (its list of told results is the
service's) before the next, as people at a table take a moment between decisions. A result counts as shown if
its id was on the screen after any refresh, as spoken if its words were spoken once (anything spoken more, or
that is no result, is counted apart), and the order spoken is compared with the order told. The
smallest text is the smallest font size of any visible text on the screen after any refresh, and the board's
own: the smallest size it is drawn at times the scale the screen shows it at.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from moderator.board import Board, words_drawn
from moderator.catalog import Catalog
from tests.conftest import chromium
from tests.test_browser import Server
from tests.test_screen import EN, SPEECH_STUB, TEN, Table, look, open_screen

SMALLEST_TEXT = """
let least = Infinity, what = '';
for (const el of document.querySelectorAll('main *')) {
  const r = el.getBoundingClientRect();
  if (r.width <= 1 || r.height <= 1 || getComputedStyle(el).visibility === 'hidden') continue;
  if (![...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim())) continue;
  const size = parseFloat(getComputedStyle(el).fontSize);
  if (size < least) { least = size; what = el.tagName + '.' + el.className + ': ' + el.textContent.slice(0, 40); }
}
const board = document.querySelector('.board img');
return {least, what, board: board && board.naturalWidth ? board.getBoundingClientRect().width / board.naturalWidth
                                                      : null};
"""


def play(driver: Any, seed: int) -> dict[str, Any]:
    """One 10-player game watched by the screen; its figures."""
    with Server(Path(tempfile.mkdtemp()) / "screen.db") as server:
        table = Table(server, names=TEN)
        service = server.app.state.service
        table.start()
        open_screen(driver, table)
        look(driver, 1920, 1080)
        if not driver.find_element("id", "narrate").is_selected():  # (this screen remembers it from the last game)
            driver.find_element("id", "narrate").click()
        shown: set[str] = set()
        least: dict[str, Any] = {"page": (float("inf"), ""), "board": float("inf")}

        def told() -> list[Any]:
            return list(service.pages.screen_view(table.id, "en").results)

        def catch_up() -> None:
            ids = [r.id for r in told()]
            deadline = time.monotonic() + 10
            script = ("const t = document.getElementById('told');"
                      "return t ? JSON.parse(t.textContent).map((r) => r.id) : []")
            while driver.execute_script(script) != ids and time.monotonic() < deadline:
                time.sleep(0.05)
            shown.update(driver.execute_script("return [...window.shown]"))
            sizes = driver.execute_script(SMALLEST_TEXT)
            if sizes["least"] < least["page"][0]:
                least["page"] = (sizes["least"], sizes["what"])
            board: Board | None = service.pages.board(table.id)
            if sizes["board"] and board is not None:
                drawn = min(size for _, size in words_drawn(board, Catalog.load("classic", "en")))
                least["board"] = min(least["board"], drawn * sizes["board"])

        rng = random.Random(seed)
        ja, nein = EN.term("ja"), EN.term("nein")
        for _ in range(600):
            if server.status(table.id) == "over":
                break
            catch_up()
            name = rng.choice(table.owing())
            table.press(name, lambda labels: (labels.index(ja) if rng.random() < 0.7 else labels.index(nein))
                        if ja in labels else rng.randrange(len(labels)))
        catch_up()
        results = told()
        spoken = [s["text"] for s in driver.execute_script("return window.spoken")]
        # Each result's words spoken once: as many times as there are results with those words (a tracker that
        # moves to 1 twice is two results, said twice), no more.
        told_words, said = Counter(r.text for r in results), Counter(spoken)
        once = sum(min(count, said[text]) for text, count in told_words.items())
        return {"results": len(results), "shown": len({r.id for r in results} & shown), "spoken": once,
                "extra": len(spoken) - once, "in order": spoken == [r.text for r in results], "page": least["page"],
                "board": least["board"]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    driver = chromium(Path(tempfile.mkdtemp()))
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": SPEECH_STUB})
    try:
        totals = {"results": 0, "shown": 0, "spoken": 0}
        page, board = float("inf"), float("inf")
        for game in range(args.games):
            seed = args.seed + game
            figures = play(driver, seed)
            for key in totals:
                totals[key] += figures[key]
            page, board = min(page, figures["page"][0]), min(board, figures["board"])
            order = "in order" if figures["in order"] else "NOT in order"
            print(f"game {game + 1} (seed {seed}): {figures['results']} public results, shown {figures['shown']}, "
                  f"spoken once {figures['spoken']} ({order}, {figures['extra']} more); smallest text at 1920x1080 "
                  f"{figures['page'][0]:.1f} px ({figures['page'][1]}), the board's {figures['board']:.1f} px")
        print(f"all {args.games} games: shown {totals['shown']} of {totals['results']}, spoken {totals['spoken']} of "
              f"{totals['results']}; smallest text at 1080p: page {page:.1f} px, board image {board:.1f} px")
    finally:
        driver.quit()
    return 0


if __name__ == "__main__":
    sys.exit(main())
