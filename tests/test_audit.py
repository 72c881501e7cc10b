"""Audit trail: events produced to a real broker and read back, headers included; failures loud.

Each broker test writes to a fresh topic (created with AdminClient, one partition so order is
observable) and reads it back with an independent consumer from the earliest offset.
"""

from __future__ import annotations

import json
import os
import socket
import time
import uuid
from typing import Any

import pytest
from confluent_kafka import TIMESTAMP_CREATE_TIME, Consumer, Message, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]

from kquota import __version__
from kquota.audit import (
    AuditError,
    AuditEvent,
    AuditOp,
    AuditPublisher,
    DriftEvent,
    actor,
    git_commit,
    record_key,
    topic_name_problem,
    utc_timestamp,
)
from kquota.devbroker.launcher import BrokerInfo
from kquota.kafka.librdkafka import LibrdkafkaConfigError, producer_config
from kquota.model import Entity
from kquota.plan.types import Alteration, ChangeKind, Op

ALICE = Entity.of({"user": "alice", "client-id": None})
DEFAULT_USER = Entity.of({"user": None})
TS = "2026-01-02T03:04:05.678Z"


def _events(plan_id: str = "plan-123") -> list[AuditEvent]:
    common: dict[str, Any] = {
        "plan_id": plan_id,
        "cluster": "dev",
        "cluster_id": "MkU3OEVBNTcwNTJENDM2Qg",
        "git_commit": "0123abcd",
        "actor": "octocat",
        "timestamp": TS,
    }
    return [
        AuditEvent(
            entity=ALICE,
            ops=(AuditOp("producer_byte_rate", before=None, after=1048576.0, remove=False),),
            **common,
        ),
        AuditEvent(
            entity=DEFAULT_USER,
            ops=(
                AuditOp("consumer_byte_rate", before=2048.0, after=4096.0, remove=False),
                AuditOp("request_percentage", before=50.0, after=None, remove=True),
            ),
            **common,
        ),
    ]


def _plain(broker: BrokerInfo) -> dict[str, str]:
    return {"bootstrap.servers": broker.bootstrap_servers}


def _sasl(broker: BrokerInfo, password: str | None = None) -> dict[str, str]:
    return {
        "bootstrap.servers": broker.sasl_bootstrap_servers,
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": "SCRAM-SHA-256",
        "sasl.username": broker.username,
        "sasl.password": broker.password if password is None else password,
    }


def _fresh_topic(broker: BrokerInfo) -> str:
    topic = f"kquota-audit-{uuid.uuid4().hex[:12]}"
    admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
    futures = admin.create_topics([NewTopic(topic, num_partitions=1, replication_factor=1)])
    futures[topic].result(timeout=30)
    return topic


def _consume(broker: BrokerInfo, topic: str, count: int, timeout: float = 30.0) -> list[Message]:
    consumer = Consumer(
        {
            **_plain(broker),
            "group.id": f"kquota-test-{uuid.uuid4().hex}",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": "false",
        }
    )
    try:
        # Assigning the partition from the beginning avoids waiting on a group rebalance.
        consumer.assign([TopicPartition(topic, 0, 0)])
        got: list[Message] = []
        deadline = time.monotonic() + timeout
        while len(got) < count and time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is None:
                continue
            assert msg.error() is None, msg.error()
            got.append(msg)
        # One more short poll: nothing beyond what was published may be there.
        extra = consumer.poll(1.0)
        assert extra is None or extra.error() is not None, "more records than published"
        return got
    finally:
        consumer.close()


