"""Start, stop and inspect a local KRaft (or ZooKeeper-mode) broker running in the background.

Everything about one broker lives in its directory: ``server.properties``, logs, KRaft data,
``broker.pid`` and ``broker.json`` (what ``start`` printed); a ZooKeeper-mode broker of its
own also keeps its ZooKeeper server in ``zookeeper/`` (:mod:`kquota.devbroker.zookeeper`),
started before it and stopped after it. A second ``start`` on a running
directory returns the running broker; a stopped directory is restarted on the same ports with
its data, so quotas survive a restart (tests rely on this to restart a broker mid-apply).
"""

from __future__ import annotations

import base64
import itertools
import json
import os
import secrets
import socket
import subprocess
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from kquota.devbroker import processes
from kquota.devbroker.config import SASL_MECHANISMS, Ports, logging_config, server_properties
from kquota.devbroker.jars import (
    DEFAULT_KAFKA_VERSION,
    KRAFT_KAFKA_VERSIONS,
    ZOOKEEPER_KAFKA_VERSIONS,
    KafkaJars,
    find_java,
)
from kquota.devbroker.probe import api_versions_ok, describe_quotas_ok, metrics_ok
from kquota.devbroker.tls import TlsFiles, make_pki
from kquota.errors import KquotaError

ADMIN_USER = "admin"
_INFO = "broker.json"
_PID = "broker.pid"
_SEAT = "quorum.json"
_MAIN = b"kafka.Kafka"


@dataclass(frozen=True)
class BrokerInfo:
    """BrokerInfo is what a client needs to reach a running dev broker (the JSON line)."""

    bootstrap_servers: str
    sasl_bootstrap_servers: str
    controller_bootstrap_servers: str
    username: str
    password: str
    sasl_mechanisms: list[str]
    kafka_version: str
    cluster_id: str
    pid: int
    dir: str
    authorizer: bool
    users: dict[str, str] = field(default_factory=dict)
    ssl_bootstrap_servers: str | None = None
    """SSL listener (client certificate required), with ``start --tls``."""
    sasl_ssl_bootstrap_servers: str | None = None
    ssl_ca_location: str | None = None
    ssl_certificate_location: str | None = None
    """A client certificate the SSL listener accepts, and its key."""
    ssl_key_location: str | None = None
    nodes: list[dict[str, Any]] | None = None
    """Every node of a multi-node dev cluster (``id``, ``bootstrap_server``, ``pid``)."""
    zookeeper_connect: str | None = None
    """ZooKeeper mode: the ZooKeeper the brokers keep their metadata in (there is then no
    controller listener: ``controller_bootstrap_servers`` is empty)."""

    metrics_address: str | None = None
    """``start --metrics``: where the JMX exporter serves the quota metrics
    (``host:port``, ``/metrics``; a cluster's line lists every node's)."""

    def to_json(self) -> str:
        fields = asdict(self)
        for optional in ("nodes", "zookeeper_connect", "metrics_address"):
            if fields[optional] is None:
                del fields[optional]  # a KRaft broker's line stays as it always was
        return json.dumps(fields, sort_keys=True)

    @property
    def mode(self) -> str:
        """mode is ``kraft`` or ``zookeeper``."""
        return "kraft" if self.zookeeper_connect is None else "zookeeper"

    @classmethod
    def from_json(cls, text: str) -> BrokerInfo:
        return cls(**json.loads(text))


@dataclass(frozen=True)
class QuorumSeat:
    """QuorumSeat places one node in a quorum of several: what it shares with the others
    (cluster id, users, the voter list) and what is its own (id, ports)."""

    node_id: int
    voters: str | None
    """KRaft: the quorum's voters; None in ZooKeeper mode."""
    ports: Ports
    cluster_id: str
    users: dict[str, str]
    zookeeper_connect: str | None = None


def _free_ports(n: int) -> list[int]:
    socks = []
    try:
        for _ in range(n):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def _port_free(port: int) -> bool:
    with socket.socket() as s:
        # Servers bind with SO_REUSEADDR; connections left in TIME_WAIT must not count as busy.
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _random_cluster_id() -> str:
    # Kafka's Uuid string form: 16 random bytes, URL-safe base64 without padding; Kafka
    # itself never hands out one starting with '-' (it would read as a CLI flag).
    while True:
        cid = base64.urlsafe_b64encode(secrets.token_bytes(16)).decode().rstrip("=")
        if not cid.startswith("-"):
            return cid


