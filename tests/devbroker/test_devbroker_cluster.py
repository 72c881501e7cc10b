"""`kquota dev-broker --nodes 3`: one quorum of three combined nodes, as a user sees it."""

from __future__ import annotations

import json
import secrets
import subprocess
import sys
from pathlib import Path

from cluster_harness import NODE_IDS, ThreeNodes
from kquota.devbroker.cluster import clear_dir, is_cluster_dir, node_dir
from kquota.devbroker.launcher import stop_broker
from kquota.devbroker.probe import api_versions_ok, describe_quotas_ok
from kquota.devbroker.processes import pid_alive
from kquota.devbroker.tools import kafka_configs
from kquota.kafka.admin import WireAdmin


def _kquota(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kquota.cli.main", *args],
        capture_output=True,
        text=True,
        timeout=300,
    )


def _host_port(addr: str) -> tuple[str, int]:
    host, port = addr.rsplit(":", 1)
    return host, int(port)


def test_status_lists_every_node_and_each_answers(three_nodes: ThreeNodes) -> None:
    proc = _kquota("dev-broker", "status", "--dir", str(three_nodes.dir))
    assert proc.returncode == 0, proc.stderr
    info = json.loads(proc.stdout)
    nodes = info["nodes"]
    assert [n["id"] for n in nodes] == list(NODE_IDS)
    assert info["bootstrap_servers"] == ",".join(n["bootstrap_server"] for n in nodes)
    assert len({n["bootstrap_server"] for n in nodes}) == 3
    assert info["pid"] == nodes[0]["pid"]
    for n in nodes:
        assert pid_alive(n["pid"])
        assert describe_quotas_ok(*_host_port(n["bootstrap_server"]))
    for addr in info["sasl_bootstrap_servers"].split(","):
        assert api_versions_ok(*_host_port(addr))
    # One quorum of three: every node votes, each with its own id.
    ids = set()
    for node_id in NODE_IDS:
        props = (node_dir(three_nodes.dir, node_id) / "server.properties").read_text()
        assert "process.roles=broker,controller" in props
        voters = next(x for x in props.splitlines() if x.startswith("controller.quorum.voters="))
        assert voters.count("@127.0.0.1:") == 3
        ids.add(next(x for x in props.splitlines() if x.startswith("node.id=")))
    assert ids == {"node.id=1", "node.id=2", "node.id=3"}


def test_start_on_a_running_cluster_returns_it_and_refuses_another_size(
    three_nodes: ThreeNodes,
) -> None:
    before = json.loads(_kquota("dev-broker", "status", "--dir", str(three_nodes.dir)).stdout)
    again = _kquota("dev-broker", "start", "--dir", str(three_nodes.dir))
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["nodes"] == before["nodes"], "no new JVM was started"
    other = _kquota("dev-broker", "start", "--nodes", "2", "--dir", str(three_nodes.dir))
    assert other.returncode != 0
    assert "holds a cluster of 3 nodes, not 2" in other.stderr
    assert "Traceback" not in other.stderr


def test_a_stopped_node_shows_as_down_and_start_brings_it_back(three_nodes: ThreeNodes) -> None:
    port = three_nodes.address(3)
    assert stop_broker(node_dir(three_nodes.dir, 3))
    status = json.loads(_kquota("dev-broker", "status", "--dir", str(three_nodes.dir)).stdout)
    assert [n["pid"] is None for n in status["nodes"]] == [False, False, True]
    started = _kquota("dev-broker", "start", "--dir", str(three_nodes.dir))
    assert started.returncode == 0, started.stderr
    nodes = json.loads(started.stdout)["nodes"]
    assert all(n["pid"] is not None and pid_alive(n["pid"]) for n in nodes)
    assert nodes[2]["bootstrap_server"] == port, "a restarted node keeps its ports"


def test_kafka_configs_on_one_node_reads_what_another_wrote(three_nodes: ThreeNodes) -> None:
    user = f"nodes-{secrets.token_hex(3)}"
    done = kafka_configs(
        three_nodes.tool_target(1),
        "--alter", "--add-config", "producer_byte_rate=4096", "--entity-type", "users",
        "--entity-name", user,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    with WireAdmin(three_nodes.address(3)) as admin:
        admin.describe_all()
        assert sorted(admin.brokers) == sorted(three_nodes.address(i) for i in NODE_IDS)
    out = ""
    for _ in range(50):
        out = kafka_configs(three_nodes.tool_target(3), "--describe", "--user", user).stdout
        if "producer_byte_rate=4096.0" in out:
            break
    assert "producer_byte_rate=4096.0" in out


def test_fresh_clears_only_what_the_cluster_keeps(tmp_path: Path) -> None:
    (tmp_path / "cluster.json").write_text('{"nodes": 3}\n')
    for node_id in NODE_IDS:
        d = tmp_path / f"node-{node_id}"
        (d / "data").mkdir(parents=True)
        (d / "broker.json").write_text("{}")
    (tmp_path / "node-notes").mkdir()
    (tmp_path / "keep.txt").write_text("the user's own file")
    clear_dir(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.txt", "node-notes"]
    assert not is_cluster_dir(tmp_path)
