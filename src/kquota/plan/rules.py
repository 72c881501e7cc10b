"""The classify rules: what happens to one (entity, key), as data every engine reads.

Each row of :data:`RULES` is a condition on six facts about an (entity, key) pair and an
outcome; ``None`` in a condition means "either". The facts:

- ``in_scope``: the policy's ownership scope covers the entity;
- ``declared``: the desired state declares the entity (with any keys);
- ``prune``: the policy prunes undeclared in-scope entities;
- ``desired_present`` / ``current_present``: the key is in the desired / snapshot values;
- ``same_value``: both present and bit-for-bit equal (:func:`same_value`).

The local planner looks outcomes up in :data:`TABLE`, compiled from the rows below; a Spark
engine translates the same rows into a ``when(...)`` chain over joined rows. A test checks
that every possible combination matches exactly one row, so the table is total and
unambiguous.

Two ownership decisions live here and nowhere else: a declared entity is owned whole (a key
it no longer lists is removed), and an undeclared in-scope entity is removed only under prune.
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass
from enum import Enum
from functools import cache
from itertools import product


class Outcome(Enum):
    """Outcome of classifying one (entity, key)."""

    SET = "set"
    REMOVE = "remove"
    UNCHANGED = "unchanged"
    IGNORED = "ignored"


@dataclass(frozen=True, slots=True)
class Rule:
    """Rule is one row of the decision table; ``None`` conditions match either value."""

    outcome: Outcome
    why: str
    in_scope: bool | None = None
    declared: bool | None = None
    prune: bool | None = None
    desired_present: bool | None = None
    current_present: bool | None = None
    same_value: bool | None = None

    def matches(self, facts: Facts) -> bool:
        return all(
            want is None or want == have
            for want, have in zip(self.conditions(), facts, strict=True)
        )

    def conditions(self) -> tuple[bool | None, ...]:
        return (
            self.in_scope,
            self.declared,
            self.prune,
            self.desired_present,
            self.current_present,
            self.same_value,
        )


Facts = tuple[bool, bool, bool, bool, bool, bool]
"""(in_scope, declared, prune, desired_present, current_present, same_value)."""

FACT_NAMES = ("in_scope", "declared", "prune", "desired_present", "current_present", "same_value")

RULES: tuple[Rule, ...] = (
    Rule(Outcome.IGNORED, "outside the ownership scope: never touched", in_scope=False),
    Rule(
        Outcome.SET,
        "new key of a declared entity",
        in_scope=True,
        declared=True,
        desired_present=True,
        current_present=False,
    ),
    Rule(
        Outcome.SET,
        "changed value: set in place",
        in_scope=True,
        declared=True,
        desired_present=True,
        current_present=True,
        same_value=False,
    ),
    Rule(
        Outcome.UNCHANGED,
        "same value",
        in_scope=True,
        declared=True,
        desired_present=True,
        current_present=True,
        same_value=True,
    ),
    Rule(
        Outcome.REMOVE,
        "a declared entity is owned whole: a key it does not list is removed",
        in_scope=True,
        declared=True,
        desired_present=False,
        current_present=True,
    ),
    Rule(
        Outcome.REMOVE,
        "not declared and prune is on",
        in_scope=True,
        declared=False,
        prune=True,
        current_present=True,
    ),
    Rule(
        Outcome.UNCHANGED,
        "not declared and prune is off: left alone",
        in_scope=True,
        declared=False,
        prune=False,
        current_present=True,
    ),
)


def possible(facts: Facts) -> bool:
    """possible says whether a combination of facts can occur for a joined (entity, key) row.

    A key is present on at least one side; an undeclared entity has no desired keys; values
    can only be the same when both are present.
    """
    _, declared, _, desired_present, current_present, same = facts
    if not (desired_present or current_present):
        return False
    if desired_present and not declared:
        return False
    return not (same and not (desired_present and current_present))


def _compile() -> dict[Facts, Outcome]:
    table: dict[Facts, Outcome] = {}
    for combo in product((False, True), repeat=6):
        facts: Facts = (combo[0], combo[1], combo[2], combo[3], combo[4], combo[5])
        if not possible(facts):
            continue
        hits = [r for r in RULES if r.matches(facts)]
        if len(hits) != 1:  # pragma: no cover - guarded by tests/plan/test_rules.py
            raise AssertionError(f"rules match {len(hits)} times for {facts}")
        table[facts] = hits[0].outcome
    return table


TABLE: dict[Facts, Outcome] = _compile()
"""Every possible combination of facts -> its outcome."""


def classify(
    *,
    in_scope: bool,
    declared: bool,
    prune: bool,
    desired: float | None,
    current: float | None,
) -> Outcome:
    """classify decides one (entity, key) from its values and the entity's situation."""
    same = desired is not None and current is not None and same_value(desired, current)
    return TABLE[(in_scope, declared, prune, desired is not None, current is not None, same)]


@cache
def entity_outcome(*, in_scope: bool, declared: bool, prune: bool) -> Outcome | None:
    """entity_outcome is the outcome shared by every key of such an entity, if there is one.

    It lets the planner skip per-key work for out-of-scope and undeclared entities while still
    deriving its shortcut from :data:`TABLE` rather than restating the rules.
    """
    outcomes = {out for facts, out in TABLE.items() if facts[:3] == (in_scope, declared, prune)}
    return outcomes.pop() if len(outcomes) == 1 else None


def same_value(a: float, b: float) -> bool:
    """same_value compares doubles exactly: equal IEEE 754 bit patterns.

    So ``-0.0`` and ``0.0`` differ (the broker rejects both, but a snapshot is what it is) and
    a NaN equals only a NaN with the same bits. The fast path is ordinary ``==``, exact for
    every other finite or infinite value.
    """
    if a == b:
        return a != 0.0 or math.copysign(1.0, a) == math.copysign(1.0, b)
    if a != a and b != b:  # both NaN
        return struct.pack(">d", a) == struct.pack(">d", b)
    return False
