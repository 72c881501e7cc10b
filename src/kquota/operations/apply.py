"""The apply operation: a plan committed to a live cluster, checked first, audited after.

The commit itself is :func:`kquota.apply.applier.apply_plan` (the only writer); saved plans
live in :mod:`kquota.planfile`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from kquota.apply.applier import DEFAULT_BATCH_SIZE, ApplyReport
from kquota.display import safe_text
from kquota.errors import KquotaError
from kquota.model import Entity
from kquota.operations.desired import DesiredPaths, LoadedDesired
from kquota.operations.overrides import PolicyOverrides
from kquota.plan.guard import LIBRARY, Overrides, judge, refuse
from kquota.plan.types import Plan
from kquota.planfile.writer import plan_id
from kquota.policy import Policy, ProtectMatch
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


def check_audit_topic(publisher: AuditPublisher, target: Target | None = None) -> None:
    """check_audit_topic: the topic exists and is writable, or nothing is committed (a
    missing one named with the command that makes it on ``target``'s cluster)."""
    from kquota.audit import AuditError, AuditTopicMissing

    try:
        publisher.check()
    except AuditTopicMissing as e:
        from kquota.operations.topics import missing_audit_topic

        said = str(e) if target is None else missing_audit_topic(target, e.topic)
        raise AuditError(f"{said}; nothing was committed") from None
    except AuditError as e:
        raise AuditError(f"{e}; nothing was committed") from None


def publish_audit(
    publisher: AuditPublisher, plan: Plan, report: ApplyReport, cluster_id: str | None = None
) -> AuditOutcome:
    """publish_audit publishes one event per committed entity and confirms them all.

    The changes are in the cluster whatever happens here, so a failure is an outcome of its
    own, not an exception: the caller decides what it means beside the apply's result.
    """
    from kquota.audit import AuditError, AuditEvent, actor, git_commit
    from kquota.runtime import progress

    pid, commit, who = plan_id(plan), git_commit(), actor()
    try:
        with progress.phase("audit", total=len(report.committed), unit="events"), publisher:
            publisher.publish(
                AuditEvent.from_alteration(
                    a,
                    plan_id=pid,
                    cluster=plan.cluster,
                    git_commit=commit,
                    actor=who,
                    cluster_id=cluster_id or plan.cluster_id,
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


class ApplyView(Protocol):
    """ApplyView is where a command takes part in an apply, before anything is written:
    ``loaded`` sees the desired state's warnings as soon as it is read (desired state only);
    ``checked`` is told that everything local is read and checked (the last word before the
    first connection); ``shown`` sees the plan and the warnings about the cluster's state once
    it is made or rechecked against the live cluster; ``confirm`` may refuse it (raise);
    ``committed`` sees the report before the audit is published. ``auto_approve``: ``confirm``
    asks nobody, so the validate-only pass may go out while the plan is shown
    (:mod:`kquota.apply.overlap`)."""

    @property
    def auto_approve(self) -> bool: ...

    def loaded(self, warnings: tuple[object, ...]) -> None: ...

    def checked(self) -> None: ...

    def shown(self, plan: Plan, warnings: tuple[str, ...]) -> None: ...

    def confirm(self, plan: Plan) -> None: ...

    def committed(self, plan: Plan, report: ApplyReport) -> None: ...


@dataclass(frozen=True)
class ApplyHooks:
    """ApplyHooks is an :class:`ApplyView` of plain functions, each optional."""

    shown: Callable[[Plan, tuple[str, ...]], None] = _nothing
    confirm: Callable[[Plan], None] = _nothing
    committed: Callable[[Plan, ApplyReport], None] = _nothing
    checked: Callable[[], None] = _nothing
    loaded: Callable[[tuple[object, ...]], None] = _nothing
    auto_approve: bool = False


@dataclass(frozen=True)
class RunOptions:
    """RunOptions: how the commit runs (batches, verification, lease, audit topic) and how a
    guard's refusal spells its override (the CLI's flags, or the library's arguments)."""

    batch_size: int = DEFAULT_BATCH_SIZE
    verify_timeout: float = 15.0
    lease: bool = True
    audit_topic: str | None = None
    overrides: Overrides = LIBRARY


ApplySource = Path | Plan | DesiredPaths | LoadedDesired
"""What is applied: a saved plan file, a plan held in memory (checked as a saved one), or
desired state, to read or read already (planned here against the live cluster)."""


@dataclass(frozen=True)
class ApplyRequest:
    """ApplyRequest is one apply: where, what, under which policy overrides, how to run, and
    the plan that was reviewed for it, if one was (``expected``: the live plan must be it,
    :func:`kquota.apply.reviewed.check_reviewed`)."""

    target: Target
    source: ApplySource
    policy: PolicyOverrides = PolicyOverrides()
    run: RunOptions = RunOptions()
    expected: Plan | None = None
    expected_done: frozenset[Entity] = frozenset()
    """Entities of ``expected`` a resumed rollout committed already (its record says so): the
    live cluster must show them as reviewed, and the live plan is ``expected`` without them."""


def checked_plan(
    source: Path | Plan, target: Target, props: Mapping[str, str], policy: Policy
) -> Plan:
    """checked_plan is the gate every plan passes before any connection, from a file or from
    memory: the strict reader's checks under ``policy`` (safety fields, rules, recomputed
    summary, scope, the mass-removal guard), the target's identity among them, before any
    guard (the plan never chooses where credentials go). A plan held in memory is labelled
    ``plan`` in the problems."""
    from kquota.planfile.reader import load_plan_file, reread
    from kquota.planfile.target import TargetIdentity, check_target

    identity = TargetIdentity(target.cluster_name, props["bootstrap.servers"], target.named_servers)
    name = str(source) if isinstance(source, Path) else "plan"

    def recorded_for_target(plan: Plan) -> None:
        check_target(plan, name, identity)

    # The target first: a plan made for another cluster is refused as that, not by a guard
    # counted under this cluster's policy.
    if isinstance(source, Path):
        return load_plan_file(source, policy, target=recorded_for_target)
    return reread(source, name, policy, recorded_for_target)


class ObserveModeError(KquotaError):
    """ObserveModeError: the cluster's policy says ``mode: observe``: kquota plans, checks
    drift and exports there, but never writes."""


def refuse_observed(target: Target, policy: Policy, plan: Plan | None = None) -> None:
    """refuse_observed stops apply on a cluster in observe mode (``policy.mode: observe``),
    before any connection, and a ``plan`` that alters an entity of an observed scope
    (``policy.observe``): another tool still writes those quotas."""
    refusal = observe_refusal(target.label, policy, plan)
    if refusal is not None:
        raise ObserveModeError(refusal)


def observe_refusal(label: str | None, policy: Policy, plan: Plan | None = None) -> str | None:
    """observe_refusal is why apply refuses to write to the cluster ``label`` under
    ``policy`` (observe mode, or ``plan`` altering an observed scope), or None: what
    :func:`refuse_observed` raises and ``kquota show`` shows."""
    where = f"cluster {safe_text(label)}" if label else "this cluster"
    if policy.observe:
        return (
            f"{where} is in observe mode (policy.mode: observe in kquota.yaml): plan, drift and"
            " export work as usual, apply does not write; set policy.mode: manage to apply"
        )
    if plan is None or not policy.observed:
        return None
    hits = policy.observed_in(a.entity for a in plan.alterations)
    if not hits:
        return None
    more = f" and {len(hits) - 5} more" if len(hits) > 5 else ""
    return (
        f"{where}: the plan alters {len(hits)} entities in an observed scope "
        f"(policy.observe in kquota.yaml): {', '.join(map(str, hits[:5]))}{more}; nothing "
        "was applied. Leave them out of the desired state, or take the scope out of "
        "policy.observe to manage it"
    )


def apply(
    target: Target,
    source: ApplySource,
    *,
    prune: bool | None = None,
    allow_mass_removal: bool = False,
    override: str = LIBRARY.mass_removal,
    batch_size: int = DEFAULT_BATCH_SIZE,
    verify_timeout: float = 15.0,
    lease: bool = True,
    publisher: AuditPublisher | None = None,
    hooks: ApplyView = ApplyHooks(),
    protect: Sequence[ProtectMatch] = (),
    allow_protected_change: bool = False,
    protect_override: str = LIBRARY.protected_change,
    allow_oversubscription: bool = False,
) -> ApplyResult:
    """apply is :func:`run_apply` with its request spelled as keyword arguments (``override``
    and ``protect_override``: how a refusal names each guard's override), and an audit
    ``publisher`` the caller opened and closes."""
    request = ApplyRequest(
        target,
        source,
        PolicyOverrides(
            prune, allow_mass_removal, protect, allow_protected_change, allow_oversubscription
        ),
        RunOptions(batch_size, verify_timeout, lease, None, Overrides(override, protect_override)),
    )
    return run_apply(request, hooks, publisher=publisher)


def run_apply(
    request: ApplyRequest,
    view: ApplyView = ApplyHooks(),
    *,
    publisher: AuditPublisher | None = None,
) -> ApplyResult:
    """run_apply is the whole road of an apply, the CLI's and the library's alike.

    Offline first: the policy is built once; a plan, from a file or from memory, passes the
    strict reader and the target check (:func:`checked_plan`); ``view.checked()``; the audit
    topic's client is configured. Then, in one connection: the cluster id, the apply lease,
    describe-all; a plan made for another cluster id, or against entities that changed since,
    raises :class:`~kquota.apply.staleness.StalePlanError`, and its guards are judged again on
    the live cluster (:func:`kquota.plan.guard.judge`); desired state is planned here. The
    live plan, empty or not, must be the request's ``expected`` plan when it has one, or
    :class:`~kquota.apply.reviewed.PlanDiffers` is raised. Then
    the observe-mode refusal (:func:`refuse_observed`, also before connecting) and the guards'
    refusal (:class:`~kquota.plan.guard.GuardRefused`), the audit topic checked,
    ``view.confirm``, a validate-only pass of every alteration (or nothing is committed),
    commit in batches, verify; finally one audit event per committed entity is published.

    Every guard is computed here, from the alterations and the policy in force, never read
    from a saved plan (issue 33): protected principals (the policy's and the request's) are
    resolved on the live cluster, with the principals a saved plan names and, for a protected
    glob, those the cluster's discovery finds; the capacity guard is counted from the
    cluster's facts whenever the policy sets ``max_oversubscription``.
    """
    offline = _offline(request, view)
    run = request.run
    view.checked()
    opened = None
    if publisher is None and run.audit_topic:
        from kquota.audit import AuditPublisher

        # A bad configuration fails here, before any connection.
        publisher = opened = AuditPublisher(
            run.audit_topic, offline.props, signer=request.target.audit_keys()
        )
    try:
        return _commit(request, offline, view, publisher)
    finally:
        if opened is not None:
            opened.close()


@dataclass(frozen=True)
class _Offline:
    """_Offline is what an apply knows before its first connection: the policy, the client
    properties (merged once), and the checked plan or the desired state read."""

    policy: Policy
    props: Mapping[str, str]
    saved: Plan | None
    desired: LoadedDesired | None


def _offline(request: ApplyRequest, view: ApplyView) -> _Offline:
    """_offline is everything an apply reads and checks before its first connection, in this
    order: the client configuration, the desired state read (its warnings to ``view``), the
    policy built once, a cluster in observe mode refused, a plan (from a file or memory)
    through the strict reader and the target check, and a plan altering an observed scope
    refused."""
    target, source, asked = request.target, request.source, request.policy
    target.config  # noqa: B018 -- kquota's rules (no value shown), before the audit client's
    props = target.client_properties()
    desired = source if isinstance(source, LoadedDesired) else None
    if isinstance(source, DesiredPaths):
        # The apply road's one read of desired state (the live state is read in _commit),
        # before the first connection: its problems are reported before anything connects.
        desired = source.load(target)
        view.loaded(desired.warnings)
    policy = asked.applied_to(target)
    refuse_observed(target, policy)  # issue 23: before reading anything more or connecting
    if desired is not None:
        return _Offline(policy, props, None, desired)
    assert not isinstance(source, DesiredPaths | LoadedDesired)
    saved = checked_plan(source, target, props, policy)
    refuse_observed(target, policy, saved)  # a saved plan: before connecting too
    return _Offline(policy, props, saved, None)


def read_checked(request: ApplyRequest) -> Plan:
    """read_checked reads and checks the request's plan offline, exactly as :func:`run_apply`
    does before connecting (``apply --ramp`` shows its schedule from it first); each step of
    it then goes the whole road again."""
    saved = _offline(request, ApplyHooks()).saved
    if saved is None:
        raise TypeError("read_checked: the request applies desired state, not a plan")
    return saved


def _commit(
    request: ApplyRequest, offline: _Offline, view: ApplyView, publisher: AuditPublisher | None
) -> ApplyResult:
    import contextlib
    from functools import partial

    from kquota.apply.applier import apply_plan
    from kquota.apply.lease import LeaseLost, held_lease
    from kquota.apply.overlap import early_validation
    from kquota.apply.staleness import check_not_stale
    from kquota.model import Origin
    from kquota.operations.plan import PlanInputs, PlanRequest, plan_against
    from kquota.operations.topics import missing_lease_topic
    from kquota.runtime.progress import phase

    target, run = request.target, request.run
    policy, props, saved, desired = offline.policy, offline.props, offline.saved, offline.desired
    with target.admin() as admin, contextlib.ExitStack() as held:
        with phase("connect", unit="brokers") as step:
            cluster_id = admin.cluster_id()  # the cluster answers before the lease is sought
            step.count = len(admin.brokers)
        # Every broker learned so far: the lease's own clients fail over if the bootstrap dies.
        missing = missing_lease_topic(target, run.audit_topic)
        lease_held = held.enter_context(held_lease(dict(props), run.lease, admin.brokers, missing))
        with phase("describe") as step:
            current = admin.describe_all()
            step.count = len(current)
        warnings: tuple[str, ...] = ()
        discovery = None
        if any(m.exact() is None for m in policy.protect):  # globs need principals
            from kquota.principals.live import discover

            discovery = discover(admin)
        from kquota.operations.capacity import for_apply

        capacity = for_apply(target, policy, discovery)  # the capacity guard, as in plan
        if saved is not None:
            already = check_not_stale(saved, current, cluster_id)
            known = () if discovery is None else discovery.principals
            plan = judge(saved, policy, current, known)
            if capacity is not None:  # counted again: a file's capacity key counts for nothing
                from kquota.operations.capacity import with_capacity

                plan = with_capacity(
                    plan,
                    current,
                    policy,
                    [*capacity.discovery.principals, *known],
                    capacity.declared,
                    capacity.facts,
                    capacity.callback,
                )
                warnings = plan.capacity.warnings if plan.capacity is not None else ()
        else:
            assert desired is not None
            result = plan_against(
                PlanRequest(target, desired, request.policy),
                current,
                Origin(target.label, cluster_id),
                PlanInputs(discovery, capacity),
                policy,
            )
            plan, warnings, already = result.plan, result.warnings, frozenset()
        if request.expected is not None:  # empty or not: an empty live plan may differ too
            from kquota.apply.reviewed import check_reviewed

            check_reviewed(request.expected, plan, target.label, request.expected_done, current)
        # The validate-only pass goes out while the plan is shown, when nobody confirms it.
        unasked = publisher is None and view.auto_approve
        checks = (
            partial(refuse_observed, target, policy, plan),
            partial(refuse, plan, run.overrides),
        )
        writer = held.enter_context(
            early_validation(admin, plan, already, enabled=unasked, refusals=checks)
        )
        view.shown(plan, warnings)
        if plan.empty:
            return ApplyResult(plan, None)
        refuse_observed(target, policy, plan)  # issue 23: an observed scope is never written
        refuse(plan, run.overrides)
        if publisher is not None:
            check_audit_topic(publisher, target)
        view.confirm(plan)
        report = apply_plan(
            writer,
            plan,
            batch_size=run.batch_size,
            on_batch=lease_checked(None, lease_held),
            verify_timeout=run.verify_timeout,
            connection_errors=(*connection_errors(), LeaseLost),
            already_applied=already,
        )
    view.committed(plan, report)
    audit = None
    if publisher is not None and report.committed:
        audit = publish_audit(publisher, plan, report, cluster_id)
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
    allow_oversubscription: bool = False,
) -> ApplyResult:
    """execute_plan applies a plan to the live target, as ``kquota apply PLAN.json`` does: the
    same road (:func:`run_apply`), the same checks, the same refusals.

    Before any connection the plan is checked as a saved plan file is (:func:`checked_plan`):
    a plan that records no cluster, cluster id or snapshot fingerprint, made for another
    cluster, breaking the rules of the desired state, or held back by the mass-removal guard
    under the target's policy raises (:class:`~kquota.planfile.reader.PlanFileError`,
    :class:`~kquota.plan.guard.GuardRefused`), and nothing is written. Once connected, a plan
    made for another cluster id, or against entities that changed since, raises
    :class:`~kquota.apply.staleness.StalePlanError`; the guards are judged again on the live
    cluster, the capacity guard from its facts (``allow_mass_removal``,
    ``allow_protected_change`` and ``allow_oversubscription`` override them). Every
    alteration passes a validate-only pass first, or nothing is committed; then commit in
    batches of ``batch_size`` and verify. With ``audit_topic`` the topic is checked before
    the commit and one event per committed entity is published after it. The apply lease is
    taken as the command takes it.
    """
    from kquota import argcheck as check

    check.instance(target, Target, "execute_plan: target", "a kquota.Target")
    check.instance(plan, Plan, "execute_plan: plan", "a Plan (PlanResult.plan)")
    check.flag(allow_mass_removal, "execute_plan: allow_mass_removal")
    check.whole(batch_size, "execute_plan: batch_size", 1, 100_000)
    check.number(verify_timeout, "execute_plan: verify_timeout", 0.0, 3600.0, above=True)
    check.optional(audit_topic, str, "execute_plan: audit_topic", "a topic name (str)")
    check.flag(allow_protected_change, "execute_plan: allow_protected_change")
    check.flag(allow_oversubscription, "execute_plan: allow_oversubscription")
    request = ApplyRequest(
        target,
        plan,
        PolicyOverrides(
            allow_mass_removal=allow_mass_removal,
            allow_protected_change=allow_protected_change,
            allow_oversubscription=allow_oversubscription,
        ),
        RunOptions(batch_size, verify_timeout, audit_topic=audit_topic),
    )
    return run_apply(request)
