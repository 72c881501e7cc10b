"""A local cluster of several KRaft nodes: each a combined broker and controller, one quorum;
or, with ``zookeeper``, several ZooKeeper-mode brokers (Kafka 3.x) sharing one ZooKeeper in
``zookeeper/``, started before the nodes and stopped after them.

The cluster directory holds ``cluster.json`` (the node count) and one directory per node,
``node-1`` .. ``node-N``, each an ordinary dev-broker directory (see
:mod:`kquota.devbroker.launcher`): a node is stopped, killed and restarted on its own, with
its ports and data, and rejoins the quorum. The quorum is static
(``controller.quorum.voters`` lists every node), so it needs a majority of the nodes up.
"""

from __future__ import annotations

import json
import secrets
import shutil
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any

from kquota.devbroker.config import Ports
from kquota.devbroker.jars import DEFAULT_KAFKA_VERSION, ZOOKEEPER_KAFKA_VERSIONS
from kquota.devbroker.launcher import (
    ADMIN_USER,
    BrokerInfo,
    QuorumSeat,
    _free_ports,
    _random_cluster_id,
    broker_status,
    seed_scram,
    start_broker,
    stop_broker,
    wait_broker,
    wipe_broker_dir,
)
from kquota.errors import KquotaError, UsageError

CLUSTER_FILE = "cluster.json"
MAX_NODES = 9


def is_cluster_dir(cluster_dir: Path) -> bool:
    return (cluster_dir / CLUSTER_FILE).is_file()


def node_count(cluster_dir: Path) -> int:
    return int(json.loads((cluster_dir / CLUSTER_FILE).read_text())["nodes"])


def node_dir(cluster_dir: Path, node_id: int) -> Path:
    return cluster_dir.resolve() / f"node-{node_id}"


def _node_dirs(cluster_dir: Path) -> list[Path]:
    return [node_dir(cluster_dir, i) for i in range(1, node_count(cluster_dir) + 1)]


def node_info(cluster_dir: Path, node_id: int) -> BrokerInfo:
    """node_info is one node's own JSON line (its listeners alone), running or not."""
    return BrokerInfo.from_json((node_dir(cluster_dir, node_id) / "broker.json").read_text())


