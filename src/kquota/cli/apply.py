"""``kquota apply``: commit a plan, safely.

``kquota apply PLAN.json`` applies a saved plan to the cluster the operator names
(``--cluster`` through kquota.yaml, or ``--bootstrap-server``/``--command-config``): a plan
file is untrusted and never chooses where credentials go. It is read and checked offline
(:mod:`kquota.planfile`) before any connection; a plan made for another cluster, or
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
from dataclasses import dataclass, field, replace
from pathlib import Path

import click

from kquota.apply.applier import DEFAULT_BATCH_SIZE, ApplyReport
from kquota.apply.interrupts import signals_stop_apply, stop_signal
from kquota.apply.outcome import Interrupted, exit_code
from kquota.cli import console
from kquota.cli.examples import EXAMPLES
from kquota.cli.impact_options import ProtectArgs, protect_options
from kquota.cli.options import TargetingArgs, echo_warnings, live_targeting_options
from kquota.cli.output import refuse_inputs, write_output
from kquota.cli.timeout_option import (
    MAX_TIMEOUT,
    MIN_TIMEOUT,
    Duration,
    duration_help,
    timeout_option,
)
from kquota.errors import KquotaError, UsageError
from kquota.operations.apply import (
    ApplyRequest,
    ApplyResult,
    ApplySource,
    AuditOutcome,
    RunOptions,
    read_checked,
    run_apply,
)
from kquota.operations.desired import DesiredPaths
from kquota.operations.overrides import PolicyOverrides
from kquota.plan.guard import FLAGS
from kquota.plan.types import Plan
from kquota.render.apply_report import apply_report_lines
from kquota.runtime import timings
from kquota.runtime.gcpause import collector_paused
from kquota.target import Target

LARGE_PLAN = 10
"""A plan that alters more entities than this, or removes any quota value, is confirmed on a
terminal by typing the cluster's name (``yes`` for a cluster without a plain name), not by a
reflexive ``y``: Terraform's ``yes``, GitHub's "type the repository's name to delete it". The
mass-removal guard's default limit, so the two speak of one size."""

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
    allow_oversubscription: bool = False


def _refuse_without_terminal(auto_approve: bool) -> None:
    """Without a terminal there is nobody to ask: refuse before connecting."""
    if not auto_approve and not sys.stdin.isatty():
        raise UsageError(
            "not applying without confirmation: there is no terminal to ask on; "
            "review the plan and pass --auto-approve"
        )


def _resolve_targeting(where: TargetingArgs, saved_plan: Path | None) -> Target:
    """The operator's target, from flags or kquota.yaml: a saved plan never chooses it."""
    target = where.resolve(require_source=saved_plan is None)
    if target.cluster is None and target.bootstrap_server is None and target.command_config is None:
        raise UsageError(
            f"apply {saved_plan} needs a target: give --cluster NAME (from kquota.yaml) or "
            "--bootstrap-server HOST:PORT (with --command-config FILE for credentials); "
            "a saved plan never chooses where to connect"
        )
    return target


VERIFY_TIMEOUT = Duration("--verify-timeout", MIN_TIMEOUT, MAX_TIMEOUT)
RAMP_INTERVAL = Duration("--ramp-interval", MIN_TIMEOUT, MAX_TIMEOUT)


@click.command("apply", epilog=EXAMPLES["apply"])
@click.argument("plan_or_paths", nargs=-1, type=click.Path(path_type=Path))
@live_targeting_options
@click.option("--prune/--no-prune", default=None, help="When planning here: as for plan.")
@click.option("--allow-mass-removal", is_flag=True, help="When planning here: as for plan.")
@click.option(
    "--allow-oversubscription",
    is_flag=True,
    help="Override the capacity guard, counted again on the cluster (after review).",
)
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
@click.option(
    "--result",
    "result_file",
    type=click.Path(path_type=Path, dir_okay=False),
    metavar="FILE",
    help="Also write the outcome as JSON to FILE (applied, nothing to do, failed or refused; "
    "what was committed, verified and audited), also when apply fails.",
)
@protect_options
@timeout_option("apply")
def command(
    plan_or_paths: tuple[Path, ...],
    where: TargetingArgs,
    prune: bool | None,
    allow_mass_removal: bool,
    allow_oversubscription: bool,
    auto_approve: bool,
    audit_topic: str | None,
    batch_size: int,
    verify_timeout: float,
    no_lease: bool,
    ramp: bool,
    ramp_interval: float,
    result_file: Path | None,
    guard: ProtectArgs,
) -> None:
    """Apply a saved PLAN.json, or plan PATHS against the live cluster and apply.

    SIGINT (Ctrl-C) or SIGTERM stops the commit, settles the batch in flight and reports what
    was committed; exit 130 / 143. Exit 4: another writer changed entities this run wrote.
    """
    flags = ApplyFlags(
        plan_or_paths, where, prune, allow_mass_removal, auto_approve, audit_topic,
        batch_size, verify_timeout, lease=not no_lease, guard=guard, ramp=ramp,
        ramp_interval=ramp_interval, allow_oversubscription=allow_oversubscription,
    )  # fmt: skip
    reported: list[bool] = []
    seen = _Seen(keeps_report=result_file is not None)
    refuse_inputs(result_file, [("PLAN_OR_PATHS", p) for p in plan_or_paths])
    try:
        with signals_stop_apply(), collector_paused():  # large acyclic data: kquota.runtime.gcpause
            try:
                _apply(flags, reported, seen)
            except KeyboardInterrupt:
                raise Interrupted(stop_signal(), after_report=bool(reported)) from None
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 1
        _write_result(result_file, seen, None, code)
        raise
    except (KquotaError, click.ClickException) as e:
        message = e.format_message() if isinstance(e, click.ClickException) else str(e)
        _write_result(result_file, seen, message, e.exit_code)
        raise
    except click.Abort:
        _write_result(result_file, seen, "aborted: not confirmed", 1)
        raise
    _write_result(result_file, seen, None, 0)


