"""Run Kafka's own command-line tools (from the same jars as the broker).

They are the independent second client of kquota's tests and demos: what kquota writes,
``kafka-configs`` must read back, and the reverse.
"""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

from kquota.devbroker.jars import KafkaJars, find_java
from kquota.devbroker.launcher import BrokerInfo


def sasl_client_properties(username: str, password: str, mechanism: str = "SCRAM-SHA-256") -> str:
    module = (
        "org.apache.kafka.common.security.plain.PlainLoginModule"
        if mechanism == "PLAIN"
        else "org.apache.kafka.common.security.scram.ScramLoginModule"
    )
    escaped = password.replace("\\", "\\\\").replace('"', '\\"')
    return (
        "security.protocol=SASL_PLAINTEXT\n"
        f"sasl.mechanism={mechanism}\n"
        f'sasl.jaas.config={module} required username="{username}" password="{escaped}";\n'
    )


def run_tool(
    broker: BrokerInfo,
    main_class: str,
    args: Sequence[str],
    *,
    sasl_user: tuple[str, str] | None = None,
    mechanism: str = "SCRAM-SHA-256",
    timeout: float = 120.0,
) -> subprocess.CompletedProcess[str]:
    """run_tool runs a Kafka tool's main class against ``broker``.

    With ``sasl_user`` it connects to the SASL listener with a ``--command-config`` file;
    otherwise to PLAINTEXT. The tool's exit code and output are returned, not checked.
    """
    jars = KafkaJars.resolve(broker.kafka_version)
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [find_java(), "-Xmx256m", "-cp", jars.classpath, main_class]
        if sasl_user is None:
            cmd += ["--bootstrap-server", broker.bootstrap_servers]
        else:
            props = Path(tmp) / "client.properties"
            props.write_text(sasl_client_properties(*sasl_user, mechanism=mechanism))
            cmd += ["--bootstrap-server", broker.sasl_bootstrap_servers]
            cmd += ["--command-config", str(props)]
        return subprocess.run(
            [*cmd, *args], capture_output=True, text=True, timeout=timeout, check=False
        )


def kafka_configs(
    broker: BrokerInfo, *args: str, sasl_user: tuple[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """kafka_configs runs ``kafka-configs`` (kafka.admin.ConfigCommand) against ``broker``."""
    jars = KafkaJars.resolve(broker.kafka_version)
    return run_tool(broker, jars.config_command_class, args, sasl_user=sasl_user)


def kafka_acls(broker: BrokerInfo, *args: str) -> subprocess.CompletedProcess[str]:
    """kafka_acls runs ``kafka-acls`` against ``broker`` as its admin user over SASL."""
    jars = KafkaJars.resolve(broker.kafka_version)
    return run_tool(
        broker, jars.acl_command_class, args, sasl_user=(broker.username, broker.password)
    )
