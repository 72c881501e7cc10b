"""``kquota apply``: commit a plan, safely.

``kquota apply PLAN.json`` applies a saved plan to the cluster the operator names
(``--cluster`` through kquota.yaml, or ``--bootstrap-server``/``--command-config``): a plan
file is untrusted and never chooses where credentials go. It is read and checked offline
(:mod:`kquota.apply.planfile`) before any connection; a plan made for another cluster, or
planned against entities that changed since, is refused. ``kquota apply [PATHS…]`` reads the
desired state, then plans against the live cluster exactly as ``kquota plan`` would, and
applies.

Either way: the plan is shown; on a terminal the operator confirms it (``--auto-approve``
skips that, and is required without a terminal); every alteration passes a validate-only
AlterClientQuotas first or nothing is committed; then commit, verify, and (with an audit
topic) publish one confirmed audit event per committed entity before reporting success. The
audit topic is checked (it exists, this principal may write it) before the commit; if the
events still cannot be confirmed after it, the apply exits 3, "committed but not audited".
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import click

from kquota.apply.applier import DEFAULT_BATCH_SIZE, ApplyReport
from kquota.apply.interrupts import signals_stop_apply, stop_signal
from kquota.apply.outcome import Interrupted, exit_code, overwritten_lines, stop_lines
from kquota.cli import console
from kquota.cli.examples import EXAMPLES
from kquota.cli.impact_options import ProtectArgs, protect_options
from kquota.cli.options import (
    TargetingArgs,
    echo_warnings,
    live_targeting_options,
    load_desired_quotas,
)
from kquota.cli.timeout_option import (
    MAX_TIMEOUT,
    MIN_TIMEOUT,
    Duration,
    duration_help,
    timeout_option,
)
from kquota.errors import KquotaError, UsageError
from kquota.operations.apply import ApplyHooks, ApplyResult, AuditOutcome, refuse_observed
from kquota.operations.apply import apply as apply_operation
from kquota.operations.desired import LoadedDesired
from kquota.plan.policy import Policy
from kquota.plan.types import Plan
from kquota.render.failures import failure_lines
from kquota.render.format import display_entity
from kquota.target import Target, configured_servers

if TYPE_CHECKING:
    from kquota.audit import AuditPublisher

EXIT_NOT_AUDITED = 3
"""Exit code of an apply that committed and verified every change but could not confirm their
audit events (documented in the README with the other exit codes)."""


class CommittedNotAudited(KquotaError):
    """CommittedNotAudited: every change is in the cluster, but its audit trail is not."""

    exit_code = EXIT_NOT_AUDITED


@dataclass(frozen=True)
class ApplyFlags:
    """ApplyFlags is apply's command line, as given: what the command hands to the work."""

    plan_or_paths: tuple[Path, ...]
    where: TargetingArgs
    prune: bool | None
    allow_mass_removal: bool
    auto_approve: bool
    audit_topic: str | None
    batch_size: int
    verify_timeout: float
    lease: bool
    guard: ProtectArgs
    ramp: bool = False
    ramp_interval: float = 30.0


def _refuse_without_terminal(auto_approve: bool) -> None:
    """Without a terminal there is nobody to ask: refuse before connecting."""
    if not auto_approve and not sys.stdin.isatty():
        raise UsageError(
            "not applying without confirmation: there is no terminal to ask on; "
            "review the plan and pass --auto-approve"
        )


def _confirm(auto_approve: bool, plan: Plan) -> None:
    if auto_approve:
        return
    _refuse_without_terminal(auto_approve)
    n = len(plan.alterations)
    if not click.confirm(f"Apply these changes to {n} entities?", default=False, err=True):
        raise click.Abort()


