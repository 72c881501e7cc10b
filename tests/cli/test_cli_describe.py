"""``kquota describe`` reaches a cluster as every other command does: ``--cluster NAME`` from
kquota.yaml (``--config PATH``, or the folder's own single cluster), with its client
properties, not only ``--bootstrap-server``."""

from __future__ import annotations

import secrets
from pathlib import Path

import pytest

from cli_runner import run_kquota
from kquota.devbroker.launcher import BrokerInfo
from kquota.devbroker.tools import kafka_configs


def test_describe_takes_cluster_and_config(
    kafka_broker: BrokerInfo,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    user = f"described-{secrets.token_hex(4)}"
    done = kafka_configs(
        kafka_broker, "--alter", "--add-config", "request_percentage=42", "--user", user
    )
    assert done.returncode == 0, done.stderr
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
