"""apply --ramp against a real broker: a sharp lowering seen on the cluster step by step.

The ramped apply runs as its own process (the console script) while this test reads the
broker every 50 ms with a separate client, so each step's value is observed on the cluster
itself, not taken from kquota's report.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cli_runner import run_kquota
from kquota.devbroker.launcher import BrokerInfo
from kquota.kafka.admin import QuotaAdmin
from kquota.model import Entity

pytestmark = pytest.mark.integration

HEADER = "apiVersion: kquota/v1\nkind: ClientQuotas\nquotas:\n"


def test_ramp_steps_are_observed_on_the_broker_one_by_one(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    kafka_broker: BrokerInfo,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]

    p = f"m{secrets.token_hex(3)}-"
    topic = f"audit-{p}r"
    client = AdminClient({"bootstrap.servers": kafka_broker.bootstrap_servers})
    for f in client.create_topics([NewTopic(topic, num_partitions=1)]).values():
        f.result(timeout=30)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "quotas").mkdir()
    (tmp_path / "kquota.yaml").write_text(
        "clusters:\n"
        "  local:\n"
        f"    kafka: {{bootstrap.servers: '{kafka_broker.bootstrap_servers}'}}\n"
        "    desired: [quotas]\n"
        f"    audit_topic: {topic}\n"
        f"    policy: {{prune: true, scope: [{{user: '{p}*'}}], ramp: {{max_step: 0.5}}}}\n"
    )
    desired = tmp_path / "quotas" / "main.yaml"
    desired.write_text(
        HEADER + f"  - {{match: {{user: {p}a}}, set: {{producer_byte_rate: 8000}}}}\n"
    )
    code, out, err = run_kquota(["apply", "--auto-approve"], capsys)
    assert code == 0, out + err
    desired.write_text(
        HEADER
        + f"  - {{match: {{user: {p}a}}, set: {{producer_byte_rate: 1000}}}}\n"
        + f"  - {{match: {{user: {p}b}}, set: {{consumer_byte_rate: 64}}}}\n"
    )
    code, out, err = run_kquota(["plan", "--out", "plan.json"], capsys)
    assert code == 0, out + err
    assert "ramp: 3 steps, each lowering a quota to at least 0.5 of its value before" in out
    assert f"{{user={p}a}} producer_byte_rate: 8000 → 4000 → 2000 → 1000" in out

    kquota = Path(sys.executable).parent / "kquota"
    proc = subprocess.Popen(
        [str(kquota), "apply", "--ramp", "plan.json", "--cluster", "local", "--auto-approve",
         "--ramp-interval", "3s", "--timeout", "90s"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    a, b = Entity.of({"user": f"{p}a"}), Entity.of({"user": f"{p}b"})
    seen: list[tuple[float | None, float | None]] = []
    try:
        with QuotaAdmin(kafka_broker.bootstrap_servers) as admin:
            ends = time.monotonic() + 120
            while time.monotonic() < ends:
                state = admin.describe_all()
                now = (
                    state.get(a, {}).get("producer_byte_rate"),
                    state.get(b, {}).get("consumer_byte_rate"),
                )
                if not seen or seen[-1] != now:
                    seen.append(now)
                if proc.poll() is not None:
                    break
                time.sleep(0.05)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, out + err
    # The schedule is shown first, then every step goes the apply road.
    assert f"{{user={p}a}} producer_byte_rate: 8000 → 4000 → 2000 → 1000" in out
    assert "ramp step 1 of 3:" in out and "ramp step 3 of 3:" in out
    assert out.count("verified: the cluster shows every committed change") == 3
    assert "ramp: 3 of 3 steps applied" in out
    # Every step is an apply of its own, audited as it lands.
    assert out.count(f"events confirmed on topic {topic}") == 3
    code, hist, err = run_kquota(["history", "--entity", f"user={p}a"], capsys)
    assert code == 0, hist + err
    assert [line.strip() for line in hist.splitlines() if "→" in line] == [
        "producer_byte_rate: unset → 8000",
        "producer_byte_rate: 8000 → 4000",
        "producer_byte_rate: 4000 → 2000",
        "producer_byte_rate: 2000 → 1000",
    ]

    # The three steps are undone together: every key back to its value before the ramp.
    code, hist, err = run_kquota(["history", "--format", "json"], capsys)
    steps = [a["plan_id"] for a in json.loads(hist)["applies"]][-3:]
    revert = ["revert", *(x for s in reversed(steps) for x in ("--plan-id", s)), "--out", "u.json"]
    code, out, err = run_kquota(revert, capsys)
    assert code == 0, out + err
    assert f"revert of apply {'+'.join(steps)}" in out
    code, out, err = run_kquota(
        ["apply", "u.json", "--cluster", "local", "--auto-approve", "--allow-mass-removal"],
        capsys,
    )
    assert code == 0, out + err
    with QuotaAdmin(kafka_broker.bootstrap_servers) as admin:
        state = admin.describe_all()
    assert state.get(a) == {"producer_byte_rate": 8000.0} and b not in state
    # Observed on the broker: each value in turn, the created quota with the first step.
    # (The first step commits both entities in one request, so no state between is seen.)
    assert seen == [(8000.0, None), (4000.0, 64.0), (2000.0, 64.0), (1000.0, 64.0)]


def test_ramp_is_refused_before_connecting_without_a_saved_plan_or_a_factor(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from kquota.plan.types import Alteration, ChangeKind, Op, Plan
    from kquota.planfile.writer import write_plan_file

    monkeypatch.chdir(tmp_path)
    (tmp_path / "quotas").mkdir()
    (tmp_path / "quotas" / "main.yaml").write_text(HEADER.replace("quotas:\n", "quotas: []\n"))
    # Port 1 answers nothing: reaching the cluster would fail differently.
    (tmp_path / "kquota.yaml").write_text(
        "clusters:\n  local:\n    kafka: {bootstrap.servers: '127.0.0.1:1'}\n"
    )
    plan = Plan(
        alterations=(
            Alteration(
                Entity.of({"user": "a"}),
                (Op("producer_byte_rate", 1.0, False, 8.0),),
                ChangeKind.UPDATE,
            ),
        ),
        cluster="local",
        cluster_id="id",
        snapshot_fingerprint="sha256:" + "0" * 64,
    )
    assert write_plan_file(plan, tmp_path / "plan.json") == []
    code, out, err = run_kquota(["apply", "--ramp", "--cluster", "local", "--auto-approve"], capsys)
    assert code == 1 and "--ramp applies a saved plan" in err
    code, out, err = run_kquota(
        ["apply", "--ramp", "plan.json", "--cluster", "local", "--auto-approve"], capsys
    )
    assert code == 1 and "--ramp needs policy.ramp.max_step" in err


def test_a_ramp_stops_when_the_cluster_moves_between_steps(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    kafka_broker: BrokerInfo,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from kquota.kafka.admin import QuotaAlteration, QuotaOp

    p = f"d{secrets.token_hex(3)}-"
    monkeypatch.chdir(tmp_path)
    (tmp_path / "quotas").mkdir()
    (tmp_path / "kquota.yaml").write_text(
        "clusters:\n"
        "  local:\n"
        f"    kafka: {{bootstrap.servers: '{kafka_broker.bootstrap_servers}'}}\n"
        "    desired: [quotas]\n"
        f"    policy: {{prune: true, scope: [{{user: '{p}*'}}], ramp: {{max_step: 0.5}}}}\n"
    )
    desired = tmp_path / "quotas" / "main.yaml"
    desired.write_text(
        HEADER + f"  - {{match: {{user: {p}a}}, set: {{producer_byte_rate: 800}}}}\n"
    )
    assert run_kquota(["apply", "--auto-approve"], capsys)[0] == 0
    desired.write_text(
        HEADER + f"  - {{match: {{user: {p}a}}, set: {{producer_byte_rate: 100}}}}\n"
    )
    assert run_kquota(["plan", "--out", "plan.json"], capsys)[0] == 0
    kquota = Path(sys.executable).parent / "kquota"
    proc = subprocess.Popen(
        [str(kquota), "apply", "--ramp", "plan.json", "--cluster", "local", "--auto-approve",
         "--ramp-interval", "6s", "--timeout", "90s"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )  # fmt: skip
    a = Entity.of({"user": f"{p}a"})
    try:
        assert proc.stdout is not None
        lines = []
        # Step 1 is committed and verified when its report says so; the wait starts then.
        while not lines or "verified: the cluster shows" not in lines[-1]:
            line = proc.stdout.readline()
            assert line, "the ramp ended before step 1 was verified: " + "".join(lines)
            lines.append(line)
        with QuotaAdmin(kafka_broker.bootstrap_servers) as admin:
            assert admin.describe_all().get(a) == {"producer_byte_rate": 400.0}
            # Someone else moves the quota while the ramp waits.
            (done,) = admin.alter(
                [QuotaAlteration(a, (QuotaOp("producer_byte_rate", 300.0, False),))],
                validate_only=False,
            )
            assert done.ok
        rest, err = proc.communicate(timeout=60)
        out = "".join(lines) + rest
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 1, out + err
    assert "ramp stopped after step 1 of 3: the cluster no longer shows what the step set" in err
    assert f"{{user={p}a}}: producer_byte_rate is 300, step set 400" in err
    assert "ramp step 2 of 3" not in out
    with QuotaAdmin(kafka_broker.bootstrap_servers) as admin:
        assert admin.describe_all().get(a) == {"producer_byte_rate": 300.0}
