"""The house's walls, read from the code's imports (every import, those inside functions included).

Channels translate and nothing else: no module under ``moderator/transports/`` reaches the engine, the store or
the renderer, by any path through the import graph (the board picture is drawn from ``moderator.board``'s plain
view, which the port carries and the service builds); no two modules import each other, directly or in a longer
cycle.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Final

import moderator

PACKAGE = Path(moderator.__file__).resolve().parent
FORBIDDEN_TO_CHANNELS = ("moderator.engine", "moderator.store", "moderator.render", "moderator.service",
                         "moderator.tables", "moderator.fanout", "moderator.game", "moderator.lobby",
                         "moderator.host", "moderator.pages", "moderator.delivery", "moderator.context",
                         "moderator.app")
"""The service's side: a channel hears from it only through the port (``moderator.channels``)."""


def module_name(path: Path) -> str:
    parts = ("moderator", *path.relative_to(PACKAGE).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path) -> set[str]:
    """Every ``moderator`` module this file imports, anywhere in it."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("moderator")}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            if not target.startswith("moderator"):
                continue
            # ``from . import render`` imports a module, and nothing of the package it is in.
            modules = {f"{target}.{alias.name}" for alias in node.names} & MODULES.keys()
            found |= modules if len(modules) == len(node.names) else {*modules, target}
    return found


MODULES = {module_name(p): p for p in PACKAGE.rglob("*.py")}
GRAPH = {name: {i for i in imports(path) if i in MODULES and i != name} for name, path in MODULES.items()}


def reached(start: str) -> dict[str, str]:
    """Every module ``start`` imports, directly or through others, each with the module that imports it."""
    seen: dict[str, str] = {}
    todo = [start]
    while todo:
        here = todo.pop()
        for nxt in GRAPH.get(here, ()):
            if nxt not in seen and nxt != start:
                seen[nxt] = here
                todo.append(nxt)
    return seen


def path(start: str, goal: str, via: dict[str, str]) -> str:
    """``start -> ... -> goal`` through the importers ``reached`` found."""
    hops = [goal]
    while hops[-1] != start:
        hops.append(via[hops[-1]])
    return " -> ".join(reversed(hops))


def test_no_channel_reaches_the_engine_the_store_the_renderer_or_the_service_by_any_path() -> None:
    offences = []
    for name in sorted(GRAPH):
        if name.startswith("moderator.transports."):
            via = reached(name)
            offences += [path(name, goal, via) for goal in sorted(via) if goal.startswith(FORBIDDEN_TO_CHANNELS)]
    assert offences == []


def test_the_walk_follows_imports_through_other_modules() -> None:
    """A module reached only through another is reached: the board's builder reaches the engine's rules."""
    assert "moderator.engine.rules" not in GRAPH["moderator.board_view"]
    assert path("moderator.board_view", "moderator.engine.rules", reached("moderator.board_view")) == \
        "moderator.board_view -> moderator.engine -> moderator.engine.rules"


def test_no_two_modules_import_each_other_even_through_others() -> None:
    def reaches(start: str, goal: str) -> bool:
        seen, todo = set(), [start]
        while todo:
            here = todo.pop()
            for nxt in GRAPH.get(here, ()):
                if nxt == goal:
                    return True
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return False

    # A package's __init__ re-exporting its submodules is not a cycle between modules.
    cycles = sorted(
        (a, b) for a in GRAPH for b in GRAPH[a]
        if a < b and reaches(b, a) and not a.endswith(("engine", "transports")) and MODULES[a].name != "__init__.py"
    )
    assert cycles == []


def test_the_engine_imports_nothing_of_the_rest() -> None:
    outside = {name: sorted(t for t in targets if not t.startswith("moderator.engine"))
               for name, targets in GRAPH.items() if name.startswith("moderator.engine")}
    assert {k: v for k, v in outside.items() if v} == {}


ALLOWED_TO_CHANNELS = frozenset({"moderator.channels", "moderator.commands", "moderator.settings", "moderator.pacing",
                                 "moderator.catalog", "moderator.grammar", "moderator.qr", "moderator.board",
                                 "moderator.guard"})
"""The port and what carries no game logic (docs/channels.md): a channel module imports nothing else of ours."""


def _is_channel(name: str) -> bool:
    """A module under ``moderator/transports/`` is a channel if it (or its package) exports ``SPEC``."""
    package = ".".join(name.split(".")[:3])
    return any(isinstance(node, (ast.Assign, ast.AnnAssign)) and "SPEC" in ast.unparse(node).split("=")[0]
               for module in (name, package) if module in MODULES
               for node in ast.parse(MODULES[module].read_text(encoding="utf-8")).body)


SHARED: Final = frozenset(name for name in MODULES
                          if name.startswith("moderator.transports.") and not _is_channel(name))
"""Plumbing that channels share (the Twilio client, signatures and delivery reports of SMS and WhatsApp): not a
channel itself, and held to the same walls as every module under ``moderator/transports/``."""


def _own_package(name: str) -> str:
    """The channel a module under ``moderator/transports/`` belongs to (``moderator.transports.telegram``)."""
    return ".".join(name.split(".")[:3])


def test_a_channel_imports_only_the_port_and_what_carries_no_game_logic() -> None:
    offences = {name: sorted(t for t in targets - ALLOWED_TO_CHANNELS - SHARED - {"moderator.transports"}
                             if not t.startswith(_own_package(name)))
                for name, targets in GRAPH.items() if name.startswith("moderator.transports.")}
    assert {k: v for k, v in offences.items() if v} == {}
    # The words people type are parsed by the channel that reads them; the grammar knows commands, not the game.
    assert GRAPH["moderator.grammar"] <= {"moderator.catalog", "moderator.commands"}
    # The web server's guards are plumbing: they reach none of the service's side.
    for name in ("moderator.guard", "moderator.limits"):
        assert GRAPH[name] <= {"moderator.limits"}, name


def test_the_twilio_channels_share_one_module_of_plumbing_and_it_imports_no_channel() -> None:
    shared = "moderator.transports.twilio_common"
    assert shared in SHARED and not _is_channel(shared)
    assert {"moderator.transports.sms", "moderator.transports.whatsapp"} <= {
        name for name, targets in GRAPH.items() if shared in targets}
    assert not any(_is_channel(t) for t in GRAPH[shared] if t.startswith("moderator.transports."))
    # Only SMS and WhatsApp: no channel reaches another channel's module.
    for name, targets in GRAPH.items():
        if name.startswith("moderator.transports.") and _is_channel(name):
            assert {t for t in targets if t.startswith("moderator.transports.") and _is_channel(t)
                    and not t.startswith(_own_package(name))} == set(), name


def test_the_architecture_doc_names_every_room_of_the_web_channel_and_only_what_is_in_them() -> None:
    import importlib
    import re

    doc = (PACKAGE.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = doc.split("## The web channel", 1)[1].split("\n## ", 1)[0]
    rooms = set(re.findall(r"^\| `(\w+)\.py` \|", section, flags=re.M))
    assert rooms == {p.stem for p in (PACKAGE / "transports" / "web").glob("*.py")}
    # Every function or class named as ``room.name``, and every method as ``Class.name`` of a room's class, is
    # there: a renamed one is renamed here too.
    modules = {room: importlib.import_module(f"moderator.transports.web.{room}") for room in rooms - {"__init__"}}
    classes = {name: value for module in modules.values() for name, value in vars(module).items()
               if isinstance(value, type) and value.__module__ == module.__name__}
    named = [(head, rest) for head, rest in re.findall(r"`(\w+)\.(\w+(?:\.\w+)?)`", section) if rest != "py"]
    checked = 0
    for head, rest in named:
        target: object = modules.get(head) or classes.get(head)
        if target is None:
            continue  # of another package (``game.decide``, ``Service.handle``)
        for name in rest.split("."):
            assert hasattr(target, name), f"{head}.{rest}"
            target = getattr(target, name)
        checked += 1
    assert checked >= 30
