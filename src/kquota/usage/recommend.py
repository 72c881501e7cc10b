"""Recommended quotas from observed demand: a reviewable patch, never an apply.

Pure: a :class:`~kquota.usage.report.UsageReport`, the quota state it was resolved against
and the options in, :class:`Recommendation` out. Rules (docs/usage.md says them too):

- **Per principal and key**, from its per-broker series: the chosen percentile's largest value
  over the brokers (quotas are per broker), times the headroom, never below the largest value
  it sent on any broker, rounded *up* to a readable value (``14MiB``, ``1.25MiB``; request
  percentages to two significant digits): :func:`readable`.
- **Where it goes**: a principal whose quota comes from its own entity (the entity its tags
  name) or that has none gets a value on that entity. A principal that falls back to another
  entity (``<default>``s, mostly) is one of that entity's population: the entity gets the
  largest value its population needs, so no member is sized below its own demand.
- **Censored** (throttled in the window): the observed rate is the quota, not the demand. The
  proposal is at least the current quota times the headroom, and flagged "raise, then
  observe": the next window shows what the principal really wants.
- **Protected principals are never lowered**: where a proposal is below the current quota of
  a protected principal (or of a population holding one), the current value stays.
- **Too short a window**: a principal observed for less than the minimum window gets no
  proposal, and is named. So is a key with no traffic at all (a quota of 0 would block it).
- **Capacity**: the effective quotas of the observed principals are summed per key before and
  after, beside one broker's declared capacity; over it is a warning, for the reviewer.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction
from typing import Any

from kquota.model import Entity, QuotaState, sorted_entities
from kquota.plan.capacity import KeySum, key_sum
from kquota.plan.resolver import Principal
from kquota.usage.report import RateUse, UsageReport

DAY_MS = 24 * 3600 * 1000
DEFAULT_KEYS = ("producer_byte_rate", "consumer_byte_rate", "request_percentage")
_BYTE_UNITS = (1024**4, 1024**3, 1024**2, 1024, 1)
CENSORED_NOTE = "throttled in the window: raise, then observe"
PROTECTED_NOTE = "protected: not lowered"


@dataclass(frozen=True, slots=True)
class RecommendOptions:
    """RecommendOptions are the choices a recommendation is made under (safe defaults)."""

    percentile: Decimal = Decimal(99)
    headroom: float = 1.5
    min_window_ms: int = 7 * DAY_MS
    keys: tuple[str, ...] = DEFAULT_KEYS

    def to_data(self) -> dict[str, Any]:
        return {
            "percentile": f"{self.percentile.normalize():f}",
            "headroom": self.headroom,
            "min_window_ms": self.min_window_ms,
            "keys": list(self.keys),
        }


@dataclass(frozen=True, slots=True)
class Proposal:
    """Proposal is one key's new value on one entity, and what it was sized from."""

    entity: Entity
    key: str
    current: float | None
    """the entity's value for the key today (None: not set)"""
    proposed: float
    peak: float
    """the chosen percentile's largest per-broker value over the principals sized"""
    used: float
    """the largest value they sent on any broker"""
    principals: int
    censored: bool
    protected: bool
    notes: tuple[str, ...] = ()

    @property
    def changed(self) -> bool:
        return self.current != self.proposed

    def to_data(self) -> dict[str, Any]:
        return {
            "entity": self.entity.to_json(),
            "key": self.key,
            "current": self.current,
            "proposed": self.proposed,
            "peak": self.peak,
            "used": self.used,
            "principals": self.principals,
            "censored": self.censored,
            "protected": self.protected,
            "notes": list(self.notes),
        }


@dataclass(frozen=True, slots=True)
class Skipped:
    """Skipped is a principal and key left without a proposal, and why."""

    principal: Principal
    key: str
    why: str


@dataclass(frozen=True, slots=True)
class CapacitySum:
    """CapacitySum is one key's effective quotas summed over the observed principals."""

    key: str
    capacity: float | None
    before: KeySum
    after: KeySum

    @property
    def over(self) -> bool:
        ratio = self.after.ratio(self.capacity)
        return ratio is not None and ratio > 1

    def to_data(self) -> dict[str, Any]:
        def one(s: KeySum) -> dict[str, Any]:
            return {
                "total": s.total,
                "limited": s.limited,
                "unlimited": s.unlimited,
                "unbounded": s.unbounded,
                "ratio": s.ratio(self.capacity),
            }

        return {
            "key": self.key,
            "capacity": self.capacity,
            "before": one(self.before),
            "after": one(self.after),
        }


@dataclass(frozen=True, slots=True)
class Recommendation:
    """Recommendation is the proposals, the patch state they make, and what was left out."""

    report: UsageReport
    options: RecommendOptions
    proposals: tuple[Proposal, ...]
    skipped: tuple[Skipped, ...]
    patch: QuotaState
    """each changed entity with all its values after the proposals (an overlay's entries)"""
    sums: tuple[CapacitySum, ...] = field(default=())

    @property
    def warnings(self) -> tuple[str, ...]:
        over = tuple(
            f"{s.key}: the observed principals' quotas after the patch add up to "
            f"{s.after.ratio(s.capacity):.2f}x one broker's declared capacity"
            for s in self.sums
            if s.over
        )
        return self.report.warnings + over

    def to_data(self) -> dict[str, Any]:
        p = self.report.profiles
        return {
            "cluster": p.cluster,
            "source": self.report.source,
            "window": {"start_ms": p.start_ms, "end_ms": p.end_ms, "since_ms": p.since_ms},
            "options": self.options.to_data(),
            "proposals": [x.to_data() for x in self.proposals],
            "skipped": [
                {"entity": s.principal.entity().to_json(), "key": s.key, "why": s.why}
                for s in self.skipped
            ],
            "capacity": [s.to_data() for s in self.sums],
            "warnings": list(self.warnings),
        }


