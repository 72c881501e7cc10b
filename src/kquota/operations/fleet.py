"""The fleet operations: plan, drift and resolve every cluster of a fleet with one engine,
writing one file per cluster and a fleet summary (:mod:`kquota.fleet.run`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kquota.model import QuotaState
from kquota.plan.resolver import Principal
from kquota.plan.types import Plan
from kquota.policy import Policy, ProtectMatch
from kquota.principals.model import Discovery
from kquota.runtime import deadline
from kquota.usage.recommend import RecommendOptions
from kquota.usage.report import UsageReport

if TYPE_CHECKING:
    from kquota.fleet.spark import SparkSettings
    from kquota.usage.recommend import Recommended


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

    Within the current deadline (:mod:`kquota.runtime.deadline`, a command's ``--timeout``): when it
    runs out the engine's work is stopped and :class:`~kquota.runtime.deadline.DeadlineExceeded`
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


@dataclass(frozen=True)
class FleetUsageRun:
    """FleetUsageRun is how a fleet's usage is read: ``SAMPLES/<cluster>/`` folders of
    sample files, ``SNAPSHOTS/<cluster>.json`` (the effective quotas), the engine and
    Spark's settings."""

    samples_root: str
    snapshots_dir: str
    engine: str
    spark: SparkSettings | None = None


def fleet_usage(
    run: FleetUsageRun, *, since_ms: int, extra: Sequence[Decimal] = ()
) -> dict[str, tuple[UsageReport, QuotaState]]:
    """fleet_usage profiles every cluster's samples with the run's engine and joins each with
    its snapshot's effective quotas (read here, from the local file system, after either
    engine profiled: the reports are then the same on both)."""
    import posixpath

    from kquota.fleet.run import open_engine
    from kquota.fleet.usage import EXECUTOR_NEEDS
    from kquota.snapshot.files import read_snapshot_any
    from kquota.usage.report import usage_report

    with open_engine(run.engine, run.spark, needs=EXECUTOR_NEEDS) as job:
        clusters = job.discover_usage(run.samples_root, run.snapshots_dir)
        profiles = job.profile_fleet(clusters, since_ms=since_ms, extra=extra)
    deadline.check()
    out = {}
    for name in sorted(profiles):
        snapshot = posixpath.basename(next(c.snapshot for c in clusters if c.name == name))
        state = read_snapshot_any(Path(run.snapshots_dir) / snapshot)
        # The source as the user named it, so that both engines write the same words.
        source = posixpath.join(run.samples_root, name)
        out[name] = (usage_report(profiles[name], state, source), state)
    return out


def fleet_recommend(
    run: FleetUsageRun,
    *,
    since_ms: int,
    options: RecommendOptions,
    protect: Sequence[ProtectMatch] = (),
) -> dict[str, Recommended]:
    """fleet_recommend proposes quotas for every cluster from its usage (see
    :mod:`kquota.usage.recommend`); ``protect`` principals are never lowered. A fleet has no
    declared capacity: the proposals are not summed against one."""
    from kquota.operations.recommend import as_overlay
    from kquota.usage.recommend import recommend

    def protected(p: Principal) -> bool:
        return any(m.matches(p) for m in protect)

    reports = fleet_usage(run, since_ms=since_ms, extra=(options.percentile,))
    return {
        name: as_overlay(recommend(report, state, options, protected=protected))
        for name, (report, state) in reports.items()
    }


def write_fleet_usage(reports: dict[str, UsageReport], out: Path) -> dict[str, Any]:
    """write_fleet_usage writes ``OUT/<cluster>.usage.json`` (``.md``) and
    ``OUT/fleet-usage.json``; returns the summary."""
    from kquota.fleet.run import write_usage

    return write_usage(reports, out)


def write_fleet_recommendations(found: dict[str, Recommended], out: Path) -> dict[str, Any]:
    """write_fleet_recommendations writes ``OUT/<cluster>.recommend.yaml`` (the overlay),
    ``OUT/<cluster>.recommend.json`` and ``OUT/fleet-recommend.json``; returns the summary."""
    from kquota.fleet.run import write_recommendations

    return write_recommendations(found, out)
