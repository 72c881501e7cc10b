"""The fleet engine protocol: plan and resolve over many clusters, however the work is spread.

Both engines implement it: :class:`LocalFleetEngine` (this process, or a pool of local
processes) and :class:`kquota.fleet.spark.SparkEngine` (PySpark, local or a cluster). They
must agree exactly: the same fleet gives plans with equal ``to_data()`` and equal effective
quotas. Drift over a fleet is its plans read as drift reports (:func:`kquota.fleet.run.
write_drift`), so it needs nothing more of an engine.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

from kquota.fleet.layout import FleetCluster, discover
from kquota.plan.policy import Policy
from kquota.plan.types import Plan

Effective = dict[str, tuple[float, Any]]


class FleetEngine(Protocol):
    """FleetEngine finds a fleet's clusters and plans or resolves all of them; use it as a
    context manager (an engine may hold a session open)."""

    def __enter__(self) -> FleetEngine: ...

    def __exit__(self, *exc: object) -> None: ...

    def discover(self, desired_root: str, snapshots_dir: str) -> list[FleetCluster]: ...

    def plan_fleet(self, clusters: Sequence[FleetCluster], policy: Policy) -> dict[str, Plan]: ...

    def resolve_fleet(
        self, clusters: Sequence[FleetCluster], principals: Sequence[tuple[str, str]], source: str
    ) -> dict[str, list[Effective]]: ...


class LocalFleetEngine:
    """LocalFleetEngine plans cluster by cluster in this process, or in ``processes`` local
    worker processes (None: chosen by the fleet's size, :func:`kquota.fleet.run.
    auto_processes`)."""

    def __init__(self, processes: int | None = 1) -> None:
        self.processes = processes

    def __enter__(self) -> LocalFleetEngine:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def discover(self, desired_root: str, snapshots_dir: str) -> list[FleetCluster]:
        """discover lists the fleet's clusters on the local file system."""
        return discover(desired_root, snapshots_dir)

    def plan_fleet(self, clusters: Sequence[FleetCluster], policy: Policy) -> dict[str, Plan]:
        """plan_fleet plans every cluster under ``policy``, in the clusters' order."""
        from kquota.fleet.run import auto_processes, plan_fleet_local

        workers = auto_processes(clusters) if self.processes is None else self.processes
        return plan_fleet_local(clusters, policy, processes=workers)

    def resolve_fleet(
        self, clusters: Sequence[FleetCluster], principals: Sequence[tuple[str, str]], source: str
    ) -> dict[str, list[Effective]]:
        """resolve_fleet resolves every principal against each cluster's snapshot, or its
        desired state (``source == "desired"``)."""
        from kquota import deadline
        from kquota.desired.loader import load_desired
        from kquota.fleet.resolve import resolve_local
        from kquota.snapshot_rows import read_snapshot_any

        results: dict[str, list[Effective]] = {}
        with deadline.interrupting():
            for i, c in enumerate(clusters):
                what = f"the local engine to resolve on cluster {c.name} ({i} of {len(clusters)})"
                with deadline.waiting_on(what):
                    deadline.check()
                    state = (
                        load_desired([Path(c.desired_dir)]).quotas
                        if source == "desired"
                        else read_snapshot_any(Path(c.snapshot))
                    )
                    results[c.name] = resolve_local(state, principals)
        return results
