"""Waves of a fleet rollout: which clusters go together, and in what order. Pure.

Waves come from ``rollout:`` in kquota.yaml or from ``--wave`` flags
(``GLOBS[:MAX_PARALLEL[:SOAK]]``, globs comma-separated). A cluster goes in the first wave
whose globs match its name, so a closing ``"*"`` wave catches the rest; a cluster no wave
matches is an error, never silently left out. A wave that matches no cluster is dropped.
Without any wave, the first cluster by name is the canary wave and the rest the second.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kquota.errors import UsageError


@dataclass(frozen=True)
class Wave:
    """Wave is one step of the rollout: the globs it takes, and its settings."""

    globs: tuple[str, ...]
    max_parallel: int = 1
    soak: float = 0.0
    """Seconds drift must stay clean after the wave before the next starts (0: no soak)."""

    def takes(self, name: str) -> bool:
        return any(fnmatch.fnmatchcase(name, g) for g in self.globs)


@dataclass(frozen=True)
class PlannedWave:
    """PlannedWave is a wave with the clusters it takes, in name order."""

    number: int
    wave: Wave
    clusters: tuple[str, ...]


def parse_wave(text: str) -> Wave:
    """parse_wave reads ``--wave 'eu-*,us-1:2:5m'``: globs, then max parallel, then soak."""
    from kquota.runtime.deadline import parse_duration

    globs_text, _, rest = text.partition(":")
    globs = tuple(g.strip() for g in globs_text.split(",") if g.strip())
    if not globs:
        raise UsageError(
            f"--wave {text!r}: no cluster given; allowed: GLOB[,GLOB…][:MAX_PARALLEL[:SOAK]], "
            "e.g. 'canary-eu' or 'eu-*:2:10m'"
        )
    parallel_text, _, soak_text = rest.partition(":")
    parallel = 1
    if parallel_text:
        if not parallel_text.isdigit() or not 1 <= int(parallel_text) <= 64:
            raise UsageError(
                f"--wave {text!r}: max parallel {parallel_text!r} is not a whole number "
                "from 1 to 64"
            )
        parallel = int(parallel_text)
    soak = (
        parse_duration(soak_text, "--wave soak", minimum=1.0, maximum=7 * 24 * 3600.0)
        if soak_text
        else 0.0
    )
    return Wave(globs, parallel, soak)


def default_waves(names: Sequence[str]) -> list[Wave]:
    """default_waves: the first cluster by name alone (the canary), then all the others."""
    ordered = sorted(names)
    if len(ordered) <= 1:
        return [Wave(tuple(ordered))] if ordered else []
    return [Wave((ordered[0],)), Wave(("*",))]


def plan_waves(names: Sequence[str], waves: Sequence[Wave]) -> list[PlannedWave]:
    """plan_waves puts every cluster in the first wave that takes it; UsageError naming the
    clusters no wave takes."""
    taken: dict[int, list[str]] = {}
    left = []
    for name in sorted(names):
        index = next((i for i, w in enumerate(waves) if w.takes(name)), None)
        if index is None:
            left.append(name)
        else:
            taken.setdefault(index, []).append(name)
    if left:
        raise UsageError(
            f"no wave takes the clusters {', '.join(left)}; add them to a wave "
            '(rollout: in kquota.yaml, or --wave), e.g. a last wave of "*"'
        )
    out: list[PlannedWave] = []
    for i, wave in enumerate(waves):
        if i in taken:
            out.append(PlannedWave(len(out) + 1, wave, tuple(taken[i])))
    return out


RECORD_VERSION = 1
COMMITTED = "committed"
UNCHANGED = "unchanged"
FAILED = "failed"
NOT_ATTEMPTED = "not attempted"
DONE = frozenset({COMMITTED, UNCHANGED})


@dataclass
class ClusterOutcome:
    """ClusterOutcome is what the rollout did to one cluster."""

    cluster: str
    wave: int
    plan_id: str
    status: str = NOT_ATTEMPTED
    detail: str = ""
    signal: int | None = None
    """The signal (SIGINT, SIGTERM) that stopped this cluster's apply, if one did."""
    committed: tuple[int, ...] = ()
    """The reviewed plan's alterations this rollout committed, by position, in any attempt
    (``--resume`` goes on from them, docs/rollout.md)."""
    audited: tuple[int, ...] = ()
    """Those of ``committed`` whose audit events were confirmed."""

    def to_data(self) -> dict[str, Any]:
        return {
            "cluster": self.cluster,
            "wave": self.wave,
            "plan_id": self.plan_id,
            "status": self.status,
            "detail": self.detail,
            "committed": list(self.committed),
            "audited": list(self.audited),
        }


@dataclass
class FleetApplyReport:
    """FleetApplyReport is every cluster's outcome, in rollout order, and how to resume."""

    plans_dir: Path
    waves: tuple[PlannedWave, ...]
    clusters: list[ClusterOutcome] = field(default_factory=list)
    desired_root: Path | None = None
    stopped: str | None = None
    signal: int | None = None
    """The signal that stopped the rollout (its exit status is 128 + it), if one did."""

    @property
    def ok(self) -> bool:
        return self.stopped is None and all(c.status in DONE for c in self.clusters)

    def to_data(self) -> dict[str, Any]:
        return {
            "format_version": RECORD_VERSION,
            "ok": self.ok,
            "stopped": self.stopped,
            "waves": [
                {"wave": w.number, "clusters": list(w.clusters),
                 "max_parallel": w.wave.max_parallel, "soak_seconds": w.wave.soak}
                for w in self.waves
            ],
            "clusters": [c.to_data() for c in self.clusters],
        }  # fmt: skip
