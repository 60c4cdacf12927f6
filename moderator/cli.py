"""The ``moderator`` command: ``simulate`` and ``replay`` (more commands join as the table grows)."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from . import record as records
from .settings import Settings
from .simulate import Tally, random_games

if TYPE_CHECKING:
    from .app import Entry  # imported when a command runs: it brings every channel


def _simulate(args: argparse.Namespace) -> int:
    if not 5 <= args.players <= 10:
        print("moderator simulate: --players must be 5 to 10", file=sys.stderr)
        return 2
    if args.games < 1:
        print("moderator simulate: --games must be at least 1", file=sys.stderr)
        return 2
    out: Path | None = args.record
    if out is not None:
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as exc:  # a file of that name, no permission
            print(f"moderator simulate: cannot write records into {out}: {exc.strerror or exc}", file=sys.stderr)
            return 2
    names = [f"P{i + 1}" for i in range(args.players)]
    result = Tally()
    start = time.perf_counter()
    games = random_games(args.players, args.games, args.seed, keep_actions=out is not None, computers=args.computers)
    for i, game in enumerate(games):
        result.add(game.state)
        if out is not None:
            text = records.dumps(records.to_json(names, game.state, game.actions, game.claims))
            (out / f"game-{i + 1:05d}.json").write_text(text, encoding="utf-8")
    result.seconds = time.perf_counter() - start
    print(f"{args.players} players, seed {args.seed}{', computer players' if args.computers else ''}")
    print(result.report())
    if out is not None:
        print(f"records written to {out}")
    return 0


def _replay(args: argparse.Namespace) -> int:
    from .catalog import Catalog

    if not _words("replay", args):
        return 2
    try:
        text = Path(args.record).read_bytes() if args.record != "-" else sys.stdin.buffer.read()
    except OSError as exc:
        print(f"moderator replay: cannot read {args.record}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    try:
        record = records.loads(text)
        result = records.replay(record)
    except records.RecordError as exc:
        print(f"moderator replay: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(records.summary(result), ensure_ascii=False, indent=2))
    else:
        print(records.timeline(result, Catalog.load(args.theme, args.lang)))
    if result.error is not None:
        if not args.json:
            print(
                f"moderator replay: action {result.error.index}: {records.error_message(record, result.error)}",
                file=sys.stderr,
            )
        return 1
    return 0


def _catalog_check(args: argparse.Namespace) -> int:
    from .catalog_check import check

    status = 0
    for path in args.paths:
        report = check(path)
        for finding in report.problems:
            print(finding)
        for note in report.notes:
            print(f"{path}: {note}")
        if report.problems:
            status = 1
            print(f"{path}: {len(report.problems)} problem(s)", file=sys.stderr)
    return status


def _settings(command: str) -> Settings | None:
    """The settings from the environment and ./.env, or None (said on stderr) if one cannot be read."""
    try:
        return Settings.load()
    except ValueError as exc:
        print(f"moderator {command}: {exc}", file=sys.stderr)
        return None


def _source(command: str, args: argparse.Namespace) -> Path | None:
    """The database a command reads: ``--db``, else the settings' (``MODERATOR_DB`` from the environment or
    ./.env, as ``serve`` reads it); None (said on stderr) if the settings cannot be read."""
    if args.db:
        return Path(args.db)
    settings = _settings(command)
    return None if settings is None else settings.db_path


def _database(command: str, settings: Settings) -> bool:
    """True if the database opens and takes a write; else False, said in one line naming its path (a server that
    cannot store inputs must not start answering them)."""
    import sqlite3

    from .store import Store

    try:
        store = Store(settings.db_path)
        try:
            store.check_writable()
        finally:
            store.close()
    except (OSError, sqlite3.Error) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        print(f"moderator {command}: cannot open or write the database {settings.db_path}: {reason}",
              file=sys.stderr)
        return False
    return True


def _words(command: str, args: argparse.Namespace) -> bool:
    """Resolve ``--theme`` and ``--lang`` to a catalog, whatever their case; False (the choices said on stderr)
    if there is none."""
    from . import catalog

    themes = catalog.themes()
    if not themes:
        where = catalog.messages_dir()
        print(f"moderator {command}: no catalogs in {where} (<theme>/<language>.toml)"
              + (f": {catalog.ENV_VAR} names that folder" if os.environ.get(catalog.ENV_VAR) else ""),
              file=sys.stderr)
        return False
    broken = catalog.problems()
    if broken:  # a file that does not parse: its path and line, not a traceback at the first word sent
        print(f"moderator {command}: {broken[0]}", file=sys.stderr)
        return False
    theme = next((t for t in themes if t.casefold() == args.theme.strip().casefold()), None)
    if theme is None:
        print(f"moderator {command}: no theme {args.theme!r}; choose one of: {', '.join(themes)}", file=sys.stderr)
        return False
    langs = catalog.languages(theme)
    lang = next((lg for lg in langs if lg.casefold() == args.lang.strip().casefold()), None)
    if lang is None:
        print(f"moderator {command}: no language {args.lang!r}; choose one of: {', '.join(langs)}", file=sys.stderr)
        return False
    args.theme, args.lang = theme, lang
    return True


WEB_ONLY: Final = ("--host", "--port")
"""``play`` options that only a table served to browsers takes."""
CONSOLE_ONLY: Final = ("--players", "--seed", "--record", "--watch")
"""``play`` options that only a game at this terminal takes (a browser table's players join from their phones;
its game is exported with ``moderator export``)."""


def _refused(args: argparse.Namespace) -> bool:
    """True if ``play``'s options do not go together (said in one line). An option that would be ignored is
    refused: whoever typed it expected it to do something."""
    given = {option for option, value in (("--players", args.players), ("--seed", args.seed),
                                          ("--record", args.record), ("--watch", args.watch or None),
                                          ("--host", args.host), ("--port", args.port), ("--name", args.name))
             if value is not None}
    wrong = [option for option in (CONSOLE_ONLY if args.web else WEB_ONLY) if option in given]
    named = " and ".join(wrong)
    if wrong and args.web:
        print(f"moderator play: {named} {'is' if len(wrong) == 1 else 'are'} for a game at this terminal, not with "
              "--web", file=sys.stderr)
    elif wrong:
        print(f"moderator play: {named} {'goes' if len(wrong) == 1 else 'go'} with --web only", file=sys.stderr)
    elif args.watch and "--name" in given:
        print("moderator play: --name takes a seat and --watch leaves every seat to computer players: choose one",
              file=sys.stderr)
    else:
        return False
    return True


def _record_path(command: str, path: Path) -> bool:
    """True if a record can be written at ``path`` when the game ends; else False, said in one line (checked
    before the game, so that a game played to its end never loses its record)."""
    folder = path.parent
    if path.is_dir():
        print(f"moderator {command}: cannot write the record to {path}: it is a folder", file=sys.stderr)
    elif not folder.is_dir():
        print(f"moderator {command}: cannot write the record to {path}: no folder {folder}", file=sys.stderr)
    elif not os.access(folder, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        print(f"moderator {command}: cannot write the record to {path}: permission denied", file=sys.stderr)
    else:
        return True
    return False


def _play(args: argparse.Namespace) -> int:
    from . import app
    from .settings import Opening

    if _refused(args):
        return 2
    if not _words("play", args):
        return 2
    if args.web:
        return _play_web(args)
    players = 7 if args.players is None else args.players
    if not 5 <= players <= 10:
        print("moderator play: --players must be 5 to 10", file=sys.stderr)
        return 2
    if args.record is not None and not _record_path("play", args.record):
        return 2
    if not args.watch and not sys.stdin.isatty():
        print("moderator play: needs a terminal to play in (or --watch to let computer players play)", file=sys.stderr)
        return 2
    # The console reads nothing of ./.env: a table in this terminal, in memory, needs no settings.
    table = Opening(args.name, args.theme, args.lang, players=players, watch=args.watch)
    options: dict[str, Any] = {} if args.seed is None else {"seed": lambda: args.seed}
    before = _written(args.record)
    try:
        status = app.run(Settings(table=table, record=args.record), app.PLAY, **options)
    except KeyboardInterrupt:
        print(file=sys.stderr)
        status = 130
    if args.record is not None:
        if _written(args.record) != before:
            print(f"moderator play: the game's record is in {args.record} (moderator replay {args.record})",
                  file=sys.stderr)
        else:
            print(f"moderator play: no record written to {args.record}", file=sys.stderr)
    return status


def _written(path: Path | None) -> int | None:
    """When ``path`` was last written (None: it does not exist)."""
    try:
        return None if path is None else path.stat().st_mtime_ns
    except OSError:
        return None


def _play_web(args: argparse.Namespace) -> int:
    from . import app
    from .settings import Opening

    settings = _settings("play --web")
    if settings is None or not _database("play --web", settings):
        return 2
    table = Opening(args.name, args.theme, args.lang)
    try:
        return app.run(settings.but(host=args.host or "0.0.0.0", port=8000 if args.port is None else args.port,
                                        table=table), app.PLAY_WEB)
    except ValueError as exc:
        print(f"moderator play --web: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


def _channels(command: str, entry: Entry) -> int:
    """``serve``, ``sms``, ``telegram``: the command's channels until stopped. A command for some channels only
    says in one line why none of them can start (their keys, in the environment or ./.env)."""
    from . import app

    settings = _settings(command)
    if settings is None:
        return 2
    off = app.channels_off(settings, entry)
    if entry.channels is not None and len(off) == len(entry.channels):
        print(f"moderator {command}: {'; '.join(off)} (set it in the environment or in ./.env)", file=sys.stderr)
        return 2
    if not _database(command, settings):
        return 2
    try:
        return app.run(settings, entry)
    except KeyboardInterrupt:
        return 130


def _telegram(args: argparse.Namespace) -> int:
    from . import app

    return _channels("telegram", app.TELEGRAM)


def _sms(args: argparse.Namespace) -> int:
    from . import app

    return _channels("sms", app.SMS)


def _sms_qr(args: argparse.Namespace) -> int:
    from . import qr
    from .transports import sms

    settings = _settings("sms-qr")
    if settings is None:
        return 2
    number = sms.normalise_number(args.number or settings.env.get("TWILIO_FROM", ""))
    if number is None:
        print("moderator sms-qr: give the table's phone number with --number or TWILIO_FROM", file=sys.stderr)
        return 2
    link = sms.join_link(number, args.code.strip().upper())
    if args.png is not None:
        args.png.write_bytes(qr.qr_png(link))
    if args.svg is not None:
        args.svg.write_text(qr.qr_svg(link), encoding="utf-8")
    print(qr.qr_text(link))
    print(link)
    return 0


def _serve(args: argparse.Namespace) -> int:
    from . import app

    return _channels("serve", app.SERVE)


def _backup(args: argparse.Namespace) -> int:
    """A consistent copy of the live database with SQLite's online backup (safe while ``serve`` runs)."""
    import sqlite3

    from .store import Store

    source = _source("backup", args)
    if source is None:
        return 2
    if not source.exists():
        print(f"moderator backup: no database at {source}", file=sys.stderr)
        return 2
    target = Path(args.file)
    partial = target.with_name(target.name + ".partial")
    store = Store(source)
    try:
        partial.unlink(missing_ok=True)
        copy = sqlite3.connect(str(partial))
        try:
            store.db.conn.backup(copy)
        finally:
            copy.close()
        partial.replace(target)
    except (OSError, sqlite3.Error) as exc:
        print(f"moderator backup: {exc}", file=sys.stderr)
        return 1
    finally:
        store.close()
    print(f"moderator backup: {source} -> {target}", file=sys.stderr)
    return 0


