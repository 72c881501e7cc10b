"""``kquota dev-broker``: a real local Kafka broker (KRaft or ZooKeeper mode, from Maven
Central jars)."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import TYPE_CHECKING

import click

from kquota.cli.examples import EXAMPLES
from kquota.cli.timeout_option import MAX_TIMEOUT, MIN_TIMEOUT, Duration, duration_help
from kquota.devbroker.jars import DEFAULT_KAFKA_VERSION, SUPPORTED_KAFKA_VERSIONS

if TYPE_CHECKING:
    from kquota.devbroker.launcher import BrokerInfo

START_TIMEOUT = Duration("--timeout", MIN_TIMEOUT, MAX_TIMEOUT)
_DEFAULT_DIR = os.environ.get("KQUOTA_DEV_BROKER_DIR", ".cache/dev-broker")

_dir_option = click.option(
    "--dir",
    "broker_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=_DEFAULT_DIR,
    show_default=True,
    help="Directory holding the broker's config, data and logs.",
)
_found_dir_option = click.option(
    "--dir",
    "broker_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Directory holding the broker's config, data and logs. "
    f"[default: {_DEFAULT_DIR} if a broker runs there, else the one `start` last used, "
    "from any folder]",
)


@click.group("dev-broker", epilog=EXAMPLES["dev-broker"])
def command() -> None:
    """Run a local Apache Kafka broker for trying kquota out and for tests."""


@command.command("start", epilog=EXAMPLES["dev-broker start"])
@_dir_option
@click.option(
    "--kafka-version",
    type=click.Choice(SUPPORTED_KAFKA_VERSIONS),
    default=os.environ.get("KQUOTA_KAFKA_VERSION", DEFAULT_KAFKA_VERSION),
    show_default=True,
    help="Apache Kafka version to run (default: $KQUOTA_KAFKA_VERSION, else the default).",
)
@click.option(
    "--authorizer",
    is_flag=True,
    help="Enable StandardAuthorizer (AclAuthorizer in ZooKeeper mode); admin is super user.",
)
@click.option(
    "--user",
    "users",
    multiple=True,
    metavar="NAME=PASSWORD",
    help="An extra SASL user (PLAIN and SCRAM); repeatable.",
)
@click.option("--fresh", is_flag=True, help="Wipe the directory's data and ports first.")
@click.option(
    "--tls",
    is_flag=True,
    help="Also SSL (client certificate required) and SASL_SSL listeners, with a throwaway CA.",
)
@click.option(
    "--nodes",
    type=click.IntRange(1, 9),
    default=None,
    help="Run a cluster of N nodes (KRaft: each broker and controller, one quorum; "
    "ZooKeeper mode: N brokers and one ZooKeeper). "
    "[default: 1, or the node count of the cluster already in --dir]",
)
@click.option(
    "--zookeeper",
    is_flag=True,
    default=None,
    help="ZooKeeper mode (Kafka 3.x): the brokers keep their metadata in a ZooKeeper started "
    "beside them. [default: KRaft, or the mode of the broker already in --dir]",
)
@click.option(
    "--metrics",
    is_flag=True,
    help="Attach the Prometheus JMX exporter with kquota's quota-metric rules to each "
    "broker, on a free loopback port (the line's metrics_address; kept on restart).",
)
@click.option(
    "--timeout",
    type=START_TIMEOUT,
    metavar="DURATION",
    default="3m",
    show_default=True,
    help=duration_help("How long to wait for the started broker to answer:", START_TIMEOUT),
)
def start(
    broker_dir: Path,
    nodes: int | None,
    kafka_version: str,
    authorizer: bool,
    users: tuple[str, ...],
    fresh: bool,
    tls: bool,
    zookeeper: bool | None,
    metrics: bool,
    timeout: float,
) -> None:
    """Start the broker in the background and print one JSON line describing it."""
    from kquota.devbroker.cluster import clear_dir, is_cluster_dir, node_count, start_cluster
    from kquota.devbroker.launcher import start_broker
    from kquota.devbroker.recorded import record_started

    extra: dict[str, str] = {}
    for spec in users:
        name, sep, password = spec.partition("=")
        if not sep or not name or not password:
            raise click.BadParameter(f"expected NAME=PASSWORD, got {name!r}=…", param_hint="--user")
        extra[name] = password
    began = time.monotonic()
    if nodes is None and is_cluster_dir(broker_dir) and not fresh:
        nodes = node_count(broker_dir)
    if nodes is not None and nodes > 1:
        if tls:
            raise click.UsageError("--tls is for a single node; leave out --nodes or --tls")
        info = start_cluster(
            broker_dir,
            nodes=nodes,
            kafka_version=kafka_version,
            authorizer=authorizer,
            extra_users=extra,
            fresh=fresh,
            timeout=timeout,
            zookeeper=_cluster_mode(broker_dir, zookeeper, fresh),
            metrics=metrics,
        )
        record_started(broker_dir)
        click.echo(info.to_json())
        click.echo(
            f"{nodes} nodes ready in {time.monotonic() - began:.1f}s ({broker_dir})", err=True
        )
        return
    if is_cluster_dir(broker_dir) and not fresh:
        raise click.UsageError(
            f"{broker_dir} holds a cluster of {node_count(broker_dir)} nodes; "
            "use --fresh to replace it with one node"
        )
    if fresh and is_cluster_dir(broker_dir):
        clear_dir(broker_dir)
    info = start_broker(
        broker_dir,
        kafka_version=kafka_version,
        authorizer=authorizer,
        extra_users=extra,
        fresh=fresh,
        tls=tls,
        timeout=timeout,
        zookeeper=zookeeper,
        metrics=metrics,
    )
    record_started(broker_dir)
    click.echo(info.to_json())
    click.echo(f"broker ready in {time.monotonic() - began:.1f}s ({broker_dir})", err=True)


def _cluster_mode(cluster_dir: Path, zookeeper: bool | None, fresh: bool) -> bool:
    """_cluster_mode: the flag if given, else the mode of the cluster already there."""
    if zookeeper is not None:
        return zookeeper
    return not fresh and (cluster_dir / "zookeeper").is_dir()


def _running(broker_dir: Path) -> BrokerInfo | None:
    from kquota.devbroker.cluster import cluster_status, is_cluster_dir
    from kquota.devbroker.launcher import broker_status

    return cluster_status(broker_dir) if is_cluster_dir(broker_dir) else broker_status(broker_dir)


def _find(broker_dir: Path | None) -> tuple[Path, BrokerInfo | None, str]:
    """_find: the directory to act on, its running broker (None if none runs) and, for a
    broker not found, where kquota looked. Without ``--dir``: the default directory, then the
    one the last ``start`` recorded (:mod:`kquota.devbroker.recorded`), the first that runs."""
    from kquota.devbroker.recorded import record_path, recorded_dir

    if broker_dir is not None:
        return broker_dir, _running(broker_dir), f"looked in {broker_dir.resolve()}"
    default = Path(_DEFAULT_DIR)
    recorded = recorded_dir()
    looked = [f"{default.resolve()} (the default --dir, from this folder)"]
    if recorded is None:
        tail = f"and no `kquota dev-broker start` is recorded in {record_path()}"
    elif recorded == default.resolve():
        tail = f"the directory `kquota dev-broker start` last used ({record_path()})"
    else:
        looked.append(f"{recorded} (where `kquota dev-broker start` last started one)")
        tail = f"as recorded in {record_path()}"
    for d in [default] + ([recorded] if recorded is not None else []):
        info = _running(d)
        if info is not None:
            return d, info, ""
    return default, None, f"looked in {', '.join(looked)}, {tail}; --dir DIR looks elsewhere"


@command.command("stop", epilog=EXAMPLES["dev-broker stop"])
@_found_dir_option
def stop(broker_dir: Path | None) -> None:
    """Stop the broker (every node of a cluster); leaves no JVM behind."""
    from kquota.devbroker.cluster import is_cluster_dir, stop_cluster
    from kquota.devbroker.launcher import stop_broker

    broker_dir, _, looked = _find(broker_dir)
    if is_cluster_dir(broker_dir):
        was_running = stop_cluster(broker_dir)
    else:
        was_running = stop_broker(broker_dir)
    click.echo("stopped" if was_running else "not running")
    if not was_running:
        click.echo(looked, err=True)


# The JSON line's fields, for ``status --field`` (a dataclass's fields, without importing the
# launcher for every ``kquota --help``).
_STATUS_FIELDS = (
    "bootstrap_servers", "sasl_bootstrap_servers", "controller_bootstrap_servers", "username",
    "password", "sasl_mechanisms", "kafka_version", "cluster_id", "pid", "dir", "authorizer",
    "users", "ssl_bootstrap_servers", "sasl_ssl_bootstrap_servers", "ssl_ca_location",
    "ssl_certificate_location", "ssl_key_location", "nodes", "metrics_address",
)  # fmt: skip


@command.command("status", epilog=EXAMPLES["dev-broker status"])
@_found_dir_option
@click.option(
    "--field",
    type=click.Choice(_STATUS_FIELDS),
    help="Print only this field of the JSON line, as plain text (for $(...) in a shell).",
)
def status(broker_dir: Path | None, field: str | None) -> None:
    """Print the running broker's JSON line; exit 3 if none runs.

    For a cluster, a node that is down shows ``"pid": null`` (exit 0 while any node runs).
    """
    import json

    _, info, looked = _find(broker_dir)
    if info is None:
        click.echo("not running", err=field is not None)  # $(...) must not capture it
        click.echo(looked, err=True)
        raise SystemExit(3)
    if field is None:
        click.echo(info.to_json())
        return
    value = json.loads(info.to_json()).get(field)
    if value is None:
        raise click.UsageError(f"--field {field}: this broker has none (see `start --help`)")
    click.echo(value if isinstance(value, str | int) else json.dumps(value, sort_keys=True))
