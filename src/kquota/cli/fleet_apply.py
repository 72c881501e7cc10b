"""``kquota fleet apply``: roll the fleet's reviewed plans out in waves (see
:mod:`kquota.operations.fleet_apply` for how each cluster is applied and checked)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import click

from kquota.cli.examples import EXAMPLES
from kquota.cli.options import format_option
from kquota.cli.timeout_option import (
    MAX_TIMEOUT,
    MIN_TIMEOUT,
    Duration,
    duration_help,
    timeout_option,
)
from kquota.errors import UsageError

if TYPE_CHECKING:
    from kquota.plan.rollout import PlannedWave

VERIFY_TIMEOUT = Duration("--verify-timeout", MIN_TIMEOUT, MAX_TIMEOUT)


def _confirm(auto_approve: bool) -> Callable[[tuple[PlannedWave, ...]], None]:
    """The operator confirms the waves on a terminal, before any plan is read."""

    def confirm(waves: tuple[PlannedWave, ...]) -> None:
        if auto_approve:
            return
        if not sys.stdin.isatty():
            raise UsageError(
                "not rolling out without confirmation: there is no terminal to ask on; "
                "review the plans and pass --auto-approve"
            )
        for w in waves:
            click.echo(f"wave {w.number}: {', '.join(w.clusters)}", err=True)
        if not click.confirm("Roll out these waves?", default=False, err=True):
            raise click.Abort()

    return confirm


@click.command("apply", epilog=EXAMPLES["fleet apply"])
@click.argument("plans_dir", type=click.Path(file_okay=False, exists=True, path_type=Path))
@click.option(
    "--desired",
    "desired_root",
    required=True,
    type=click.Path(file_okay=False, exists=True, path_type=Path),
    help="The desired-state root the plans were made from (ROOT/<cluster>/*.yaml).",
)
@click.option(
    "--config",
    "config_path",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Project config with each cluster's target (default: ./kquota.yaml).",
)
@click.option(
    "--wave",
    "wave_flags",
    multiple=True,
    metavar="GLOB[,GLOB][:MAX_PARALLEL[:SOAK]]",
    help="A wave, in order (repeatable); default: rollout: in kquota.yaml, else the first "
    "cluster as the canary, then the rest.",
)
@click.option(
    "--prune/--no-prune", default=False, show_default=True, help="As given to fleet plan."
)
@click.option("--allow-mass-removal", is_flag=True, help="As given to fleet plan.")
@click.option("--audit-topic", help="Audit topic for every cluster (default: each one's own).")
@click.option("--auto-approve", is_flag=True, help="Roll out without asking (CI, no terminal).")
@click.option("--resume", is_flag=True, help="Continue a stopped rollout from its record.")
@click.option(
    "--verify-timeout",
    type=VERIFY_TIMEOUT,
    metavar="DURATION",
    default="15s",
    show_default=True,
    help=duration_help("Per cluster, as for apply:", VERIFY_TIMEOUT),
)
@format_option(["text", "json", "markdown"], "The rollout report's format.")
@timeout_option("fleet")
def apply_cmd(
    plans_dir: Path,
    desired_root: Path,
    config_path: Path | None,
    wave_flags: tuple[str, ...],
    prune: bool,
    allow_mass_removal: bool,
    audit_topic: str | None,
    auto_approve: bool,
    resume: bool,
    verify_timeout: float,
    fmt: str,
) -> None:
    """Apply the plans in PLANS_DIR (written by fleet plan) cluster by cluster, in waves.

    Each cluster goes the whole apply road against its own kquota.yaml target; a wave starts
    when every cluster before it is verified (and its soak stayed drift-free). The first
    failure stops the rollout; --resume continues it. A wave's max_parallel clusters are
    applied at once, each in a process of its own. Exit 1 when it stopped; 130 / 143 when
    SIGINT / SIGTERM stopped it (the applies in flight settle and report first)."""
    from kquota.apply.interrupts import exit_status, signals_stop_apply
    from kquota.operations.fleet_apply import FleetApplyRequest, fleet_apply
    from kquota.plan.guard import FLAGS, Overrides
    from kquota.plan.rollout import parse_wave
    from kquota.render import fleet_apply as render

    request = FleetApplyRequest(
        plans_dir=plans_dir,
        desired_root=desired_root,
        waves=tuple(parse_wave(w) for w in wave_flags),
        config_path=config_path,
        prune=prune,
        allow_mass_removal=allow_mass_removal,
        audit_topic=audit_topic,
        verify_timeout=verify_timeout,
        resume=resume,
        # fleet apply takes no --allow-oversubscription: the capacity guard's refusal keeps
        # the spelling it has always shown here.
        overrides=Overrides(FLAGS.mass_removal, FLAGS.protected_change),
    )
    with signals_stop_apply():  # SIGTERM (a cancelled CI job) stops as Ctrl-C does
        report = fleet_apply(
            request,
            confirm=_confirm(auto_approve),
            progress=lambda line: click.echo(line, err=True),
        )
    shown = {"json": render.render_json, "markdown": render.render_markdown}
    click.echo(shown.get(fmt, render.render_text)(report), nl=False)
    if report.signal is not None:
        sys.exit(exit_status(report.signal))
    if not report.ok:
        sys.exit(1)
