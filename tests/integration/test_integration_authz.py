"""A broker with StandardAuthorizer: alice (no ACLs) is refused clearly, admin is not."""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka.admin import AclOperation, ResourceType

from acls import add_user, allow, create_topic, revoke, sasl_properties
from cli_runner import run_kquota
from kquota.cli.main import main
from kquota.devbroker.launcher import BrokerInfo
from kquota.kafka.admin import QuotaAlteration, QuotaOp, WireAdmin
from kquota.kafka.config import ClientConfig
from kquota.kafka.errors import ClusterAuthorizationError
from kquota.model import Entity, QuotaState
from kquota.target import Target
from polling import retrying

pytestmark = pytest.mark.integration

T = secrets.token_hex(3)


def eventually_authorized(call: Callable[[], object]) -> None:
    """eventually_authorized retries CALL until a fresh cluster ACL reaches the broker."""
    retrying(call, ClusterAuthorizationError)


def _granted(
    broker: BrokerInfo, user: str, password: str, operation: AclOperation
) -> dict[str, str]:
    """_granted makes a SASL user allowed ``operation`` on the cluster and gives its client
    properties once the broker authorizes it (a broker applies ACLs in order: the user's
    earlier ones are in force then too)."""
    add_user(broker, user, password)
    allow(broker, user, operation)
    props = sasl_properties(broker, user, password)
    with WireAdmin(props["bootstrap.servers"], ClientConfig.from_properties(props)) as admin:
        eventually_authorized(admin.describe_all)
    return props


def _as(broker: BrokerInfo, user: str) -> Target:
    return Target.from_options(
        broker.sasl_bootstrap_servers,
        None,
        {
            "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "SCRAM-SHA-256",
            "sasl.username": user,
            "sasl.password": broker.users[user],
        },
    )


@pytest.fixture(scope="module")
def alice(kafka_broker_with_authorizer: BrokerInfo) -> Iterator[WireAdmin]:
    with _as(kafka_broker_with_authorizer, "alice").admin() as a:
        yield a


def _alts() -> list[QuotaAlteration]:
    return [
        QuotaAlteration(
            Entity.of({"user": f"authz-{T}-{i}"}), (QuotaOp.set("producer_byte_rate", 1000),)
        )
        for i in range(3)
    ]


def test_alice_cannot_describe(alice: WireAdmin) -> None:
    with pytest.raises(ClusterAuthorizationError) as e:
        alice.describe_all()
    assert (e.value.code, e.value.name) == (31, "CLUSTER_AUTHORIZATION_FAILED")
    assert "Cluster authorization failed." in str(e.value)
    assert (
        "User:alice is not allowed DESCRIBE_CONFIGS on the CLUSTER resource, which "
        "DescribeClientQuotas needs" in str(e.value)
    )


@pytest.mark.parametrize("validate_only", [True, False])
def test_alice_cannot_alter(alice: WireAdmin, validate_only: bool) -> None:
    results = alice.alter(_alts(), validate_only=validate_only)
    assert [r.entity for r in results] == [a.entity for a in _alts()]
    assert {(r.error_code, r.error_name, r.error_message) for r in results} == {
        (
            31,
            "CLUSTER_AUTHORIZATION_FAILED",
            "Cluster authorization failed. User:alice is not allowed ALTER_CONFIGS on the "
            "CLUSTER resource, which AlterClientQuotas needs; grant it with: kafka-acls --add "
            "--allow-principal User:alice --operation AlterConfigs --cluster",
        )
    }


def test_admin_can(kafka_broker_with_authorizer: BrokerInfo) -> None:
    with _as(kafka_broker_with_authorizer, "admin").admin() as a:
        assert all(r.ok for r in a.alter(_alts(), validate_only=False))
        assert isinstance(a.describe_all(), dict)


def test_cli_shows_the_authorization_error(
    kafka_broker_with_authorizer: BrokerInfo, tmp_path: object, capsys: pytest.CaptureFixture[str]
) -> None:
    from pathlib import Path

    props = Path(str(tmp_path)) / "alice.properties"
    props.write_text(
        "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-512\n"
        "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required "
        'username="alice" password="alice-secret";\n'
    )
    base = [
        "--bootstrap-server",
        kafka_broker_with_authorizer.sasl_bootstrap_servers,
        "--command-config",
        str(props),
    ]
    for argv in (
        ["describe", *base],
        ["alter", *base, "--names", f"user=cli-{T}", "--add", "producer_byte_rate=1000"],
        [
            "alter",
            *base,
            "--names",
            f"user=cli-{T}",
            "--add",
            "producer_byte_rate=1000",
            "--validate-only",
        ],
    ):
        with pytest.raises(SystemExit) as e:
            main(argv)
        assert e.value.code == 1
        err = capsys.readouterr().err
        assert "Cluster authorization failed." in err and "CLUSTER_AUTHORIZATION_FAILED" in err
        operation = "DESCRIBE_CONFIGS" if argv[0] == "describe" else "ALTER_CONFIGS"
        assert f"User:alice is not allowed {operation} on the CLUSTER resource" in err
        assert "alice-secret" not in err


