"""``kquota validate [PATHS...]``: check desired-state files offline, with the broker's rules.

No network: everything the controller would refuse (and a little more, see
:mod:`kquota.desired.rules`) is reported with ``file:line:column``, all problems at once.
Exit 0 when valid, 1 on problems (never 2: 2 means "changes" elsewhere).

Without PATHS: with a ``kquota.yaml`` (or ``--config``), each cluster's own desired-state
paths are validated separately, as plan will read them (two clusters may well declare the
same entity); without one, ``quotas/``.
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from kquota.cli.examples import EXAMPLES
from kquota.errors import UsageError


@click.command("validate", epilog=EXAMPLES["validate"])
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option(
    "--config",
    "config_path",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Project config whose clusters' paths to validate (default: ./kquota.yaml).",
)
@click.option(
    "--print-schema",
    is_flag=True,
    help="Print the JSON Schema of desired-state files and exit.",
)
def command(paths: tuple[Path, ...], config_path: Path | None, print_schema: bool) -> None:
    """Validate desired-state files and folders (default: each cluster's, else quotas/)."""
    if print_schema:
        from kquota.desired.schema import json_schema

        click.echo(json.dumps(json_schema(), indent=2))
        return
    from kquota.cli.options import echo_warnings
    from kquota.operations.desired import validate_desired

    try:
        results = validate_desired(paths, config=config_path)
    except UsageError as e:
        # ClickException, not UsageError: usage errors must exit 1, never 2.
        raise click.ClickException(str(e)) from None
    for result in results:
        prefix = f"{result.cluster}: " if result.cluster else ""
        echo_warnings(result.warnings)
        if result.ok:
            n, m = result.entities, result.files
            click.echo(
                f"{prefix}ok: {n} entit{'ies' if n != 1 else 'y'} in {m} "
                f"file{'s' if m != 1 else ''}"
            )
            continue
        for problem in result.problems:
            click.echo(str(problem), err=True)
        n = len(result.problems)
        click.echo(f"{prefix}{n} problem{'s' if n != 1 else ''} found", err=True)
    if not all(result.ok for result in results):
        raise click.exceptions.Exit(1)
