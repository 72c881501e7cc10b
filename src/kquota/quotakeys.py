"""The quota keys the broker knows, with the rules its controller applies to them.

Facts from Kafka's QuotaConfig (KIP-546 keys, KIP-124 request_percentage, KIP-599
controller_mutation_rate, KIP-612 connection_creation_rate) and the controller's
validateQuotaKeyValue: values must be > 0; LONG and INT keys must be whole numbers and
within range. kquota is stricter than the broker where the broker is lax by accident:
NaN and infinities are rejected here (the controller's comparisons let NaN through).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from enum import Enum

from kquota.display import safe_text
from kquota.model import CLIENT_ID, ENTITY_TYPES, IP, MAX_NAME_BYTES, USER, Entity, name_bytes


class ValueType(Enum):
    LONG = "LONG"
    INT = "INT"
    DOUBLE = "DOUBLE"


@dataclass(frozen=True, slots=True)
class QuotaKey:
    name: str
    value_type: ValueType
    entity_kind: str  # "client" (user and/or client-id) or "ip"
    unit: str  # for human rendering: "bytes/s", "%", "/s"


QUOTA_KEYS: dict[str, QuotaKey] = {
    k.name: k
    for k in (
        QuotaKey("producer_byte_rate", ValueType.LONG, "client", "bytes/s"),
        QuotaKey("consumer_byte_rate", ValueType.LONG, "client", "bytes/s"),
        QuotaKey("request_percentage", ValueType.DOUBLE, "client", "%"),
        QuotaKey("controller_mutation_rate", ValueType.DOUBLE, "client", "/s"),
        QuotaKey("connection_creation_rate", ValueType.INT, "ip", "/s"),
    )
}

CLIENT_KEYS = tuple(k for k, v in QUOTA_KEYS.items() if v.entity_kind == "client")
IP_KEYS = tuple(k for k, v in QUOTA_KEYS.items() if v.entity_kind == "ip")

LONG_MAX = 2**63 - 1
INT_MAX = 2**31 - 1


def entity_kind(types: tuple[str, ...] | list[str]) -> str | None:
    """entity_kind is "ip", "client" or None when the combination is not one the broker allows."""
    ts = set(types)
    if not ts or not ts <= {USER, CLIENT_ID, IP}:
        return None
    if IP in ts:
        return "ip" if ts == {IP} else None
    return "client"


def allowed_keys(types: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    kind = entity_kind(types)
    if kind == "ip":
        return IP_KEYS
    if kind == "client":
        return CLIENT_KEYS
    return ()


def value_problem(key: str, value: float) -> str | None:
    """value_problem explains why ``value`` is not valid for ``key``, or returns None.

    Booleans and non-numbers are the caller's to reject (they never reach a float).
    """
    spec = QUOTA_KEYS.get(key)
    if math.isnan(value):
        return "NaN is not a quota value"
    if math.isinf(value):
        return "infinity is not a quota value"
    if value <= 0:
        return "must be greater than 0"
    if spec is None or spec.value_type is ValueType.DOUBLE:
        return None
    if value != math.floor(value):
        return "must be a whole number"
    if spec.value_type is ValueType.LONG:
        return None if value <= LONG_MAX else f"must be at most {LONG_MAX} (a LONG)"
    return None if value <= INT_MAX else f"must be at most {INT_MAX} (an INT)"


def alteration_problems(
    entity: Entity, adds: Mapping[str, float], deletes: Collection[str]
) -> list[str]:
    """alteration_problems applies the controller's rules to one entity's alteration, so that
    nothing is sent when it would fail. An entity type kquota does not know is left to the
    broker: its own message is the one to show."""
    problems: list[str] = []
    for etype, name in entity.parts:
        if name is not None and name_bytes(name) > MAX_NAME_BYTES:
            problems.append(
                f"the {safe_text(etype)} name is {name_bytes(name)} bytes in UTF-8, longer than "
                f"the protocol allows (at most {MAX_NAME_BYTES})"
            )
    for key in sorted(set(adds) & set(deletes)):
        problems.append(f"{safe_text(key)} is both added and deleted")
    if not all(t in ENTITY_TYPES for t in entity.types):
        return problems
    if entity_kind(entity.types) is None:
        problems.append("an ip entity cannot be combined with user or client-id")
        return problems
    allowed = allowed_keys(entity.types)
    for key, value in adds.items():
        if key not in allowed:
            problems.append(
                f"{safe_text(key)} is not a quota key for this entity "
                f"(allowed: {', '.join(allowed)})"
            )
            continue
        if math.isnan(value) or math.isinf(value):
            problems.append(f"{key}: {value_problem(key, value)}")
            continue
        problem = value_problem(key, value)
        if problem is not None:
            problems.append(f"{key}={value!r}: {problem}")
    return problems
