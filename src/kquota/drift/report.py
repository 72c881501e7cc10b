"""Classify a plan into drift findings. Pure: a drift report is a plan read another way.

The planner already knows every difference; drift names each one for the operator:

- ``value_changed``: a declared key has another value on the cluster;
- ``key_added``: the cluster has a key the declared entity does not list;
- ``key_removed``: a declared key is missing on an entity the cluster has;
- ``entity_missing``: a declared entity is absent from the cluster;
- ``entity_undeclared``: an in-scope entity no file declares, with the values it has. With
  prune on, apply would remove it, so it is drift; with prune off it is reported as
  unmanaged and is not drift (otherwise a cluster adopted gradually would page someone every
  night);
- ``reverted_by_controller``: a difference that another controller makes on purpose
  (:mod:`kquota.plan.controllers`: Strimzi's Cluster Operator removing ``{user=<default>}``,
  its User Operator rewriting a ``KafkaUser``'s quotas). Applying again would only start a
  tug of war: the fix is in that controller's resource, so it is named, not a value change.

A finding on an entity that names a protected principal (``policy.protect``: the entity's
names read as a principal match a protected one) is marked ``protected``: repairing or
adopting it changes what a protected client may do.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from kquota.model import Entity
from kquota.plan.controllers import CLUSTER_OPERATOR, Controllers
from kquota.plan.types import ChangeKind, IgnoreReason, Plan
from kquota.policy import ProtectMatch

REPORT_FORMAT_VERSION = 1


class DriftKind(Enum):
    VALUE_CHANGED = "value_changed"
    KEY_ADDED = "key_added"
    KEY_REMOVED = "key_removed"
    ENTITY_MISSING = "entity_missing"
    ENTITY_UNDECLARED = "entity_undeclared"
    REVERTED_BY_CONTROLLER = "reverted_by_controller"


@dataclass(frozen=True, slots=True)
class Finding:
    entity: Entity
    kind: DriftKind
    key: str | None = None
    desired: float | None = None
    actual: float | None = None
    controller: str | None = None
    """who reverted it (``reverted_by_controller`` findings)"""
    values: tuple[tuple[str, float], ...] = ()
    """what the cluster has (``entity_undeclared`` findings), key by key"""
    protected: bool = False
    """the entity names a protected principal (``policy.protect``)"""

    def to_data(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "entity": self.entity.to_json(),
            "kind": self.kind.value,
            "key": self.key,
            "desired": self.desired,
            "actual": self.actual,
        }
        if self.controller is not None:
            data["controller"] = self.controller
        if self.values:
            data["values"] = dict(self.values)
        if self.protected:
            data["protected"] = True
        return data


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


def drift_report(
    plan: Plan,
    *,
    prune: bool,
    checked_at: str | None = None,
    controllers: Controllers | None = None,
    protect: Sequence[ProtectMatch] = (),
) -> DriftReport:
    """drift_report reads ``plan`` (desired vs the cluster) as drift findings; a finding
    that ``controllers`` explain is ``reverted_by_controller``; one on an entity naming a
    principal of ``protect`` is marked protected."""
    findings: list[Finding] = []
    for alt in plan.alterations:
        if alt.kind is ChangeKind.DELETE and all(op.remove for op in alt.ops):
            # Only an undeclared entity loses every key: a declared one keeps at least one.
            values = tuple((op.key, op.before) for op in alt.ops if op.before is not None)
            findings.append(Finding(alt.entity, DriftKind.ENTITY_UNDECLARED, values=values))
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
    if controllers is not None:
        findings = [_explained(f, controllers) for f in findings]
    if protect:
        findings = [_marked(f, protect) for f in findings]
    unmanaged = plan.ignored_count(IgnoreReason.NOT_DECLARED)
    return DriftReport(plan.cluster, tuple(findings), unmanaged, prune, checked_at)


_REMOVED = (DriftKind.ENTITY_MISSING, DriftKind.KEY_REMOVED)


def _marked(f: Finding, protect: Sequence[ProtectMatch]) -> Finding:
    """_marked: ``f`` marked protected when its entity's names, read as a principal, match
    a protected one (a default part names no principal: ``{user=<default>}`` is none)."""
    from dataclasses import replace

    from kquota.plan.resolver import Principal

    names = dict(f.entity.parts)
    principal = Principal(names.get("user"), names.get("client-id"), names.get("ip"))
    if any(m.matches(principal) for m in protect):
        return replace(f, protected=True)
    return f


def _explained(f: Finding, controllers: Controllers) -> Finding:
    """_explained: ``f`` as ``reverted_by_controller`` when it is what a controller does."""
    by = controllers.reverted_by(f.entity)
    if by is None:
        return f
    if by == CLUSTER_OPERATOR and not controllers.keeps_defaults and f.kind not in _REMOVED:
        return f  # that operator only removes defaults; anything else is someone else
    return Finding(
        f.entity,
        DriftKind.REVERTED_BY_CONTROLLER,
        f.key,
        f.desired,
        f.actual,
        controller=by,
        values=f.values,
    )
