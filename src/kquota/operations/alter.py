"""The alter operation: change one entity's quotas on a live cluster (KIP-546's --alter)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from kquota.apply.alter import alter_one
from kquota.errors import UsageError
from kquota.kafka.admin import QuotaAlteration, QuotaOp
from kquota.model import Entity, display_entity
from kquota.quotakeys import alteration_problems
from kquota.target import Target


def entity_of_parts(parts: Mapping[str, str | None]) -> Entity:
    """entity_of_parts is the entity named by type -> name (None = default); at least one."""
    if not parts:
        raise UsageError("name the entity with --names TYPE=NAME and/or --defaults TYPE")
    return Entity.of(parts)


def checked_alteration(
    parts: Mapping[str, str | None], to_set: Mapping[str, float], to_delete: Sequence[str]
) -> QuotaAlteration:
    """checked_alteration is one entity's sets and removes as an alteration, checked locally
    with the controller's rules (a UsageError, and nothing sent, if it would fail)."""
    entity = entity_of_parts(parts)
    if not to_set and not to_delete:
        raise UsageError("nothing to alter: give --add and/or --delete")
    if len(to_delete) != len(set(to_delete)):
        raise UsageError("--delete names a key more than once")
    problems = alteration_problems(entity, dict(to_set), list(to_delete))
    if problems:
        raise UsageError(
            f"invalid alteration of {display_entity(entity)} (nothing sent): " + "; ".join(problems)
        )
    ops = tuple(QuotaOp.set(k, v) for k, v in to_set.items()) + tuple(
        QuotaOp.delete(k) for k in to_delete
    )
    return QuotaAlteration(entity, ops)


def alter(target: Target, alteration: QuotaAlteration, *, validate_only: bool = False) -> None:
    """alter applies ``alteration`` (or only validates it); a refusal raises
    :class:`kquota.errors.AlterationFailed` with the broker's message."""
    with target.admin() as admin:
        result = alter_one(admin, alteration, validate_only=validate_only)
    result.raise_for_error()


__all__ = ["QuotaAlteration", "alter", "checked_alteration", "entity_of_parts"]
