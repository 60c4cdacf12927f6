"""The seat's page inside Telegram (a Mini App): whose it is, from the ``initData`` Telegram signs for it.

Telegram hands a Mini App the person who opened it as ``initData``, a query string signed with the bot's token
(core.telegram.org/bots/webapps, "Validating data received via the Mini App"): the fields but ``hash``, sorted,
as ``key=value`` lines, signed with HMAC-SHA256 under a key that is HMAC-SHA256 of the token under "WebAppData".
Only the bot's token makes that signature, so a page that posts it is that person's, for as long as we take the
signature's ``auth_date`` to be fresh. Neither the data nor its hash is ever logged or shown.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from collections.abc import Callable
from typing import Final
from urllib.parse import parse_qsl

from ...channels import Vouched
from .config import CHANNEL

MAX_AGE: Final = 24 * 60 * 60
"""Seconds an ``initData`` is taken after Telegram signed it (its ``auth_date``): a day, as the issue of a
session asks no more (the page posts it once, when it opens)."""
CLOCK_SKEW: Final = 5 * 60
"""Seconds an ``auth_date`` may lie ahead of our clock (Telegram's and ours disagree a little)."""
MAX_LENGTH: Final = 8192
"""Characters of ``initData`` read at most (Telegram's is a few hundred: a user, a date, a hash)."""


def secret_key(token: str) -> bytes:
    """The key Telegram signs a Mini App's data with: HMAC-SHA256 of the bot's token under "WebAppData"."""
    return hmac.new(b"WebAppData", token.encode(), hashlib.sha256).digest()


def data_check_string(fields: dict[str, str]) -> str:
    """The signed text: every field but ``hash``, sorted by key, as ``key=value`` lines."""
    return "\n".join(f"{key}={fields[key]}" for key in sorted(fields) if key != "hash")


def sign(fields: dict[str, str], token: str) -> str:
    """The ``hash`` Telegram puts on these fields for the bot with ``token`` (what a check compares with)."""
    return hmac.new(secret_key(token), data_check_string(fields).encode(), hashlib.sha256).hexdigest()


def verify(init_data: str, token: str, *, now: float) -> Vouched | None:
    """The Telegram user ``init_data`` was signed for, if the bot's ``token`` signed it within ``MAX_AGE`` of
    ``now`` and it names a user; else None (forged, altered, another bot's, stale, no user, malformed)."""
    if not init_data or len(init_data) > MAX_LENGTH:
        return None
    try:
        pairs = parse_qsl(init_data, keep_blank_values=True, strict_parsing=True)
    except ValueError:
        return None
    fields = dict(pairs)
    given = fields.get("hash", "")
    if len(fields) != len(pairs) or not given:
        return None  # a field twice: which one Telegram signed is not ours to guess
    if not hmac.compare_digest(sign(fields, token), given.lower()):
        return None
    try:
        signed_at = int(fields.get("auth_date", ""))
        person = json.loads(fields.get("user", ""))
    except ValueError:
        return None
    if not (now - MAX_AGE <= signed_at <= now + CLOCK_SKEW) or not isinstance(person, dict):
        return None
    user_id = person.get("id")
    if not isinstance(user_id, int) or isinstance(user_id, bool) or user_id <= 0:
        return None
    language = person.get("language_code")
    return Vouched(CHANNEL, str(user_id), language.split("-")[0].lower() if isinstance(language, str) else None)


def voucher(token: str, clock: Callable[[], float] = time.time) -> Callable[[str], Vouched | None]:
    """``Running.vouch`` for the bot with ``token``."""
    return lambda init_data: verify(init_data, token, now=clock())
