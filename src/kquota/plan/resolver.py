"""Effective-quota resolution: KIP-546's resolve API, which Kafka never shipped.

Follows the broker's DefaultQuotaCallback (docs/precedence.md) literally rather
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

ip quotas (docs/precedence.md, "ip quotas"): the ip's own entity, then the default ip; names
are compared as IP addresses when both parse (the broker keys them by InetAddress).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from ipaddress import IPv4Address
from typing import Any

from kquota.model import IP, Entity, QuotaState
from kquota.names import Address, ip_address
from kquota.plan.precedence import Level, candidate, choose
from kquota.principal import Principal as Principal
from kquota.principal import unique_principals as unique_principals
from kquota.quotakeys import CLIENT_KEYS, IP_KEYS


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
    quota_callback: str | None = None
    """the custom quota callback class the brokers run, when resolved against a live cluster
    that has one: the broker may then compute quotas differently from these rules"""

    def get(self, key: str) -> ResolvedQuota | None:
        """get is the effective quota for ``key``, or None when the key is unlimited."""
        return next((q for q in self.quotas if q.key == key), None)

    @property
    def keys(self) -> tuple[str, ...]:
        """keys are the quota keys that apply to this principal (limited or not)."""
        client = self.principal.user is not None or self.principal.client_id is not None
        return (CLIENT_KEYS if client else ()) + (IP_KEYS if self.principal.ip is not None else ())

    def to_data(self) -> dict[str, Any]:
        """to_data is the JSON form ``kquota resolve --format json`` prints."""
        data: dict[str, Any] = {
            "entity": self.principal.entity().to_json(),
            "quotas": {
                q.key: {"value": q.value, "source": q.source.to_json()} for q in self.quotas
            },
        }
        if self.quota_callback is not None:
            data["quota_callback"] = self.quota_callback
        return data


def resolve(
    state: Mapping[Entity, Mapping[str, float]],
    user: str | None,
    client_id: str | None,
    ip: str | None = None,
    *,
    spellings: IpSpellings | None = None,
) -> Resolution:
    """resolve gives the effective quotas of a principal under ``state``.

    ``None`` and ``""`` both mean "no name" for user and client-id, as in the broker, where
    an absent client-id is the empty string. ``spellings`` (:func:`ip_spellings` of
    ``state``) spares an ip principal a walk over every entity, for callers resolving many.
    """
    principal = Principal(user, client_id, ip)
    found: list[ResolvedQuota] = []
    if user is not None or client_id is not None:
        u, c = user or "", client_id or ""
        held = [(level, e, state.get(e)) for level in Level for e in (candidate(level, u, c),)]
        for key in CLIENT_KEYS:
            hit = _client_quota(held, key, u, c)
            if hit is not None:
                found.append(ResolvedQuota(key, hit[1], hit[0]))
    if ip is not None:
        for key in IP_KEYS:
            hit = _ip_quota(state, key, ip, spellings)
            if hit is not None:
                found.append(ResolvedQuota(key, hit[1], hit[0]))
    return Resolution(principal, tuple(found))


def _client_quota(
    held: Sequence[tuple[Level, Entity, Mapping[str, float] | None]],
    key: str,
    user: str,
    client: str,
) -> tuple[Entity, float] | None:
    """_client_quota picks ``key``'s quota from the principal's eight candidates (``held``:
    each level, its entity, and that entity's values in the state or None)."""
    present = [level for level, _, values in held if values is not None and key in values]
    chosen = choose(present, user, client)
    if chosen is None:
        return None
    _, entity, values = held[chosen - 1]
    assert values is not None
    return entity, values[key]


IpSpellings = Mapping[Address, Collection[Entity]]
"""IpSpellings is a state's named ip entities by the address they name, except dotted-quad
names (:func:`ip_spellings`)."""

_DOTTED = re.compile(r"[0-9]{1,3}(?:\.[0-9]{1,3}){3}")


def ip_spellings(
    state: Mapping[Entity, object], *, dotted: bool = False
) -> dict[Address, list[Entity]]:
    """ip_spellings indexes a state's named ip entities by address, in the state's order.

    Dotted-quad names are left out unless ``dotted``: a valid one is the canonical spelling
    of its address (Python refuses leading zeros), so a resolver finds it by looking its
    canonical name up, and a cluster of 100k ip quotas is not parsed name by name.
    """
    out: dict[Address, list[Entity]] = {}
    for entity in state:
        parts = entity.parts
        if len(parts) == 1 and parts[0][0] == IP and parts[0][1] is not None:
            name = parts[0][1]
            if not dotted and _DOTTED.fullmatch(name):
                continue
            address = ip_address(name)
            if address is not None:
                out.setdefault(address, []).append(entity)
    return out


def _others(
    state: Mapping[Entity, object], address: Address, own: Entity, spellings: IpSpellings
) -> list[Entity]:
    """_others are the state's other spellings of ``address``, in the state's order."""
    others = list(spellings.get(address, ()))
    if isinstance(address, IPv4Address):
        dotted = Entity(((IP, str(address)),))
        if dotted != own and dotted in state:
            others.append(dotted)
    if len(others) > 1:  # an address held under several spellings: rare, warned about
        position = {e: i for i, e in enumerate(state)}
        others.sort(key=position.__getitem__)
    return others


def _respelled(
    before: dict[Address, list[Entity]],
    before_state: QuotaState,
    after_state: QuotaState,
    altered: Collection[Entity],
) -> dict[Address, list[Entity]]:
    """_respelled is :func:`ip_spellings` of ``after_state`` from that of ``before_state``,
    given the only entities that differ: parsing every ip name once, not twice."""
    out = dict(before)
    for address, entities in ip_spellings(dict.fromkeys(altered)).items():
        kept = [e for e in out.get(address, []) if e in after_state]
        kept += [e for e in entities if e in after_state and e not in before_state]
        out[address] = kept
    return out


def _ip_quota(
    state: Mapping[Entity, Mapping[str, float]],
    key: str,
    ip: str,
    spellings: IpSpellings | None = None,
) -> tuple[Entity, float] | None:
    own = Entity(((IP, ip),))
    values = state.get(own)
    if values is not None and key in values:
        return own, values[key]
    address = ip_address(ip)
    if address is not None:
        for entity in state if spellings is None else _others(state, address, own, spellings):
            values = state[entity]
            if key in values and entity.types == (IP,):
                name = entity.parts[0][1]
                if name is not None and name != ip and ip_address(name) == address:
                    return entity, values[key]
    default = Entity(((IP, None),))
    values = state.get(default)
    if values is not None and key in values:
        return default, values[key]
    return None


@dataclass(frozen=True, slots=True)
class ResolutionChange:
    """ResolutionChange is one effective quota of a principal that a plan changes."""

    principal: Principal
    key: str
    before: ResolvedQuota | None
    after: ResolvedQuota | None


def resolution_changes(
    before_state: QuotaState,
    after_state: QuotaState,
    principals: Iterable[Principal],
    *,
    altered: Collection[Entity] | None = None,
) -> tuple[ResolutionChange, ...]:
    """resolution_changes lists, per principal and key, effective quotas whose value or
    source differ between two states (typically a snapshot and the plan applied to it).

    ``altered`` (the entities a plan alters; every other entity must be equal in both states)
    makes it fast on large clusters: a principal's key is resolved only when one of the
    entities it may draw that key from is altered and holds the key before or after; nothing
    else can change. The result is the same as without ``altered`` (a property test holds
    the two equal).
    """
    changes: list[ResolutionChange] = []
    changed = None if altered is None else frozenset(altered)
    addresses = frozenset(ip_spellings(dict.fromkeys(changed or ()), dotted=True))
    spellings: tuple[IpSpellings, IpSpellings] | None = None
    for p in principals:
        if p.user is not None or p.client_id is not None:
            changes += _client_changes(before_state, after_state, p, changed)
        if p.ip is None or (changed is not None and not _ip_touched(p.ip, changed, addresses)):
            continue
        if spellings is None:
            spell = ip_spellings(before_state)
            after = (
                ip_spellings(after_state)
                if changed is None
                else _respelled(spell, before_state, after_state, changed)
            )
            spellings = (spell, after)
        for key in IP_KEYS:
            b = _resolved(key, _ip_quota(before_state, key, p.ip, spellings[0]))
            a = _resolved(key, _ip_quota(after_state, key, p.ip, spellings[1]))
            if b != a:
                changes.append(ResolutionChange(p, key, b, a))
    return tuple(changes)


def _resolved(key: str, hit: tuple[Entity, float] | None) -> ResolvedQuota | None:
    return None if hit is None else ResolvedQuota(key, hit[1], hit[0])


def _client_changes(
    before_state: QuotaState,
    after_state: QuotaState,
    p: Principal,
    changed: frozenset[Entity] | None,
) -> list[ResolutionChange]:
    user, client = p.user or "", p.client_id or ""
    entities = [candidate(level, user, client) for level in Level]
    before = [before_state.get(e) for e in entities]
    if changed is None:
        after = [after_state.get(e) for e in entities]
        keys: Iterable[str] = CLIENT_KEYS
    else:
        hit = [i for i, e in enumerate(entities) if e in changed]
        if not hit:
            return []
        after = list(before)
        touched: set[str] = set()
        for i in hit:
            after[i] = after_state.get(entities[i])
            touched.update(before[i] or ())
            touched.update(after[i] or ())
        keys = [k for k in CLIENT_KEYS if k in touched]
    held_before = list(zip(Level, entities, before, strict=True))
    held_after = list(zip(Level, entities, after, strict=True))
    out = []
    for key in keys:
        b = _resolved(key, _client_quota(held_before, key, user, client))
        a = _resolved(key, _client_quota(held_after, key, user, client))
        if b != a:
            out.append(ResolutionChange(p, key, b, a))
    return out


def _ip_touched(ip: str, changed: frozenset[Entity], addresses: frozenset[Address]) -> bool:
    """_ip_touched: the ip's own entity, the default ip, or another spelling of its address
    is altered."""
    if Entity(((IP, ip),)) in changed or Entity(((IP, None),)) in changed:
        return True
    if not addresses:
        return False
    address = ip_address(ip)
    return address is not None and address in addresses
