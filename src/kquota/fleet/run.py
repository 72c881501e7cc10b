"""Run a fleet: plan every cluster with the chosen engine and write the results.

Outputs are deterministic files (no timings, no engine name), so that the two engines can be
held to byte-identical results: ``OUT/<cluster>.plan.json`` in exactly the ``plan --format
json`` contract, ``OUT/<cluster>.drift.json`` for drift, and a fleet summary.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kquota.drift.render import render_json as render_drift_json
from kquota.drift.report import drift_report
from kquota.fleet.layout import FleetCluster
from kquota.fleet.rows import read_snapshot_any
from kquota.plan.planner import plan as local_plan
from kquota.plan.policy import Policy
from kquota.plan.types import Plan
from kquota.render.json import render_plan

if TYPE_CHECKING:
    from kquota.engines.spark import SparkSettings

FLEET_FORMAT_VERSION = 1


def plan_fleet_local(clusters: Sequence[FleetCluster], policy: Policy) -> dict[str, Plan]:
    """plan_fleet_local plans cluster after cluster in this process (the default engine)."""
    from kquota.desired.loader import load_desired

    return {
        c.name: local_plan(
            load_desired([c.desired_dir]).quotas,
            read_snapshot_any(c.snapshot),
            policy,
            cluster=c.name,
        )
        for c in clusters
    }


def plan_fleet(
    clusters: Sequence[FleetCluster],
    policy: Policy,
    *,
    engine: str,
    spark: SparkSettings | None = None,
) -> dict[str, Plan]:
    if engine == "local":
        return plan_fleet_local(clusters, policy)
    from kquota.engines.spark import SparkEngine

    with SparkEngine(spark) as job:
        return job.plan_fleet(clusters, policy)


def resolve_fleet(
    clusters: Sequence[FleetCluster],
    principals: Sequence[tuple[str, str]],
    *,
    source: str,
    engine: str,
    spark: SparkSettings | None = None,
) -> dict[str, list[dict[str, tuple[float, Any]]]]:
    """resolve_fleet resolves principals against each cluster's snapshot or desired state."""
    from kquota.fleet.resolve import resolve_local

    if engine == "local":
        from kquota.desired.loader import load_desired

        return {
            c.name: resolve_local(
                load_desired([c.desired_dir]).quotas
                if source == "desired"
                else read_snapshot_any(c.snapshot),
                principals,
            )
            for c in clusters
        }
    from kquota.engines.spark import SparkEngine

    with SparkEngine(spark) as job:
        return job.resolve_fleet(clusters, principals, source)


def _summary_row(name: str, plan: Plan) -> dict[str, Any]:
    return {"cluster": name, **plan.summary()}


def write_plans(plans: dict[str, Plan], out: Path) -> dict[str, Any]:
    """write_plans writes one plan file per cluster and ``fleet-plan.json``; returns it."""
    out.mkdir(parents=True, exist_ok=True)
    for name, plan in plans.items():
        (out / f"{name}.plan.json").write_text(render_plan(plan))
    summary = {
        "format_version": FLEET_FORMAT_VERSION,
        "clusters": [_summary_row(n, plans[n]) for n in sorted(plans)],
        "totals": {
            "clusters": len(plans),
            "clusters_with_changes": sum(1 for p in plans.values() if not p.empty),
            "alterations": sum(len(p.alterations) for p in plans.values()),
            "guard_violations": sum(1 for p in plans.values() if p.guard_violation),
        },
    }
    (out / "fleet-plan.json").write_text(json.dumps(summary, indent=2) + "\n")
    return summary


def write_drift(plans: dict[str, Plan], out: Path, *, prune: bool) -> dict[str, Any]:
    """write_drift writes one drift report per cluster and ``fleet-drift.json``; returns it."""
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    for name in sorted(plans):
        report = drift_report(plans[name], prune=prune)
        (out / f"{name}.drift.json").write_text(render_drift_json(report))
        rows.append(
            {
                "cluster": name,
                "in_sync": not report.drifted,
                "counts": report.counts(),
                "unmanaged_entities": report.unmanaged,
            }
        )
    summary = {
        "format_version": FLEET_FORMAT_VERSION,
        "clusters": rows,
        "totals": {
            "clusters": len(rows),
            "drifted": sum(1 for r in rows if not r["in_sync"]),
        },
    }
    (out / "fleet-drift.json").write_text(json.dumps(summary, indent=2) + "\n")
    return summary
