"""Targeting options shared by plan, resolve, export, apply and drift.

Where the current state comes from, in order:

- ``--snapshot FILE``: offline, a describe JSON / JSON Lines file;
- ``--bootstrap-server HOST:PORT`` (+ ``--command-config FILE``, Java properties as for
  kafka-configs): live, ad hoc;
- ``--cluster NAME`` from ``kquota.yaml`` (``--config PATH``, else ./kquota.yaml): live, and
  the cluster's desired-state folders and policy. With ``--snapshot`` the cluster still
  supplies folders and policy; with ``--bootstrap-server`` that address overrides its own.

When ``kquota.yaml`` defines exactly one cluster and neither ``--cluster`` nor
``--bootstrap-server`` is given, that cluster is used: the common one-repo-one-cluster case
needs no flags. With several clusters, one must be named (its policy would otherwise be
silently replaced by the defaults).

Live describes go through ``kquota.cluster``, imported only when needed so offline commands
never load the Kafka layer.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar, cast

import click

from kquota.config import ClusterConfig, ProjectConfig, find_config, load_config, mask_properties
from kquota.errors import UsageError
from kquota.model import QuotaState
from kquota.plan.policy import Policy
from kquota.plan.types import Plan

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class LiveTarget:
    """LiveTarget is how to reach a cluster: its name (if configured) and client properties.

    ``properties`` hold secrets; ``repr`` masks them.
    """

    name: str | None
    properties: dict[str, str] = field(repr=False)

    def __repr__(self) -> str:
        return f"LiveTarget(name={self.name!r}, properties={mask_properties(self.properties)!r})"

    @property
    def bootstrap_servers(self) -> str:
        return self.properties["bootstrap.servers"]


@dataclass(frozen=True)
class Targeting:
    """Targeting is the parsed targeting options: where state, folders and policy come from."""

    snapshot_path: Path | None
    bootstrap_server: str | None
    command_config: Path | None
    cluster_name: str | None
    cluster: ClusterConfig | None

    @property
    def label(self) -> str | None:
        """label names the cluster in plans: its config name, else its bootstrap servers."""
        return self.cluster_name or self.bootstrap_server

    @property
    def offline(self) -> bool:
        return self.snapshot_path is not None

    def policy(self, *, prune: bool | None, allow_mass_removal: bool) -> Policy:
        if self.cluster is not None:
            return self.cluster.policy.to_policy(prune=prune, allow_mass_removal=allow_mass_removal)
        return Policy(prune=bool(prune), allow_mass_removal=allow_mass_removal)

    def desired_paths(self, given: tuple[Path, ...]) -> list[Path]:
        """desired_paths: the PATHS given, else the cluster's folders, else ``quotas/``."""
        if given:
            return list(given)
        if self.cluster is not None:
            return self.cluster.desired_paths()
        return [Path("quotas")]

    def live_target(self) -> LiveTarget:
        props: dict[str, str] = {}
        if self.cluster is not None:
            props.update(self.cluster.client_properties())
        if self.command_config is not None:
            props.update(read_properties(self.command_config))
        if self.bootstrap_server is not None:
            props["bootstrap.servers"] = self.bootstrap_server
        if "bootstrap.servers" not in props:
            raise UsageError("no bootstrap servers: give --bootstrap-server or --cluster")
        return LiveTarget(self.cluster_name, props)

    def load_state(self) -> QuotaState:
        """load_state reads the snapshot file, or describes the live cluster."""
        return self.load_state_and_id()[0]

    def load_state_and_id(self) -> tuple[QuotaState, str | None]:
        """load_state_and_id also gives the live cluster's id (None for a snapshot file)."""
        if self.snapshot_path is not None:
            from kquota.snapshot import read_snapshot

            return read_snapshot(self.snapshot_path), None
        # Imported here so that offline commands never load the Kafka layer.
        from kquota.cluster import fetch_snapshot_and_id

        return fetch_snapshot_and_id(self.live_target())


def read_properties(path: Path) -> dict[str, str]:
    """read_properties reads a --command-config file (Java properties, as Kafka's tools do)."""
    from kquota.kafka.config import read_properties as read_java_properties

    return read_java_properties(path)


@dataclass(frozen=True)
class TargetingArgs:
    """TargetingArgs is the targeting flags as given; :meth:`resolve` checks and loads them."""

    snapshot: Path | None = None
    bootstrap_server: str | None = None
    command_config: Path | None = None
    cluster_name: str | None = None
    config_path: Path | None = None

    def resolve(self, *, require_source: bool = True) -> Targeting:
        return targeting(
            snapshot=self.snapshot,
            bootstrap_server=self.bootstrap_server,
            command_config=self.command_config,
            cluster_name=self.cluster_name,
            config_path=self.config_path,
            require_source=require_source,
        )