def start_cluster(
    cluster_dir: Path,
    *,
    nodes: int = 3,
    kafka_version: str = DEFAULT_KAFKA_VERSION,
    authorizer: bool = False,
    extra_users: dict[str, str] | None = None,
    fresh: bool = False,
    timeout: float = 180.0,
    die_with_parent: bool = False,
    heap: str = "512m",
    zookeeper: bool = False,
    metrics: bool = False,
) -> BrokerInfo:
    """start_cluster starts every node of ``cluster_dir`` (restarting stopped ones in place).

    Returns the cluster's JSON line: ``bootstrap_servers`` lists every node, ``nodes`` each
    node's id, address and pid; the other fields are node 1's.
    """
    if not 2 <= nodes <= MAX_NODES:
        raise UsageError(f"--nodes must be 1 to {MAX_NODES}, got {nodes}")
    if zookeeper and kafka_version not in ZOOKEEPER_KAFKA_VERSIONS:
        raise UsageError(
            f"Kafka {kafka_version} has no ZooKeeper mode here (4.0 removed it); ZooKeeper "
            f"mode runs Kafka {', '.join(ZOOKEEPER_KAFKA_VERSIONS)} (--kafka-version)"
        )
    cluster_dir = cluster_dir.resolve()
    if fresh:
        clear_dir(cluster_dir)
    if (cluster_dir / "broker.json").is_file():
        raise UsageError(
            f"{cluster_dir} holds a single dev broker; use another --dir for a cluster, or "
            "--fresh to replace it"
        )
    if is_cluster_dir(cluster_dir):
        have = node_count(cluster_dir)
        if have != nodes:
            raise UsageError(
                f"{cluster_dir} holds a cluster of {have} nodes, not {nodes}; use --fresh to "
                "start over"
            )
        have_zookeeper = (cluster_dir / "zookeeper").is_dir()
        if have_zookeeper != zookeeper:
            raise UsageError(
                f"{cluster_dir} holds a {'ZooKeeper-mode' if have_zookeeper else 'KRaft'} "
                "cluster; use --fresh to start over in the other mode"
            )
        dirs = _node_dirs(cluster_dir)
        if all((d / "broker.json").is_file() for d in dirs):
            if zookeeper:
                _start_zookeeper(cluster_dir, kafka_version, die_with_parent, timeout)
            launched = [
                start_broker(
                    d,
                    kafka_version=kafka_version,
                    die_with_parent=die_with_parent,
                    heap=heap,
                    wait=False,
                    zookeeper=zookeeper,
                    metrics=metrics,
                )
                for d in dirs
            ]
            return _wait_all(cluster_dir, launched, timeout)
        clear_dir(cluster_dir)
    cluster_dir.mkdir(parents=True, exist_ok=True)
    (cluster_dir / CLUSTER_FILE).write_text(json.dumps({"nodes": nodes}) + "\n")
    users = {ADMIN_USER: secrets.token_urlsafe(18), **(extra_users or {})}
    cluster_id = _random_cluster_id()
    per_node = 4 if metrics else 3  # the fourth: the node's JMX exporter
    free = _free_ports(per_node * nodes)
    ports = [
        replace(
            Ports(*free[per_node * i : per_node * i + 3]),
            metrics=free[per_node * i + 3] if metrics else 0,
        )
        for i in range(nodes)
    ]
    voters: str | None = ",".join(f"{i + 1}@127.0.0.1:{p.controller}" for i, p in enumerate(ports))
    zookeeper_connect = None
    launched = []
    try:
        if zookeeper:
            # One ZooKeeper for every broker, on node 1's spare controller port.
            voters = None
            zookeeper_connect = f"127.0.0.1:{ports[0].controller}"
            ports = [replace(p, controller=0) for p in ports]
            (cluster_dir / "zookeeper").mkdir()
            _start_zookeeper(cluster_dir, kafka_version, die_with_parent, timeout, free[2])
        for i, p in enumerate(ports):
            seat = QuorumSeat(i + 1, voters, p, cluster_id, users, zookeeper_connect)
            launched.append(
                start_broker(
                    node_dir(cluster_dir, i + 1),
                    kafka_version=kafka_version,
                    authorizer=authorizer,
                    die_with_parent=die_with_parent,
                    heap=heap,
                    seat=seat,
                    wait=False,
                )
            )
    except BaseException:
        stop_cluster(cluster_dir)
        raise
    return _wait_all(cluster_dir, launched, timeout)


def _start_zookeeper(
    cluster_dir: Path,
    kafka_version: str,
    die_with_parent: bool,
    timeout: float,
    port: int | None = None,
) -> None:
    """_start_zookeeper starts the cluster's ZooKeeper (on ``port`` the first time, then on
    the port it was first given)."""
    from kquota.devbroker.jars import KafkaJars, find_java
    from kquota.devbroker.zookeeper import start_zookeeper, zookeeper_port

    zk_dir = cluster_dir / "zookeeper"
    port = port or zookeeper_port(zk_dir)
    if port is None:
        raise KquotaError(f"{zk_dir} has no zoo.cfg; use --fresh to start over")
    start_zookeeper(
        zk_dir,
        port,
        java=find_java(),
        classpath=KafkaJars.resolve(kafka_version).classpath,
        die_with_parent=die_with_parent,
        timeout=timeout,
    )


def _wait_all(cluster_dir: Path, launched: list[BrokerInfo], timeout: float) -> BrokerInfo:
    try:
        launched = [wait_broker(info, timeout) for info in launched]
        if launched and launched[0].zookeeper_connect is not None:
            seed_scram(launched, launched[0].users, timeout)
    except BaseException:
        stop_cluster(cluster_dir)
        raise
    status = cluster_status(cluster_dir)
    if status is None:
        raise KquotaError(f"the cluster in {cluster_dir} stopped while starting")
    return status


