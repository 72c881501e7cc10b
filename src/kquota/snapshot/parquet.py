"""Snapshots as Parquet: one row per (cluster, entity, key, value), with cluster id and time.

Columns: ``cluster``, ``cluster_id``, ``captured_at`` (UTC ISO-8601), ``entity`` (canonical
string, see :mod:`kquota.snapshot.rows`; the join key), ``entity_types`` (``user,client-id``),
``user``, ``client_id``, ``ip`` (names for querying; null for absent *or* default, which is why
``entity`` is the key), ``key``, ``value`` (double: the exact IEEE 754 value from the wire).
Written with pyarrow (the ``spark`` extra), read by Spark natively or by pyarrow here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kquota.errors import KquotaError
from kquota.model import CLIENT_ID, IP, USER, QuotaState, sorted_entities
from kquota.snapshot.rows import entity_of, row_key


def _pyarrow() -> Any:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise KquotaError(
            "Parquet needs pyarrow: install kquota with the spark extra "
            "(pip install 'kquota[spark]')"
        ) from None
    return pa, pq


def write_parquet_snapshot(
    state: QuotaState, path: Path, *, cluster: str, cluster_id: str | None, captured_at: str
) -> int:
    """write_parquet_snapshot writes ``state`` as rows; returns the number of rows."""
    pa, pq = _pyarrow()
    cols: dict[str, list[Any]] = {
        name: []
        for name in (
            "cluster", "cluster_id", "captured_at", "entity", "entity_types",
            "user", "client_id", "ip", "key", "value",
        )
    }  # fmt: skip
    for entity in sorted_entities(state):
        ek = row_key(entity)
        types = ",".join(entity.types)
        names = dict(entity.parts)
        for key in sorted(state[entity]):
            cols["cluster"].append(cluster)
            cols["cluster_id"].append(cluster_id)
            cols["captured_at"].append(captured_at)
            cols["entity"].append(ek)
            cols["entity_types"].append(types)
            cols["user"].append(names.get(USER))
            cols["client_id"].append(names.get(CLIENT_ID))
            cols["ip"].append(names.get(IP))
            cols["key"].append(key)
            cols["value"].append(state[entity][key])
    schema = pa.schema(
        [(n, pa.float64() if n == "value" else pa.string()) for n in cols]  # all strings but value
    )
    pq.write_table(pa.table(cols, schema=schema), path)
    return len(cols["key"])


def read_parquet_snapshot(path: Path) -> QuotaState:
    _, pq = _pyarrow()
    try:
        table = pq.read_table(path, columns=["entity", "key", "value"])
    except (OSError, ValueError) as e:
        raise KquotaError(f"{path}: not a kquota Parquet snapshot: {e}") from None
    state: QuotaState = {}
    cache: dict[str, Any] = {}
    for ek, key, value in zip(
        table.column("entity").to_pylist(),
        table.column("key").to_pylist(),
        table.column("value").to_pylist(),
        strict=True,
    ):
        entity = cache.get(ek)
        if entity is None:
            entity = cache[ek] = entity_of(ek)
        state.setdefault(entity, {})[key] = value
    return state
