"""Other controllers (kquota.plan.controllers) and drift's reading of what they do."""

from __future__ import annotations

import pytest

from kquota.drift.report import DriftKind, drift_report
from kquota.model import Entity, QuotaState
from kquota.plan.controllers import (
    CLUSTER_OPERATOR,
    ENFORCES_NOTHING,
    STATIC_QUOTA_CALLBACK,
    USER_OPERATOR,
    Controllers,
    controller_notes,
    kafka_quotas_spec,
    strimzi_evidence,
)
from kquota.plan.planner import plan
from kquota.plan.types import Plan
from kquota.policy import Policy

P, C, Q, M = (
    "producer_byte_rate",
    "consumer_byte_rate",
    "request_percentage",
    "controller_mutation_rate",
)
DEFAULT = Entity.of({"user": None})


def _plan(state: QuotaState, desired: QuotaState) -> Plan:
    return plan(desired, state, Policy(prune=True, allow_mass_removal=True), cluster="c")


@pytest.mark.parametrize(
    ("kwargs", "want"),
    [
        ({"declared": "strimzi"}, "platform: strimzi in kquota.yaml"),
        (
            {"declared": None, "callbacks": [STATIC_QUOTA_CALLBACK]},
            f"the brokers run {STATIC_QUOTA_CALLBACK}",
        ),
        (
            {"declared": None, "listeners": ["REPLICATION-9091://:9091,PLAIN-9092://:9092"]},
            "the brokers' listener names (REPLICATION-9091) are the Cluster Operator's",
        ),
        (
            {"declared": None, "inter_broker": ["CONTROLPLANE-9090"]},
            "the brokers' listener names (CONTROLPLANE-9090) are the Cluster Operator's",
        ),
        (
            {
                "declared": None,
                "callbacks": ["com.example.Mine"],
                "listeners": ["PLAINTEXT://:9092"],
            },
            None,
        ),
        ({"declared": None}, None),
    ],
)
def test_strimzi_evidence(kwargs: dict[str, object], want: str | None) -> None:
    assert strimzi_evidence(**kwargs) == want  # type: ignore[arg-type]


def test_kafka_quotas_spec_carries_the_keys_strimzi_has() -> None:
    assert kafka_quotas_spec(
        {P: 1048576.0, C: 2.0, Q: 12.5, M: 3.0, "connection_creation_rate": 1}
    ) == {
        "type": "kafka",
        "producerByteRate": 1048576,
        "consumerByteRate": 2,
        "requestPercentage": 12.5,
        "controllerMutationRate": 3,
    }


def test_notes_for_a_default_an_owned_user_and_a_callback() -> None:
    desired: QuotaState = {
        DEFAULT: {P: 1048576.0},
        Entity.of({"user": "orders"}): {P: 10.0},
        Entity.of({"user": "free"}): {P: 10.0},
    }
    controllers = Controllers(
        strimzi="platform: strimzi in kquota.yaml",
        kafka_users=frozenset({"orders"}),
        callback=STATIC_QUOTA_CALLBACK,
    )
    notes = controller_notes(_plan({}, desired), controllers)
    assert notes == (
        f"{ENFORCES_NOTHING} (client.quota.callback.class: {STATIC_QUOTA_CALLBACK})",
        f"{CLUSTER_OPERATOR} removes {{user=<default>}} quotas on every reconciliation "
        "(platform: strimzi in kquota.yaml): this change will not last. Move it into the Kafka "
        "resource: spec.kafka.quotas: {type: kafka, producerByteRate: 1048576} (docs/migrate.md)",
        f"{{user=orders}} is owned elsewhere: {USER_OPERATOR} rewrites it from the KafkaUser "
        "'orders' (spec.quotas); change it there",
    )
    keeps = Controllers(strimzi="x", keeps_defaults=True)
    (note,) = controller_notes(_plan({}, {DEFAULT: {P: 5.0}}), keeps)
    assert "writes {user=<default>} from the Kafka resource" in note
    assert "producerByteRate: 5" in note


def test_a_plan_that_only_removes_the_default_gets_no_move_note() -> None:
    plan = _plan({DEFAULT: {P: 1.0}}, {Entity.of({"user": "a"}): {P: 1.0}})
    assert controller_notes(plan, Controllers(strimzi="x")) == ()
    assert controller_notes(plan, Controllers()) == ()


def test_drift_names_what_the_operators_revert() -> None:
    desired: QuotaState = {
        DEFAULT: {P: 100.0},
        Entity.of({"user": "orders"}): {P: 10.0},
        Entity.of({"user": "free"}): {P: 10.0},
    }
    # the Cluster Operator removed the default; the User Operator put its own value back
    state: QuotaState = {
        Entity.of({"user": "orders"}): {P: 99.0},
        Entity.of({"user": "free"}): {P: 5.0},
    }
    plan = _plan(state, desired)
    controllers = Controllers(strimzi="declared", kafka_users=frozenset({"orders"}))
    report = drift_report(plan, prune=True, controllers=controllers)
    kinds = {(str(f.entity), f.kind, f.controller) for f in report.findings}
    assert kinds == {
        ("{user=<default>}", DriftKind.REVERTED_BY_CONTROLLER, CLUSTER_OPERATOR),
        ("{user=orders}", DriftKind.REVERTED_BY_CONTROLLER, USER_OPERATOR),
        ("{user=free}", DriftKind.VALUE_CHANGED, None),
    }
    assert report.counts()["reverted_by_controller"] == 2
    data = report.to_data()["findings"]
    assert {"controller": CLUSTER_OPERATOR}.items() <= data[0].items()
    # without controllers, the same plan is plain drift
    plain = drift_report(plan, prune=True)
    assert {f.kind for f in plain.findings} == {DriftKind.ENTITY_MISSING, DriftKind.VALUE_CHANGED}
    assert all("controller" not in f for f in plain.to_data()["findings"])


def test_a_changed_default_value_is_not_blamed_on_a_removing_operator() -> None:
    plan = _plan({DEFAULT: {P: 1.0}}, {DEFAULT: {P: 2.0}})
    report = drift_report(plan, prune=True, controllers=Controllers(strimzi="x"))
    assert [f.kind for f in report.findings] == [DriftKind.VALUE_CHANGED]
    writes = drift_report(
        plan, prune=True, controllers=Controllers(strimzi="x", keeps_defaults=True)
    )
    assert [f.kind for f in writes.findings] == [DriftKind.REVERTED_BY_CONTROLLER]
