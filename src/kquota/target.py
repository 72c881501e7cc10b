"""One Target: where a command's current state, client properties, policy and folders come from.

Where the current state comes from, in order:

- ``snapshot_path``: offline, a describe JSON / JSON Lines file;
- ``bootstrap_server`` (+ ``command_config``, Java properties as for kafka-configs): live,
  ad hoc;
- ``cluster_name`` from ``kquota.yaml``: live, and the cluster's desired-state folders and
  policy. With a snapshot the cluster still supplies folders and policy; with a bootstrap
  server that address overrides its own.

One policy for a cluster, however it is named (issue 33): a ``bootstrap_server`` that is the
bootstrap servers of a cluster of ``kquota.yaml`` (the same set of addresses: order, spacing,
duplicates and the case of host names do not count; no DNS is asked) is that cluster, as if
named: its policy (scope, prune, protected principals, capacity guard, observe mode, ramp),
folders and audit topic apply; only its client properties do not (the flags say how to
connect). Servers that are two clusters' are refused, naming both (which policy would be a
guess); servers that are none of them are said so (:attr:`Target.unmatched`). With
``--cluster`` as well, servers that are another cluster's (and not the named one's) are
refused. The library's :meth:`Target.live` goes the same way through ``./kquota.yaml``.

When ``kquota.yaml`` defines exactly one cluster and neither a cluster nor a bootstrap server
is given, that cluster is used: the common one-repo-one-cluster case needs no flags. With
several clusters, one must be named (its policy would otherwise be silently replaced by the
defaults).

Client properties are merged when first asked for, lowest first: ``properties`` (a
program's own, or ``kquota.yaml``'s ``kafka:`` map), the properties file, the bootstrap
server: a cluster's ``${VAR}`` secrets are read only when the target goes live. The Kafka
layer is imported only then too, so offline work never loads it.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from kquota.config.file import find_config
from kquota.errors import KquotaError, UsageError
from kquota.model import Origin, QuotaState
from kquota.runtime import progress
from kquota.secrets import Provenance, mask

if TYPE_CHECKING:
    from kquota.audit_keys import AuditKeys
    from kquota.config.project import ClusterConfig, ProjectConfig
    from kquota.kafka.admin import WireAdmin
    from kquota.kafka.config import ClientConfig
    from kquota.policy import Policy, ProtectMatch


@dataclass(frozen=True)
class Target:
    """Target is a live cluster or a snapshot file, with its client properties, label, policy
    and desired-state folders; it opens an admin and loads the current state.

    ``properties`` hold secrets; ``repr`` masks them.
    """

    snapshot_path: Path | None = None
    bootstrap_server: str | None = None
    command_config: Path | None = None
    cluster_name: str | None = None
    cluster: ClusterConfig | None = None
    properties: Mapping[str, str] = field(default_factory=dict, repr=False)
    base_policy: Policy | None = None
    named_servers: Mapping[str, str] = field(default_factory=dict, repr=False)
    """The bootstrap servers of each cluster of kquota.yaml, by name (read with it, once): a
    saved plan may record the cluster by either."""
    policy_only: bool = False
    """The cluster was found by its bootstrap servers (or a program's name for it), not named
    with ``--cluster``: its policy applies, its client properties do not (the operator's flags
    or the program's properties say how to connect)."""
    unmatched: str | None = None
    """What to warn when a kquota.yaml is present but the servers are none of its clusters."""

    def __repr__(self) -> str:
        shown = mask(self.properties)
        return (
            f"Target(snapshot_path={self.snapshot_path!r}, bootstrap_server="
            f"{self.bootstrap_server!r}, cluster_name={self.cluster_name!r}, properties={shown!r})"
        )

    @classmethod
    def live(
        cls,
        properties: Mapping[str, str],
        *,
        name: str | None = None,
        policy: Policy | None = None,
    ) -> Target:
        """live is a cluster reached with Kafka client properties (``bootstrap.servers`` and,
        for a secured listener, ``security.protocol``, ``sasl.*``, ``ssl.*``), planned under
        ``policy`` (default: every entity in scope, no pruning). ``name`` labels its plans."""
        from kquota import argcheck as check
        from kquota.policy import Policy

        check.string_mapping(properties, "Target.live: properties")
        check.optional(name, str, "Target.live: name", "a str")
        check.optional(policy, Policy, "Target.live: policy", "a kquota.Policy")
        target = cls.from_options(None, None, properties)
        target = dataclasses.replace(target, cluster_name=name, base_policy=policy)
        path = find_config()
        if path is None:
            return target
        from kquota.config.project import load_config

        # One policy for a cluster however it is named: a program reaching a cluster of
        # ./kquota.yaml (by its name or its servers) plans and applies under that policy.
        config = load_config(path)
        servers = target.client_properties()["bootstrap.servers"]
        if name is not None and name in config.clusters:
            found = matching(config, servers)
            if found and name not in found:
                raise UsageError(_other_cluster(name, found, config.path))
            return dataclasses.replace(target, cluster=config.clusters[name], policy_only=True)
        found_target = _by_servers(target, config, servers, "Target.live: bootstrap.servers")
        return dataclasses.replace(found_target, cluster_name=name or found_target.cluster_name)

    @classmethod
    def of_snapshot(
        cls, path: Path, *, name: str | None = None, policy: Policy | None = None
    ) -> Target:
        """of_snapshot is a cluster's state as a snapshot file (``kquota snapshot``, or
        ``kquota describe --format json``), planned offline under ``policy``."""
        from kquota import argcheck as check
        from kquota.policy import Policy

        snapshot = check.path(path, "Target.of_snapshot: path")
        check.optional(name, str, "Target.of_snapshot: name", "a str")
        check.optional(policy, Policy, "Target.of_snapshot: policy", "a kquota.Policy")
        return cls(snapshot_path=snapshot, cluster_name=name, base_policy=policy)

    @classmethod
    def from_options(
        cls,
        bootstrap_server: str | None,
        command_config: Path | None,
        properties: Mapping[str, str] | None = None,
    ) -> Target:
        """from_options is a live target from flags and properties, checked now: merged,
        lowest first, ``properties``, the file, ``bootstrap_server``."""
        from kquota import argcheck as check

        check.optional(bootstrap_server, str, "Target.from_options: bootstrap_server", "a str")
        if command_config is not None:
            command_config = check.path(command_config, "Target.from_options: command_config")
        if properties is not None:
            check.string_mapping(properties, "Target.from_options: properties")
        target = cls(
            bootstrap_server=bootstrap_server,
            command_config=command_config,
            properties=dict(properties or {}),
        )
        if not target.client_properties().get("bootstrap.servers", "").strip():
            raise UsageError("no bootstrap servers: give --bootstrap-server HOST:PORT")
        target.config  # noqa: B018 -- checks the properties before any connection
        return target

    @classmethod
    def resolve(
        cls,
        *,
        snapshot: Path | None = None,
        bootstrap_server: str | None = None,
        command_config: Path | None = None,
        cluster_name: str | None = None,
        config_path: Path | None = None,
        require_source: bool = True,
        live_only: bool = False,
    ) -> Target:
        """resolve checks the combination of targeting options and loads kquota.yaml
        (``live_only``: the command takes no ``--snapshot``, and its messages offer none)."""
        if snapshot is not None and bootstrap_server is not None:
            raise UsageError(
                "--snapshot and --bootstrap-server exclude each other: offline or live"
            )
        config: ProjectConfig | None = None
        path = config_path or find_config()
        if config_path is not None and not config_path.exists():
            raise UsageError(f"{config_path}: no such config file")
        if path is not None:
            from kquota.config.project import load_config

            config = load_config(path)
        cluster: ClusterConfig | None = None
        if cluster_name is not None:
            if config is None:
                raise UsageError(
                    f"--cluster {cluster_name}: no kquota.yaml here (use --config PATH)"
                )
            cluster = config.cluster(cluster_name)
        elif config is not None and bootstrap_server is None:
            if len(config.clusters) != 1:
                names = ", ".join(sorted(config.clusters)) or "none"
                raise UsageError(
                    f"{config.path} defines clusters {names}: choose one with --cluster"
                )
            cluster_name, cluster = next(iter(config.clusters.items()))
        if require_source and snapshot is None and bootstrap_server is None and cluster is None:
            # A live-only command (apply, snapshot, describe) offers no --snapshot to name.
            raise UsageError(
                "where is the cluster? give --bootstrap-server HOST:PORT or --cluster NAME"
                if live_only
                else "where is the current state? give --snapshot FILE, --bootstrap-server "
                "HOST:PORT or --cluster NAME"
            )
        named = {} if config is None else configured(config)
        target = cls(
            snapshot, bootstrap_server, command_config, cluster_name, cluster, named_servers=named
        )
        if config is None or bootstrap_server is None:
            return target
        if cluster_name is not None:
            found = matching(config, bootstrap_server)
            if found and cluster_name not in found:
                raise UsageError(_other_cluster(cluster_name, found, config.path))
            return target
        return _by_servers(target, config, bootstrap_server, "--bootstrap-server")

    @classmethod
    def of_config(cls, config: ProjectConfig, name: str) -> Target:
        """of_config is the cluster ``name`` of a kquota.yaml read already, as :meth:`resolve`
        gives it for ``--cluster NAME``: a fleet's clusters from one read of the file
        (:class:`~kquota.config.project.ConfigError` when it names no such cluster)."""
        return cls(
            cluster_name=name, cluster=config.cluster(name), named_servers=configured(config)
        )

    @property
    def label(self) -> str | None:
        """label names the cluster in plans: its config name, else its bootstrap servers."""
        return (
            self.cluster_name or self.bootstrap_server or self.properties.get("bootstrap.servers")
        )

    @property
    def offline(self) -> bool:
        """offline: the state comes from a snapshot file, not a live cluster."""
        return self.snapshot_path is not None

    @property
    def audit_topic(self) -> str | None:
        """audit_topic is the configured cluster's audit topic, if any."""
        return self.cluster.audit_topic if self.cluster is not None else None

    def audit_keys(self) -> AuditKeys | None:
        """audit_keys are the configured cluster's audit signing keys (None: none configured,
        or no kquota.yaml cluster); read from the environment when first asked for."""
        return self.cluster.audit_keys() if self.cluster is not None else None

    def policy(
        self,
        *,
        prune: bool | None,
        allow_mass_removal: bool,
        protect: Sequence[ProtectMatch] = (),
        allow_protected_change: bool = False,
    ) -> Policy:
        """policy is the ownership and safety policy plans are made under: the configured
        cluster's, else the given one, else the defaults; ``prune`` None keeps its own.
        ``protect`` (``--protect``) adds protected principals to the policy's own."""
        if self.cluster is not None:
            base = self.cluster.policy.to_policy(prune=prune, allow_mass_removal=allow_mass_removal)
        elif self.base_policy is not None:
            base = dataclasses.replace(
                self.base_policy,
                prune=self.base_policy.prune if prune is None else prune,
                allow_mass_removal=allow_mass_removal or self.base_policy.allow_mass_removal,
            )
        else:
            from kquota.policy import Policy

            base = Policy(prune=bool(prune), allow_mass_removal=allow_mass_removal)
        return dataclasses.replace(
            base,
            protect=base.protect + tuple(protect),
            allow_protected_change=allow_protected_change or base.allow_protected_change,
        )

    def desired_paths(self, given: tuple[Path, ...] | list[Path] = ()) -> list[Path]:
        """desired_paths: the paths given, else the cluster's folders, else ``quotas/``."""
        if given:
            return list(given)
        if self.cluster is not None:
            return self.cluster.desired_paths()
        return [Path("quotas")]

    def client_properties(self) -> dict[str, str]:
        """client_properties are the merged Kafka client properties (secrets: never print
        them); a copy, so a caller may add its own."""
        return dict(self._merged[0])

    @functools.cached_property
    def _merged(self) -> tuple[dict[str, str], Provenance]:
        """_merged: the properties merged once, when first asked for (the client's
        configuration and an apply's audit and lease clients all read this one merge)."""
        from kquota.properties import read_properties_file

        props: dict[str, str] = dict(self.properties)
        provenance = Provenance()
        if self.cluster is not None and not self.policy_only:
            from_cluster = self.cluster.client_properties()
            props.update(from_cluster)
            provenance = provenance.merged(self.cluster.provenance(), from_cluster)
        if self.command_config is not None:
            parsed = read_properties_file(self.command_config)
            props.update(parsed.properties)
            where = {k: f"{self.command_config}:{n}" for k, n in parsed.lines.items()}
            provenance = provenance.merged(Provenance(where), parsed.properties)
        if self.bootstrap_server is not None:
            props["bootstrap.servers"] = self.bootstrap_server
            provenance = provenance.merged(Provenance(), ["bootstrap.servers"])
        if "bootstrap.servers" not in props:
            raise UsageError("no bootstrap servers: give --bootstrap-server or --cluster")
        return props, provenance

    @functools.cached_property
    def config(self) -> ClientConfig:
        """config is the parsed client configuration (secrets masked in its repr)."""
        from kquota.kafka.config import ClientConfig

        props, provenance = self._merged
        return ClientConfig.from_properties(dict(props), provenance)

    @property
    def bootstrap_servers(self) -> tuple[str, ...]:
        """bootstrap_servers are the addresses tried in order, first answer wins."""
        return self.config.bootstrap_servers

    def admin(self, **kwargs: int) -> WireAdmin:
        """admin opens a WireAdmin on this target (use it as a context manager)."""
        from kquota.kafka.admin import WireAdmin

        return WireAdmin(self.bootstrap_servers, self.config, **kwargs)

    def load_state(self) -> QuotaState:
        """load_state reads the snapshot file, or describes the live cluster."""
        return self.load_state_and_origin()[0]

    def load_state_and_id(self) -> tuple[QuotaState, str | None]:
        """load_state_and_id also gives the cluster's id (a snapshot file's recorded one)."""
        state, origin = self.load_state_and_origin()
        return state, origin.cluster_id

    def load_state_and_origin(self) -> tuple[QuotaState, Origin]:
        """load_state_and_origin also says which cluster the state is of.

        Live: this target's label and the cluster's id. A snapshot file: what it records
        (``kquota snapshot`` writes both), the label of the named cluster taking precedence.
        """
        if self.snapshot_path is not None:
            from kquota.snapshot.files import read_snapshot_and_meta

            with progress.phase("snapshot") as step:
                state, meta = read_snapshot_and_meta(self.snapshot_path)
                step.count = len(state)
            return state, Origin(self.label or meta["cluster"], meta["cluster_id"])
        with self.admin() as admin, progress.phase("describe") as step:
            state, cluster_id = admin.describe_all(), admin.cluster_id()
            step.count = len(state)
        return state, Origin(self.label, cluster_id)


def same_servers(text: str) -> frozenset[tuple[str, int]]:
    """same_servers is a bootstrap servers list as a set of (host, port): order, spacing,
    duplicates and the case of host names do not count, and no name is resolved (two names
    of one host are two clusters here). Empty when the list is not valid."""
    from kquota.kafka.config import parse_bootstrap_servers, split_host_port

    try:
        servers = parse_bootstrap_servers(text)
        return frozenset((h.lower(), p) for h, p in map(split_host_port, servers))
    except KquotaError:
        return frozenset()


def matching(config: ProjectConfig, servers: str) -> list[str]:
    """matching: the clusters of kquota.yaml whose bootstrap servers are ``servers``, sorted
    (a cluster whose servers are read from an unset ``${VAR}`` matches nothing)."""
    wanted = same_servers(servers)
    if not wanted:
        return []
    found = []
    for name, cluster in sorted(config.clusters.items()):
        raw = cluster.kafka["bootstrap.servers"]
        if "${" in raw:
            try:
                raw = cluster.client_properties()["bootstrap.servers"]
            except KquotaError:
                continue
        if same_servers(raw) == wanted:
            found.append(name)
    return found


def _by_servers(target: Target, config: ProjectConfig, servers: str, given: str) -> Target:
    """_by_servers: ``target`` as the cluster of kquota.yaml its servers are, if one."""
    from kquota.display import safe_text
    from kquota.kafka.config import redact_address

    if not same_servers(servers):
        return target  # not addresses at all: the client configuration says what is wrong
    shown = safe_text(",".join(redact_address(s.strip()) for s in servers.split(",")))
    found = matching(config, servers)
    if len(found) > 1:
        raise UsageError(
            f"{given} {shown!r} is the bootstrap servers of clusters "
            f"{' and '.join(map(safe_text, found))} in {config.path}: whose policy applies "
            "would be a guess; name one with --cluster NAME (or Target.live(name=...))"
        )
    if not found:
        names = ", ".join(map(safe_text, sorted(config.clusters))) or "none"
        return dataclasses.replace(
            target,
            unmatched=f"{given} {shown!r} is none of the clusters of {config.path}"
            f" ({names}): the default policy applies, not a configured cluster's",
        )
    name = found[0]
    return dataclasses.replace(
        target, cluster_name=name, cluster=config.clusters[name], policy_only=True
    )


def _other_cluster(name: str, found: list[str], path: Path) -> str:
    from kquota.display import safe_text

    return (
        f"--cluster {safe_text(name)}: the bootstrap servers given are those of cluster "
        f"{' and '.join(map(safe_text, found))} in {path}, not {safe_text(name)}'s: one "
        "cluster, one policy; name the cluster the servers are"
    )


def configured(config: ProjectConfig) -> dict[str, str]:
    """configured: the bootstrap servers of each cluster of kquota.yaml, by name."""
    return {name: c.kafka["bootstrap.servers"] for name, c in config.clusters.items()}


def configured_cluster_names(config_path: Path | None) -> tuple[Path, list[str]]:
    """configured_cluster_names: kquota.yaml's path and its cluster names, sorted."""
    path = config_path or find_config()
    if path is None:
        raise UsageError("--all needs a kquota.yaml (or --config PATH)")
    from kquota.config.project import load_config

    return path, sorted(load_config(path).clusters)