@dataclass(frozen=True)
class Recommended:
    """Recommended is the recommendation and its patch as desired-state YAML."""

    recommendation: Recommendation
    text: str
    left_out: tuple[str, ...]


def readable(key: str, value: float) -> float:
    """readable rounds ``value`` up to a readable number. Byte rates in the largest binary
    unit of which there is at least one: from 10 of it, two significant digits (``13.2MiB``
    -> ``14MiB``, ``157MiB`` -> ``160MiB``), below that quarters (``1.23MiB`` -> ``1.25MiB``),
    so the value is always a whole number of the next unit down. Other keys: two
    significant digits (``4.21`` -> ``4.3``)."""
    exact = Fraction(value)
    if exact <= 0:
        return 0.0
    if key.endswith("_byte_rate"):
        unit = next((u for u in _BYTE_UNITS if exact >= u), 1)
        count = exact / unit
        if count < 10 and unit > 1:
            return float(math.ceil(count * 4) * Fraction(unit, 4))
        return float(_two_digits(count) * unit)
    return float(_two_digits(exact))


def _two_digits(count: Fraction) -> Fraction:
    """_two_digits rounds ``count`` up to two significant digits."""
    step = Fraction(10) ** (math.floor(math.log10(count)) - 1)
    return math.ceil(count / step) * step


def recommend(
    report: UsageReport,
    state: QuotaState,
    options: RecommendOptions,
    *,
    protected: Callable[[Principal], bool] = lambda p: False,
    capacity: Callable[[str], float | None] = lambda key: None,
) -> Recommendation:
    """recommend sizes each observed principal's keys from its demand (see the module)."""
    groups: dict[tuple[Principal, str], list[RateUse]] = {}
    for use in report.uses:
        if use.key in options.keys:
            groups.setdefault((use.principal, use.key), []).append(use)
    skipped: list[Skipped] = []
    # (entity, key) -> [(principal, its value, its peak, used, censored, current)]
    wanted: dict[tuple[Entity, str], list[tuple[Principal, float, float, float, bool]]] = {}
    for (principal, key), uses in groups.items():
        first = min(u.rate.first_ms for u in uses)
        last = max(u.rate.last_ms for u in uses)
        if last - first < options.min_window_ms:
            skipped.append(
                Skipped(
                    principal,
                    key,
                    f"observed for {span_text(last - first)}, less than the minimum window "
                    f"{span_text(options.min_window_ms)}",
                )
            )
            continue
        used = max(u.rate.max for u in uses)
        if used <= 0:
            skipped.append(Skipped(principal, key, "no traffic in the window"))
            continue
        peak = max(u.rate.at(options.percentile) for u in uses)
        censored = any(u.censored for u in uses)
        value = max(peak * options.headroom, used)
        current = uses[0].quota
        if censored and current is not None:
            value = max(value, current * options.headroom)
        source = uses[0].source
        own = principal.entity()
        entity = own if source is None else source
        wanted.setdefault((entity, key), []).append(
            (principal, readable(key, value), peak, used, censored)
        )
    proposals: list[Proposal] = []
    patch: QuotaState = {}
    for (entity, key), members in sorted(
        wanted.items(), key=lambda kv: (kv[0][0].sort_key(), kv[0][1])
    ):
        current = state.get(entity, {}).get(key)
        proposed = max(v for _, v, _, _, _ in members)
        guarded = any(protected(p) for p, *_ in members)
        notes: list[str] = []
        censored = any(c for *_, c in members)
        if censored:
            notes.append(CENSORED_NOTE)
        if guarded and current is not None and proposed < current:
            proposed = current
            notes.append(PROTECTED_NOTE)
        if len(members) > 1 or entity != members[0][0].entity():
            notes.append(f"sized for the {len(members)} principal(s) that fall back to it")
        proposal = Proposal(
            entity,
            key,
            current,
            proposed,
            max(p for _, _, p, _, _ in members),
            max(u for _, _, _, u, _ in members),
            len(members),
            censored,
            guarded,
            tuple(notes),
        )
        proposals.append(proposal)
        if proposal.changed:
            values = patch.get(entity)
            if values is None:
                values = patch[entity] = dict(state.get(entity, {}))
            values[key] = proposed
    patch = {e: patch[e] for e in sorted_entities(patch)}
    after = {**state, **patch}
    principals = list(report.principals)
    sums = tuple(
        CapacitySum(
            key, capacity(key), key_sum(state, key, principals), key_sum(after, key, principals)
        )
        for key in options.keys
    )
    skipped.sort(key=lambda s: (s.principal.user or "", s.principal.client_id or "", s.key))
    return Recommendation(report, options, tuple(proposals), tuple(skipped), patch, sums)


def span_text(ms: int) -> str:
    """_days writes a span as ``7d``, ``6d 23h 50m``, ``90s``: the largest units first."""
    seconds = ms // 1000
    parts = []
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            parts.append(f"{seconds // size}{unit}")
            seconds %= size
    if seconds or not parts:
        parts.append(f"{seconds}s")
    return " ".join(parts)
