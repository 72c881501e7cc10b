"""The live plan held against the plan that was reviewed. Pure: the caller makes the live plan.

A plan made from snapshots (``fleet plan``) records no cluster id, so it is never applied as
it is: the cluster is planned again live, and that live plan must be the reviewed one, the
same alterations (every op with its before value) and the same snapshot fingerprint (the
altered entities hold on the cluster exactly what the snapshot said). An empty live plan is
held against it too: a reviewed change the cluster already shows was made by someone else
since the review, which is not what was reviewed.

A rollout resumed after an attempt that committed some or all of the reviewed changes
(``fleet apply --resume``) names those entities (``done``, from its own record): each must
show every op of the reviewed plan, the live plan must be the reviewed one without them, and
the snapshot fingerprint is compared with the done entities put back to their reviewed
before values (as :func:`kquota.apply.staleness.check_not_stale` does for a saved plan), so
every other key of every reviewed entity is still exactly as the snapshot said.
"""

from __future__ import annotations

from kquota.apply.staleness import is_applied, planned_fingerprint
from kquota.errors import KquotaError
from kquota.model import Entity, QuotaState, display_entity
from kquota.plan.types import Plan

_SHOW = 10


class PlanDiffers(KquotaError):
    """PlanDiffers: the cluster's live plan is not the reviewed one; nothing was written."""


def differences(
    reviewed: Plan,
    live: Plan,
    done: frozenset[Entity] = frozenset(),
    current: QuotaState | None = None,
) -> list[str]:
    """differences says how the live plan differs from the reviewed one (empty: the same),
    the ``done`` entities (committed by this rollout already) held against the ``current``
    live state instead of the live plan."""
    state = current or {}
    lost = [
        a.entity
        for a in reviewed.alterations
        if a.entity in done and not is_applied(a, state.get(a.entity, {}))
    ]
    out = []
    mine = {a.entity: a for a in reviewed.alterations if a.entity not in done}
    theirs = {a.entity: a for a in live.alterations}
    for entity in [*mine, *(e for e in theirs if e not in mine and e not in lost)]:
        a, b = mine.get(entity), theirs.get(entity)
        if a is None:
            out.append(f"{display_entity(entity)}: not in the reviewed plan")
        elif b is None:
            out.append(f"{display_entity(entity)}: in the reviewed plan, not in the live one")
        elif (a.kind, a.ops) != (b.kind, b.ops):
            out.append(f"{display_entity(entity)}: its changes differ")
    out += [
        f"{display_entity(e)}: committed by this rollout, but the cluster no longer shows "
        "its reviewed values"
        for e in lost
    ]
    if out:
        return out
    now = planned_fingerprint(reviewed, state, done) if done else live.snapshot_fingerprint
    if reviewed.snapshot_fingerprint != now:
        out.append("other keys of the altered entities changed since the snapshot")
    return out


def check_reviewed(
    reviewed: Plan,
    live: Plan,
    label: str | None,
    done: frozenset[Entity] = frozenset(),
    current: QuotaState | None = None,
) -> None:
    """check_reviewed raises :class:`PlanDiffers` naming the cluster ``label`` when the live
    plan is not the reviewed one (without the ``done`` entities, which ``current`` must show
    as reviewed), before anything is written."""
    found = differences(reviewed, live, done, current)
    if not found:
        return
    shown = "\n".join(f"  {d}" for d in found[:_SHOW])
    more = f"\n  … and {len(found) - _SHOW} more" if len(found) > _SHOW else ""
    raise PlanDiffers(
        f"{label or 'this cluster'}: the live plan is not the reviewed plan (the "
        "cluster or the desired state changed since fleet plan); nothing was written:\n"
        f"{shown}{more}\nplan the fleet again and review the new plans"
    )
