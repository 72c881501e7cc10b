"""The throttle replay's verdict as the plan carries it (``plan --usage``): the brokers' quota
window, each principal's bound replayed before and after, and the report with its guard.

Data only, beside the plan that holds it (:attr:`kquota.plan.types.Plan.replay`) as the
capacity report is; the replay that computes it from observed usage is
:mod:`kquota.usage.replay`, the renderer that shows it :mod:`kquota.render.replay`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kquota.plan.resolver import ResolutionChange, ResolvedQuota

DEFAULT_WINDOW_NUM = 11
"""``quota.window.num``'s default"""
DEFAULT_WINDOW_SIZE_SECONDS = 1
"""``quota.window.size.seconds``' default"""

CENSORED = "demand unknown above the current quota"
"""What a censored principal is marked with, in every format."""


@dataclass(frozen=True, slots=True)
class QuotaWindow:
    """QuotaWindow is the brokers' quota window: ``quota.window.num`` samples of
    ``quota.window.size.seconds``, and where those two were read."""

    num: int = DEFAULT_WINDOW_NUM
    size_seconds: int = DEFAULT_WINDOW_SIZE_SECONDS
    source: str = "Kafka's defaults"

    @property
    def ms(self) -> int:
        """ms is the longest time the windowed rate is measured over."""
        return self.num * self.size_seconds * 1000

    def to_data(self) -> dict[str, Any]:
        return {"num": self.num, "size_seconds": self.size_seconds, "source": self.source}


KAFKA_WINDOW = QuotaWindow()
"""Kafka's default quota window, where the brokers' own was not read."""


@dataclass(frozen=True, slots=True)
class Exposure:
    """Exposure is one bound replayed on one principal's series, on its worst broker."""

    bound: float | None
    """the effective quota (None: unlimited, never throttled)"""
    throttled_ms: int = 0
    observed_ms: int = 0
    broker: str | None = None
    """the worst broker (None: nothing observed)"""
    brokers_throttled: int = 0
    peak_rate: float = 0.0
    """the highest rate observed on any broker"""
    peak_over: float = 0.0
    """how far the highest rate is above the bound (0: never above)"""
    throttle_time_ms: float | None = None
    """the broker's throttle time for the peak (None: never above, or a bound of 0)"""

    @property
    def fraction(self) -> float:
        """fraction is the share of the observed time throttled (0 when nothing observed)."""
        return self.throttled_ms / self.observed_ms if self.observed_ms else 0.0

    def to_data(self) -> dict[str, Any]:
        return {
            "bound": self.bound,
            "throttled_ms": self.throttled_ms,
            "observed_ms": self.observed_ms,
            "throttled_fraction": self.fraction,
            "worst_broker": self.broker,
            "brokers_throttled": self.brokers_throttled,
            "peak_rate": self.peak_rate,
            "peak_over_bound": self.peak_over,
            "throttle_time_ms_at_peak": self.throttle_time_ms,
        }


@dataclass(frozen=True, slots=True)
class Replayed:
    """Replayed is one principal's changed quota key replayed before and after the plan."""

    change: ResolutionChange
    metric: str
    before: Exposure
    after: Exposure
    brokers: int
    samples: int
    censored_brokers: tuple[str, ...] = ()
    """brokers where the principal's throttle-time was above zero (already throttled)"""

    @property
    def censored(self) -> bool:
        return bool(self.censored_brokers)

    @property
    def harder(self) -> bool:
        """harder: the plan throttles this principal for longer than before."""
        return self.after.throttled_ms > self.before.throttled_ms

    def to_data(self) -> dict[str, Any]:
        c = self.change
        return {
            "principal": c.principal.entity().to_json(),
            "key": c.key,
            "metric": self.metric,
            "before": _quota_data(c.before),
            "after": _quota_data(c.after),
            "brokers": self.brokers,
            "samples": self.samples,
            "censored": self.censored,
            "censored_brokers": list(self.censored_brokers),
            "throttled_before": self.before.to_data(),
            "throttled_after": self.after.to_data(),
        }


@dataclass(frozen=True, slots=True)
class ReplayReport:
    """ReplayReport is the throttle-replay section of a plan (``plan --usage``)."""

    window: QuotaWindow
    replayed: tuple[Replayed, ...]
    """harder-throttled first (:func:`replay`'s order)"""
    unobserved: tuple[ResolutionChange, ...] = ()
    """changed quotas of observed principals with no sample of the metric they bound"""
    rows: int = 0
    unattributed: int = 0
    dropped: int = 0
    first_ms: int | None = None
    last_ms: int | None = None
    source: str | None = None
    """where the samples came from, for the reader"""
    max_throttled_fraction: float | None = None
    throttling_allowed: bool = False
    stopped: tuple[str, ...] = ()
    """one line per principal and key the plan throttles past ``max_throttled_fraction``
    (the guard's verdict, kept when overridden like the other guards')"""

    @property
    def stops(self) -> bool:
        return bool(self.stopped) and not self.throttling_allowed

    def to_data(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "window": self.window.to_data(),
            "first_ms": self.first_ms,
            "last_ms": self.last_ms,
            "rows": self.rows,
            "unattributed_rows": self.unattributed,
            "dropped_rows": self.dropped,
            "principals": [r.to_data() for r in self.replayed],
            "unobserved": [
                {"principal": c.principal.entity().to_json(), "key": c.key} for c in self.unobserved
            ],
            "max_throttled_fraction": self.max_throttled_fraction,
            "throttling_stops": list(self.stopped),
            "throttling_allowed": self.throttling_allowed,
        }


def _quota_data(q: ResolvedQuota | None) -> dict[str, Any]:
    if q is None:
        return {"value": None, "source": None}
    return {"value": q.value, "source": q.source.to_json()}
