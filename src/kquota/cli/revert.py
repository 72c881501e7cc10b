"""``kquota revert``: undo an apply from the audit trail, as a plan to review and apply.

The apply is found by its plan id (``--plan-id``) or as the latest one (``--last``) on the
audit topic; the inverse plan is made against the live cluster and shown like any plan.
``--out`` saves it: ``kquota apply PLAN.json`` applies it through the same road as every
saved plan. Keys changed since the apply wrote them stop the revert unless ``--force``.

The audit trail is evidence, not input: events that do not verify with kquota.yaml's
``audit_signing`` keys are refused, unsigned ones unless ``--allow-unsigned``. The heading
says which apply the plan reverts in every format: on stderr beside JSON and markdown, whose
own output carries it too (a ``revert`` object, a bold first line).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from kquota.cli.examples import EXAMPLES
from kquota.cli.options import TargetingArgs, format_option, live_targeting_options
from kquota.cli.timeout_option import timeout_option
from kquota.errors import UsageError

if TYPE_CHECKING:
    from kquota.history.results import RevertResult


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
@click.option(
    "--force",
    is_flag=True,
    help="Revert even keys changed since the apply, and replace an existing --out file "
    "(never an input).",
)
@click.option(
    "--allow-unsigned",
    is_flag=True,
    help="Revert events that carry no signature (an older trail, or no audit_signing key "
    "configured), on the trail's structural checks alone.",
)
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
    allow_unsigned: bool,
    fmt: str,
    out: Path | None,
) -> None:
    """Make the plan that undoes an apply recorded on the audit topic."""
    from kquota.cli.output import refuse_existing, refuse_inputs
    from kquota.operations.revert import NO_KEY_WARNING, revert
    from kquota.planfile.writer import write_plan_file
    from kquota.render.history import revert_heading

    if bool(plan_ids) == last:
        raise UsageError("revert needs one of --plan-id ID or --last (not both)")
    refuse_inputs(out, where.inputs())
    refuse_existing(out, force)
    target = where.resolve(require_source=False)
    if target.offline:
        raise UsageError("revert reads the live cluster: give --cluster or --bootstrap-server")
    if target.audit_keys() is None:
        # Said before the read, so a refusal below is never the first a user hears of it.
        click.echo(NO_KEY_WARNING, err=True)
    result = revert(
        target,
        audit_topic=audit_topic,
        plan_ids=plan_ids,
        force=force,
        allow_unsigned=allow_unsigned,
    )
    for warning in result.warnings:
        if warning != NO_KEY_WARNING:
            click.echo(warning, err=True)
    click.echo(revert_heading(result), nl=False, err=fmt != "text")
    plan = result.plan
    if plan.empty:
        # JSON and markdown still say, on stdout, which apply this empty revert is of.
        click.echo(
            "nothing to revert: the cluster already holds every before value", err=fmt != "text"
        )
        if fmt != "text":
            click.echo(_render(result, fmt), nl=False)
        return
    click.echo(_render(result, fmt), nl=False)
    if out is not None:
        for missing in write_plan_file(plan, out):
            click.echo(f"warning: {out}: {missing}; apply will refuse this plan", err=True)
        click.echo(f"saved the inverse plan to {out}: review it, then kquota apply {out}", err=True)


def _render(result: RevertResult, fmt: str) -> str:
    plan = result.plan
    if fmt == "json":
        import json

        from kquota.render.history import revert_data
        from kquota.render.verdict import json_plan

        data = {"revert": revert_data(result), **json.loads(json_plan(plan))}
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    if fmt == "markdown":
        from kquota.render.history import revert_markdown
        from kquota.render.markdown import render_plan as render_markdown

        return revert_markdown(result) + render_markdown(plan, ())
    from kquota.render.text import render_plan as render_text

    return render_text(plan)