def _write_private(path: Path, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(text)


def broker_status(broker_dir: Path) -> BrokerInfo | None:
    """broker_status returns the running broker of ``broker_dir``, or None."""
    broker_dir = broker_dir.resolve()
    if _running_pid(broker_dir) is None or not (broker_dir / _INFO).is_file():
        return None
    return BrokerInfo.from_json((broker_dir / _INFO).read_text())


def start_broker(
    broker_dir: Path,
    *,
    kafka_version: str = DEFAULT_KAFKA_VERSION,
    authorizer: bool = False,
    extra_users: dict[str, str] | None = None,
    fresh: bool = False,
    tls: bool = False,
    timeout: float = 180.0,
    die_with_parent: bool = False,
    heap: str = "768m",
    seat: QuorumSeat | None = None,
    wait: bool = True,
    extra_properties: dict[str, str] | None = None,
    extra_classpath: tuple[Path, ...] = (),
    zookeeper: bool | None = None,
    metrics: bool = False,
) -> BrokerInfo:
    """start_broker starts (or returns the already running) broker in ``broker_dir``.

    ``extra_properties`` are appended to its server.properties and ``extra_classpath`` to
    its classpath: a plug-in of one's own (a quota callback, say) and its settings.

    With ``seat`` it starts one node of a multi-node quorum; such a node restarts in its seat
    later from its directory alone. ``wait=False`` returns once the JVM is launched (the
    nodes of a new quorum only get ready together): call :func:`wait_broker` next.

    ``zookeeper=True`` starts a ZooKeeper-mode broker (Kafka 3.x) with a ZooKeeper of its own
    in ``broker_dir/zookeeper`` (a seat names the cluster's ZooKeeper instead). A stopped
    directory restarts in the mode it was started in (``None``: whichever that was), unless
    ``zookeeper`` names the other: then it starts over, as after a version change.

    ``metrics=True`` attaches the Prometheus JMX exporter (:data:`METRICS_RULES`) on a free
    loopback port; a broker started with it keeps it on every restart.
    """
    broker_dir = broker_dir.resolve()
    running = broker_status(broker_dir)
    if running is not None and not fresh:
        return running
    if running is not None:
        stop_broker(broker_dir)
    jars = KafkaJars.resolve(kafka_version)
    if seat is not None:
        zookeeper = seat.zookeeper_connect is not None
    java = find_java()
    broker_dir.mkdir(parents=True, exist_ok=True)
    previous = _previous_info(broker_dir) if not fresh else None
    if previous is not None and (
        previous.kafka_version != kafka_version
        or (zookeeper is not None and (previous.mode == "zookeeper") != zookeeper)
    ):
        previous = None
    if zookeeper is None:
        zookeeper = previous is not None and previous.mode == "zookeeper"
    if zookeeper and not jars.has_zookeeper:
        raise KquotaError(
            f"Kafka {kafka_version} has no ZooKeeper mode here (4.0 removed it); ZooKeeper "
            f"mode runs Kafka {', '.join(ZOOKEEPER_KAFKA_VERSIONS)}"
        )
    if not zookeeper and not jars.has_kraft:
        raise KquotaError(
            f"Kafka {kafka_version} runs in ZooKeeper mode only here (add --zookeeper); "
            f"KRaft runs Kafka {', '.join(KRAFT_KAFKA_VERSIONS)}"
        )
    data_dir = broker_dir / "data"
    if previous is None and (data_dir.exists() or (broker_dir / "zookeeper").exists()):
        wipe_broker_dir(broker_dir)
    node_id, voters, zookeeper_connect = 1, None, None
    own_zookeeper = False
    if previous is not None:
        node_id, voters, zookeeper_connect = _read_seat(broker_dir)
        zookeeper_connect = previous.zookeeper_connect
        own_zookeeper = (broker_dir / "zookeeper").is_dir()
        ports = _ports_of(previous)
        if metrics and not ports.metrics:
            # A broker started without an exporter gains one on a port of its own.
            taken = {ports.plaintext, ports.sasl, ports.controller, ports.ssl, ports.sasl_ssl}
            spare = [p for p in _free_ports(len(taken) + 1) if p not in taken]
            ports = replace(ports, metrics=spare[0])
        used = (
            ports.plaintext,
            ports.sasl,
            ports.controller,
            ports.ssl,
            ports.sasl_ssl,
            ports.metrics,
        )
        busy = [p for p in used if p and not _port_free(p)]
        if busy:
            raise KquotaError(
                f"cannot restart the broker in {broker_dir}: its ports {busy} are in use; "
                "use --fresh to start over on new ports"
            )
        users, cluster_id, do_authorizer = previous.users, previous.cluster_id, previous.authorizer
        do_tls = previous.ssl_bootstrap_servers is not None
    elif seat is not None:
        ports, users, cluster_id, do_authorizer, do_tls = (
            seat.ports,
            seat.users,
            seat.cluster_id,
            authorizer,
            False,
        )
        node_id, voters, zookeeper_connect = seat.node_id, seat.voters, seat.zookeeper_connect
        _write_private(
            broker_dir / _SEAT,
            json.dumps(
                {"node_id": node_id, "voters": voters, "zookeeper_connect": zookeeper_connect}
            ),
        )
    else:
        listeners = 5 if tls else 3
        free = _free_ports(listeners + (1 if metrics else 0))  # at once: no two the same
        ports = replace(Ports(*free[:listeners]), metrics=free[-1] if metrics else 0)
        do_tls = tls
        users = {ADMIN_USER: secrets.token_urlsafe(18), **(extra_users or {})}
        cluster_id = _random_cluster_id()
        do_authorizer = authorizer
        if zookeeper:
            # The third port is ZooKeeper's: a ZooKeeper-mode broker has no controller.
            zookeeper_connect = f"127.0.0.1:{ports.controller}"
            ports = replace(ports, controller=0)
            own_zookeeper = True
    # The storage tool checks the properties too, so a plug-in class must be on its path.
    classpath = os.pathsep.join([jars.classpath, *map(str, extra_classpath)])
    if own_zookeeper and zookeeper_connect is not None:
        from kquota.devbroker.zookeeper import start_zookeeper

        start_zookeeper(
            broker_dir / "zookeeper",
            int(zookeeper_connect.rsplit(":", 1)[1]),
            java=java,
            classpath=jars.classpath,
            die_with_parent=die_with_parent,
            timeout=timeout,
        )
    tls_files = make_pki(broker_dir / "tls") if do_tls else None
    props = broker_dir / "server.properties"
    _write_private(
        props,
        server_properties(
            data_dir=data_dir,
            ports=ports,
            users=users,
            admin_user=ADMIN_USER,
            authorizer=do_authorizer,
            kafka_major=jars.major,
            tls=tls_files,
            node_id=node_id,
            voters=voters,
            zookeeper_connect=zookeeper_connect,
        )
        + "".join(f"{k}={v}\n" for k, v in (extra_properties or {}).items()),
    )
    log_name, log_body, log_prop = logging_config(jars.major, broker_dir / "server.log")
    (broker_dir / log_name).write_text(log_body)
    log_opt = log_prop + str(broker_dir / log_name)
    if previous is None and zookeeper_connect is None:
        _format_storage(java, classpath, jars, props, cluster_id, users, log_opt, broker_dir)
    pid = processes.spawn(
        [
            java,
            f"-Xmx{heap}",
            "-Xms128m",
            "-XX:+UseG1GC",
            "-Djava.awt.headless=true",
            *_metrics_agent(broker_dir, ports.metrics),
            log_opt,
            "-cp",
            classpath,
            jars.broker_class,
            str(props),
        ],
        broker_dir / "broker.out",
        broker_dir / _PID,
        die_with_parent=die_with_parent,
    )
    info = BrokerInfo(
        bootstrap_servers=f"127.0.0.1:{ports.plaintext}",
        sasl_bootstrap_servers=f"127.0.0.1:{ports.sasl}",
        controller_bootstrap_servers=f"127.0.0.1:{ports.controller}" if ports.controller else "",
        username=ADMIN_USER,
        password=users[ADMIN_USER],
        sasl_mechanisms=list(SASL_MECHANISMS),
        kafka_version=kafka_version,
        cluster_id=cluster_id,
        pid=pid,
        dir=str(broker_dir),
        authorizer=do_authorizer,
        users=users,
        zookeeper_connect=zookeeper_connect,
        metrics_address=f"127.0.0.1:{ports.metrics}" if ports.metrics else None,
        **_tls_fields(ports, tls_files),
    )
    _write_private(broker_dir / _INFO, info.to_json() + "\n")
    if wait:
        info = wait_broker(info, timeout)
        if zookeeper_connect is not None:
            seed_scram([info], users, timeout)
    return info


def wait_broker(info: BrokerInfo, timeout: float = 180.0) -> BrokerInfo:
    """wait_broker waits until a launched broker answers (on failure it is stopped) and
    returns its line: for a ZooKeeper-mode broker with the cluster id it found in ZooKeeper
    (the first broker makes one up; no tool sets it beforehand, as KRaft's format does)."""
    broker_dir = Path(info.dir)
    try:
        _wait_ready(info.pid, _ports_of(info), timeout, broker_dir)
    except BaseException:
        stop_broker(broker_dir)
        raise
    if info.zookeeper_connect is None:
        return info
    meta = (broker_dir / "data" / "meta.properties").read_text().splitlines()
    found = [line.split("=", 1)[1] for line in meta if line.startswith("cluster.id=")]
    if found and found[0] != info.cluster_id:
        info = replace(info, cluster_id=found[0])
        _write_private(broker_dir / _INFO, info.to_json() + "\n")
    return info


def seed_scram(brokers: list[BrokerInfo], users: dict[str, str], timeout: float = 60.0) -> None:
    """seed_scram gives the users of ZooKeeper-mode brokers their SCRAM credentials (KRaft
    brokers get them at format time) and waits until a SCRAM login works on every broker.

    It runs on every start, restarts included: an upsert of the same passwords is harmless,
    and a start interrupted before it had seeded is then seeded the next time.
    """
    from kquota.devbroker.scram import NotController, scram_login_ok, upsert_scram_credentials

    deadline = time.monotonic() + timeout
    # Only the controller takes the request; until one is elected, nobody does.
    for attempt in itertools.count():
        host, port = brokers[attempt % len(brokers)].bootstrap_servers.rsplit(":", 1)
        try:
            upsert_scram_credentials(host, int(port), users)
            break
        except NotController:
            if time.monotonic() > deadline:
                raise KquotaError(
                    f"no broker took the SCRAM credentials as controller within {timeout:.0f}s"
                ) from None
            time.sleep(0.2)
    # Brokers load credentials from ZooKeeper change notifications, in order: once the last
    # user logs in on a broker, every user does.
    last = list(users)[-1]
    for info in brokers:
        host, port = info.sasl_bootstrap_servers.rsplit(":", 1)
        while not scram_login_ok(host, int(port), last, users[last]):
            if time.monotonic() > deadline:
                raise KquotaError(
                    f"SCRAM logins did not work on {info.sasl_bootstrap_servers} within "
                    f"{timeout:.0f}s of writing the credentials; see {info.dir}/server.log"
                )
            time.sleep(0.2)


METRICS_RULES = "jmx-exporter.yaml"
"""The exporter's rules, shipped beside this module and copied into the broker's directory."""


def _metrics_agent(broker_dir: Path, port: int) -> list[str]:
    """_metrics_agent is the JVM option attaching the JMX exporter on ``127.0.0.1:port``
    (none for port 0). The agent binds the host it is given, so it serves loopback only."""
    if not port:
        return []
    from importlib import resources

    from kquota.devbroker.jars import jmx_exporter_agent

    rules = broker_dir / METRICS_RULES
    rules.write_text(resources.files("kquota.devbroker").joinpath(METRICS_RULES).read_text())
    return [f"-javaagent:{jmx_exporter_agent()}=127.0.0.1:{port}:{rules}"]


def _read_seat(broker_dir: Path) -> tuple[int, str | None, str | None]:
    """_read_seat is (node id, KRaft voters, ZooKeeper connect string) of a cluster node."""
    seat = broker_dir / _SEAT
    if not seat.is_file():
        return 1, None, None
    data = json.loads(seat.read_text())
    return int(data["node_id"]), data.get("voters"), data.get("zookeeper_connect")


def _previous_info(broker_dir: Path) -> BrokerInfo | None:
    info = broker_dir / _INFO
    if not info.is_file() or not (broker_dir / "data" / "meta.properties").is_file():
        return None
    try:
        return BrokerInfo.from_json(info.read_text())
    except (ValueError, TypeError):
        return None


def _ports_of(info: BrokerInfo) -> Ports:
    def port(addr: str | None) -> int:
        return 0 if not addr else int(addr.rsplit(":", 1)[1])

    return Ports(
        port(info.bootstrap_servers),
        port(info.sasl_bootstrap_servers),
        port(info.controller_bootstrap_servers),
        port(info.ssl_bootstrap_servers),
        port(info.sasl_ssl_bootstrap_servers),
        port(info.metrics_address),
    )


def _tls_fields(ports: Ports, tls: TlsFiles | None) -> dict[str, Any]:
    if tls is None:
        return {}
    return {
        "ssl_bootstrap_servers": f"127.0.0.1:{ports.ssl}",
        "sasl_ssl_bootstrap_servers": f"127.0.0.1:{ports.sasl_ssl}",
        "ssl_ca_location": str(tls.ca_certificate),
        "ssl_certificate_location": str(tls.client_certificate),
        "ssl_key_location": str(tls.client_key),
    }


def wipe_broker_dir(broker_dir: Path) -> None:
    """wipe_broker_dir removes a stopped broker's data and state files (only those), and its
    own ZooKeeper if it has one."""
    import shutil

    from kquota.devbroker.zookeeper import stop_zookeeper

    if (broker_dir / "zookeeper").is_dir():
        stop_zookeeper(broker_dir / "zookeeper")
        shutil.rmtree(broker_dir / "zookeeper", ignore_errors=True)
    shutil.rmtree(broker_dir / "data", ignore_errors=True)
    for name in (_INFO, _SEAT, "server.log", "broker.out", METRICS_RULES):
        (broker_dir / name).unlink(missing_ok=True)


def _format_storage(
    java: str,
    classpath: str,
    jars: KafkaJars,
    props: Path,
    cluster_id: str,
    users: dict[str, str],
    log_opt: str,
    broker_dir: Path,
) -> None:
    scram: list[str] = []
    for name, password in users.items():
        for mech in ("SCRAM-SHA-256", "SCRAM-SHA-512"):
            scram += ["--add-scram", f'{mech}=[name="{name}",password="{password}"]']
    cmd = [java, log_opt, "-cp", classpath, jars.storage_tool_class, "format"]
    cmd += ["-t", cluster_id, "-c", str(props), *scram]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        detail = (proc.stdout + proc.stderr).strip()
        for pw in users.values():
            detail = detail.replace(pw, "***")
        raise KquotaError(f"formatting KRaft storage in {broker_dir} failed:\n{detail}")


def _wait_ready(pid: int, ports: Ports, timeout: float, broker_dir: Path) -> None:
    processes.await_ready(
        pid,
        [
            lambda: api_versions_ok("127.0.0.1", ports.plaintext),
            lambda: api_versions_ok("127.0.0.1", ports.sasl),
            lambda: describe_quotas_ok("127.0.0.1", ports.plaintext),
            *([lambda: metrics_ok("127.0.0.1", ports.metrics)] if ports.metrics else []),
        ],
        timeout=timeout,
        name="the Kafka broker",
        logs=(broker_dir / "server.log", broker_dir / "broker.out"),
    )


def stop_broker(broker_dir: Path, *, timeout: float = 30.0) -> bool:
    """stop_broker stops the broker of ``broker_dir``; True if one was running.

    SIGTERM first (Kafka's shutdown hook flushes the metadata log), then SIGKILL to the whole
    process group if it lingers: no JVM is left behind either way. A ZooKeeper of its own is
    stopped after it (a ZooKeeper-mode broker shuts down cleanly only while ZooKeeper runs).
    """
    broker_dir = broker_dir.resolve()
    try:
        return _stop_broker_only(broker_dir, timeout)
    finally:
        if (broker_dir / "zookeeper").is_dir():
            from kquota.devbroker.zookeeper import stop_zookeeper

            stop_zookeeper(broker_dir / "zookeeper")


def _stop_broker_only(broker_dir: Path, timeout: float) -> bool:
    pid = _running_pid(broker_dir)
    if pid is not None:
        processes.stop_group(pid, timeout)
    (broker_dir / _PID).unlink(missing_ok=True)
    return pid is not None


def kill_broker(broker_dir: Path) -> bool:
    """kill_broker SIGKILLs the broker of ``broker_dir`` (a crash, for fault drills); True if
    one was running. Its data stays: :func:`start_broker` restarts it in place."""
    broker_dir = broker_dir.resolve()
    pid = _running_pid(broker_dir)
    if pid is None:
        return False
    processes.kill_group(pid)
    (broker_dir / _PID).unlink(missing_ok=True)
    return True


def _running_pid(broker_dir: Path) -> int | None:
    """_running_pid is the broker JVM of ``broker_dir``, if it runs."""
    return processes.running_pid(
        broker_dir / _PID, _MAIN, str(broker_dir / "server.properties").encode()
    )
