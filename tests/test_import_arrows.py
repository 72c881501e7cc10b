"""The house's picture is pinned: its arrows point inward and it has no import circle.

Every import counts, at module level, inside a function or under ``TYPE_CHECKING``: a lazy
import is still an arrow, and a circle closed by one is still a circle. The parts and the
arrows they must never draw are those of the layout (docs/architecture.md). An arrow that
exists today and cannot go yet is listed in :data:`KNOWN` with why, so the list only shrinks:
a known arrow that no longer exists fails too, to be struck from it.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator
from pathlib import Path

import pytest

import kquota

SRC = Path(kquota.__file__).parent

PARTS = {
    "cli": ("kquota.cli", "kquota.__main__"),
    "operations": ("kquota.operations",),
    "api": ("kquota.api",),
    "fleet": ("kquota.fleet",),
    "devbroker": ("kquota.devbroker",),
    "files": ("kquota.planfile", "kquota.snapshot", "kquota.config"),
    "migrate": ("kquota.migrate",),
    "apply": ("kquota.apply",),
    "audit": ("kquota.audit", "kquota.audit_keys"),
    "usage": ("kquota.usage",),
    "principals": ("kquota.principals",),
    "planner": ("kquota.plan.planner", "kquota.plan.rules", "kquota.plan.resolver"),
    "plan": ("kquota.plan", "kquota.drift"),
    "render": ("kquota.render",),
    "desired": ("kquota.desired",),
    "history": ("kquota.history",),
    "target": ("kquota.target",),
    "kafka": ("kquota.kafka",),
    "model": (
        "kquota.model",
        "kquota.policy",
        "kquota.principal",
        "kquota.display",
        "kquota.quotakeys",
        "kquota.names",
        "kquota.errors",
        "kquota.secrets",
        "kquota.confusables",
        "kquota.argcheck",
        "kquota.units",
        "kquota.timestamps",
        "kquota.properties",
        "kquota.localfile",
        "kquota.version",
    ),
    "runtime": ("kquota.runtime",),
    "face": ("kquota",),
}
"""The parts of the house, each a set of module prefixes (the longest prefix wins)."""


def _out_of(src: str, but: tuple[str, ...], why: str) -> list[tuple[str, str, str]]:
    """(src, every other part but ``but``, why): a floor that stands on ``but`` alone."""
    return [(src, dst, why) for dst in PARTS if dst not in (src, "face", *but)]


def _into(dst: str, but: tuple[str, ...], why: str) -> list[tuple[str, str, str]]:
    """(every other part but ``but``, dst, why): a floor only ``but`` may import."""
    return [(src, dst, why) for src in PARTS if src not in (dst, "face", *but)]


FORBIDDEN = [
    ("files", "planner", "a file format reads and writes plans; it does not plan"),
    ("plan", "files", "the plan model knows no file: the saved plan imports the plan"),
    ("planner", "files", "the planner knows no file"),
    ("plan", "render", "the plan is data; rendering it is render's"),
    ("planner", "render", "the planner is pure"),
    ("plan", "usage", "the plan carries the throttle replay's report; computing it is usage's"),
    ("planner", "usage", "the planner is pure: observed usage is replayed above it"),
    ("kafka", "render", "the wire shows names through kquota.display"),
    ("desired", "render", "desired state shows names through kquota.display, below render"),
    ("apply", "render", "the applier shows names through kquota.display, below render"),
    ("files", "render", "a file format shows names through kquota.display, below render"),
    ("migrate", "render", "a migration reads other tools' files into desired state: no display"),
    ("usage", "render", "usage measures; rendering its report is render's"),
    ("principals", "render", "discovering principals shows nothing"),
    ("history", "render", "the trail is data; rendering it is render's"),
    ("audit", "render", "the audit log writes records, not renderings"),
    ("render", "fleet", "a renderer formats the rollout's report, which is data beside the plan"),
    ("plan", "kafka", "planning is pure: no network"),
    ("planner", "kafka", "planning is pure: no network"),
    ("migrate", "kafka", "a migration reads files; it reaches no cluster"),
    ("usage", "kafka", "usage reads samples from Prometheus or files, never the brokers"),
    ("render", "kafka", "a renderer formats results; it fetches nothing"),
    ("render", "desired", "a renderer formats results; it reads no files"),
    ("render", "apply", "a renderer formats results; it writes nothing"),
    ("kafka", "plan", "the wire knows nothing of plans"),
    ("kafka", "planner", "the wire knows nothing of plans"),
    ("kafka", "apply", "the wire knows nothing of applying"),
    ("kafka", "usage", "the wire knows nothing of usage"),
    ("cli", "kafka", "a command goes through an operation"),
    ("history", "target", "the trail records an Origin, the model's; it knows no Target"),
    ("usage", "fleet", "the fleet reads usage per cluster; usage knows no fleet"),
    ("devbroker", "plan", "the dev broker starts Kafka; it knows no plan"),
    ("devbroker", "apply", "the dev broker starts Kafka; it applies nothing"),
    *_into("cli", (), "anything -> cli: the CLI is the top floor"),
    *_into("operations", ("cli",), "an operation owns a road: only a command drives it"),
    *_out_of("model", (), "the model is the ground floor: it imports nothing of kquota's"),
    *_out_of("runtime", ("model",), "the process's helpers stand on the model alone"),
]
"""(from part, to part, why): arrows no import may draw."""

KNOWN: dict[tuple[str, str], str] = {
    ("kquota.planfile.reader", "kquota.render.json"): (
        "the saved plan is the JSON plan render writes: reread round-trips through it"
    ),
    ("kquota.planfile.writer", "kquota.render.json"): (
        "the saved plan is the JSON plan render writes"
    ),
}
"""(from module, to module): forbidden arrows that stand today, each with why."""

KNOWN_CIRCLES: list[list[str]] = []
"""Import circles that stand today, each with why: the list only shrinks."""


def _module_name(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in sorted(SRC.rglob("*.py"))}


def _imports(path: Path) -> Iterator[tuple[str, int]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from ((a.name, node.lineno) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{path}:{node.lineno}: kquota imports absolutely"
            base = node.module or ""
            # ``from kquota import argcheck`` is an arrow to kquota.argcheck, and
            # ``from kquota.model import Entity`` one to kquota.model.
            yield from ((f"{base}.{a.name}", node.lineno) for a in node.names)


def _module(name: str) -> str | None:
    """The kquota module ``name`` is, or is a name of (the longest module prefix)."""
    while name:
        if name in MODULES:
            return name
        name = name.rpartition(".")[0]
    return None


@functools.cache
def edges() -> list[tuple[str, str, str]]:
    """Every import between kquota's modules: (from module, to module, file:line)."""
    out: set[tuple[str, str, str]] = set()
    for source, path in MODULES.items():
        for name, line in _imports(path):
            target = _module(name)
            if target is not None and target != source:
                out.add((source, target, f"{path.relative_to(SRC)}:{line}"))
    return sorted(out)


