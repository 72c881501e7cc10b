"""Saved plans that cannot go stale silently.

A saved plan pins the cluster id it was made for and a fingerprint of the snapshot values of
every entity it alters. Before anything is written, apply describes the cluster again and
refuses a plan made for another cluster or one whose entities changed since (Terraform's
"Saved plan is stale", octoDNS's checksum). Pure: the caller does the describing.
"""

from __future__ import annotations

from kquota.errors import KquotaError
from kquota.model import Entity, QuotaState
from kquota.plan.fingerprint import snapshot_fingerprint
from kquota.plan.types import Plan

_SHOW = 10


class StalePlanError(KquotaError):
    """StalePlanError: the saved plan no longer matches the cluster; nothing was written."""


def _fmt(v: float | None) -> str:
    if v is None:
        return "unset"
    return str(int(v)) if v.is_integer() and abs(v) < 2**63 else repr(v)


def changed_entities(plan: Plan, current: QuotaState) -> list[tuple[Entity, str]]:
    """changed_entities lists the plan's entities whose planned-against values moved."""
    changed = []
    for alt in plan.alterations:
        have = current.get(alt.entity, {})
        for op in alt.ops:
            now = have.get(op.key)
            if now != op.before and not (now is None and op.before is None):
                changed.append((alt.entity, f"{op.key} was {_fmt(op.before)}, now {_fmt(now)}"))
                break
    return changed


def check_not_stale(plan: Plan, current: QuotaState, current_cluster_id: str | None) -> None:
    """check_not_stale raises StalePlanError when ``plan`` must not be applied to ``current``."""
    if plan.cluster_id and current_cluster_id and plan.cluster_id != current_cluster_id:
        raise StalePlanError(
            f"this plan was made for cluster id {plan.cluster_id}, but the target cluster's id "
            f"is {current_cluster_id}; nothing was applied"
        )
    if plan.snapshot_fingerprint is None:
        return
    now = snapshot_fingerprint(current, (a.entity for a in plan.alterations))
    if now == plan.snapshot_fingerprint:
        return
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
