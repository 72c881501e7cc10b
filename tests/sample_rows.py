"""Generated usage samples for tests: a principal's series per broker, written as the sample
files kquota reads (JSON Lines, Parquet, Prometheus text exposition)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from kquota.usage.rows import Sample

T0 = 1767225600000
"""2026-01-01T00:00:00Z"""
MINUTE = 60_000
DAY = 24 * 60 * MINUTE


def series(
    user: str | None,
    client_id: str | None,
    metric: str,
    values: Sequence[float],
    *,
    broker: str = "1",
    cluster: str = "prod",
    start: int = T0,
    step: int = 10 * MINUTE,
) -> list[Sample]:
    """series is one sensor's samples: ``values`` one ``step`` apart from ``start``."""
    return [
        Sample(cluster, broker, user, client_id, metric, start + i * step, float(v))
        for i, v in enumerate(values)
    ]


def week(value: float | Sequence[float], step: int = 10 * MINUTE) -> list[float]:
    """week is a week and a step of samples (both ends of a 7d window), cycling ``value``."""
    n = 7 * DAY // step + 1
    cycle = [value] if isinstance(value, (int, float)) else list(value)
    return [float(cycle[i % len(cycle)]) for i in range(n)]


def row(s: Sample) -> dict[str, Any]:
    return {
        "cluster": s.cluster,
        "broker": s.broker,
        "user": s.user,
        "client_id": s.client_id,
        "metric": s.metric,
        "timestamp_ms": s.timestamp_ms,
        "value": s.value,
    }


def write_jsonl(path: Path, samples: Iterable[Sample]) -> Path:
    path.write_text("".join(json.dumps(row(s)) + "\n" for s in samples), encoding="utf-8")
    return path


def write_parquet(path: Path, samples: Iterable[Sample]) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from kquota.usage.samples import parquet_schema

    rows = [row(s) for s in samples]
    pq.write_table(pa.Table.from_pylist(rows, schema=parquet_schema(pa)), path)
    return path
