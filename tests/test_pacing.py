"""A second rate-limited public chat gets Telegram's pacing and order by declaring its limits: the rooms of a
made-up chat service, delivered by the real ``Sender`` through ``moderator.pacing.Pacer``, with no pacing of their
own: a result never waits behind a vote counter or the board, a superseded counter is never shown, a room gets at
most its calls a minute, across a restart too."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence

from moderator.board_view import board_of
from moderator.channels import Capabilities, Delivered, Kind, Outbound, Pacing, Result
from moderator.delivery import Sender
from moderator.engine import new_game, public_view
from moderator.pacing import Pacer
from moderator.render import TableInfo
from moderator.store import Store, TableRow, TableStatus

LIMITS = Pacing(public_interval=6.0, public_per_minute=5, private_interval=1.0, cosmetic_reserve=1,
                board_patience=20.0, aside_patience=5.0, counter_interval=12.0)
HALL = "!hall"
BOARD = board_of(public_view(new_game(5, seed=1)), TableInfo(("Ann", "Bob", "Cy", "Dee", "Eve")))


class RoomChannel:
    """A chat service whose rooms (``!name``) take at most five calls a minute: it declares that (and that it
    folds a batch into one post), posts what the pacer lets go, and tells it what it posted."""

    capabilities = Capabilities(public_first=True, pacing=LIMITS)

    def __init__(self, clock: Callable[[], float], posts: list[tuple[float, str, str]]) -> None:
        self.clock = clock
        self.posts = posts
        # Everything due for a room goes out as one post: a batch is one call, whatever it holds.
        self.pacer = Pacer(LIMITS, public=lambda room: room.startswith("!"), clock=clock,
                           calls=lambda messages: min(len(messages), 1))

    def send_batch(self, address: str, messages: Sequence[Outbound]) -> list[Result]:
        return self.pacer.batch(address, messages, lambda texts: self._post(address, texts),
                                lambda board: self._post(address, [board]))

    def _post(self, room: str, messages: Sequence[Outbound]) -> Result:
        self.posts.append((self.clock(), room, " / ".join(m.text or m.kind.value for m in messages)))
        self.pacer.sent(room, counter=any(m.kind is Kind.COUNTER for m in messages))
        return Delivered(ref=str(len(self.posts)))

    def pacing(self) -> dict[str, str]:
        return self.pacer.pacing()

    def recall(self, paces: Mapping[str, str]) -> None:
        self.pacer.recall(paces)


def _busiest_minute(times: list[float]) -> int:
    return max((sum(1 for t in times if start <= t < start + 60.0) for start in times), default=0)


def test_a_second_rate_limited_public_chat_is_paced_and_ordered_by_declaring_its_limits() -> None:
    now = [1_000.0]
    posts: list[tuple[float, str, str]] = []
    store = Store(memory=True)
    store.insert_table(TableRow("T", None, TableStatus.PLAYING, "classic", "rooms", "@ann", "rooms", HALL, {}, 1,
                                None, 0), 0.0)

    def sender() -> Sender:
        return Sender(store, {"rooms": RoomChannel(lambda: now[0], posts)}, clock=lambda: now[0])

    def queue(kind: Kind, text: str) -> None:
        board = BOARD if kind is Kind.BOARD else None
        store.enqueue([("T", "rooms", HALL, kind.value, Outbound(kind, text, table="T", board=board).to_json())],
                      now[0])

    def wait(seconds: float, delivering: Sender) -> None:
        for _ in range(int(seconds * 2)):
            delivering.deliver_due()
            now[0] += 0.5

    first = sender()
    queue(Kind.NOTE, "Ann nominates Bob")
    wait(1.0, first)
    queue(Kind.COUNTER, "1 of 5 voted")
    queue(Kind.COUNTER, "2 of 5 voted")
    queue(Kind.RESULT, "Elected")
    queue(Kind.BOARD, "")
    queue(Kind.NOTE, "Ann and Bob legislate")
    wait(30.0, first)
    texts = [text for _, _, text in posts]
    assert "1 of 5 voted" not in texts and "2 of 5 voted" not in texts  # the result said it all
    result = next(i for i, text in enumerate(texts) if "Elected" in text)
    assert texts[result] == "Elected / Ann and Bob legislate"  # the news, folded into one call
    assert texts[result + 1:] == ["board"]  # then the board, in a slot of its own
    # Talk goes on, a line a second: the room gets five calls a minute, each six seconds after the last.
    delivering = first
    for second in range(90):
        if second == 45:  # a restart: the new process knows the minute's calls
            delivering = sender()
        queue(Kind.NOTE, f"line {second}")
        wait(1.0, delivering)
    wait(120.0, delivering)
    times = [at for at, room, _ in posts if room == HALL]
    assert _busiest_minute(times) <= LIMITS.public_per_minute
    assert all(b - a >= LIMITS.public_interval for a, b in itertools.pairwise(times))
    said = " / ".join(text for _, _, text in posts)
    assert all(f"line {second}" in said for second in range(90))  # nothing lost, folded into the calls it had
    assert store.backlog() == 0
    store.close()


def test_an_aside_waits_a_moment_for_the_next_news_to_share_one_call_and_holds_no_prompt_back() -> None:
    now = [1_000.0]
    posts: list[tuple[float, str, str]] = []
    store = Store(memory=True)
    store.insert_table(TableRow("T", None, TableStatus.PLAYING, "classic", "rooms", "@ann", "rooms", HALL, {}, 1,
                                None, 0), 0.0)
    sender = Sender(store, {"rooms": RoomChannel(lambda: now[0], posts)}, clock=lambda: now[0])

    def queue(address: str, kind: Kind, text: str) -> None:
        store.enqueue([("T", "rooms", address, kind.value, Outbound(kind, text, table="T").to_json())], now[0])

    def wait(seconds: float) -> None:
        for _ in range(int(seconds * 2)):
            sender.deliver_due()
            now[0] += 0.5

    queue(HALL, Kind.ASIDE, "Ann passed two policies to Bob")
    queue("@bob", Kind.PROMPT, "Enact one")
    wait(2.0)
    assert [(room, text) for _, room, text in posts] == [("@bob", "Enact one")]  # Bob decides meanwhile
    queue(HALL, Kind.RESULT, "Enacted: Liberal")
    wait(1.0)
    assert posts[-1][1:] == (HALL, "Ann passed two policies to Bob / Enacted: Liberal")  # one call for both
    # A slow Chancellor: the aside goes alone once it has waited its patience (and the room's pace allows).
    wait(10.0)
    queued = now[0]
    queue(HALL, Kind.ASIDE, "Cy passed two policies to Dee")
    wait(4.0)
    assert len(posts) == 2  # still waiting for the Chancellor
    wait(3.0)
    at, room, text = posts[-1]
    assert (room, text) == (HALL, "Cy passed two policies to Dee")
    assert queued + LIMITS.aside_patience <= at <= queued + LIMITS.aside_patience + 1.0
    assert store.backlog() == 0
    store.close()
