"""Apply's consistency rule: it ends only when every broker shows what it committed.

A real broker cannot be made to trail on demand, so a fake admin stands for a cluster whose
third broker applies the metadata log late (the three-node integration tests run the rule
against real brokers).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kquota.apply.applier import apply_plan
from kquota.kafka.admin import AlterResult
from kquota.model import Entity, QuotaState
from kquota.plan.planner import plan as make_plan
from kquota.policy import Policy

ALICE = Entity.of({"user": "alice"})
BOB = Entity.of({"user": "bob"})
DESIRED = {ALICE: {"producer_byte_rate": 2048.0}, BOB: {"consumer_byte_rate": 10.0}}


class fake_lagging_cluster:  # noqa: N801 - fakes are named fake_*
    """Three brokers; the third shows committed changes only after ``lag`` more reads."""

    def __init__(self, lag: int) -> None:
        self.state: QuotaState = {}
        self.lag = lag
        self.reads = 0

    def alter(self, alterations: Sequence[Any], *, validate_only: bool) -> list[AlterResult]:
        if not validate_only:
            for a in alterations:
                values = dict(self.state.get(a.entity, {}))
                for op in a.ops:
                    values.pop(op.key, None) if op.remove else values.update({op.key: op.value})
                self.state[a.entity] = values
        return [AlterResult(a.entity, 0, "NONE", None) for a in alterations]

    def describe_all(self) -> QuotaState:
        return dict(self.state)

    def describe_each_broker(self) -> list[QuotaState]:
        self.reads += 1
        trailing: QuotaState = {} if self.reads <= self.lag else dict(self.state)
        return [dict(self.state), dict(self.state), trailing]


def test_apply_waits_until_the_trailing_broker_shows_the_changes() -> None:
    admin = fake_lagging_cluster(lag=3)
    report = apply_plan(admin, make_plan(DESIRED, {}, Policy()), poll_interval=0.01)
    assert report.ok and not report.unconverged
    assert admin.reads == 4, "verified only once the third broker caught up"


def test_a_broker_that_never_catches_up_is_reported() -> None:
    admin = fake_lagging_cluster(lag=10**6)
    report = apply_plan(
        admin, make_plan(DESIRED, {}, Policy()), verify_timeout=0.2, poll_interval=0.01
    )
    assert not report.ok
    assert set(report.unconverged) == {ALICE, BOB}


class fake_lagging_cluster_with_exact_reads(fake_lagging_cluster):  # noqa: N801
    """The same cluster, also answering exact-match reads of given entities (as QuotaAdmin
    does); every read of either kind counts toward the third broker's lag."""

    def __init__(self, lag: int) -> None:
        super().__init__(lag)
        self.exact_reads: list[int] = []
        self.full_reads = 0

    def describe_each_broker(self) -> list[QuotaState]:
        self.full_reads += 1
        return super().describe_each_broker()

    def describe_entities_each_broker(self, entities: Sequence[Entity]) -> list[QuotaState]:
        self.exact_reads.append(len(entities))
        views = super().describe_each_broker()
        return [{e: v[e] for e in entities if e in v} for v in views]


def _many(n: int) -> dict[Entity, dict[str, float]]:
    return {
        Entity.of({"user": f"u{i:05d}"}): {"producer_byte_rate": float(i + 1)} for i in range(n)
    }


def test_few_entities_are_verified_by_exact_reads_only() -> None:
    admin = fake_lagging_cluster_with_exact_reads(lag=3)
    report = apply_plan(admin, make_plan(DESIRED, {}, Policy()), poll_interval=0.01)
    assert report.ok and not report.unconverged
    assert admin.full_reads == 0, "no describe-all for two entities"
    assert admin.exact_reads == [2, 2, 2, 2], "waited for the third broker, two entities a read"


def test_many_entities_wait_on_a_probe_then_one_describe_all_proves_them() -> None:
    from kquota.apply.applier import EXACT_READ_MAX

    desired = _many(EXACT_READ_MAX + 50)
    admin = fake_lagging_cluster_with_exact_reads(lag=3)
    report = apply_plan(admin, make_plan(desired, {}, Policy()), poll_interval=0.01)
    assert report.ok and len(report.committed) == len(desired)
    assert admin.full_reads == 1, "one describe-all, once the last write showed everywhere"
    assert admin.exact_reads == [1] * 4, "the last entity written, read until all brokers show it"


def test_a_trailing_broker_is_still_waited_for_when_the_probe_was_early() -> None:
    """The probe is only a hint: a describe-all still missing entities keeps verification
    polling, by exact reads once few are left."""
    from kquota.apply.applier import EXACT_READ_MAX

    desired = _many(EXACT_READ_MAX + 10)
    admin = fake_lagging_cluster_with_exact_reads(lag=2)
    late = list(desired)[:5]  # written first, shown last by the third broker
    reads = admin.describe_each_broker

    def hiding_late() -> list[QuotaState]:
        views = reads()
        if admin.full_reads == 1:  # the first describe-all, after the probe
            views[2] = {e: v for e, v in views[2].items() if e not in late}
        return views

    admin.describe_each_broker = hiding_late  # type: ignore[method-assign]
    report = apply_plan(admin, make_plan(desired, {}, Policy()), poll_interval=0.01)
    assert report.ok and not report.unconverged
    assert admin.exact_reads[-1] == 5, "the five late entities were read by exact match"


def test_exact_reads_name_what_another_writer_changed() -> None:
    admin = fake_lagging_cluster_with_exact_reads(lag=0)
    real_alter = admin.alter

    def then_someone_else(alterations: Sequence[Any], *, validate_only: bool) -> Any:
        results = real_alter(alterations, validate_only=validate_only)
        if not validate_only:
            admin.state[ALICE] = {"producer_byte_rate": 7.0}
        return results

    admin.alter = then_someone_else  # type: ignore[method-assign]
    report = apply_plan(admin, make_plan(DESIRED, {}, Policy()), poll_interval=0.01)
    assert report.overwritten == [(ALICE, "producer_byte_rate is 7, this run set 2048")]
    assert not report.unconverged and admin.full_reads == 0
