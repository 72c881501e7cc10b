"""Capacity and headroom (issue 23): can the quotas a plan leaves hold on this cluster?

Pure: from the capacity declared in ``kquota.yaml``, the broker facts read live (broker
count, thread counts, leadership, the connection-rate limit) and the known principals, it
sums effective quotas before and after a plan.

Decisions:

- **Quotas are per broker.** Kafka enforces byte-rate and request quotas on each broker on
  its own, so a principal's effective quota is what it may use *on one broker*; the sum over
  principals is compared with *one broker's* capacity (the oversubscription ratio), and a
  principal's cluster-wide ceiling is its quota times the brokers it can reach.
- **A default multiplies.** A ``<default>`` quota applies once for every principal that falls
  back to it, so each known principal resolving to it counts it once. It also applies to
  every principal nobody listed (any client may connect with a new client id), so a key
  with a default in force has an **unbounded** total: reported as such, never as a number;
  the sum over known principals is still shown, as a floor.
- **Unlimited known principals** are counted, not summed (they would make every total
  infinite and say nothing new).
- **Which capacity per key:** producer bytes against ingress (and disk write when declared),
  consumer bytes against egress, ``request_percentage`` against ``(io threads + network
  threads) × 100`` (the broker's own request-quota capacity), ``connection_creation_rate``
  against the broker's ``max.connection.creation.rate``. ``controller_mutation_rate`` is
  left out: where KRaft enforces it is unsettled, so no per-broker sum means anything.
- **Ceilings** use the brokers that lead at least one partition: kquota does not know which
  topics a principal may reach, so this is an upper bound on "brokers leading partitions it
  can reach"; the all-brokers ceiling is the bound for requests that need no partition.
- **The guard** (``policy.capacity.max_oversubscription``) stops a plan that leaves a key's
  known-principal ratio above the maximum *and* raises it: a cluster already oversubscribed
  is not stopped by an unrelated change. Protected principals' guarantees over capacity are
  a warning that nothing hides, never a stop (the stop is the policy's to ask for).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kquota.model import Entity, QuotaState
from kquota.plan.resolver import Principal, resolve
from kquota.quotakeys import QUOTA_KEYS

MUTATION_KEY = "controller_mutation_rate"
MUTATION_NOTE = (
    "controller_mutation_rate is left out of the sums: where KRaft enforces it (controller or "
    "broker) is unsettled, so a per-broker total would mean nothing"
)
DISK_WRITE = "producer_byte_rate (disk write)"
"""The row that compares producer bytes with the declared disk write capacity."""
CEILING_KEYS = ("producer_byte_rate", "consumer_byte_rate", "request_percentage")
UNLIMITED_CONNECTION_RATE = float(2**31 - 1)
"""``max.connection.creation.rate``'s default (Int.MaxValue): no limit to compare with."""


@dataclass(frozen=True, slots=True)
class DeclaredCapacity:
    """DeclaredCapacity is one broker's capacity as ``kquota.yaml`` declares it (bytes per
    second; None = not declared)."""

    ingress: float | None = None
    egress: float | None = None
    disk_write: float | None = None


@dataclass(frozen=True, slots=True)
class BrokerFacts:
    """BrokerFacts is what the live cluster says about its capacity (None = not known: a
    snapshot, or a setting that could not be read). Thread counts and the connection-rate
    limit are the smallest over the brokers: the tightest broker is where a sum fails."""

    brokers: int | None = None
    leaders: int | None = None
    """brokers leading at least one partition"""
    io_threads: int | None = None
    network_threads: int | None = None
    max_connection_creation_rate: float | None = None
    unknown_because: str | None = None
    """why some facts are missing (offline, not authorised), for the reader"""

    @property
    def request_capacity(self) -> float | None:
        """request_capacity is ``(io threads + network threads) × 100`` percent."""
        if self.io_threads is None or self.network_threads is None:
            return None
        return float((self.io_threads + self.network_threads) * 100)

    def to_data(self) -> dict[str, Any]:
        return {
            "brokers": self.brokers,
            "leaders": self.leaders,
            "io_threads": self.io_threads,
            "network_threads": self.network_threads,
            "max_connection_creation_rate": self.max_connection_creation_rate,
            "unknown_because": self.unknown_because,
        }


@dataclass(frozen=True, slots=True)
class KeySum:
    """KeySum is one key's effective per-broker quotas summed over some principals.

    ``total`` is the sum over the limited ones; ``defaults`` are the default entities that
    set the key and apply to principals nobody can list: when any, the total is unbounded
    and ``total`` is only a floor."""

    total: float = 0.0
    limited: int = 0
    unlimited: int = 0
    defaults: tuple[Entity, ...] = ()

    @property
    def unbounded(self) -> bool:
        return bool(self.defaults)

    def ratio(self, capacity: float | None) -> float | None:
        """ratio is the oversubscription ratio (None: no capacity, or unbounded)."""
        if capacity is None or capacity <= 0 or self.unbounded:
            return None
        return self.total / capacity

    def to_data(self, capacity: float | None) -> dict[str, Any]:
        return {
            "sum": None if self.unbounded else self.total,
            "known_sum": self.total,
            "unbounded": self.unbounded,
            "limited": self.limited,
            "unlimited": self.unlimited,
            "defaults": [d.to_json() for d in self.defaults],
            "ratio": self.ratio(capacity),
        }


