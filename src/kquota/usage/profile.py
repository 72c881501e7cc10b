"""Demand profiles: per principal, per broker, per metric, the percentiles of a window.

Pure over :class:`~kquota.usage.rows.Sample` rows. Decisions (docs/usage.md says them too):

- **A series** is (broker, user tag, client-id tag, metric) of one cluster: the broker's own
  sensor for that principal. Quotas are per broker, so nothing is summed across brokers.
- **Percentiles are nearest-rank**: the p-th percentile of n values is the value at rank
  ``ceil(p / 100 × n)`` (at least 1) of the values in ascending order; the rank is computed
  in exact decimal arithmetic, so any engine that sorts the same values gives the same
  number, a value that was observed.
- **The window** is ``--since`` back from the newest sample read, both ends included (not
  the clock; :mod:`kquota.usage.window`, the rule every usage command cuts by), so a file
  reads the same next month, and the same on Spark.
- **Duplicates**: one sample of a series at one time is kept once; the same series and time
  with two different values is an error (two sources disagree: which one is right is not
  kquota's to guess). Samples out of order are sorted.
- **Censored**: a throttled principal's observed rate is capped by its quota, so it says
  nothing of its demand beyond that. A rate series whose throttle-time series (same broker
  and tags) is above zero at any sample of the window is censored.
- **Clock skew**: a broker whose newest sample is more than :data:`SKEW_MS` from the other
  brokers' (their median) is named in a warning: its window is cut by the others' clock.
- **Memory**: the samples of the window are held as two packed arrays per series (16 bytes a
  sample); series beyond ``max_series`` are refused with the count. Fleets of billions of
  samples are for the Spark engine.
"""

from __future__ import annotations

import math
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from kquota.errors import KquotaError
from kquota.usage.rows import RATE_METRICS, THROTTLE_METRICS, Sample
from kquota.usage.window import window_start

MAX_SERIES = 2_000_000
"""The most series read in process (10,000 principals × 6 brokers × 6 metrics is 360,000)."""
SKEW_MS = 5 * 60 * 1000
REPORTED_PERCENTILES = (Decimal(50), Decimal(95), Decimal(99))

SeriesKey = tuple[str, str | None, str | None, str]
"""(broker, user tag, client-id tag, metric)"""


class SampleError(KquotaError):
    """SampleError: samples that disagree with each other, or too many of them."""


def percentile_rank(p: Decimal, n: int) -> int:
    """percentile_rank is the 1-based nearest rank of the p-th percentile of n values."""
    return max(1, math.ceil(p * n / 100))


def percentile(ordered: Sequence[float], p: Decimal) -> float:
    """percentile is the nearest-rank p-th percentile of ``ordered`` (ascending, not empty)."""
    return ordered[percentile_rank(p, len(ordered)) - 1]


def parse_percentile(text: str, option: str = "--percentile") -> Decimal:
    """parse_percentile reads ``99`` or ``99.9``: more than 0, at most 100."""
    from decimal import InvalidOperation

    from kquota.errors import UsageError

    try:
        p = Decimal(text.strip())
    except InvalidOperation:
        p = Decimal("NaN")
    if not p.is_finite() or not 0 < p <= 100:
        raise UsageError(f"{option} {text!r}: allowed: a percentile above 0, at most 100 (e.g. 99)")
    return p


@dataclass(frozen=True, slots=True)
class SeriesProfile:
    """SeriesProfile is one series over the window: how many samples, when, and its
    percentiles (``percentiles``: p -> value, the reported ones and any asked for)."""

    broker: str
    user: str | None
    client_id: str | None
    metric: str
    count: int
    first_ms: int
    last_ms: int
    percentiles: tuple[tuple[Decimal, float], ...]
    max: float
    above_zero: int
    """samples above zero (for a throttle time: how often the principal was held back)"""

    def at(self, p: Decimal) -> float:
        return next(v for q, v in self.percentiles if q == p)

    @property
    def span_ms(self) -> int:
        return self.last_ms - self.first_ms

    def to_data(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "samples": self.count,
            "first_ms": self.first_ms,
            "last_ms": self.last_ms,
            "max": self.max,
        }
        for p, v in self.percentiles:
            data[f"p{p.normalize():f}"] = v
        return data


@dataclass(frozen=True, slots=True)
class Profiles:
    """Profiles is every series of the window, sorted by principal, broker, metric."""

    cluster: str | None
    since_ms: int
    start_ms: int
    end_ms: int
    samples: int
    """samples in the window"""
    read: int
    """samples read (before the window; duplicates counted once)"""
    series: tuple[SeriesProfile, ...]
    warnings: tuple[str, ...] = ()

    def rates(self) -> list[tuple[SeriesProfile, SeriesProfile | None]]:
        """rates are the rate series, each with its throttle-time series (None: not read)."""
        throttles = {
            (s.broker, s.user, s.client_id, THROTTLE_METRICS[s.metric]): s
            for s in self.series
            if s.metric in THROTTLE_METRICS
        }
        return [
            (s, throttles.get((s.broker, s.user, s.client_id, s.metric)))
            for s in self.series
            if s.metric in RATE_METRICS
        ]


@dataclass
class _Series:
    times: array[int] = field(default_factory=lambda: array("q"))
    values: array[float] = field(default_factory=lambda: array("d"))
    ordered: bool = True


