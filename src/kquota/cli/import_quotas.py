"""``kquota import --from strimzi|terraform|jikkou PATH...``: another tool's quotas as kquota YAML.

The output is what ``kquota export`` writes (and reads back through ``validate``'s loader),
so importing and then planning against the cluster the other tool manages shows no changes.
Every declaration is carried over or refused with file, line and reason; when anything is
refused nothing is written and the exit code is 1. Skipped resources (other kinds, other
resource types) are named in warnings. ``--out`` writes the file whole or not at all, and
never replaces an existing file without ``--force``.

The command is named ``import``, a Python keyword, hence this module's name.
"""

from __future__ import annotations

from pathlib import Path

import click

from kquota.cli.examples import EXAMPLES
from kquota.cli.options import echo_warnings
from kquota.cli.output import refuse_inputs, write_output
from kquota.errors import KquotaError
from kquota.operations.migrate import SOURCES, ImportRefused, import_desired


@click.command("import", epilog=EXAMPLES["import"])
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--from",
    "source",
    required=True,
    type=click.Choice(sorted(SOURCES)),
    help="The tool whose declarations PATHS hold.",
)
@click.option(
    "--out",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Write the YAML to this file (default: standard output).",
)
@click.option("--force", is_flag=True, help="Replace the --out file if it exists.")
def command(paths: tuple[Path, ...], source: str, out: Path | None, force: bool) -> None:
    """Convert Strimzi, Terraform or Jikkou quota declarations to desired-state YAML."""
    refuse_inputs(out, [("PATHS", p) for p in paths])
    try:
        imported = import_desired(source, paths)
    except ImportRefused as e:
        echo_warnings(e.warnings)
        for problem in e.problems:
            click.echo(str(problem), err=True)
        n = len(e.problems)
        raise KquotaError(
            f"{n} problem{'s' if n != 1 else ''}: nothing imported"
            + ("" if out is None else f", {out} not written")
        ) from None
    echo_warnings(imported.warnings)
    if out is None:
        click.echo(imported.text, nl=False)
        return
    write_output(out, imported.text, overwrite=force)
    n = imported.entities
    click.echo(f"wrote {out}: {n} entit{'ies' if n != 1 else 'y'}", err=True)
