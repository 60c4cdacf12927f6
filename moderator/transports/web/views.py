"""The pages' views: what each template (``templates/``) is given, built from what the service tells the channel
(``channels.Pages``: a seat's view, the table screen's, the host's; the limits every input is held to) and the
catalogs' words. Which page shows what is decided here and by the service; how it looks, by the templates.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Sequence
from typing import Any, Final

from ...catalog import DEFAULT_THEME, Catalog, languages, right_to_left, themes
from ...channels import JoinWay, Limits, Pages, ResultKind, Status, TableView
from ...grammar import Verb, grammar
from .boards import BoardImages
from .channel import APP_PATH
from .templating import words

Context = dict[str, Any]
"""What one template is given."""

COVER_SECONDS: Final = 60
"""A cover opened on a seat's page closes by itself after this long (time for a President to read three cards
and choose), and at once when the page is hidden or the network goes."""
BALLOTS_IN_ONE_COLUMN: Final = 6
"""The table screen lists up to this many ballots of an election one under the other; more in two columns."""
LONG_WAITING: Final = 80
"""A "waiting for …" line longer than this (characters) is set smaller on the table screen, so that it fits
beside the last vote's ten ballots."""
LATEST_SEEN: Final = 4
"""The host's device shows this many of the latest public results beside the names of the seats played on it."""
REMINDER_MINUTES: Final = (0, 1, 2, 3, 5, 10)
"""The reminder delays the host page offers (0: off); typed, any number of minutes works."""
SPEAK: Final = (Verb.CLAIM, Verb.ACCUSE, Verb.TRUST)
"""What a seat may say to the table from its page, the first offered first."""


def nonce() -> str:
    """A form's one-time id: a repeat of it (a double tap, a retry) is dropped by the service."""
    return secrets.token_hex(8)


def _words(catalog: Catalog, theme: str) -> Context:
    """What every template speaks with: the catalog's messages (``t``: a name in them isolated where it runs the
    other way) and terms, and the table's theme."""
    return {"t": catalog.said, "term": catalog.term, "theme": theme}


def _page(catalog: Catalog, title: str, *, lang: str | None = None, kind: str = "", **more: Any) -> Context:
    """A whole page's view: its title, language (the catalog's unless said), the direction that language is written
    in (CLDR's, as the catalog knows it) and kind (its body's class)."""
    lang = lang or catalog.lang
    return {**_words(catalog, catalog.theme), "title": title, "lang": lang,
            "dir": "rtl" if right_to_left(lang) else "ltr", "kind": kind, **more}


def _choices(values: Sequence[str]) -> list[tuple[str, str]]:
    return [(value, value) for value in values]


# --- the live parts -----------------------------------------------------------------------------------------


def seat_part(pages: Pages, boards: BoardImages, table: TableView, position: int, lang: str, *,
              cover: str | None = None) -> Context:
    """One seat's live part (``seat_part.html``): the decision it owes, what it knows, the board, its messages,
    its own settings; ``cover``: all of it behind a cover that says so (pass-and-play)."""
    view = pages.seat_view(table.id, position, lang)
    catalog = words(table.theme, lang)
    return {
        **_words(catalog, table.theme), "table": table, "view": view, "position": position, "cover": cover,
        "limits": pages.limits(), "speak": table.status is Status.PLAYING, "leave": table.status is Status.LOBBY,
        "board": boards.shown(table, catalog.lang, view.board.lines if view.board else (), pages.limits())
        if view.in_game else None,
        "speak_kinds": [(v.value, grammar().shown(v, catalog.lang) or v.value) for v in SPEAK],
        "speak_kind": SPEAK[0].value, "languages": _choices(languages(table.theme)),
        # One per form, as a tap on it is one input; a seat's own settings share theirs.
        "nonces": {"prompt": nonce(), "record": nonce(), "speak": nonce(), "yourself": nonce()},
    }


def screen_part(pages: Pages, boards: BoardImages, table: TableView, lang: str, *, join_base: str,
                ways: Callable[[str], list[JoinWay]]) -> Context:
    """The table screen's live part (``screen_part.html``), laid out for a TV across the room: public only."""
    catalog = words(table.theme, lang)
    view = pages.screen_view(table.id, lang)
    context = {**_words(catalog, table.theme), "table": table, "view": view}
    if view.lobby:
        if not table.code:
            return context
        own = f"{join_base}/tv/{table.code}"  # the screen's own short address, to open it on another screen
        return {**context, **_join_codes(table, join_base, ways), "own": own, "own_shown": own.split("://", 1)[-1]}
    ballots = sorted(view.reveal.ballots, key=lambda b: not b.ja) if view.reveal is not None else []
    return {
        **context, "board": boards.shown(table, catalog.lang, view.board.lines if view.board else (), pages.limits()),
        "ballots": ballots, "many_ballots": len(ballots) > BALLOTS_IN_ONE_COLUMN,
        "long_waiting": len(view.waiting) > LONG_WAITING,
        "end": next((r for r in reversed(view.results) if r.kind is ResultKind.END), None),
        # What screen.js reads aloud: every public result once, by its id, in order.
        "told": [{"id": r.id, "text": r.text} for r in view.results],
    }


