"""``kquota show PLAN.json``: a saved plan, rendered, as apply will read it (Terraform's show).

A single plan (``plan --out``, or one ``<cluster>.plan.json`` of a fleet) or a whole fleet
(its ``fleet-plan.json``) as text, markdown or JSON. The file goes through apply's strict
reader (:mod:`kquota.operations.show`): a doctored plan gets apply's refusal and exit 1; a
plan a guard stops is shown with the verdict first, and what apply would refuse in a plan as
saved is warned on standard error. Exit 0 when shown. Offline: no connection.
"""

from __future__ import annotations

from pathlib import Path

import click

from kquota.cli.examples import EXAMPLES
from kquota.cli.options import PLAN_FORMAT_HELP, format_option
from kquota.operations.show import ShownPlan, load_policy_for, show_plan
from kquota.render.verdict import json_plan


@click.command("show", epilog=EXAMPLES["show"])
@click.argument("plan_file", type=click.Path(path_type=Path, dir_okay=False))
@format_option(["text", "json", "markdown"], PLAN_FORMAT_HELP)
@click.option(
    "--cluster",
    "cluster_name",
    help="Check scope and guard under this kquota.yaml cluster's policy "
    "(default: the plan's own cluster when kquota.yaml has it, else the defaults).",
)
@click.option(
    "--config",
    "config_path",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Project config (default: ./kquota.yaml if present).",
)
def command(plan_file: Path, fmt: str, cluster_name: str | None, config_path: Path | None) -> None:
    """Show a saved plan (plan --out) or a fleet's fleet-plan.json, as apply will read it.

    \b
    Examples:
      kquota show plan.json
      kquota show plan.json --format markdown
      kquota show out/fleet-plan.json --format json
    """
    shown = show_plan(plan_file, load_policy_for(config_path, cluster_name))
    for s in shown:
        for reason in s.unapplyable:
            click.echo(f"warning: {s.path}: {reason}; apply will refuse this plan", err=True)
        for guard in s.live:
            click.echo(f"note: {s.path}: {guard}; its verdict is not in the file", err=True)
        if s.principals:
            click.echo(
                f"note: {s.path}: names {s.principals} principals whose effective quotas apply "
                "checks again on the live cluster (--protect); their verdict is not shown here",
                err=True,
            )
    fleet = len(shown) != 1 or plan_file.name == "fleet-plan.json"
    click.echo(_fleet(shown, fmt) if fleet else _one(shown[0], fmt), nl=False)


def _one(s: ShownPlan, fmt: str) -> str:
    from kquota.render.markdown import render_plan as render_markdown
    from kquota.render.text import render_plan as render_text

    renderers = {"json": json_plan, "markdown": render_markdown, "text": render_text}
    return renderers[fmt](s.plan)


def _fleet(shown: list[ShownPlan], fmt: str) -> str:
    stopped = sum(1 for s in shown if s.plan.refusal is not None)
    changed = sum(1 for s in shown if not s.plan.empty)
    if fmt == "json":
        import orjson

        data = {
            "clusters": [orjson.loads(_one(s, "json")) for s in shown],
            "totals": {"clusters": len(shown), "clusters_with_changes": changed,
                       "stopped": stopped},
        }  # fmt: skip
        return orjson.dumps(data, option=orjson.OPT_INDENT_2).decode() + "\n"
    head = (
        f"kquota fleet plan: {len(shown)} clusters, {changed} with changes, "
        f"{stopped} stopped by a guard"
    )
    title = f"### {head}" if fmt == "markdown" else head
    return f"{title}\n\n" + "\n".join(_one(s, fmt) for s in shown)
