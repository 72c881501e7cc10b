"""A ZooKeeper server for ZooKeeper-mode dev brokers (Kafka 3.x), run from the broker's jars.

Kafka 3.x depends on ZooKeeper's jar, so the broker's classpath runs ZooKeeper's own
standalone server (``ZooKeeperServerMain`` with a config file: loopback only, no admin HTTP
server). Everything lives in one directory: ``zoo.cfg``, ``data/``, ``zookeeper.pid`` and the
logs. Its port is fixed at the first start, so a restart keeps the brokers' ``zookeeper.connect``
valid and the quotas kept under ``/config`` survive.
"""

from __future__ import annotations

import socket
from pathlib import Path

from kquota.devbroker import processes
from kquota.devbroker.config import logging_config

MAIN_CLASS = "org.apache.zookeeper.server.ZooKeeperServerMain"
_PID = "zookeeper.pid"
_CFG = "zoo.cfg"


def zookeeper_pid(zk_dir: Path) -> int | None:
    """zookeeper_pid is the running server of ``zk_dir``, or None."""
    return processes.running_pid(zk_dir / _PID, MAIN_CLASS.encode(), str(zk_dir / _CFG).encode())


def zookeeper_port(zk_dir: Path) -> int | None:
    """zookeeper_port is the client port ``zk_dir`` was first started on, or None."""
    try:
        lines = (zk_dir / _CFG).read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        key, _, value = line.partition("=")
        if key == "clientPort":
            return int(value)
    return None


def start_zookeeper(
    zk_dir: Path,
    port: int,
    *,
    java: str,
    classpath: str,
    die_with_parent: bool = False,
    timeout: float = 120.0,
) -> int:
    """start_zookeeper starts (or finds running) the server of ``zk_dir`` on ``port`` and
    waits until it answers; returns its pid."""
    zk_dir = zk_dir.resolve()
    running = zookeeper_pid(zk_dir)
    if running is not None:
        return running
    (zk_dir / "data").mkdir(parents=True, exist_ok=True)
    (zk_dir / _CFG).write_text(
        "\n".join(
            [
                f"dataDir={zk_dir / 'data'}",
                f"clientPort={port}",
                "clientPortAddress=127.0.0.1",
                "tickTime=2000",
                "maxClientCnxns=0",
                "admin.enableServer=false",
                "4lw.commands.whitelist=srvr",
                "",
            ]
        )
    )
    # Kafka 3.x's classpath logs through log4j 1 (reload4j), as a 3.x broker does.
    log_name, log_body, log_prop = logging_config(3, zk_dir / "zookeeper.log")
    (zk_dir / log_name).write_text(log_body)
    pid = processes.spawn(
        [
            java,
            "-Xmx128m",
            "-Xms32m",
            "-Djava.awt.headless=true",
            log_prop + str(zk_dir / log_name),
            "-cp",
            classpath,
            MAIN_CLASS,
            str(zk_dir / _CFG),
        ],
        zk_dir / "zookeeper.out",
        zk_dir / _PID,
        die_with_parent=die_with_parent,
    )
    try:
        logs = (zk_dir / "zookeeper.log", zk_dir / "zookeeper.out")
        processes.await_ready(
            pid, [lambda: answers(port)], timeout=timeout, name="ZooKeeper", logs=logs
        )
    except BaseException:
        stop_zookeeper(zk_dir)
        raise
    return pid


def answers(port: int, timeout: float = 2.0) -> bool:
    """answers: the server on ``port`` replies to the ``srvr`` four-letter word."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
            sock.settimeout(timeout)
            sock.sendall(b"srvr")
            reply = b""
            while chunk := sock.recv(4096):
                reply += chunk
    except OSError:
        return False
    return reply.startswith(b"Zookeeper version")


def stop_zookeeper(zk_dir: Path, *, timeout: float = 30.0) -> bool:
    """stop_zookeeper stops the server of ``zk_dir`` (SIGTERM, then SIGKILL to its process
    group); True if one was running."""
    zk_dir = zk_dir.resolve()
    pid = zookeeper_pid(zk_dir)
    if pid is not None:
        processes.stop_group(pid, timeout)
    (zk_dir / _PID).unlink(missing_ok=True)
    return pid is not None