@dataclass(frozen=True, slots=True)
class KeyCapacity:
    """KeyCapacity is one key (row) against its capacity, before and after the plan; the
    protected principals' sum alone; the quotas above one broker's capacity after it."""

    key: str
    """the quota key, or :data:`DISK_WRITE`"""
    capacity: float | None
    capacity_source: str
    before: KeySum
    after: KeySum
    protected_before: KeySum | None = None
    protected_after: KeySum | None = None
    never_throttle: tuple[tuple[Entity, float], ...] = ()
    """(entity, value) whose value is above one broker's capacity: it can never throttle"""

    @property
    def quota_key(self) -> str:
        return self.key.split(" ", 1)[0]

    @property
    def protected_over(self) -> bool:
        """protected_over: the protected principals' guarantees add up past capacity."""
        p = self.protected_after
        return p is not None and self.capacity is not None and p.total > self.capacity

    def to_data(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "key": self.key,
            "capacity": self.capacity,
            "capacity_source": self.capacity_source,
            "before": self.before.to_data(self.capacity),
            "after": self.after.to_data(self.capacity),
            "never_throttle": [{"entity": e.to_json(), "value": v} for e, v in self.never_throttle],
        }
        if self.protected_after is not None and self.protected_before is not None:
            data["protected_before"] = self.protected_before.to_data(self.capacity)
            data["protected_after"] = self.protected_after.to_data(self.capacity)
            data["protected_over_capacity"] = self.protected_over
        return data


@dataclass(frozen=True, slots=True)
class Ceiling:
    """Ceiling is one principal's cluster-wide ceiling for a key after the plan: its
    per-broker quota times the brokers leading partitions, and times all brokers."""

    principal: Principal
    key: str
    quota: float
    source: Entity
    leaders: float | None
    brokers: float | None

    def to_data(self) -> dict[str, Any]:
        return {
            "principal": self.principal.entity().to_json(),
            "key": self.key,
            "quota": self.quota,
            "source": self.source.to_json(),
            "leaders_ceiling": self.leaders,
            "brokers_ceiling": self.brokers,
        }


@dataclass(frozen=True, slots=True)
class CapacityReport:
    """CapacityReport is the capacity section of a plan (``plan --capacity``)."""

    facts: BrokerFacts
    keys: tuple[KeyCapacity, ...]
    principals: int
    ceilings: tuple[Ceiling, ...] = ()
    max_oversubscription: float | None = None
    notes: tuple[str, ...] = (MUTATION_NOTE,)
    callback: str | None = None
    """a custom quota callback the brokers run: per-entity sums may not be what is enforced"""
    oversubscription_allowed: bool = False
    stopped: tuple[str, ...] = field(default=())
    """one line per key the plan pushes past ``max_oversubscription`` (the guard's verdict,
    kept when overridden like the other guards')"""

    @property
    def stops(self) -> bool:
        return bool(self.stopped) and not self.oversubscription_allowed

    @property
    def warnings(self) -> tuple[str, ...]:
        """warnings no flag hides: protected guarantees that cannot all hold."""
        out = []
        for k in self.keys:
            if k.protected_over and k.protected_after is not None and k.capacity is not None:
                out.append(
                    f"capacity: the protected principals' {k.key} quotas add up to "
                    f"{_num(k.protected_after.total)} per broker, over the capacity of "
                    f"{_num(k.capacity)}: their guarantees cannot all hold"
                )
        return tuple(out)

    def to_data(self) -> dict[str, Any]:
        return {
            "facts": self.facts.to_data(),
            "principals": self.principals,
            "keys": [k.to_data() for k in self.keys],
            "ceilings": [c.to_data() for c in self.ceilings],
            "max_oversubscription": self.max_oversubscription,
            "oversubscription_stops": list(self.stopped),
            "oversubscription_allowed": self.oversubscription_allowed,
            "warnings": list(self.warnings),
            "notes": list(self.notes),
            "quota_callback": self.callback,
        }


def key_sum(
    state: Mapping[Entity, Mapping[str, float]],
    key: str,
    principals: Iterable[Principal],
) -> KeySum:
    """key_sum sums ``key``'s effective quota over ``principals`` under ``state`` (each
    principal resolved with the broker's precedence: a default counts once per principal
    that falls back to it), and names the defaults that make the total unbounded."""
    total, limited, unlimited = 0.0, 0, 0
    kind = QUOTA_KEYS[key].entity_kind
    for p in principals:
        if (p.ip is None) if kind == "ip" else (p.user is None and p.client_id is None):
            continue  # the key never applies to this principal
        q = resolve(state, p.user, p.client_id, p.ip).get(key)
        if q is None:
            unlimited += 1
        else:
            total += q.value
            limited += 1
    return KeySum(total, limited, unlimited, unbounded_defaults(state, key))


