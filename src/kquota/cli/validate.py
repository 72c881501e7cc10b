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

DEFAULT_PATH = Path("quotas")


@click.command("validate")
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
    if paths:
        ok = _validate(list(paths), None)
    else:
        from kquota.config import find_config, load_config

        config = config_path or find_config()
        if config is not None:
            clusters = load_config(config).clusters
            results = [_validate(c.desired_paths(), name) for name, c in sorted(clusters.items())]
            ok = all(results)
        elif DEFAULT_PATH.is_dir():
            ok = _validate([DEFAULT_PATH], None)
        else:
            # ClickException, not UsageError: usage errors must exit 1, never 2.
            raise click.ClickException("no PATHS given, no kquota.yaml and no quotas/ folder here")
    if not ok:
        raise click.exceptions.Exit(1)


def _validate(paths: list[Path], cluster: str | None) -> bool:
    from kquota.desired import DesiredStateError, load_desired

    prefix = f"{cluster}: " if cluster else ""
    try:
        state = load_desired(paths)
    except DesiredStateError as e:
        for problem in e.problems:
            click.echo(str(problem), err=True)
        n = len(e.problems)
        click.echo(f"{prefix}{n} problem{'s' if n != 1 else ''} found", err=True)
        return False
    n, m = len(state.quotas), len(state.files)
    click.echo(
        f"{prefix}ok: {n} entit{'ies' if n != 1 else 'y'} in {m} file{'s' if m != 1 else ''}"
    )
    return True
