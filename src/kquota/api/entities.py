"""Entities and describe filters as callers give them: a mapping or an :class:`Entity`.

A filter is a mapping of entity type to name, ``None`` meaning the default entity, as
KIP-546's ``--names`` / ``--defaults`` give it. Matching follows the KIP: a filter names the
types it constrains, and (unless strict) an entity may have other types besides.
"""

from __future__ import annotations

from collections.abc import Mapping

from kquota.argcheck import given, refuse
from kquota.errors import UsageError
from kquota.kafka.admin import FilterComponent, match_filter
from kquota.model import Entity

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