def unbounded_defaults(state: Mapping[Entity, Mapping[str, float]], key: str) -> tuple[Entity, ...]:
    """unbounded_defaults are the entities setting ``key`` with a ``<default>`` part: each
    applies to principals nobody can list (a new client id, a new user, a new address)."""
    found = [
        e for e, values in state.items() if key in values and any(n is None for _, n in e.parts)
    ]
    return tuple(sorted(found, key=Entity.sort_key))


def above(
    state: Mapping[Entity, Mapping[str, float]], key: str, capacity: float | None
) -> tuple[tuple[Entity, float], ...]:
    """above is every (entity, value) of ``key`` over one broker's ``capacity``: such a
    quota can never throttle."""
    if capacity is None:
        return ()
    hits = [(e, v[key]) for e, v in state.items() if key in v and v[key] > capacity]
    return tuple(sorted(hits, key=lambda h: h[0].sort_key()))


def capacities(
    declared: DeclaredCapacity, facts: BrokerFacts
) -> tuple[tuple[str, float | None, str], ...]:
    """capacities are the rows compared: (key or :data:`DISK_WRITE`, capacity, where it
    comes from). ``controller_mutation_rate`` has none (:data:`MUTATION_NOTE`)."""
    conn = facts.max_connection_creation_rate
    if conn is not None and conn >= UNLIMITED_CONNECTION_RATE:
        conn = None
    rows: list[tuple[str, float | None, str]] = [
        ("producer_byte_rate", declared.ingress, "declared ingress per broker"),
        ("consumer_byte_rate", declared.egress, "declared egress per broker"),
        ("request_percentage", facts.request_capacity, "(io + network threads) x 100"),
        ("connection_creation_rate", conn, "the broker's max.connection.creation.rate"),
    ]
    if declared.disk_write is not None:
        rows.insert(1, (DISK_WRITE, declared.disk_write, "declared disk write per broker"))
    return tuple(rows)


def capacity_report(
    before: QuotaState,
    after: QuotaState,
    principals: Sequence[Principal],
    declared: DeclaredCapacity,
    facts: BrokerFacts,
    *,
    protected: Callable[[Principal], bool] | None = None,
    max_oversubscription: float | None = None,
    oversubscription_allowed: bool = False,
    callback: str | None = None,
) -> CapacityReport:
    """capacity_report compares the quotas ``before`` and ``after`` a plan with capacity,
    over the known ``principals``; ``protected`` picks the protected ones for their own sum."""
    guarded = [p for p in principals if protected(p)] if protected is not None else None
    rows = []
    stopped = []
    for key, cap, source in capacities(declared, facts):
        quota_key = key.split(" ", 1)[0]
        b, a = key_sum(before, quota_key, principals), key_sum(after, quota_key, principals)
        pb = pa = None
        if guarded:
            pb, pa = key_sum(before, quota_key, guarded), key_sum(after, quota_key, guarded)
            # a protected principal's guarantee is its own quota: defaults elsewhere do not
            # make the protected sum unbounded
            pb, pa = _bounded(pb), _bounded(pa)
        row = KeyCapacity(key, cap, source, b, a, pb, pa, above(after, quota_key, cap))
        rows.append(row)
        ra, rb = a.ratio(cap), b.ratio(cap)
        over = max_oversubscription is not None and ra is not None and ra > max_oversubscription
        if over and ra is not None and (rb is None or ra > rb):
            stopped.append(
                f"{key}: known principals' quotas add up to {ra:.2f}x one broker's capacity"
                f" (was {'unknown' if rb is None else f'{rb:.2f}x'}), over "
                f"max_oversubscription={max_oversubscription:g}"
            )
    return CapacityReport(
        facts=facts,
        keys=tuple(rows),
        principals=len(principals),
        ceilings=ceilings(after, principals, facts),
        max_oversubscription=max_oversubscription,
        callback=callback,
        oversubscription_allowed=oversubscription_allowed,
        stopped=tuple(stopped),
    )


def ceilings(
    state: Mapping[Entity, Mapping[str, float]],
    principals: Iterable[Principal],
    facts: BrokerFacts,
) -> tuple[Ceiling, ...]:
    """ceilings are each limited principal's cluster-wide ceilings for the byte-rate and
    request keys: quota × brokers leading partitions, quota × all brokers (None: unknown)."""
    out = []
    for p in principals:
        if p.user is None and p.client_id is None:
            continue
        resolution = resolve(state, p.user, p.client_id, p.ip)
        for key in CEILING_KEYS:
            q = resolution.get(key)
            if q is None:
                continue
            out.append(
                Ceiling(
                    p,
                    key,
                    q.value,
                    q.source,
                    None if facts.leaders is None else q.value * facts.leaders,
                    None if facts.brokers is None else q.value * facts.brokers,
                )
            )
    return tuple(out)


def _bounded(s: KeySum) -> KeySum:
    return KeySum(s.total, s.limited, s.unlimited, ())


def _num(value: float) -> str:
    return str(int(value)) if value.is_integer() else f"{value:g}"
