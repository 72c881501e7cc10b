"""The broker's rules for one entity and one quota value, applied before any network call.

The controller's checks (KAFKA-QUOTA-SEMANTICS §3.3–3.5) plus kquota's stricter ones: NaN
and infinities are refused (the controller lets NaN through), booleans and strings are
refused (YAML reads ``yes`` as true), and ``ip`` names must be IP literals. The broker would
accept a hostname for ``ip``, but it resolves it on the controller, at apply time, with the
controller's DNS; a name that resolves here may not resolve there, and a quota keyed by a
hostname silently stops matching when DNS changes. So a hostname is refused locally.

A problem is a :data:`Complaint`, ``(what is wrong, what is allowed)``; the checks return
``None`` when all is well, and :func:`quota_value` returns the value as a float.
"""

from __future__ import annotations

import ipaddress
from functools import lru_cache

from kquota import quotakeys
from kquota.desired.nodes import STR_TAG, Unsupported, kind_name, resolve_tag
from kquota.desired.units import SIZE_HELP, UnitError, parse_byte_size
from kquota.model import CLIENT_ID, ENTITY_TYPES, IP, USER
from kquota.quotakeys import INT_MAX, LONG_MAX, QUOTA_KEYS, ValueType

Complaint = tuple[str, str]

NAME_HELP = '<default> (the default entity), a non-empty name, or {name: "..."} (a literal name)'
IP_NAME_HELP = "an IPv4 or IPv6 literal such as 203.0.113.7 or 2001:db8::1, or <default>"
ENTITY_TYPES_HELP = ", ".join(ENTITY_TYPES)
COMBINATIONS_HELP = "user, client-id, user + client-id, or ip alone"


def allowed_values(key: str) -> str:
    """allowed_values says, for a message, which values ``key`` takes."""
    spec = QUOTA_KEYS[key]
    if spec.value_type is ValueType.LONG:
        return f"a whole number of bytes from 1 to {LONG_MAX}, or " + SIZE_HELP
    if spec.value_type is ValueType.INT:
        return f"a whole number from 1 to {INT_MAX}"
    return "a finite number greater than 0"


def kind_label(types: tuple[str, ...]) -> str:
    return "ip" if IP in types else "user/client-id"


@lru_cache(maxsize=64)
def keys_help(types: tuple[str, ...]) -> str:
    """keys_help lists the keys an entity of these types takes, for a message."""
    return ", ".join(quotakeys.allowed_keys(types)) + f" (the {kind_label(types)} keys)"


def quota_value(key: str, raw: object) -> float | Complaint:
    """quota_value checks one YAML value for a known quota key and gives its float."""
    spec = QUOTA_KEYS[key]
    if isinstance(raw, bool) or raw is None or isinstance(raw, Unsupported):
        return (f"{kind_name(raw)} is not a quota value", allowed_values(key))
    if isinstance(raw, str):
        if _looks_numeric(raw):
            if resolve_tag(raw, True) != STR_TAG:
                return (f"{raw!r} is quoted, so it is a string, not a number", allowed_values(key))
            # YAML 1.1 (PyYAML) reads 1e3 as a string: floats need a dot, as in 1.0e+3.
            return (
                f"{raw!r} is a string in YAML 1.1, not a number (write 1.0e+3, not 1e3)",
                allowed_values(key),
            )
        if spec.unit != "bytes/s":
            return ("a string is not a quota value", allowed_values(key))
        try:
            raw = parse_byte_size(raw)
        except UnitError as e:
            return (str(e), allowed_values(key))
    if isinstance(raw, int):
        # Range-check the exact integer: float(2**63 - 1) rounds up to 2**63.
        if raw <= 0:
            return ("must be greater than 0", allowed_values(key))
        limit = {ValueType.LONG: LONG_MAX, ValueType.INT: INT_MAX}.get(spec.value_type)
        if limit is not None and raw > limit:
            return (
                f"must be at most {limit}, the {spec.value_type.value} maximum",
                allowed_values(key),
            )
        try:
            return float(raw)
        except OverflowError:
            return ("is too large for a double", allowed_values(key))
    if isinstance(raw, float):
        problem = quotakeys.value_problem(key, raw)
        if problem is not None:
            return (problem, allowed_values(key))
        return raw
    return (f"{kind_name(raw)} is not a quota value", allowed_values(key))


def combination_problem(types: tuple[str, ...]) -> Complaint | None:
    """combination_problem refuses ip with user or client-id (the controller's step C)."""
    if IP in types and (USER in types or CLIENT_ID in types):
        return ("ip cannot be combined with user or client-id", COMBINATIONS_HELP)
    return None


def ip_problem(name: str) -> Complaint | None:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return (
            f"ip {name!r} is not an IP address (hostnames are refused: the broker would "
            "resolve them on the controller at apply time)",
            IP_NAME_HELP,
        )
    return None


def _looks_numeric(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True
