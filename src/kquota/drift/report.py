"""Classify a plan into drift findings. Pure: a drift report is a plan read another way.

The planner already knows every difference; drift names each one for the operator:

- ``value_changed``: a declared key has another value on the cluster;
- ``key_added``: the cluster has a key the declared entity does not list;
- ``key_removed``: a declared key is missing on an entity the cluster has;
- ``entity_missing``: a declared entity is absent from the cluster;
- ``entity_undeclared``: an in-scope entity no file declares. With prune on, apply would
  remove it, so it is drift; with prune off it is reported as unmanaged and is not drift
  (otherwise a cluster adopted gradually would page someone every night).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from kquota.model import Entity
from kquota.plan.types import ChangeKind, IgnoreReason, Plan

REPORT_FORMAT_VERSION = 1


class DriftKind(Enum):
    VALUE_CHANGED = "value_changed"
    KEY_ADDED = "key_added"
    KEY_REMOVED = "key_removed"
    ENTITY_MISSING = "entity_missing"
    ENTITY_UNDECLARED = "entity_undeclared"


@dataclass(frozen=True, slots=True)
class Finding:
    entity: Entity
    kind: DriftKind
    key: str | None = None
    desired: float | None = None
    actual: float | None = None

    def to_data(self) -> dict[str, Any]:
        return {
            "entity": self.entity.to_json(),
            "kind": self.kind.value,
            "key": self.key,
            "desired": self.desired,
            "actual": self.actual,
        }


@dataclass(frozen=True)
class DriftReport:
    cluster: str | None
    findings: tuple[Finding, ...]
    unmanaged: int = 0
    """In-scope entities no file declares, left alone because prune is off."""
    prune: bool = False
    checked_at: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def drifted(self) -> bool:
        return bool(self.findings)

    def counts(self) -> dict[str, int]:
        c = Counter(f.kind for f in self.findings)
        return {k.value: c.get(k, 0) for k in DriftKind}

    @property
    def drifted_entities(self) -> int:
        return len({f.entity for f in self.findings})

    def to_data(self) -> dict[str, Any]:
        return {
            "format_version": REPORT_FORMAT_VERSION,
            "cluster": self.cluster,
            "checked_at": self.checked_at,
            "in_sync": not self.drifted,
            "prune": self.prune,
            "counts": self.counts(),
            "drifted_entities": self.drifted_entities,
            "unmanaged_entities": self.unmanaged,
            "findings": [f.to_data() for f in self.findings],
        }


def drift_report(plan: Plan, *, prune: bool, checked_at: str | None = None) -> DriftReport:
    """drift_report reads ``plan`` (desired vs the cluster) as drift findings."""
    findings: list[Finding] = []
    for alt in plan.alterations:
        if alt.kind is ChangeKind.DELETE and all(op.remove for op in alt.ops):
            # Only an undeclared entity loses every key: a declared one keeps at least one.
            findings.append(Finding(alt.entity, DriftKind.ENTITY_UNDECLARED))
            continue
        if alt.kind is ChangeKind.CREATE and all(op.before is None for op in alt.ops):
            findings.append(Finding(alt.entity, DriftKind.ENTITY_MISSING))
            continue
        for op in alt.ops:
            if op.remove:
                findings.append(Finding(alt.entity, DriftKind.KEY_ADDED, op.key, None, op.before))
            elif op.before is None:
                findings.append(Finding(alt.entity, DriftKind.KEY_REMOVED, op.key, op.value, None))
            else:
                findings.append(
                    Finding(alt.entity, DriftKind.VALUE_CHANGED, op.key, op.value, op.before)
                )
    unmanaged = plan.ignored_count(IgnoreReason.NOT_DECLARED)
    return DriftReport(plan.cluster, tuple(findings), unmanaged, prune, checked_at)
