"""The trail grouped by apply (plan id), and one entity's changes: pure, no I/O.

An apply publishes one event per committed entity, all with its plan id; a re-run of an
interrupted apply publishes more events under the same id (the entities it committed then).
So an apply is every event of one plan id, and one entity may appear in it more than once
only through a duplicate delivery: its ops are then merged (first before, last after).

The events of one apply must agree: one cluster, one cluster id, one actor, and one record of
each key (a duplicate delivery repeats it exactly). Anything else was not written by one
apply; the disagreement is kept as a problem of the apply, which revert refuses.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from kquota.audit import AuditOp
from kquota.audit_keys import Verdict
from kquota.display import cut, safe_text
from kquota.history.trail import RecordedChange
from kquota.model import Entity, display_entity

NO_PLAN_ID = "(none)"


@dataclass(frozen=True)
class EntityChange:
    """EntityChange is what one apply did to one entity: each key's before -> after."""

    entity: Entity
    ops: tuple[AuditOp, ...]

    @property
    def kind(self) -> str:
        """kind is ``create`` (every key new), ``remove`` (every key removed) or ``update``."""
        if all(op.before is None for op in self.ops):
            return "create"
        if all(op.remove for op in self.ops):
            return "remove"
        return "update"


@dataclass(frozen=True)
class AppliedPlan:
    """AppliedPlan is one apply as the trail records it."""

    plan_id: str
    timestamp: str
    actor: str | None
    git_commit: str | None
    cluster: str | None
    changes: tuple[EntityChange, ...]
    reverts: str | None = None
    """The plan id of an earlier apply this one undid exactly, if any."""
    events: tuple[RecordedChange, ...] = ()
    """The records the apply was read from, in topic order."""
    problems: tuple[str, ...] = ()
    """Where its events disagree with each other (not one apply's)."""
    cluster_id: str | None = None

    def count(self, kind: str) -> int:
        return sum(1 for c in self.changes if c.kind == kind)

    @property
    def unverified(self) -> tuple[RecordedChange, ...]:
        """unverified are its events whose signature did not verify (or that have none)."""
        return tuple(e for e in self.events if not e.verdict.trusted)

    def to_data(self) -> dict[str, object]:
        return {
            "plan_id": self.plan_id,
            "timestamp": self.timestamp,
            "actor": self.actor,
            "git_commit": self.git_commit,
            "cluster": self.cluster,
            "entities": len(self.changes),
            "create": self.count("create"),
            "update": self.count("update"),
            "remove": self.count("remove"),
            "reverts": self.reverts,
            "verified": bool(self.events) and not self.unverified,
            "unverified": [
                {"partition": e.partition, "offset": e.offset, "signature": e.verdict.value}
                for e in self.unverified
            ],
            "problems": list(self.problems),
        }


def _merge(ops: Iterable[AuditOp]) -> tuple[AuditOp, ...]:
    by_key: dict[str, AuditOp] = {}
    for op in ops:
        first = by_key.get(op.key)
        before = op.before if first is None else first.before
        by_key[op.key] = AuditOp(op.key, before, op.after, op.remove)
    return tuple(by_key[k] for k in sorted(by_key))


def applies(changes: Sequence[RecordedChange]) -> list[AppliedPlan]:
    """applies groups the trail by plan id, oldest apply first (by its first event)."""
    grouped: dict[str, list[RecordedChange]] = {}
    for change in changes:
        grouped.setdefault(change.plan_id or NO_PLAN_ID, []).append(change)
    out: list[AppliedPlan] = []
    for pid, events in grouped.items():
        per_entity: dict[Entity, list[AuditOp]] = {}
        for event in events:
            per_entity.setdefault(event.entity, []).extend(event.ops)
        merged = tuple(EntityChange(e, _merge(ops)) for e, ops in per_entity.items())
        first = events[0]
        out.append(
            AppliedPlan(
                plan_id=pid,
                timestamp=first.timestamp,
                actor=first.actor,
                git_commit=first.git_commit,
                cluster=first.cluster,
                changes=merged,
                reverts=_reverted(merged, out),
                events=tuple(events),
                problems=tuple(disagreements(events)),
                cluster_id=first.cluster_id,
            )
        )
    return out


