"""``kquota snapshot``: describe-all snapshots as files, for offline plans and fleet jobs.

One cluster (the usual targeting options) to ``--out FILE``, or ``--all`` clusters of
kquota.yaml to ``--out DIR/<cluster>.<format>``. Formats: ``json`` and ``jsonl`` (what ``plan
--snapshot`` and the fleet read; one row per entity) and ``parquet`` (one row per entity and
key, for Spark and SQL engines). Every format records the cluster name, its cluster id and the
capture time.
"""

from __future__ import annotations

import datetime as dt
import sys
from dataclasses import replace
from pathlib import Path

import click

from kquota.cli.options import TargetingArgs, targeting_options
from kquota.errors import KquotaError, UsageError

FORMATS = ("json", "jsonl", "parquet")


def _format_of(path: Path, given: str | None) -> str:
    if given:
        return given
    suffix = path.suffix.lstrip(".")
    if suffix not in FORMATS:
        raise UsageError(f"{path}: cannot tell the format from the name; give --format")
    return suffix


def _write(path: Path, fmt: str, where: TargetingArgs, label_default: str | None) -> int:
    from kquota.snapshot import dump_snapshot

    target = where.resolve()
    if target.offline:
        raise UsageError("snapshot describes a live cluster: --snapshot is its output, not input")
    state, cluster_id = target.load_state_and_id()
    captured_at = dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat()
    cluster = target.label or label_default
    if fmt == "parquet":
        from kquota.fleet.parquet import write_parquet_snapshot

        write_parquet_snapshot(
            state, path, cluster=cluster or "", cluster_id=cluster_id, captured_at=captured_at
        )
    else:
        meta = {"cluster": cluster, "cluster_id": cluster_id, "captured_at": captured_at}
        path.write_bytes(dump_snapshot(state, fmt, meta))  # type: ignore[arg-type]
    return len(state)


@click.command("snapshot")
@targeting_options
@click.option("--all", "all_clusters", is_flag=True, help="Every cluster of kquota.yaml.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), help="Default: from --out's suffix.")
@click.option(
    "--out",
    required=True,
    type=click.Path(path_type=Path),
    help="A file (one cluster) or a directory (--all).",
)
def command(
    where: TargetingArgs,
    all_clusters: bool,
    fmt: str | None,
    out: Path,
) -> None:
    """Write describe-all snapshots (JSON, JSON Lines or Parquet) of live clusters."""
    if not all_clusters:
        n = _write(out, _format_of(out, fmt), where, None)
        click.echo(f"{n} entities written to {out}")
        return
    if where.cluster_name or where.bootstrap_server or where.snapshot:
        raise UsageError("--all snapshots every cluster of kquota.yaml: drop --cluster, "
                         "--bootstrap-server and --snapshot")  # fmt: skip
    from kquota.config import find_config, load_config

    path = where.config_path or find_config()
    if path is None:
        raise UsageError("--all needs a kquota.yaml (or --config PATH)")
    out.mkdir(parents=True, exist_ok=True)
    failed = 0
    for name in sorted(load_config(path).clusters):
        target_file = out / f"{name}.{fmt or 'jsonl'}"
        try:
            named = replace(where, cluster_name=name, config_path=path)
            n = _write(target_file, fmt or "jsonl", named, name)
            click.echo(f"{name}: {n} entities written to {target_file}")
        except KquotaError as e:
            failed += 1
            click.echo(f"error: cluster {name}: {e}", err=True)
    if failed:
        sys.exit(1)
