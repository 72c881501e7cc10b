"""What every converter shares: a declaration, value checks, and the merge into one state.

A refusal is a :class:`~kquota.desired.problems.Problem` (``file:line:column: what; allowed:
what would do``), as desired-state problems are, and a skipped resource is a warning; the
converters collect them all and the import stops on the first refusal only after reading
every input, so one run lists everything to fix.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

from kquota.desired import rules
from kquota.desired.problems import Problems, SourceLocation
from kquota.display import number, safe_text
from kquota.model import Entity, QuotaState, display_entity
from kquota.quotakeys import INT_MAX


@dataclass(frozen=True, slots=True)
class Declared:
    """Declared is one entity's quotas as one source declaration sets them.

    ``what`` names the declaration in the source's own terms (``KafkaUser alice``,
    ``module.kafka.kafka_quota.default``), for messages."""

    entity: Entity
    values: dict[str, float]
    at: SourceLocation
    what: str


TEMPLATE = "{{"
RENDER_FIRST = "the rendered value: render the templates first (jikkou prepare) and import that"


class SourceNumber(Enum):
    """SourceNumber is the type a source's schema gives a quota field."""

    INT32 = "a 32-bit integer"
    INT64 = "a 64-bit integer"
    DOUBLE = "a number"


def source_value(key: str, raw: object, kind: SourceNumber) -> float | rules.Complaint:
    """source_value checks one source value for the Kafka quota ``key``: the source schema's
    type first (Strimzi's Integer fields hold 32 bits), then the broker's rules."""
    if isinstance(raw, str):
        if TEMPLATE in raw:
            return (f"{safe_text(repr(raw))} is a template expression", RENDER_FIRST)
        return (f"{safe_text(repr(raw))} is a string, not a number", _allowed(key, kind))
    if isinstance(raw, float) and kind is not SourceNumber.DOUBLE and not raw.is_integer():
        return (f"{raw!r} is not a whole number ({kind.value} in the source)", _allowed(key, kind))
    if kind is SourceNumber.INT32 and _number(raw) and raw > INT_MAX:  # type: ignore[operator]
        return (f"{raw} does not fit {kind.value}", _allowed(key, kind))
    value = rules.quota_value(key, raw)
    if isinstance(value, tuple):
        return (value[0], _allowed(key, kind))
    return value


def _number(raw: object) -> bool:
    return isinstance(raw, int | float) and not isinstance(raw, bool)


def _allowed(key: str, kind: SourceNumber) -> str:
    if kind is SourceNumber.INT32:
        return f"a whole number from 1 to {INT_MAX}"
    return rules.allowed_values(key, sizes=False)


def merge_declared(declared: Sequence[Declared], problems: Problems) -> QuotaState:
    """merge_declared is the state the declarations make together; an entity declared more
    than once is refused at each later declaration, naming the first one and whether the
    values agree: which one the other tool applied last is not knowable from the files."""
    first: dict[Entity, Declared] = {}
    for d in declared:
        seen = first.get(d.entity)
        if seen is None:
            first[d.entity] = d
            continue
        problems.add(
            d.at,
            f"{d.what}: {display_entity(d.entity)} is declared again, "
            f"{_agreement(seen.values, d.values)}; "
            f"first declared by {seen.what} at {_where(seen.at)}",
            "one declaration per entity: remove or merge the other",
        )
    return {e: dict(d.values) for e, d in first.items()}


def _where(at: SourceLocation) -> str:
    return safe_text(at.file) if at.line == 0 else str(at)  # line 0: a whole file


def _agreement(a: dict[str, float], b: dict[str, float]) -> str:
    if a == b:
        return "with the same values"
    diffs = [
        f"{k} {_shown(a.get(k))} there, {_shown(b.get(k))} here"
        for k in sorted(set(a) | set(b))
        if a.get(k) != b.get(k)
    ]
    return "with conflicting values (" + "; ".join(diffs) + ")"


def _shown(value: float | None) -> str:
    return "unset" if value is None else number(value, long_range=True)
