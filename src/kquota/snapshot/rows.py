"""Normalising states to rows (cluster, entity, key, value), the shape both engines join.

The entity column is a canonical string (JSON of the entity's ordered ``(type, name)`` pairs),
so equal entities are equal strings and a row is self-contained for a distributed join.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from kquota.model import Entity, QuotaState


def row_key(entity: Entity) -> str:
    return json.dumps(entity.parts, separators=(",", ":"))


def entity_of(key: str) -> Entity:
    return Entity(tuple((t, n) for t, n in json.loads(key)))


def state_rows(cluster: str, state: QuotaState) -> Iterator[tuple[str, str, str, float]]:
    for entity, values in state.items():
        ek = row_key(entity)
        for key, value in values.items():
            yield (cluster, ek, key, value)
