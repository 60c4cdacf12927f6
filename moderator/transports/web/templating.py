"""The pages' templates (``templates/``: Jinja2, autoescaped, through Starlette's ``Jinja2Templates``), the house
style and scripts every page carries (``assets/``), and which words a request reads."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from importlib import resources
from typing import Any, Final

import jinja2
from babel.core import negotiate_locale
from markupsafe import Markup
from starlette.requests import Request
from starlette.responses import Response
from starlette.templating import Jinja2Templates

from ...catalog import DEFAULT_LANGUAGE, DEFAULT_THEME, Catalog, UnknownCatalog, languages
from ...qr import qr_drawing

NO_STORE: Final = {"Cache-Control": "no-store", "X-Robots-Tag": "noindex", "Referrer-Policy": "no-referrer"}
"""Every page and part: kept by no cache, indexed by no search engine, its address sent to no other site."""


@cache
def asset(name: str) -> Markup:
    """One of the files every page carries in itself (``assets/``: the house style, the scripts): our own."""
    return Markup(resources.files(__package__).joinpath("assets", name).read_text(encoding="utf-8"))


TEMPLATES: Final = Jinja2Templates(env=jinja2.Environment(
    loader=jinja2.PackageLoader(__package__, "templates"), autoescape=True, undefined=jinja2.StrictUndefined,
    trim_blocks=True, lstrip_blocks=True, auto_reload=False))
TEMPLATES.env.globals.update(asset=asset, qr=qr_drawing)


def render(template: str, context: Mapping[str, Any]) -> str:
    """A part of a page (what its script fetches again on each change), as HTML."""
    return TEMPLATES.get_template(template).render(context)


def page(request: Request, template: str, context: Mapping[str, Any], *, status: int = 200) -> Response:
    """A whole page (``templates/page.html`` around ``template``), kept by no cache."""
    return TEMPLATES.TemplateResponse(request, template, dict(context), status_code=status, headers=NO_STORE)


def language(request: Request, theme: str = DEFAULT_THEME) -> str:
    """The browser's preferred language among the catalog's, else English: its ``Accept-Language`` in the order of
    its weights, each tag matched whole or by its base code (``pt-BR`` is ``pt``; ``fil`` is not ``fi``: Babel's
    ``negotiate_locale``)."""
    asked = []
    for order, part in enumerate(request.headers.get("accept-language", "").split(",")):
        tag, _, weight = part.partition(";")
        tag = tag.strip().lower().replace("_", "-")
        try:
            q = float(weight.strip().removeprefix("q=")) if weight else 1.0
        except ValueError:
            q = 0.0
        if tag and tag != "*" and q > 0:
            asked.append((-q, order, tag))
    found = negotiate_locale([tag for _, _, tag in sorted(asked)], languages(theme), sep="-")
    return found or DEFAULT_LANGUAGE


def words(theme: str, lang: str) -> Catalog:
    """The catalog of ``theme`` in ``lang``, else in English."""
    try:
        return Catalog.load(theme, lang)
    except UnknownCatalog:
        return Catalog.load(theme, DEFAULT_LANGUAGE)


WEB_MESSAGES: Final = (
    "web-open-title",
    "web-your-name",
    "web-plays-too",
    "web-open",
    "web-play-here",
    "web-take-seat",
    "web-reveal",
    "web-nothing-owed",
    "web-messages",
    "web-seats",
    "web-scan-to-join",
    "web-add-player",
    "web-add",
    "web-add-computers",
    "web-start",
    "web-remove",
    "web-pass-title",
    "web-owes",
    "web-only-you",
    "web-done-pass",
    "web-pause",
    "web-resume",
    "web-nudge",
    "web-end",
    "web-rematch",
    "web-not-your-seat",
    "web-stale-title",
    "web-stale-join",
    "web-stale-join-todo",
    "web-stale-screen",
    "web-stale-screen-todo",
    "web-latest",
    "web-table-screen",
    "web-host-page",
    "web-theme",
    "web-end-confirm",
    "web-open-try-again",
    "web-open-password",
    "web-open-refused",
    "web-computers-count",
    "web-reminders",
    "web-reminders-off",
    "web-reminders-after",
    "web-set",
    "web-phone-votes",
    "web-hand-votes",
    "web-players",
    "web-stand-in",
    "web-give-back",
    "web-new-device",
    "web-move-to",
    "web-move-title",
    "web-move-take",
    "web-record-votes",
    "web-record",
    "web-you",
    "web-rename",
    "web-language",
    "web-table-language",
    "web-leave",
    "web-leave-confirm",
    "web-rules",
    "web-speak",
    "web-speak-example",
    "web-say",
    "web-executed",
    "web-cover-role",
    "web-cover-knowledge",
    "web-cover-investigation",
    "web-cover-peek",
    "web-cover-cards",
    "web-cover-vote",
    "web-cover-secret",
    "web-sending",
    "web-sent",
    "web-offline",
    "web-not-saved",
    "web-moved-on",
    "web-your-turn",
    "web-chosen",
    "web-pass-to",
    "web-pass-ready",
    "web-pin-offer",
    "web-pin-save",
    "web-pin-ask",
    "web-pin-open",
    "web-pin-wrong",
    "web-pin-wait",
    "web-this-screen",
    "web-vote-elected",
    "web-vote-rejected",
    "web-narrate",
    "web-story-election",
    "web-story-policy",
    "web-story-power",
    "web-story-veto",
    "web-vote-count",
    "web-do-nominate",
    "web-do-discard",
    "web-do-enact",
    "web-do-investigate",
    "web-do-special-election",
    "web-do-execute",
    "web-join-title",
    "web-host-title",
    "web-remove-confirm",
    "web-move-up",
    "web-set-reminders",
    "web-set-theme",
    "web-set-language",
    "web-speak-kind",
    "web-speak-text",
    "web-open-seat",
    "web-app-opening",
    "web-app-not-signed",
    "web-app-no-seat",
)
"""Message ids the browser pages use (a test checks the catalogs have them)."""
