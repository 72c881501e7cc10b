"""The drift operation: does a cluster still match its desired state?"""

from __future__ import annotations

from dataclasses import dataclass

from kquota.drift.report import DriftReport, drift_report
from kquota.operations.desired import LoadedDesired
from kquota.operations.plan import ip_spelling_warnings
from kquota.target import Target
from kquota.timestamps import utc_now_iso


@dataclass(frozen=True)
class DriftResult:
    """DriftResult is one cluster's drift report and warnings about its state."""

    report: DriftReport
    warnings: tuple[str, ...] = ()


def check_ready(target: Target) -> None:
    """check_ready reads a live target's ``${VAR}``s and properties file, before the network."""
    if not target.offline:
        target.client_properties()


def check_drift(
    target: Target, desired: LoadedDesired, *, prune: bool | None = None
) -> DriftResult:
    """check_drift compares the target's current state with ``desired`` (undeclared in-scope
    entities count as drift when the policy, or ``prune``, prunes)."""
    from kquota import argcheck as check
    from kquota.plan.planner import plan as make

    check.instance(target, Target, "check_drift: target", "a kquota.Target")
    check.instance(desired, LoadedDesired, "check_drift: desired", "a kquota.LoadedDesired")
    check.optional_flag(prune, "check_drift: prune")

    state = target.load_state()
    policy = target.policy(prune=prune, allow_mass_removal=True)
    warnings = ip_spelling_warnings(state)
    plan = make(desired.quotas, state, policy, cluster=target.label)
    from kquota.operations.controllers import controllers_of

    # What kquota.yaml declares (platform, kafka_users): drift asks the brokers nothing more.
    controllers = controllers_of(target)
    report = drift_report(
        plan,
        prune=policy.prune,
        checked_at=utc_now_iso(),
        controllers=controllers,
        protect=policy.protect,
    )
    return DriftResult(report, warnings)


def publish_drift(topic: str, report: DriftReport, target: Target) -> None:
    """publish_drift sends a cluster's report to ``topic`` on that same cluster."""
    from kquota.audit import (
        AuditError,
        AuditPublisher,
        AuditTopicMissing,
        DriftEvent,
        actor,
        git_commit,
    )

    event = DriftEvent(
        cluster=report.cluster or "",
        report=report.to_data(),
        git_commit=git_commit(),
        actor=actor(),
    )
    with AuditPublisher(topic, target.client_properties(), signer=target.audit_keys()) as publisher:
        try:
            publisher.check()
        except AuditTopicMissing as e:
            from kquota.operations.topics import missing_audit_topic

            raise AuditError(missing_audit_topic(target, e.topic)) from None
        publisher.publish([event])
