"""The fleet operations: plan, drift and resolve every cluster of a fleet with one engine,
writing one file per cluster and a fleet summary (:mod:`kquota.fleet.run`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kquota import deadline
from kquota.plan.policy import Policy
from kquota.plan.types import Plan
from kquota.principals.model import Discovery

if TYPE_CHECKING:
    from kquota.fleet.spark import SparkSettings


@dataclass(frozen=True)
class FleetRun:
    """FleetRun is how a fleet is read: its folders, the engine, Spark's settings, and the
    local engine's process count (None: by the fleet's size)."""

    desired_root: str
    snapshots_dir: str
    engine: str
    spark: SparkSettings | None = None
    processes: int | None = 1


def fleet_plans(run: FleetRun, policy: Policy) -> dict[str, Plan]:
    """fleet_plans plans every cluster of the fleet under ``policy`` with the run's engine.

    Within the current deadline (:mod:`kquota.deadline`, a command's ``--timeout``): when it
    runs out the engine's work is stopped and :class:`~kquota.deadline.DeadlineExceeded`
    raised."""
    from kquota.fleet.run import plan_fleet

    return plan_fleet(
        run.desired_root,
        run.snapshots_dir,
        policy,
        engine=run.engine,
        spark=run.spark,
        processes=run.processes,
    )


def fleet_impact(
    run: FleetRun, plans: dict[str, Plan], discovery: Discovery, policy: Policy
) -> dict[str, Plan]:
    """fleet_impact gives every cluster's plan its impact on ``discovery``'s principals (and
    the policy's protected ones), resolved against the cluster's snapshot. Done here, after
    either engine planned, so the local and Spark engines give identical plans with it too.
    Snapshots are read from the local file system."""
    from kquota.fleet.layout import discover
    from kquota.operations.plan import with_impact
    from kquota.snapshot.files import read_snapshot_any

    snapshots = {c.name: c.snapshot for c in discover(run.desired_root, run.snapshots_dir)}
    return {
        name: with_impact(plan, read_snapshot_any(Path(snapshots[name])), policy, discovery)
        for name, plan in plans.items()
    }


def write_fleet_plans(plans: dict[str, Plan], out: Path) -> dict[str, Any]:
    """write_fleet_plans writes ``OUT/<cluster>.plan.json`` and ``OUT/fleet-plan.json``;
    returns the summary."""
    from kquota.fleet.run import write_plans

    return write_plans(plans, out)


def write_fleet_drift(plans: dict[str, Plan], out: Path, *, prune: bool) -> dict[str, Any]:
    """write_fleet_drift reads the plans as drift reports and writes
    ``OUT/<cluster>.drift.json`` and ``OUT/fleet-drift.json`` (``.md``, ``.prom``); returns
    the summary."""
    from kquota.fleet.run import write_drift

    return write_drift(plans, out, prune=prune)


def fleet_resolve(
    run: FleetRun, principals: Sequence[tuple[str, str]], out: Path, *, source: str
) -> int:
    """fleet_resolve writes ``OUT/<cluster>.effective.jsonl`` for every cluster (against its
    snapshot, or its desired state); returns how many clusters."""
    from kquota.fleet.resolve import write_effective
    from kquota.fleet.run import resolve_fleet

    results = resolve_fleet(
        run.desired_root,
        run.snapshots_dir,
        principals,
        source=source,
        engine=run.engine,
        spark=run.spark,
    )
    deadline.check()  # nothing is written once the command's deadline has run out
    write_effective(results, principals, out)
    return len(results)