def part(module: str) -> str:
    """The part ``module`` belongs to: the longest matching prefix; the face is ``kquota``
    alone, and a module no part names is ``"unplaced"`` (never the face's)."""
    if module == "kquota":
        return "face"
    best, length = "unplaced", 0
    for name, prefixes in PARTS.items():
        for prefix in prefixes if name != "face" else ():
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > length:
                best, length = name, len(prefix)
    return best


def test_every_module_is_on_a_part() -> None:
    """A new package or root module is placed in :data:`PARTS`, so the rules see it: one
    that falls to no part would escape every rule."""
    assert sorted(m for m in MODULES if part(m) == "unplaced") == []
    assert part("kquota.usage.replay") == "usage"
    assert part("kquota.plan.planner") == "planner"
    assert part("kquota.plan.replay") == "plan"


@pytest.mark.parametrize(
    ("src", "dst", "why"), FORBIDDEN, ids=[f"{a}->{b}" for a, b, _ in FORBIDDEN]
)
def test_no_forbidden_arrow(src: str, dst: str, why: str) -> None:
    found = sorted(
        f"{where} ({b})"
        for a, b, where in edges()
        if part(a) == src and part(b) == dst and (a, b) not in KNOWN
    )
    assert found == [], f"{src} must not import {dst} ({why}): {found}"


def test_known_exceptions_still_stand() -> None:
    """A known arrow that is gone is struck from KNOWN: the list only shrinks."""
    drawn = {(a, b) for a, b, _ in edges()}
    assert sorted(set(KNOWN) - drawn) == []


def test_nothing_imports_the_package_face() -> None:
    """The face (kquota/__init__) only hands names on: inside, modules import each other."""
    found = sorted(where for a, b, where in edges() if b == "kquota" and a != "kquota")
    assert found == []


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_import_circle_lazy_imports_included() -> None:
    graph: dict[str, set[str]] = {m: set() for m in MODULES}
    for a, b, _ in edges():
        if a != "kquota":  # the face hands names on lazily; nothing inside imports it
            graph[a].add(b)
    assert _circles(graph) == KNOWN_CIRCLES


def test_the_circle_finder_finds_a_circle() -> None:
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_the_arrow_finder_sees_lazy_imports() -> None:
    found = {b for a, b, _ in edges() if a == "kquota.operations.plan"}
    assert "kquota.plan.planner" in found  # imported inside a function
    assert "kquota.target" in found  # at module level
