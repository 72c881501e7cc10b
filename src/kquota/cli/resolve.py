"""``kquota resolve``: a principal's effective quotas and the match each comes from.

KIP-546's resolve API, computed by kquota from a snapshot file, the desired state (what the
YAML will give once applied), or a live describe.
"""

from __future__ import annotations

from pathlib import Path

import click

from kquota.cli import console
from kquota.cli.connect_options import parse_principal
from kquota.cli.examples import EXAMPLES
from kquota.cli.options import TargetingArgs, echo_warnings, format_option, targeting_options
from kquota.cli.timeout_option import timeout_option
from kquota.errors import UsageError
from kquota.operations.desired import LoadedDesired, load_desired_state
from kquota.operations.resolve import resolve_quotas
from kquota.plan.resolver import Principal
from kquota.target import Target


@click.command("resolve", epilog=EXAMPLES["resolve"])
@click.option(
    "--names",
    required=True,
    metavar="user=NAME,client-id=ID",
    help="Who asks: user (principal name), client-id and/or ip.",
)
@click.option(
    "--desired",
    "desired_paths",
    multiple=True,
    type=click.Path(path_type=Path),
    help="Resolve against desired-state YAML instead of the cluster (repeatable).",
)
@targeting_options
@format_option(["text", "json"], "Output format.")
@click.option(
    "--explain",
    is_flag=True,
    help="Also show the precedence ladder: every level for this principal, what each sets, "
    "and which wins per key and why (docs/precedence.md).",
)
@timeout_option("resolve")
def command(
    names: str,
    desired_paths: tuple[Path, ...],
    where: TargetingArgs,
    fmt: str,
    explain: bool,
) -> None:
    """Print the effective quotas of a user/client-id (or ip), with their sources."""
    principal = parse_principal(names, "--names")
    if desired_paths and (where.snapshot or where.bootstrap_server):
        raise UsageError("--desired resolves the YAML; it excludes --snapshot/--bootstrap-server")
    source: Target | LoadedDesired
    if desired_paths:
        source = load_desired_state(desired_paths)
        echo_warnings(source.warnings)
    else:
        source = where.resolve()
    if explain:
        _explain(source, principal, fmt)
        return
    resolution = resolve_quotas(source, principal)
    if fmt == "json":
        from kquota.render.json import render_resolution as render_json

        click.echo(render_json(resolution), nl=False)
    else:
        from kquota.render.text import render_resolution as render_text

        console.echo(render_text(resolution), console.resolution_colors)


def _explain(source: Target | LoadedDesired, principal: Principal, fmt: str) -> None:
    from kquota.operations.resolve import explain_quotas

    found = explain_quotas(source, principal)
    if fmt == "json":
        import json

        click.echo(json.dumps(found.to_data(), indent=2, sort_keys=True))
    else:
        from kquota.render.explain import render_explanation

        console.echo(render_explanation(found), console.resolution_colors)
