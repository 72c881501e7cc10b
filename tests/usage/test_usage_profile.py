"""Demand profiles: nearest-rank percentiles, exactly; the window; duplicates, disorder,
censoring, clock skew and the series limit."""

from __future__ import annotations

import random
from decimal import Decimal

import pytest

from kquota.usage.profile import SampleError, percentile, percentile_rank, profile
from kquota.usage.rows import PRODUCE_BYTE_RATE, PRODUCE_THROTTLE_TIME, Sample
from sample_rows import DAY, MINUTE, T0, series

WEEK = 7 * DAY


@pytest.mark.parametrize(
    ("p", "n", "rank"),
    [
        (Decimal(50), 1, 1),
        (Decimal(99), 1, 1),
        (Decimal(50), 4, 2),
        (Decimal(50), 5, 3),
        (Decimal(99), 100, 99),
        (Decimal(99), 101, 100),
        (Decimal(100), 7, 7),
        (Decimal("99.9"), 1000, 999),
        (Decimal("99.9"), 1001, 1000),
        (Decimal("0.1"), 10, 1),
        # 0.07 x 100 is 7.000000000000001 in floating point: the rank would be 8
        (Decimal("7"), 100, 7),
        (Decimal("0.07"), 10000, 7),
    ],
)
def test_nearest_rank_in_exact_arithmetic(p: Decimal, n: int, rank: int) -> None:
    assert percentile_rank(p, n) == rank
    assert percentile([float(i) for i in range(1, n + 1)], p) == float(rank)


def test_a_profile_of_one_series() -> None:
    values = list(range(1, 101))  # 1..100, one a minute
    found = profile(series("alice", None, PRODUCE_BYTE_RATE, values, step=MINUTE), since_ms=WEEK)
    [s] = found.series
    assert (s.count, s.first_ms, s.last_ms, s.max) == (100, T0, T0 + 99 * MINUTE, 100.0)
    assert [(f"{p}", v) for p, v in s.percentiles] == [("50", 50.0), ("95", 95.0), ("99", 99.0)]
    assert (found.samples, found.read, found.start_ms, found.end_ms) == (
        100,
        100,
        T0 + 99 * MINUTE - WEEK,
        T0 + 99 * MINUTE,
    )


def test_the_window_ends_at_the_newest_sample_both_ends_in() -> None:
    rows = series("a", None, PRODUCE_BYTE_RATE, [5, 1, 2, 3], step=DAY)
    [s] = profile(rows, since_ms=2 * DAY).series
    assert (s.count, s.first_ms, s.max) == (3, T0 + DAY, 3.0)  # the 5 is a day too old


def test_order_does_not_matter_and_repeats_are_kept_once() -> None:
    rows = series("a", "app", PRODUCE_BYTE_RATE, [random.Random(7).random() for _ in range(500)])
    shuffled = rows + rows[:40]  # a file read twice in part
    random.Random(1).shuffle(shuffled)
    ordered = profile(rows, since_ms=WEEK)
    mixed = profile(shuffled, since_ms=WEEK)
    assert mixed.series == ordered.series
    assert mixed.read == ordered.read == 500


@pytest.mark.parametrize("in_order", [True, False])
def test_two_values_at_one_time_are_refused(in_order: bool) -> None:
    rows = series("a", None, PRODUCE_BYTE_RATE, [1, 2, 3])
    clash = Sample(
        "prod", "1", "a", None, PRODUCE_BYTE_RATE, rows[-1 if in_order else 0].timestamp_ms, 9.0
    )
    with pytest.raises(SampleError) as e:
        profile([*rows, clash], since_ms=WEEK, where=lambda: "s.jsonl:4")
    expected = 3.0 if in_order else 1.0
    assert (
        f"two values at timestamp_ms {clash.timestamp_ms} for produce-byte-rate of user a, "
        f"client-id (none) on broker 1: {expected!r} and 9.0"
    ) in str(e.value)
    assert str(e.value).startswith("s.jsonl:4: " if in_order else "the samples: ")


def test_censored_where_the_throttle_time_is_above_zero() -> None:
    rates = series("a", None, PRODUCE_BYTE_RATE, [10, 10, 10]) + series(
        "b", None, PRODUCE_BYTE_RATE, [10, 10, 10]
    )
    throttles = series("a", None, PRODUCE_THROTTLE_TIME, [0, 0, 0]) + series(
        "b", None, PRODUCE_THROTTLE_TIME, [0, 35.5, 0]
    )
    found = profile(rates + throttles, since_ms=WEEK)
    pairs = {r.user: t for r, t in found.rates()}
    assert pairs["a"] is not None and pairs["a"].above_zero == 0
    assert pairs["b"] is not None and (pairs["b"].above_zero, pairs["b"].max) == (1, 35.5)


def test_more_series_than_the_limit_are_refused_with_the_count() -> None:
    rows = [Sample("prod", "1", f"u{i}", None, PRODUCE_BYTE_RATE, T0, 1.0) for i in range(4)]
    with pytest.raises(SampleError, match=r"^s.jsonl:9: more than 3 series .*; 4 seen so far"):
        profile(rows, since_ms=WEEK, max_series=3, where=lambda: "s.jsonl:9")


def test_a_broker_whose_clock_is_off_is_named() -> None:
    rows = [
        *series("a", None, PRODUCE_BYTE_RATE, [1, 1], broker="1"),
        *series("a", None, PRODUCE_BYTE_RATE, [1, 1], broker="2"),
        *series("a", None, PRODUCE_BYTE_RATE, [1, 1], broker="3", start=T0 + 2 * 3600_000),
    ]
    found = profile(rows, since_ms=WEEK)
    assert found.warnings == (
        "broker 3: its newest sample is 2h after the other brokers' (clock skew, or a broker "
        "that stopped reporting); the window ends at the newest sample of all",
    )
    in_step = profile(rows[:4], since_ms=WEEK)
    assert in_step.warnings == ()


def test_no_samples_is_an_error() -> None:
    with pytest.raises(SampleError, match="no samples read"):
        profile([], since_ms=WEEK)
