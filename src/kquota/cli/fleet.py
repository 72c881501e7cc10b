"""``kquota fleet``: plan, drift, resolve and usage across many clusters, locally or on Spark."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from kquota.cli.examples import EXAMPLES
from kquota.cli.impact_options import ImpactArgs, ProtectArgs, impact_options, protect_options
from kquota.cli.option_group import option_group
from kquota.cli.recommend import sizing_options
from kquota.cli.timeout_option import timeout_option
from kquota.errors import UsageError
from kquota.policy import Policy

F = TypeVar("F", bound=Callable[..., Any])

if TYPE_CHECKING:
    from kquota.fleet.spark import SparkSettings
    from kquota.operations.fleet import FleetRun, FleetUsageRun
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
_conf = click.option(
    "--conf",
    "conf",
    multiple=True,
    metavar="KEY=VALUE",
    help="Spark setting for --engine spark (repeatable), e.g. spark.executor.memory=4g.",
)
_ship = click.option(
    "--ship/--no-ship",
    default=None,
    help="Ship kquota and its libraries to the executors (spark.archives); "
    "default: whenever --master is not local.",
)
_processes = click.option(
    "--processes",
    default="auto",
    show_default=True,
    metavar="N|auto",
    # Checked while the command line is read: a bad count is refused before any file is.
    callback=lambda _ctx, _param, value: _checked_processes(value),
    help="Local engine: worker processes (1 to 1024), one cluster at a time each; auto uses "
    "every core when the fleet is big enough to gain from it.",
)
# Plain strings, not paths: with --engine spark they may be hdfs:// or s3a:// locations.
_desired = click.option(
    "--desired",
    "desired_root",
    required=True,
    help="Desired-state root: one folder per cluster (ROOT/<cluster>/*.yaml); "
    "with --engine spark any Hadoop location (file://, hdfs://, s3a://).",
)
_snapshots = click.option(
    "--snapshots",
    "snapshots_dir",
    required=True,
    help="One snapshot per cluster: <cluster>.json, .jsonl or .parquet (a folder; "
    "with --engine spark any Hadoop location).",
)
_out = click.option(
    "--out",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Directory the result files are written to.",
)
_prune = click.option(
    "--prune/--no-prune",
    default=False,
    show_default=True,
    help="Remove (or count as drift) in-scope entities no file declares.",
)
_allow = click.option("--allow-mass-removal", is_flag=True, help="Override the mass-removal guard.")


@dataclass(frozen=True)
class FleetFlags:
    """FleetFlags is the inputs, output and engine flags every fleet command takes."""

    desired_root: str
    snapshots_dir: str
    out: Path
    engine: str
    master: str
    driver_memory: str
    conf: tuple[str, ...]
    ship: bool | None

    def run(self, processes: int | None = 1) -> FleetRun:
        """run is how the operations read the fleet (Spark settings checked here)."""
        from kquota.operations.fleet import FleetRun

        self._refuse_out_onto_inputs()

        return FleetRun(
            self.desired_root, self.snapshots_dir, self.engine, self._spark(), processes
        )

    def _refuse_out_onto_inputs(self) -> None:
        """--out must not be an input folder: result files in --snapshots would be read as
        snapshots of clusters named ``<cluster>.plan`` by the next run."""
        _refuse_out_onto(
            self.out, (("--snapshots", self.snapshots_dir), ("--desired", self.desired_root))
        )

    def _spark(self) -> SparkSettings:
        return _spark_settings(self.master, self.driver_memory, self.conf, self.ship)


def _refuse_out_onto(out: Path, inputs: tuple[tuple[str, str], ...]) -> None:
    for label, given in inputs:
        if "://" in given:
            continue  # a Hadoop location: not this machine's folder
        try:
            same = out.exists() and out.samefile(given)
        except OSError:
            same = False
        if same:
            raise UsageError(
                f"--out {out} is the {label} folder; an output never goes into an "
                "input: choose another --out"
            )


def _spark_settings(
    master: str, driver_memory: str, conf: tuple[str, ...], ship: bool | None
) -> SparkSettings:
    from kquota.fleet.spark import SparkSettings

    pairs = []
    for item in conf:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise click.BadParameter(f"{item!r}: expected KEY=VALUE", param_hint="--conf")
        pairs.append((key.strip(), value))
    return SparkSettings(master=master, driver_memory=driver_memory, conf=tuple(pairs), ship=ship)


_samples = click.option(
    "--samples",
    "samples_root",
    required=True,
    help="Sample root: one folder per cluster (SAMPLES/<cluster>/ of .jsonl, .parquet or .prom "
    "files, docs/usage.md); with --engine spark any Hadoop location (file://, hdfs://, s3a://).",
)
_usage_snapshots = click.option(
    "--snapshots",
    "snapshots_dir",
    required=True,
    help="One snapshot per cluster, its effective quotas: <cluster>.json, .jsonl or .parquet "
    "(a local folder).",
)


@dataclass(frozen=True)
class FleetUsageFlags:
    """FleetUsageFlags is the inputs, output and engine flags of fleet usage and recommend."""

    samples_root: str
    snapshots_dir: str
    out: Path
    engine: str
    master: str
    driver_memory: str
    conf: tuple[str, ...]
    ship: bool | None
    since: str

    def run(self) -> FleetUsageRun:
        """run is how the operations read the fleet's samples (Spark settings checked here)."""
        from kquota.operations.fleet import FleetUsageRun

        _refuse_out_onto(
            self.out, (("--snapshots", self.snapshots_dir), ("--samples", self.samples_root))
        )
        spark = _spark_settings(self.master, self.driver_memory, self.conf, self.ship)
        return FleetUsageRun(self.samples_root, self.snapshots_dir, self.engine, spark)

    def since_ms(self) -> int:
        from kquota.usage.window import parse_since

        return parse_since(self.since)