def _assert_events_on_topic(broker: BrokerInfo, topic: str, events: list[AuditEvent]) -> None:
    got = _consume(broker, topic, len(events))
    assert len(got) == len(events)
    for msg, event in zip(got, events, strict=True):
        assert msg.key() == record_key(event.entity).encode()
        assert msg.headers() == [
            ("event-type", b"quota.altered"),
            ("plan-id", b"plan-123"),
            ("content-type", b"application/json"),
        ]
        assert msg.timestamp() == (TIMESTAMP_CREATE_TIME, 1767323045678)
    assert [json.loads(m.key() or b"") for m in got] == [
        {"client-id": None, "user": "alice"},
        {"user": None},
    ]
    assert json.loads(got[0].value() or b"") == {
        "event_type": "quota.altered",
        "entity": {"user": "alice", "client-id": None},
        "ops": [{"key": "producer_byte_rate", "before": None, "after": 1048576.0, "remove": False}],
        "plan_id": "plan-123",
        "git_commit": "0123abcd",
        "actor": "octocat",
        "cluster": "dev",
        "cluster_id": "MkU3OEVBNTcwNTJENDM2Qg",
        "kquota_version": __version__,
        "timestamp": TS,
    }
    assert json.loads(got[1].value() or b"") == {
        "event_type": "quota.altered",
        "entity": {"user": None},
        "ops": [
            {"key": "consumer_byte_rate", "before": 2048.0, "after": 4096.0, "remove": False},
            {"key": "request_percentage", "before": 50.0, "after": None, "remove": True},
        ],
        "plan_id": "plan-123",
        "git_commit": "0123abcd",
        "actor": "octocat",
        "cluster": "dev",
        "cluster_id": "MkU3OEVBNTcwNTJENDM2Qg",
        "kquota_version": __version__,
        "timestamp": TS,
    }


# --- against the real broker --------------------------------------------------------------


def test_publish_over_plaintext_reads_back_exactly(kafka_broker: BrokerInfo) -> None:
    topic = _fresh_topic(kafka_broker)
    events = _events()
    with AuditPublisher(topic, _plain(kafka_broker), timeout=20) as audit:
        audit.publish(events)
    _assert_events_on_topic(kafka_broker, topic, events)


def test_signed_events_verify_as_the_trail_reader_reads_them(kafka_broker: BrokerInfo) -> None:
    from kquota.audit_keys import KEY_ID_HEADER, AuditKeys, Verdict
    from kquota.history.trail import read_trail

    topic = _fresh_topic(kafka_broker)
    keys = AuditKeys("k1", {"k1": b"s" * 32})
    with AuditPublisher(topic, _plain(kafka_broker), timeout=20, signer=keys) as audit:
        audit.publish(_events())
    got = _consume(kafka_broker, topic, 2)
    # The value is the JSON contract as ever: the signature travels in headers.
    assert [m.value() for m in got] == [e.record().value for e in _events()]
    assert all((KEY_ID_HEADER, b"k1") in (m.headers() or []) for m in got)
    trail = read_trail(topic, _plain(kafka_broker), timeout=30, keys=keys)
    assert [c.verdict for c in trail.changes] == [Verdict.VERIFIED, Verdict.VERIFIED]
    assert trail.changes[0].cluster_id == "MkU3OEVBNTcwNTJENDM2Qg" and trail.bad == ()
    other = AuditKeys("k1", {"k1": b"o" * 32})
    again = read_trail(topic, _plain(kafka_broker), timeout=30, keys=other)
    assert [c.verdict for c in again.changes] == [Verdict.BAD_SIGNATURE] * 2


def test_publish_over_sasl_scram_reads_back_exactly(kafka_broker: BrokerInfo) -> None:
    topic = _fresh_topic(kafka_broker)
    events = _events()
    with AuditPublisher(topic, _sasl(kafka_broker), timeout=20) as audit:
        audit.publish(events)
    _assert_events_on_topic(kafka_broker, topic, events)


def test_publish_with_java_style_jaas_config(kafka_broker: BrokerInfo) -> None:
    # A --command-config written for Kafka's Java tools must work for the audit producer too.
    topic = _fresh_topic(kafka_broker)
    props = {
        "bootstrap.servers": kafka_broker.sasl_bootstrap_servers,
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": "SCRAM-SHA-256",
        "sasl.jaas.config": "org.apache.kafka.common.security.scram.ScramLoginModule required "
        f'username="{kafka_broker.username}" password="{kafka_broker.password}";',
    }
    with AuditPublisher(topic, props, timeout=20) as audit:
        audit.publish(_events()[:1])
    got = _consume(kafka_broker, topic, 1)
    assert [m.key() for m in got] == [b'{"client-id":null,"user":"alice"}']


