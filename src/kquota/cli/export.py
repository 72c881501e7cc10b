"""``kquota export``: a cluster's quotas (live or a snapshot file) as desired-state YAML.

The output reads back to exactly the same values, so ``export`` then ``plan`` shows no
changes. It never holds what ``validate`` refuses: an entity desired state cannot declare
(an unknown entity type, a hostname, a second spelling of one ip address, a value the broker
should not hold) is left out, named in a warning, and the exit code is 1.

With a cluster from kquota.yaml whose policy has a scope, only in-scope entities
are exported (the repository owns those); ``--all`` exports everything.
"""

from __future__ import annotations

from pathlib import Path

import click

from kquota.cli.examples import EXAMPLES
from kquota.cli.options import TargetingArgs, targeting_options
from kquota.cli.output import refuse_existing, refuse_inputs, write_output
from kquota.cli.timeout_option import timeout_option
from kquota.errors import KquotaError
from kquota.model import display_entity
from kquota.operations.export import export_desired


@click.command("export", epilog=EXAMPLES["export"])
@targeting_options
@click.option(
    "--out",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Write the YAML to this file (default: standard output).",
)
@click.option("--all", "export_all", is_flag=True, help="Ignore the cluster's ownership scope.")
@click.option("--force", is_flag=True, help="Replace the --out file if it exists (never an input).")
@timeout_option("export")
def command(
    where: TargetingArgs,
    out: Path | None,
    export_all: bool,
    force: bool,
) -> None:
    """Write the cluster's quotas as desired-state YAML."""
    target = where.resolve()
    # Before the network: an export replaces no input, and no existing file unasked (it is
    # desired state, perhaps edited by hand since the last export).
    refuse_inputs(out, where.inputs())
    refuse_existing(out, force)
    exported = export_desired(target, export_all=export_all)
    for entity, why in exported.left_out:
        click.echo(f"warning: not exported: {display_entity(entity)}: {why}", err=True)
    if out is None:
        click.echo(exported.text, nl=False)
    else:
        write_output(out, exported.text, overwrite=force)
    if exported.left_out:
        n = len(exported.left_out)
        raise KquotaError(
            f"{n} entit{'ies' if n != 1 else 'y'} left out of the export: "
            "desired state cannot declare them (see the warnings above)"
        )
