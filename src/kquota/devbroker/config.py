"""Render the broker's configuration files: server.properties and the logging config.

KRaft combined mode with a static quorum (``controller.quorum.voters``), which works unchanged
on 3.9 and 4.x and needs no ``--standalone`` at format time. Inter-broker and controller
traffic stay on PLAINTEXT; the SASL_PLAINTEXT listener serves PLAIN (users from the JAAS
options) and SCRAM-SHA-256/512 (credentials written into the metadata log at format time).

With ``zookeeper_connect`` (Kafka 3.x) it is a ZooKeeper-mode broker instead: metadata, quotas
and SCRAM credentials (upserted once it runs, :mod:`kquota.devbroker.scram`) live in ZooKeeper.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kquota.devbroker.tls import TlsFiles

SASL_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")


@dataclass(frozen=True)
class Ports:
    plaintext: int
    sasl: int
    controller: int
    ssl: int = 0
    """0 = no TLS listeners; else SSL on ``ssl`` and SASL_SSL on ``sasl_ssl``."""
    sasl_ssl: int = 0
    metrics: int = 0
    """0 = no JMX exporter; else its HTTP port (``start --metrics``), on loopback."""


def _jaas_quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def server_properties(
    *,
    data_dir: Path,
    ports: Ports,
    users: dict[str, str],
    admin_user: str,
    authorizer: bool,
    kafka_major: int,
    tls: TlsFiles | None = None,
    node_id: int = 1,
    voters: str | None = None,
    zookeeper_connect: str | None = None,
) -> str:
    """server_properties renders one node; ``voters`` (``id@host:port,...``) joins it to a
    quorum of several nodes, else it is a quorum of one. With ``zookeeper_connect`` it is a
    ZooKeeper-mode broker with id ``node_id`` (no controller listener, no quorum)."""
    admin_password = users[admin_user]
    plain_users = " ".join(f"user_{name}={_jaas_quote(pw)}" for name, pw in users.items())
    listeners = [
        f"PLAINTEXT://127.0.0.1:{ports.plaintext}",
        f"SASL_PLAINTEXT://127.0.0.1:{ports.sasl}",
    ]
    sasl_listeners = ["sasl_plaintext"]
    if tls is not None:
        listeners += [f"SSL://127.0.0.1:{ports.ssl}", f"SASL_SSL://127.0.0.1:{ports.sasl_ssl}"]
        sasl_listeners.append("sasl_ssl")
    protocols = ["PLAINTEXT:PLAINTEXT", "SASL_PLAINTEXT:SASL_PLAINTEXT"]
    if tls is not None:
        protocols += ["SSL:SSL", "SASL_SSL:SASL_SSL"]
    if zookeeper_connect is None:
        protocols.insert(0, "CONTROLLER:PLAINTEXT")
        lines = [
            "process.roles=broker,controller",
            f"node.id={node_id}",
            "controller.quorum.voters=" + (voters or f"{node_id}@127.0.0.1:{ports.controller}"),
            "listeners=" + ",".join([*listeners, f"CONTROLLER://127.0.0.1:{ports.controller}"]),
            "advertised.listeners=" + ",".join(listeners),
            "controller.listener.names=CONTROLLER",
        ]
    else:
        lines = [
            f"broker.id={node_id}",
            f"zookeeper.connect={zookeeper_connect}",
            # A loaded machine can take a while to answer; the default is 18 s.
            "zookeeper.connection.timeout.ms=60000",
            "listeners=" + ",".join(listeners),
            "advertised.listeners=" + ",".join(listeners),
        ]
    lines += [
        "inter.broker.listener.name=PLAINTEXT",
        "listener.security.protocol.map=" + ",".join(protocols),
        "sasl.enabled.mechanisms=" + ",".join(SASL_MECHANISMS),
    ]
    for listener in sasl_listeners:
        lines += [
            f"listener.name.{listener}.plain.sasl.jaas.config="
            "org.apache.kafka.common.security.plain.PlainLoginModule required "
            f"username={_jaas_quote(admin_user)} password={_jaas_quote(admin_password)} "
            f"{plain_users};",
            f"listener.name.{listener}.scram-sha-256.sasl.jaas.config="
            "org.apache.kafka.common.security.scram.ScramLoginModule required;",
            f"listener.name.{listener}.scram-sha-512.sasl.jaas.config="
            "org.apache.kafka.common.security.scram.ScramLoginModule required;",
        ]
    if tls is not None:
        # PEM keystores (KIP-651); the SSL listener demands a client certificate (mTLS), the
        # SASL_SSL one authenticates with SASL over server-authenticated TLS.
        lines += [
            "ssl.keystore.type=PEM",
            f"ssl.keystore.location={tls.server_keystore}",
            "ssl.truststore.type=PEM",
            f"ssl.truststore.location={tls.ca_certificate}",
            "listener.name.ssl.ssl.client.auth=required",
        ]
    lines += [
        f"log.dirs={data_dir}",
        "num.partitions=1",
        "offsets.topic.replication.factor=1",
        "transaction.state.log.replication.factor=1",
        "transaction.state.log.min.isr=1",
        "group.initial.rebalance.delay.ms=0",
    ]
    if kafka_major >= 4:
        lines += [
            "share.coordinator.state.topic.replication.factor=1",
            "share.coordinator.state.topic.min.isr=1",
        ]
    if authorizer:
        # PLAINTEXT inter-broker and controller traffic authenticates as ANONYMOUS, so it must
        # be a super user or the controller refuses the broker's envelope requests. ZooKeeper
        # mode has its own authorizer, which keeps ACLs in ZooKeeper.
        authorizer_class = (
            "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
            if zookeeper_connect is None
            else "kafka.security.authorizer.AclAuthorizer"
        )
        lines += [
            f"authorizer.class.name={authorizer_class}",
            f"super.users=User:{admin_user};User:ANONYMOUS",
        ]
    return "\n".join(lines) + "\n"


def logging_config(kafka_major: int, log_file: Path) -> tuple[str, str, str]:
    """logging_config returns (file name, contents, JVM system property) for the broker's logs."""
    if kafka_major >= 4:
        body = "\n".join(
            [
                "status = warn",
                "appender.file.type = File",
                "appender.file.name = FILE",
                f"appender.file.fileName = {log_file}",
                "appender.file.layout.type = PatternLayout",
                "appender.file.layout.pattern = [%d] %p %m (%c)%n",
                "rootLogger.level = INFO",
                "rootLogger.appenderRef.file.ref = FILE",
                "",
            ]
        )
        return "log4j2.properties", body, "-Dlog4j2.configurationFile="
    body = "\n".join(
        [
            "log4j.rootLogger=INFO, file",
            "log4j.appender.file=org.apache.log4j.FileAppender",
            f"log4j.appender.file.File={log_file}",
            "log4j.appender.file.layout=org.apache.log4j.PatternLayout",
            "log4j.appender.file.layout.ConversionPattern=[%d] %p %m (%c)%n",
            "",
        ]
    )
    return "log4j.properties", body, "-Dlog4j.configuration=file:"
