"""The revert and history operations: the audit trail read back, an apply undone as a plan.

Revert never writes quotas: it makes the inverse plan against the live cluster and hands it
back to be shown and saved; the saved plan is applied by ``kquota apply PLAN.json`` through
the one apply road (lease, staleness, guards, validate-only, commit, verify, audit).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from kquota.audit_keys import Verdict
from kquota.display import cut, safe_text
from kquota.errors import KquotaError
from kquota.history.applies import (
    AppliedPlan,
    EntityChange,
    applies,
    combined,
    entity_history,
    find_apply,
)
from kquota.history.declared import DesiredCheck, declared
from kquota.history.inverse import Conflict, inverse_plan
from kquota.history.results import History, RevertResult
from kquota.history.trail import BadRecord, RecordedChange, Trail, read_trail
from kquota.model import Entity, Origin, display_entity
from kquota.plan.types import Plan
from kquota.target import Target

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
    """read is the target cluster's audit trail (its topic from the flag or kquota.yaml),
    verified with its audit signing keys when kquota.yaml configures them."""
    topic = _topic(target, audit_topic)
    keys = target.audit_keys()
    return read_trail(topic, target.client_properties(), keys=keys)


NO_KEY_WARNING = (
    "warning: no audit signing key is configured for this cluster (audit_signing in "
    "kquota.yaml): the trail's events cannot be verified, and anyone who may write the audit "
    "topic can write one"
)


def _listed(lines: Sequence[str]) -> str:
    shown = [f"  {line}" for line in lines[:_SHOW]]
    if len(lines) > _SHOW:
        shown.append(f"  … and {len(lines) - _SHOW} more")
    return "\n".join(shown)


def _signature_problem(event: RecordedChange) -> str:
    key = safe_text(event.key_id) if event.key_id else "?"
    why = {
        Verdict.UNSIGNED: "not signed",
        Verdict.UNKNOWN_KEY: f"signed with key id {key!r}, which audit_signing does not hold",
        Verdict.BAD_SIGNATURE: "its signature does not verify (forged or altered)",
    }[event.verdict]
    return f"{event.where}: {cut(display_entity(event.entity), 120)}: {why}"


def check_trusted(source: AppliedPlan, *, signed: bool, allow_unsigned: bool) -> None:
    """check_trusted refuses an apply whose events cannot be one apply's, or cannot be
    trusted: a signature that does not verify always; an unsigned event unless
    ``allow_unsigned`` (then only the structural checks vouch for it)."""
    pid = safe_text(source.plan_id)
    if source.problems:
        raise KquotaError(
            f"not reverting apply {pid}: its events cannot all be one apply's, so some were "
            f"not written by kquota:\n{_listed(source.problems)}"
        )
    forged = [e for e in source.unverified if e.verdict is not Verdict.UNSIGNED]
    if forged:
        raise KquotaError(
            f"not reverting apply {pid}: {len(forged)} of its events do not verify, so they "
            f"were not written by kquota with a key audit_signing holds:\n"
            f"{_listed([_signature_problem(e) for e in forged])}"
        )
    unsigned = source.unverified
    if unsigned and not allow_unsigned:
        lines = _listed([_signature_problem(e) for e in unsigned])
        if signed:
            raise KquotaError(
                f"not reverting apply {pid}: {len(unsigned)} of its events are not signed "
                f"(written before audit_signing was configured, or by someone else):\n{lines}"
                "\npass --allow-unsigned to revert them on the trail's structural checks alone"
            )
        raise KquotaError(
            f"not reverting apply {pid}: its {len(unsigned)} events cannot be verified (no "
            "audit signing key is configured for this cluster: audit_signing in kquota.yaml); "
            "pass --allow-unsigned to revert them on the trail's structural checks alone"
        )


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
    allow_unsigned: bool = False,
    desired_paths: Sequence[Path] = (),
) -> RevertResult:
    """revert makes the plan that undoes the applies ``plan_ids`` together (none given: the
    latest apply on the topic, by position), and compares what it puts back with the
    desired state (``desired_paths``, else the cluster's folders in kquota.yaml, else
    ``quotas/`` when there is one: :func:`check_desired`).

    The trail is evidence: events that do not verify are refused, unsigned ones unless
    ``allow_unsigned`` (:func:`check_trusted`), and the apply must have been made to this
    target's cluster, by cluster id and by name or bootstrap servers (kquota.yaml's clusters
    as the target read them). Raises :class:`RevertRefused` when keys the apply wrote hold
    other values now, unless ``force``.
    """
    from kquota.plan.guard import judge

    trail = read(target, audit_topic)
    source = _chosen(trail, plan_ids)
    check_trusted(source, signed=trail.signed, allow_unsigned=allow_unsigned)
    _check_cluster(source, target)
    policy = target.policy(prune=None, allow_mass_removal=False)
    with target.admin() as admin:
        cluster_id = admin.cluster_id()
        current = admin.describe_all()
    check_cluster_id(source, cluster_id, allow_unsigned=allow_unsigned)
    inverse = inverse_plan(source.changes, current, Origin(target.label, cluster_id))
    if inverse.conflicts and not force:
        raise RevertRefused(source.plan_id, inverse.conflicts)
    plan = judge(inverse.plan, policy, current)
    warnings = [] if trail.signed else [NO_KEY_WARNING]
    warnings += _bad_records(trail.bad)
    desired = check_desired(_desired_paths(target, desired_paths), source.changes)
    return RevertResult(source, plan, inverse.conflicts, tuple(warnings), desired)


def _desired_paths(target: Target, given: Sequence[Path]) -> list[Path]:
    """The desired state the next plan of this target would read: the paths given, the
    cluster's folders, or ``quotas/`` when it is here; none when not known. Each is named
    from the working directory when it is under it (kquota.yaml's folders are absolute),
    so a note names ``quotas/teams.yaml:12:5``, as the reviewer's checkout does."""
    if given or target.cluster is not None:
        paths = target.desired_paths(tuple(given))
    else:
        paths = [p for p in target.desired_paths() if p.is_dir()]
    here = Path.cwd()
    return [p.relative_to(here) if p.is_relative_to(here) else p for p in paths]


def check_desired(paths: Sequence[Path], changes: Sequence[EntityChange]) -> DesiredCheck:
    """check_desired reads the desired state at ``paths`` and names every key of
    ``changes`` (the apply being reverted) it does not declare as the revert puts it back.
    A desired state that does not load is reported, never raised: the revert stands."""
    from kquota.desired import DesiredStateError, load_desired

    if not paths:
        return DesiredCheck()
    shown = tuple(str(p) for p in paths)
    try:
        state = load_desired(list(paths))
    except DesiredStateError as e:
        first = f"; the first: {e.problems[0]}" if e.problems else ""
        return DesiredCheck(shown, problem=f"{len(e.problems)} problems{first}")
    except KquotaError as e:
        return DesiredCheck(shown, problem=str(e))
    return DesiredCheck(shown, declared(changes, state.quotas, state.sources))


def _bad_records(bad: Sequence[BadRecord]) -> list[str]:
    if not bad:
        return []
    return [
        f"warning: {len(bad)} records on the topic claim to be quota.altered events and are "
        f"not valid ones (ignored):\n{_listed([str(b) for b in bad])}"
    ]


def check_cluster_id(source: AppliedPlan, live: str | None, *, allow_unsigned: bool) -> None:
    """The apply's recorded cluster id must be the live cluster's; an event without one
    (written by a kquota before cluster ids were recorded) passes only ``allow_unsigned``,
    on its cluster name alone."""
    pid = safe_text(source.plan_id)
    if source.cluster_id is None:
        if allow_unsigned:
            return
        raise KquotaError(
            f"not reverting apply {pid}: its events record no cluster id, so the cluster it "
            "changed cannot be checked; pass --allow-unsigned to check it by cluster name alone"
        )
    if live is not None and source.cluster_id != live:
        raise KquotaError(
            f"apply {pid} was made to the cluster with id {safe_text(source.cluster_id)!r}, but "
            f"the target's cluster id is {safe_text(live)!r}; revert it on the cluster it changed"
        )


def _check_cluster(source: AppliedPlan, target: Target) -> None:
    """The apply's recorded cluster must be the target, as a saved plan's must."""
    from kquota.planfile.reader import PlanFileError
    from kquota.planfile.target import TargetIdentity, check_target

    if source.cluster is None:
        raise KquotaError(
            f"not reverting {safe_text(source.plan_id)}: its events do not name one cluster; "
            "revert each apply on the cluster it changed"
        )
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
    return History(
        trail.topic,
        tuple(applies(trail.changes)),
        entity,
        events,
        trail.skipped,
        bad=trail.bad,
        signed=trail.signed,
    )
