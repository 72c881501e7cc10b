"""``kquota describe`` reaches a cluster as every other command does: ``--cluster NAME`` from
kquota.yaml (``--config PATH``, or the folder's own single cluster), with its client
properties, not only ``--bootstrap-server``."""

from __future__ import annotations

import gc
import io
import secrets
import sys
from pathlib import Path
from typing import Any

import pytest

from cli_runner import run_kquota
from kquota.cli.main import main
from kquota.devbroker.launcher import BrokerInfo
from kquota.devbroker.tools import kafka_configs
from kquota.model import Entity
from polling import served


def _set_with_kafka_configs(broker: BrokerInfo, user: str) -> None:
    """_set_with_kafka_configs gives ``user`` request_percentage=42 with Kafka's own tool, and
    returns once the broker serves it (a describe trails the alter)."""
    done = kafka_configs(broker, "--alter", "--add-config", "request_percentage=42", "--user", user)
    assert done.returncode == 0, done.stderr
    entity, held = Entity.of({"user": user}), {"request_percentage": 42.0}
    served(broker.bootstrap_servers, {entity: held})


def test_describe_takes_cluster_and_config(
    kafka_broker: BrokerInfo,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    user = f"described-{secrets.token_hex(4)}"
    _set_with_kafka_configs(kafka_broker, user)
    config = tmp_path / "project" / "kquota.yaml"
    config.parent.mkdir()
    # Over SASL, the password from the environment: the cluster's properties are used whole.
    config.write_text(
        "clusters:\n"
        "  dev:\n"
        "    kafka:\n"
        f"      bootstrap.servers: '{kafka_broker.sasl_bootstrap_servers}'\n"
        "      security.protocol: SASL_PLAINTEXT\n"
        "      sasl.mechanism: SCRAM-SHA-512\n"
        f"      sasl.username: {kafka_broker.username}\n"
        "      sasl.password: ${KQUOTA_TEST_PASSWORD}\n"
    )
    monkeypatch.setenv("KQUOTA_TEST_PASSWORD", kafka_broker.password)
    monkeypatch.chdir(tmp_path)  # no kquota.yaml here: --config names it
    argv = ["describe", "--names", f"user={user}"]
    code, out, err = run_kquota([*argv, "--cluster", "dev", "--config", str(config)], capsys)
    assert (code, out) == (0, f"{{user={user}}}\n  request_percentage=42\n"), err
    monkeypatch.chdir(config.parent)  # the folder's only cluster, as plan takes it
    code, out, err = run_kquota(argv, capsys)
    assert (code, out) == (0, f"{{user={user}}}\n  request_percentage=42\n"), err
    code, out, err = run_kquota([*argv, "--cluster", "prod"], capsys)
    assert code == 1 and out == "" and "prod" in err and "dev" in err


class _Sink(io.BytesIO):
    """_Sink is a standard output that notes whether the cyclic collector was on at each write."""

    def __init__(self) -> None:
        super().__init__()
        self.collector_on: list[bool] = []

    def write(self, data: Any, /) -> int:
        self.collector_on.append(gc.isenabled())
        return super().write(data)


def test_describe_writes_with_the_cyclic_collector_paused(
    kafka_broker: BrokerInfo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A describe-all builds objects per entity, none in a cycle: each collection the cyclic
    collector started would walk them all and find nothing (kquota.runtime.gcpause; at 100k entities
    about 0.06 s of CPU). The command pauses it until its output is written, and turns it
    back on after."""
    user = f"paused-{secrets.token_hex(4)}"
    _set_with_kafka_configs(kafka_broker, user)
    sink = _Sink()
    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(sink, encoding="utf-8"))
    argv = ["describe", "--bootstrap-server", kafka_broker.bootstrap_servers, "--format", "json"]
    assert main(argv) in (0, None)
    sys.stdout.flush()
    assert f'"{user}"'.encode() in sink.getvalue()
    assert sink.collector_on and not any(sink.collector_on)
    assert gc.isenabled()
