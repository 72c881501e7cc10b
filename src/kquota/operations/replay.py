"""The throttle-replay part of the plan road (``plan --usage``, issue 30): group the observed
samples, find the brokers' quota window, and give the plan its replay
(:func:`kquota.usage.replay.replay`) for every observed principal whose effective quota the
plan changes (the resolver behind ``--impact``)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass

from kquota.kafka.broker_facts import QUOTA_WINDOW_NUM, QUOTA_WINDOW_SIZE_SECONDS, ClusterFacts
from kquota.model import QuotaState
from kquota.plan.replay import QuotaWindow
from kquota.plan.types import Plan
from kquota.policy import Policy
from kquota.target import Target
from kquota.usage.rows import Sample
from kquota.usage.series import Grouped, group

BROKERS = "read from the brokers"
DECLARED = "declared in kquota.yaml (quota_window)"
DEFAULTS = "Kafka's defaults (not read from the brokers, not declared)"


@dataclass(frozen=True)
class UsageInputs:
    """UsageInputs is what a plan's throttle replay is made from besides the state: the
    samples grouped into series, the brokers' quota window, and where the samples came from."""

    grouped: Grouped
    window: QuotaWindow
    source: str | None = None


def usage_inputs(
    target: Target,
    samples: Iterable[Sample],
    settings: ClusterFacts | None,
    source: str | None = None,
) -> UsageInputs:
    """usage_inputs groups ``samples`` and finds the quota window: the brokers' own
    ``settings`` when read, else the cluster's declared ``quota_window``, else Kafka's
    defaults."""
    return UsageInputs(group(samples), quota_window(target, settings), source)


def quota_window(target: Target, settings: ClusterFacts | None) -> QuotaWindow:
    """quota_window is the window the brokers measure rates over (see :func:`usage_inputs`).
    Brokers that differ give the largest of each setting: the replay's throttle time is then
    the longest any broker would give."""
    if settings is not None:
        nums = _whole(settings.values(QUOTA_WINDOW_NUM))
        sizes = _whole(settings.values(QUOTA_WINDOW_SIZE_SECONDS))
        if nums and sizes:
            differ = len(nums) > 1 or len(sizes) > 1
            source = BROKERS + (" (they differ: the largest of each)" if differ else "")
            return QuotaWindow(max(nums), max(sizes), source)
    declared = target.cluster.quota_window if target.cluster is not None else None
    if declared is not None:
        return QuotaWindow(declared.num, declared.size_seconds, DECLARED)
    return QuotaWindow(source=DEFAULTS)


def _whole(values: Iterable[str]) -> list[int]:
    out = []
    for v in values:
        try:
            n = int(v)
        except ValueError:
            continue  # a broker's value kquota cannot read is no window
        if n >= 1:
            out.append(n)
    return out


def with_replay(plan: Plan, state: QuotaState, policy: Policy, usage: UsageInputs) -> Plan:
    """with_replay gives ``plan`` its throttle replay over the observed principals whose
    effective rate quotas it changes, and the throttle guard's verdict under ``policy``."""
    from kquota.plan.resolver import resolution_changes
    from kquota.plan.simulate import simulate_plan
    from kquota.usage.replay import replay

    after = simulate_plan(state, plan)
    altered = [a.entity for a in plan.alterations]
    changes = resolution_changes(state, after, usage.grouped.principals, altered=altered)
    report = replay(
        changes,
        usage.grouped,
        usage.window,
        source=usage.source,
        max_throttled_fraction=policy.max_throttled_fraction,
        throttling_allowed=policy.allow_throttling,
    )
    return dataclasses.replace(plan, replay=report)
