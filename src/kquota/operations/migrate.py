"""The import operation: another tool's quota declarations as kquota desired-state YAML.

Files are read with the desired-state loader's own guards (regular files only, at most
256 MiB, a FIFO or device refused without blocking; folders walked for ``*.yaml``/``*.yml``
as ``validate`` walks them), converted by the source's pure converter, merged (an entity
declared twice is refused), and written by :func:`~kquota.desired.exportable.export_yaml`,
which reads its own output back through ``validate``'s loader: what is written always
validates, and an entity desired state cannot declare is refused with its source position.
Nothing is returned unless everything converted: a partial import would read as a migration
that silently dropped quotas.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from kquota.desired.exportable import export_yaml
from kquota.desired.loader import expand_paths, read_limited
from kquota.desired.problems import DesiredStateError, Problem, Problems
from kquota.display import safe_text
from kquota.migrate import jikkou, strimzi, terraform
from kquota.migrate.common import Declared, merge_declared
from kquota.model import Entity

Converter = Callable[[Sequence[tuple[str, bytes]], Problems], list[Declared]]

SOURCES: dict[str, Converter] = {
    "strimzi": strimzi.convert,
    "terraform": terraform.convert,
    "jikkou": jikkou.convert,
}
"""The tools ``kquota import --from`` reads, each with its converter."""

_YAML_SOURCES = frozenset({"strimzi", "jikkou"})


class ImportRefused(DesiredStateError):
    """ImportRefused: some declarations cannot be carried over; each problem says which,
    where and why. Nothing was written."""


@dataclass(frozen=True)
class Imported:
    """Imported is the desired-state YAML, how many entities it declares, and the notes
    about what was skipped (other kinds, other resource types)."""

    text: str
    entities: int
    warnings: tuple[Problem, ...]


def import_desired(source: str, paths: Sequence[Path]) -> Imported:
    """import_desired converts ``paths`` from ``source`` (a key of :data:`SOURCES`).

    Raises ImportRefused listing every declaration that cannot be carried over.
    """
    convert = SOURCES[source]
    problems = Problems()
    files = _files(source, paths, problems)
    read: list[tuple[str, bytes]] = []
    for path in files:
        data = read_limited(path, problems)
        if data is not None:
            read.append((str(path), data))
    declared = convert(read, problems)
    state = merge_declared(declared, problems)
    names = [safe_text(name) for name, _ in read]
    shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more files" if len(names) > 3 else "")
    exported = export_yaml(state, f"Imported by kquota from {source}: {shown}.")
    origin: dict[Entity, Declared] = {}
    for d in declared:
        origin.setdefault(d.entity, d)  # merge_declared kept the first
    for entity, why in exported.left_out:
        d = origin[entity]
        problems.items.append(
            Problem(d.at.file, d.at.line, d.at.column, f"{d.what}: kquota cannot declare it: {why}")
        )
    if problems.items:
        raise ImportRefused(problems.items, problems.warnings)
    return Imported(exported.text, len(state), problems.warnings)


def _files(source: str, paths: Sequence[Path], problems: Problems) -> list[Path]:
    if source in _YAML_SOURCES:
        return expand_paths(paths, problems)
    kept: list[Path] = []
    for path in paths:
        try:
            is_dir = stat.S_ISDIR(os.stat(path).st_mode)
        except OSError:
            is_dir = False  # expand_paths names what is wrong with it
        if is_dir:
            problems.add_path(
                str(path),
                "a folder",
                "the JSON files of terraform show -json, or terraform.tfstate",
            )
        else:
            kept.append(path)
    return expand_paths(kept, problems)
