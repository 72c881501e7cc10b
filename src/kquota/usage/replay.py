"""Throttle replay (issue 30): how often a plan's bounds would have throttled what was seen.

Pure: from the effective quotas a plan changes (:func:`kquota.plan.resolver.
resolution_changes`, the machinery behind ``--impact``) and the observed rate series of the
principals whose quota sensors were scraped (:mod:`kquota.usage.series`), it replays each
principal's series on each broker against the bound before and after the plan.

The broker's model, which the replay follows (Kafka's ``ClientQuotaManager`` and its metrics):

- **Per broker.** Each broker measures and bounds a principal on its own; the bound is the
  effective quota, whole, on every broker.
- **A windowed rate.** The quota sensor's ``Rate`` over a ``WindowedSum`` (a ``SampledStat``)
  keeps ``quota.window.num`` samples of ``quota.window.size.seconds`` each (11 and 1 by
  default) and divides their sum by the time since the oldest kept sample began, counting the
  missing samples of a young sensor as empty; so the rate is measured over ``num - 1`` to
  ``num`` windows, the oldest partly counted. A scraped value of the sensor *is* that rate at
  scrape time, and the broker throttles when it exceeds the bound (``Quota`` as an upper
  bound): the replay compares the scraped value with the bound, nothing more.
- **Throttle time.** On a violation the broker delays the client by
  ``(rate - bound) / bound × window`` (``QuotaUtils.throttleTime``: the delay that brings the
  windowed rate back to the bound); request quotas cap it at one window sample
  (``ClientRequestQuotaManager``). The replay gives that delay at the peak, over the full
  ``num × size`` window, comparable with the broker's own ``throttle-time`` metric.

Decisions (docs/usage.md, "Throttle replay"):

- **Throttled time** is the sum of the sample intervals whose rate exceeds the bound. A
  sample stands for the interval since the one before it, at most the series' usual step (a
  gap is not observed time; the first sample counts one step). The fraction is of the time
  observed on that broker.
- **Per principal, the worst broker:** the broker with the largest throttled fraction gives
  the time and the fraction (a sum over brokers could exceed the time observed); the peak
  over the bound is the largest on any broker.
- **Censored:** a principal whose ``throttle-time`` was above zero anywhere in the samples
  was already throttled: its observed rate is what the broker let through, not its demand,
  so its replay under a lower bound is a floor (``demand unknown above the current quota``).
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping, Sequence

from kquota.model import display_entity
from kquota.plan.replay import KAFKA_WINDOW, Exposure, QuotaWindow, Replayed, ReplayReport
from kquota.plan.resolver import ResolutionChange, ResolvedQuota
from kquota.usage.rows import RATE_METRICS, REQUEST_TIME, THROTTLE_METRICS
from kquota.usage.series import Grouped, Series

METRIC_OF: dict[str, str] = {key: metric for metric, key in RATE_METRICS.items()}
"""A quota key and the rate metric it bounds."""
THROTTLE_OF: dict[str, str] = {rate: throttle for throttle, rate in THROTTLE_METRICS.items()}
"""A rate metric and the throttle-time metric of its quota."""


def replay(
    changes: Iterable[ResolutionChange],
    grouped: Grouped,
    window: QuotaWindow = KAFKA_WINDOW,
    *,
    source: str | None = None,
    max_throttled_fraction: float | None = None,
    throttling_allowed: bool = False,
) -> ReplayReport:
    """replay replays every changed rate quota in ``changes`` on the principal's observed
    series in ``grouped``, harder-throttled first; with ``max_throttled_fraction`` the guard
    stops each one the plan throttles past it and longer than before."""
    replayed: list[Replayed] = []
    unobserved: list[ResolutionChange] = []
    for c in changes:
        metric = METRIC_OF.get(c.key)
        if metric is None:
            continue  # a key no sensor of the samples measures
        by_broker = grouped.of(c.principal, metric)
        if not by_broker:
            unobserved.append(c)
            continue
        throttles = grouped.of(c.principal, THROTTLE_OF[metric])
        censored = tuple(b for b, s in throttles.items() if any(v > 0 for v in s.values))
        capped = metric == REQUEST_TIME
        replayed.append(
            Replayed(
                c,
                metric,
                exposure(by_broker, _bound(c.before), window, capped=capped),
                exposure(by_broker, _bound(c.after), window, capped=capped),
                len(by_broker),
                sum(len(s.times_ms) for s in by_broker.values()),
                censored,
            )
        )
    replayed.sort(key=_harder_first)
    stopped: list[str] = []
    if max_throttled_fraction is not None:
        for r in replayed:
            a, b = r.after, r.before
            if a.fraction > max_throttled_fraction and a.fraction > b.fraction:
                stopped.append(
                    f"{display_entity(r.change.principal.entity())} {r.change.key}: throttled "
                    f"{percent(a.fraction)} of the observed time after the plan (was "
                    f"{percent(b.fraction)}), over max_throttled_fraction="
                    f"{max_throttled_fraction:g}"
                )
    return ReplayReport(
        window=window,
        replayed=tuple(replayed),
        unobserved=tuple(unobserved),
        rows=grouped.rows,
        unattributed=grouped.unattributed,
        dropped=grouped.dropped,
        first_ms=grouped.first_ms,
        last_ms=grouped.last_ms,
        source=source,
        max_throttled_fraction=max_throttled_fraction,
        throttling_allowed=throttling_allowed,
        stopped=tuple(stopped),
    )


def percent(fraction: float) -> str:
    """percent is ``12.5%``: one decimal, so a small share is not shown as none."""
    shown = f"{fraction * 100:.1f}"
    if shown == "0.0" and fraction > 0:
        return "<0.1%"
    return f"{shown}%"


def _bound(q: ResolvedQuota | None) -> float | None:
    return None if q is None else q.value


def _harder_first(r: Replayed) -> tuple[float, float, int, tuple[str, str], str]:
    p = r.change.principal
    rise = r.after.fraction - r.before.fraction
    return (
        -r.after.fraction,
        -rise,
        -r.after.throttled_ms,
        (p.user or "", p.client_id or ""),
        r.change.key,
    )


def exposure(
    by_broker: Mapping[str, Series],
    bound: float | None,
    window: QuotaWindow,
    *,
    capped: bool = False,
) -> Exposure:
    """exposure replays ``bound`` on each broker's series and keeps the worst broker;
    ``capped``: a request quota, whose throttle time the broker caps at one window sample."""
    worst: tuple[float, int, str] | None = None
    observed_at_worst = 0
    throttled_brokers = 0
    peak = 0.0
    for broker, s in sorted(by_broker.items()):
        throttled, observed = _replay_one(s, bound)
        peak = max(peak, max(s.values, default=0.0))
        if throttled:
            throttled_brokers += 1
        fraction = throttled / observed if observed else 0.0
        here = (fraction, throttled, broker)
        if worst is None or (here[0], here[1]) > (worst[0], worst[1]):
            worst, observed_at_worst = here, observed
    if worst is None:
        return Exposure(bound)
    over = 0.0 if bound is None else max(0.0, peak - bound)
    delay = None
    if bound is not None and bound > 0 and over > 0:
        delay = over / bound * window.ms
        if capped:
            delay = min(delay, window.size_seconds * 1000.0)
    return Exposure(
        bound=bound,
        throttled_ms=worst[1],
        observed_ms=observed_at_worst,
        broker=worst[2],
        brokers_throttled=throttled_brokers,
        peak_rate=peak,
        peak_over=over,
        throttle_time_ms=delay,
    )


def _replay_one(s: Series, bound: float | None) -> tuple[int, int]:
    """_replay_one is (throttled ms, observed ms) of one broker's series under ``bound``."""
    step = step_ms(s.times_ms)
    throttled = observed = 0
    previous: int | None = None
    for t, v in zip(s.times_ms, s.values, strict=True):
        interval = step if previous is None else min(t - previous, step)
        previous = t
        observed += interval
        if bound is not None and v > bound:
            throttled += interval
    return throttled, observed


def step_ms(times: Sequence[int]) -> int:
    """step_ms is a series' usual sampling step: the median gap between its samples (a lone
    sample: one minute, Prometheus' common scrape step; the series says nothing of its own)."""
    gaps = [b - a for a, b in zip(times, times[1:], strict=False) if b > a]
    if not gaps:
        return LONE_SAMPLE_MS
    return int(statistics.median_low(gaps))


LONE_SAMPLE_MS = 60_000


__all__ = [
    "exposure",
    "percent",
    "replay",
    "step_ms",
]
