"""``kquota drift``: does the cluster still match its desired state? For cron jobs and CI.

Exit codes: 0 in sync, 2 drift, 1 error (an unreachable cluster, bad YAML, bad options). With
``--all`` every cluster of ``kquota.yaml`` is checked; one failing cluster does not stop the
others, and the exit code is the worst of them (error over drift over in sync).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import click

from kquota.cli.options import TargetingArgs, load_desired_quotas, targeting_options
from kquota.drift.render import render_json, render_markdown, render_prometheus, render_text
from kquota.drift.report import DriftReport, drift_report
from kquota.engines.local import LocalEngine
from kquota.errors import KquotaError, UsageError


def _check(paths: tuple[Path, ...], where: TargetingArgs, prune: bool | None) -> DriftReport:
    target = where.resolve()
    desired = load_desired_quotas(target.desired_paths(paths))
    state = target.load_state()
    policy = target.policy(prune=prune, allow_mass_removal=True)
    plan = LocalEngine().plan(desired.quotas, state, policy, target.label)
    checked_at = dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat()
    return drift_report(plan, prune=policy.prune, checked_at=checked_at)


def _write(path: Path, text: str) -> None:
    # Atomic: node_exporter's textfile collector must never read a half-written file.
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def _render(reports: list[DriftReport], fmt: str) -> str:
    if fmt == "prometheus":
        return render_prometheus(reports, time.time())
    if fmt == "json":
        if len(reports) == 1:
            return render_json(reports[0])
        data = {"format_version": 1, "clusters": [r.to_data() for r in reports]}
        return json.dumps(data, indent=2) + "\n"
    render = render_markdown if fmt == "markdown" else render_text
    return "".join(render(r) for r in reports)


@click.command("drift")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@targeting_options
@click.option("--all", "all_clusters", is_flag=True, help="Every cluster of kquota.yaml.")
@click.option(
    "--prune/--no-prune",
    default=None,
    help="Count undeclared in-scope entities as drift (default: the cluster's policy).",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "markdown", "prometheus"]),
    default="text",
)
@click.option("--out", type=click.Path(path_type=Path, dir_okay=False), help="Write here.")
@click.option("--publish-topic", help="Also publish each report as an event to this topic.")
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
        from kquota.config import find_config, load_config

        path = where.config_path or find_config()
        if path is None:
            raise UsageError("--all needs a kquota.yaml (or --config PATH)")
        names = sorted(load_config(path).clusters)
        runs = [replace(where, cluster_name=name, config_path=path) for name in names]
    else:
        runs = [where]

    checked: list[tuple[TargetingArgs, DriftReport]] = []
    failed = 0
    for opts in runs:
        try:
            checked.append((opts, _check(() if all_clusters else paths, opts, prune)))
        except KquotaError as e:
            if not all_clusters:
                raise
            failed += 1
            click.echo(f"error: cluster {opts.cluster_name}: {e}", err=True)

    reports = [r for _, r in checked]
    text = _render(reports, fmt)
    if out is not None:
        _write(out, text)
    else:
        click.echo(text, nl=False)
    if publish_topic:
        for opts, report in checked:
            _publish(publish_topic, report, opts)
    if failed:
        sys.exit(1)
    sys.exit(2 if any(r.drifted for r in reports) else 0)


def _publish(topic: str, report: DriftReport, where: TargetingArgs) -> None:
    """_publish sends a cluster's report to ``topic`` on that same cluster."""
    from kquota.audit import AuditPublisher, DriftEvent, actor, git_commit

    props = where.resolve().live_target().properties
    event = DriftEvent(
        cluster=report.cluster or "",
        report=report.to_data(),
        git_commit=git_commit(),
        actor=actor(),
    )
    with AuditPublisher(topic, props) as publisher:
        publisher.publish([event])
