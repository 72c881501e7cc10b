"""One partition's series profiled in pyarrow: the local engine's numbers, exactly, in any
row order, split into batches anywhere; conflicts as the least and greatest value."""

from __future__ import annotations

import random
from decimal import Decimal

import pyarrow as pa

from kquota.fleet.arrow_profile import profile_partition
from kquota.fleet.synth_usage import cluster_samples
from kquota.usage.profile import profile, wanted_percentiles
from kquota.usage.rows import PRODUCE_BYTE_RATE, Sample
from kquota.usage.samples import FIELDS, parquet_schema


def _batches(samples: list[Sample], size: int) -> list[pa.RecordBatch]:
    schema = parquet_schema(pa)
    return [
        pa.RecordBatch.from_pylist(
            [dict(zip(FIELDS, _values(s), strict=True)) for s in samples[i : i + size]], schema
        )
        for i in range(0, len(samples), size)
    ]


def _values(s: Sample) -> tuple[object, ...]:
    return (s.cluster, s.broker, s.user, s.client_id, s.metric, s.timestamp_ms, s.value)


def test_a_partition_profiles_as_the_local_engine_does() -> None:
    samples = list(cluster_samples("prod", 7, principals=9, brokers=2, minutes=30))
    window, extra = 20 * 60_000, (Decimal("99.9"), Decimal("12.5"))
    local = profile(samples, since_ms=window, extra=extra)
    wanted = wanted_percentiles(extra)
    shuffled = samples[:]
    random.Random(3).shuffle(shuffled)  # a shuffle's output comes in no order
    out = [
        r
        for b in profile_partition({"prod": local.start_ms}, wanted, iter(_batches(shuffled, 97)))
        for r in b.to_pylist()
    ]
    assert all(r["conflict_ms"] is None for r in out)
    assert sum(r["read"] for r in out) == local.read
    found = {(r["broker"], r["user"], r["client_id"], r["metric"]): r for r in out if r["n"]}
    assert len(found) == len(local.series) and len(out) == len(local.series)
    for s in local.series:
        r = found[(s.broker, s.user, s.client_id, s.metric)]
        assert (r["n"], r["first_ms"], r["last_ms"], r["max"], r["above_zero"]) == (
            s.count,
            s.first_ms,
            s.last_ms,
            s.max,
            s.above_zero,
        )
        assert r["picked"] == [v for _, v in s.percentiles]
    # The window cut samples off, and null tags (both kinds) were series of their own.
    assert local.read > local.samples
    assert {r["user"] is None for r in out} == {True, False}


def test_two_values_at_one_time_are_a_conflict_with_the_least_and_the_greatest() -> None:
    def at(t: int, v: float, user: str | None = "a") -> Sample:
        return Sample("prod", "1", user, None, PRODUCE_BYTE_RATE, t, v)

    samples = [at(1, 5.0), at(1, 2.0), at(1, 9.0), at(2, 4.0), at(2, 4.0), at(1, 3.0, None)]
    out = [
        r
        for b in profile_partition({"prod": 0}, (Decimal(50),), iter(_batches(samples, 2)))
        for r in b.to_pylist()
    ]
    [conflict] = [r for r in out if r["conflict_ms"] is not None]
    assert (conflict["user"], conflict["conflict_ms"], conflict["low"], conflict["high"]) == (
        "a",
        1,
        2.0,
        9.0,
    )
    # The other series, with no conflict of its own, is profiled beside it.
    [other] = [r for r in out if r["conflict_ms"] is None and r["user"] is None]
    assert (other["n"], other["picked"]) == (1, [3.0])


def test_an_empty_partition_gives_nothing() -> None:
    assert list(profile_partition({}, (Decimal(50),), iter([]))) == []
