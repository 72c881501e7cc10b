"""Entities and describe filters as callers give them: a mapping or an :class:`Entity`.

A filter is a mapping of entity type to name, ``None`` meaning the default entity, as
KIP-546's ``--names`` / ``--defaults`` give it. Matching follows the KIP: a filter names the
types it constrains, and (unless strict) an entity may have other types besides.
"""

from __future__ import annotations

from collections.abc import Mapping

from kquota.argcheck import given, refuse
from kquota.display import safe_text
from kquota.errors import UsageError
from kquota.kafka.admin import FilterComponent, match_filter
from kquota.model import ENTITY_TYPES, IP, Entity

EntityLike = Entity | Mapping[str, str | None]
"""An entity as callers give it: an :class:`Entity` or ``{"user": "alice", "client-id": None}``."""


def as_entity(entity: EntityLike) -> Entity:
    """as_entity accepts an :class:`Entity` or a type -> name mapping (``None`` = default)."""
    if isinstance(entity, Entity):
        return entity
    if not isinstance(entity, Mapping) or not entity:
        what = "an empty mapping" if isinstance(entity, Mapping) else given(entity)
        raise UsageError(f"an entity is a non-empty mapping of type to name, not {what}")
    for entity_type, name in entity.items():
        if not isinstance(entity_type, str) or not (name is None or isinstance(name, str)):
            raise UsageError(
                "an entity maps an entity type (str) to a name (str, or None for the "
                f"default), not {given(entity_type)}: {given(name)}"
            )
    return Entity.of(entity)


def filter_components(parts: EntityLike) -> list[FilterComponent]:
    """filter_components turns ``{type: name or None}`` into describe filter components:
    a name matches exactly, ``None`` matches the default entity."""
    if isinstance(parts, Entity):
        return match_filter(parts.parts)
    if not isinstance(parts, Mapping):
        raise refuse("describe: components", "a mapping of entity type to name or None", parts)
    for entity_type, name in parts.items():
        if not isinstance(entity_type, str) or not (name is None or isinstance(name, str)):
            raise UsageError(
                "describe: components map an entity type (str) to a name (str, or None for "
                f"the default), not {given(entity_type)}: {given(name)}"
            )
    return match_filter(parts.items())


def type_problem(types: tuple[str, ...]) -> str | None:
    """type_problem refuses entity types the broker does not know (it answers UNSUPPORTED_VERSION
    to a describe and INVALID_REQUEST to an alter), before anything is sent."""
    unknown = [t for t in types if t not in ENTITY_TYPES]
    if not unknown:
        return None
    shown = ", ".join(f"'{safe_text(t)}'" for t in unknown)
    return f"unknown entity type {shown}; allowed: {', '.join(ENTITY_TYPES)}"


def entity_problems(entity: Entity) -> list[str]:
    """entity_problems applies the broker's rules for an entity's types and ip names (an IP
    address literal, as kquota's files take them: never a hostname the controller would
    resolve), so that nothing is sent when it would be refused."""
    unknown = type_problem(entity.types)
    problems = [unknown] if unknown is not None else []
    for entity_type, name in entity.parts:
        if entity_type == IP and name is not None:
            # Here, not at the top: kquota.desired.rules brings the desired-state reader
            # (YAML included), which describe-all never needs (about 0.08 s of CPU at its start).
            from kquota.desired.rules import ip_problem

            complaint = ip_problem(name)
            if complaint is not None:
                problems.append(f"{complaint[0]}; allowed: {complaint[1]}")  # a repr: escaped
    return problems
