"""load_desired: from paths (files and folders) to one validated :class:`DesiredState`.

A path may be a file (read whatever its name) or a directory, read recursively for
``*.yaml`` and ``*.yml`` files in sorted order, skipping hidden files and folders (``.git``)
and not following symlinked folders. Every problem of every file is collected, then raised
once as :class:`DesiredStateError`.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from kquota.desired.document import ParsedFile, read_document
from kquota.desired.merge import merge
from kquota.desired.nodes import gc_paused
from kquota.desired.problems import Problem, Problems
from kquota.desired.reader import read_nodes
from kquota.desired.state import DesiredState

SUFFIXES = (".yaml", ".yml")


def load_desired(paths: Sequence[Path]) -> DesiredState:
    """load_desired reads, validates and merges desired-state files.

    Raises DesiredStateError listing every problem, each with ``file:line:column``.
    """
    with gc_paused():
        return _load(paths)


def _load(paths: Sequence[Path]) -> DesiredState:
    problems = Problems()
    files = expand_paths(paths, problems)
    parsed: list[ParsedFile] = []
    for path in files:
        name = str(path)
        try:
            data = path.read_bytes()
        except OSError as e:
            problems.items.append(
                Problem(name, 0, 0, f"cannot read: {e.strerror}; allowed: a readable file")
            )
            continue
        root, ok = read_nodes(name, data, problems)
        if ok:
            parsed.append(read_document(name, root, problems))
    quotas, sources = merge(parsed, problems)
    problems.raise_if_any()
    return DesiredState(quotas, sources, tuple(str(f) for f in files))


def expand_paths(paths: Sequence[Path], problems: Problems) -> list[Path]:
    """expand_paths lists the files to read, each once, in the order given (folders sorted)."""
    out: list[Path] = []
    seen: set[Path] = set()
    for path in paths:
        if path.is_dir():
            found = _walk(path)
            if not found:
                problems.items.append(
                    Problem(
                        str(path),
                        0,
                        0,
                        "no *.yaml or *.yml files in this folder; "
                        "allowed: a folder with desired-state files "
                        "(an empty desired state needs a file with quotas: [])",
                    )
                )
        elif path.exists():
            found = [path]
        else:
            problems.items.append(
                Problem(str(path), 0, 0, "no such file or folder; allowed: an existing path")
            )
            continue
        for f in found:
            key = f.resolve()
            if key not in seen:
                seen.add(key)
                out.append(f)
    return out


def _walk(folder: Path) -> list[Path]:
    found: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        found.extend(
            Path(dirpath, f) for f in filenames if f.endswith(SUFFIXES) and not f.startswith(".")
        )
    return sorted(found, key=lambda p: p.relative_to(folder).parts)