def targeting_options(f: F) -> F:
    """targeting_options adds the shared targeting flags to a click command.

    The command receives them as one ``where: TargetingArgs`` parameter.
    """
    options = [
        click.option(
            "--snapshot",
            "snapshot",
            type=click.Path(path_type=Path, dir_okay=False),
            help="Offline: read the current state from a snapshot file (JSON or JSON Lines).",
        ),
        click.option("--bootstrap-server", help="Live: the cluster to describe (HOST:PORT,...)."),
        click.option(
            "--command-config",
            type=click.Path(path_type=Path, dir_okay=False),
            help="Kafka client properties file (security.protocol, sasl.*, ssl.*).",
        ),
        click.option("--cluster", "cluster_name", help="A cluster named in kquota.yaml."),
        click.option(
            "--config",
            "config_path",
            type=click.Path(path_type=Path, dir_okay=False),
            help="Project config (default: ./kquota.yaml if present).",
        ),
    ]

    @functools.wraps(f)
    def collect(*args: Any, **kwargs: Any) -> Any:
        names = ("snapshot", "bootstrap_server", "command_config", "cluster_name", "config_path")
        where = TargetingArgs(**{n: kwargs.pop(n) for n in names})
        return f(*args, where=where, **kwargs)

    wrapped: Any = collect
    for option in reversed(options):
        wrapped = option(wrapped)
    return cast(F, wrapped)


def targeting(
    *,
    snapshot: Path | None,
    bootstrap_server: str | None,
    command_config: Path | None,
    cluster_name: str | None,
    config_path: Path | None,
    require_source: bool = True,
) -> Targeting:
    """targeting validates the combination of targeting flags and loads kquota.yaml."""
    if snapshot is not None and bootstrap_server is not None:
        raise UsageError("--snapshot and --bootstrap-server exclude each other: offline or live")
    config: ProjectConfig | None = None
    path = config_path or find_config()
    if config_path is not None and not config_path.is_file():
        raise UsageError(f"{config_path}: no such config file")
    if path is not None:
        config = load_config(path)
    cluster: ClusterConfig | None = None
    if cluster_name is not None:
        if config is None:
            raise UsageError(f"--cluster {cluster_name}: no kquota.yaml here (use --config PATH)")
        cluster = config.cluster(cluster_name)
    elif config is not None and bootstrap_server is None:
        if len(config.clusters) != 1:
            names = ", ".join(sorted(config.clusters)) or "none"
            raise UsageError(f"{config.path} defines clusters {names}: choose one with --cluster")
        cluster_name, cluster = next(iter(config.clusters.items()))
    if require_source and snapshot is None and bootstrap_server is None and cluster is None:
        raise UsageError(
            "where is the current state? give --snapshot FILE, --bootstrap-server HOST:PORT "
            "or --cluster NAME"
        )
    return Targeting(snapshot, bootstrap_server, command_config, cluster_name, cluster)


@dataclass(frozen=True)
class LoadedDesired:
    """LoadedDesired is what the commands need from ``kquota.desired.load_desired``."""

    quotas: QuotaState
    digest: str | None


def load_desired_quotas(paths: list[Path]) -> LoadedDesired:
    """load_desired_quotas loads desired-state YAML through ``kquota.desired``.

    Imported lazily: commands that read no YAML (export, resolve --snapshot) skip the loader.
    """
    from kquota.desired import load_desired

    result = load_desired(paths)
    return LoadedDesired(result.quotas, result.digest)


def plan_against(
    target: Targeting,
    paths: tuple[Path, ...],
    state: QuotaState,
    cluster_id: str | None,
    *,
    prune: bool | None,
    allow_mass_removal: bool,
) -> Plan:
    """plan_against plans PATHS (or the target's folders) against ``state`` and stamps the
    plan with what a saved plan records: cluster id, desired digest, version, time."""
    import datetime as dt

    from kquota import __version__
    from kquota.engines.local import LocalEngine

    desired = load_desired_quotas(target.desired_paths(paths))
    policy = target.policy(prune=prune, allow_mass_removal=allow_mass_removal)
    plan = LocalEngine().plan(desired.quotas, state, policy, target.label)
    return dataclasses.replace(
        plan,
        cluster_id=cluster_id,
        desired_digest=desired.digest,
        kquota_version=__version__,
        created_at=dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat(),
    )
