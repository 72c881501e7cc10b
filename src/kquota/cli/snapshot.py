"""``kquota snapshot``: describe-all snapshots as files, for offline plans and fleet jobs.

One cluster (the usual targeting options) to ``--out FILE``, or ``--all`` clusters of
kquota.yaml to ``--out DIR/<cluster>.<format>``. Formats: ``json`` and ``jsonl`` (what ``plan
--snapshot`` and the fleet read; one row per entity) and ``parquet`` (one row per entity and
key, for Spark and SQL engines). Every format records the cluster name, its cluster id and the
capture time.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from kquota.cli.examples import EXAMPLES
from kquota.cli.options import TargetingArgs, format_option, live_targeting_options
from kquota.cli.output import refuse_inputs, safe_file_stem
from kquota.cli.timeout_option import timeout_option
from kquota.errors import KquotaError, UsageError
from kquota.operations.snapshot import FORMATS, write_snapshot_file
from kquota.target import configured_cluster_names


def _format_of(path: Path, given: str | None) -> str:
    if given:
        return given
    suffix = path.suffix.lstrip(".")
    if suffix not in FORMATS:
        raise UsageError(f"{path}: cannot tell the format from the name; give --format")
    return suffix


def _write(path: Path, fmt: str, where: TargetingArgs, label_default: str | None) -> int:
    return write_snapshot_file(where.resolve(), path, fmt, label_default)


@click.command("snapshot", epilog=EXAMPLES["snapshot"])
@live_targeting_options
@click.option("--all", "all_clusters", is_flag=True, help="Every cluster of kquota.yaml.")
@format_option(FORMATS, "Default: from --out's suffix.", default=None)
@click.option(
    "--out",
    required=True,
    type=click.Path(path_type=Path),
    help="A file (one cluster) or a directory (--all).",
)
@timeout_option("snapshot")
def command(
    where: TargetingArgs,
    all_clusters: bool,
    fmt: str | None,
    out: Path,
) -> None:
    """Write describe-all snapshots (JSON, JSON Lines or Parquet) of live clusters."""
    # A snapshot replaces the previous one (a scheduled capture), but never a file it reads.
    refuse_inputs(out, where.inputs())
    if not all_clusters:
        n = _write(out, _format_of(out, fmt), where, None)
        click.echo(f"{n} entities written to {out}")
        return
    if where.cluster_name or where.bootstrap_server:
        raise UsageError(
            "--all snapshots every cluster of kquota.yaml: drop --cluster and --bootstrap-server"
        )
    path, names = configured_cluster_names(where.config_path)
    for name in names:  # every name checked before the folder is made or a cluster reached
        safe_file_stem(name)
    out.mkdir(parents=True, exist_ok=True)
    failed = 0
    for name in names:
        target_file = out / f"{safe_file_stem(name)}.{fmt or 'jsonl'}"
        try:
            named = where.named(name, path)
            n = _write(target_file, fmt or "jsonl", named, name)
            click.echo(f"{name}: {n} entities written to {target_file}")
        except KquotaError as e:
            failed += 1
            click.echo(f"error: cluster {name}: {e}", err=True)
    if failed:
        sys.exit(1)