@dataclass
class _Seen:
    """_Seen is what apply got to, for ``--result``: the plan, the report, the audit."""

    cluster: str | None = None
    total: int | None = None
    report: ApplyReport | None = None
    audit: AuditOutcome | None = None
    keeps_report: bool = True
    """Only ``--result`` reads the report after the apply: held here without it, a 100k
    apply's alterations outlived the apply into the cyclic collector's first pass after
    the command (kquota.runtime.gcpause), a tenth of a second walking them on the way out."""


def _write_result(path: Path | None, seen: _Seen, error: str | None, code: int) -> None:
    if path is None:
        return
    from kquota.render.apply_result import render_result, result_data

    audit = None if seen.audit is None else (seen.audit.confirmed, seen.audit.message)
    data = result_data(
        cluster=seen.cluster,
        total=seen.total,
        report=seen.report,
        audit=audit,
        error=error,
        exit_code=code,
    )
    write_output(path, render_result(data))


def _apply(flags: ApplyFlags, reported: list[bool], seen: _Seen) -> None:
    """flags -> request -> the apply operation -> report -> exit code."""
    request = _request(flags)
    if flags.ramp:
        _apply_ramped(flags, request, reported, seen)
        return
    # Progress (phases, a bar per response) is the status line's: kquota.cli.waiting.
    view = _Terminal(flags.auto_approve, reported, seen, request.target.cluster_name)
    result = run_apply(request, view)
    seen.cluster, seen.total = result.plan.cluster, len(result.plan.alterations)
    if result.report is None:
        click.echo("nothing to apply")
        return
    seen.audit = result.audit
    if result.audit is not None:
        _report_audit(result.audit, result.report)
    if not result.report.ok:
        sys.exit(exit_code(result.report))


def _request(flags: ApplyFlags) -> ApplyRequest:
    """_request is the command line as an apply request (refusals name the CLI's flags).

    Everything local is read and checked before the first connection (issue 9): a wrong
    ``--protect`` fails here; the operation reads the plan or the desired state.
    """
    from kquota.planfile.writer import is_saved_plan

    protect = flags.guard.matches()
    saved = is_saved_plan(flags.plan_or_paths)
    target = _resolve_targeting(flags.where, flags.plan_or_paths[0] if saved else None)
    source: ApplySource = flags.plan_or_paths[0] if saved else DesiredPaths(flags.plan_or_paths)
    return ApplyRequest(
        target,
        source,
        PolicyOverrides(
            flags.prune,
            flags.allow_mass_removal,
            protect,
            flags.guard.allow_protected_change,
            flags.allow_oversubscription,
        ),
        RunOptions(
            flags.batch_size,
            flags.verify_timeout,
            flags.lease,
            flags.audit_topic or target.audit_topic,
            FLAGS,
        ),
    )