def test_drift_event_reads_back(kafka_broker: BrokerInfo) -> None:
    topic = _fresh_topic(kafka_broker)
    report = {"cluster": "dev", "in_sync": False, "differences": [{"kind": "value_changed"}]}
    event = DriftEvent(cluster="dev", report=report, git_commit=None, actor="cron", timestamp=TS)
    with AuditPublisher(topic, _plain(kafka_broker), timeout=20) as audit:
        audit.publish([event])
    (msg,) = _consume(kafka_broker, topic, 1)
    assert msg.key() == b"dev"
    assert msg.headers() == [("event-type", b"quota.drift"), ("content-type", b"application/json")]
    assert json.loads(msg.value() or b"") == {
        "event_type": "quota.drift",
        "cluster": "dev",
        "report": report,
        "git_commit": None,
        "actor": "cron",
        "kquota_version": __version__,
        "timestamp": TS,
    }


def test_publish_nothing_is_a_no_op(kafka_broker: BrokerInfo) -> None:
    topic = _fresh_topic(kafka_broker)
    with AuditPublisher(topic, _plain(kafka_broker), timeout=20) as audit:
        audit.publish([])
    assert _consume(kafka_broker, topic, 0, timeout=1) == []


def test_wrong_sasl_password_fails_and_never_prints_it(
    kafka_broker: BrokerInfo, capfd: pytest.CaptureFixture[str]
) -> None:
    topic = _fresh_topic(kafka_broker)
    wrong = "wrong-password-" + uuid.uuid4().hex
    started = time.monotonic()
    with (
        AuditPublisher(
            topic, {**_sasl(kafka_broker, wrong), "message.timeout.ms": "3000"}
        ) as audit,
        pytest.raises(AuditError) as excinfo,
    ):
        audit.publish(_events())
    assert time.monotonic() - started < 15
    message = str(excinfo.value)
    assert "2 of 2 event(s)" in message
    assert wrong not in message
    out, err = capfd.readouterr()
    assert wrong not in out + err
    assert _consume(kafka_broker, topic, 0, timeout=1) == []


# --- failures without a broker ------------------------------------------------------------


def _closed_port() -> int:
    # Bind then close: nothing listens there, so connecting is refused at once.
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_unreachable_bootstrap_raises_with_count_within_bound(
    capfd: pytest.CaptureFixture[str],
) -> None:
    config = {"bootstrap.servers": f"127.0.0.1:{_closed_port()}", "message.timeout.ms": "2000"}
    started = time.monotonic()
    with AuditPublisher("kquota-audit", config) as audit, pytest.raises(AuditError) as excinfo:
        audit.publish(_events())
    elapsed = time.monotonic() - started
    assert elapsed < 12, elapsed
    message = str(excinfo.value)
    assert "2 of 2 event(s) to topic 'kquota-audit' were not confirmed" in message
    # librdkafka's reconnect chatter goes to the logger, not to the terminal.
    out, err = capfd.readouterr()
    assert "Connection refused" not in err


def test_publisher_refuses_use_after_close() -> None:
    audit = AuditPublisher("t", {"bootstrap.servers": f"127.0.0.1:{_closed_port()}"})
    audit.close()
    audit.close()  # idempotent
    with pytest.raises(AuditError, match="closed"):
        audit.publish(_events())


def test_invalid_config_error_hides_secret_values() -> None:
    secret = "s3cret-" + uuid.uuid4().hex
    # librdkafka echoes an invalid value in its error; here the value is also the password.
    config = {"bootstrap.servers": "127.0.0.1:1", "sasl.password": secret,
              "security.protocol": secret}  # fmt: skip
    with pytest.raises(AuditError) as excinfo:
        AuditPublisher("t", config)
    message = str(excinfo.value)
    assert secret not in message
    assert "security.protocol" in message and "***" in message


def test_empty_topic_is_refused() -> None:
    with pytest.raises(AuditError, match="topic"):
        AuditPublisher("", {"bootstrap.servers": "127.0.0.1:1"})


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("", "the audit topic name is empty"),
        (".", "'.' and '..' are not topic names"),
        ("..", "'.' and '..' are not topic names"),
        ("a" * 250, "audit topic name is 250 characters long; Kafka allows 249"),
        (
            "audit topic",
            "audit topic 'audit topic' has characters Kafka does not allow in a topic name "
            "(' '); allowed: ASCII letters, digits, '.', '_' and '-'",
        ),
        (
            "aud\x1b[2Jit/x",
            "audit topic 'aud\\x1b[2Jit/x' has characters Kafka does not allow in a topic "
            "name ('\\x1b' '/' '[')",
        ),
        ("kquöta", "('ö')"),
    ],
)
def test_topic_names_kafka_refuses_are_refused_before_connecting(name: str, problem: str) -> None:
    assert problem in (topic_name_problem(name) or "")
    with pytest.raises(AuditError) as e:
        AuditPublisher(name, {"bootstrap.servers": f"127.0.0.1:{_closed_port()}"})
    assert "\x1b" not in str(e.value)


