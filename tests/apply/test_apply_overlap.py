"""The validate-only pass sent while the plan is shown (kquota.apply.overlap), on a real broker.

The admin is the real WireAdmin, wrapped only to note each call and the thread it came from
(which thread sent a request is nothing a broker reports).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from typing import Any

import pytest

from kquota.apply.applier import apply_plan
from kquota.apply.overlap import early_validation
from kquota.devbroker.launcher import BrokerInfo
from kquota.kafka.admin import QuotaAlteration, QuotaOp, WireAdmin
from kquota.model import Entity, QuotaState
from kquota.plan.guard import GuardRefused
from kquota.plan.planner import plan as make_plan
from kquota.policy import Policy

pytestmark = pytest.mark.integration


class Noting:
    """Noting is a WireAdmin that notes every alter call: (validate_only, thread name, n)."""

    def __init__(self, admin: WireAdmin) -> None:
        self.admin = admin
        self.calls: list[tuple[bool, str, int]] = []

    def alter(self, alterations: Sequence[Any], *, validate_only: bool) -> Sequence[Any]:
        name = threading.current_thread().name
        self.calls.append((validate_only, name, len(alterations)))
        return self.admin.alter(alterations, validate_only=validate_only)

    def describe_all(self) -> QuotaState:
        return self.admin.describe_all()

    def describe_each_broker(self) -> Sequence[QuotaState]:
        return self.admin.describe_each_broker()

    def describe_entities_each_broker(self, entities: Sequence[Entity]) -> Sequence[QuotaState]:
        return self.admin.describe_entities_each_broker(entities)


def _names(tag: str, n: int) -> dict[Entity, dict[str, float]]:
    return {
        Entity.of({"user": f"overlap-{tag}-{i}"}): {"producer_byte_rate": 1024.0 + i}
        for i in range(n)
    }


def _clear(admin: WireAdmin, entities: Sequence[Entity]) -> None:
    shown = admin.describe_all()
    gone = [
        QuotaAlteration(e, tuple(QuotaOp.delete(k) for k in shown[e]))
        for e in entities
        if e in shown
    ]
    if gone:
        admin.alter(gone, validate_only=False)


def test_the_pass_goes_out_once_on_its_own_thread_before_any_commit(
    kafka_broker: BrokerInfo,
) -> None:
    desired = _names("once", 30)
    plan = make_plan(desired, {}, Policy())
    with WireAdmin(kafka_broker.bootstrap_servers) as admin:
        noting = Noting(admin)
        try:
            with early_validation(noting, plan, frozenset(), enabled=True, refusals=()) as w:
                time.sleep(0.05)  # the plan being shown
                report = apply_plan(w, plan, verify_timeout=30)
            assert report.ok and len(report.committed) == 30
            assert noting.calls[0] == (True, "validate-only", 30)
            assert [c for c in noting.calls if c[0]] == [noting.calls[0]], "validated once"
            assert {c[1] for c in noting.calls[1:]} == {threading.main_thread().name}
            shown = admin.describe_all()
            assert all(shown.get(e) == v for e, v in desired.items())
        finally:
            _clear(admin, list(desired))


def test_the_commit_after_an_early_pass_is_cut_where_its_requests_end(
    kafka_broker: BrokerInfo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The early pass's admin says where its requests end, as WireAdmin does: the commit's
    batches end there and send the validated bytes again (each entity encoded once)."""
    import kquota.kafka.quotawire as qw

    encoded: list[int] = []
    real = qw._alter_request_compact
    monkeypatch.setattr(
        qw, "_alter_request_compact", lambda a, v: encoded.append(len(a)) or real(a, v)
    )
    desired = {
        e: {**v, **({"consumer_byte_rate": 2048.0} if i % 2 else {})}
        for i, (e, v) in enumerate(_names("cut", 20).items())
    }
    plan = make_plan(desired, {}, Policy())
    with WireAdmin(kafka_broker.bootstrap_servers, chunk_keys=4) as admin:
        try:
            with early_validation(admin, plan, frozenset(), enabled=True, refusals=()) as w:
                report = apply_plan(w, plan, batch_size=7, verify_timeout=30)
            assert report.ok and len(report.committed) == 20
            assert sum(encoded) == 20
        finally:
            _clear(admin, list(desired))


def test_an_entity_the_early_pass_fails_means_nothing_is_committed(
    kafka_broker: BrokerInfo,
) -> None:
    # The broker refuses a byte-rate quota on an ip entity: a real validation failure.
    bad = Entity.of({"ip": "10.9.8.7"})
    desired = {**_names("fails", 5), bad: {"producer_byte_rate": 1024.0}}
    plan = make_plan(desired, {}, Policy())
    with WireAdmin(kafka_broker.bootstrap_servers) as admin:
        noting = Noting(admin)
        try:
            with early_validation(noting, plan, frozenset(), enabled=True, refusals=()) as w:
                report = apply_plan(w, plan, verify_timeout=30)
            assert [f.entity for f in report.validation_failures] == [bad]
            assert not report.committed and not report.ok
            assert [c[0] for c in noting.calls] == [True], "no commit was sent"
            shown = admin.describe_all()
            assert not any(e in shown for e in desired)
        finally:
            _clear(admin, list(desired))


def _refused() -> None:
    raise GuardRefused("the plan removes too much; nothing was applied")


@pytest.mark.parametrize(
    ("enabled", "refusals"), [(False, ()), (True, (_refused,))], ids=["confirming", "refused"]
)
def test_no_early_pass_when_someone_confirms_or_a_refusal_will_stop_the_plan(
    kafka_broker: BrokerInfo, enabled: bool, refusals: tuple[Any, ...]
) -> None:
    plan = make_plan(_names("none", 3), {}, Policy())
    with WireAdmin(kafka_broker.bootstrap_servers) as admin:
        noting = Noting(admin)
        with early_validation(noting, plan, frozenset(), enabled=enabled, refusals=refusals) as w:
            time.sleep(0.05)
            assert w is noting and noting.calls == []