@dataclass
class _Terminal:
    """_Terminal is apply's view: the operator's terminal, asked before anything is written."""

    auto_approve: bool
    reported: list[bool]
    seen: _Seen
    cluster_name: str | None = None

    def loaded(self, warnings: tuple[object, ...]) -> None:
        echo_warnings(warnings)

    def checked(self) -> None:
        _refuse_without_terminal(self.auto_approve)

    def shown(self, plan: Plan, warnings: tuple[str, ...]) -> None:
        from kquota.render.text import render_plan as render_text

        self.seen.cluster, self.seen.total = plan.cluster, len(plan.alterations)

        with timings.span("render"):
            echo_warnings(warnings)
            console.echo(render_text(plan), console.by_glyph)  # coloured as plan's

    def confirm(self, plan: Plan) -> None:
        if self.auto_approve:
            return
        _refuse_without_terminal(self.auto_approve)
        n = len(plan.alterations)
        removed = plan.removals.quotas
        if n <= LARGE_PLAN and not removed:
            if not click.confirm(f"Apply these changes to {n} entities?", default=False, err=True):
                raise click.Abort()
            return
        word = _confirmation_word(self.cluster_name)
        what = f"{n} entities" + (f", removing {removed} quota values" if removed else "")
        typed = click.prompt(
            f"Apply these changes to {what}? Type {word} to apply",
            default="",
            show_default=False,
            err=True,
        )
        if typed.strip() != word:
            click.echo(f"not applied: the answer was not {word}", err=True)
            raise click.Abort()

    def committed(self, plan: Plan, report: ApplyReport) -> None:
        self.seen.cluster, self.seen.total = plan.cluster, len(plan.alterations)
        if self.seen.keeps_report:
            self.seen.report = report
        for line in apply_report_lines(report, len(plan.alterations)):
            click.echo(line)
        self.reported.append(True)


def _confirmation_word(cluster_name: str | None) -> str:
    """_confirmation_word: the cluster's name, when a person can type it as it is shown."""
    from kquota.display import PLAIN_NAME

    if cluster_name is not None and PLAIN_NAME.fullmatch(cluster_name):
        return cluster_name
    return "yes"


@dataclass
class _RampStep(_Terminal):
    """_RampStep is a ramp step's view: each step is shown and reported, but the operator
    confirms once, at the first step (the whole schedule was shown before it)."""

    confirmed: list[bool] = field(default_factory=list)

    def confirm(self, plan: Plan) -> None:
        if not self.confirmed:
            super().confirm(plan)
            self.confirmed.append(True)


def _apply_ramped(
    flags: ApplyFlags, request: ApplyRequest, reported: list[bool], seen: _Seen
) -> None:
    """_apply_ramped applies a saved plan in ramp steps (:mod:`kquota.operations.ramp`): the
    plan is read and checked as every saved plan is, the schedule is shown and confirmed once,
    then each step goes the whole apply road (its own request, checks, lease and audit)."""
    from kquota.operations.ramp import apply_ramped
    from kquota.plan.ramp import ramped_keys
    from kquota.render.ramp import schedule_lines
    from kquota.runtime.deadline import format_duration

    target = request.target
    if not isinstance(request.source, Path):
        raise UsageError(
            "--ramp applies a saved plan: make it with kquota plan --out PLAN.json, review it, "
            "then kquota apply --ramp PLAN.json"
        )
    saved = read_checked(request)  # before connecting
    _refuse_without_terminal(flags.auto_approve)
    ramp = target.cluster.policy.ramp if target.cluster is not None else None
    if ramp is None:
        raise UsageError(
            "--ramp needs policy.ramp.max_step for the cluster in kquota.yaml "
            "(e.g. ramp: {max_step: 0.5}); give --cluster NAME"
        )
    keys = ramped_keys(saved, ramp.max_step)
    for line in schedule_lines(keys, ramp.max_step, format_duration(flags.ramp_interval)):
        click.echo(line)

    def on_step(n: int, total: int, _plan: Plan) -> None:
        click.echo(f"ramp step {n} of {total}:")

    def on_resume(n: int, total: int) -> None:
        if n > total:
            # Not this ramp's doing as far as this run can tell: it claims no step it did not
            # apply (issue 33).
            click.echo(
                "ramp: the cluster already holds the plan's final values: someone else put them"
                " there (another apply, or an earlier run of this ramp); this run applied no "
                "step"
            )
        else:
            click.echo(f"ramp: the cluster holds step {n - 1} of {total}; resuming at step {n}")

    # One view for every step: --result records the last step's outcome.
    view = _RampStep(flags.auto_approve, reported, seen, target.cluster_name)

    def step(plan: Plan) -> ApplyResult:
        # Each step publishes and confirms its own events (its own audit client).
        result = run_apply(replace(request, source=plan), view)
        seen.audit = result.audit
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
        on_resume=on_resume,
    )
    if outcome.ok and not outcome.results:
        return  # nothing applied, said by on_resume
    if outcome.ok:
        ran = (
            f" (steps {outcome.first} to {outcome.steps} by this run)" if outcome.first > 1 else ""
        )
        click.echo(f"ramp: {outcome.steps} of {outcome.steps} steps applied{ran}")
        return
    done = outcome.last_step
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