@pytest.mark.parametrize("name", ["kquota-audit", "a" * 249, "A.b_c-9", "..."])
def test_legal_topic_names(name: str) -> None:
    assert topic_name_problem(name) is None


def test_check_accepts_an_existing_writable_topic(kafka_broker: BrokerInfo) -> None:
    topic = _fresh_topic(kafka_broker)
    with AuditPublisher(topic, _plain(kafka_broker), timeout=10) as audit:
        audit.check()


def test_check_refuses_a_missing_topic_and_never_creates_it(kafka_broker: BrokerInfo) -> None:
    # The dev broker auto-creates topics (Kafka's default): the check must not trigger it.
    topic = f"kquota-typo-{uuid.uuid4().hex[:8]}"
    with AuditPublisher(topic, _plain(kafka_broker), timeout=5) as audit:
        with pytest.raises(AuditError) as e:
            audit.check()
        assert str(e.value) == (
            f"audit topic {topic!r} does not exist on the cluster; create it first with "
            "`kquota topics create` (kquota never lets a topic be auto-created, so a typo "
            "cannot become a new topic)"
        )
        # Nor does a publish to it create it: it fails instead.
        with pytest.raises(AuditError, match="not confirmed"):
            audit.publish(_events())
    metadata = AdminClient(_plain(kafka_broker)).list_topics(timeout=10)
    assert topic not in metadata.topics


def test_check_against_an_unreachable_cluster_is_a_message() -> None:
    props = {"bootstrap.servers": f"127.0.0.1:{_closed_port()}"}
    with AuditPublisher("kquota-audit", props, timeout=2) as audit, pytest.raises(AuditError) as e:
        audit.check()
    assert "audit topic 'kquota-audit'" in str(e.value)


# --- events and config, pure --------------------------------------------------------------


def test_event_record_is_canonical() -> None:
    event = _events()[0]
    record = event.record()
    # Entity key: sorted type names, compact, null for the default entity.
    assert record.key == b'{"client-id":null,"user":"alice"}'
    assert record.headers == [
        ("event-type", b"quota.altered"),
        ("plan-id", b"plan-123"),
        ("content-type", b"application/json"),
    ]
    assert record.timestamp_ms == 1767323045678
    assert json.loads(record.value)["entity"] == {"user": "alice", "client-id": None}


def test_event_without_plan_id_has_no_plan_id_header() -> None:
    event = _events(plan_id="x")[0]
    no_plan = AuditEvent(entity=event.entity, ops=event.ops, plan_id=None, cluster=None)
    assert [name for name, _ in no_plan.record().headers] == ["event-type", "content-type"]
    assert json.loads(no_plan.record().value)["plan_id"] is None


def test_entity_key_is_independent_of_type_order() -> None:
    a = Entity.of({"client-id": "app", "user": "bob"})
    b = Entity.of({"user": "bob", "client-id": "app"})
    assert record_key(a) == record_key(b) == '{"client-id":"app","user":"bob"}'


def test_from_alteration_maps_ops() -> None:
    alteration = Alteration(
        entity=ALICE,
        ops=(
            Op(key="consumer_byte_rate", value=None, remove=True, before=10.0),
            Op(key="producer_byte_rate", value=20.0, remove=False, before=None),
        ),
        kind=ChangeKind.UPDATE,
    )
    event = AuditEvent.from_alteration(
        alteration, plan_id="p", cluster="c", git_commit="g", actor="a", timestamp=TS
    )
    assert event.ops == (
        AuditOp("consumer_byte_rate", before=10.0, after=None, remove=True),
        AuditOp("producer_byte_rate", before=None, after=20.0, remove=False),
    )
    assert (event.plan_id, event.cluster, event.git_commit, event.actor) == ("p", "c", "g", "a")


def test_nan_value_is_an_audit_error_not_invalid_json() -> None:
    bad = AuditEvent(
        entity=ALICE,
        ops=(AuditOp("producer_byte_rate", None, float("nan"), False),),
        plan_id=None,
        cluster=None,
    )
    with (
        AuditPublisher("t", {"bootstrap.servers": f"127.0.0.1:{_closed_port()}"}) as audit,
        pytest.raises(AuditError, match="JSON"),
    ):
        audit.publish([bad])


