"""``kquota validate [PATHS...]``: check desired-state files offline, with the broker's rules.

No network: everything the controller would refuse (and a little more, see
:mod:`kquota.desired.rules`) is reported with ``file:line:column``, all problems at once.
Exit 0 when valid, 1 on problems (never 2: 2 means "changes" elsewhere).
"""

from __future__ import annotations

import json
from pathlib import Path

import click

DEFAULT_PATH = Path("quotas")


@click.command("validate")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option(
    "--print-schema",
    is_flag=True,
    help="Print the JSON Schema of desired-state files and exit.",
)
def command(paths: tuple[Path, ...], print_schema: bool) -> None:
    """Validate desired-state files and folders (default: quotas/)."""
    if print_schema:
        from kquota.desired.schema import json_schema

        click.echo(json.dumps(json_schema(), indent=2))
        return
    from kquota.desired import DesiredStateError, load_desired

    if not paths:
        if not DEFAULT_PATH.is_dir():
            # ClickException, not UsageError: usage errors must exit 1, never 2.
            raise click.ClickException("no PATHS given and no quotas/ folder here")
        paths = (DEFAULT_PATH,)
    try:
        state = load_desired(paths)
    except DesiredStateError as e:
        for problem in e.problems:
            click.echo(str(problem), err=True)
        n = len(e.problems)
        click.echo(f"{n} problem{'s' if n != 1 else ''} found", err=True)
        raise click.exceptions.Exit(1) from None
    n, m = len(state.quotas), len(state.files)
    click.echo(f"ok: {n} entit{'ies' if n != 1 else 'y'} in {m} file{'s' if m != 1 else ''}")
