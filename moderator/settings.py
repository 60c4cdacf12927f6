"""The one configuration of every command: the environment, then ``./.env`` (the environment wins), read once.

Each channel reads its own keys from ``Settings.env`` (``ChannelSpec.off`` and ``start``); the keys every command
shares are fields here, and so is what the command itself decides (``moderator.app.Entry``: whether a web server
runs, a table to open at the start). ``.env`` is parsed by python-dotenv: quotes, ``export`` and inline comments as
a shell reads them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from dotenv import dotenv_values

from .commands import number

_ON = frozenset({"on", "1", "true", "yes"})


def default_path() -> Path:
    """``moderator.db`` under the user's data directory (XDG on Linux): the database when ``MODERATOR_DB`` is not
    set (``Settings.load`` reads that, from the environment and ./.env)."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "moderator" / "moderator.db"


def read_env(environ: Mapping[str, str] | None = None, cwd: Path | None = None) -> dict[str, str]:
    """``./.env`` under the environment, empty values dropped (an empty ``TELEGRAM_TOKEN=`` means unset)."""
    dotenv = {k: v for k, v in dotenv_values((cwd or Path.cwd()) / ".env").items() if v is not None}
    merged = {**dotenv, **(os.environ if environ is None else environ)}
    return {k: v for k, v in merged.items() if v}


@dataclass(frozen=True, slots=True)
class Opening:
    """A table the command opens as it starts (``moderator play``, ``play --web``)."""

    name: str | None
    """The host's name (None: asked at the console; with ``--web``, the host takes no seat)."""
    theme: str
    language: str
    players: int = 7
    """Seats at a console table: you and computer players."""
    watch: bool = False
    """Computer players take every seat and the terminal shows the table's public story."""


@dataclass(frozen=True, slots=True)
class Settings:
    """What every command reads: the database, where the web server listens and is reached, and every other
    key for the channels."""

    env: Mapping[str, str] = field(default_factory=dict)
    db_path: Path = field(default_factory=default_path)
    host: str = "127.0.0.1"
    port: int = 8000
    public_url: str | None = None
    """``MODERATOR_PUBLIC_URL``: where Telegram, Twilio and phones reach this server (webhooks, join links)."""
    web: bool = False
    """``MODERATOR_WEB=on``: the browser channel (phone pages, the table screen, pass-and-play)."""
    print_join_codes: bool = False
    """Print a table's join QR code on the terminal when it opens (``moderator sms``, run by hand)."""
    server: bool = True
    """A web server runs for this command (``serve``, ``sms``, ``play --web``): providers' webhooks and pages.
    False (``moderator telegram``, ``moderator play``): a channel fetches its updates itself (Telegram's long
    polling) or needs no network (the console)."""
    lan: bool = False
    """``public_url`` is this machine's address on the local network (``play --web`` without
    ``MODERATOR_PUBLIC_URL``): no provider on the internet can call it, so a channel that needs one to stays off."""
    table: Opening | None = None
    """The table this command opens as it starts, if any (``moderator play``)."""
    record: Path | None = None
    """Where the game's record is written once the command ends with the game over (``play --record``)."""

    @classmethod
    def load(cls, environ: Mapping[str, str] | None = None, cwd: Path | None = None) -> Settings:
        """From the environment and ``./.env``; ``ValueError`` names a setting that cannot be read."""
        env = read_env(environ, cwd)
        db = env.get("MODERATOR_DB")
        port = env.get("MODERATOR_PORT", "8000")
        port_number = number(port)
        if port_number is None or not 0 < port_number < 65536:
            raise ValueError(f"MODERATOR_PORT must be a port number, not {port!r}")
        public = env.get("MODERATOR_PUBLIC_URL")
        return cls(
            env=env,
            db_path=Path(db).expanduser() if db else default_path(),
            host=env.get("MODERATOR_HOST", "127.0.0.1"),
            port=port_number,
            public_url=public.rstrip("/") if public else None,
            web=env.get("MODERATOR_WEB", "off").strip().lower() in _ON,
        )

    def but(self, **changes: Any) -> Settings:
        """These settings with some changed (``play --web`` serves the LAN with the browser channel on)."""
        return replace(self, **changes)
