"""A whole channel in one module, as a new one (Discord, Signal, Matrix) would be: it translates and nothing else.

People post JSON to ``POST /example/<address>`` (``{"say": "..."}`` or ``{"press": token, "decision": n}``); what
the service sends them lands in ``ExampleChannel.inbox`` (a real one would call its provider here). What people
type is read by ``moderator.grammar``, in every language the catalogs have, as every real channel reads it; the
rest is an answer by name, which the service reads against the prompt it answers. Adding it to every command is
one line in ``moderator.app.CHANNELS`` (the test adds it to a server: ``create_app(settings, channels=(*CHANNELS,
SPEC))``).
"""

from __future__ import annotations

import contextlib
from collections import defaultdict
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Final

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from moderator.channels import Capabilities, Delivered, Outbound, Result, Running, Runtime
from moderator.commands import Choose, Command, Decide, Inbound
from moderator.grammar import grammar
from moderator.settings import Settings

CHANNEL: Final = "example"
CAPABILITIES: Final = Capabilities(buttons=True)
"""Its people see a prompt's options (buttons) and type the grammar's words as they are (``WordStyle.PLAIN``)."""


class ExampleChannel:
    """Delivers by keeping every message per address (a provider's API call in a real channel)."""

    capabilities: Final = CAPABILITIES

    def __init__(self) -> None:
        self.inbox: dict[str, list[Outbound]] = defaultdict(list)

    def send_batch(self, address: str, messages: Sequence[Outbound]) -> list[Result]:
        self.inbox[address].extend(messages)
        return [Delivered(ref=f"{address}/{len(self.inbox[address])}") for _ in messages]


def parse(said: str) -> Command:
    """Typed words as a command (``open Ann``, ``join CODE Bob``, ``computers 3``, ``go``, ``ja``, ``2``, ``hilfe``),
    read by the grammar; anything else is an answer by name (or a typo) for the service to read or refuse."""
    return grammar().parse(said, CAPABILITIES.reserved_words) or Decide("?", said)


class ExampleSpec:
    """The example channel's entry: name, capabilities, when it is on, its route, its start-up."""

    name: Final = CHANNEL
    capabilities: Final = CAPABILITIES

    def off(self, settings: Settings) -> str | None:
        return None if settings.env.get("EXAMPLE_CHANNEL") == "on" else "it is on with EXAMPLE_CHANNEL=on"

    def routes(self, settings: Settings) -> Sequence[BaseRoute]:
        async def post(request: Request) -> Response:
            data = await request.json()
            address = str(request.path_params["address"])
            command: Command = (Choose(str(data["press"]), int(data["decision"])) if "press" in data
                                else parse(str(data.get("say", ""))))
            running: Running = request.app.state.channels[CHANNEL]
            runtime: Runtime = running.state
            runtime.port.handle(Inbound(CHANNEL, address, command, external_id=str(data.get("id")) or None))
            return Response(status_code=204)

        return [Route("/example/{address}", post, methods=["POST"])]

    def webhooks(self, settings: Settings) -> Mapping[str, int]:
        # Its provider posts here, not a browser: no Origin to check (a real one checks a signature in ``post``).
        return {"/example": 16 * 1024}

    @contextlib.asynccontextmanager
    async def start(self, settings: Settings, runtime: Runtime) -> AsyncIterator[Running]:
        global LAST
        LAST = ExampleChannel()
        runtime.delivery(CHANNEL, LAST)
        yield Running(runtime)


LAST: ExampleChannel | None = None
"""The channel of the server that started last (for the test to read what was delivered)."""
SPEC: Final = ExampleSpec()
