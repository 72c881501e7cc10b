"""The test harness itself: a real broker that answers, authenticates and stores quotas."""

from __future__ import annotations

import pytest

from conftest import KafkaConfigsTool
from kquota.devbroker.launcher import BrokerInfo
from kquota.devbroker.probe import api_versions_ok, describe_quotas_ok
from kquota.devbroker.tools import kafka_configs


def _host_port(addr: str) -> tuple[str, int]:
    host, port = addr.rsplit(":", 1)
    return host, int(port)


def test_broker_answers_on_both_listeners(kafka_broker: BrokerInfo) -> None:
    assert api_versions_ok(*_host_port(kafka_broker.bootstrap_servers))
    assert api_versions_ok(*_host_port(kafka_broker.sasl_bootstrap_servers))
    assert describe_quotas_ok(*_host_port(kafka_broker.bootstrap_servers))
    assert kafka_broker.bootstrap_servers.startswith("127.0.0.1:")
    assert kafka_broker.sasl_bootstrap_servers != kafka_broker.bootstrap_servers


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-512", "PLAIN"])
@pytest.mark.parametrize("right", [True, False], ids=["right-password", "wrong-password"])
def test_sasl_accepts_the_right_password_only(
    kafka_broker: BrokerInfo, mechanism: str, right: bool
) -> None:
    from kquota.devbroker.jars import KafkaJars
    from kquota.devbroker.tools import run_tool

    jars = KafkaJars.resolve(kafka_broker.kafka_version)
    password = kafka_broker.password if right else "not-the-password"
    proc = run_tool(
        kafka_broker,
        jars.config_command_class,
        ["--describe", "--entity-type", "users", "--entity-name", "nobody"],
        sasl_user=(kafka_broker.username, password),
        mechanism=mechanism,
    )
    output = proc.stdout + proc.stderr
    if right:
        assert proc.returncode == 0 and "Authentication failed" not in output, output
    else:
        assert proc.returncode != 0 and "Authentication failed" in output, output


def test_kafka_configs_sets_and_describes_a_quota(kafka_configs_tool: KafkaConfigsTool) -> None:
    kafka_configs_tool(
        "--alter",
        "--add-config",
        "producer_byte_rate=1048576,consumer_byte_rate=2097152",
        "--entity-type",
        "users",
        "--entity-name",
        "harness-user",
        "--entity-type",
        "clients",
        "--entity-name",
        "harness-client",
    )
    out = kafka_configs_tool(
        "--describe",
        "--entity-type",
        "users",
        "--entity-name",
        "harness-user",
        "--entity-type",
        "clients",
        "--entity-name",
        "harness-client",
    ).stdout
    assert "producer_byte_rate=1048576.0" in out
    assert "consumer_byte_rate=2097152.0" in out
    kafka_configs_tool(
        "--alter",
        "--delete-config",
        "producer_byte_rate,consumer_byte_rate",
        "--user",
        "harness-user",
        "--client",
        "harness-client",
    )
    out = kafka_configs_tool(
        "--describe", "--user", "harness-user", "--client", "harness-client"
    ).stdout
    assert "producer_byte_rate" not in out


def test_extra_user_authenticates_over_sasl(kafka_broker: BrokerInfo) -> None:
    proc = kafka_configs(
        kafka_broker, "--describe", "--user", "nobody", sasl_user=("alice", "alice-secret")
    )
    assert proc.returncode == 0, proc.stderr