def disagreements(events: Sequence[RecordedChange]) -> list[str]:
    """disagreements are where events of one plan id cannot all be one apply's: two
    clusters, cluster ids or actors, or one key recorded with two different values."""
    found: list[str] = []
    for what, field in (("cluster", "cluster"), ("cluster id", "cluster_id"), ("actor", "actor")):
        first: dict[str | None, RecordedChange] = {}
        for event in events:
            first.setdefault(getattr(event, field), event)
        if len(first) > 1:
            shown = ", ".join(
                f"{_quoted(value)} ({event.where})" for value, event in list(first.items())[:3]
            )
            found.append(f"its events name {len(first)} different {what}s: {shown}")
    recorded: dict[tuple[Entity, str], tuple[AuditOp, RecordedChange]] = {}
    for event in events:
        for op in event.ops:
            seen = recorded.setdefault((event.entity, op.key), (op, event))
            if seen[0] != op:
                shown = cut(display_entity(event.entity), 120)
                found.append(
                    f"{shown} {op.key} is recorded twice with different values "
                    f"({seen[1].where} and {event.where})"
                )
    return found


def _quoted(value: str | None) -> str:
    return "none" if value is None else "'" + cut(safe_text(value), 64) + "'"


def _reverted(changes: tuple[EntityChange, ...], earlier: Sequence[AppliedPlan]) -> str | None:
    """_reverted names the latest earlier apply that ``changes`` undo exactly: the same
    entities and keys, each put back from that apply's after to its before."""
    mine = {(c.entity, op.key): (op.before, op.after) for c in changes for op in c.ops}
    for candidate in reversed(earlier):
        theirs = {
            (c.entity, op.key): (op.after, op.before) for c in candidate.changes for op in c.ops
        }
        if theirs and theirs == mine:
            return candidate.plan_id
    return None


def find_apply(found: Sequence[AppliedPlan], plan_id: str | None) -> AppliedPlan | None:
    """find_apply is the apply with ``plan_id`` (None: the latest), or None when absent."""
    if not found:
        return None
    if plan_id is None:
        return found[-1]
    return next((a for a in found if a.plan_id == plan_id), None)


def combined(chosen: Sequence[AppliedPlan]) -> AppliedPlan:
    """combined is several applies (in trail order) as one: each key from its before in the
    first apply that changed it to its after in the last (the steps of a ramp, say)."""
    if len(chosen) == 1:
        return chosen[0]
    per_entity: dict[Entity, list[AuditOp]] = {}
    for applied in chosen:
        for change in applied.changes:
            per_entity.setdefault(change.entity, []).extend(change.ops)
    first = chosen[0]
    clusters = {a.cluster for a in chosen}
    cluster_ids = {a.cluster_id for a in chosen}
    return AppliedPlan(
        plan_id="+".join(a.plan_id for a in chosen),
        timestamp=first.timestamp,
        actor=first.actor,
        git_commit=first.git_commit,
        cluster=first.cluster if len(clusters) == 1 else None,
        changes=tuple(EntityChange(e, _merge(ops)) for e, ops in per_entity.items()),
        events=tuple(e for a in chosen for e in a.events),
        problems=tuple(f"apply {a.plan_id}: {p}" for a in chosen for p in a.problems),
        cluster_id=first.cluster_id if len(cluster_ids) == 1 else None,
    )


@dataclass(frozen=True)
class EntityEvent:
    """EntityEvent is one change of one entity, with the apply it came in."""

    plan_id: str
    timestamp: str
    actor: str | None
    ops: tuple[AuditOp, ...]
    verdict: Verdict = Verdict.UNSIGNED
    where: str = ""


def entity_history(changes: Sequence[RecordedChange], entity: Entity) -> list[EntityEvent]:
    """entity_history is every recorded change to ``entity``, oldest first."""
    return [
        EntityEvent(c.plan_id or NO_PLAN_ID, c.timestamp, c.actor, c.ops, c.verdict, c.where)
        for c in changes
        if c.entity == entity
    ]
