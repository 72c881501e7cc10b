"""Principal discovery against real brokers: what discover() finds is what Kafka's own admin
client (confluent-kafka) sees, each source that cannot look says why, and a broker running a
quota callback of our own is recognised."""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import Consumer
from confluent_kafka.admin import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AdminClient,
    ResourcePatternType,
    ResourceType,
)

from acls import add_user, create_topic, sasl_properties
from callback_classes import TENANT as CALLBACK_CLASS
from callback_classes import broker_with_callback
from cli_runner import run_kquota
from conftest import KAFKA_VERSION
from kquota.devbroker.launcher import BrokerInfo
from kquota.kafka.admin import WireAdmin
from kquota.kafka.config import ClientConfig
from kquota.plan.resolver import Principal
from kquota.principals.live import discover, quota_callback
from kquota.principals.model import Discovery, SourceReport
from polling import eventually

pytestmark = pytest.mark.integration

T = secrets.token_hex(3)


def _admin_as(broker: BrokerInfo, user: str) -> WireAdmin:
    props = sasl_properties(broker, user, broker.users[user])
    return WireAdmin(props["bootstrap.servers"], ClientConfig.from_properties(props))


def _report(found: Discovery, source: str) -> SourceReport:
    return next(r for r in found.reports if r.source == source)


def _consume_until_assigned(props: dict[str, str], topic: str) -> Consumer:
    consumer = Consumer({**props, "auto.offset.reset": "earliest"})
    consumer.subscribe([topic])
    deadline = time.monotonic() + 60
    while not consumer.assignment():
        assert time.monotonic() < deadline, f"{props['client.id']} was never assigned {topic}"
        consumer.poll(0.2)
    return consumer


@pytest.fixture(scope="module")
def populated(kafka_broker_with_authorizer: BrokerInfo) -> Iterator[BrokerInfo]:
    """The authorizer broker with a SCRAM user, ACLs (one per user, one for ``User:*``) and
    two live group members: a classic consumer and, on Kafka 4, a KIP-848 consumer."""
    broker = kafka_broker_with_authorizer
    add_user(broker, f"scram-{T}", "pw-" + T)
    su = AdminClient(sasl_properties(broker, "admin", broker.users["admin"]))
    bindings = [
        AclBinding(
            ResourceType.TOPIC,
            f"orders-{T}",
            ResourcePatternType.LITERAL,
            principal,
            "*",
            AclOperation.READ,
            AclPermissionType.ALLOW,
        )
        for principal in (f"User:acl-{T}", "User:*")
    ]
    for f in su.create_acls(bindings).values():
        f.result(timeout=30)
    topic = f"members-{T}"
    create_topic(broker, topic)
    base = sasl_properties(broker, "admin", broker.users["admin"])
    consumers = [
        _consume_until_assigned(
            {**base, "group.id": f"classic-{T}", "client.id": f"classic-app-{T}"}, topic
        )
    ]
    if not KAFKA_VERSION.startswith("3."):
        # Kafka 4 serves the KIP-848 consumer protocol; DescribeGroups does not describe
        # such a group, ConsumerGroupDescribe does.
        consumers.append(
            _consume_until_assigned(
                {
                    **base,
                    "group.id": f"kip848-{T}",
                    "client.id": f"kip848-app-{T}",
                    "group.protocol": "consumer",
                },
                topic,
            )
        )
    try:
        yield broker
    finally:
        for c in consumers:
            c.close()
        su.delete_acls(
            [
                AclBindingFilter(
                    ResourceType.TOPIC,
                    f"orders-{T}",
                    ResourcePatternType.LITERAL,
                    None,
                    None,
                    AclOperation.ANY,
                    AclPermissionType.ANY,
                )
            ]
        )


def _kafka_view(broker: BrokerInfo) -> tuple[set[str], set[str], set[str]]:
    """What Kafka's own admin client sees: SCRAM users, User: principals in ACLs (not the
    wildcard), and the client ids of every group's members."""
    su = AdminClient(sasl_properties(broker, "admin", broker.users["admin"]))
    scram = set(su.describe_user_scram_credentials().result(timeout=30))
    any_acl = AclBindingFilter(
        ResourceType.ANY,
        None,
        ResourcePatternType.ANY,
        None,
        None,
        AclOperation.ANY,
        AclPermissionType.ANY,
    )
    principals = {b.principal for b in su.describe_acls(any_acl).result(timeout=30)}
    acl_users = {p.removeprefix("User:") for p in principals if p != "User:*"}
    groups = [g.group_id for g in su.list_consumer_groups().result(timeout=30).valid]
    members: set[str] = set()
    for f in su.describe_consumer_groups(groups).values():
        members |= {m.client_id for m in f.result(timeout=30).members}
    return scram, acl_users, members


