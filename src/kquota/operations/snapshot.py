"""The snapshot operation: a target's describe-all state written as a file."""

from __future__ import annotations

from pathlib import Path

from kquota.target import Target
from kquota.timestamps import utc_now_iso

FORMATS = ("json", "jsonl", "parquet")


def write_snapshot_file(target: Target, path: Path, fmt: str, label_default: str | None) -> int:
    """write_snapshot_file captures the target's state to ``path`` in ``fmt`` with its
    cluster name, id and capture time; it returns the number of entities written."""
    from kquota.snapshot.files import dump_snapshot

    state, cluster_id = target.load_state_and_id()
    captured_at = utc_now_iso()
    cluster = target.label or label_default
    if fmt == "parquet":
        from kquota.snapshot.parquet import write_parquet_snapshot

        write_parquet_snapshot(
            state, path, cluster=cluster or "", cluster_id=cluster_id, captured_at=captured_at
        )
    else:
        meta = {"cluster": cluster, "cluster_id": cluster_id, "captured_at": captured_at}
        path.write_bytes(dump_snapshot(state, fmt, meta))  # type: ignore[arg-type]
    return len(state)
