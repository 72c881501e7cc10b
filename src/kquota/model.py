"""Domain types every layer shares: quota entities and the quotas they carry.

An entity is what KIP-546 calls a ClientQuotaEntity: a map of entity type to name, where the
name ``None`` is the default entity (null on the wire, ``<default>`` in output). The entity
types are opaque strings to the API; kquota knows ``user``, ``client-id`` and ``ip`` and keeps
any other type as given so that the broker's own error reaches the user.

Desired state and snapshots have one shape, :data:`QuotaState`: entity -> {key -> value}. They
are plain dicts on purpose: planners and resolvers walk hundreds of thousands of them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

USER = "user"
CLIENT_ID = "client-id"
IP = "ip"
ENTITY_TYPES: tuple[str, ...] = (USER, CLIENT_ID, IP)
DEFAULT_NAME_DISPLAY = "<default>"

_TYPE_RANK = {t: i for i, t in enumerate(ENTITY_TYPES)}


def _type_order(entity_type: str) -> tuple[int, str]:
    return (_TYPE_RANK.get(entity_type, len(ENTITY_TYPES)), entity_type)


@dataclass(frozen=True, slots=True)
class Entity:
    """Entity is one quota entity: ``(type, name)`` pairs in canonical type order.

    Canonical order (user, client-id, ip, then unknown types by name) makes equal entities
    equal tuples, whatever order the broker or a YAML file listed the types in.
    """

    parts: tuple[tuple[str, str | None], ...]

    @classmethod
    def of(cls, mapping: Mapping[str, str | None]) -> Entity:
        """Entity.of builds an entity from a type -> name map (``None`` = default entity)."""
        return cls(tuple(sorted(mapping.items(), key=lambda kv: _type_order(kv[0]))))

    @classmethod
    def from_json(cls, data: Mapping[str, str | None]) -> Entity:
        """Entity.from_json reads the JSON form of files: ``{"user": "a", "client-id": null}``."""
        return cls.of(data)

    def to_json(self) -> dict[str, str | None]:
        """to_json gives the JSON form used by every kquota file contract."""
        return dict(self.parts)

    @property
    def types(self) -> tuple[str, ...]:
        return tuple(t for t, _ in self.parts)

    def has(self, entity_type: str) -> bool:
        return any(t == entity_type for t, _ in self.parts)

    def name(self, entity_type: str) -> str | None:
        """name returns the name for a type (``None`` for the default); KeyError if absent."""
        for t, n in self.parts:
            if t == entity_type:
                return n
        raise KeyError(entity_type)

    @property
    def is_ip(self) -> bool:
        return self.has(IP)

    def sort_key(self) -> tuple[tuple[int, str, int, str], ...]:
        """sort_key orders entities stably: by type set, default entities before names."""
        return tuple(
            (*_type_order(t), 0 if n is None else 1, "" if n is None else n) for t, n in self.parts
        )

    def __str__(self) -> str:
        """The KIP-546 form, ``{user=alice, client-id=<default>}`` (names unsanitised)."""
        inner = ", ".join(f"{t}={DEFAULT_NAME_DISPLAY if n is None else n}" for t, n in self.parts)
        return "{" + inner + "}"


QuotaValues = dict[str, float]
"""One entity's quotas: key -> value (IEEE 754 double, as on the wire)."""

QuotaState = dict[Entity, QuotaValues]
"""A desired state or a cluster snapshot: entity -> quotas. Entities have at least one key."""


def sorted_entities(state: Mapping[Entity, object]) -> list[Entity]:
    """sorted_entities lists a state's entities in the stable order every output uses."""
    return sorted(state, key=Entity.sort_key)
