"""The house's walls, read from the code's imports (every import, those inside functions included).

Channels translate and nothing else: no module under ``moderator/transports/`` imports the engine, the store or
the renderer (the board image comes through ``moderator.board``, which the port carries); no two modules import
each other, directly or in a longer cycle.
"""

from __future__ import annotations

import ast
from pathlib import Path

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


def test_no_channel_imports_the_engine_the_store_the_renderer_or_the_service() -> None:
    offences = {
        name: sorted(i for i in targets if i.startswith(FORBIDDEN_TO_CHANNELS))
        for name, targets in GRAPH.items() if name.startswith("moderator.transports.")
    }
    assert {k: v for k, v in offences.items() if v} == {}


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


ALLOWED_TO_CHANNELS = frozenset({"moderator.channels", "moderator.commands", "moderator.settings",
                                 "moderator.catalog", "moderator.grammar", "moderator.qr", "moderator.board",
                                 "moderator.guard"})
"""The port and what carries no game logic (docs/channels.md): a channel module imports nothing else of ours."""


def own_room(name: str, target: str) -> bool:
    """``target`` is of the channel ``name`` is of (a channel may be a package of rooms), or is their package."""
    channel = ".".join(name.split(".")[:3])
    return target in (name.rsplit(".", 1)[0], channel) or target.startswith(channel + ".")


def test_a_channel_imports_only_the_port_and_what_carries_no_game_logic() -> None:
    offences = {name: sorted(t for t in targets - ALLOWED_TO_CHANNELS if not own_room(name, t))
                for name, targets in GRAPH.items() if name.startswith("moderator.transports.")}
    assert {k: v for k, v in offences.items() if v} == {}
    # The words people type are parsed by the channel that reads them; the grammar knows commands, not the game.
    assert GRAPH["moderator.grammar"] <= {"moderator.catalog", "moderator.commands"}
    # The web server's guards are plumbing: they reach none of the service's side.
    for name in ("moderator.guard", "moderator.limits"):
        assert GRAPH[name] <= {"moderator.limits"}, name


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
