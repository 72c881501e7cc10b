"""A plan's throttle replay: the throttle guard's place among the guards (refusal, applyable,
the one refusal raised, its override), the policy's checks of its limit, and the quota window
the replay uses (the brokers' own, else declared, else Kafka's defaults)."""

from __future__ import annotations

import dataclasses

import pytest

from kquota.argcheck import UsageError
from kquota.config.project import ClusterConfig
from kquota.kafka.broker_facts import ClusterFacts
from kquota.model import Entity
from kquota.operations.replay import BROKERS, DECLARED, DEFAULTS, quota_window
from kquota.plan.guard import FLAGS, GuardRefused, refuse
from kquota.plan.planner import plan as make_plan
from kquota.plan.replay import QuotaWindow
from kquota.plan.resolver import Principal, ResolutionChange, ResolvedQuota
from kquota.plan.types import Plan
from kquota.policy import Policy
from kquota.target import Target
from kquota.usage.replay import replay
from kquota.usage.rows import PRODUCE_BYTE_RATE, Sample
from kquota.usage.series import group

P = "producer_byte_rate"


def _stopped(allowed: bool = False) -> Plan:
    plan = make_plan({Entity.of({"user": "a"}): {P: 1.0}}, {}, Policy(), cluster="c")
    change = ResolutionChange(
        Principal("a"), P, None, ResolvedQuota(P, 1.0, Entity.of({"user": "a"}))
    )
    rows = [Sample("c", "1", "a", None, PRODUCE_BYTE_RATE, 0, 5.0)]
    report = replay([change], group(rows), max_throttled_fraction=0.5, throttling_allowed=allowed)
    return dataclasses.replace(plan, replay=report)


def test_the_throttle_guard_stops_a_plan_and_refuses_with_its_own_way_out() -> None:
    plan = _stopped()
    assert not plan.applyable
    assert plan.refusal == (
        "throttle guard: {user=a} producer_byte_rate: throttled 100.0% of the observed time "
        "after the plan (was 0.0%), over max_throttled_fraction=0.5"
    )
    with pytest.raises(GuardRefused) as info:
        refuse(plan, FLAGS)
    assert str(info.value).endswith(
        "; nothing was applied (review it with kquota plan --usage, save it with "
        "--allow-throttling --out PLAN.json, and apply that plan if this is intended)"
    )


def test_an_overridden_throttle_guard_keeps_its_verdict_and_lets_the_plan_through() -> None:
    plan = _stopped(allowed=True)
    assert plan.applyable and plan.refusal is None
    assert plan.replay is not None and len(plan.replay.stopped) == 1
    refuse(plan, FLAGS)  # raises nothing
    assert plan.to_data()["throttle_replay"]["throttling_allowed"] is True


def test_the_other_guards_come_first() -> None:
    plan = dataclasses.replace(_stopped(), guard_violation="too much", mass_removal_allowed=False)
    assert plan.refusal == "mass-removal guard: too much"


@pytest.mark.parametrize("bad", [-0.1, 1.5, float("nan"), True, "0.1"])
def test_the_policy_refuses_a_fraction_that_is_no_share(bad: object) -> None:
    with pytest.raises(UsageError, match="Policy: max_throttled_fraction must be"):
        Policy(max_throttled_fraction=bad)  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="Policy: allow_throttling must be True or False"):
        Policy(allow_throttling=1)  # type: ignore[arg-type]


def _facts(*settings: dict[str, str | None]) -> ClusterFacts:
    ids = tuple(range(1, len(settings) + 1))
    return ClusterFacts(ids, ids, dict(zip(ids, settings, strict=True)))


def _target(declared: dict[str, int] | None = None) -> Target:
    cluster = ClusterConfig.model_validate(
        {"kafka": {"bootstrap.servers": "127.0.0.1:1"}, "quota_window": declared}
    )
    return dataclasses.replace(Target(snapshot_path="s.json"), cluster=cluster)


def test_the_window_is_the_brokers_own_then_declared_then_kafkas_defaults() -> None:
    both = {"quota.window.num": "30", "quota.window.size.seconds": "2"}
    assert quota_window(_target({"num": 5, "size_seconds": 5}), _facts(both)) == QuotaWindow(
        30, 2, BROKERS
    )
    differ = _facts(both, {"quota.window.num": "11", "quota.window.size.seconds": "3"})
    assert quota_window(_target(), differ) == QuotaWindow(
        30, 3, BROKERS + " (they differ: the largest of each)"
    )
    unreadable = _facts({"quota.window.num": "lots", "quota.window.size.seconds": None})
    declared = _target({"num": 5, "size_seconds": 4})
    assert quota_window(declared, unreadable) == QuotaWindow(5, 4, DECLARED)
    assert quota_window(declared, None) == QuotaWindow(5, 4, DECLARED)
    assert quota_window(_target(), None) == QuotaWindow(11, 1, DEFAULTS)
