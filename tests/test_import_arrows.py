"""The layout's arrows hold: imports point inward (docs/DESIGN: cli -> operations -> ... -> model).

Every import counts, at module level or inside a function: a lazy import is still an arrow.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

import kquota

SRC = Path(kquota.__file__).parent

FORBIDDEN = [
    ("plan", "kafka"),
    ("render", "kafka"),
    ("render", "desired"),
    ("kafka", "plan"),
    ("cli", "kafka"),
    ("operations", "cli"),
    ("target", "cli"),
]
"""(from package, to package) pairs no import may draw."""


def _module_name(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> Iterator[tuple[str, int]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from ((a.name, node.lineno) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{path}:{node.lineno}: kquota imports absolutely"
            base = node.module or ""
            yield base, node.lineno
            # ``from kquota import cluster`` draws an arrow to kquota.cluster
            yield from ((f"{base}.{a.name}", node.lineno) for a in node.names)


def _top(module: str) -> str | None:
    """The first part below ``kquota`` (a package or a top-level module), or None."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "kquota" else None


def edges() -> list[tuple[str, str, str]]:
    """Every import between kquota's parts: (from module, to module, file:line)."""
    out: set[tuple[str, str, str]] = set()
    for path in sorted(SRC.rglob("*.py")):
        source = _module_name(path)
        for target, line in _imports(path):
            if _top(target) is not None:
                out.add((source, target, f"{path.relative_to(SRC)}:{line}"))
    return sorted(out)


@pytest.mark.parametrize(("src", "dst"), FORBIDDEN, ids=[f"{a}->{b}" for a, b in FORBIDDEN])
def test_no_forbidden_arrow(src: str, dst: str) -> None:
    found = sorted({where for a, b, where in edges() if _top(a) == src and _top(b) == dst})
    assert found == [], f"{src} must not import {dst}: {found}"


def test_the_arrow_finder_sees_lazy_imports() -> None:
    found = {b for a, b, _ in edges() if a == "kquota.operations.plan"}
    assert "kquota.engines.local" in found  # imported inside a function
    assert "kquota.target" in found  # at module level


def test_engines_and_fleet_do_not_import_each_other_both_ways() -> None:
    tops = {(_top(a), _top(b)) for a, b, _ in edges()}
    assert not {("engines", "fleet"), ("fleet", "engines")} <= tops, "engines/ and fleet/ cycle"
