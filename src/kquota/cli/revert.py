"""``kquota revert``: undo an apply from the audit trail, as a plan to review and apply.

The apply is found by its plan id (``--plan-id``) or as the latest one (``--last``) on the
audit topic; the inverse plan is made against the live cluster and shown like any plan.
``--out`` saves it: ``kquota apply PLAN.json`` applies it through the same road as every
saved plan. Keys changed since the apply wrote them stop the revert unless ``--force``.
"""

from __future__ import annotations

from pathlib import Path

import click

from kquota.cli.examples import EXAMPLES
from kquota.cli.options import TargetingArgs, format_option, live_targeting_options
from kquota.cli.timeout_option import timeout_option
from kquota.errors import UsageError
from kquota.plan.types import Plan


@click.command("revert", epilog=EXAMPLES["revert"])
@live_targeting_options
@click.option("--audit-topic", help="The audit topic the apply was recorded on.")
@click.option(
    "--plan-id",
    "plan_ids",
    multiple=True,
    help="The plan id of the apply to undo (kquota history lists them); repeat it to undo "
    "several applies together (the steps of a ramp).",
)
@click.option("--last", is_flag=True, help="Undo the latest apply recorded on the topic.")
@click.option("--force", is_flag=True, help="Revert even keys changed since the apply.")
@format_option(["text", "json", "markdown"], "How to show the inverse plan.")
@click.option(
    "--out",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Save the inverse plan for review and kquota apply.",
)
@timeout_option("revert")
def command(
    where: TargetingArgs,
    audit_topic: str | None,
    plan_ids: tuple[str, ...],
    last: bool,
    force: bool,
    fmt: str,
    out: Path | None,
) -> None:
    """Make the plan that undoes an apply recorded on the audit topic."""
    from kquota.operations.revert import revert
    from kquota.planfile.writer import write_plan_file
    from kquota.render.history import revert_heading

    if bool(plan_ids) == last:
        raise UsageError("revert needs one of --plan-id ID or --last (not both)")
    target = where.resolve(require_source=False)
    if target.offline:
        raise UsageError("revert reads the live cluster: give --cluster or --bootstrap-server")
    result = revert(
        target,
        audit_topic=audit_topic,
        plan_ids=plan_ids,
        force=force,
    )
    click.echo(revert_heading(result), nl=False, err=fmt != "text")
    plan = result.plan
    if plan.empty:
        click.echo("nothing to revert: the cluster already holds every before value")
        return
    click.echo(_render(plan, fmt), nl=False)
    if out is not None:
        for missing in write_plan_file(plan, out):
            click.echo(f"warning: {out}: {missing}; apply will refuse this plan", err=True)
        click.echo(f"saved the inverse plan to {out}: review it, then kquota apply {out}", err=True)


def _render(plan: Plan, fmt: str) -> str:
    if fmt == "json":
        from kquota.render.verdict import json_plan

        return json_plan(plan)
    if fmt == "markdown":
        from kquota.render.markdown import render_plan as render_markdown

        return render_markdown(plan, ())
    from kquota.render.text import render_plan as render_text

    return render_text(plan)
