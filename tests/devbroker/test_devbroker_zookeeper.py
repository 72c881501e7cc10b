"""ZooKeeper-mode dev brokers (Kafka 3.x): ``dev-broker start --zookeeper``, one broker or
``--nodes N``, and kquota's apply, verification and lease against brokers that serve quotas
from their ZooKeeper caches.

The version is ``KQUOTA_KAFKA_VERSION`` when that has a ZooKeeper mode, else 3.9.2, so the
default suite meets ZooKeeper once and the compatibility matrix on every 3.x it runs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from cli_runner import run_kquota
from conftest import KAFKA_VERSION
from kquota.devbroker.cluster import start_cluster, stop_cluster
from kquota.devbroker.jars import ZOOKEEPER_KAFKA_VERSIONS
from kquota.devbroker.launcher import BrokerInfo, _port_free
from kquota.devbroker.probe import api_versions_ok
from kquota.devbroker.processes import pid_alive
from kquota.devbroker.scram import scram_login_ok
from kquota.devbroker.tools import kafka_configs
from kquota.devbroker.zookeeper import answers, zookeeper_pid
from kquota.errors import UsageError
from kquota.kafka.admin import QuotaAlteration, QuotaOp, WireAdmin
from kquota.model import Entity

ZK_VERSION = KAFKA_VERSION if KAFKA_VERSION in ZOOKEEPER_KAFKA_VERSIONS else "3.9.2"


def _kquota(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kquota.cli.main", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "KQUOTA_KAFKA_VERSION": ZK_VERSION},
    )


def _port(addr: str) -> int:
    return int(addr.rsplit(":", 1)[1])


@pytest.mark.integration
def test_start_restart_stop_a_zookeeper_mode_broker(tmp_path: Path) -> None:
    broker_dir = tmp_path / "zk"
    started = _kquota(
        "dev-broker", "start", "--dir", str(broker_dir), "--zookeeper", "--user", "alice=a-secret"
    )
    assert started.returncode == 0, started.stderr
    info = json.loads(started.stdout)
    broker = BrokerInfo(**info)
    try:
        assert broker.mode == "zookeeper" and info["kafka_version"] == ZK_VERSION
        assert info["controller_bootstrap_servers"] == "", "no KRaft controller to bootstrap from"
        zk_port = _port(info["zookeeper_connect"])
        assert answers(zk_port)
        # The cluster id is the one the broker found in ZooKeeper (it made it up itself).
        meta = (broker_dir / "data" / "meta.properties").read_text()
        assert f"cluster.id={info['cluster_id']}" in meta
        # Every user logs in with SCRAM, as on a KRaft dev broker.
        assert scram_login_ok(
            "127.0.0.1", _port(info["sasl_bootstrap_servers"]), "alice", "a-secret"
        )
        assert not scram_login_ok("127.0.0.1", _port(info["sasl_bootstrap_servers"]), "alice", "x")
        with WireAdmin(broker.bootstrap_servers) as admin:
            done = admin.alter(
                [
                    QuotaAlteration(
                        Entity.of({"user": "zk-user"}), (QuotaOp.set("request_percentage", 12.5),)
                    )
                ],
                validate_only=False,
            )
            assert [r.ok for r in done] == [True]
        # Kafka's own tool reads it back from the same brokers.
        out = kafka_configs(broker, "--describe", "--user", "zk-user").stdout
        assert "request_percentage=12.5" in out

        # Stop and start again: same ports, same ZooKeeper, the quota survives.
        assert _kquota("dev-broker", "stop", "--dir", str(broker_dir)).stdout.strip() == "stopped"
        assert not answers(zk_port), "stop stops the broker's own ZooKeeper too"
        again = _kquota("dev-broker", "start", "--dir", str(broker_dir))
        assert again.returncode == 0, again.stderr
        info2 = json.loads(again.stdout)
        assert info2["zookeeper_connect"] == info["zookeeper_connect"]
        assert info2["bootstrap_servers"] == info["bootstrap_servers"]
        assert info2["cluster_id"] == info["cluster_id"]
        with WireAdmin(info2["bootstrap_servers"]) as admin:
            assert admin.describe_all()[Entity.of({"user": "zk-user"})] == {
                "request_percentage": 12.5
            }
        pids = (info2["pid"], zookeeper_pid(broker_dir / "zookeeper"))
    finally:
        stopped = _kquota("dev-broker", "stop", "--dir", str(broker_dir))
    assert stopped.stdout.strip() == "stopped"
    assert all(pid is not None and not pid_alive(pid) for pid in pids)
    for addr in (info["bootstrap_servers"], info["sasl_bootstrap_servers"]):
        assert _port_free(_port(addr))
    assert _port_free(zk_port)


def test_zookeeper_mode_is_refused_where_kafka_has_none(tmp_path: Path) -> None:
    proc = _kquota(
        "dev-broker",
        "start",
        "--dir",
        str(tmp_path / "b"),
        "--zookeeper",
        "--kafka-version",
        "4.3.1",
    )
    assert proc.returncode != 0
    assert "Kafka 4.3.1 has no ZooKeeper mode" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "b" / "zookeeper").exists()


def test_a_zookeeper_cluster_is_refused_where_kafka_has_none(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="Kafka 4.4.0 has no ZooKeeper mode") as info:
        start_cluster(tmp_path / "c", nodes=2, kafka_version="4.4.0", zookeeper=True)
    assert "3.9.2, 3.6.2, 3.0.2" in str(info.value)
    assert not (tmp_path / "c").exists(), "refused before anything is made or started"


@pytest.fixture(scope="module")
def zk_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerInfo]:
    cluster_dir = tmp_path_factory.mktemp("zk-cluster")
    info = start_cluster(
        cluster_dir, nodes=2, kafka_version=ZK_VERSION, die_with_parent=True, zookeeper=True
    )
    try:
        yield info
    finally:
        stop_cluster(cluster_dir)
        assert zookeeper_pid(cluster_dir / "zookeeper") is None


@pytest.mark.integration
def test_a_zookeeper_cluster_has_every_node_and_one_zookeeper(zk_cluster: BrokerInfo) -> None:
    assert zk_cluster.zookeeper_connect and answers(_port(zk_cluster.zookeeper_connect))
    assert zk_cluster.nodes is not None and [n["id"] for n in zk_cluster.nodes] == [1, 2]
    for node in zk_cluster.nodes:
        assert api_versions_ok("127.0.0.1", _port(node["bootstrap_server"]))
    with WireAdmin(zk_cluster.bootstrap_servers) as admin:
        admin.describe_all()
        assert len(admin.brokers) == 2


@pytest.mark.integration
def test_apply_with_the_lease_then_every_broker_serves_it(
    zk_cluster: BrokerInfo,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Brokers in ZooKeeper mode serve DescribeClientQuotas from caches they fill from
    ZooKeeper notifications; apply's verification waits for every one, so right after apply
    ends every broker answers with what was applied, and drift is clean at once."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "quotas").mkdir()
    (tmp_path / "kquota.yaml").write_text(
        "clusters:\n"
        "  zk:\n"
        f"    kafka: {{bootstrap.servers: '{zk_cluster.bootstrap_servers}'}}\n"
        "    desired: [quotas]\n"
        "    policy: {prune: true, scope: [{user: 'zkapply-*'},\n"
        "                                  {user: 'zkapply-*', client-id: '*'}]}\n"
    )
    wanted = {f"zkapply-{i}": 1000.0 * (i + 1) for i in range(30)}
    (tmp_path / "quotas" / "main.yaml").write_text(
        "apiVersion: kquota/v1\nkind: ClientQuotas\nquotas:\n"
        + "".join(
            f"  - {{match: {{user: {u}}}, set: {{producer_byte_rate: {v:g}}}}}\n"
            for u, v in wanted.items()
        )
        + "  - {match: {user: zkapply-x, client-id: etl}, set: {request_percentage: 12.5}}\n"
    )
    # The lease topic, made on request as apply never makes it (on ZooKeeper-mode brokers too).
    code, out, err = run_kquota(["topics", "create", "--cluster", "zk"], capsys)
    assert code == 0 and "(the apply lease): created: " in out, out + err
    code, out, err = run_kquota(["apply", "--auto-approve"], capsys)
    assert code == 0, out + err
    assert "committed 31 of 31 entities" in out and "verified" in out
    expected = {Entity.of({"user": u}): {"producer_byte_rate": v} for u, v in wanted.items()}
    expected[Entity.of({"user": "zkapply-x", "client-id": "etl"})] = {"request_percentage": 12.5}
    assert zk_cluster.nodes is not None
    for node in zk_cluster.nodes:
        # No polling: apply ended, so this broker has caught up already.
        with WireAdmin(node["bootstrap_server"]) as admin:
            seen = {
                e: v
                for e, v in admin.describe_all().items()
                if any(n and n.startswith("zkapply-") for _, n in e.parts)
            }
        assert seen == expected, node
    code, out, err = run_kquota(["drift"], capsys)
    assert code == 0, out + err
    # The apply lease was taken on these brokers: its topic is there, with a claim and its
    # release in it.
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer(
        {"bootstrap.servers": zk_cluster.bootstrap_servers, "group.id": "zk-lease-check"}
    )
    try:
        low, high = consumer.get_watermark_offsets(
            TopicPartition("_kquota_apply_lease", 0), timeout=30
        )
    finally:
        consumer.close()
    assert high - low >= 2
    code, out, err = run_kquota(["apply", "--auto-approve"], capsys)
    assert code == 0 and "nothing to apply" in out, out + err
