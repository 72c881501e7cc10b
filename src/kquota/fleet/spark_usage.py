"""The fleet's demand profiles as a PySpark job: exactly :func:`kquota.usage.profile.profile`.

A translation, step by step, of the in-process profile (its module says the decisions):

1. **read**: every cluster's sample files go to the executors (Spark's ``binaryFile``
   source) and are read there by :class:`kquota.usage.samples.SampleFiles` itself, as Arrow
   batches handed to the JVM as they are (``mapInArrow``; no Python object per row): a
   Parquet batch is checked column by column and passes through, and only a batch with a
   row that needs a closer look is read row by row, so a bad file is refused with the same
   ``file:line`` (``file: row N``) message; a file is read by one task (split large files
   by time);
2. **duplicates**: one row per (cluster, series, time), its least and greatest value; two
   different values are the same error the local engine raises (a file kquota cannot read
   is one error row, a group of its own, raised first);
3. **the window**: each cluster's newest sample ends it, ``since_ms`` back starts it, both
   ends in;
4. **percentiles, exact**: each series' values are numbered in ascending order
   (``row_number`` over the series, a sort, not ``approx_percentile``); the nearest ranks
   are :func:`~kquota.usage.profile.percentile_rank` of the counts, computed on the driver
   once per distinct count and joined back, so the rank arithmetic is the local one;
5. the driver collects one row per series (count, first and last time, maximum, samples
   above zero) and one per percentile, and builds the same
   :class:`~kquota.usage.profile.Profiles` (same order, same clock-skew warnings).
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterator, Sequence
from decimal import Decimal
from pathlib import PurePosixPath
from typing import Any

from kquota.errors import KquotaError
from kquota.fleet.layout import FleetCluster
from kquota.fleet.usage import in_cluster
from kquota.usage.profile import (
    Profiles,
    SeriesProfile,
    conflict_message,
    percentile_rank,
    series_order,
    skew,
    wanted_percentiles,
)
from kquota.usage.samples import FIELDS

_ERROR = "\x00error"
_SERIES = ("cluster", "broker", "user", "client_id", "metric")
_CONFLICTS_SHOWN = 10


def _file_batches(times: dict[tuple[str, str], int], files: Iterator[Any]) -> Iterator[Any]:
    """_file_batches reads sample files on an executor (``files``: Arrow batches of their
    locations and contents) as Arrow batches of samples; a file kquota cannot read gives one
    error row (the message in ``broker``) after whatever it gave before."""
    import pyarrow as pa

    from kquota.fleet.spark_fs import display_name
    from kquota.usage.samples import SampleFiles, parquet_schema

    schema = parquet_schema(pa)
    for batch in files:
        for location, data in zip(
            batch.column("path").to_pylist(), batch.column("content").to_pylist(), strict=True
        ):
            folder, name = posixpath.split(location)
            cluster = posixpath.basename(folder)
            try:
                yield from SampleFiles((), cluster).read_batches(
                    PurePosixPath(display_name(location)), data, times.get((cluster, name), 0)
                )
            except KquotaError as e:
                error = (cluster, str(e), None, None, _ERROR, 0, 0.0)
                yield pa.RecordBatch.from_pylist([dict(zip(FIELDS, error, strict=True))], schema)


def _map_in_arrow(frame: Any, func: Any, schema: Any) -> Any:
    """_map_in_arrow is ``frame.mapInArrow(func, schema)`` without PySpark's check for
    pandas, which an Arrow-only function never imports (kquota needs no pandas): the UDF
    is made as ``mapInArrow`` makes it, less the check."""
    from pyspark.sql import DataFrame
    from pyspark.sql.udf import _create_udf
    from pyspark.util import PythonEvalType

    udf = _create_udf(func, schema, PythonEvalType.SQL_MAP_ARROW_ITER_UDF)
    column = udf(*[frame[c] for c in frame.columns])
    return DataFrame(frame._jdf.mapInArrow(column._jc, False, None), frame.sparkSession)


def _sample_files(spark: Any, clusters: Sequence[FleetCluster]) -> tuple[list[str], dict[Any, int]]:
    """_sample_files lists each cluster's sample files (by name, as the local reader does)
    and their modification times (a scrape line without a timestamp takes its file's)."""
    from kquota.fleet.spark_fs import HadoopListing, display_name
    from kquota.usage.samples import SUFFIXES

    fs = HadoopListing(spark)
    locations: list[str] = []
    times: dict[Any, int] = {}
    problems = []
    for c in clusters:
        folder = fs.qualify(c.desired_dir)
        found = sorted(
            (name, ms)
            for name, ms in fs.files_modified(folder)
            if PurePosixPath(name).suffix in SUFFIXES
        )
        if not found:
            problems.append(
                in_cluster(
                    c.name,
                    f"{display_name(folder)}: no sample file in this folder; allowed: files "
                    f"named *{', *'.join(SUFFIXES)}",
                )
            )
        for name, ms in found:
            if name.startswith(("_", ".")):
                # Hadoop's input formats pass over such files without a word; the local
                # reader reads them: refused, so the two engines never read different files.
                problems.append(
                    in_cluster(
                        c.name,
                        f"{display_name(fs.join(folder, name))}: a sample file named with a "
                        "leading '_' or '.', which Spark's file input passes over; allowed: "
                        "rename it",
                    )
                )
            locations.append(fs.join(folder, name))
            times[(posixpath.basename(folder), name)] = ms
    if problems:
        raise KquotaError("\n".join(problems))
    return locations, times


def profile_fleet_spark(
    spark: Any,
    clusters: Sequence[FleetCluster],
    *,
    since_ms: int,
    extra: Sequence[Decimal] = (),
    steps: list[tuple[str, float]] | None = None,
) -> dict[str, Profiles]:
    """profile_fleet_spark profiles every cluster's samples in one Spark job; ``steps``, when
    given, gets each step's name and seconds (the benchmark's "where the time goes")."""
    import functools
    import time

    began = time.monotonic()

    def step(name: str) -> None:
        nonlocal began
        if steps is not None:
            now = time.monotonic()
            steps.append((name, now - began))
            began = now

    from pyspark import StorageLevel
    from pyspark.sql import Window
    from pyspark.sql import functions as F
    from pyspark.sql.types import DoubleType, LongType, StringType, StructField, StructType

    kinds = (StringType(),) * 5 + (LongType(), DoubleType())
    schema = StructType([StructField(f, kind, True) for f, kind in zip(FIELDS, kinds, strict=True)])
    locations, times = _sample_files(spark, clusters)
    step("list the sample files")
    files = spark.read.format("binaryFile").load(locations).select("path", "content")
    rows = _map_in_arrow(files, functools.partial(_file_batches, times), schema)
    # One pass over the files: an error row (one per file kquota cannot read) is a group of
    # its own here, found before anything else is looked at.
    deduped = (
        rows.groupBy(*_SERIES, "timestamp_ms")
        .agg(F.min("value").alias("value"), F.max("value").alias("other"))
        .persist(StorageLevel.MEMORY_AND_DISK)
    )
    try:
        _raise_file_errors(deduped, F)
        step("read and check the files (executors: Arrow batches), one row per series and time")
        _raise_conflicts(deduped, F)
        step("conflicts: two values of a series at one time")
        brokers = deduped.groupBy("cluster", "broker").agg(
            F.max("timestamp_ms").alias("newest"), F.count(F.lit(1)).alias("read")
        )
        newest: dict[str, dict[str, int]] = {}
        counted: dict[str, int] = {}
        for r in brokers.collect():
            newest.setdefault(r["cluster"], {})[r["broker"]] = r["newest"]
            counted[r["cluster"]] = counted.get(r["cluster"], 0) + r["read"]
        missing = [
            in_cluster(c.name, "no samples read: the window is empty")
            for c in clusters
            if c.name not in newest
        ]
        if missing:
            raise KquotaError("\n".join(missing))
        step("each cluster's newest sample, per broker")
        ends = {name: max(by_broker.values()) for name, by_broker in newest.items()}
        starts = spark.createDataFrame(
            [(name, end - since_ms) for name, end in sorted(ends.items())],
            "cluster string, start long",
        )
        windowed = (
            deduped.join(F.broadcast(starts), "cluster")
            .filter(F.col("timestamp_ms") >= F.col("start"))
            .select(*_SERIES, "timestamp_ms", "value")
        )
        stats = (
            windowed.groupBy(*_SERIES)
            .agg(
                F.count(F.lit(1)).alias("n"),
                F.min("timestamp_ms").alias("first_ms"),
                F.max("timestamp_ms").alias("last_ms"),
                F.max("value").alias("max"),
                F.sum(F.when(F.col("value") > 0.0, 1).otherwise(0)).alias("above_zero"),
            )
            .collect()
        )
        step("per series in the window: count, times, maximum")
        wanted = wanted_percentiles(extra)
        ranks = sorted(
            {(n, percentile_rank(p, n)) for n in {r["n"] for r in stats} for p in wanted}
        )
        rank_table = spark.createDataFrame(ranks, "n long, rn long")
        by_series = Window.partitionBy(*_SERIES)
        numbered = windowed.withColumn(
            "rn", F.row_number().over(by_series.orderBy("value"))
        ).withColumn("n", F.count(F.lit(1)).over(by_series))
        picked = (
            numbered.join(F.broadcast(rank_table), ["n", "rn"])
            .select(*_SERIES, "rn", "value")
            .collect()
        )
        step("percentiles: sort by value, row_number, the ranks joined")
    finally:
        deduped.unpersist()
    at_rank = {(*(r[c] for c in _SERIES), r["rn"]): r["value"] for r in picked}
    series: dict[str, list[SeriesProfile]] = {c.name: [] for c in clusters}
    for r in stats:
        key = tuple(r[c] for c in _SERIES)
        n = r["n"]
        series[r["cluster"]].append(
            SeriesProfile(
                r["broker"],
                r["user"],
                r["client_id"],
                r["metric"],
                count=n,
                first_ms=r["first_ms"],
                last_ms=r["last_ms"],
                percentiles=tuple((p, at_rank[(*key, percentile_rank(p, n))]) for p in wanted),
                max=r["max"],
                above_zero=r["above_zero"],
            )
        )
    out = {}
    for c in clusters:
        found = sorted(series[c.name], key=series_order)
        out[c.name] = Profiles(
            c.name,
            since_ms,
            ends[c.name] - since_ms,
            ends[c.name],
            sum(s.count for s in found),
            counted[c.name],
            tuple(found),
            skew(newest[c.name]),
        )
    step("the profiles built on the driver")
    return out


def _raise_file_errors(rows: Any, F: Any) -> None:
    errors = rows.filter(F.col("metric") == _ERROR).select("cluster", "broker").collect()
    if errors:
        lines = sorted((r["cluster"], r["broker"]) for r in errors)
        raise KquotaError("\n".join(in_cluster(c, message) for c, message in lines))


def _raise_conflicts(deduped: Any, F: Any) -> None:
    found = (
        deduped.filter(F.col("value") != F.col("other"))
        .orderBy(*_SERIES, "timestamp_ms")
        .limit(_CONFLICTS_SHOWN)
        .collect()
    )
    if found:
        lines = [
            in_cluster(
                r["cluster"],
                conflict_message(
                    "the samples",
                    (r["broker"], r["user"], r["client_id"], r["metric"]),
                    r["timestamp_ms"],
                    r["value"],
                    None,
                    r["other"],
                ),
            )
            for r in found
        ]
        raise KquotaError("\n".join(lines))
