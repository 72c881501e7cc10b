"""``kquota plan``: what would change, for a reviewer, a pipeline, or a saved plan file.

Exit codes: 0 success; with ``--detailed-exitcode`` 0 = no changes, 2 = changes; 1 = any
error, including usage errors and a plan stopped by a guard (mass removal, protected
principals, capacity, throttling): that plan is shown in full with the verdict first, and
``--out`` still saves it for review (apply recomputes the guards and refuses it without the
override).
"""

from __future__ import annotations

import codecs
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import click

from kquota.cli import console
from kquota.cli.connect_options import parse_principal
from kquota.cli.examples import EXAMPLES
from kquota.cli.impact_options import ImpactArgs, ProtectArgs, impact_options, protect_options
from kquota.cli.options import (
    PLAN_FORMAT_HELP,
    TargetingArgs,
    echo_warnings,
    format_option,
    load_desired_quotas,
    targeting_options,
)
from kquota.cli.output import refuse_existing, refuse_inputs
from kquota.cli.timeout_option import timeout_option
from kquota.errors import UsageError
from kquota.operations.overrides import PolicyOverrides
from kquota.operations.plan import PlanOptions, PlanRequest, run_plan
from kquota.plan.guard import refuse_shown
from kquota.plan.resolver import ResolutionChange
from kquota.plan.types import Plan
from kquota.planfile.writer import write_plan_file
from kquota.render.verdict import json_plan_bytes
from kquota.runtime.gcpause import collector_paused
from kquota.target import Target

USAGE_SINCE = "7d"
"""How far back ``--usage`` samples go without ``--since``."""

colorize = console.by_glyph
"""colorize adds terminal colour to plan text by line glyph (the text itself is unchanged);
apply colours the plan it shows the same way."""


def _use_color() -> bool:
    return console.use_color()


@dataclass(frozen=True)
class PlanFlags:
    """PlanFlags is plan's command line, as given: what the command hands to the work."""

    paths: tuple[Path, ...]
    where: TargetingArgs
    prune: bool | None
    allow_mass_removal: bool
    out: Path | None
    fmt: str
    force: bool
    detailed_exitcode: bool
    principals: tuple[str, ...]
    capacity: bool | None
    allow_oversubscription: bool
    usage: str | None
    prometheus_token_env: str | None
    prometheus_basic_auth_env: str | None
    since: str | None
    allow_throttling: bool
    wanted: ImpactArgs
    guard: ProtectArgs


@click.command("plan", epilog=EXAMPLES["plan"])
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@targeting_options
@click.option(
    "--prune/--no-prune",
    default=None,
    help="Remove in-scope entities no file declares (default: the cluster's policy, else off).",
)
@click.option("--allow-mass-removal", is_flag=True, help="Override the mass-removal guard.")
@click.option(
    "--out",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Save the plan (JSON contract) for review and apply.",
)
@format_option(["text", "json", "markdown"], PLAN_FORMAT_HELP)
@click.option(
    "--force",
    is_flag=True,
    help="Replace an existing --out file that is not an earlier saved plan (never an input).",
)
@click.option("--detailed-exitcode", is_flag=True, help="Exit 0 without changes, 2 with.")
@click.option(
    "--principal",
    "principals",
    multiple=True,
    metavar="user=NAME,client-id=ID",
    help="Show how this principal's effective quotas change (repeatable).",
)
@click.option(
    "--capacity/--no-capacity",
    default=None,
    help="Sum quotas against broker capacity (default: on where kquota.yaml declares one).",
)
@click.option(
    "--allow-oversubscription",
    is_flag=True,
    help="Override the capacity guard (policy.capacity.max_oversubscription).",
)
@click.option(
    "--usage",
    "usage",
    metavar="SOURCE",
    help="Replay observed usage (a samples file or folder, or a Prometheus server's "
    "http(s) URL) against the plan: who would be throttled.",
)
@click.option(
    "--prometheus-token-env",
    metavar="NAME",
    help="With --usage URL: the environment variable holding a bearer token for Prometheus.",
)
@click.option(
    "--prometheus-basic-auth-env",
    metavar="NAME",
    help="With --usage URL: the environment variable holding user:password for Prometheus.",
)
@click.option(
    "--since",
    metavar="DURATION",
    help="With --usage: the window, this long back from the newest sample (7d, 24h, 90m; "
    "default: 7d).",
)
@click.option(
    "--allow-throttling",
    is_flag=True,
    help="Override the throttle guard (policy.usage.max_throttled_fraction).",
)
@impact_options
@protect_options
@timeout_option("plan")
@collector_paused()  # large acyclic data: kquota.runtime.gcpause
def command(
    paths: tuple[Path, ...],
    where: TargetingArgs,
    prune: bool | None,
    allow_mass_removal: bool,
    out: Path | None,
    fmt: str,
    force: bool,
    detailed_exitcode: bool,
    principals: tuple[str, ...],
    capacity: bool | None,
    allow_oversubscription: bool,
    usage: str | None,
    prometheus_token_env: str | None,
    prometheus_basic_auth_env: str | None,
    since: str | None,
    allow_throttling: bool,
    wanted: ImpactArgs,
    guard: ProtectArgs,
) -> None:
    """Show what would change to make the cluster match the desired state in PATHS."""
    flags = PlanFlags(
        paths, where, prune, allow_mass_removal, out, fmt, force, detailed_exitcode,
        principals, capacity, allow_oversubscription, usage, prometheus_token_env,
        prometheus_basic_auth_env, since, allow_throttling, wanted, guard,
    )  # fmt: skip
    _plan(flags)