def _fleet_usage_options(f: F) -> F:
    """_fleet_usage_options adds the flags of :class:`FleetUsageFlags` and ``--timeout``."""
    from kquota.cli.usage import since_option

    options = (
        _samples,
        _usage_snapshots,
        _out,
        since_option,
        _engine,
        _master,
        _driver_memory,
        _conf,
        _ship,
    )
    return option_group("fleet", FleetUsageFlags, (*options, timeout_option("fleet")))(f)


def _fleet_options(f: F) -> F:
    """_fleet_options adds the flags of :class:`FleetFlags` and ``--timeout``; the command
    receives them as one ``fleet: FleetFlags`` parameter and runs under the deadline."""
    options = (_desired, _snapshots, _out, _engine, _master, _driver_memory, _conf, _ship)
    return option_group("fleet", FleetFlags, (*options, timeout_option("fleet")))(f)


@click.group("fleet", epilog=EXAMPLES["fleet"])
def command() -> None:
    """Plan, drift, resolve and read usage for a whole fleet of clusters in one job.

    \b
    --timeout (default 1h) bounds the whole command: when it runs out, the local engine's
    work stops (worker processes are terminated), a Spark job is cancelled and its session
    stopped, and nothing is written.
    """


MAX_PROCESSES = 1024
"""More worker processes than this is a typo, not a machine."""


def _processes_of(value: str) -> int | None:
    if value == "auto":
        return None
    if not value.isascii() or not value.isdigit() or not 1 <= int(value) <= MAX_PROCESSES:
        shown = repr(value if len(value) <= 40 else value[:40] + "…")
        raise click.BadParameter(
            f"{shown}: expected a number from 1 to {MAX_PROCESSES}, or auto",
            param_hint="--processes",
        )
    return int(value)


def _checked_processes(value: str) -> str:
    _processes_of(value)
    return value


def _plans(fleet: FleetFlags, policy: Policy, processes: str) -> dict[str, Plan]:
    from kquota.operations.fleet import fleet_plans
    from kquota.runtime.deadline import check

    began = time.monotonic()
    plans = fleet_plans(fleet.run(_processes_of(processes)), policy)
    check()  # nothing is written once the deadline has run out
    click.echo(
        f"planned {len(plans)} clusters with the {fleet.engine} engine in "
        f"{time.monotonic() - began:.1f}s",
        err=True,
    )
    return plans


@command.command("plan", epilog=EXAMPLES["fleet plan"])
@_fleet_options
@_processes
@_prune
@_allow
@impact_options
@protect_options
def plan_cmd(
    fleet: FleetFlags,
    processes: str,
    prune: bool,
    allow_mass_removal: bool,
    wanted: ImpactArgs,
    guard: ProtectArgs,
) -> None:
    """Write OUT/<cluster>.plan.json for every cluster, and OUT/fleet-plan.json.

    With --impact or --principals FILE, each plan carries its impact on the listed principals
    (and protected ones), resolved against the cluster's snapshot: the live discovery sources
    report they could not look (a fleet plans from snapshots)."""
    from kquota.operations.fleet import fleet_impact, write_fleet_plans
    from kquota.operations.plan import offline_discovery

    protect = guard.matches()
    listed = wanted.listed()  # local files before Spark starts
    policy = Policy(
        prune=prune,
        allow_mass_removal=allow_mass_removal,
        protect=protect,
        allow_protected_change=guard.allow_protected_change,
    )
    plans = _plans(fleet, policy, processes)
    if wanted.asked or protect:
        found = offline_discovery(live=wanted.live, listed=listed)
        plans = fleet_impact(fleet.run(), plans, found, policy)
    summary = write_fleet_plans(plans, fleet.out)
    stopped = sorted(name for name, p in plans.items() if p.impact is not None and p.impact.stops)
    if stopped:
        click.echo(
            f"protected principals: the plans of {', '.join(stopped)} lower or newly impose "
            "their quotas (see protected_violations); pass --allow-protected-change after review",
            err=True,
        )
    t = summary["totals"]
    click.echo(
        f"{t['clusters']} clusters, {t['clusters_with_changes']} with changes, "
        f"{t['alterations']} alterations, {t['guard_violations']} stopped by the removal guard; "
        f"plans in {fleet.out}"
    )
    if (t["guard_violations"] and not allow_mass_removal) or stopped:
        sys.exit(1)