def test_utc_timestamp_format() -> None:
    ts = utc_timestamp()
    assert ts.endswith("Z") and "T" in ts and len(ts) == len(TS)


def test_producer_config_maps_and_forces_guarantees() -> None:
    config = producer_config(
        {
            "bootstrap.servers": "b:9093",
            "security.protocol": "SASL_SSL",
            "sasl.mechanism": "SCRAM-SHA-512",
            "sasl.jaas.config": "org.apache.kafka.common.security.scram.ScramLoginModule "
            'required username="u" password="p\\"q";',
            "ssl.truststore.location": "/etc/ca.pem",
            "ssl.truststore.type": "PEM",
            "ssl.endpoint.identification.algorithm": "",
            "acks": "1",
            "default.api.timeout.ms": "60000",
        },
        timeout=7.5,
    )
    assert config == {
        "bootstrap.servers": "b:9093",
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.username": "u",
        "sasl.password": 'p"q',
        "ssl.ca.location": "/etc/ca.pem",
        "ssl.endpoint.identification.algorithm": "none",
        "enable.idempotence": "true",
        "acks": "all",
        "allow.auto.create.topics": "false",
        "message.timeout.ms": "7500",
    }


@pytest.mark.parametrize(
    ("props", "named"),
    [
        ({"ssl.truststore.location": "/x.jks"}, "ssl.truststore.location"),
        ({"ssl.keystore.location": "/x.jks"}, "ssl.keystore.location"),
        ({"sasl.jaas.config": "x.OAuthBearerLoginModule required;"}, "sasl.jaas.config"),
    ],
)
def test_producer_config_refuses_java_only_forms_by_name(props: dict[str, str], named: str) -> None:
    with pytest.raises(LibrdkafkaConfigError) as excinfo:
        producer_config({"bootstrap.servers": "b:1", **props})
    assert named in str(excinfo.value)
    assert "/x.jks" not in str(excinfo.value)


def test_git_commit_and_actor_prefer_github_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_SHA", "deadbeef")
    monkeypatch.setenv("GITHUB_ACTOR", "octocat")
    assert git_commit() == "deadbeef"
    assert actor() == "octocat"


def test_git_commit_outside_a_repository_is_none(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    monkeypatch.delenv("GITHUB_SHA", raising=False)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))
    assert git_commit(tmp_path) is None


def test_git_commit_reads_head_of_a_repository(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    import subprocess

    monkeypatch.delenv("GITHUB_SHA", raising=False)
    # A throwaway repository under tmp_path, never the project's.
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@e"}  # fmt: skip
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True, env=env)
    subprocess.run(
        [
            "git",
            "-C",
            str(tmp_path),
            "-c",
            "commit.gpgsign=false",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "x",
        ],  # fmt: skip
        check=True,
        env=env,
    )
    head = subprocess.run(
        ["git", "-C", str(tmp_path), "rev-parse", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    assert len(head) == 40
    assert git_commit(tmp_path) == head


def test_actor_falls_back_to_os_user(monkeypatch: pytest.MonkeyPatch) -> None:
    import getpass

    monkeypatch.delenv("GITHUB_ACTOR", raising=False)
    monkeypatch.setattr(getpass, "getuser", lambda: "ops-user")
    assert actor() == "ops-user"


def test_a_fatal_producer_error_behind_a_system_error_is_unwrapped() -> None:
    # confluent-kafka runs delivery callbacks while a fatal error it is about to raise is
    # pending; a C call made in one then surfaces as SystemError caused by that error (seen on
    # the authorizer broker when WRITE was revoked mid-apply).
    from confluent_kafka import KafkaError, KafkaException

    from kquota.audit import _fatal_error

    fatal = KafkaException(
        KafkaError(KafkaError.CLUSTER_AUTHORIZATION_FAILED, "no pid", fatal=True)
    )
    wrapped = SystemError("returned a result with an exception set")
    wrapped.__cause__ = fatal
    assert _fatal_error(wrapped) is fatal
    assert _fatal_error(fatal) is fatal
    unrelated = SystemError("something else")
    unrelated.__cause__ = ValueError("not kafka")
    with pytest.raises(SystemError, match="something else"):
        _fatal_error(unrelated)
