"""The fleet's demand profiles on Spark: exactly the local engine's, errors included.

Local mode here (the ``spark_engine`` fixture); the standalone cluster runs the command in
tests/fleet/test_spark_cluster.py. The samples hold ties, duplicates, rows out of order and
empty tags (:mod:`kquota.fleet.synth_usage`), in every kind of sample file.
"""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest

from kquota.errors import KquotaError
from kquota.fleet.run import write_usage
from kquota.fleet.spark import SparkEngine
from kquota.fleet.synth_usage import write_usage_fleet
from kquota.fleet.usage import discover_usage, profile_fleet_local
from kquota.snapshot.files import read_snapshot_any
from kquota.usage.report import usage_report


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_spark_profiles_equal_the_local_ones_and_write_the_same_files(
    spark_engine: SparkEngine, tmp_path: Path
) -> None:
    write_usage_fleet(tmp_path / "samples", tmp_path / "snaps", clusters=3, minutes=40)
    window, extra = 25 * 60_000, (Decimal("99.9"), Decimal("12.5"))
    local_clusters = discover_usage(str(tmp_path / "samples"), str(tmp_path / "snaps"))
    local = profile_fleet_local(local_clusters, since_ms=window, extra=extra)
    spark_clusters = spark_engine.discover_usage(str(tmp_path / "samples"), str(tmp_path / "snaps"))
    spark = spark_engine.profile_fleet(spark_clusters, since_ms=window, extra=extra)
    assert spark == local  # every count, time, percentile and warning, exactly
    # The window cut something off, and the data exercised the rules.
    p = local["cluster-00"]
    assert p.read > p.samples > 0 and p.start_ms > min(s.first_ms for s in p.series) - window
    assert any(s.above_zero for s in p.series)
    assert len({s.at(Decimal(50)) for s in p.series}) > 1
    for engine, found in (("local", local), ("spark", spark)):
        reports = {
            name: usage_report(
                profiles,
                read_snapshot_any(tmp_path / "snaps" / f"{name}.json"),
                f"samples/{name}",
            )
            for name, profiles in found.items()
        }
        write_usage(reports, tmp_path / engine)
    assert _files(tmp_path / "spark") == _files(tmp_path / "local")


def test_bad_sample_files_are_refused_with_the_local_engines_words(
    spark_engine: SparkEngine, tmp_path: Path
) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    write_usage_fleet(tmp_path / "samples", tmp_path / "snaps", clusters=3, minutes=3)
    jsonl = tmp_path / "samples" / "cluster-00" / "broker-1.jsonl"
    lines = jsonl.read_text().splitlines()
    lines[4] = (
        lines[4]
        .replace("produce-byte-rate", "produce-bytes")
        .replace("fetch-byte-rate", "produce-bytes")
        .replace("produce-throttle-time", "produce-bytes")
    )
    jsonl.write_text("\n".join(lines) + "\n")
    prom = tmp_path / "samples" / "cluster-02" / "broker-3.prom"
    prom.write_text(prom.read_text() + 'kafka_server_quota_byte_rate{type="Produce"} -1 5\n')
    # A Parquet row the column-by-column check passes back to the row-by-row one.
    parquet = sorted((tmp_path / "samples" / "cluster-01").glob("*.parquet"))[0]
    table = pq.read_table(parquet)
    values = table.column("value").to_pylist()
    values[2] = float("nan")
    pq.write_table(table.set_column(6, "value", pa.array(values, pa.float64())), parquet)
    samples, snaps = str(tmp_path / "samples"), str(tmp_path / "snaps")
    expected = []
    for name in ("cluster-00", "cluster-01", "cluster-02"):
        [cluster] = [c for c in discover_usage(samples, snaps) if c.name == name]
        with pytest.raises(KquotaError) as local:
            profile_fleet_local([cluster], since_ms=60_000)
        expected.append(str(local.value))
    assert f"{jsonl}:5: unknown metric 'produce-bytes'" in expected[0]
    assert f"{parquet}: row 3: value NaN" in expected[1]
    with pytest.raises(KquotaError) as spark:
        spark_engine.profile_fleet(spark_engine.discover_usage(samples, snaps), since_ms=60_000)
    assert str(spark.value) == "\n".join(expected)


def test_two_values_of_one_series_at_one_time_are_refused(
    spark_engine: SparkEngine, tmp_path: Path
) -> None:
    write_usage_fleet(
        tmp_path / "samples", tmp_path / "snaps", clusters=1, minutes=2, formats=("jsonl",)
    )
    jsonl = tmp_path / "samples" / "cluster-00" / "broker-1.jsonl"
    other = json.loads(jsonl.read_text().splitlines()[0])
    other["value"] = 1.0e9  # the same series and time, another value
    jsonl.write_text(jsonl.read_text() + json.dumps(other) + "\n")
    samples, snaps = str(tmp_path / "samples"), str(tmp_path / "snaps")
    with pytest.raises(KquotaError) as local:
        profile_fleet_local(discover_usage(samples, snaps), since_ms=60_000)
    with pytest.raises(KquotaError) as spark:
        spark_engine.profile_fleet(spark_engine.discover_usage(samples, snaps), since_ms=60_000)
    # The same series, time and values; the local engine names the line it read second.
    said = str(spark.value)
    assert said.startswith("cluster cluster-00: the samples: two values at timestamp_ms ")
    assert said.endswith("one sample a series and time (two sources disagree: drop one)")
    assert "1000000000.0" in said
    tail = str(local.value).split(": two values", 1)[1]
    values = sorted(tail.split(": ")[1].split("; ")[0].split(" and "), key=float)
    assert tail.split(": ")[0] == said.split(": two values", 1)[1].split(": ")[0]
    assert " and ".join(values) in said


def test_a_sample_file_spark_would_pass_over_is_refused(
    spark_engine: SparkEngine, tmp_path: Path
) -> None:
    # Hadoop's file input skips names starting with '_' or '.'; the local reader reads them.
    write_usage_fleet(tmp_path / "samples", tmp_path / "snaps", clusters=1, minutes=1)
    hidden = tmp_path / "samples" / "cluster-00" / "_late.jsonl"
    hidden.write_text((tmp_path / "samples" / "cluster-00" / "broker-1.jsonl").read_text())
    clusters = spark_engine.discover_usage(str(tmp_path / "samples"), str(tmp_path / "snaps"))
    with pytest.raises(KquotaError) as e:
        spark_engine.profile_fleet(clusters, since_ms=60_000)
    assert str(e.value) == (
        f"cluster cluster-00: {hidden}: a sample file named with a leading '_' or '.', which "
        "Spark's file input passes over; allowed: rename it"
    )
