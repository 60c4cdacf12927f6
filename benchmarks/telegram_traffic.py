"""Bot API calls per 7-player game through the Telegram channel, with a group, by kind.

Usage: python benchmarks/telegram_traffic.py [--games N]

Two tables, each played to the end against the in-process fake Bot API (tests/fake_telegram.py) on a fake clock,
with a few seconds between presses:

* computer players: the host opens the table in a group with /newgame, adds six computer players with the
  lobby's button and plays the seventh seat by pressing buttons (the issue's benchmark);
* seven people: seven Telegram users join by the QR code's deep link and play every seat by pressing buttons.

Targets (issue 4): at most 150 sends (sendMessage, sendPhoto, editMessageText, and editMessageMedia for the board
image; callback answers not counted) per game on average, and never more than 20 sends or edits a minute into the
group.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.fake_telegram import buttons, group_chat
from tests.telegram_table import TelegramTable

GROUP = group_chat(-100777)
NAMES = ["Ann", "Bob", "Cy", "Dee", "Eve", "Fay", "Gus"]
TARGET_SENDS = 150
TARGET_GROUP_PER_MINUTE = 20
KINDS = ("group messages", "group edits", "group board edits", "private messages", "private edits",
         "callback answers")


async def one_game(folder: Path, seed: int, *, computers: bool) -> tuple[Counter[str], int, int]:
    """Play one game; returns calls by kind, the group's busiest minute, and the number of presses."""
    t = TelegramTable(folder / f"game-{seed}-{computers}.db", seed=seed)
    await t.boot()
    before = len(t.api.calls)
    if computers:
        names = NAMES[:1]
        await t.say(names[0], "/newgame", chat=GROUP)
        for _ in range(6):
            lobby = next(m for m in reversed(t.api.messages(GROUP["id"])) if ":L:" in str(m.get("reply_markup")))
            add = next(b for b in buttons(lobby) if b.get("callback_data", "").endswith(":L:cpu"))
            t.clock.advance(4.0)
            await t.press(names[0], GROUP["id"], lobby["message_id"], add["callback_data"])
    else:
        names = NAMES
        await t.open_and_join(names, group=GROUP)
    t.clock.advance(4.0)
    await t.say(names[0], "/startgame", chat=GROUP)
    await t.play(names, random.Random(seed), think=8.0)
    await t.settle(600.0)
    kinds: Counter[str] = Counter()
    for call in t.api.calls[before:]:
        where = "group" if (call.chat_id or 0) < 0 else "private"
        if call.method in ("sendMessage", "sendPhoto"):
            kinds[f"{where} messages"] += 1
        elif call.method == "editMessageText":
            kinds[f"{where} edits"] += 1
        elif call.method == "editMessageMedia":
            kinds[f"{where} board edits"] += 1
        elif call.method == "answerCallbackQuery":
            kinds["callback answers"] += 1
    busiest = t.api.max_per_minute(GROUP["id"])
    await t.stop()
    return kinds, busiest, t.presses


async def scenario(games: int, *, computers: bool) -> tuple[dict[str, float], int]:
    totals: Counter[str] = Counter()
    busiest = 0
    with tempfile.TemporaryDirectory() as folder:
        for seed in range(games):
            kinds, minute, _ = await one_game(Path(folder), seed, computers=computers)
            totals.update(kinds)
            busiest = max(busiest, minute)
    return {k: totals[k] / games for k in KINDS}, busiest


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=10, help="games per table (default 10)")
    args = parser.parse_args(argv)
    status = 0
    for label, computers in (("host + 6 computer players", True), ("7 people", False)):
        average, busiest = asyncio.run(scenario(args.games, computers=computers))
        sends = sum(v for k, v in average.items() if k != "callback answers")
        print(f"7-player game with a group, {label}: average of {args.games} games")
        for kind in KINDS:
            print(f"  {kind:18} {average[kind]:7.1f}")
        print(f"  {'sends':18} {sends:7.1f}  (target <= {TARGET_SENDS}: {'ok' if sends <= TARGET_SENDS else 'over'})")
        ok = busiest <= TARGET_GROUP_PER_MINUTE
        print(f"  {'group, max/minute':18} {busiest:7d}  (limit {TARGET_GROUP_PER_MINUTE}: {'ok' if ok else 'OVER'})")
        if not ok or (computers and sends > TARGET_SENDS):
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
