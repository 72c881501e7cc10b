"""Run a fleet: plan every cluster with the chosen engine and write the results.

Outputs are deterministic files (no timings, no engine name), so that the two engines can be
held to byte-identical results: ``OUT/<cluster>.plan.json`` in exactly the ``plan --format
json`` contract, ``OUT/<cluster>.drift.json`` for drift, and a fleet summary.
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kquota.drift.report import drift_report
from kquota.fleet.engine import FleetEngine
from kquota.fleet.local import LocalFleetEngine
from kquota.plan.types import Plan
from kquota.policy import Policy
from kquota.render.drift import render_fleet_markdown, render_prometheus
from kquota.render.drift import render_json as render_drift_json
from kquota.render.json import render_plan

if TYPE_CHECKING:
    from kquota.fleet.spark import SparkSettings
    from kquota.usage.recommend import Recommended
    from kquota.usage.report import UsageReport

FLEET_FORMAT_VERSION = 1


def open_engine(
    engine: str,
    spark: SparkSettings | None = None,
    processes: int | None = 1,
    needs: tuple[str, ...] = (),
) -> FleetEngine:
    """open_engine is the fleet engine named ``engine``: ``local`` or ``spark`` (whose
    executors get the ``needs`` packages too)."""
    if engine == "local":
        return LocalFleetEngine(processes)
    from kquota.fleet.spark import SparkEngine

    return SparkEngine(spark, needs)


def plan_fleet(
    desired_root: str | os.PathLike[str],
    snapshots_dir: str | os.PathLike[str],
    policy: Policy,
    *,
    engine: str,
    spark: SparkSettings | None = None,
    processes: int | None = 1,
) -> dict[str, Plan]:
    """plan_fleet discovers and plans a fleet; ``processes=None`` picks by fleet size."""
    with open_engine(engine, spark, processes) as job:
        return job.plan_fleet(
            job.discover(os.fspath(desired_root), os.fspath(snapshots_dir)), policy
        )


def resolve_fleet(
    desired_root: str | os.PathLike[str],
    snapshots_dir: str | os.PathLike[str],
    principals: Sequence[tuple[str, str]],
    *,
    source: str,
    engine: str,
    spark: SparkSettings | None = None,
) -> dict[str, list[dict[str, tuple[float, Any]]]]:
    """resolve_fleet resolves principals against each cluster's snapshot or desired state."""
    with open_engine(engine, spark) as job:
        clusters = job.discover(os.fspath(desired_root), os.fspath(snapshots_dir))
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


def write_drift(
    plans: dict[str, Plan], out: Path, *, prune: bool, timestamp: float | None = None
) -> dict[str, Any]:
    """write_drift writes one drift report per cluster, ``fleet-drift.json``, the same as a
    pull-request comment (``fleet-drift.md``) and as a Prometheus textfile
    (``fleet-drift.prom``, checked at ``timestamp``, now by default); returns the summary."""
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    reports = []
    for name in sorted(plans):
        report = drift_report(plans[name], prune=prune)
        reports.append(report if report.cluster else dataclasses.replace(report, cluster=name))
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
    full = "the JSON reports beside this file (`CLUSTER.drift.json`)"
    (out / "fleet-drift.md").write_text(
        render_fleet_markdown(reports, full_report_at=full), encoding="utf-8"
    )
    when = time.time() if timestamp is None else timestamp
    (out / "fleet-drift.prom").write_text(render_prometheus(reports, when))
    return summary


def write_usage(reports: dict[str, UsageReport], out: Path) -> dict[str, Any]:
    """write_usage writes each cluster's report as ``usage --format json`` and ``--format
    markdown`` print it (``<cluster>.usage.json``, ``.usage.md``) and ``fleet-usage.json``;
    returns the summary."""
    import orjson

    from kquota.render.usage import render_usage_markdown

    out.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, Any]] = []
    for name in sorted(reports):
        report = reports[name]
        data = report.to_data()
        (out / f"{name}.usage.json").write_text(
            orjson.dumps(data, option=orjson.OPT_INDENT_2).decode() + "\n"
        )
        (out / f"{name}.usage.md").write_text(render_usage_markdown(report), encoding="utf-8")
        rows.append(
            {
                "cluster": name,
                "samples": data["samples"],
                "series": data["series"],
                "principals": data["principals"],
                "censored": sum(1 for u in report.uses if u.censored),
                "unmatched_quotas": len(report.unmatched),
                "warnings": len(report.warnings),
            }
        )
    summary = {
        "format_version": FLEET_FORMAT_VERSION,
        "clusters": rows,
        "totals": {
            "clusters": len(rows),
            "samples": sum(r["samples"] for r in rows),
            "series": sum(r["series"] for r in rows),
            "censored": sum(r["censored"] for r in rows),
            "unmatched_quotas": sum(r["unmatched_quotas"] for r in rows),
        },
    }
    (out / "fleet-usage.json").write_text(json.dumps(summary, indent=2) + "\n")
    return summary


def write_recommendations(found: dict[str, Recommended], out: Path) -> dict[str, Any]:
    """write_recommendations writes each cluster's overlay (``<cluster>.recommend.yaml``, for
    ``kquota plan QUOTAS/ OVERLAY``), its proposals as ``recommend --format json`` prints
    them (``<cluster>.recommend.json``) and ``fleet-recommend.json``; returns the summary."""
    import orjson

    out.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, Any]] = []
    for name in sorted(found):
        rec = found[name].recommendation
        (out / f"{name}.recommend.yaml").write_text(found[name].text, encoding="utf-8")
        (out / f"{name}.recommend.json").write_text(
            orjson.dumps(rec.to_data(), option=orjson.OPT_INDENT_2).decode() + "\n"
        )
        rows.append(
            {
                "cluster": name,
                "proposals": len(rec.proposals),
                "skipped": len(rec.skipped),
                "entities_patched": len(rec.patch),
                "left_out": list(found[name].left_out),
            }
        )
    summary = {
        "format_version": FLEET_FORMAT_VERSION,
        "clusters": rows,
        "totals": {
            "clusters": len(rows),
            "proposals": sum(r["proposals"] for r in rows),
            "left_out": sum(len(r["left_out"]) for r in rows),
        },
    }
    (out / "fleet-recommend.json").write_text(json.dumps(summary, indent=2) + "\n")
    return summary
