"""``kquota resolve``: a principal's effective quotas and the match each comes from.

KIP-546's resolve API, computed by kquota from a snapshot file, the desired state (what the
YAML will give once applied), or a live describe.
"""

from __future__ import annotations

from pathlib import Path

import click

from kquota.cli.options import TargetingArgs, load_desired_quotas, targeting_options
from kquota.cli.plan import parse_names
from kquota.errors import UsageError
from kquota.plan.resolver import resolve


@click.command("resolve")
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
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text")
def command(
    names: str,
    desired_paths: tuple[Path, ...],
    where: TargetingArgs,
    fmt: str,
) -> None:
    """Print the effective quotas of a user/client-id (or ip), with their sources."""
    principal = parse_names(names, "--names")
    if desired_paths and (where.snapshot or where.bootstrap_server):
        raise UsageError("--desired resolves the YAML; it excludes --snapshot/--bootstrap-server")
    if desired_paths:
        state = load_desired_quotas(list(desired_paths)).quotas
    else:
        state = where.resolve().load_state()
    resolution = resolve(state, principal.user, principal.client_id, principal.ip)
    if fmt == "json":
        from kquota.render.json import render_resolution as render_json

        click.echo(render_json(resolution), nl=False)
    else:
        from kquota.render.text import render_resolution as render_text

        click.echo(render_text(resolution), nl=False)
