"""The usage report: demand profiles joined with the effective quotas that bound them.

Pure: :class:`~kquota.usage.profile.Profiles` and a quota state in, a :class:`UsageReport`
out. A series' tags are the tags the broker chose for the quota level that matched
(:mod:`kquota.usage.rows`), so resolving the tags as a principal gives the very quota that
sensor was held to (``quotaLimit`` of those tags), and the entity it came from.

Utilisation is the window's p99 over the effective quota (and its maximum over the quota, in
JSON): above 100 % the principal was throttled. A quota entity that no series of the window
resolved to, for any key, "never matched any traffic": a candidate for removal, which this
report names and never removes. ip entities are left out of that list (the broker measures
no per-ip byte or request rate), and so are entities whose keys are none of the measured
ones (``controller_mutation_rate``, ``connection_creation_rate``).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from kquota.model import IP, Entity, QuotaState, sorted_entities
from kquota.plan.resolver import Principal, resolve
from kquota.usage.profile import Profiles, SeriesProfile
from kquota.usage.rows import RATE_METRICS

UTILISATION_PERCENTILE = Decimal(99)


@dataclass(frozen=True, slots=True)
class RateUse:
    """RateUse is one rate series of a principal on one broker, with its effective quota and
    its throttle time (None: no throttle-time series was read beside it)."""

    rate: SeriesProfile
    key: str
    quota: float | None
    """the effective per-broker quota (None: unlimited)"""
    source: Entity | None
    throttle: SeriesProfile | None

    @property
    def principal(self) -> Principal:
        return Principal(self.rate.user, self.rate.client_id)

    @property
    def censored(self) -> bool:
        """censored: throttled at some sample of the window, so the rate is a floor of the
        demand, not the demand."""
        return self.throttle is not None and self.throttle.above_zero > 0

    def utilisation(self, p: Decimal = UTILISATION_PERCENTILE) -> float | None:
        """utilisation is the p-th percentile over the quota (None: unlimited)."""
        if self.quota is None or self.quota <= 0:
            return None
        return self.rate.at(p) / self.quota

    def to_data(self) -> dict[str, Any]:
        peak = None if self.quota is None or self.quota <= 0 else self.rate.max / self.quota
        return {
            "broker": self.rate.broker,
            "metric": self.rate.metric,
            "key": self.key,
            **self.rate.to_data(),
            "quota": self.quota,
            "quota_source": None if self.source is None else self.source.to_json(),
            "utilisation_p99": self.utilisation(),
            "utilisation_max": peak,
            "censored": self.censored,
            "throttle_time_ms": None if self.throttle is None else self.throttle.to_data(),
            "throttled_samples": None if self.throttle is None else self.throttle.above_zero,
        }


@dataclass(frozen=True, slots=True)
class UsageReport:
    """UsageReport is every principal's use on every broker, and the unmatched quotas."""

    profiles: Profiles
    uses: tuple[RateUse, ...]
    unmatched: tuple[Entity, ...]
    source: str
    """where the samples came from, for the reader (files, a server)"""

    @property
    def principals(self) -> tuple[Principal, ...]:
        return tuple(dict.fromkeys(u.principal for u in self.uses))

    @property
    def warnings(self) -> tuple[str, ...]:
        return self.profiles.warnings

    def to_data(self) -> dict[str, Any]:
        p = self.profiles
        return {
            "cluster": p.cluster,
            "source": self.source,
            "window": {"start_ms": p.start_ms, "end_ms": p.end_ms, "since_ms": p.since_ms},
            "samples": p.samples,
            "series": len(p.series),
            "principals": len(self.principals),
            "percentiles": "nearest-rank",
            "usage": [{"entity": u.principal.entity().to_json(), **u.to_data()} for u in self.uses],
            "unmatched_quotas": [
                {"entity": e.to_json(), "note": "candidate for removal: not removed"}
                for e in self.unmatched
            ],
            "warnings": list(self.warnings),
        }


def usage_report(profiles: Profiles, state: QuotaState, source: str) -> UsageReport:
    """usage_report joins each rate series with the effective quota of its tags."""
    uses: list[RateUse] = []
    matched: set[Entity] = set()
    resolved: dict[tuple[str | None, str | None], Any] = {}
    for rate, throttle in profiles.rates():
        tags = (rate.user, rate.client_id)
        resolution = resolved.get(tags)
        if resolution is None:
            resolution = resolved[tags] = resolve(state, *tags)
        key = RATE_METRICS[rate.metric]
        found = resolution.get(key)
        if found is not None:
            matched.add(found.source)
        uses.append(
            RateUse(
                rate,
                key,
                None if found is None else found.value,
                None if found is None else found.source,
                throttle,
            )
        )
    measured = set(RATE_METRICS.values())
    unmatched = tuple(
        e
        for e in sorted_entities(state)
        if e not in matched and IP not in e.types and measured & set(state[e])
    )
    return UsageReport(profiles, tuple(uses), unmatched, source)
