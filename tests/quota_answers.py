"""Quota answers as a broker builds them, for tests that feed kquota's readers: the bodies of
DescribeClientQuotas and AlterClientQuotas responses in the codec's shape (the spec files'
field names, as :func:`kquota.kafka.protocol.encode_body` takes them). An entity is given as
its (type, name) pairs in wire order, ``None`` for ``<default>``."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

Parts = Iterable[tuple[str, str | None]]


def wire_entity(parts: Parts) -> list[dict[str, Any]]:
    """wire_entity is an entity's ``Entity`` array, its parts in the order given."""
    return [{"EntityType": t, "EntityName": n} for t, n in parts]


def describe_entry(parts: Parts, values: Mapping[str, float]) -> dict[str, Any]:
    """describe_entry is one described entity with its quota values."""
    return {
        "Entity": wire_entity(parts),
        "Values": [{"Key": k, "Value": v} for k, v in values.items()],
    }


def describe_answer(entries: Sequence[dict[str, Any]] = ()) -> dict[str, Any]:
    """describe_answer is a DescribeClientQuotas response body without an error."""
    return {"ThrottleTimeMs": 0, "ErrorCode": 0, "ErrorMessage": None, "Entries": list(entries)}


def alter_entry(parts: Parts, code: int = 0, message: str | None = None) -> dict[str, Any]:
    """alter_entry is one entity's answer to an alteration: accepted, or ``code``."""
    return {"ErrorCode": code, "ErrorMessage": message, "Entity": wire_entity(parts)}


def alter_answer(entries: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """alter_answer is an AlterClientQuotas response body."""
    return {"ThrottleTimeMs": 0, "Entries": list(entries)}
