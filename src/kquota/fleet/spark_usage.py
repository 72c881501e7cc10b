"""The fleet's demand profiles as a PySpark job: exactly :func:`kquota.usage.profile.profile`.

The same rules as the in-process profile (its module says the decisions), in two passes
over the files and one shuffle:

1. **read**: every cluster's sample files go to the executors (Spark's ``binaryFile``
   source) and are read there by :class:`kquota.usage.samples.SampleFiles` itself, as Arrow
   batches handed to the JVM as they are (``mapInArrow``; no Python object per row): a
   Parquet batch is checked column by column and passes through, and only a batch with a
   row that needs a closer look is read row by row, so a bad file is refused with the same
   ``file:line`` (``file: row N``) message (one error row, raised before anything else); a
   file is read by one task (split large files by time);
2. **pass 1**: per broker, its newest sample and its row count (no sample shuffled): each
   cluster's newest sample ends its window, ``since_ms`` back starts it, both ends in;
3. **pass 2**: the files read again, each series' samples sent to one partition
   (``repartition`` by series, about 2 M samples a partition), and profiled there by
   :func:`kquota.fleet.arrow_profile.profile_partition` in pyarrow: duplicates kept once
   (two values at one time a conflict), the window, exact nearest-rank percentiles
   (:func:`~kquota.usage.profile.percentile_rank`, so the rank arithmetic is the local
   one; a sort, not ``approx_percentile``);
4. the driver collects one row per series and per conflict, words the conflicts as the
   local engine does, and builds the same :class:`~kquota.usage.profile.Profiles` (same
   order, same clock-skew warnings).
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterator, Sequence
from decimal import Decimal
from pathlib import PurePosixPath
from typing import Any

from kquota.errors import KquotaError
from kquota.fleet.arrow_profile import OUT_SCHEMA, profile_partition
from kquota.fleet.layout import FleetCluster
from kquota.fleet.usage import in_cluster
from kquota.usage.profile import (
    Profiles,
    SeriesProfile,
    conflict_message,
    series_order,
    skew,
    wanted_percentiles,
)
from kquota.usage.samples import FIELDS
from kquota.usage.window import window_start

_ERROR = "\x00error"
_SERIES = ("cluster", "broker", "user", "client_id", "metric")
_CONFLICTS_SHOWN = 10
_PARTITION_ROWS = 2_000_000


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

    from pyspark.sql import functions as F
    from pyspark.sql.types import DoubleType, LongType, StringType, StructField, StructType

    kinds = (StringType(),) * 5 + (LongType(), DoubleType())
    schema = StructType([StructField(f, kind, True) for f, kind in zip(FIELDS, kinds, strict=True)])
    locations, times = _sample_files(spark, clusters)
    step("list the sample files")
    files = spark.read.format("binaryFile").load(locations).select("path", "content")
    rows = _map_in_arrow(files, functools.partial(_file_batches, times), schema)
    # Pass 1, no sample shuffled: the files' errors, each broker's newest sample and count.
    brokers = (
        rows.groupBy("cluster", "broker", (F.col("metric") == _ERROR).alias("error"))
        .agg(F.max("timestamp_ms").alias("newest"), F.count(F.lit(1)).alias("rows"))
        .collect()
    )
    _raise_file_errors([r for r in brokers if r["error"]])
    newest: dict[str, dict[str, int]] = {}
    for r in brokers:
        newest.setdefault(r["cluster"], {})[r["broker"]] = r["newest"]
    step("read and check the files (executors: Arrow batches); each broker's newest sample")
    ends = {name: max(by_broker.values()) for name, by_broker in newest.items()}
    wanted = wanted_percentiles(extra)
    # Pass 2: the files read again (no sample kept between the passes), each series' samples
    # to one partition, profiled there in pyarrow (kquota.fleet.arrow_profile); a partition
    # of about 2 M samples: a few hundred MB in a worker.
    samples = sum(r["rows"] for r in brokers)
    partitions = max(
        int(spark.conf.get("spark.sql.shuffle.partitions")), samples // _PARTITION_ROWS
    )
    starts = {name: window_start(end, since_ms) for name, end in ends.items()}
    spark.conf.set("spark.sql.execution.arrow.maxRecordsPerBatch", str(_PARTITION_ROWS))
    found = _map_in_arrow(
        rows.repartition(partitions, *_SERIES),
        functools.partial(profile_partition, starts, wanted),
        OUT_SCHEMA,
    ).collect()
    step("the series, each in one partition: duplicates, window, percentiles (pyarrow)")
    _raise_conflicts([r for r in found if r["conflict_ms"] is not None])
    counted: dict[str, int] = {}
    for r in found:
        counted[r["cluster"]] = counted.get(r["cluster"], 0) + (r["read"] or 0)
    missing = [
        in_cluster(c.name, "no samples read: the window is empty")
        for c in clusters
        if c.name not in newest
    ]
    if missing:
        raise KquotaError("\n".join(missing))
    series: dict[str, list[SeriesProfile]] = {c.name: [] for c in clusters}
    for r in found:
        if r["conflict_ms"] is not None or not r["n"]:
            continue
        series[r["cluster"]].append(
            SeriesProfile(
                r["broker"],
                r["user"],
                r["client_id"],
                r["metric"],
                count=r["n"],
                first_ms=r["first_ms"],
                last_ms=r["last_ms"],
                percentiles=tuple(zip(wanted, r["picked"], strict=True)),
                max=r["max"],
                above_zero=r["above_zero"],
            )
        )
    out = {}
    for c in clusters:
        in_order = sorted(series[c.name], key=series_order)
        out[c.name] = Profiles(
            c.name,
            since_ms,
            window_start(ends[c.name], since_ms),
            ends[c.name],
            sum(s.count for s in in_order),
            counted[c.name],
            tuple(in_order),
            skew(newest[c.name]),
        )
    step("the profiles built on the driver")
    return out


def _raise_file_errors(errors: list[Any]) -> None:
    if errors:
        lines = sorted((r["cluster"], r["broker"]) for r in errors)
        raise KquotaError("\n".join(in_cluster(c, message) for c, message in lines))


def _raise_conflicts(found: list[Any]) -> None:
    """_raise_conflicts names the first conflicts in Spark's ascending order (a null tag
    first): series, then time."""
    if not found:
        return

    def order(r: Any) -> tuple[Any, ...]:
        return (*((r[c] is not None, r[c] or "") for c in _SERIES), r["conflict_ms"])

    lines = [
        in_cluster(
            r["cluster"],
            conflict_message(
                "the samples",
                (r["broker"], r["user"], r["client_id"], r["metric"]),
                r["conflict_ms"],
                r["low"],
                None,
                r["high"],
            ),
        )
        for r in sorted(found, key=order)[:_CONFLICTS_SHOWN]
    ]
    raise KquotaError("\n".join(lines))
