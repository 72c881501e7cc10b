"""Effective-quota resolution: KIP-546's resolve API, which Kafka never shipped.

Follows the broker's DefaultQuotaCallback (KAFKA-QUOTA-SEMANTICS.md §5.1) literally rather
than the eight-level list in the docs, because the two differ at the edges:

1. resolution is per quota key: an entity takes part only for the keys it sets;
2. ``quotaMetricTags`` first picks the tags, then ``findQuota`` walks the chain those tags
   select; :func:`kquota.plan.precedence.choose` is that decision, shared with the fleet
   engines.

So for a client with an empty client-id, a user+default-client-id entity does not apply; and
a client with no user name where a default-user quota exists gets tags ("", "") and so no
quota at all for that key (real principals always have a name, ``ANONYMOUS`` at least).
No match means unlimited (``Long.MAX_VALUE`` in the broker); unlimited keys are simply absent
from a Resolution.

ip quotas (§5.2): the ip's own entity, then the default ip; names are compared as IP
addresses when both parse (the broker keys them by InetAddress).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from kquota.model import CLIENT_ID, IP, USER, Entity, QuotaState
from kquota.plan.precedence import Level, candidate, choose
from kquota.quotakeys import CLIENT_KEYS, IP_KEYS


@dataclass(frozen=True, slots=True)
class Principal:
    """Principal is who asks: a user (principal name), a client-id, and/or a client ip."""

    user: str | None = None
    client_id: str | None = None
    ip: str | None = None

    def entity(self) -> Entity:
        """entity is the principal in the entity JSON form (only the names given)."""
        parts: dict[str, str | None] = {}
        if self.user is not None:
            parts[USER] = self.user
        if self.client_id is not None:
            parts[CLIENT_ID] = self.client_id
        if self.ip is not None:
            parts[IP] = self.ip
        return Entity.of(parts)


@dataclass(frozen=True, slots=True)
class ResolvedQuota:
    """ResolvedQuota is one effective quota and the entity it comes from."""

    key: str
    value: float
    source: Entity


@dataclass(frozen=True, slots=True)
class Resolution:
    """Resolution is a principal's effective quotas, in QUOTA_KEYS order; absent = unlimited."""

    principal: Principal
    quotas: tuple[ResolvedQuota, ...]

    def get(self, key: str) -> ResolvedQuota | None:
        return next((q for q in self.quotas if q.key == key), None)

    @property
    def keys(self) -> tuple[str, ...]:
        """keys are the quota keys that apply to this principal (limited or not)."""
        client = self.principal.user is not None or self.principal.client_id is not None
        return (CLIENT_KEYS if client else ()) + (IP_KEYS if self.principal.ip is not None else ())

    def to_data(self) -> dict[str, Any]:
        return {
            "entity": self.principal.entity().to_json(),
            "quotas": {
                q.key: {"value": q.value, "source": q.source.to_json()} for q in self.quotas
            },
        }


def resolve(
    state: Mapping[Entity, Mapping[str, float]],
    user: str | None,
    client_id: str | None,
    ip: str | None = None,
) -> Resolution:
    """resolve gives the effective quotas of a principal under ``state``.

    ``None`` and ``""`` both mean "no name" for user and client-id, as in the broker, where
    an absent client-id is the empty string.
    """
    principal = Principal(user, client_id, ip)
    found: list[ResolvedQuota] = []
    if user is not None or client_id is not None:
        for key in CLIENT_KEYS:
            hit = _client_quota(state, key, user or "", client_id or "")
            if hit is not None:
                found.append(ResolvedQuota(key, hit[1], hit[0]))
    if ip is not None:
        for key in IP_KEYS:
            hit = _ip_quota(state, key, ip)
            if hit is not None:
                found.append(ResolvedQuota(key, hit[1], hit[0]))
    return Resolution(principal, tuple(found))


def _client_quota(
    state: Mapping[Entity, Mapping[str, float]], key: str, user: str, client: str
) -> tuple[Entity, float] | None:
    present = []
    for level in Level:
        values = state.get(candidate(level, user, client))
        if values is not None and key in values:
            present.append(level)
    chosen = choose(present, user, client)
    if chosen is None:
        return None
    entity = candidate(chosen, user, client)
    return entity, state[entity][key]


def _ip_quota(
    state: Mapping[Entity, Mapping[str, float]], key: str, ip: str
) -> tuple[Entity, float] | None:
    own = Entity(((IP, ip),))
    values = state.get(own)
    if values is not None and key in values:
        return own, values[key]
    address = _address(ip)
    if address is not None:
        for entity, values in state.items():
            if key in values and entity.types == (IP,):
                name = entity.parts[0][1]
                if name is not None and name != ip and _address(name) == address:
                    return entity, values[key]
    default = Entity(((IP, None),))
    values = state.get(default)
    if values is not None and key in values:
        return default, values[key]
    return None


def _address(name: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(name)
    except ValueError:
        return None


@dataclass(frozen=True, slots=True)
class ResolutionChange:
    """ResolutionChange is one effective quota of a principal that a plan changes."""

    principal: Principal
    key: str
    before: ResolvedQuota | None
    after: ResolvedQuota | None


def resolution_changes(
    before_state: QuotaState, after_state: QuotaState, principals: Iterable[Principal]
) -> tuple[ResolutionChange, ...]:
    """resolution_changes lists, per principal and key, effective quotas whose value or
    source differ between two states (typically a snapshot and the plan applied to it)."""
    changes: list[ResolutionChange] = []
    for p in principals:
        before = resolve(before_state, p.user, p.client_id, p.ip)
        after = resolve(after_state, p.user, p.client_id, p.ip)
        for key in before.keys:
            b, a = before.get(key), after.get(key)
            if b != a:
                changes.append(ResolutionChange(p, key, b, a))
    return tuple(changes)