def _report_lines(report: ApplyReport, total: int) -> list[str]:
    out: list[str] = []
    if report.validation_failures:
        out.append(
            f"validate-only pass failed for {len(report.validation_failures)} of {total} "
            "entities; nothing was committed:"
        )
        out += failure_lines(report.validation_failures)
        return out
    done = len(report.committed)
    line = f"committed {done} of {total} entities"
    if report.already_applied:
        line += f" ({len(report.already_applied)} already applied by an earlier run)"
    out.append(line)
    out += failure_lines(report.failed, prefix="failed ")
    if report.interrupted:
        out += stop_lines(report)
        if report.uncertain:
            out.append(f"  {len(report.uncertain)} entities may or may not have been committed")
        if report.not_attempted:
            out.append(f"  {len(report.not_attempted)} entities were not attempted")
        out.append("  every op is an idempotent set or remove: run apply again to converge")
    out += overwritten_lines(report)
    if report.unconverged:
        out.append(
            f"verification: {len(report.unconverged)} committed entities do not show their "
            "changes yet (brokers trail the controller briefly):"
        )
        out += [f"  {display_entity(e)}" for e in report.unconverged[:20]]
    elif done and not report.overwritten and report.stopped_by in (None, "connection"):
        out.append("verified: the cluster shows every committed change")
    return out


def _resolve_targeting(
    where: TargetingArgs, saved_plan: Path | None
) -> tuple[Target, dict[str, str]]:
    """The operator's target, from flags or kquota.yaml: a saved plan never chooses it."""
    target = where.resolve(require_source=saved_plan is None)
    if target.cluster is None and target.bootstrap_server is None and target.command_config is None:
        raise UsageError(
            f"apply {saved_plan} needs a target: give --cluster NAME (from kquota.yaml) or "
            "--bootstrap-server HOST:PORT (with --command-config FILE for credentials); "
            "a saved plan never chooses where to connect"
        )
    target.config  # noqa: B018 -- checked here, by kquota's rules (no value shown), not the audit client's
    return target, target.client_properties()


def _load_saved(
    path: Path, where: TargetingArgs, target: Target, props: dict[str, str], policy: Policy
) -> Plan:
    """_load_saved reads and checks a saved plan against the operator's target, offline."""
    from kquota.apply.planfile import TargetIdentity, check_target, load_plan_file

    plan = load_plan_file(path, policy)
    identity = TargetIdentity(target.cluster_name, props["bootstrap.servers"])
    check_target(plan, str(path), identity, configured_servers(where.config_path))
    return plan


VERIFY_TIMEOUT = Duration("--verify-timeout", MIN_TIMEOUT, MAX_TIMEOUT)
RAMP_INTERVAL = Duration("--ramp-interval", MIN_TIMEOUT, MAX_TIMEOUT)


@click.command("apply", epilog=EXAMPLES["apply"])
@click.argument("plan_or_paths", nargs=-1, type=click.Path(path_type=Path))
@live_targeting_options
@click.option("--prune/--no-prune", default=None, help="When planning here: as for plan.")
@click.option("--allow-mass-removal", is_flag=True, help="When planning here: as for plan.")
@click.option("--auto-approve", is_flag=True, help="Apply without asking (CI, no terminal).")
@click.option("--audit-topic", help="Publish an audit event per committed entity to this topic.")
@click.option(
    "--batch-size",
    type=click.IntRange(1, 100_000),
    default=DEFAULT_BATCH_SIZE,
    show_default=True,
    help="Entities committed per AlterClientQuotas batch.",
)
@click.option(
    "--verify-timeout",
    type=VERIFY_TIMEOUT,
    metavar="DURATION",
    default="15s",
    show_default=True,
    help=duration_help(
        "How long to wait for the cluster to show every committed change (within --timeout):",
        VERIFY_TIMEOUT,
    ),
)
@click.option(
    "--no-lease",
    is_flag=True,
    help="Do not take the cluster's apply lease (topic _kquota_apply_lease; see README).",
)
@click.option(
    "--ramp",
    is_flag=True,
    help="Lower quotas in steps of at most policy.ramp.max_step (kquota.yaml), a saved plan.",
)
@click.option(
    "--ramp-interval",
    type=RAMP_INTERVAL,
    metavar="DURATION",
    default="30s",
    show_default=True,
    help=duration_help("Wait between ramp steps (drift is checked after it):", RAMP_INTERVAL),
)
@protect_options
@timeout_option("apply")
def command(
    plan_or_paths: tuple[Path, ...],
    where: TargetingArgs,
    prune: bool | None,
    allow_mass_removal: bool,
    auto_approve: bool,
    audit_topic: str | None,
    batch_size: int,
    verify_timeout: float,
    no_lease: bool,
    ramp: bool,
    ramp_interval: float,
    guard: ProtectArgs,
) -> None:
    """Apply a saved PLAN.json, or plan PATHS against the live cluster and apply.

    SIGINT (Ctrl-C) or SIGTERM stops the commit, settles the batch in flight and reports what
    was committed; exit 130 / 143. Exit 4: another writer changed entities this run wrote.
    """
    flags = ApplyFlags(
        plan_or_paths, where, prune, allow_mass_removal, auto_approve, audit_topic,
        batch_size, verify_timeout, lease=not no_lease, guard=guard, ramp=ramp,
        ramp_interval=ramp_interval,
    )  # fmt: skip
    reported: list[bool] = []
    with signals_stop_apply():
        try:
            _apply(flags, reported)
        except KeyboardInterrupt:
            raise Interrupted(stop_signal(), after_report=bool(reported)) from None


