"""Loading and validating desired state for an operation: the quotas, their digest, the
loader's warnings, and (validate) every problem found."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from kquota.errors import UsageError
from kquota.model import Entity, QuotaState

if TYPE_CHECKING:
    from kquota.target import Target

DEFAULT_PATH = Path("quotas")


@dataclass(frozen=True)
class LoadedDesired:
    """LoadedDesired is what the operations need from ``kquota.desired.load_desired``."""

    quotas: QuotaState
    digest: str | None
    warnings: tuple[object, ...] = ()
    order: tuple[Entity, ...] | None = field(default=None, init=False, repr=False, compare=False)
    """order is the entities of ``quotas`` sorted (:func:`~kquota.model.sorted_entities`) when
    the loader sorted them for the digest, else None: the planner walks them
    (:func:`kquota.plan.planner.plan`'s ``order``) and need not sort its alterations again."""


def load_desired_state(paths: Sequence[Path]) -> LoadedDesired:
    """load_desired_state loads and checks desired-state YAML (files or folders).

    Raises :class:`kquota.desired.DesiredStateError` (with its ``warnings``) on bad input.
    Imported lazily: operations that read no YAML (export, resolve of a snapshot) skip the
    loader.
    """
    from kquota import argcheck as check
    from kquota.desired import load_desired
    from kquota.runtime import progress

    checked = check.paths(paths, "load_desired_state: paths")
    with progress.phase("load") as step:
        result = load_desired(checked)
        step.count = len(result.quotas)
    loaded = LoadedDesired(result.quotas, result.digest, tuple(result.warnings))
    object.__setattr__(loaded, "order", result.order)  # the digest's sort, made once
    return loaded


@dataclass(frozen=True)
class DesiredPaths:
    """DesiredPaths is desired state still to be read: YAML files or folders (none: the
    target's folders, else ``quotas/``). Plan and apply read it before their first
    connection."""

    paths: tuple[Path, ...] = ()

    def load(self, target: Target) -> LoadedDesired:
        """load reads and checks the desired state at these paths for ``target``."""
        return load_desired_state(target.desired_paths(self.paths))


@dataclass(frozen=True)
class DesiredValidation:
    """DesiredValidation is one check of desired-state paths, as ``kquota validate`` does it:
    how many entities and files were read, or every problem found (``file:line:column``
    each), and the warnings either way. ``cluster`` names the kquota.yaml cluster whose
    paths these are, if any."""

    cluster: str | None
    paths: tuple[Path, ...]
    entities: int = 0
    files: int = 0
    problems: tuple[object, ...] = ()
    warnings: tuple[object, ...] = ()

    @property
    def ok(self) -> bool:
        """ok: no problem was found."""
        return not self.problems


def _validate(paths: Sequence[Path], cluster: str | None) -> DesiredValidation:
    from kquota.desired import DesiredStateError, load_desired
    from kquota.runtime import progress

    try:
        with progress.phase("load") as step:
            state = load_desired(list(paths))
            step.count = len(state.quotas)
    except DesiredStateError as e:
        return DesiredValidation(
            cluster, tuple(paths), problems=tuple(e.problems), warnings=tuple(e.warnings)
        )
    return DesiredValidation(
        cluster, tuple(paths), len(state.quotas), len(state.files), (), tuple(state.warnings)
    )


def validate_desired(
    paths: Sequence[Path] = (), *, config: Path | None = None
) -> tuple[DesiredValidation, ...]:
    """validate_desired checks desired-state YAML offline with the broker's rules, all
    problems at once, and never raises for what is wrong in the files.

    ``paths`` are validated together. Without them: each cluster of ``config`` (default: a
    ``kquota.yaml`` found here) separately, as plan reads them (two clusters may declare the
    same entity); without one, ``quotas/``; without that, a :class:`~kquota.UsageError`.
    """
    from kquota import argcheck as check

    paths = check.paths(paths, "validate_desired: paths")
    config = None if config is None else check.path(config, "validate_desired: config")
    if paths:
        return (_validate(paths, None),)
    from kquota.config.project import find_config, load_config

    found = config or find_config()
    if found is not None:
        clusters = load_config(found).clusters
        return tuple(_validate(c.desired_paths(), n) for n, c in sorted(clusters.items()))
    if DEFAULT_PATH.is_dir():
        return (_validate([DEFAULT_PATH], None),)
    raise UsageError("no PATHS given, no kquota.yaml and no quotas/ folder here")