@command.command("drift", epilog=EXAMPLES["fleet drift"])
@_fleet_options
@_processes
@_prune
def drift_cmd(fleet: FleetFlags, processes: str, prune: bool) -> None:
    """Write OUT/<cluster>.drift.json, OUT/fleet-drift.json, .md and .prom; exit 2 on drift."""
    from kquota.operations.fleet import write_fleet_drift

    plans = _plans(fleet, Policy(prune=prune), processes)
    summary = write_fleet_drift(plans, fleet.out, prune=prune)
    t = summary["totals"]
    click.echo(f"{t['drifted']} of {t['clusters']} clusters drifted; reports in {fleet.out}")
    sys.exit(2 if t["drifted"] else 0)


@command.command("resolve", epilog=EXAMPLES["fleet resolve"])
@_fleet_options
@click.option(
    "--principals",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="Principals to resolve, one a line: user=NAME,client-id=ID (as for plan --principals).",
)
@click.option(
    "--source",
    type=click.Choice(["snapshot", "desired"]),
    default="snapshot",
    show_default=True,
    help="Resolve against what the clusters have, or what the YAML will give them.",
)
def resolve_cmd(fleet: FleetFlags, principals: Path, source: str) -> None:
    """Write OUT/<cluster>.effective.jsonl: each principal's effective quotas and sources."""
    from kquota.operations.fleet import fleet_resolve
    from kquota.principals.listed import read_user_clients

    pairs = read_user_clients(principals)
    began = time.monotonic()
    clusters = fleet_resolve(fleet.run(), pairs, fleet.out, source=source)
    click.echo(
        f"resolved {len(pairs)} principals on {clusters} clusters with the {fleet.engine} engine "
        f"in {time.monotonic() - began:.1f}s; files in {fleet.out}"
    )


@command.command("usage", epilog=EXAMPLES["fleet usage"])
@_fleet_usage_options
def usage_cmd(fleet: FleetUsageFlags) -> None:
    """Write OUT/<cluster>.usage.json and .usage.md for every cluster, and OUT/fleet-usage.json.

    Each cluster's samples (SAMPLES/<cluster>/) profiled over the window, joined with the
    effective quotas of its snapshot: the files kquota usage --format json and --format
    markdown print, identical on both engines."""
    from kquota.operations.fleet import fleet_usage, write_fleet_usage
    from kquota.runtime.deadline import check

    window = fleet.since_ms()
    run = fleet.run()
    began = time.monotonic()
    reports = fleet_usage(run, since_ms=window)
    check()  # nothing is written once the deadline has run out
    click.echo(
        f"profiled {len(reports)} clusters with the {fleet.engine} engine in "
        f"{time.monotonic() - began:.1f}s",
        err=True,
    )
    summary = write_fleet_usage({name: r for name, (r, _) in reports.items()}, fleet.out)
    t = summary["totals"]
    click.echo(
        f"{t['clusters']} clusters, {t['samples']} samples in the window, {t['series']} series, "
        f"{t['censored']} throttled (censored), {t['unmatched_quotas']} quotas that matched no "
        f"traffic; reports in {fleet.out}"
    )


@command.command("recommend", epilog=EXAMPLES["fleet recommend"])
@_fleet_usage_options
@sizing_options
def recommend_cmd(
    fleet: FleetUsageFlags,
    percentile: str,
    headroom: float,
    min_window: str,
    keys: str,
    protect: tuple[str, ...],
) -> None:
    """Write OUT/<cluster>.recommend.yaml (an overlay) and .recommend.json for every cluster.

    The proposals of kquota recommend for each cluster; review one with kquota plan
    QUOTAS/ OUT/<cluster>.recommend.yaml. A fleet declares no capacity: proposals are not
    summed against one, and only --protect principals are protected."""
    from kquota.cli.impact_options import parse_protect
    from kquota.cli.recommend import sizing
    from kquota.errors import KquotaError
    from kquota.operations.fleet import fleet_recommend, write_fleet_recommendations
    from kquota.runtime.deadline import check

    options = sizing(percentile, headroom, min_window, keys)
    matches = tuple(parse_protect(p) for p in protect)
    window = fleet.since_ms()
    run = fleet.run()
    began = time.monotonic()
    found = fleet_recommend(run, since_ms=window, options=options, protect=matches)
    check()  # nothing is written once the deadline has run out
    click.echo(
        f"profiled {len(found)} clusters with the {fleet.engine} engine in "
        f"{time.monotonic() - began:.1f}s",
        err=True,
    )
    summary = write_fleet_recommendations(found, fleet.out)
    t = summary["totals"]
    click.echo(f"{t['clusters']} clusters, {t['proposals']} proposals; overlays in {fleet.out}")
    if t["left_out"]:
        for row in summary["clusters"]:
            for line in row["left_out"]:
                click.echo(f"warning: cluster {row['cluster']}: not in the patch: {line}", err=True)
        raise KquotaError(
            f"{t['left_out']} proposal(s) left out of the patches: desired state cannot "
            "declare them (see the warnings above)"
        )


def _add_apply() -> None:
    from kquota.cli.fleet_apply import apply_cmd

    command.add_command(apply_cmd)


_add_apply()
