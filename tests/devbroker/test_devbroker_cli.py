"""`kquota dev-broker` as a user runs it: start in the background, status, restart, stop."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import KAFKA_VERSION
from kquota.devbroker.launcher import BrokerInfo, _port_free
from kquota.devbroker.probe import api_versions_ok
from kquota.devbroker.processes import pid_alive
from kquota.devbroker.tools import kafka_configs


def _kquota(
    *args: str, env: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kquota.cli.main", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=cwd,
    )


def _port(addr: str) -> int:
    return int(addr.rsplit(":", 1)[1])


@pytest.mark.integration
def test_start_status_restart_stop_leaves_nothing_running(tmp_path: Path) -> None:
    broker_dir = tmp_path / "b"
    started = _kquota(
        "dev-broker", "start", "--dir", str(broker_dir), "--kafka-version", KAFKA_VERSION
    )
    assert started.returncode == 0, started.stderr
    lines = started.stdout.strip().splitlines()
    assert len(lines) == 1, "start prints exactly one JSON line on stdout"
    info = json.loads(lines[0])
    for key in (
        "bootstrap_servers",
        "sasl_bootstrap_servers",
        "username",
        "password",
        "kafka_version",
    ):
        assert info[key], key
    assert info["kafka_version"] == KAFKA_VERSION
    broker = BrokerInfo(**info)
    try:
        assert api_versions_ok("127.0.0.1", _port(info["bootstrap_servers"]))
        status = _kquota("dev-broker", "status", "--dir", str(broker_dir))
        assert status.returncode == 0
        assert json.loads(status.stdout)["pid"] == info["pid"]
        assert info["password"] not in started.stderr
        # From any folder, without --dir: the directory start recorded for this user.
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir()
        status = _kquota("dev-broker", "status", cwd=elsewhere)
        assert status.returncode == 0, status.stderr
        assert json.loads(status.stdout)["pid"] == info["pid"]
        field = _kquota("dev-broker", "status", "--field", "pid", cwd=elsewhere)
        assert field.stdout == f"{info['pid']}\n"

        # A quota survives a stop/start on the same ports.
        set_proc = kafka_configs(
            broker, "--alter", "--add-config", "request_percentage=12.5", "--user", "restart-user"
        )
        assert set_proc.returncode == 0, set_proc.stderr
        assert _kquota("dev-broker", "stop", "--dir", str(broker_dir)).stdout.strip() == "stopped"
        again = _kquota("dev-broker", "start", "--dir", str(broker_dir))
        assert again.returncode == 0, again.stderr
        info2 = json.loads(again.stdout)
        assert info2["bootstrap_servers"] == info["bootstrap_servers"]
        assert info2["password"] == info["password"]
        out = kafka_configs(BrokerInfo(**info2), "--describe", "--user", "restart-user").stdout
        assert "request_percentage=12.5" in out
        pid = info2["pid"]
    finally:
        stopped = _kquota("dev-broker", "stop", cwd=tmp_path / "elsewhere")
        if stopped.stdout.strip() != "stopped":
            _kquota("dev-broker", "stop", "--dir", str(broker_dir))
    assert stopped.returncode == 0
    assert stopped.stdout.strip() == "stopped"
    assert not pid_alive(pid)
    for addr in (info["bootstrap_servers"], info["sasl_bootstrap_servers"]):
        assert _port_free(_port(addr))
    status = _kquota("dev-broker", "status", "--dir", str(broker_dir))
    assert status.returncode == 3
    assert status.stdout.strip() == "not running"
    assert status.stderr == f"looked in {broker_dir}\n"
    assert _kquota("dev-broker", "stop", "--dir", str(broker_dir)).stdout.strip() == "not running"


def test_status_without_a_broker_says_where_it_looked(tmp_path: Path) -> None:
    """No broker in the default directory nor in the recorded one: the message names both
    places and the record, so a person knows where kquota looked and what --dir is for."""
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state")}
    env.pop("KQUOTA_DEV_BROKER_DIR", None)
    record = tmp_path / "state" / "kquota" / "dev-broker"
    proc = _kquota("dev-broker", "status", env=env, cwd=tmp_path)
    assert proc.returncode == 3 and proc.stdout == "not running\n"
    assert proc.stderr == (
        f"looked in {tmp_path / '.cache' / 'dev-broker'} (the default --dir, from this folder), "
        f"and no `kquota dev-broker start` is recorded in {record}; --dir DIR looks elsewhere\n"
    )
    record.parent.mkdir(parents=True)
    record.write_text(f"{tmp_path / 'gone'}\n")
    proc = _kquota("dev-broker", "status", "--field", "pid", env=env, cwd=tmp_path)
    assert proc.returncode == 3 and proc.stdout == ""
    assert f"{tmp_path / 'gone'} (where `kquota dev-broker start` last started one)" in proc.stderr
    proc = _kquota("dev-broker", "stop", env=env, cwd=tmp_path)
    assert proc.returncode == 0 and proc.stdout == "not running\n"
    assert f"as recorded in {record};" in proc.stderr


def test_missing_java_gives_a_clear_message(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "JAVA_HOME"}
    env["PATH"] = str(Path(sys.executable).parent)  # python only: no java, no mvn
    env["KQUOTA_CACHE_DIR"] = str(tmp_path / "empty-cache")
    proc = _kquota("dev-broker", "start", "--dir", str(tmp_path / "b"), env=env)
    assert proc.returncode == 1
    assert "Java is not installed" in proc.stderr
    assert "openjdk" in proc.stderr.lower()
    assert "Traceback" not in proc.stderr


def test_missing_maven_gives_a_clear_message(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    java = subprocess.run(["bash", "-c", "command -v java"], capture_output=True, text=True)
    (bin_dir / "java").symlink_to(Path(java.stdout.strip()).resolve())
    env = {k: v for k, v in os.environ.items() if k != "JAVA_HOME"}
    env["PATH"] = f"{bin_dir}:{Path(sys.executable).parent}"
    env["KQUOTA_CACHE_DIR"] = str(tmp_path / "empty-cache")
    proc = _kquota("dev-broker", "start", "--dir", str(tmp_path / "b"), env=env)
    assert proc.returncode == 1
    assert "Maven is not installed" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_unknown_kafka_version_is_refused(tmp_path: Path) -> None:
    proc = _kquota("dev-broker", "start", "--dir", str(tmp_path / "b"), "--kafka-version", "2.0.0")
    assert proc.returncode == 1
    assert "4.3.1" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.integration
def test_status_field_prints_one_field_for_a_shell(
    kafka_broker: BrokerInfo, tmp_path: Path
) -> None:
    """`status --field` is how the README's quick start takes the address without copying."""

    def status(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "kquota", "dev-broker", "status", *args],
            capture_output=True,
            text=True,
            timeout=60,
        )

    proc = status("--dir", kafka_broker.dir, "--field", "bootstrap_servers")
    assert proc.returncode == 0 and proc.stdout == kafka_broker.bootstrap_servers + "\n"
    proc = status("--dir", kafka_broker.dir, "--field", "sasl_mechanisms")
    assert proc.returncode == 0 and json.loads(proc.stdout) == kafka_broker.sasl_mechanisms
    proc = status("--dir", kafka_broker.dir, "--field", "ssl_ca_location")  # no --tls
    assert proc.returncode == 1 and "this broker has none" in proc.stderr and proc.stdout == ""
    proc = status("--dir", kafka_broker.dir, "--field", "nope")
    assert proc.returncode == 1 and "Invalid value for '--field'" in proc.stderr
    # Nothing running: nothing on stdout for $(...) to capture, exit 3.
    proc = status("--dir", str(tmp_path / "none"), "--field", "bootstrap_servers")
    assert proc.returncode == 3 and proc.stdout == "" and "not running" in proc.stderr
