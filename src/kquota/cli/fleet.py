"""``kquota fleet``: plan, drift and resolve across many clusters, locally or on Spark."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from kquota.plan.policy import Policy

F = TypeVar("F", bound=Callable[..., Any])

if TYPE_CHECKING:
    from kquota.engines.spark import SparkSettings
    from kquota.plan.types import Plan

_engine = click.option(
    "--engine",
    type=click.Choice(["local", "spark"]),
    default="local",
    show_default=True,
    help="local: in this process; spark: a PySpark job (pip install 'kquota[spark]').",
)
_master = click.option(
    "--master", default="local[*]", show_default=True, help="Spark master URL (--engine spark)."
)
_driver_memory = click.option(
    "--driver-memory", default="4g", show_default=True, help="Spark driver memory (local mode)."
)
_desired = click.option(
    "--desired",
    "desired_root",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Desired-state root: one folder per cluster (ROOT/<cluster>/*.yaml).",
)
_snapshots = click.option(
    "--snapshots",
    "snapshots_dir",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="One snapshot per cluster: <cluster>.json, .jsonl or .parquet.",
)
_out = click.option("--out", required=True, type=click.Path(file_okay=False, path_type=Path))
_prune = click.option("--prune/--no-prune", default=False, show_default=True)
_allow = click.option("--allow-mass-removal", is_flag=True)


def _fleet_options(f: F) -> F:
    """_fleet_options: the inputs, output and engine flags every fleet command takes."""
    for option in reversed((_desired, _snapshots, _out, _engine, _master, _driver_memory)):
        f = option(f)
    return f


@click.group("fleet")
def command() -> None:
    """Plan, drift and resolve for a whole fleet of clusters in one job."""


def _spark(master: str, driver_memory: str) -> SparkSettings:
    from kquota.engines.spark import SparkSettings

    return SparkSettings(master=master, driver_memory=driver_memory)


def _plans(
    desired_root: Path, snapshots_dir: Path, engine: str, spark: SparkSettings, policy: Policy
) -> dict[str, Plan]:
    from kquota.fleet.layout import discover
    from kquota.fleet.run import plan_fleet

    clusters = discover(desired_root, snapshots_dir)
    began = time.monotonic()
    plans = plan_fleet(clusters, policy, engine=engine, spark=spark)
    click.echo(
        f"planned {len(clusters)} clusters with the {engine} engine in "
        f"{time.monotonic() - began:.1f}s",
        err=True,
    )
    return plans


@command.command("plan")
@_fleet_options
@_prune
@_allow
def plan_cmd(
    desired_root: Path,
    snapshots_dir: Path,
    out: Path,
    engine: str,
    master: str,
    driver_memory: str,
    prune: bool,
    allow_mass_removal: bool,
) -> None:
    """Write OUT/<cluster>.plan.json for every cluster, and OUT/fleet-plan.json."""
    from kquota.fleet.run import write_plans

    policy = Policy(prune=prune, allow_mass_removal=allow_mass_removal)
    plans = _plans(desired_root, snapshots_dir, engine, _spark(master, driver_memory), policy)
    summary = write_plans(plans, out)
    t = summary["totals"]
    click.echo(
        f"{t['clusters']} clusters, {t['clusters_with_changes']} with changes, "
        f"{t['alterations']} alterations, {t['guard_violations']} stopped by the removal guard; "
        f"plans in {out}"
    )
    if t["guard_violations"] and not allow_mass_removal:
        sys.exit(1)


@command.command("drift")
@_fleet_options
@_prune
def drift_cmd(
    desired_root: Path,
    snapshots_dir: Path,
    out: Path,
    engine: str,
    master: str,
    driver_memory: str,
    prune: bool,
) -> None:
    """Write OUT/<cluster>.drift.json and OUT/fleet-drift.json; exit 2 when any drifted."""
    from kquota.fleet.run import write_drift

    spark = _spark(master, driver_memory)
    plans = _plans(desired_root, snapshots_dir, engine, spark, Policy(prune=prune))
    summary = write_drift(plans, out, prune=prune)
    t = summary["totals"]
    click.echo(f"{t['drifted']} of {t['clusters']} clusters drifted; reports in {out}")
    sys.exit(2 if t["drifted"] else 0)


@command.command("resolve")
@_fleet_options
@click.option(
    "--principals",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="(user, client-id) pairs: CSV with a 'user,client-id' header, or JSON Lines.",
)
@click.option(
    "--source",
    type=click.Choice(["snapshot", "desired"]),
    default="snapshot",
    show_default=True,
    help="Resolve against what the clusters have, or what the YAML will give them.",
)
def resolve_cmd(
    desired_root: Path,
    snapshots_dir: Path,
    out: Path,
    principals: Path,
    source: str,
    engine: str,
    master: str,
    driver_memory: str,
) -> None:
    """Write OUT/<cluster>.effective.jsonl: each principal's effective quotas and sources."""
    from kquota.fleet.layout import discover
    from kquota.fleet.resolve import read_principals, write_effective
    from kquota.fleet.run import resolve_fleet

    pairs = read_principals(principals)
    clusters = discover(desired_root, snapshots_dir)
    began = time.monotonic()
    results = resolve_fleet(
        clusters, pairs, source=source, engine=engine, spark=_spark(master, driver_memory)
    )
    write_effective(results, pairs, out)
    click.echo(
        f"resolved {len(pairs)} principals on {len(clusters)} clusters with the {engine} engine "
        f"in {time.monotonic() - began:.1f}s; files in {out}"
    )