def cluster_status(cluster_dir: Path) -> BrokerInfo | None:
    """cluster_status is the cluster's JSON line, or None if no node runs.

    A node that is down has ``"pid": null``; the shared fields come from node 1's line.
    """
    cluster_dir = cluster_dir.resolve()
    if not is_cluster_dir(cluster_dir):
        return None
    infos: list[BrokerInfo] = []
    entries: list[dict[str, Any]] = []
    running = 0
    for i, d in enumerate(_node_dirs(cluster_dir), start=1):
        if not (d / "broker.json").is_file():
            return None
        info = node_info(cluster_dir, i)
        live = broker_status(d)
        running += live is not None
        infos.append(info)
        entries.append(
            {
                "id": i,
                "bootstrap_server": info.bootstrap_servers,
                "pid": None if live is None else live.pid,
            }
        )
        if info.metrics_address is not None:
            entries[-1]["metrics_address"] = info.metrics_address
    if running == 0:
        return None
    first = infos[0]
    return replace(
        first,
        bootstrap_servers=",".join(i.bootstrap_servers for i in infos),
        sasl_bootstrap_servers=",".join(i.sasl_bootstrap_servers for i in infos),
        controller_bootstrap_servers=",".join(
            i.controller_bootstrap_servers for i in infos if i.controller_bootstrap_servers
        ),
        pid=next(e["pid"] for e in entries if e["pid"] is not None),
        metrics_address=",".join(i.metrics_address for i in infos if i.metrics_address) or None,
        dir=str(cluster_dir),
        nodes=entries,
    )


def quorum_leader(cluster_dir: Path) -> int | None:
    """quorum_leader is the active controller's node id, as the running nodes last recorded
    it (each node keeps its view of the quorum in ``quorum-state``), or None if unknown."""
    best: tuple[int, int] | None = None
    for d in _node_dirs(cluster_dir.resolve()):
        if broker_status(d) is None:
            continue
        state = d / "data" / "__cluster_metadata-0" / "quorum-state"
        try:
            data = json.loads(state.read_text())
        except (OSError, ValueError):
            continue
        view = (int(data.get("leaderEpoch", -1)), int(data.get("leaderId", -1)))
        if view[1] >= 0 and (best is None or view > best):
            best = view
    return None if best is None else best[1]


def clear_dir(broker_dir: Path) -> None:
    """clear_dir stops and removes what a dev broker or cluster keeps in ``broker_dir`` (and
    nothing else the user may keep there): for ``--fresh``, and before a single broker
    replaces a cluster or the reverse."""
    broker_dir = broker_dir.resolve()
    if is_cluster_dir(broker_dir):
        stop_cluster(broker_dir)
        for d in broker_dir.glob("node-*"):
            if d.name.removeprefix("node-").isdigit():
                shutil.rmtree(d, ignore_errors=True)
        shutil.rmtree(broker_dir / "zookeeper", ignore_errors=True)
        (broker_dir / CLUSTER_FILE).unlink(missing_ok=True)
    if broker_dir.is_dir():
        stop_broker(broker_dir)
        wipe_broker_dir(broker_dir)


def stop_cluster(cluster_dir: Path) -> bool:
    """stop_cluster stops every node, then the ZooKeeper of a ZooKeeper-mode cluster; True if
    any node was running."""
    from kquota.devbroker.zookeeper import stop_zookeeper

    cluster_dir = cluster_dir.resolve()
    if not is_cluster_dir(cluster_dir):
        return False
    # All at once: the last node of a quorum stopped alone waits for a majority that is gone.
    dirs = _node_dirs(cluster_dir)
    try:
        with ThreadPoolExecutor(len(dirs)) as pool:
            return any(list(pool.map(stop_broker, dirs)))
    finally:
        if (cluster_dir / "zookeeper").is_dir():
            stop_zookeeper(cluster_dir / "zookeeper")
