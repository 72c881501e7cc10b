"""The local fleet engine: plan and resolve cluster by cluster, in this process or in a pool
of local worker processes (:func:`auto_processes` chooses by the fleet's size)."""

from __future__ import annotations

import functools
import multiprocessing
import os
import signal
from collections.abc import Sequence
from decimal import Decimal
from pathlib import Path

from kquota.errors import KquotaError
from kquota.fleet.engine import Effective
from kquota.fleet.layout import FleetCluster, discover
from kquota.fleet.workers import LocalWorkers
from kquota.plan.planner import plan as local_plan
from kquota.plan.types import Plan
from kquota.policy import Policy
from kquota.runtime import deadline
from kquota.snapshot.files import read_snapshot_any
from kquota.usage.profile import Profiles

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
    (:mod:`kquota.runtime.deadline`) stops the work where it is: planning in this process is
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
    # Not multiprocessing's Pool: its workers share a lock that a worker stopped at the
    # deadline can die holding, and its terminate() then hangs (kquota.fleet.workers).
    work = functools.partial(_plan_in_worker, policy=policy)
    with LocalWorkers(workers, work, start_method=_START, init=_worker_signals) as pool:
        pool.submit(clusters)
        plans = {}
        for i, c in enumerate(clusters):
            limit = deadline.current()
            with deadline.waiting_on(f"{_planning(c, i, len(clusters))} in {workers} processes"):
                try:
                    plans[c.name] = pool.result(i, limit.remaining() if limit else None)
                except TimeoutError:
                    deadline.check()
                    raise
        return plans


def _worker_signals() -> None:
    """_worker_signals: Ctrl-C is the parent's to handle (the terminal sends SIGINT to the
    whole process group; the parent then stops the workers), and SIGTERM ends a worker, not
    the handler it inherited (a program embedding kquota, the test suite's
    SIGTERM-as-interrupt)."""
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


class LocalFleetEngine:
    """LocalFleetEngine plans cluster by cluster in this process, or in ``processes`` local
    worker processes (None: chosen by the fleet's size, :func:`auto_processes`)."""

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
        workers = auto_processes(clusters) if self.processes is None else self.processes
        return plan_fleet_local(clusters, policy, processes=workers)

    def resolve_fleet(
        self, clusters: Sequence[FleetCluster], principals: Sequence[tuple[str, str]], source: str
    ) -> dict[str, list[Effective]]:
        """resolve_fleet resolves every principal against each cluster's snapshot, or its
        desired state (``source == "desired"``)."""
        from kquota.desired.loader import load_desired
        from kquota.fleet.resolve import resolve_local
        from kquota.runtime import deadline
        from kquota.snapshot.files import read_snapshot_any

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

    def discover_usage(self, samples_root: str, snapshots_dir: str) -> list[FleetCluster]:
        """discover_usage lists the fleet's sample folders on the local file system."""
        from kquota.fleet.usage import discover_usage

        return discover_usage(samples_root, snapshots_dir)

    def profile_fleet(
        self, clusters: Sequence[FleetCluster], *, since_ms: int, extra: Sequence[Decimal] = ()
    ) -> dict[str, Profiles]:
        """profile_fleet profiles cluster by cluster in this process (one cluster's samples
        in memory at a time)."""
        from kquota.fleet.usage import profile_fleet_local

        return profile_fleet_local(clusters, since_ms=since_ms, extra=extra)