def _apply(flags: ApplyFlags, reported: list[bool]) -> None:
    from kquota.apply.planfile import is_saved_plan
    from kquota.render.text import render_plan as render_text

    # Everything local is read and checked before the first connection (issue 9).
    flags.guard.matches()  # a wrong --protect fails here, before any connection
    saved_path = flags.plan_or_paths[0] if is_saved_plan(flags.plan_or_paths) else None
    target, props = _resolve_targeting(flags.where, saved_path)
    policy = target.policy(prune=flags.prune, allow_mass_removal=flags.allow_mass_removal)
    refuse_observed(target, policy)  # issue 23: before reading anything more or connecting
    saved = desired = None
    if saved_path is not None:
        saved = _load_saved(saved_path, flags.where, target, props, policy)
        refuse_observed(target, policy, saved)  # a saved plan: before connecting too
    else:
        desired = load_desired_quotas(target.desired_paths(flags.plan_or_paths))
    _refuse_without_terminal(flags.auto_approve)
    topic = flags.audit_topic or target.audit_topic
    publisher = None
    if topic:
        from kquota.audit import AuditPublisher

        publisher = AuditPublisher(topic, props)  # a bad config fails here, before any write
        click.get_current_context().call_on_close(publisher.close)

    def show(plan: Plan, warnings: tuple[str, ...]) -> None:
        echo_warnings(warnings)
        console.echo(render_text(plan), console.by_glyph)  # coloured as plan's

    def report_committed(plan: Plan, report: ApplyReport) -> None:
        for line in _report_lines(report, len(plan.alterations)):
            click.echo(line)
        reported.append(True)

    def confirm(plan: Plan) -> None:
        _confirm(flags.auto_approve, plan)

    source = saved if saved is not None else desired
    assert source is not None
    hooks = ApplyHooks(show, confirm, committed=report_committed)  # progress: cli.waiting
    if flags.ramp:
        _apply_ramped(flags, target, saved, publisher, hooks, topic)
        return
    result = _apply_one(flags, target, source, publisher, hooks)
    if result.report is None:
        click.echo("nothing to apply")
        return
    if result.audit is not None:
        _report_audit(result.audit, result.report)
    if not result.report.ok:
        sys.exit(exit_code(result.report))


