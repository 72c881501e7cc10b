"""The apply operation: a plan committed to a live cluster, checked first, audited after.

The commit itself is :func:`kquota.apply.applier.apply_plan` (the only writer); saved plans
live in :mod:`kquota.apply.planfile`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kquota.apply.applier import DEFAULT_BATCH_SIZE, ApplyReport
from kquota.apply.planfile import plan_id
from kquota.errors import KquotaError
from kquota.operations.desired import LoadedDesired
from kquota.plan.policy import Policy, ProtectMatch
from kquota.plan.types import Plan
from kquota.render.format import safe_text
from kquota.target import Target

if TYPE_CHECKING:
    from kquota.apply.lease import HeldLease
    from kquota.audit import AuditPublisher


def connection_errors() -> tuple[type[Exception], ...]:
    """connection_errors are what a broken or timed-out connection raises mid-apply: the
    applier settles the batch in flight on these instead of failing outright."""
    from kquota.kafka.errors import BrokerConnectionError, KafkaTimeoutError

    return (BrokerConnectionError, KafkaTimeoutError)


def lease_checked(
    progress: Callable[[int], None] | None, lease: HeldLease | None
) -> Callable[[int], None] | None:
    """lease_checked: after every committed batch, stop if the apply lease was lost (its
    renewals did not land, or it was force-released), before writing the next one."""
    if lease is None:
        return progress
    held = lease

    def step(n: int) -> None:
        if progress is not None:
            progress(n)
        held.check()

    return step


@dataclass(frozen=True)
class AuditOutcome:
    """AuditOutcome: whether every committed entity's audit event was confirmed, and what to
    tell the operator (the success line, or why the changes are not audited)."""

    confirmed: bool
    message: str


def check_audit_topic(publisher: AuditPublisher) -> None:
    """check_audit_topic: the topic exists and is writable, or nothing is committed."""
    from kquota.audit import AuditError

    try:
        publisher.check()
    except AuditError as e:
        raise AuditError(f"{e}; nothing was committed") from None


def publish_audit(publisher: AuditPublisher, plan: Plan, report: ApplyReport) -> AuditOutcome:
    """publish_audit publishes one event per committed entity and confirms them all.

    The changes are in the cluster whatever happens here, so a failure is an outcome of its
    own, not an exception: the caller decides what it means beside the apply's result.
    """
    from kquota import progress
    from kquota.audit import AuditError, AuditEvent, actor, git_commit

    pid, commit, who = plan_id(plan), git_commit(), actor()
    try:
        with progress.phase("audit", total=len(report.committed), unit="events"), publisher:
            publisher.publish(
                AuditEvent.from_alteration(
                    a, plan_id=pid, cluster=plan.cluster, git_commit=commit, actor=who
                )
                for a in report.committed
            )
    except AuditError as e:
        n = len(report.committed)
        return AuditOutcome(
            False,
            f"{n} committed entities are not audited: {e}. The changes are in the cluster; "
            f"record them from this output (plan id {pid})",
        )
    n = len(report.committed)
    return AuditOutcome(True, f"audit: {n} events confirmed on topic {publisher.topic}")


@dataclass(frozen=True)
class ApplyResult:
    """ApplyResult is the plan as applied (its guard recounted on the live cluster), what
    happened to every entity (None: the plan was empty, nothing to apply), and the audit's
    outcome when there is an audit topic and something was committed."""

    plan: Plan
    report: ApplyReport | None
    audit: AuditOutcome | None = None

    @property
    def ok(self) -> bool:
        """ok: every change is committed and verified, and audited when asked."""
        report_ok = self.report is None or self.report.ok
        return report_ok and (self.audit is None or self.audit.confirmed)


def _nothing(*_: object) -> None:
    return None


@dataclass(frozen=True)
class ApplyHooks:
    """ApplyHooks are where a command takes part in an apply, all optional: ``shown`` sees the
    plan and the warnings about the cluster's state once it is made against the live cluster;
    ``confirm`` may refuse it (raise) before anything is written; ``progress`` is given the
    number of alterations and returns a per-batch callback and a function that ends it; and
    ``committed`` sees the report before the audit is published."""

    shown: Callable[[Plan, tuple[str, ...]], None] = _nothing
    confirm: Callable[[Plan], None] = _nothing
    progress: Callable[[int], tuple[Callable[[int], None] | None, Callable[[], None]]] = (
        lambda _total: (None, _nothing)
    )
    committed: Callable[[Plan, ApplyReport], None] = _nothing


def refuse_guarded(
    plan: Plan, override: str, protect_override: str = "allow_protected_change=True"
) -> None:
    """refuse_guarded stops a plan the mass-removal guard or the protected-principals guard
    holds back: the one place that says so, whoever applies (``override`` and
    ``protect_override`` are how this caller overrides each)."""
    from kquota.errors import KquotaError

    refusal = plan.refusal
    if refusal is not None and refusal.startswith("capacity guard: "):
        raise KquotaError(
            f"{refusal}; nothing was applied (review it with kquota plan, save it with "
            "--allow-oversubscription --out PLAN.json, and apply that plan if this is intended)"
        )
    if refusal is not None:
        mass = plan.guard_violation is not None and not plan.mass_removal_allowed
        raise KquotaError(
            f"{refusal}; nothing was applied "
            f"(pass {override if mass else protect_override} if this is intended)"
        )


class ObserveModeError(KquotaError):
    """ObserveModeError: the cluster's policy says ``mode: observe``: kquota plans, checks
    drift and exports there, but never writes."""


def refuse_observed(target: Target, policy: Policy, plan: Plan | None = None) -> None:
    """refuse_observed stops apply on a cluster in observe mode (``policy.mode: observe``),
    before any connection, and a ``plan`` that alters an entity of an observed scope
    (``policy.observe``): another tool still writes those quotas."""
    where = f"cluster {safe_text(target.label)}" if target.label else "this cluster"
    if policy.observe:
        raise ObserveModeError(
            f"{where} is in observe mode (policy.mode: observe in kquota.yaml): plan, drift and"
            " export work as usual, apply does not write; set policy.mode: manage to apply"
        )
    if plan is None or not policy.observed:
        return
    hits = policy.observed_in(a.entity for a in plan.alterations)
    if hits:
        more = f" and {len(hits) - 5} more" if len(hits) > 5 else ""
        raise ObserveModeError(
            f"{where}: the plan alters {len(hits)} entities in an observed scope "
            f"(policy.observe in kquota.yaml): {', '.join(map(str, hits[:5]))}{more}; nothing "
            "was applied. Leave them out of the desired state, or take the scope out of "
            "policy.observe to manage it"
        )


def apply(
    target: Target,
    source: Plan | LoadedDesired,
    *,
    prune: bool | None = None,
    allow_mass_removal: bool = False,
    override: str = "allow_mass_removal=True",
    batch_size: int = DEFAULT_BATCH_SIZE,
    verify_timeout: float = 15.0,
    lease: bool = True,
    publisher: AuditPublisher | None = None,
    hooks: ApplyHooks = ApplyHooks(),
    protect: Sequence[ProtectMatch] = (),
    allow_protected_change: bool = False,
    protect_override: str = "allow_protected_change=True",
) -> ApplyResult:
    """apply commits ``source`` to the live target: a saved plan (read and checked offline,
    :mod:`kquota.apply.planfile`) or desired state, planned here against the live cluster.

    In one connection: the cluster id, the apply lease (``lease``), describe-all; a saved plan
    made for another cluster id, or against entities that changed since, raises
    :class:`~kquota.apply.staleness.StalePlanError`, and its mass-removal guard is counted
    again live. Then the audit topic is checked, ``hooks.confirm`` asked, every alteration
    passes a validate-only pass (or nothing is committed), batches are committed and
    verified; finally one audit event per committed entity is published.

    Protected principals (the policy's and ``protect``) are resolved again on the live
    cluster, with the principals a saved plan names (planning here: those the cluster's
    discovery finds); a plan that lowers or newly imposes one's quota is refused unless
    ``allow_protected_change``.
    """
    import contextlib

    from kquota.apply.applier import apply_plan
    from kquota.apply.lease import LeaseLost, held_lease
    from kquota.apply.planfile import recheck_guard
    from kquota.apply.staleness import check_not_stale
    from kquota.operations.plan import plan_against
    from kquota.progress import phase
    from kquota.target import Origin

    props = target.client_properties()
    policy = target.policy(
        prune=prune,
        allow_mass_removal=allow_mass_removal,
        protect=protect,
        allow_protected_change=allow_protected_change,
    )
    refuse_observed(target, policy)
    with target.admin() as admin, contextlib.ExitStack() as held:
        with phase("connect", unit="brokers") as step:
            cluster_id = admin.cluster_id()  # the cluster answers before the lease is sought
            step.count = len(admin.brokers)
        # Every broker learned so far: the lease's own clients fail over if the bootstrap dies.
        lease_held = held.enter_context(held_lease(props, lease, admin.brokers))
        with phase("describe") as step:
            current = admin.describe_all()
            step.count = len(current)
        warnings: tuple[str, ...] = ()
        if isinstance(source, Plan):
            already = check_not_stale(source, current, cluster_id)
            plan = recheck_guard(source, current, policy)
        else:
            discovery = None
            if any(m.exact() is None for m in policy.protect):  # globs need principals
                from kquota.principals.live import discover

                discovery = discover(admin)
            from kquota.operations.capacity import for_apply

            capacity = for_apply(target, policy, discovery)  # the capacity guard, as in plan
            result = plan_against(
                target,
                source,
                current,
                Origin(target.label, cluster_id),
                prune=prune,
                allow_mass_removal=allow_mass_removal,
                discovery=discovery,
                protect=protect,
                allow_protected_change=allow_protected_change,
                capacity=capacity,
            )
            plan, warnings, already = result.plan, result.warnings, frozenset()
        hooks.shown(plan, warnings)
        if plan.empty:
            return ApplyResult(plan, None)
        refuse_observed(target, policy, plan)
        refuse_guarded(plan, override, protect_override)
        if publisher is not None:
            check_audit_topic(publisher)
        hooks.confirm(plan)
        progress, stop = hooks.progress(len(plan.alterations))
        try:
            report = apply_plan(
                admin,
                plan,
                batch_size=batch_size,
                on_batch=lease_checked(progress, lease_held),
                verify_timeout=verify_timeout,
                connection_errors=(*connection_errors(), LeaseLost),
                already_applied=already,
            )
        finally:
            stop()
    hooks.committed(plan, report)
    audit = None
    if publisher is not None and report.committed:
        audit = publish_audit(publisher, plan, report)
    return ApplyResult(plan, report, audit)


def execute_plan(
    target: Target,
    plan: Plan,
    *,
    allow_mass_removal: bool = False,
    batch_size: int = DEFAULT_BATCH_SIZE,
    verify_timeout: float = 15.0,
    audit_topic: str | None = None,
    allow_protected_change: bool = False,
) -> ApplyResult:
    """execute_plan applies a plan to the live target, as ``kquota apply PLAN.json`` does.

    The plan must be of this cluster and still current: a plan made for another cluster id,
    or against entities that changed since, raises :class:`~kquota.apply.staleness.
    StalePlanError` and nothing is written. The mass-removal guard is counted again on the
    live cluster (``allow_mass_removal`` overrides it). Every alteration passes a validate-only
    pass first, or nothing is committed; then commit in batches of ``batch_size`` and verify.
    With ``audit_topic`` the topic is checked before the commit and one event per committed
    entity is published after it. The apply lease is taken as the command takes it.
    """
    from kquota import argcheck as check

    check.instance(target, Target, "execute_plan: target", "a kquota.Target")
    check.instance(plan, Plan, "execute_plan: plan", "a Plan (PlanResult.plan)")
    check.flag(allow_mass_removal, "execute_plan: allow_mass_removal")
    check.whole(batch_size, "execute_plan: batch_size", 1, 100_000)
    check.number(verify_timeout, "execute_plan: verify_timeout", 0.0, 3600.0, above=True)
    check.optional(audit_topic, str, "execute_plan: audit_topic", "a topic name (str)")
    check.flag(allow_protected_change, "execute_plan: allow_protected_change")
    publisher = None
    if audit_topic:
        from kquota.audit import AuditPublisher

        publisher = AuditPublisher(audit_topic, target.client_properties())
    try:
        return apply(
            target,
            plan,
            allow_mass_removal=allow_mass_removal,
            batch_size=batch_size,
            verify_timeout=verify_timeout,
            publisher=publisher,
            allow_protected_change=allow_protected_change,
        )
    finally:
        if publisher is not None:
            publisher.close()