def _export(args: argparse.Namespace) -> int:
    """A finished game's record (table id or join code; ``--game N`` for an earlier game of that table), as
    ``moderator replay`` reads it."""
    from .engine import Phase
    from .service import Service
    from .store import Store, TableStatus

    source = _source("export", args)
    if source is None:
        return 2
    if not source.exists():
        print(f"moderator export: no database at {source}", file=sys.stderr)
        return 2
    store = Store(source)
    try:
        if args.table is None:  # which games there are
            games = store.games(50)
            if not games:
                print(f"moderator export: no game has been dealt in {source} yet", file=sys.stderr)
                return 0
            for table_id, game, status, seats, started, updated in games:
                when = time.strftime("%Y-%m-%d %H:%M", time.localtime(started))
                last = time.strftime("%Y-%m-%d %H:%M", time.localtime(updated))
                # The game's start, then the table's status and its last change (which closes it when idle).
                print(f"{table_id} --game {game:<3}  {seats} seats  {when}  {status:8}  {last}")
            return 0
        service = Service(store)
        row = store.table(args.table) or store.table_by_code(args.table.strip().upper())
        table = service.table(row.id) if row is not None else None
        if table is None or table.state is None:
            print(f"moderator export: no game {args.table}", file=sys.stderr)
            return 2
        game = table.row.game if args.game is None else args.game
        record = service.export(table.row.id, game)
        if record is None:
            print(f"moderator export: table {args.table} has no game {game} (it played {table.row.game})",
                  file=sys.stderr)
            return 2
        current = game == table.row.game
        if current and table.state.phase is not Phase.GAME_OVER and table.status not in (TableStatus.OVER,
                                                                                          TableStatus.CLOSED):
            print("moderator export: that game is not over (its record holds every secret)", file=sys.stderr)
            return 1
        text = records.dumps(record)
    finally:
        store.close()
    if args.out is not None:
        args.out.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
    return 0


