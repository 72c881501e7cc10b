"""One Spark partition's series profiled in pyarrow: the executors' half of the Spark profile.

The rows of a partition hold every sample of their series (the job partitions by series).
Here, column by column in pyarrow's compute functions, with Python only per series, never
per sample, the rules of :func:`kquota.usage.profile.profile`:

- rows are sorted by series, time and value; a series is a run of equal (cluster, broker,
  user, client-id, metric), a null tag equal only to a null one;
- a time seen twice in a series is kept once; two different values at one time are a
  conflict, reported as the least and the greatest (the driver words the error);
- the window is the cluster's ``start`` onward (the newest sample ends it by definition);
- each series' window is sorted by value, and the nearest ranks of
  :func:`~kquota.usage.profile.percentile_rank` are picked from it, so the values are the
  local engine's, exactly.

Out: one row per series (:data:`OUT_SCHEMA`; ``n`` 0 where no sample is in the window,
``read`` its samples before the window) and one per conflict (``conflict_ms`` set).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from decimal import Decimal
from typing import Any

SERIES = ("cluster", "broker", "user", "client_id", "metric")

OUT_SCHEMA = (
    "cluster string, broker string, user string, client_id string, metric string, "
    "read long, n long, first_ms long, last_ms long, max double, above_zero long, "
    "picked array<double>, conflict_ms long, low double, high double"
)
"""A partition's output, as Spark's DDL."""


def profile_partition(
    starts: Mapping[str, int], wanted: Sequence[Decimal], batches: Iterator[Any]
) -> Iterator[Any]:
    """profile_partition profiles the series of ``batches`` (sample rows, every error row
    already refused) over the window from ``starts[cluster]``, picking ``wanted``
    percentiles; yields record batches of :data:`OUT_SCHEMA`."""
    import pyarrow as pa
    import pyarrow.compute as pc

    given = list(batches)
    table = pa.Table.from_batches(given) if given else None
    if table is None or table.num_rows == 0:
        return
    by = [(c, "ascending") for c in (*SERIES, "timestamp_ms", "value")]
    table = table.take(pc.sort_indices(table, sort_keys=by))  # nulls last, together
    rows = table.num_rows
    new_series = _starts_of_runs(pa, pc, [_array(pa, table[c]) for c in SERIES])
    ids = pc.subtract(pc.cumulative_sum(pc.cast(new_series, pa.int64())), 1)
    keys = table.select(list(SERIES)).take(pc.indices_nonzero(new_series))
    ts, value = _array(pa, table["timestamp_ms"]), _array(pa, table["value"])
    # One sample a series and time: the first of a run of equal times is the least value.
    same_time = pc.and_(
        pc.invert(new_series.slice(1)), pc.equal(ts.slice(1), ts.slice(0, rows - 1))
    )
    repeated = pa.concat_arrays([pa.array([False]), _array(pa, same_time)])
    conflicts = _conflicts(pa, pc, repeated, value, ids, ts, keys)
    kept = pc.invert(repeated)
    ids, ts, value = (pc.filter(a, kept) for a in (ids, ts, value))
    cluster_of = keys["cluster"].to_pylist()
    start = pa.array([starts[c] for c in cluster_of], pa.int64())
    read = _counts(pa, pc, ids, len(cluster_of))
    inside = pc.greater_equal(ts, pc.take(start, ids))
    ids, ts, value = (pc.filter(a, inside) for a in (ids, ts, value))
    order = pc.sort_indices(
        pa.table({"id": ids, "value": value}),
        sort_keys=[("id", "ascending"), ("value", "ascending")],
    )
    ordered = pc.take(value, order)
    n = _counts(pa, pc, ids, len(cluster_of))
    wanted_at: list[int] = []
    offset = 0
    for count in n:
        wanted_at += [offset + _rank(p, count) - 1 for p in wanted] if count else []
        offset += count
    picked_flat = pc.take(ordered, pa.array(wanted_at, pa.int64())).to_pylist()
    positive = pc.cast(pc.greater(value, 0.0), pa.int64())
    agg = (
        pa.table({"id": ids, "ts": ts, "value": value, "positive": positive})
        .group_by("id")
        .aggregate([("ts", "min"), ("ts", "max"), ("value", "max"), ("positive", "sum")])
    )
    by_id = {
        r["id"]: r
        for r in agg.to_pylist()  # one row per series in the window, not per sample
    }
    series = len(cluster_of)
    in_window = [by_id.get(i) for i in range(series)]
    picked: list[list[float] | None] = []
    at = 0
    for r in in_window:
        picked.append(None if r is None else picked_flat[at : at + len(wanted)])
        at += 0 if r is None else len(wanted)

    def column(name: str, kind: Any) -> Any:
        return pa.array([None if r is None else r[name] for r in in_window], kind)

    yield pa.RecordBatch.from_arrays(
        [
            *(keys[c].combine_chunks() for c in SERIES),
            pa.array(read, pa.int64()),
            pa.array(n, pa.int64()),
            column("ts_min", pa.int64()),
            column("ts_max", pa.int64()),
            column("value_max", pa.float64()),
            column("positive_sum", pa.int64()),
            pa.array(picked, pa.list_(pa.float64())),
            pa.nulls(series, pa.int64()),
            pa.nulls(series, pa.float64()),
            pa.nulls(series, pa.float64()),
        ],
        names=[*SERIES, *_OUT_NAMES],
    )
    if conflicts:
        yield conflicts


_OUT_NAMES = (
    "read",
    "n",
    "first_ms",
    "last_ms",
    "max",
    "above_zero",
    "picked",
    "conflict_ms",
    "low",
    "high",
)


def _rank(p: Decimal, n: int) -> int:
    from kquota.usage.profile import percentile_rank

    return percentile_rank(p, n)


def _array(pa: Any, values: Any) -> Any:
    return values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values


def _starts_of_runs(pa: Any, pc: Any, columns: Sequence[Any]) -> Any:
    """_starts_of_runs marks each row whose key (``columns``) differs from the row before
    (the first row too); two nulls are equal, a null and a value are not."""
    rows = len(columns[0])
    differs = pa.array([False] * (rows - 1), pa.bool_())
    for column in columns:
        a, b = _array(pa, column.slice(1)), _array(pa, column.slice(0, rows - 1))
        both_null = pc.and_(pc.is_null(a), pc.is_null(b))
        unequal = pc.if_else(both_null, False, pc.fill_null(pc.not_equal(a, b), True))
        differs = pc.or_(differs, unequal)
    return pa.concat_arrays([pa.array([True]), _array(pa, differs)])


def _counts(pa: Any, pc: Any, ids: Any, series: int) -> list[int]:
    """_counts is how many of ``ids`` are each series id, 0 to ``series`` - 1."""
    out = [0] * series
    if len(ids):
        counted = pc.value_counts(ids)
        for i, c in zip(
            counted.field("values").to_pylist(), counted.field("counts").to_pylist(), strict=True
        ):
            out[i] = c
    return out


def _conflicts(
    pa: Any, pc: Any, repeated: Any, value: Any, ids: Any, ts: Any, keys: Any
) -> Any | None:
    """_conflicts is a batch of the (series, time)s with two values (least and greatest),
    or None. Rows are sorted by value within a time, so the run's ends are the two."""
    before = pa.concat_arrays([value.slice(0, 1), value.slice(0, len(value) - 1)])
    differs = pc.and_(repeated, pc.not_equal(value, before))
    at = pc.indices_nonzero(differs).to_pylist()
    if not at:
        return None
    values, times, series = value.to_pylist(), ts.to_pylist(), ids.to_pylist()
    found: dict[tuple[int, int], tuple[float, float]] = {}
    for i in at:
        first = i
        while first > 0 and (series[first - 1], times[first - 1]) == (series[i], times[i]):
            first -= 1
        last = i
        while last + 1 < len(times) and (series[last + 1], times[last + 1]) == (
            series[i],
            times[i],
        ):
            last += 1
        found[(series[i], times[i])] = (values[first], values[last])
    ordered = sorted(found)
    chosen = keys.take(pa.array([s for s, _ in ordered], pa.int64()))
    count = len(ordered)
    return pa.RecordBatch.from_arrays(
        [
            *(chosen[c].combine_chunks() for c in SERIES),
            *(pa.nulls(count, pa.int64()) for _ in range(4)),
            pa.nulls(count, pa.float64()),
            pa.nulls(count, pa.int64()),
            pa.nulls(count, pa.list_(pa.float64())),
            pa.array([t for _, t in ordered], pa.int64()),
            pa.array([found[k][0] for k in ordered], pa.float64()),
            pa.array([found[k][1] for k in ordered], pa.float64()),
        ],
        names=[*SERIES, *_OUT_NAMES],
    )
