"""Rows grouped into time series: one per principal, broker and metric, in time order.

A row's tags are the broker's quota-sensor tags, so a principal here is the group of clients
that share one sensor, not one connection: ``{user=alice}`` (client-id ``None``) is every client
of alice whose matched quota level names the user only, measured together as the broker does
(see :mod:`kquota.usage.rows`). Rows with neither tag come from clients no quota matched: they
share one sensor nobody can be named for, and are counted, not grouped.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from kquota.argcheck import refuse
from kquota.principal import Principal, unique_principals
from kquota.usage.rows import Sample


@dataclass(frozen=True, slots=True)
class Series:
    """Series is one sensor's samples on one broker: times (ms since the epoch, ascending,
    each once) and the values observed then."""

    times_ms: tuple[int, ...]
    values: tuple[float, ...]


@dataclass(frozen=True, slots=True)
class Grouped:
    """Grouped is every series of some rows, by principal, then metric, then broker."""

    series: Mapping[Principal, Mapping[str, Mapping[str, Series]]]
    rows: int
    """rows read"""
    unattributed: int
    """rows with neither a user nor a client-id tag (clients no quota matched)"""
    dropped: int
    """rows whose value is not a finite number of at least zero (never a rate)"""
    first_ms: int | None
    last_ms: int | None

    @property
    def principals(self) -> tuple[Principal, ...]:
        """principals are the principals observed, each once, in the one principal order."""
        return unique_principals(self.series)

    def of(self, principal: Principal, metric: str) -> Mapping[str, Series]:
        """of is ``principal``'s series of ``metric`` by broker (empty: none observed)."""
        return self.series.get(principal, {}).get(metric, {})


def group(samples: Iterable[Sample]) -> Grouped:
    """group sorts ``samples`` into series; a time seen twice in one series keeps its last
    row (a source that repeats a scrape must not count it twice)."""
    points: dict[Principal, dict[str, dict[str, dict[int, float]]]] = {}
    rows = unattributed = dropped = 0
    first: int | None = None
    last: int | None = None
    for s in samples:
        if not isinstance(s, Sample):  # the library's door: a wrong row fails here, by name
            raise refuse("usage rows", "kquota.usage.rows.Sample", s)
        rows += 1
        if s.user is None and s.client_id is None:
            unattributed += 1
            continue
        if not (math.isfinite(s.value) and s.value >= 0):
            dropped += 1
            continue
        by_metric = points.setdefault(Principal(s.user, s.client_id), {})
        by_metric.setdefault(s.metric, {}).setdefault(s.broker, {})[s.timestamp_ms] = s.value
        first = s.timestamp_ms if first is None else min(first, s.timestamp_ms)
        last = s.timestamp_ms if last is None else max(last, s.timestamp_ms)
    series = {
        p: {
            metric: {broker: _series(at) for broker, at in sorted(brokers.items())}
            for metric, brokers in metrics.items()
        }
        for p, metrics in points.items()
    }
    return Grouped(series, rows, unattributed, dropped, first, last)


def _series(at: Mapping[int, float]) -> Series:
    times = tuple(sorted(at))
    return Series(times, tuple(at[t] for t in times))


__all__ = ["Grouped", "Series", "group"]
