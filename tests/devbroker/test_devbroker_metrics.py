"""`kquota dev-broker start --metrics`: a JMX exporter per broker, on loopback, in the JSON line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import KAFKA_VERSION
from kquota.devbroker.probe import metrics_ok

pytestmark = pytest.mark.integration


def _kquota(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kquota.cli.main", *args],
        capture_output=True,
        text=True,
        timeout=400,
    )


def _listeners(port: int) -> set[str]:
    """_listeners: the local addresses (hex, as /proc/net shows them) listening on ``port``."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            address, hex_port = fields[1].rsplit(":", 1)
            if int(hex_port, 16) == port and fields[3] == "0A":  # 0A: LISTEN
                found.add(address)
    return found


_LOOPBACK = {
    "0100007F",  # 127.0.0.1
    "0000000000000000FFFF00000100007F",  # ::ffff:127.0.0.1, as a Java socket binds it
}


def _assert_serves_on_loopback(address: str) -> None:
    host, port = address.rsplit(":", 1)
    assert host == "127.0.0.1"
    assert metrics_ok(host, int(port))
    listening = _listeners(int(port))
    assert listening and listening <= _LOOPBACK, listening


def test_metrics_on_loopback_in_the_line_and_kept_on_restart(tmp_path: Path) -> None:
    broker_dir = tmp_path / "b"
    common = ("--dir", str(broker_dir), "--kafka-version", KAFKA_VERSION)
    started = _kquota("dev-broker", "start", *common, "--metrics")
    try:
        assert started.returncode == 0, started.stderr
        address = json.loads(started.stdout)["metrics_address"]
        _assert_serves_on_loopback(address)
        assert (broker_dir / "jmx-exporter.yaml").is_file()
        field = _kquota("dev-broker", "status", "--dir", str(broker_dir), "--field",
                        "metrics_address")  # fmt: skip
        assert field.stdout.strip() == address

        # A broker started with an exporter keeps it, on its port, across a restart.
        assert _kquota("dev-broker", "stop", "--dir", str(broker_dir)).returncode == 0
        again = _kquota("dev-broker", "start", *common)
        assert again.returncode == 0, again.stderr
        assert json.loads(again.stdout)["metrics_address"] == address
        _assert_serves_on_loopback(address)
    finally:
        _kquota("dev-broker", "stop", "--dir", str(broker_dir))


def test_without_metrics_the_line_is_as_it_was(tmp_path: Path) -> None:
    broker_dir = tmp_path / "b"
    started = _kquota("dev-broker", "start", "--dir", str(broker_dir))
    try:
        assert started.returncode == 0, started.stderr
        assert "metrics_address" not in json.loads(started.stdout)
        field = _kquota("dev-broker", "status", "--dir", str(broker_dir), "--field",
                        "metrics_address")  # fmt: skip
        assert field.returncode != 0 and "this broker has none" in field.stderr
    finally:
        _kquota("dev-broker", "stop", "--dir", str(broker_dir))


def test_a_cluster_gets_one_exporter_per_node(tmp_path: Path) -> None:
    cluster_dir = tmp_path / "c"
    started = _kquota("dev-broker", "start", "--dir", str(cluster_dir), "--nodes", "3",
                      "--metrics", "--kafka-version", KAFKA_VERSION)  # fmt: skip
    try:
        assert started.returncode == 0, started.stderr
        line = json.loads(started.stdout)
        addresses = [node["metrics_address"] for node in line["nodes"]]
        assert len(set(addresses)) == 3
        assert line["metrics_address"] == ",".join(addresses)
        for address in addresses:
            _assert_serves_on_loopback(address)
        status = _kquota("dev-broker", "status", "--dir", str(cluster_dir))
        assert [n["metrics_address"] for n in json.loads(status.stdout)["nodes"]] == addresses
    finally:
        _kquota("dev-broker", "stop", "--dir", str(cluster_dir))


def test_stop_returns_once_the_jvm_is_gone(tmp_path: Path) -> None:
    """With the agent, a stopping JVM's main thread ends (its pid reads as a zombie) while
    other threads still run for a moment: stop must wait for the whole process, which is then
    reaped, not return while it still holds its ports."""
    from kquota.devbroker import processes
    from kquota.devbroker.launcher import start_broker, stop_broker

    broker = start_broker(tmp_path / "b", metrics=True, die_with_parent=True)
    try:
        assert stop_broker(tmp_path / "b")
        assert broker.pid not in processes.CHILDREN  # reaped: its exit status was collected
        with pytest.raises(ProcessLookupError):
            os.kill(broker.pid, 0)
    finally:
        stop_broker(tmp_path / "b")
