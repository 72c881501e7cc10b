"""Saved plans that cannot go stale silently.

A saved plan pins the cluster id it was made for and a fingerprint of the snapshot values of
every entity it alters. Before anything is written, apply describes the cluster again and
refuses a plan made for another cluster or one whose entities changed since (Terraform's
"Saved plan is stale", octoDNS's checksum). Pure: the caller does the describing.

A plan whose apply was cut short must converge when re-run, so an entity that already shows
every op of the plan counts as applied, not as changed: it is put back to its planned-against
values (only the op keys move) before the fingerprint is compared, which keeps the check
exact for every other key, and the applier skips it.
"""

from __future__ import annotations

from kquota.display import number
from kquota.errors import KquotaError
from kquota.model import Entity, QuotaState, QuotaValues
from kquota.plan.fingerprint import snapshot_fingerprint
from kquota.plan.types import Alteration, Plan

_SHOW = 10


class StalePlanError(KquotaError):
    """StalePlanError: the saved plan no longer matches the cluster; nothing was written."""


def _fmt(v: float | None) -> str:
    if v is None:
        return "unset"
    return number(v, long_range=True)


def is_applied(alt: Alteration, have: QuotaValues) -> bool:
    """is_applied: the cluster already shows every op of ``alt``."""
    return all(
        (op.key not in have) if op.remove else (have.get(op.key) == op.value) for op in alt.ops
    )


def _as_planned(alt: Alteration, have: QuotaValues) -> QuotaValues | None:
    """_as_planned puts an applied entity's op keys back to their before values."""
    before = dict(have)
    for op in alt.ops:
        if op.before is None:
            before.pop(op.key, None)
        else:
            before[op.key] = op.before
    return before or None


def planned_fingerprint(plan: Plan, current: QuotaState, applied: frozenset[Entity]) -> str:
    """planned_fingerprint is the fingerprint of ``plan``'s entities in ``current`` with the
    ``applied`` ones (each showing every op of the plan) put back to their planned-against
    values: the plan's own fingerprint when nothing else of its entities changed."""
    as_planned = dict(current)
    for alt in plan.alterations:
        if alt.entity in applied:
            values = _as_planned(alt, current.get(alt.entity, {}))
            if values is None:
                as_planned.pop(alt.entity, None)
            else:
                as_planned[alt.entity] = values
    return snapshot_fingerprint(as_planned, (a.entity for a in plan.alterations))


def changed_entities(plan: Plan, current: QuotaState) -> list[tuple[Entity, str]]:
    """changed_entities lists the plan's entities whose planned-against values moved."""
    changed = []
    for alt in plan.alterations:
        have = current.get(alt.entity, {})
        if is_applied(alt, have):
            continue
        for op in alt.ops:
            now = have.get(op.key)
            if now != op.before:
                changed.append((alt.entity, f"{op.key} was {_fmt(op.before)}, now {_fmt(now)}"))
                break
    return changed


def check_not_stale(
    plan: Plan, current: QuotaState, current_cluster_id: str | None
) -> frozenset[Entity]:
    """check_not_stale raises StalePlanError when ``plan`` must not be applied to ``current``.

    It returns the entities that already show the plan's ops (a re-run after an interrupted
    apply); the applier leaves them out.
    """
    if plan.cluster_id and not current_cluster_id:
        raise StalePlanError(
            f"this plan was made for cluster id {plan.cluster_id}, but the target cluster "
            "reports no cluster id, so it cannot be checked; nothing was applied"
        )
    if plan.cluster_id and plan.cluster_id != current_cluster_id:
        raise StalePlanError(
            f"this plan was made for cluster id {plan.cluster_id}, but the target cluster's id "
            f"is {current_cluster_id}; nothing was applied"
        )
    applied = frozenset(
        a.entity for a in plan.alterations if is_applied(a, current.get(a.entity, {}))
    )
    if plan.snapshot_fingerprint is None:
        return applied
    if planned_fingerprint(plan, current, applied) == plan.snapshot_fingerprint:
        return applied
    changed = changed_entities(plan, current)
    lines = [f"  {entity}: {detail}" for entity, detail in changed[:_SHOW]]
    if len(changed) > _SHOW:
        lines.append(f"  … and {len(changed) - _SHOW} more")
    if not changed:
        lines.append("  (other keys of its entities changed)")
    raise StalePlanError(
        "saved plan is stale: the cluster changed since it was planned; nothing was applied. "
        "Plan again and review the new plan.\n" + "\n".join(lines)
    )