def test_discover_finds_what_kafka_itself_sees(populated: BrokerInfo) -> None:
    scram, acl_users, members = _kafka_view(populated)
    assert {f"scram-{T}", "admin", "alice"} <= scram
    assert f"acl-{T}" in acl_users
    expected_members = {f"classic-app-{T}"} | (
        set() if KAFKA_VERSION.startswith("3.") else {f"kip848-app-{T}"}
    )
    assert expected_members <= members
    with _admin_as(populated, "admin") as admin:
        found = discover(admin)

    assert _report(found, "scram-users") == SourceReport("scram-users", len(scram))
    acl_report = _report(found, "acl-principals")
    assert (acl_report.found, acl_report.reason) == (len(acl_users), None)
    assert acl_report.note is not None and "User:*" in acl_report.note
    assert _report(found, "group-members") == SourceReport("group-members", len(members))
    assert [r.source for r in found.reports] == ["scram-users", "acl-principals", "group-members"]
    assert found.quota_callback is None
    users = {p.user for p in found.principals if p.user is not None}
    assert users == scram | acl_users
    assert "*" not in users
    clients = {p.client_id for p in found.principals if p.client_id is not None}
    assert clients == members
    assert list(found.principals) == sorted(
        found.principals, key=lambda p: (p.user or "", p.client_id or "", p.ip or "")
    )
    assert len(set(found.principals)) == len(found.principals)
    assert Principal(client_id=f"classic-app-{T}") in found.principals


def test_a_principal_without_rights_gets_reasons_not_exceptions(populated: BrokerInfo) -> None:
    """alice has no ACLs: the cluster-level lookups say who lacks what; ListGroups answers
    with only the groups she may describe (none), which is not an error."""
    with _admin_as(populated, "alice") as admin:
        found = discover(admin)
    by_source = {r.source: r for r in found.reports}
    for source, api in (
        ("scram-users", "DescribeUserScramCredentials"),
        ("acl-principals", "DescribeAcls"),
        ("quota-callback", "DescribeConfigs"),
    ):
        report = by_source[source]
        assert report.found is None, report
        assert report.reason is not None
        assert api in report.reason and "CLUSTER_AUTHORIZATION_FAILED" in report.reason
        assert "User:alice" in report.reason
    groups = by_source["group-members"]
    assert (groups.found, groups.reason) == (0, None)
    assert groups.note is not None and "may be more" in groups.note
    assert found.principals == ()


def test_a_broker_without_authorizer_says_it_has_no_acls(kafka_broker: BrokerInfo) -> None:
    with WireAdmin(kafka_broker.bootstrap_servers) as admin:
        found = discover(admin)
    acl = _report(found, "acl-principals")
    assert acl.found is None
    assert acl.reason is not None and "SECURITY_DISABLED" in acl.reason
    assert "no authorizer" in acl.reason
    assert _report(found, "scram-users").found is not None
    assert found.quota_callback is None
    with WireAdmin(kafka_broker.bootstrap_servers) as admin:
        assert quota_callback(admin) == (None, None)


# ---- a broker running a quota callback of our own ---------------------------------------------


@pytest.fixture(scope="module")
def callback_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerInfo]:
    with broker_with_callback(
        tmp_path_factory.mktemp("kafka-broker-callback"), CALLBACK_CLASS
    ) as info:
        yield info


def test_a_custom_quota_callback_is_recognised(callback_broker: BrokerInfo) -> None:
    with WireAdmin(callback_broker.bootstrap_servers) as admin:
        found = discover(admin)
        callback = quota_callback(admin)
    assert found.quota_callback == CALLBACK_CLASS
    assert callback == (CALLBACK_CLASS, None)
    log = eventually(
        lambda: (Path(callback_broker.dir) / "broker.out").read_text(errors="replace"),
        lambda text: "TenantQuotaCallback configured" in text,
    )
    assert "TenantQuotaCallback configured" in log, "the broker never loaded our callback"


def _resolve(broker: BrokerInfo, fmt: str, capsys: pytest.CaptureFixture[str]) -> str:
    argv = ["resolve", "--bootstrap-server", broker.bootstrap_servers, "--names", "user=bob"]
    code, out, err = run_kquota([*argv, "--format", fmt], capsys)
    assert code == 0, err
    return out


def test_resolve_says_a_custom_callback_may_compute_otherwise(
    callback_broker: BrokerInfo, capsys: pytest.CaptureFixture[str]
) -> None:
    text = _resolve(callback_broker, "text", capsys)
    assert text.splitlines()[-1] == (
        f"note: the brokers run a custom quota callback ({CALLBACK_CLASS}); they may compute "
        "quotas differently from Kafka's default rules used here"
    )
    data = json.loads(_resolve(callback_broker, "json", capsys))
    assert data["quota_callback"] == CALLBACK_CLASS
    assert data["entity"] == {"user": "bob"}


def test_resolve_on_a_default_broker_is_unchanged(
    kafka_broker: BrokerInfo, capsys: pytest.CaptureFixture[str]
) -> None:
    text = _resolve(kafka_broker, "text", capsys)
    assert "note:" not in text
    assert text.splitlines()[0].startswith("producer_byte_rate=")
    data = json.loads(_resolve(kafka_broker, "json", capsys))
    assert set(data) == {"entity", "quotas"}
