"""Run a fleet: plan every cluster with the chosen engine and write the results.

Outputs are deterministic files (no timings, no engine name), so that the two engines can be
held to byte-identical results: ``OUT/<cluster>.plan.json`` in exactly the ``plan --format
json`` contract, ``OUT/<cluster>.drift.json`` for drift, and a fleet summary.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import multiprocessing
import os
import signal
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kquota import deadline
from kquota.drift.render import render_fleet_markdown, render_prometheus
from kquota.drift.render import render_json as render_drift_json
from kquota.drift.report import drift_report
from kquota.errors import KquotaError
from kquota.fleet.engine import FleetEngine, LocalFleetEngine
from kquota.fleet.layout import FleetCluster
from kquota.plan.planner import plan as local_plan
from kquota.plan.policy import Policy
from kquota.plan.types import Plan
from kquota.render.json import render_plan
from kquota.snapshot_rows import read_snapshot_any

if TYPE_CHECKING:
    from kquota.fleet.spark import SparkSettings

FLEET_FORMAT_VERSION = 1
# Fork is cheapest where it exists (the parent has imported the planner already).
_START = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
PARALLEL_MIN_BYTES = 1024 * 1024


def _plan_one(cluster: FleetCluster, policy: Policy) -> Plan:
    from kquota.desired.loader import load_desired

    return local_plan(
        load_desired([Path(cluster.desired_dir)]).quotas,
        read_snapshot_any(Path(cluster.snapshot)),
        policy,
        cluster=cluster.name,
    )


def _plan_in_worker(cluster: FleetCluster, policy: Policy) -> Plan:
    try:
        return _plan_one(cluster, policy)
    except KquotaError as e:
        # Subclasses take structured arguments and do not survive pickling; the text does.
        raise KquotaError(str(e)) from None


def plan_fleet_local(
    clusters: Sequence[FleetCluster], policy: Policy, *, processes: int = 1
) -> dict[str, Plan]:
    """plan_fleet_local plans cluster by cluster, in this process or in ``processes`` workers.

    Each worker plans whole clusters (one task per cluster), so results do not depend on how
    many there are; the plans come back in the clusters' order. The command's deadline
    (:mod:`kquota.deadline`) stops the work where it is: planning in this process is
    interrupted, worker processes are terminated.
    """
    if processes <= 1 or len(clusters) <= 1:
        plans: dict[str, Plan] = {}
        with deadline.interrupting():
            for i, c in enumerate(clusters):
                with deadline.waiting_on(_planning(c, i, len(clusters))):
                    deadline.check()
                    plans[c.name] = _plan_one(c, policy)
        return plans
    workers = min(processes, len(clusters))
    # multiprocessing's Pool, not concurrent.futures: leaving the block terminates the
    # workers (deadline, Ctrl-C, an error), where an executor would wait for their tasks.
    with multiprocessing.get_context(_START).Pool(workers, _worker_signals) as pool:
        results = pool.imap(functools.partial(_plan_in_worker, policy=policy), clusters, 1)
        plans = {}
        for i, c in enumerate(clusters):
            limit = deadline.current()
            with deadline.waiting_on(f"{_planning(c, i, len(clusters))} in {workers} processes"):
                try:
                    plans[c.name] = results.next(limit.remaining() if limit else None)
                except multiprocessing.TimeoutError:
                    deadline.check()
                    raise
        return plans


def _worker_signals() -> None:
    """_worker_signals gives a forked worker the default SIGTERM, so the pool's terminate()
    ends it. A worker inherits the program's Python handler (a program embedding kquota, the
    test suite's SIGTERM-as-interrupt); an exception it raises inside a finaliser is
    swallowed, the worker waits on the task queue again, and the pool's join hung (seen in
    CI). Ctrl-C is the parent's to handle: it terminates the workers."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _planning(cluster: FleetCluster, done: int, total: int) -> str:
    return f"the local engine to plan cluster {cluster.name} ({done} of {total} planned)"


def auto_processes(clusters: Sequence[FleetCluster]) -> int:
    """auto_processes: one worker per core for any fleet of 1 MiB of input or more.

    Measured (BENCHMARKS.md, "Local fleet engine: one process or two"): on 2 idle cores two
    processes took 0.55–0.8x the time from 2 MiB fleets up, with many small clusters as with
    few large ones; below that a fork is a noticeable share of the run.
    """
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    if not cores or cores < 2 or len(clusters) < 2:
        return 1
    total = 0
    for c in clusters:
        total += os.path.getsize(c.snapshot)
        for folder, _, files in os.walk(c.desired_dir):
            total += sum(os.path.getsize(os.path.join(folder, f)) for f in files)
        if total >= PARALLEL_MIN_BYTES:
            return min(cores, len(clusters))
    return 1


def open_engine(
    engine: str, spark: SparkSettings | None = None, processes: int | None = 1
) -> FleetEngine:
    """open_engine is the fleet engine named ``engine``: ``local`` or ``spark``."""
    if engine == "local":
        return LocalFleetEngine(processes)
    from kquota.fleet.spark import SparkEngine

    return SparkEngine(spark)


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