def profile(
    samples: Iterable[Sample],
    *,
    since_ms: int,
    where: Callable[[], str] = lambda: "the samples",
    extra: Sequence[Decimal] = (),
    max_series: int = MAX_SERIES,
) -> Profiles:
    """profile reads ``samples`` once and profiles each series over the window of
    ``since_ms`` ending at the newest sample; ``extra`` percentiles are computed besides the
    reported ones; ``where`` names the sample being read, for errors."""
    series: dict[SeriesKey, _Series] = {}
    cluster: str | None = None
    read = 0
    for s in samples:
        if cluster is None:
            cluster = s.cluster
        key = (s.broker, s.user, s.client_id, s.metric)
        one = series.get(key)
        if one is None:
            if len(series) >= max_series:
                raise SampleError(
                    f"{where()}: more than {max_series} series (principal, broker, metric); "
                    f"{len(series) + 1} seen so far: split the samples by principals, or "
                    "profile them on the Spark engine"
                )
            one = series[key] = _Series()
        if one.times and s.timestamp_ms <= one.times[-1]:
            if s.timestamp_ms == one.times[-1]:
                if s.value != one.values[-1]:
                    raise SampleError(
                        conflict_message(where(), key, s.timestamp_ms, one.values[-1], s)
                    )
                continue  # the same sample twice: kept once
            one.ordered = False
        one.times.append(s.timestamp_ms)
        one.values.append(s.value)
        read += 1
    for key, one in series.items():
        if not one.ordered:
            read -= _sort(key, one)
    if not series:
        raise SampleError("no samples read: the window is empty")
    end = max(one.times[-1] for one in series.values())
    start = window_start(end, since_ms)
    wanted = wanted_percentiles(extra)
    out: list[SeriesProfile] = []
    in_window = 0
    for key, one in series.items():
        # the window is [start, end]: since_ms back from the newest sample, both ends in
        first = bisect_left(one.times, start)
        if first == len(one.times):
            continue
        values = sorted(one.values[first:])
        in_window += len(values)
        out.append(
            SeriesProfile(
                *key,
                count=len(values),
                first_ms=one.times[first],
                last_ms=one.times[-1],
                percentiles=tuple((p, percentile(values, p)) for p in wanted),
                max=values[-1],
                above_zero=len(values) - _first_after(values, 0.0),
            )
        )
    out.sort(key=series_order)
    newest: dict[str, int] = {}
    for (broker, *_), one in series.items():
        newest[broker] = max(newest.get(broker, one.times[-1]), one.times[-1])
    return Profiles(cluster, since_ms, start, end, in_window, read, tuple(out), skew(newest))


def wanted_percentiles(extra: Sequence[Decimal] = ()) -> tuple[Decimal, ...]:
    """wanted_percentiles are the reported percentiles and ``extra``, ascending, each once."""
    return tuple(sorted(set(REPORTED_PERCENTILES) | set(extra)))


def series_order(p: SeriesProfile) -> tuple[str, str, str, str]:
    """series_order is the order of :attr:`Profiles.series`: principal, broker, metric."""
    return (p.user or "", p.client_id or "", p.broker, p.metric)


def _first_after(ordered: Sequence[float], bound: float) -> int:
    return bisect_right(ordered, bound)


def _sort(key: SeriesKey, one: _Series) -> int:
    """_sort orders a series by time and drops repeated samples; returns how many."""
    order = sorted(range(len(one.times)), key=one.times.__getitem__)
    times, values = array("q"), array("d")
    for i in order:
        t, v = one.times[i], one.values[i]
        if times and t == times[-1]:
            if v != values[-1]:
                raise SampleError(conflict_message("the samples", key, t, values[-1], None, v))
            continue
        times.append(t)
        values.append(v)
    dropped = len(one.times) - len(times)
    one.times, one.values, one.ordered = times, values, True
    return dropped


def conflict_message(
    at: str, key: SeriesKey, ts: int, first: float, s: Sample | None, value: float = 0.0
) -> str:
    """conflict_message says two values of one series at one time (``s``'s, else ``value``,
    the second)."""
    from kquota.display import display_name

    broker, user, client, metric = key
    other = s.value if s is not None else value
    return (
        f"{at}: two values at timestamp_ms {ts} for {metric} of user "
        f"{display_name(user) if user is not None else '(none)'}, client-id "
        f"{display_name(client) if client is not None else '(none)'} on broker "
        f"{display_name(broker)}: {first!r} and {other!r}; one sample a series and time "
        "(two sources disagree: drop one)"
    )


def skew(newest: dict[str, int]) -> tuple[str, ...]:
    """skew warns of each broker whose newest sample (``newest``: broker -> ms) is more than
    :data:`SKEW_MS` from the other brokers' median."""
    if len(newest) < 2:
        return ()
    ordered = sorted(newest.values())
    median = ordered[(len(ordered) - 1) // 2]
    out = []
    from kquota.display import display_name
    from kquota.runtime.deadline import format_duration

    for broker in sorted(newest):
        gap = newest[broker] - median
        if abs(gap) > SKEW_MS:
            out.append(
                f"broker {display_name(broker)}: its newest sample is "
                f"{format_duration(abs(gap) // 1000)} {'after' if gap > 0 else 'before'} "
                "the other brokers' (clock skew, or a broker that stopped reporting); the "
                "window ends at the newest sample of all"
            )
    return tuple(out)
