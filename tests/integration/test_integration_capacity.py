"""``plan --capacity`` against the real three-node cluster: broker count, thread counts and
leadership read live, principals discovered from SCRAM users (issue 23 item 1)."""

from __future__ import annotations

import json
import secrets
import time
from pathlib import Path

import pytest
from confluent_kafka.admin import AdminClient, NewTopic

from cli_runner import run_kquota
from cluster_harness import ThreeNodes

pytestmark = pytest.mark.integration

P = "producer_byte_rate"
MiB = 1024 * 1024


def _topic_with_leaders(bootstrap: str, partitions: int) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    topic = f"capacity-{secrets.token_hex(3)}"
    admin.create_topics([NewTopic(topic, num_partitions=partitions, replication_factor=1)])[
        topic
    ].result(timeout=30)
    deadline = time.monotonic() + 30
    while True:
        meta = admin.list_topics(topic, timeout=30).topics[topic]
        if meta.partitions and all(p.leader >= 0 for p in meta.partitions.values()):
            return
        assert time.monotonic() < deadline, f"{topic} has partitions without a leader"
        time.sleep(0.2)


def test_plan_capacity_reads_the_cluster_and_discovers_principals(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    three_nodes: ThreeNodes,
    capsys: pytest.CaptureFixture[str],
) -> None:
    bootstrap = three_nodes.info.bootstrap_servers
    _topic_with_leaders(bootstrap, 6)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "quotas").mkdir()
    (tmp_path / "quotas" / "q.yaml").write_text(
        "apiVersion: kquota/v1\nkind: ClientQuotas\nquotas:\n"
        f"  - {{match: {{user: <default>}}, set: {{{P}: 1MiB}}}}\n"
        f"  - {{match: {{user: alice}}, set: {{{P}: 30MiB}}}}\n"
    )
    (tmp_path / "kquota.yaml").write_text(
        "clusters:\n  dev:\n"
        f"    kafka: {{bootstrap.servers: '{bootstrap}'}}\n"
        "    capacity: {ingress: 10MiB/s, egress: 20MiB/s}\n"
        "    policy: {protect: [{user: alice}]}\n"
    )
    plan = ["plan", "--cluster", "dev", "--allow-protected-change"]  # alice is newly limited
    code, out, err = run_kquota([*plan, "--format", "json"], capsys)
    assert code == 0, err
    capacity = json.loads(out)["capacity"]
    facts = capacity["facts"]
    assert facts["brokers"] == 3 and facts["unknown_because"] is None
    assert 1 <= facts["leaders"] <= 3
    io, net = facts["io_threads"], facts["network_threads"]
    assert isinstance(io, int) and isinstance(net, int) and io > 0 and net > 0
    rows = {k["key"]: k for k in capacity["keys"]}
    assert rows["request_percentage"]["capacity"] == (io + net) * 100
    producer = rows[P]
    assert producer["capacity"] == 10 * MiB
    # user=<default> applies to users nobody can list: unbounded, never a number
    assert producer["after"]["unbounded"] and producer["after"]["sum"] is None
    assert {"user": None} in producer["after"]["defaults"]
    # alice was discovered as a SCRAM user (and is protected): her 30 MiB/s alone is three
    # brokers' worth of ingress on one, so it can never throttle and her guarantee cannot hold
    assert {"entity": {"user": "alice"}, "value": 30.0 * MiB} in producer["never_throttle"]
    assert producer["protected_over_capacity"] is True
    assert "their guarantees cannot all hold" in err
    ceiling = next(
        c for c in capacity["ceilings"] if c["principal"] == {"user": "alice"} and c["key"] == P
    )
    assert ceiling["brokers_ceiling"] == 3 * 30.0 * MiB
    assert ceiling["leaders_ceiling"] == facts["leaders"] * 30.0 * MiB
    assert capacity["principals"] >= 1
    assert rows["connection_creation_rate"]["capacity"] is None  # the broker sets no limit

    code, text, _ = run_kquota(plan, capsys)
    assert code == 0
    assert "Capacity, per broker (3 brokers, " in text
    code, text, _ = run_kquota([*plan, "--no-capacity"], capsys)
    assert code == 0 and "Capacity" not in text


def test_apply_counts_the_capacity_guard_again_and_writes_nothing(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    three_nodes: ThreeNodes,
    capsys: pytest.CaptureFixture[str],
) -> None:
    bootstrap = three_nodes.info.bootstrap_servers
    user = f"cap-{secrets.token_hex(3)}"
    monkeypatch.chdir(tmp_path)
    (tmp_path / "quotas").mkdir()
    (tmp_path / "quotas" / "q.yaml").write_text(
        "apiVersion: kquota/v1\nkind: ClientQuotas\nquotas:\n"
        f"  - {{match: {{user: {user}}}, set: {{{P}: 40MiB}}}}\n"
    )
    (tmp_path / "kquota.yaml").write_text(
        "clusters:\n  dev:\n"
        f"    kafka: {{bootstrap.servers: '{bootstrap}'}}\n"
        "    capacity: {ingress: 10MiB/s}\n"
        f"    policy: {{protect: [{{user: {user}}}], capacity: {{max_oversubscription: 3}}}}\n"
    )
    argv = ["apply", "--cluster", "dev", "--auto-approve", "--allow-protected-change"]
    code, _, err = run_kquota(argv, capsys)
    assert code == 1
    assert "capacity guard: producer_byte_rate: known principals' quotas add up to" in err
    assert "nothing was applied" in err
    code, out, _ = run_kquota(["describe", "--bootstrap-server", bootstrap], capsys)
    assert code == 0 and user not in out
