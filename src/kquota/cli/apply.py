"""``kquota apply``: commit a plan, safely.

``kquota apply PLAN.json`` applies a saved plan to the cluster it names (connection options on
the command line override; secrets are never in the file), refusing a plan made for another
cluster or planned against entities that changed since. ``kquota apply [PATHS…]`` plans
against the live cluster first, exactly as ``kquota plan`` would, then applies.

Either way: the plan is shown; on a terminal the operator confirms it (``--auto-approve``
skips that, and is required without a terminal); every alteration passes a validate-only
AlterClientQuotas first or nothing is committed; then commit, verify, and (with an audit
topic) publish one confirmed audit event per committed entity before reporting success.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import click

from kquota.apply.applier import DEFAULT_BATCH_SIZE, ApplyReport, apply_plan
from kquota.cli.options import Targeting, TargetingArgs, plan_against, targeting_options
from kquota.errors import KquotaError, UsageError
from kquota.plan.types import Plan
from kquota.render.format import display_entity

PROGRESS_FROM = 5_000
"""Plans with at least this many alterations get a progress bar (on a terminal)."""


def _is_saved_plan(args: tuple[Path, ...]) -> bool:
    return len(args) == 1 and args[0].suffix == ".json" and args[0].is_file()


def _load_saved(path: Path) -> Plan:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise KquotaError(f"{path}: cannot read the saved plan: {e}") from None
    return Plan.from_data(data)


def plan_id(plan: Plan) -> str:
    """plan_id names a plan in audit events: a digest of its JSON contract."""
    from kquota.render.json import render_plan

    return hashlib.sha256(render_plan(plan).encode()).hexdigest()[:16]


def _confirm(auto_approve: bool, plan: Plan) -> None:
    if auto_approve:
        return
    if not sys.stdin.isatty():
        raise UsageError(
            "not applying without confirmation: there is no terminal to ask on; "
            "review the plan and pass --auto-approve"
        )
    n = len(plan.alterations)
    if not click.confirm(f"Apply these changes to {n} entities?", default=False, err=True):
        raise click.Abort()


def _progress(total: int) -> tuple[Any, Any]:
    """_progress is a progress bar on stderr for large plans on a terminal, else nothing."""
    if total < PROGRESS_FROM or not sys.stderr.isatty():
        return None, None
    from rich.progress import Progress

    bar = Progress(transient=True)  # per committed batch
    task = bar.add_task("committing", total=total)
    bar.start()
    return bar, lambda n: bar.update(task, advance=n)


def _report_lines(report: ApplyReport, total: int) -> list[str]:
    out: list[str] = []
    if report.validation_failures:
        out.append(
            f"validate-only pass failed for {len(report.validation_failures)} of {total} "
            "entities; nothing was committed:"
        )
        out += [f"  {display_entity(f.entity)}: {f.error_name}: {f.message}" for f in
                report.validation_failures]  # fmt: skip
        return out
    done = len(report.committed)
    line = f"committed {done} of {total} entities"
    if report.already_applied:
        line += f" ({len(report.already_applied)} already applied by an earlier run)"
    out.append(line)
    for f in report.failed:
        out.append(f"  failed {display_entity(f.entity)}: {f.error_name}: {f.message}")
    if report.interrupted:
        out.append(f"the connection broke: {report.interrupted}")
        if report.uncertain:
            out.append(f"  {len(report.uncertain)} entities may or may not have been committed")
        if report.not_attempted:
            out.append(f"  {len(report.not_attempted)} entities were not attempted")
        out.append("  every op is an idempotent set or remove: run apply again to converge")
    if report.unconverged:
        out.append(
            f"verification: {len(report.unconverged)} committed entities do not show their "
            "changes yet (brokers trail the controller briefly):"
        )
        out += [f"  {display_entity(e)}" for e in report.unconverged[:20]]
    elif done:
        out.append("verified: the cluster shows every committed change")
    return out


def _resolve_targeting(
    saved: Plan | None, where: TargetingArgs, timeout: float | None
) -> tuple[Targeting, dict[str, str]]:
    if where.snapshot is not None:
        raise UsageError("apply writes to a live cluster: --snapshot is for plan and drift")
    if saved is not None and where.bootstrap_server is None and where.cluster_name is None:
        # The plan names its cluster: a kquota.yaml cluster name, else bootstrap servers.
        from kquota.config import find_config, load_config

        if saved.cluster is None:
            raise UsageError(
                "the saved plan names no cluster: give --bootstrap-server or --cluster"
            )
        config_path = where.config_path or find_config()
        named = config_path is not None and saved.cluster in load_config(config_path).clusters
        where = (
            dataclasses.replace(where, cluster_name=saved.cluster)
            if named
            else dataclasses.replace(where, bootstrap_server=saved.cluster)
        )
    target = where.resolve()
    props = target.live_target().properties
    if timeout is not None:
        props = {**props, "request.timeout.ms": str(int(timeout * 1000))}
    return target, props


@click.command("apply")
@click.argument("plan_or_paths", nargs=-1, type=click.Path(path_type=Path))
@targeting_options
@click.option("--prune/--no-prune", default=None, help="When planning here: as for plan.")
@click.option("--allow-mass-removal", is_flag=True, help="When planning here: as for plan.")
@click.option("--auto-approve", is_flag=True, help="Apply without asking (CI, no terminal).")
@click.option("--audit-topic", help="Publish an audit event per committed entity to this topic.")
@click.option("--batch-size", type=click.IntRange(1, 100_000), default=DEFAULT_BATCH_SIZE)
@click.option("--timeout", type=float, help="Per-request timeout in seconds.")
@click.option("--verify-timeout", type=float, default=15.0, show_default=True)
def command(
    plan_or_paths: tuple[Path, ...],
    where: TargetingArgs,
    prune: bool | None,
    allow_mass_removal: bool,
    auto_approve: bool,
    audit_topic: str | None,
    batch_size: int,
    timeout: float | None,
    verify_timeout: float,
) -> None:
    """Apply a saved PLAN.json, or plan PATHS against the live cluster and apply."""
    from kquota.apply.staleness import check_not_stale
    from kquota.cluster import ClusterTarget
    from kquota.kafka.errors import BrokerConnectionError, KafkaTimeoutError
    from kquota.render.text import render_plan as render_text

    saved = _load_saved(plan_or_paths[0]) if _is_saved_plan(plan_or_paths) else None
    target, props = _resolve_targeting(saved, where, timeout)
    topic = audit_topic or (target.cluster.audit_topic if target.cluster else None)
    publisher = None
    if topic:
        from kquota.audit import AuditPublisher

        publisher = AuditPublisher(topic, props)  # a bad config fails here, before any write

    cluster = ClusterTarget.from_options(None, None, props)
    with cluster.admin() as admin:
        cluster_id = admin.cluster_id()
        current = admin.describe_all()
        if saved is not None:
            plan = saved
            already = check_not_stale(plan, current, cluster_id)
        else:
            plan = plan_against(
                target,
                plan_or_paths,
                current,
                cluster_id,
                prune=prune,
                allow_mass_removal=allow_mass_removal,
            )
            already = frozenset()
        click.echo(render_text(plan), nl=False)
        if plan.empty:
            click.echo("nothing to apply")
            return
        if not plan.applyable:
            raise KquotaError(
                f"mass-removal guard: {plan.guard_violation}; nothing was applied "
                "(plan with --allow-mass-removal if this is intended)"
            )
        _confirm(auto_approve, plan)
        bar, progress = _progress(len(plan.alterations))
        try:
            report = apply_plan(
                admin,
                plan,
                batch_size=batch_size,
                progress=progress,
                verify_timeout=verify_timeout,
                connection_errors=(BrokerConnectionError, KafkaTimeoutError),
                already_applied=already,
            )
        finally:
            if bar is not None:
                bar.stop()
    for line in _report_lines(report, len(plan.alterations)):
        click.echo(line)
    if publisher is not None and report.committed:
        from kquota.audit import AuditEvent, actor, git_commit

        pid, commit, who = plan_id(plan), git_commit(), actor()
        with publisher:
            publisher.publish(
                AuditEvent.from_alteration(
                    a, plan_id=pid, cluster=plan.cluster, git_commit=commit, actor=who
                )
                for a in report.committed
            )
        click.echo(f"audit: {len(report.committed)} events confirmed on topic {topic}")
    if not report.ok:
        sys.exit(1)