def host_part(pages: Pages, boards: BoardImages, table: TableView, lang: str, *, local: Sequence[int],
              join_base: str, ways: Callable[[str], list[JoinWay]]) -> Context:
    """The host's device (``host_part.html``): lobby controls, the pass-and-play names, and host controls."""
    catalog = words(table.theme, lang)
    view = pages.host_view(table.id, lang, local)
    lobby = table.status is Status.LOBBY
    minutes = sorted({*REMINDER_MINUTES, view.reminder_minutes})
    return {
        **_words(catalog, table.theme), "table": table, "view": view, "lobby": lobby, "limits": pages.limits(),
        "nonce": nonce(), "move_base": join_base,
        **(_join_codes(table, join_base, ways) if lobby and table.code else {}),
        # What the table saw, beside the names of a device played on.
        "seen": [r.text for r in pages.screen_view(table.id, lang).results[-LATEST_SEEN:]][::-1]
        if view.local and not lobby else (),
        "board": boards.shown(table, catalog.lang, view.board.lines, pages.limits()) if view.board else None,
        "reminder_choices": [(str(m), catalog.text("web-reminders-after", minutes=m) if m else
                              catalog.text("web-reminders-off")) for m in minutes],
        "theme_choices": _choices(themes()), "language_choices": _choices(languages(table.theme)),
    }


def _join_codes(table: TableView, join_base: str, ways: Callable[[str], list[JoinWay]]) -> Context:
    """The join page's link and every other way to join (``partials/join_codes.html``), each with its QR code."""
    code = table.code
    assert code is not None
    url = f"{join_base}/join/{code}"
    return {"code": code, "codes": [JoinWay("", url, url), *ways(code)]}


# --- whole pages --------------------------------------------------------------------------------------------


def home(lang: str, limits: Limits, *, password: bool, note: str | None = None) -> Context:
    """The "open a table" form (``home.html``), with the operator's password field if one is set."""
    catalog = words(DEFAULT_THEME, lang)
    return _page(catalog, catalog.text("web-open-title"), lang=lang, limits=limits, password=password, note=note,
                 games=[(theme, words(theme, lang).term("game")) for theme in themes()])


def message(catalog: Catalog, lines: Sequence[str], *, title: str | None = None, lang: str | None = None,
            back: tuple[str, str] | None = None) -> Context:
    """A page of a few words (``message.html``): why not, what now; ``back``: a link (address, words) to go on."""
    return _page(catalog, lines[0] if title is None else title, lang=lang, lines=lines,
                 back=None if back is None else {"href": back[0], "label": back[1]})


def seat(part: Context, lang: str, *, local: bool = False, offer_pin: bool = False) -> Context:
    """A seat's page around its live part (``seat.html``; ``local``: a seat on the host's device, which may be
    given a PIN)."""
    catalog = words(part["table"].theme, lang)
    name = part["table"].seats[part["position"]].name
    return {**part, **_page(catalog, name, lang=lang, kind="seat"), "local": local, "offer_pin": offer_pin,
            "cover_seconds": COVER_SECONDS}


def app(table: TableView, lang: str) -> Context:
    """A seat's page in a messenger's app (``app.html``) before its script signs in: the live part's place, the
    words the page shows while it opens and when no app vouches for it."""
    catalog = words(table.theme, lang)
    return {**_page(catalog, catalog.text("web-open-seat"), lang=lang, kind="seat app"), "table": table,
            "cover_seconds": COVER_SECONDS, "app_path": APP_PATH}


def screen(part: Context, lang: str) -> Context:
    """The table screen around its live part (``screen.html``)."""
    catalog = words(part["table"].theme, lang)
    return {**part, **_page(catalog, catalog.text("web-table-screen"), lang=lang,
                            kind=f"screen {part['table'].theme}")}


def host(part: Context, lang: str) -> Context:
    """The host's page around its live part (``host.html``)."""
    catalog = words(part["table"].theme, lang)
    return {**part, **_page(catalog, catalog.text("web-host-page"), lang=lang)}


def pin(table: TableView, position: int, note: str, *, seconds: int) -> Context:
    """A locked pass-and-play seat (``pin.html``): its PIN asked for, after ``note`` if any."""
    lang = table.seats[position].language
    catalog = words(table.theme, lang)
    name = table.seats[position].name
    return _page(catalog, name, lang=lang, kind="seat", table=table, position=position, name=name, note=note,
                 seconds=seconds)


def pass_to(table: TableView, position: int, name: str) -> Context:
    """Between two players of one device (``pass.html``): "pass the device to Bob", nothing of the last seat."""
    catalog = words(table.theme, table.seats[position].language)
    return _page(catalog, catalog.text("web-pass-to", name=name), kind="seat", table=table, position=position,
                 name=name)


def move(lang: str, theme: str) -> Context:
    """A seat's one-time code opened on its new device (``move.html``): one button takes the seat over."""
    catalog = words(theme, lang)
    return _page(catalog, catalog.text("web-move-title"), nonce=nonce())


def join(lang: str, theme: str, code: str, ways: Sequence[JoinWay], limits: Limits, *, browser: bool) -> Context:
    """Every way to take a seat at the table with this code (``join.html``); ``browser``: "play in this browser"
    first."""
    catalog = words(theme, lang)
    return _page(catalog, code, lang=lang, kind="join-page", code=code, ways=ways, browser=browser, limits=limits,
                 nonce=nonce())