def _plan(flags: PlanFlags) -> None:
    """flags -> request -> the plan operation -> render -> exit code."""
    request = _request(flags)
    result = run_plan(request)
    echo_warnings(result.warnings)
    plan, out, fmt = result.plan, flags.out, flags.fmt
    click.echo(_render(plan, fmt, result.changes), nl=False, color=_use_color())
    if fmt == "text":
        _echo_ramp(request.target, plan)
    if out is not None:
        for missing in write_plan_file(plan, out):
            click.echo(f"warning: {out}: {missing}; apply will refuse this plan", err=True)
    refuse_shown(plan, out)
    if flags.detailed_exitcode and not plan.empty:
        sys.exit(2)


def _request(flags: PlanFlags) -> PlanRequest:
    """_request is the command line as a plan request.

    Everything local is read and checked before the first connection, in this order: the
    flags, the target, where ``--out`` may write, the desired state (its warnings shown),
    the listed principals, the usage samples.
    """
    if flags.since is not None and flags.usage is None:
        raise UsageError("--since needs --usage SOURCE: it says how far back the samples go")
    if (flags.prometheus_token_env or flags.prometheus_basic_auth_env) and flags.usage is None:
        raise UsageError(
            "--prometheus-token-env and --prometheus-basic-auth-env need --usage URL (a "
            "Prometheus server)"
        )
    named = [parse_principal(p, "--principal") for p in flags.principals]
    protect = flags.guard.matches()
    target = flags.where.resolve()
    desired_paths = target.desired_paths(flags.paths)
    out = flags.out
    refuse_inputs(out, [*flags.where.inputs(), *(("desired state", p) for p in desired_paths)])
    if out is not None and not _is_saved_plan_file(out):
        refuse_existing(out, flags.force, unless="an earlier saved plan")
    desired = load_desired_quotas(desired_paths)  # local files before the network
    listed = flags.wanted.listed()
    samples = None
    shown = None
    if flags.usage is not None:  # a local file is read before the cluster, as desired state
        from kquota.usage.source import samples_from, shown_source

        shown = shown_source(flags.usage)  # a URL without its credentials, in the plan
        samples = samples_from(
            flags.usage,
            flags.since or USAGE_SINCE,
            target.cluster_name,
            token_env=flags.prometheus_token_env,
            basic_auth_env=flags.prometheus_basic_auth_env,
        )
    return PlanRequest(
        target,
        desired,
        PolicyOverrides(
            flags.prune,
            flags.allow_mass_removal,
            protect,
            flags.guard.allow_protected_change,
            flags.allow_oversubscription,
            flags.allow_throttling,
        ),
        PlanOptions(named, flags.wanted.live, listed, flags.capacity, samples, shown),
    )


def _echo_ramp(target: Target, plan: Plan) -> None:
    """With ``policy.ramp`` set, the text plan ends with the steps ``apply --ramp`` takes."""
    ramp = target.cluster.policy.ramp if target.cluster is not None else None
    if ramp is None:
        return
    from kquota.plan.ramp import ramped_keys
    from kquota.render.ramp import schedule_lines

    keys = ramped_keys(plan, ramp.max_step)
    if keys:
        lines = schedule_lines(keys, ramp.max_step, "--ramp-interval")
        click.echo("\n".join(["", *lines, "(only with apply --ramp; without it, at once)"]))


def _render(plan: Plan, fmt: str, changes: Sequence[ResolutionChange]) -> str | bytes:
    if fmt == "json":
        data = json_plan_bytes(plan)
        # On a UTF-8 standard output the bytes go to its buffer as they are (no str to
        # encode again, no scan for colour codes: JSON escapes every control character);
        # another encoding takes the text, escaped as every output is (cli.main).
        return data if _utf8_stdout() else data.decode()
    if fmt == "markdown":
        from kquota.render.markdown import render_plan as render_markdown

        return render_markdown(plan, changes)
    from kquota.render.text import render_plan as render_text

    text = render_text(plan, changes)
    return colorize(text) if _use_color() else text


def _utf8_stdout() -> bool:
    encoding = getattr(sys.stdout, "encoding", None)
    return encoding is not None and codecs.lookup(encoding).name == "utf-8"


def _is_saved_plan_file(path: Path) -> bool:
    """_is_saved_plan_file: ``path`` holds an earlier ``plan --out`` (its JSON contract names
    the desired state's digest near the top), which CI replaces run after run."""
    try:
        with path.open("rb") as f:
            head = f.read(4096)
    except OSError:
        return False
    return head.lstrip().startswith(b"{") and b'"desired_digest"' in head
