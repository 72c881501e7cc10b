"""``kquota export``: a cluster's quotas (live or a snapshot file) as desired-state YAML.

The output reads back to exactly the same values, so ``export`` then ``plan`` shows no
changes. With a cluster from kquota.yaml whose policy has a scope, only in-scope entities
are exported (the repository owns those); ``--all`` exports everything.
"""

from __future__ import annotations

from pathlib import Path

import click

from kquota.cli.options import TargetingArgs, targeting_options
from kquota.errors import KquotaError
from kquota.render.desired_yaml import render_desired


@click.command("export")
@targeting_options
@click.option(
    "--out",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Write the YAML to this file (default: standard output).",
)
@click.option("--all", "export_all", is_flag=True, help="Ignore the cluster's ownership scope.")
def command(
    where: TargetingArgs,
    out: Path | None,
    export_all: bool,
) -> None:
    """Write the cluster's quotas as desired-state YAML."""
    target = where.resolve()
    state = target.load_state()
    source = str(where.snapshot) if where.snapshot else (target.label or "the cluster")
    header = f"Exported by kquota from {source}."
    if not export_all:
        policy = target.policy(prune=None, allow_mass_removal=False)
        if policy.scope is not None:
            state = {e: v for e, v in state.items() if policy.in_scope(e)}
            header += " Only entities in the cluster's ownership scope."
    text = render_desired(state, header)
    if out is None:
        click.echo(text, nl=False)
        return
    try:
        out.write_text(text, encoding="utf-8")
    except OSError as e:
        raise KquotaError(f"{out}: cannot write: {e.strerror or e}") from None
