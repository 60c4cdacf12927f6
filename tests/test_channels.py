"""The port: a new channel is one module plus one line in the list of channels; folding decides by kind."""

from __future__ import annotations

import random
import warnings
from pathlib import Path

from moderator.app import CHANNELS, create_app
from moderator.board_view import board_of
from moderator.channels import Kind, Option, Outbound, Seating
from moderator.commands import Press
from moderator.engine import new_game, public_view
from moderator.render import TableInfo
from moderator.service import Service
from moderator.settings import Settings
from moderator.store import Store
from tests import example_channel

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # Starlette 1.x asks for httpx2; httpx works the same here
    from starlette.testclient import TestClient


def test_a_new_channel_is_one_module_and_one_line_in_the_list_of_channels(tmp_path: Path) -> None:
    settings = Settings.load({"MODERATOR_DB": str(tmp_path / "m.db"), "EXAMPLE_CHANNEL": "on"}, cwd=tmp_path)
    app = create_app(settings, channels=(*CHANNELS, example_channel.SPEC), deliver=False)
    with TestClient(app, client=("127.0.0.1", 50000)) as client:  # this machine: /healthz tells all
        assert client.get("/healthz").json()["channels"] == {"example": "up"}
        wiring = app.state.wiring
        ids = iter(range(1, 100_000))

        def post(address: str, **data: object) -> None:
            assert client.post(f"/example/{address}", json={**data, "id": next(ids)}).status_code == 204
            assert client.portal is not None
            for worker in wiring.workers:
                client.portal.call(worker.deliver)

        channel = example_channel.LAST
        assert channel is not None
        post("ann", say="open Ann")
        joined = next(m for m in channel.inbox["ann"] if m.kind is Kind.JOIN)
        post("bob", say=f"join {joined.join_code} Bob")
        post("ann", say="computers 3")
        post("ann", say="go")
        rng = random.Random(4)
        answered: set[tuple[str, int | None]] = set()
        for _ in range(2000):
            table = app.state.service.table(joined.table)
            if table.status == "over":
                break
            for address in ("ann", "bob"):
                prompts = [m for m in channel.inbox[address] if m.kind is Kind.PROMPT]
                if prompts and (address, prompts[-1].decision) not in answered:
                    answered.add((address, prompts[-1].decision))

                    post(address, press=rng.choice(prompts[-1].options).token, decision=prompts[-1].decision)
                    break
            else:
                raise AssertionError("the game waits for nobody at this channel")
        assert app.state.service.table(joined.table).status == "over"
        assert any(m.kind is Kind.NOTE and m.secret for m in channel.inbox["bob"])  # the deal reached Bob


def test_an_outbound_message_round_trips_through_the_outbox_json() -> None:
    board = board_of(public_view(new_game(5, seed=1)), TableInfo(("A", "B", "C", "D", "E")))
    messages = [
        Outbound(Kind.PROMPT, "Vote?", options=(Option("Ja", "vj"), Option("Nein", "vn")), decision=7, table="t",
                 language="de", message_id="prompt-vote"),
        Outbound(Kind.LOBBY, "1. A", seating=Seating(("A", "B"), (Option("+1", "cpu"),), open=False), table="t"),
        Outbound(Kind.JOIN, "Code", join_code="ACDEF", shown_in="-100", options=(Option("go", "go"),)),
        Outbound(Kind.BOARD, "", board=board, game=2, edit="17"),
        Outbound(Kind.ECHO, "", secret=True, press=Press("9", "<b>Vote?</b>", "Ja", protected=True)),
        Outbound(Kind.ECHO, "", press=Press("8", "Nominate:", "Bob"), options=(Option("Ja", "vj"),), decision=8,
                 follows="Vote on Ann as President with Bob as Chancellor: Ja or Nein?"),
        Outbound(Kind.ASIDE, "Ann passed two policies to Bob.", table="t"),
    ]
    for message in messages:
        assert Outbound.from_json(message.to_json(), message.message_id) == message


def test_a_pages_feed_folds_the_vote_counter_by_kind_never_by_message_id() -> None:
    service = Service(Store(memory=True))
    rows = [Outbound(Kind.COUNTER, "1 of 5 have voted", message_id="renamed-counter"),
            Outbound(Kind.COUNTER, "2 of 5 have voted", message_id="renamed-counter"),
            Outbound(Kind.RESULT, "Elected.", message_id="renamed-result"),
            Outbound(Kind.COUNTER, "1 of 5 have voted", message_id="renamed-counter")]
    service.store.enqueue([(None, "web", "a", m.message_id, m.to_json()) for m in rows], now=1.0)
    feed = service.pages.feed("web", "a", 10, this_game=False, table_id="T")
    # A new count replaces the last one; an election's result ends it, so the next count is a line of its own.
    assert [line.text for line in feed] == ["2 of 5 have voted", "Elected.", "1 of 5 have voted"]
