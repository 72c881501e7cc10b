"""``kquota drift``: does the cluster still match its desired state? For cron jobs and CI.

Exit codes: 0 in sync, 2 drift, 1 error (an unreachable cluster, bad YAML, bad options). With
``--all`` every cluster of ``kquota.yaml`` is checked; one failing cluster does not stop the
others, and the exit code is the worst of them (error over drift over in sync).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import click

from kquota.cli import console
from kquota.cli.examples import EXAMPLES
from kquota.cli.options import (
    TargetingArgs,
    echo_warnings,
    format_option,
    load_desired_quotas,
    targeting_options,
)
from kquota.cli.output import refuse_inputs, write_output
from kquota.cli.timeout_option import timeout_option
from kquota.drift.report import DriftReport
from kquota.errors import KquotaError, UsageError
from kquota.operations.desired import LoadedDesired
from kquota.operations.drift import check_drift, check_ready, publish_drift
from kquota.render.drift import render_reports
from kquota.target import Target, configured_cluster_names


def _prepare(paths: tuple[Path, ...], where: TargetingArgs) -> tuple[Target, LoadedDesired]:
    target = where.resolve()
    desired = load_desired_quotas(target.desired_paths(paths))
    check_ready(target)
    return target, desired


def _check(prepared: tuple[Target, LoadedDesired], prune: bool | None) -> DriftReport:
    result = check_drift(*prepared, prune=prune)
    echo_warnings(result.warnings)
    return result.report


@click.command("drift", epilog=EXAMPLES["drift"])
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@targeting_options
@click.option("--all", "all_clusters", is_flag=True, help="Every cluster of kquota.yaml.")
@click.option(
    "--prune/--no-prune",
    default=None,
    help="Count undeclared in-scope entities as drift (default: the cluster's policy).",
)
@format_option(
    ["text", "json", "markdown", "prometheus"],
    "Report format; prometheus writes a node-exporter textfile (with --out).",
)
@click.option("--out", type=click.Path(path_type=Path, dir_okay=False), help="Write here.")
@click.option("--publish-topic", help="Also publish each report as an event to this topic.")
@timeout_option("drift")
def command(
    paths: tuple[Path, ...],
    where: TargetingArgs,
    all_clusters: bool,
    prune: bool | None,
    fmt: str,
    out: Path | None,
    publish_topic: str | None,
) -> None:
    """Compare the cluster with the desired state; exit 0 in sync, 2 drift, 1 error."""
    runs: list[TargetingArgs]
    if all_clusters:
        if where.cluster_name or where.bootstrap_server or where.snapshot or paths:
            raise UsageError("--all checks every cluster of kquota.yaml: drop --cluster, "
                             "--bootstrap-server, --snapshot and PATHS")  # fmt: skip
        path, names = configured_cluster_names(where.config_path)
        runs = [where.named(name, path) for name in names]
    else:
        runs = [where]
    # A drift report replaces the previous one (a node-exporter textfile, every run), but
    # never a file this run reads.
    refuse_inputs(out, [*where.inputs(), *(("PATHS", p) for p in paths)])

    checked: list[tuple[TargetingArgs, DriftReport]] = []
    failed = 0

    def failure(opts: TargetingArgs, e: KquotaError) -> None:
        nonlocal failed
        if not all_clusters:
            raise e
        failed += 1
        echo_warnings(e.warnings)
        click.echo(f"error: cluster {opts.cluster_name}: {e}", err=True)

    # Every cluster's local files first: a typo is reported as such, never as a network error.
    prepared: list[tuple[TargetingArgs, tuple[Target, LoadedDesired]]] = []
    for opts in runs:
        try:
            prepared.append((opts, _prepare(() if all_clusters else paths, opts)))
        except KquotaError as e:
            failure(opts, e)
    for opts, ready in prepared:
        try:
            checked.append((opts, _check(ready, prune)))
        except KquotaError as e:
            failure(opts, e)

    reports = [r for _, r in checked]
    text = render_reports(reports, fmt, time.time())
    if out is not None:
        write_output(out, text)
    else:
        console.echo(text, console.drift_colors if fmt == "text" else None)
    if publish_topic:
        for opts, report in checked:
            publish_drift(publish_topic, report, opts.resolve())
    if failed:
        sys.exit(1)
    sys.exit(2 if any(r.drifted for r in reports) else 0)