def _apply_one(
    flags: ApplyFlags,
    target: Target,
    source: Plan | LoadedDesired,
    publisher: AuditPublisher | None,
    hooks: ApplyHooks,
) -> ApplyResult:
    """_apply_one is the one call into the apply operation, for a plain apply and each ramp
    step alike."""
    return apply_operation(
        target,
        source,
        prune=flags.prune,
        allow_mass_removal=flags.allow_mass_removal,
        override="--allow-mass-removal",
        protect=flags.guard.matches(),
        allow_protected_change=flags.guard.allow_protected_change,
        protect_override="--allow-protected-change",
        batch_size=flags.batch_size,
        verify_timeout=flags.verify_timeout,
        lease=flags.lease,
        publisher=publisher,
        hooks=hooks,
    )


def _apply_ramped(
    flags: ApplyFlags,
    target: Target,
    saved: Plan | None,
    publisher: AuditPublisher | None,
    hooks: ApplyHooks,
    topic: str | None,
) -> None:
    """_apply_ramped applies a saved plan in ramp steps (:mod:`kquota.operations.ramp`): the
    schedule is shown and confirmed once, then each step goes the whole apply road."""
    import dataclasses

    from kquota.deadline import format_duration
    from kquota.operations.ramp import apply_ramped
    from kquota.plan.ramp import ramped_keys
    from kquota.render.ramp import schedule_lines

    if saved is None:
        raise UsageError(
            "--ramp applies a saved plan: make it with kquota plan --out PLAN.json, review it, "
            "then kquota apply --ramp PLAN.json"
        )
    ramp = target.cluster.policy.ramp if target.cluster is not None else None
    if ramp is None:
        raise UsageError(
            "--ramp needs policy.ramp.max_step for the cluster in kquota.yaml "
            "(e.g. ramp: {max_step: 0.5}); give --cluster NAME"
        )
    keys = ramped_keys(saved, ramp.max_step)
    for line in schedule_lines(keys, ramp.max_step, format_duration(flags.ramp_interval)):
        click.echo(line)
    confirmed: list[bool] = []

    def confirm_once(plan: Plan) -> None:
        if not confirmed:
            hooks.confirm(plan)
            confirmed.append(True)

    def on_step(n: int, total: int, _plan: Plan) -> None:
        click.echo(f"ramp step {n} of {total}:")

    step_hooks = dataclasses.replace(hooks, confirm=confirm_once)
    first = [publisher]

    def publishers() -> AuditPublisher | None:
        """Each step publishes its own events and closes its publisher: a new one per step
        (the first is the one made before connecting, which checked the config)."""
        if first:
            return first.pop()
        if topic is None:
            return None
        from kquota.audit import AuditPublisher

        made = AuditPublisher(topic, target.client_properties())
        click.get_current_context().call_on_close(made.close)
        return made

    def step(plan: Plan) -> ApplyResult:
        result = _apply_one(flags, target, plan, publishers(), step_hooks)
        if result.audit is not None and result.audit.confirmed:
            click.echo(result.audit.message)  # each step's events, as they are confirmed
        return result

    outcome = apply_ramped(
        target,
        saved,
        max_step=ramp.max_step,
        interval=flags.ramp_interval,
        apply_step=step,
        on_step=on_step,
    )
    if outcome.ok:
        click.echo(f"ramp: {outcome.steps} of {outcome.steps} steps applied")
        return
    done = len(outcome.results)
    click.echo(
        f"ramp stopped at step {done} of {outcome.steps}; the steps before it are applied "
        "and verified",
        err=True,
    )
    last = outcome.results[-1]
    if last.report is not None and last.audit is not None and not last.audit.confirmed:
        _report_audit(last.audit, last.report)
    if last.report is not None and not last.report.ok:
        sys.exit(exit_code(last.report))


def _report_audit(outcome: AuditOutcome, report: ApplyReport) -> None:
    """_report_audit: an audit failure is its own outcome (:class:`CommittedNotAudited`, exit
    3) when the apply itself succeeded; when it did not, the apply's exit 1 stands and the
    audit failure is reported beside it."""
    if outcome.confirmed:
        click.echo(outcome.message)
    elif report.ok:
        raise CommittedNotAudited(outcome.message)
    else:
        click.echo(f"error: {outcome.message}", err=True)