def test_apply_without_alter_configs_names_what_is_missing_once_for_all_entities(
    kafka_broker_with_authorizer: BrokerInfo,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # bob may describe (DESCRIBE_CONFIGS) but not alter: the plan is made, the validate-only
    # pass fails for every entity with one identical reason, shown once with a count.
    broker = kafka_broker_with_authorizer
    bob = f"bob-{T}"
    props = _granted(broker, bob, "bob-secret", AclOperation.DESCRIBE_CONFIGS)
    (tmp_path / "client.properties").write_text(
        "".join(f"{k}={v}\n" for k, v in props.items() if k != "bootstrap.servers")
    )
    (tmp_path / "quotas").mkdir()
    (tmp_path / "quotas" / "q.yaml").write_text(
        "apiVersion: kquota/v1\nkind: ClientQuotas\nquotas:\n"
        + "".join(
            f"  - {{match: {{user: grp-{T}-{i:02}}}, set: {{request_percentage: 5}}}}\n"
            for i in range(30)
        )
    )
    monkeypatch.chdir(tmp_path)
    argv = ["apply", "--bootstrap-server", props["bootstrap.servers"], "--command-config",
            "client.properties", "--auto-approve"]  # fmt: skip
    # Without rights on the apply lease's topic, apply says what the lease needs, and how to
    # do without it, before anything is written.
    code, out, err = run_kquota(argv, capsys)
    assert code == 1
    # Creating the topic, or writing to it when another test already created it.
    assert "the lease topic _kquota_apply_lease: " in err and "Traceback" not in err
    assert "needs Read, Write and Describe on topic _kquota_apply_lease" in err
    assert "or run apply with --no-lease" in err
    assert "validate-only" not in out and "committed" not in out
    code, out, err = run_kquota([*argv, "--no-lease"], capsys)
    assert code == 1, err
    report = out[out.index("validate-only pass failed") :].splitlines()
    assert report == [
        "validate-only pass failed for 30 of 30 entities; nothing was committed:",
        "  30 entities: CLUSTER_AUTHORIZATION_FAILED: Cluster authorization failed. "
        f"User:{bob} is not allowed ALTER_CONFIGS on the CLUSTER resource, which "
        "AlterClientQuotas needs; grant it with: kafka-acls --add --allow-principal "
        f"User:{bob} --operation AlterConfigs --cluster",
        f"      e.g. {{user=grp-{T}-00}}, {{user=grp-{T}-01}}, {{user=grp-{T}-02}} and 27 more",
    ]
    assert "bob-secret" not in out + err


def test_audit_topic_writability_is_checked_before_commit_and_a_lost_audit_exits_3(
    kafka_broker_with_authorizer: BrokerInfo,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import kquota.apply.applier as applier
    from kquota.audit import AuditError, AuditPublisher

    broker = kafka_broker_with_authorizer
    carol, topic = f"carol-{T}", f"audit-{T}"
    create_topic(broker, topic)
    on_topic = (ResourceType.TOPIC, topic)
    allow(broker, carol, AclOperation.DESCRIBE, on_topic)
    props = _granted(broker, carol, "carol-secret", AclOperation.ALTER_CONFIGS)

    def audit_check() -> None:
        with AuditPublisher(topic, props, timeout=10) as audit:
            audit.check()

    def audit_write_denied() -> None:
        with pytest.raises(AuditError, match="not allowed WRITE"):
            audit_check()

    (tmp_path / "client.properties").write_text(
        "".join(f"{k}={v}\n" for k, v in props.items() if k != "bootstrap.servers")
    )
    (tmp_path / "quotas").mkdir()
    (tmp_path / "quotas" / "q.yaml").write_text(
        "apiVersion: kquota/v1\nkind: ClientQuotas\nquotas:\n"
        f"  - {{match: {{user: aud-{T}-1}}, set: {{request_percentage: 5}}}}\n"
        f"  - {{match: {{user: aud-{T}-2}}, set: {{request_percentage: 6}}}}\n"
    )
    monkeypatch.chdir(tmp_path)
    argv = ["apply", "--bootstrap-server", props["bootstrap.servers"], "--command-config",
            "client.properties", "--auto-approve", "--audit-topic", topic,
            "--no-lease"]  # fmt: skip

    def ours() -> QuotaState:
        with _as(broker, "admin").admin() as a:
            return {e: v for e, v in a.describe_all().items() if f"aud-{T}-" in str(e)}

    # carol may alter quotas and see the topic, not write it: refused before any commit.
    code, out, err = run_kquota(argv, capsys)
    assert code == 1
    assert err == (
        f"error: audit topic {topic!r}: User:{carol} is not allowed WRITE on it, which the audit "
        "producer needs (for its idempotent producer id too); nothing was committed\n"
    )
    assert "committed" not in out and ours() == {}

    # With WRITE the check passes; the WRITE is then taken away between commit and publish
    # (a real revocation on the real broker, timed by wrapping the commit step).
    allow(broker, carol, AclOperation.WRITE, on_topic)
    retrying(audit_check, AuditError)
    real_apply = applier.apply_plan

    def apply_then_revoke_write(*args: Any, **kwargs: Any) -> Any:
        report = real_apply(*args, **kwargs)
        revoke(broker, carol, AclOperation.WRITE, on_topic)
        retrying(audit_write_denied, pytest.fail.Exception)
        return report

    monkeypatch.setattr(applier, "apply_plan", apply_then_revoke_write)
    code, out, err = run_kquota(argv, capsys)
    assert code == 3, out + err
    assert "committed 2 of 2 entities" in out and "verified" in out
    assert err.startswith("error: 2 committed entities are not audited: audit trail: 2 of 2")
    assert "The changes are in the cluster" in err and "Traceback" not in err
    assert "carol-secret" not in out + err
    assert len(ours()) == 2


def test_an_audit_topic_the_principal_may_not_describe_is_refused_as_such_not_missing(
    kafka_broker_with_authorizer: BrokerInfo,
) -> None:
    # A listing leaves such a topic out; asked for by name, the broker says it is refused.
    from kquota.audit import AuditError, AuditPublisher, AuditTopicMissing

    broker = kafka_broker_with_authorizer
    dave, topic = f"dave-{T}", f"audit-hidden-{T}"
    create_topic(broker, topic)
    props = _granted(broker, dave, "dave-secret", AclOperation.ALTER_CONFIGS)
    with AuditPublisher(topic, props, timeout=10) as audit, pytest.raises(AuditError) as e:
        audit.check()
    assert not isinstance(e.value, AuditTopicMissing)
    assert str(e.value) == (
        f"audit topic {topic!r}: User:{dave} is not allowed to describe or write it (the audit "
        "producer needs WRITE on the topic)"
    )


def test_topics_create_reports_a_topic_the_principal_may_not_describe_and_creates_nothing(
    kafka_broker_with_authorizer: BrokerInfo,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # erin may create topics but describe none: a listing leaves out both the topic that
    # exists and the one that does not, and asked by name the broker refuses both alike.
    from confluent_kafka.admin import (  # type: ignore[attr-defined]
        AdminClient,
        ConfigResource,
        ConfigSource,
    )

    broker = kafka_broker_with_authorizer
    erin, existing, absent = f"erin-{T}", f"audit-unseen-{T}", f"audit-absent-{T}"
    create_topic(broker, existing)
    allow(broker, erin, AclOperation.CREATE)
    props = _granted(broker, erin, "erin-secret", AclOperation.DESCRIBE_CONFIGS)
    (tmp_path / "erin.properties").write_text(
        "".join(f"{k}={v}\n" for k, v in props.items() if k != "bootstrap.servers")
    )
    argv = ["topics", "create", "--bootstrap-server", props["bootstrap.servers"],
            "--command-config", str(tmp_path / "erin.properties"), "--audit-topic"]  # fmt: skip
    needs = (
        f"User:{erin} is not allowed to describe it, so kquota cannot tell whether it exists "
        "(kquota topics create needs Describe on the topic, and Create on the cluster or on "
        "the topic to make it)"
    )
    for topic in (existing, absent):
        code, out, err = run_kquota([*argv, topic], capsys)
        assert (code, out) == (1, ""), err
        assert err == (
            f"error: topic {topic} (the audit trail): {needs}\n"
            f"topic _kquota_apply_lease (the apply lease): {needs}\n"
            "nothing was created\n"
        )
    admin = AdminClient(sasl_properties(broker, "admin", broker.users["admin"]))
    assert absent not in admin.list_topics(timeout=30).topics
    # The existing topic has no setting of its own still: none of kquota's was written.
    resource = ConfigResource(ResourceType.TOPIC, existing)
    configs = admin.describe_configs([resource])[resource].result(timeout=30)
    own = ConfigSource.DYNAMIC_TOPIC_CONFIG
    assert configs and {k for k, v in configs.items() if ConfigSource(v.source) is own} == set()
