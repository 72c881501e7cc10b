"""kquota fleet apply against real brokers: waves, a failure that stops the rollout, resume.

Two dev brokers (the session's and one more, one node each): ``canary`` and ``eu-2`` are two
kquota.yaml clusters on the session broker (each owns its own users), ``eu-1`` is the second
broker, whose audit topic is missing at first, so its apply refuses before committing.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from cli_runner import run_kquota
from conftest import KAFKA_VERSION, KafkaConfigsTool
from kquota.devbroker.launcher import BrokerInfo, start_broker, stop_broker
from kquota.kafka.admin import QuotaAdmin
from kquota.model import Entity

pytestmark = pytest.mark.integration

HEADER = "apiVersion: kquota/v1\nkind: ClientQuotas\nquotas:\n"


@pytest.fixture(scope="module")
def second_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerInfo]:
    broker_dir = tmp_path_factory.mktemp("kafka-second")
    info = start_broker(broker_dir, kafka_version=KAFKA_VERSION, die_with_parent=True, heap="512m")
    try:
        yield info
    finally:
        stop_broker(broker_dir)


def _create_topic(bootstrap: str, topic: str) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]

    admin = AdminClient({"bootstrap.servers": bootstrap})
    for f in admin.create_topics([NewTopic(topic, num_partitions=1)]).values():
        f.result(timeout=30)
    # Created is not yet served: wait (bounded) until the broker's metadata lists it.
    for _ in range(300):
        if topic in admin.list_topics(timeout=10).topics:
            return
        time.sleep(0.1)


def _quota(bootstrap: str, user: str) -> dict[str, float]:
    with QuotaAdmin(bootstrap) as admin:
        return dict(admin.describe_all().get(Entity.of({"user": user}), {}))


def test_fleet_apply_stops_at_the_failing_wave_and_resume_completes_it(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    kafka_broker: BrokerInfo,
    second_broker: BrokerInfo,
    capsys: pytest.CaptureFixture[str],
    kafka_configs_tool: KafkaConfigsTool,
) -> None:
    p = f"f{secrets.token_hex(3)}-"
    one, two = kafka_broker.bootstrap_servers, second_broker.bootstrap_servers
    audit_one, audit_two = f"audit-{p}1", f"audit-{p}2"
    _create_topic(one, audit_one)  # eu-1's topic (on the second broker) is missing
    monkeypatch.chdir(tmp_path)
    users = {"canary": f"{p}c", "eu-1": f"{p}e1", "eu-2": f"{p}e2"}
    for i, (cluster, user) in enumerate(users.items()):
        (tmp_path / "desired" / cluster).mkdir(parents=True)
        (tmp_path / "desired" / cluster / "main.yaml").write_text(
            HEADER + f"  - {{match: {{user: {user}}}, set: {{producer_byte_rate: {1000 + i}}}}}\n"
        )
    (tmp_path / "snapshots").mkdir()
    for cluster in users:
        (tmp_path / "snapshots" / f"{cluster}.json").write_text(
            '{"format_version": 1, "entries": []}'
        )
    (tmp_path / "kquota.yaml").write_text(
        "clusters:\n"
        f"  canary: {{kafka: {{bootstrap.servers: '{one}'}}, audit_topic: {audit_one}}}\n"
        f"  eu-1: {{kafka: {{bootstrap.servers: '{two}'}}, audit_topic: {audit_two}}}\n"
        f"  eu-2: {{kafka: {{bootstrap.servers: '{one}'}}, audit_topic: {audit_one}}}\n"
        "rollout:\n"
        "  - {clusters: [canary]}\n"
        "  - {clusters: ['eu-*'], max_parallel: 2}\n"
        "  - {clusters: ['*'], max_parallel: 4}\n"
    )
    code, out, err = run_kquota(
        ["fleet", "plan", "--desired", "desired", "--snapshots", "snapshots", "--out", "plans",
         "--processes", "1"],
        capsys,
    )  # fmt: skip
    assert code == 0, out + err

    argv = ["fleet", "apply", "plans", "--desired", "desired", "--auto-approve"]
    code, out, err = run_kquota([*argv, "--format", "json"], capsys)
    assert code == 1, out + err
    report = json.loads(out)
    status = {c["cluster"]: (c["wave"], c["status"]) for c in report["clusters"]}
    assert status == {
        "canary": (1, "committed"),
        "eu-1": (2, "failed"),
        "eu-2": (2, "not attempted"),
    }
    failed = next(c for c in report["clusters"] if c["cluster"] == "eu-1")
    assert f"audit topic '{audit_two}' does not exist" in failed["detail"]
    assert "nothing was committed" in failed["detail"]
    assert report["resume"].endswith("--resume")
    # The canary is applied and verified (read back by Kafka's own tool); the rest untouched.
    configs = kafka_configs_tool("--describe", "--user", users["canary"]).stdout
    assert "producer_byte_rate=1000.0" in configs
    assert _quota(two, users["eu-1"]) == {} and _quota(one, users["eu-2"]) == {}

    # Resume without fixing: the same refusal, the canary not applied again.
    code, out, err = run_kquota([*argv, "--resume"], capsys)
    assert code == 1 and "wave 1  canary  committed: done in an earlier run" in out
    assert "rollout stopped: eu-1 (wave 2) failed" in out

    _create_topic(two, audit_two)
    code, out, err = run_kquota([*argv, "--resume", "--format", "markdown"], capsys)
    assert code == 0, out + err
    assert "### kquota fleet apply: rollout complete, 3 of 3 clusters done" in out
    assert "| 2 | `eu-1` | committed |" in out and "| 2 | `eu-2` | committed |" in out
    assert _quota(two, users["eu-1"]) == {"producer_byte_rate": 1001.0}
    assert _quota(one, users["eu-2"]) == {"producer_byte_rate": 1002.0}

    # A finished rollout is not started again by accident.
    code, out, err = run_kquota(argv, capsys)
    assert code == 1 and "pass --resume to continue it" in err


def test_a_live_plan_that_is_not_the_reviewed_one_is_refused(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    kafka_broker: BrokerInfo,
    capsys: pytest.CaptureFixture[str],
) -> None:
    p = f"g{secrets.token_hex(3)}-"
    one = kafka_broker.bootstrap_servers
    monkeypatch.chdir(tmp_path)
    (tmp_path / "desired" / "solo").mkdir(parents=True)
    desired = tmp_path / "desired" / "solo" / "main.yaml"
    desired.write_text(HEADER + f"  - {{match: {{user: {p}a}}, set: {{producer_byte_rate: 10}}}}\n")
    (tmp_path / "snapshots").mkdir()
    (tmp_path / "snapshots" / "solo.json").write_text('{"format_version": 1, "entries": []}')
    (tmp_path / "kquota.yaml").write_text(
        f"clusters:\n  solo: {{kafka: {{bootstrap.servers: '{one}'}}}}\n"
    )
    code, out, err = run_kquota(
        ["fleet", "plan", "--desired", "desired", "--snapshots", "snapshots", "--out", "plans",
         "--processes", "1"],
        capsys,
    )  # fmt: skip
    assert code == 0, out + err
    # The desired state changes after review: the live plan differs, nothing is written.
    desired.write_text(HEADER + f"  - {{match: {{user: {p}a}}, set: {{producer_byte_rate: 20}}}}\n")
    code, out, err = run_kquota(
        ["fleet", "apply", "plans", "--desired", "desired", "--auto-approve"], capsys
    )
    assert code == 1
    assert "solo: the live plan is not the reviewed plan" in out
    assert _quota(one, f"{p}a") == {}


def test_drift_during_a_wave_soak_stops_the_rollout(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    kafka_broker: BrokerInfo,
    capsys: pytest.CaptureFixture[str],
) -> None:
    import os
    import subprocess
    import sys

    from kquota.kafka.admin import QuotaAlteration, QuotaOp

    p = f"s{secrets.token_hex(3)}-"
    one = kafka_broker.bootstrap_servers
    monkeypatch.chdir(tmp_path)
    (tmp_path / "snapshots").mkdir()
    for cluster in ("canary", "next"):
        (tmp_path / "desired" / cluster).mkdir(parents=True)
        (tmp_path / "desired" / cluster / "main.yaml").write_text(
            HEADER + f"  - {{match: {{user: {p}{cluster}}}, set: {{producer_byte_rate: 500}}}}\n"
        )
        (tmp_path / "snapshots" / f"{cluster}.json").write_text(
            '{"format_version": 1, "entries": []}'
        )
    (tmp_path / "kquota.yaml").write_text(
        "clusters:\n"
        f"  canary: {{kafka: {{bootstrap.servers: '{one}'}}}}\n"
        f"  next: {{kafka: {{bootstrap.servers: '{one}'}}}}\n"
        "rollout:\n  - {clusters: [canary], soak: 6s}\n  - {clusters: ['*']}\n"
    )
    code, out, err = run_kquota(
        ["fleet", "plan", "--desired", "desired", "--snapshots", "snapshots", "--out", "plans",
         "--processes", "1"],
        capsys,
    )  # fmt: skip
    assert code == 0, out + err
    proc = subprocess.Popen(
        [str(Path(sys.executable).parent / "kquota"), "fleet", "apply", "plans", "--desired",
         "desired", "--auto-approve", "--timeout", "90s"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )  # fmt: skip
    try:
        assert proc.stderr is not None
        progress: list[str] = []
        while not progress or "soak:" not in progress[-1]:
            line = proc.stderr.readline()
            assert line, "the rollout ended before the soak: " + "".join(progress)
            progress.append(line)
        canary = Entity.of({"user": f"{p}canary"})
        with QuotaAdmin(one) as admin:
            (done,) = admin.alter(
                [QuotaAlteration(canary, (QuotaOp("producer_byte_rate", 42.0, False),))],
                validate_only=False,
            )
            assert done.ok
        out, rest = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 1, out + "".join(progress) + rest
    assert "rollout stopped: drift during the soak of wave 1: canary:" in out
    assert "producer_byte_rate is 42, the plan set 500" in out
    assert "wave 2  next  not attempted" in out
    assert _quota(one, f"{p}next") == {}
