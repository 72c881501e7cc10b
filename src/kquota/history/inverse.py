"""The inverse of an apply: a plan that puts every key it committed back. Pure, no I/O.

For each key the apply changed, the inverse sets it back to its ``before`` value, or removes
it when the apply created it. It is planned against the cluster as it is now, like any plan:
its ``before`` values are the live ones and its fingerprint pins them, so the saved inverse
goes stale (and apply refuses it) if the cluster moves between review and apply.

A key the cluster no longer holds at the value the apply wrote was changed since by someone
else: reverting it would silently throw that change away, so it is a conflict, refused
unless forced (then the inverse still puts back the apply's before value).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from operator import attrgetter

from kquota.display import number, safe_text
from kquota.history.applies import EntityChange
from kquota.model import Entity, Origin, QuotaState, display_entity
from kquota.plan.fingerprint import snapshot_fingerprint
from kquota.plan.types import Alteration, ChangeKind, Op, Plan
from kquota.policy import Removals
from kquota.timestamps import utc_now_iso
from kquota.version import __version__


@dataclass(frozen=True)
class Conflict:
    """Conflict is a key changed since the apply wrote it: what it wrote, what is there now."""

    entity: Entity
    key: str
    wrote: float | None
    now: float | None

    def __str__(self) -> str:
        return (
            f"{display_entity(self.entity)}: {safe_text(self.key)} was set to {_shown(self.wrote)} "
            f"by the apply, now {_shown(self.now)}"
        )


def _shown(value: float | None) -> str:
    return "unset" if value is None else number(value, long_range=True)


@dataclass(frozen=True)
class Inverse:
    """Inverse is the plan that undoes an apply, and the keys changed since it."""

    plan: Plan
    conflicts: tuple[Conflict, ...]


def conflicts(changes: Sequence[EntityChange], current: QuotaState) -> list[Conflict]:
    """conflicts lists every key whose live value is not the one the apply wrote."""
    out = []
    for change in changes:
        have = current.get(change.entity, {})
        for op in change.ops:
            now = have.get(op.key)
            if now != op.after:
                out.append(Conflict(change.entity, op.key, op.after, now))
    return out


def _alteration(change: EntityChange, current: QuotaState) -> Alteration | None:
    have = current.get(change.entity, {})
    ops = []
    after = dict(have)
    for op in change.ops:
        now = have.get(op.key)
        if op.before == now:
            continue  # already back
        if op.before is None:
            ops.append(Op(op.key, None, True, now))
            after.pop(op.key, None)
        else:
            ops.append(Op(op.key, op.before, False, now))
            after[op.key] = op.before
    if not ops:
        return None
    if not have:
        kind = ChangeKind.CREATE
    elif not after:
        kind = ChangeKind.DELETE
    else:
        kind = ChangeKind.UPDATE
    return Alteration(change.entity, tuple(sorted(ops, key=attrgetter("key"))), kind)


def inverse_plan(changes: Sequence[EntityChange], current: QuotaState, origin: Origin) -> Inverse:
    """inverse_plan is the plan that undoes ``changes`` on ``current`` (read from ``origin``),
    with the conflicts found; whether they stop it is the caller's decision."""
    from kquota.model import sorted_by_entity

    alterations = [a for c in changes if (a := _alteration(c, current)) is not None]
    alts = tuple(sorted_by_entity(alterations, attrgetter("entity")))
    plan = Plan(alterations=alts)
    plan = dataclasses.replace(
        plan,
        cluster=origin.cluster,
        cluster_id=origin.cluster_id,
        snapshot_fingerprint=snapshot_fingerprint(current, (a.entity for a in alts)),
        removals=Removals(plan.remove_ops, plan.count(ChangeKind.DELETE)),
        kquota_version=__version__,
        created_at=utc_now_iso(),
    )
    return Inverse(plan, tuple(conflicts(changes, current)))
