"""The live event stream: one ``data:`` line per committed change of a table and nothing else (no content, so no
secret); every page listens and fetches its own part again, so nothing needs a reload."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any, Final

from starlette.responses import StreamingResponse
from starlette.types import Receive, Scope, Send

STREAM_SECONDS: Final = 20.0
"""An event stream ends after this long and the browser opens a new one at once: a server shutting down never
waits on an idle stream for long."""
KEEP_ALIVE: Final = 10.0
STREAM_RETRY: Final = 15.0
"""The ``Retry-After`` of a stream refused for want of a slot (503). An ``EventSource`` cannot read it: live.js
opens the stream again after 2.5-5 s, then after longer each time, up to a minute."""


class Live:
    """Who listens to which table, woken on the event loop's thread whenever the service commits a change."""

    def __init__(self) -> None:
        self._listeners: dict[str, set[asyncio.Queue[None]]] = {}
        self.loop: asyncio.AbstractEventLoop | None = None
        """The event loop the streams run on (the service's thread is another)."""
        self._closing = False

    def bind(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop

    def changed(self, table_id: str) -> None:
        """A change to the table was committed (any thread): its streams say so."""
        if self.loop is not None:
            self.loop.call_soon_threadsafe(self._wake, table_id)

    def close(self) -> None:
        """End every event stream now (the server is stopping: it need not wait for them). Any thread."""
        self._closing = True
        if self.loop is not None:
            self.loop.call_soon_threadsafe(self._wake_all)

    def _wake_all(self) -> None:
        for table_id in list(self._listeners):
            self._wake(table_id)

    def _wake(self, table_id: str) -> None:
        for queue in self._listeners.get(table_id, ()):
            if queue.empty():
                queue.put_nowait(None)

    async def stream(self, table_id: str) -> AsyncIterator[str]:
        """Server-sent events: one ``data:`` line per change of the table, for ``STREAM_SECONDS``."""
        queue: asyncio.Queue[None] = asyncio.Queue(maxsize=1)
        self._listeners.setdefault(table_id, set()).add(queue)
        loop = asyncio.get_running_loop()
        end = loop.time() + STREAM_SECONDS
        try:
            yield "retry: 500\n\n"
            while (left := end - loop.time()) > 0 and not self._closing:
                try:
                    await asyncio.wait_for(queue.get(), min(KEEP_ALIVE, left))
                except TimeoutError:
                    yield ":\n\n"
                    continue
                if not self._closing:
                    yield "data: changed\n\n"
        finally:
            listeners = self._listeners.get(table_id)
            if listeners is not None:
                listeners.discard(queue)
                if not listeners:
                    del self._listeners[table_id]


class HeldStream(StreamingResponse):
    """A stream that gives its slot back however it ends: finished, the client gone, the server stopping."""

    def __init__(self, content: AsyncIterator[str], release: Callable[[], None], **options: Any) -> None:
        super().__init__(content, **options)
        self._release = release

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self._release()
