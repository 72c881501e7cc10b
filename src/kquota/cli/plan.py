"""``kquota plan``: what would change, for a reviewer, a pipeline, or a saved plan file.

Exit codes: 0 success; with ``--detailed-exitcode`` 0 = no changes, 2 = changes; 1 = any
error, including usage errors and a plan stopped by the mass-removal guard (it is shown,
then refused, and no ``--out`` file is written for it).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path

import click

from kquota.cli.options import TargetingArgs, plan_against, targeting_options
from kquota.errors import KquotaError, UsageError
from kquota.model import CLIENT_ID, IP, USER
from kquota.plan.resolver import Principal, ResolutionChange, resolution_changes
from kquota.plan.simulate import apply_plan
from kquota.plan.types import Plan


class GuardError(KquotaError):
    """GuardError: the plan removes too much; shown, but not saved or applied."""


def parse_names(text: str, option: str) -> Principal:
    """parse_names reads ``user=alice,client-id=etl`` (and ``ip=...``) into a Principal."""
    names: dict[str, str] = {}
    for part in text.split(","):
        key, sep, value = part.partition("=")
        key = key.strip()
        if not sep or key not in (USER, CLIENT_ID, IP):
            raise UsageError(
                f"{option} {text!r}: expected type=name pairs separated by commas, "
                f"types {USER}, {CLIENT_ID}, {IP}"
            )
        if key in names:
            raise UsageError(f"{option} {text!r}: {key} given twice")
        names[key] = value
    return Principal(names.get(USER), names.get(CLIENT_ID), names.get(IP))


def colorize(text: str) -> str:
    """colorize adds terminal colour to plan text by line glyph (the text itself is unchanged)."""
    colors = {"+": "green", "~": "yellow", "-": "red"}
    out = []
    for line in text.splitlines(keepends=True):
        glyph = line.lstrip()[:1]
        is_op = line.lstrip()[1:2] == " "
        out.append(click.style(line, fg=colors[glyph]) if glyph in colors and is_op else line)
    return "".join(out)


def _use_color() -> bool:
    return sys.stdout.isatty() and "NO_COLOR" not in os.environ


@click.command("plan")
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
@click.option("--format", "fmt", type=click.Choice(["text", "json", "markdown"]), default="text")
@click.option("--detailed-exitcode", is_flag=True, help="Exit 0 without changes, 2 with.")
@click.option(
    "--principal",
    "principals",
    multiple=True,
    metavar="user=NAME,client-id=ID",
    help="Show how this principal's effective quotas change (repeatable).",
)
def command(
    paths: tuple[Path, ...],
    where: TargetingArgs,
    prune: bool | None,
    allow_mass_removal: bool,
    out: Path | None,
    fmt: str,
    detailed_exitcode: bool,
    principals: tuple[str, ...],
) -> None:
    """Show what would change to make the cluster match the desired state in PATHS."""
    wanted = [parse_names(p, "--principal") for p in principals]
    target = where.resolve()
    state, cluster_id = target.load_state_and_id()
    plan = plan_against(
        target, paths, state, cluster_id, prune=prune, allow_mass_removal=allow_mass_removal
    )
    changes = resolution_changes(state, apply_plan(state, plan), wanted) if wanted else ()
    click.echo(_render(plan, fmt, changes), nl=False, color=None)
    if not plan.applyable:
        raise GuardError(f"mass-removal guard: {plan.guard_violation}; nothing saved")
    if out is not None:
        from kquota.render.json import render_plan as render_json

        try:
            out.write_text(render_json(plan), encoding="utf-8")
        except OSError as e:
            raise KquotaError(f"{out}: cannot write plan: {e.strerror or e}") from None
    if detailed_exitcode and not plan.empty:
        sys.exit(2)


def _render(plan: Plan, fmt: str, changes: Sequence[ResolutionChange]) -> str:
    if fmt == "json":
        from kquota.render.json import render_plan as render_json

        return render_json(plan)
    if fmt == "markdown":
        from kquota.render.markdown import render_plan as render_markdown

        return render_markdown(plan, changes)
    from kquota.render.text import render_plan as render_text

    text = render_text(plan, changes)
    return colorize(text) if _use_color() else text