class _Version(argparse.Action):
    """``--version``: the installed package's version, read only when asked (``app`` brings every channel)."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        from .app import version

        print(f"moderator {version()}")
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``moderator`` command."""
    from .catalog import languages, themes

    langs, looks = ", ".join(languages()), " or ".join(themes())
    parser = argparse.ArgumentParser(prog="moderator", description="Runs Secret Hitler for a table.")
    parser.add_argument("--version", action=_Version, help="print the version and exit")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    play = commands.add_parser("play", help="play at the console (you and computer players, no network), or "
                               "with --web in browsers on the local network")
    play.add_argument("--players", type=int, help="players at the table, 5 to 10 (default 7)")
    play.add_argument("--name", help="your name at the table (default: asked; with --web: the host takes no seat)")
    play.add_argument("--theme", default="classic", help=f"{looks} (default classic)")
    play.add_argument("--lang", default="en", help=f"language: {langs} (default en)")
    play.add_argument("--seed", type=int, help="seed for a repeatable game")
    play.add_argument("--watch", action="store_true", help="computer players take every seat; print the story")
    play.add_argument("--record", type=Path, metavar="FILE",
                      help="write the game's record to FILE when it ends (moderator replay FILE)")
    play.add_argument("--web", action="store_true",
                      help="serve the table to browsers on the local network: phones, a table screen, pass-and-play")
    play.add_argument("--host", help="with --web: the address to listen on (default all)")
    play.add_argument("--port", type=int, help="with --web: the port (default 8000)")
    play.set_defaults(run=_play, parser=play)

    sim = commands.add_parser("simulate", help="play complete games between computer players (random ones unless "
                                               "--computers)")
    sim.add_argument("--players", type=int, default=7, help="players per game, 5 to 10 (default 7)")
    sim.add_argument("--games", type=int, default=1000, help="how many games (default 1000)")
    sim.add_argument("--seed", type=int, default=0, help="seed for a repeatable run (default 0)")
    sim.add_argument("--record", type=Path, metavar="DIR", help="write every game's record into DIR")
    sim.add_argument("--computers", action="store_true",
                     help="the computer players of 'moderator play' in every seat, claims on (records keep the claims)")
    sim.set_defaults(run=_simulate, parser=sim)

    rep = commands.add_parser("replay", help="replay a game record (docs/game-record.md)")
    rep.add_argument("record", help="the record file, or - for standard input")
    rep.add_argument("--json", action="store_true", help="print the JSON summary instead of the timeline")
    rep.add_argument("--theme", default="classic", help=f"the timeline's words: {looks} (default classic)")
    rep.add_argument("--lang", default="en", help=f"the timeline's language: {langs} (default en)")
    rep.set_defaults(run=_replay, parser=rep)

    words = commands.add_parser("catalog", help="for translators: check a catalog file (messages/THEME/LANG.toml)")
    what = words.add_subparsers(dest="action", required=True, metavar="ACTION")
    checking = what.add_parser("check", help="what a new or changed catalog file lacks or has wrong, by file and line: "
                               "keys, placeholders, the plural forms its language needs, typed words that collide")
    checking.add_argument("paths", nargs="+", type=Path, metavar="PATH", help="a catalog file")
    checking.set_defaults(run=_catalog_check)

    text = commands.add_parser("sms", help="run the SMS channel: Twilio's webhook at POST /sms and the sender")
    text.set_defaults(run=_sms, parser=text)
    qr = commands.add_parser("sms-qr", help="the join QR code of a table for SMS: an sms: link with JOIN CODE")
    qr.add_argument("code", help="the table's join code")
    qr.add_argument("--number", help="the table's phone number (default: TWILIO_FROM)")
    qr.add_argument("--png", type=Path, metavar="FILE", help="also write the QR code as a PNG image")
    qr.add_argument("--svg", type=Path, metavar="FILE", help="also write the QR code as an SVG image")
    qr.set_defaults(run=_sms_qr, parser=qr)

    tg = commands.add_parser("telegram", help="run the Telegram bot (long polling; TELEGRAM_TOKEN, MODERATOR_DB)")
    tg.set_defaults(run=_telegram, parser=tg)

    srv = commands.add_parser("serve", help="every channel in one web server: webhooks, /healthz, /join/CODE")
    srv.set_defaults(run=_serve, parser=srv)
    bak = commands.add_parser("backup", help="a consistent copy of the live database (SQLite online backup)")
    bak.add_argument("file", help="where to write the copy")
    bak.add_argument("--db", help="the database (default: MODERATOR_DB)")
    bak.set_defaults(run=_backup, parser=bak)
    exp = commands.add_parser("export", help="a finished game's record (docs/game-record.md)")
    exp.add_argument("table", nargs="?", metavar="TABLE",
                     help="the table's id (without it: a list of the latest games of every table)")
    exp.add_argument("--game", type=int, metavar="N", help="which game of the table, 1 for its first (default: the "
                     "last one)")
    exp.add_argument("--db", help="the database (default: MODERATOR_DB)")
    exp.add_argument("--out", type=Path, metavar="FILE", help="write the record to FILE (default: standard output)")
    exp.set_defaults(run=_export, parser=exp)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``moderator`` command; returns the exit status."""
    args, unknown = build_parser().parse_known_args(argv)
    if unknown:  # said with the command's own usage ("moderator play --bogus" shows play's options)
        args.parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    try:
        status: int = args.run(args)
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader went away (``| head``): what it wanted it has. Point stdout at nothing so that the
        # interpreter's own flush at exit does not fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    return status


if __name__ == "__main__":
    sys.exit(main())
