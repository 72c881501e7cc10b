"""Alterations as callers give them, checked before anything is sent, and their results.

An alteration is a :class:`~kquota.kafka.admin.QuotaAlteration` or a plain pair
``(entity, {key: value_or_None})`` where ``None`` removes the key. Every alteration of a call
is checked with the controller's own rules first (known entity types, ip names that are IP
addresses, known keys for the entity kind, values > 0, whole numbers for byte and connection
rates), and one bad alteration fails the whole call
with a :class:`~kquota.errors.UsageError` before any request: never a partial write. The
result of each is the wire's own :class:`~kquota.kafka.admin.AlterResult`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from kquota.api.entities import EntityLike, as_entity, entity_problems
from kquota.argcheck import given, refuse
from kquota.display import safe_text
from kquota.errors import UsageError
from kquota.kafka.admin import AlterResult as AlterResult
from kquota.kafka.admin import QuotaAlteration, QuotaOp
from kquota.kafka.admin import alteration_failure as alteration_failure
from kquota.model import Entity, display_entity
from kquota.quotakeys import alteration_problems

AlterationLike = QuotaAlteration | tuple[EntityLike, Mapping[str, float | None]]
"""An alteration as callers give it: a QuotaAlteration or ``(entity, {key: value or None})``."""


def _value(entity: Entity, key: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise UsageError(
            f"{display_entity(entity)}: {safe_text(key)} must be a number or None, got {value!r}"
        )
    return float(value)


def as_alteration(item: AlterationLike) -> QuotaAlteration:
    """as_alteration accepts a QuotaAlteration or an ``(entity, {key: value or None})`` pair."""
    if isinstance(item, QuotaAlteration):
        if isinstance(item.entity, Entity):
            return item
        return QuotaAlteration(as_entity(item.entity), tuple(item.ops))
    if not isinstance(item, tuple) or len(item) != 2 or not isinstance(item[1], Mapping):
        shape = f"a {len(item)}-tuple" if isinstance(item, tuple) else given(item)
        if isinstance(item, tuple) and len(item) == 2:
            shape = f"a pair whose values are {given(item[1])}"
        raise UsageError(
            "an alteration is a QuotaAlteration or a pair (entity, {key: value or None}), "
            f"not {shape}"
        )
    entity = as_entity(item[0])
    ops = tuple(
        QuotaOp.delete(k) if v is None else QuotaOp.set(k, _value(entity, k, v))
        for k, v in item[1].items()
    )
    return QuotaAlteration(entity, ops)


def checked_alterations(items: Iterable[AlterationLike]) -> list[QuotaAlteration]:
    """checked_alterations coerces every alteration and raises one UsageError naming every
    problem of every entity, so nothing is sent when any of it would fail."""
    single = isinstance(items, QuotaAlteration) or (
        isinstance(items, tuple) and len(items) == 2 and isinstance(items[1], Mapping)
    )
    if single:
        raise UsageError("alter: alterations must be a list, not a single alteration ([it])")
    if isinstance(items, str | bytes | Mapping) or not isinstance(items, Iterable):
        raise refuse("alter: alterations", "a list of alterations", items)
    alterations = [as_alteration(item) for item in items]
    messages: list[str] = []
    for a in alterations:
        adds = {op.key: op.value for op in a.ops if not op.remove and op.value is not None}
        deletes = [op.key for op in a.ops if op.remove]
        if not a.ops:
            messages.append(f"{display_entity(a.entity)}: nothing to alter")
            continue
        problems = [
            f"{safe_text(op.key)} has no value (QuotaOp.set sets, QuotaOp.delete removes)"
            for op in a.ops
            if not op.remove and op.value is None
        ]
        problems += entity_problems(a.entity)
        problems += alteration_problems(a.entity, adds, deletes)
        if problems:
            messages.append(f"{display_entity(a.entity)}: " + "; ".join(problems))
    if messages:
        raise UsageError("invalid alteration (nothing sent): " + " | ".join(messages))
    return alterations
