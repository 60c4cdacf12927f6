"""Each channel's life under the wiring (``app.running``): started, started again while its provider cannot be
reached, its foreground run, stopped alone when its provider refuses its credentials, and its state (up, retrying,
refused) kept for ``/healthz``, each change said in one log line and never once per try.

A channel says what it finds through the port (``channels.Unreachable``, ``channels.Refused``, raised while it
starts or runs its foreground, answered for a message, or reported with ``Runtime.report``); nothing here knows a
provider. A new channel that translates its provider's errors into those two gets all of it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from dataclasses import dataclass
from typing import Any, Final, Protocol

from .channels import (
    RETRY_FIRST,
    RETRY_MOST,
    ChannelSpec,
    ChannelState,
    Problem,
    Refused,
    Running,
    Runtime,
    Unreachable,
)
from .delivery import Worker
from .settings import Settings


class Wired(Runtime, Protocol):
    """What the supervisor needs of the wiring (``app.Wiring``): the runtime it hands each channel, the settings, the
    channels running now (their routes find them there) and the deliveries the channels asked for."""

    settings: Settings
    running: dict[str, Running]
    workers: list[Worker]


REFUSED_STATUS: Final = 2
"""A command for some channels only (``moderator telegram``, ``moderator sms``) exits with this once every one of
them was refused: a setting is wrong, and starting again changes nothing (as a database it cannot write)."""


@dataclass
class _Run:
    """One channel the settings turn on, as it goes."""

    spec: ChannelSpec
    state: ChannelState | None = None
    problem: Problem | None = None
    since: float = 0.0
    """When its provider stopped answering (``time.monotonic``)."""
    running: Running | None = None
    stack: contextlib.AsyncExitStack | None = None
    main: asyncio.Task[object] | None = None
    retry: asyncio.Task[None] | None = None
    wait: float = RETRY_FIRST
    stopping: asyncio.Task[None] | None = None


class Supervisor:
    """Starts and keeps the channels of one ``running``: ``start`` each, ``begin`` their foregrounds once the
    tables are resumed, ``report`` what they find, ``stop`` them all at the end."""

    def __init__(self, wiring: Wired, log: logging.Logger, *, needed: bool = False) -> None:
        self.wiring = wiring
        self.log = log
        self.needed = needed
        """The command is for these channels only: once every one of them is refused, it is over (exit 2)."""
        self.runs: dict[str, _Run] = {}
        self.over = asyncio.Event()
        """Set when the command should end by itself: a foreground ended, or (``needed``) every channel refused."""
        self.status = 0
        self.failure: BaseException | None = None
        """What a foreground raised (other than ``Refused``): the command fails with it."""
        self._begun = False
        self._changed = asyncio.Event()

    # --- what the wiring asks ------------------------------------------------------------------------------------

    def states(self) -> dict[str, ChannelState]:
        """Each channel the settings turn on, with its state (a channel whose first start is under way: none)."""
        return {name: run.state for name, run in self.runs.items() if run.state is not None}

    async def start(self, spec: ChannelSpec) -> None:
        """Start one channel now; if its provider cannot be reached, again later in the background. A channel that
        asks its provider (``Running.check``) is up meanwhile, and asked in the background."""
        run = self.runs[spec.name] = _Run(spec)
        if await self._start(run):
            if run.running is not None and run.running.check is not None:
                self._note(run, None)  # its inputs come in already; whether its provider takes it is asked aside
                self._tries(run, wait=0.0)
            else:
                self._note(run, None)
        elif run.state is ChannelState.RETRYING:
            self._tries(run)

    def begin(self) -> None:
        """(Once the tables are resumed.) Every started channel's foreground, and from now on each late one's."""
        self._begun = True
        for run in self.runs.values():
            self._foreground(run)
        self._check_over()

    def report(self, name: str, problem: Problem | None) -> None:
        """(On the loop.) What a channel finds of its provider now (``Runtime.report``)."""
        run = self.runs.get(name)
        if run is not None and run.running is not None:
            self._note(run, problem)

    async def wait(self) -> int:
        """(A command without a web server.) Until the command is over: the first foreground that ends (its failure
        raised), every channel refused (``REFUSED_STATUS``), or nothing left that runs or may run a foreground
        (0)."""
        while True:
            if self.over.is_set():
                if self.failure is not None:
                    raise self.failure
                return self.status
            if not any(run.main is not None and not run.main.done() for run in self.runs.values()) and not any(
                    run.running is None and run.state is ChannelState.RETRYING for run in self.runs.values()):
                return 0
            self._changed.clear()
            await self._changed.wait()

    async def stop(self) -> None:
        """Stop everything: the tries to come, the foregrounds, then each channel in the reverse of its start."""
        for run in self.runs.values():
            if run.retry is not None:
                await _cancelled(run.retry)
            if run.stopping is not None:
                await asyncio.gather(run.stopping, return_exceptions=True)  # a refused channel, stopping already
        for run in self.runs.values():
            if run.main is not None:
                await _cancelled(run.main)
        for run in reversed(list(self.runs.values())):
            if run.stack is not None:
                stack, run.stack = run.stack, None
                await stack.aclose()

    # --- one channel ---------------------------------------------------------------------------------------------

    async def _start(self, run: _Run) -> bool:
        """Enter the channel's context; False (and its problem noted) if its provider refused it or is out of reach:
        then nothing of the try is left running."""
        name = run.spec.name
        stack = contextlib.AsyncExitStack()
        try:
            running = await stack.enter_async_context(run.spec.start(self.wiring.settings, self.wiring))
        except (Unreachable, Refused) as problem:
            await stack.aclose()
            await self._drop_workers(name)  # a start that failed leaves nothing delivering
            self._note(run, problem)
            return False
        run.running, run.stack = running, stack
        self.wiring.running[name] = running
        if self._begun:
            self._foreground(run)
        return True

    async def _ask(self, run: _Run) -> bool:
        """Ask the provider of a started channel whether it takes it (``Running.check``); True if it does."""
        assert run.running is not None and run.running.check is not None
        try:
            await run.running.check()
        except (Unreachable, Refused) as problem:
            self._note(run, problem)
            return False
        return True

    def _tries(self, run: _Run, wait: float | None = None) -> None:
        """In the background, until the channel is up (or refused): after ``wait`` seconds (else the channel's
        growing wait, or what its provider asked for) start it if it has not started, then ask its provider if it
        asks; waiting twice as long after each try that fails, up to ``RETRY_MOST``."""

        async def tries(wait: float | None) -> None:
            while run.state is not ChannelState.REFUSED:
                if wait is None:
                    retry_after = run.problem.retry_after if run.problem is not None else None
                    wait = retry_after if retry_after is not None else run.wait
                    run.wait = min(run.wait * 2, RETRY_MOST)
                await asyncio.sleep(wait)
                wait = None
                try:
                    up = await self._start(run) if run.running is None else True
                    if up and run.running is not None and run.running.check is not None:
                        up = await self._ask(run)
                except Exception:  # not its provider: a bug, said once with where it is; no more tries
                    self.log.exception("%s could not start", run.spec.name)
                    return
                if up:
                    self._note(run, None)
                    return

        if run.retry is None or run.retry.done():
            run.retry = asyncio.get_running_loop().create_task(tries(wait))

    def _foreground(self, run: _Run) -> None:
        if run.running is None or run.running.main is None or run.main is not None:
            return
        main = run.running.main

        async def foreground() -> object:
            try:
                return await main()
            except Refused as refused:
                self._note(run, refused)
                return None
            finally:
                self._changed.set()

        def ended(task: asyncio.Task[object]) -> None:
            if task.cancelled() or run.state is ChannelState.REFUSED:
                return
            self.failure = task.exception()
            self._end(0)

        run.main = asyncio.get_running_loop().create_task(foreground())
        run.main.add_done_callback(ended)

    def _note(self, run: _Run, problem: Problem | None) -> None:
        """The channel's state from what it found; a change is one line in the log."""
        old, new = run.state, ChannelState.of(problem)
        if old is ChannelState.REFUSED or (old is new and new is not ChannelState.RETRYING):
            return
        name = run.spec.name
        if new is ChannelState.UP:
            if old is ChannelState.RETRYING and run.problem is not None:
                self.log.info("%s can be reached again after %s; %s is up", run.problem.provider,
                              _took(time.monotonic() - run.since), name)
            run.state, run.problem, run.wait = new, None, RETRY_FIRST
            if run.retry is not None and run.retry is not asyncio.current_task():
                run.retry.cancel()
        elif isinstance(problem, Unreachable):
            if old is not ChannelState.RETRYING:
                run.since = time.monotonic()
                self.log.warning("%s; %s tries again, waiting up to %g s between tries", problem, name, RETRY_MOST)
            run.state, run.problem = new, problem
            if run.running is not None and run.running.check is not None:
                self._tries(run)  # asked again until it answers; a channel without a check finds out by itself
        else:
            assert isinstance(problem, Refused)
            running = run.running is not None
            self.log.error("%s; %s is off%s", problem, name,
                           ", its messages wait in the outbox for the next start" if running else "")
            run.state, run.problem = new, problem
            if running:
                run.stopping = asyncio.get_running_loop().create_task(self._stop_one(run))
            if self.needed and all(r.state is ChannelState.REFUSED for r in self.runs.values()):
                self._end(REFUSED_STATUS)
        self._changed.set()

    async def _stop_one(self, run: _Run) -> None:
        """Stop one refused channel: its foreground, its tries, its deliveries (its messages wait), its context."""
        for task in (run.main, run.retry):
            if task is not None and task is not asyncio.current_task():
                await _cancelled(task)
        await self._drop_workers(run.spec.name)
        self.wiring.running.pop(run.spec.name, None)
        run.running = None
        if run.stack is not None:
            stack, run.stack = run.stack, None
            try:
                await stack.aclose()
            except Exception as exc:  # it is off already: its own stop may fail the same way (no traceback)
                self.log.debug("%s stopped with %s", run.spec.name, type(exc).__name__, exc_info=exc)
        self._changed.set()

    async def _drop_workers(self, name: str) -> None:
        """Stop and forget the deliveries of one channel (``Runtime.delivery``)."""
        workers = [w for w in self.wiring.workers if name in w.channels]
        for worker in workers:
            self.wiring.workers.remove(worker)
            await worker.stop()

    def _end(self, status: int) -> None:
        if not self.over.is_set():
            self.status = status
            self.over.set()
        self._changed.set()

    def _check_over(self) -> None:
        if self.needed and self.runs and all(r.state is ChannelState.REFUSED for r in self.runs.values()):
            self._end(REFUSED_STATUS)


async def _cancelled(task: asyncio.Task[Any]) -> None:
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)


def _took(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.0f} min"

