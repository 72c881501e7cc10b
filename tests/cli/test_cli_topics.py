"""``kquota topics create``: the audit and lease topics made on request, with the settings a
trail needs, read back with Kafka's own kafka-configs; an existing topic is reported and left
exactly as it was."""

from __future__ import annotations

import secrets
from pathlib import Path

import pytest

from cli_runner import run_kquota
from kquota.devbroker.launcher import BrokerInfo
from kquota.devbroker.tools import kafka_configs
from kquota.operations.topics import AUDIT_RETENTION_DAYS

RETENTION_MS = AUDIT_RETENTION_DAYS * 24 * 3600 * 1000


def _overrides(broker: BrokerInfo, topic: str) -> str:
    done = kafka_configs(broker, "--describe", "--entity-type", "topics", "--entity-name", topic)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_creates_the_audit_topic_with_a_trails_settings(
    kafka_broker: BrokerInfo, capsys: pytest.CaptureFixture[str]
) -> None:
    topic = f"kquota-audit-{secrets.token_hex(4)}"
    argv = ["topics", "create", "--bootstrap-server", kafka_broker.bootstrap_servers]
    code, out, err = run_kquota([*argv, "--audit-topic", topic], capsys)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == (
        f"topic {topic} (the audit trail): created: 1 partition, replication factor 1, "
        f"cleanup.policy=delete, min.insync.replicas=1, retention.ms={RETENTION_MS}"
    )
    # The lease topic too (the session broker has it from the start: reported as it is).
    assert lines[1].startswith("topic _kquota_apply_lease (the apply lease): ")
    said = _overrides(kafka_broker, topic)
    for setting in ("cleanup.policy=delete", f"retention.ms={RETENTION_MS}",
                    "min.insync.replicas=1"):  # fmt: skip
        assert setting in said, said
    # Asked again: found, reported, nothing to change.
    code, out, err = run_kquota([*argv, "--audit-topic", topic], capsys)
    assert code == 0, err
    assert out.splitlines()[0].startswith(f"topic {topic} (the audit trail): exists, left as it")
    assert "differs" not in out


def test_an_existing_topic_is_reported_never_changed(
    kafka_broker: BrokerInfo,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]

    topic = f"kquota-audit-{secrets.token_hex(4)}"
    admin = AdminClient({"bootstrap.servers": kafka_broker.bootstrap_servers})
    made = admin.create_topics([NewTopic(topic, 3, 1, config={"cleanup.policy": "compact"})])
    made[topic].result(timeout=60)
    (tmp_path / "kquota.yaml").write_text(
        "clusters:\n  dev:\n"
        f"    kafka: {{bootstrap.servers: '{kafka_broker.bootstrap_servers}'}}\n"
        f"    audit_topic: {topic}\n"
    )
    monkeypatch.chdir(tmp_path)
    code, out, err = run_kquota(["topics", "create", "--cluster", "dev"], capsys)
    assert code == 0, err
    assert out.splitlines()[:4] == [
        f"topic {topic} (the audit trail): exists, left as it is: 3 partitions, "
        "replication factor 1, cleanup.policy=compact, min.insync.replicas=1, "
        "retention.ms=604800000",
        "  differs from what kquota would create (kquota changes no existing topic):",
        "    partitions: 3, kquota: 1",
        "    cleanup.policy: compact, kquota: delete",
    ]
    said = _overrides(kafka_broker, topic)
    assert "cleanup.policy=compact" in said and "retention.ms" not in said


def test_needs_a_cluster(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, err = run_kquota(["topics", "create"], capsys)
    assert code == 1 and out == ""
    assert "which cluster? give --cluster NAME" in err
