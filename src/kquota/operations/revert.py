"""The revert and history operations: the audit trail read back, an apply undone as a plan.

Revert never writes quotas: it makes the inverse plan against the live cluster and hands it
back to be shown and saved; the saved plan is applied by ``kquota apply PLAN.json`` through
the one apply road (lease, staleness, guards, validate-only, commit, verify, audit).
"""

from __future__ import annotations

from collections.abc import Sequence

from kquota.errors import KquotaError
from kquota.history.applies import AppliedPlan, applies, combined, entity_history, find_apply
from kquota.history.inverse import Conflict, inverse_plan
from kquota.history.results import History, RevertResult
from kquota.history.trail import Trail, read_trail
from kquota.model import Entity
from kquota.plan.types import Plan
from kquota.render.format import safe_text
from kquota.target import Origin, Target

_SHOW = 20


class RevertRefused(KquotaError):
    """RevertRefused: the cluster no longer holds what the apply wrote; nothing was planned."""

    def __init__(self, plan_id: str, found: tuple[Conflict, ...]) -> None:
        self.conflicts = found
        entities = list(dict.fromkeys(c.entity for c in found))
        lines = [f"  {c}" for c in found[:_SHOW]]
        if len(found) > _SHOW:
            lines.append(f"  … and {len(found) - _SHOW} more")
        super().__init__(
            f"not reverting apply {plan_id}: {len(entities)} entities changed since it wrote "
            "them, and reverting would throw those changes away:\n"
            + "\n".join(lines)
            + "\npass --force to put back the apply's before values anyway"
        )


def _topic(target: Target, audit_topic: str | None) -> str:
    topic = audit_topic or target.audit_topic
    if not topic:
        raise KquotaError(
            "no audit topic: give --audit-topic TOPIC (or set audit_topic for the cluster in "
            "kquota.yaml); the trail is where applies are recorded"
        )
    return topic


def read(target: Target, audit_topic: str | None) -> Trail:
    """read is the target cluster's audit trail (its topic from the flag or kquota.yaml)."""
    return read_trail(_topic(target, audit_topic), target.client_properties())


def _chosen(trail: Trail, plan_ids: Sequence[str]) -> AppliedPlan:
    found = applies(trail.changes)
    if not plan_ids:
        last = find_apply(found, None)
        if last is None:
            raise KquotaError(f"no apply on audit topic {trail.topic!r} (0 applies recorded)")
        return last
    known = {a.plan_id: i for i, a in enumerate(found)}
    missing = [pid for pid in plan_ids if pid not in known]
    if missing:
        shown = ", ".join(repr(safe_text(m)) for m in missing)
        raise KquotaError(
            f"no apply with plan id {shown} on audit topic {trail.topic!r} ({len(found)} "
            "applies recorded; kquota history lists them)"
        )
    # In trail order, whatever the order given: each key goes back to its first before.
    return combined([found[i] for i in sorted({known[pid] for pid in plan_ids})])


def revert(
    target: Target,
    *,
    audit_topic: str | None,
    plan_ids: Sequence[str] = (),
    force: bool = False,
) -> RevertResult:
    """revert makes the plan that undoes the applies ``plan_ids`` together (none given: the
    latest apply).

    Raises :class:`RevertRefused` when keys the apply wrote hold other values now, unless
    ``force``; the apply must have been made to this target's cluster (by name or bootstrap
    servers, kquota.yaml's clusters as the target read them).
    """
    from kquota.plan.guard import judge

    trail = read(target, audit_topic)
    source = _chosen(trail, plan_ids)
    _check_cluster(source, target)
    policy = target.policy(prune=None, allow_mass_removal=False)
    with target.admin() as admin:
        cluster_id = admin.cluster_id()
        current = admin.describe_all()
    inverse = inverse_plan(source.changes, current, Origin(target.label, cluster_id))
    if inverse.conflicts and not force:
        raise RevertRefused(source.plan_id, inverse.conflicts)
    plan = judge(inverse.plan, policy, current)
    return RevertResult(source, plan, inverse.conflicts)


def _check_cluster(source: AppliedPlan, target: Target) -> None:
    """The apply's recorded cluster must be the target, as a saved plan's must."""
    from kquota.planfile.reader import PlanFileError
    from kquota.planfile.target import TargetIdentity, check_target

    if source.cluster is None:
        return
    props = target.client_properties()
    # kquota.yaml's clusters by name, read with the target (Target.named_servers)
    identity = TargetIdentity(target.cluster_name, props["bootstrap.servers"], target.named_servers)
    try:
        check_target(Plan((), cluster=source.cluster), "", identity)
    except PlanFileError:
        shown = target.cluster_name or props["bootstrap.servers"]
        raise KquotaError(
            f"apply {source.plan_id} was made to cluster {safe_text(source.cluster)!r}, but "
            f"the target is {safe_text(shown)!r}; revert it on the cluster it changed"
        ) from None


def history(target: Target, *, audit_topic: str | None, entity: Entity | None = None) -> History:
    """history reads the trail: every apply, and with ``entity`` every change to it."""
    trail = read(target, audit_topic)
    events = tuple(entity_history(trail.changes, entity)) if entity is not None else ()
    return History(trail.topic, tuple(applies(trail.changes)), entity, events, trail.skipped)
