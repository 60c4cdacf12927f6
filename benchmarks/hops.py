"""Hops of one button press through the Telegram channel: the functions of ours it passes, in and out.

Usage: python benchmarks/hops.py

A table of five on the in-process fake Bot API (tests/fake_telegram.py), the game started in a group; the
President presses the first name offered for Chancellor. Traced with ``sys.setprofile``:

* in: from the update reaching our code (a handler PTB calls; under ``moderator serve`` the webhook route comes
  first, one hop more) to the answer's row in the outbox. A hop is a function of ours that the press passes: the
  channel's own calls on the way to the port, then the call chain from the port to where the answer to the press
  (the ``ECHO``) is queued, then the write of the outbox rows (``Store.enqueue``).
* out: from the sender's round to the Bot API call that shows the choice on the pressed message: the call chain
  down to the channel's ``send_batch``, then every function of ours that ``send_batch`` enters until that call
  goes out (pacing, folding, error mapping, the edit).

It prints each path, one hop a line, and the counts (docs/architecture.md, "The Telegram channel").
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import threading
from pathlib import Path
from types import FrameType
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.fake_telegram import buttons
from tests.telegram_table import TelegramTable, group_chat

NAMES = ["Ann", "Bob", "Cy", "Dee", "Eve"]
GROUP = group_chat(-100777)


def _name(frame: FrameType) -> str | None:
    """``module.qualname`` of a frame of ours (the ``moderator`` package), else None."""
    module = str(frame.f_globals.get("__name__", ""))
    if not module.startswith("moderator"):
        return None
    return f"{module.removeprefix('moderator.')}.{frame.f_code.co_qualname}"


def _chain(frame: FrameType | None) -> list[str]:
    """The functions of ours on the stack below ``frame`` (outermost first)."""
    out = []
    while frame is not None:
        name = _name(frame)
        if name is not None:
            out.append(name)
        frame = frame.f_back
    return list(reversed(out))


class Tracer:
    """Records, per thread, every call of a function of ours and the stack at the points that matter."""

    def __init__(self) -> None:
        self.calls: dict[int, list[tuple[str, list[str]]]] = {}
        self.marks: list[tuple[str, int, list[str], int]] = []
        """(what, thread, chain, index into that thread's calls) at the echo's queueing, the outbox write and
        the Bot API call."""

    def __call__(self, frame: FrameType, event: str, arg: Any) -> None:
        if event != "call":
            return
        name = _name(frame)
        if name is None:
            if frame.f_code.co_name == "run_coroutine_threadsafe":  # a Bot API call handed to the loop
                coroutine = frame.f_locals.get("coro")
                what = getattr(coroutine, "__qualname__", "")
                self._mark(f"api:{what}", frame.f_back)
            return
        thread = threading.get_ident()
        self.calls.setdefault(thread, []).append((name, _chain(frame)))
        if name.endswith("Outgoing.put"):
            message = frame.f_locals.get("message")
            if getattr(getattr(message, "kind", None), "value", "") == "echo":
                self._mark("echo", frame, include=True)
        elif name.endswith("Store.enqueue"):
            self._mark("enqueue", frame, include=True)

    def _mark(self, what: str, frame: FrameType | None, include: bool = False) -> None:
        thread = threading.get_ident()
        chain = _chain(frame)
        self.marks.append((what, thread, chain, len(self.calls.get(thread, ()))))

    def start(self) -> None:
        threading.setprofile(self)
        sys.setprofile(self)

    def stop(self) -> None:
        sys.setprofile(None)
        threading.setprofile(None)


def _ours(name: str) -> bool:
    """A function written in our code: not a comprehension, a lambda or a dataclass's generated method."""
    return not any(part in name for part in ("<listcomp>", "<genexpr>", "<dictcomp>", "<setcomp>", "<lambda>",
                                             "__create_fn__"))


def _in_path(tracer: Tracer) -> list[str]:
    """The channel's calls up to the port, the chain from the port to the echo, and the outbox write."""
    echo = next(m for m in tracer.marks if m[0] == "echo")
    enqueue = next(m for m in tracer.marks if m[0] == "enqueue" and m[1] == echo[1])
    calls = tracer.calls[echo[1]][: echo[3]]
    root = echo[2][0]
    first = max(i for i, (name, chain) in enumerate(calls) if chain == [root])
    port = next(i for i in range(first, len(calls)) if calls[i][0].startswith("service."))
    channel = [name for name, chain in calls[first:port] if all(c.startswith("transports.") for c in chain[:-1])]
    return [n for n in dict.fromkeys([*channel, *echo[2], enqueue[2][-1]]) if _ours(n)]


def _out_path(tracer: Tracer) -> tuple[list[str], list[str]]:
    """The chain from the sender's round to the edit of the pressed message; and every function of ours that
    ``send_batch`` enters on the way to it."""
    edit = next(m for m in tracer.marks if m[0].startswith("api:") and "edit_message_text" in m[0])
    calls = tracer.calls[edit[1]][: edit[3]]
    start = max(i for i, (name, _) in enumerate(calls) if name.endswith(".send_batch"))
    chain = [n for n in edit[2] if _ours(n)]
    entered = [n for n in dict.fromkeys(name for name, _ in calls[start:]) if _ours(n)]
    return chain, entered


async def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        t = TelegramTable(Path(folder) / "m.db", seed=3)
        await t.boot()
        await t.open_and_start(NAMES, group=GROUP)
        await t.settle()
        president = next(n for n in NAMES if t.prompt(n) is not None)
        prompt = t.prompt(president)
        assert prompt is not None
        chat = t.chat_of(president)
        t.pressed.add((chat, prompt["message_id"]))
        await t.stop()
        tracer = Tracer()
        tracer.start()  # before the sender's thread starts: a profile reaches only threads started after it
        try:
            await t.boot()
            await t.press(president, chat, prompt["message_id"], buttons(prompt)[0]["callback_data"])
        finally:
            tracer.stop()
            await t.stop()
    into, (chain, entered) = _in_path(tracer), _out_path(tracer)
    batch = chain.index(next(n for n in chain if n.endswith(".send_batch")))
    print(f"in: {len(into)} hops, from the update to the outbox")
    for i, name in enumerate(into, 1):
        print(f"  {i:2}  {name}")
    print(f"out: {len(chain)} hops from the sender's round to the Bot API call that shows the choice, "
          f"{len(chain) - batch} of them from send_batch")
    for i, name in enumerate(chain, 1):
        print(f"  {i:2}  {name}")
    print(f"out, every function of ours send_batch enters on the way: {len(entered)}")
    for i, name in enumerate(entered, 1):
        print(f"  {i:2}  {name}")


if __name__ == "__main__":
    asyncio.run(main())
