"""Reaching a live cluster: where it is (:class:`ClusterTarget`) and its quota snapshot.

Commands build a target from ``--bootstrap-server`` / ``--command-config`` or from a
``kquota.yaml`` cluster's properties, and never touch the Kafka layer beyond this module and
:class:`~kquota.kafka.admin.QuotaAdmin`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from kquota.errors import UsageError
from kquota.kafka.admin import QuotaAdmin
from kquota.kafka.config import ClientConfig, parse_bootstrap_servers, read_properties, redact
from kquota.model import QuotaState


class HasProperties(Protocol):
    """HasProperties: any target carrying Kafka client properties (cli.options.LiveTarget)."""

    @property
    def properties(self) -> dict[str, str]: ...


@dataclass(frozen=True)
class ClusterTarget:
    """ClusterTarget is a cluster's bootstrap servers and client configuration (secrets masked)."""

    bootstrap_servers: tuple[str, ...]
    config: ClientConfig

    @classmethod
    def from_options(
        cls,
        bootstrap_server: str | None,
        command_config: Path | None,
        properties: Mapping[str, str] | None = None,
    ) -> ClusterTarget:
        """from_options merges, lowest first: ``properties``, the file, ``--bootstrap-server``."""
        props: dict[str, str] = dict(properties or {})
        if command_config is not None:
            props.update(read_properties(command_config))
        if bootstrap_server is not None:
            props["bootstrap.servers"] = bootstrap_server
        if not props.get("bootstrap.servers", "").strip():
            raise UsageError("no bootstrap servers: give --bootstrap-server HOST:PORT")
        config = ClientConfig.from_properties(props)
        return cls(parse_bootstrap_servers(props["bootstrap.servers"]), config)

    @property
    def label(self) -> str:
        return ",".join(self.bootstrap_servers)

    def admin(self, **kwargs: int) -> QuotaAdmin:
        """admin opens a QuotaAdmin on this target (use it as a context manager)."""
        return QuotaAdmin(self.bootstrap_servers, self.config, **kwargs)


def fetch_snapshot(target: ClusterTarget | HasProperties) -> QuotaState:
    """fetch_snapshot describes every quota of the cluster (describe-all, ip entities too)."""
    return fetch_snapshot_and_id(target)[0]


def fetch_snapshot_and_id(target: ClusterTarget | HasProperties) -> tuple[QuotaState, str | None]:
    """fetch_snapshot_and_id also returns the cluster id, over the same connection."""
    if not isinstance(target, ClusterTarget):
        target = ClusterTarget.from_options(None, None, target.properties)
    with target.admin() as admin:
        return admin.describe_all(), admin.cluster_id()


__all__ = ["ClusterTarget", "HasProperties", "fetch_snapshot", "fetch_snapshot_and_id", "redact"]
