"""Ramped tightening: a plan that lowers quotas sharply, cut into gentle steps. Pure.

Lowering a quota by a large factor at once can throttle a busy client from one second to
the next. With ``policy.ramp: {max_step: F}`` a lowering to less than ``F`` times the old
value is done in steps, each to at least ``F`` times the value before it (rounded up to a
whole number, so a byte rate stays whole); the last step lands on the planned value.
Raising a quota, creating one and removing one (which lifts the limit) need no ramp and
all go in the first step, with the first step of every ramped key.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

from kquota.model import Entity
from kquota.plan.types import Alteration, ChangeKind, Op, Plan, Removals


@dataclass(frozen=True)
class RampedKey:
    """RampedKey is one key lowered in steps: its value before, then after each step."""

    entity: Entity
    key: str
    before: float
    steps: tuple[float, ...]


def chain(before: float, target: float, max_step: float) -> tuple[float, ...]:
    """chain is the values a key passes through from ``before`` down to ``target``, each at
    least ``max_step`` times the previous one; just ``(target,)`` when no ramp is needed."""
    if not 0 < max_step < 1:
        raise ValueError(f"max_step must be between 0 and 1 (exclusive), got {max_step}")
    if target >= before * max_step:
        return (target,)
    out: list[float] = []
    value = before
    while True:
        nxt = math.ceil(value * max_step)
        # A value so small that rounding up cannot lower it lands on the target at once.
        if nxt <= target or nxt >= value:
            out.append(target)
            return tuple(out)
        out.append(float(nxt))
        value = nxt


def _chains(plan: Plan, max_step: float) -> dict[tuple[Entity, str], tuple[float, ...]]:
    out = {}
    for alt in plan.alterations:
        for op in alt.ops:
            if op.remove or op.before is None or op.value is None:
                continue
            steps = chain(op.before, op.value, max_step)
            if len(steps) > 1:
                out[(alt.entity, op.key)] = steps
    return out


def ramped_keys(plan: Plan, max_step: float) -> list[RampedKey]:
    """ramped_keys are the plan's keys that need more than one step, in plan order."""
    chains = _chains(plan, max_step)
    return [
        RampedKey(alt.entity, op.key, op.before, chains[(alt.entity, op.key)])
        for alt in plan.alterations
        for op in alt.ops
        if (alt.entity, op.key) in chains and op.before is not None
    ]


def step_count(plan: Plan, max_step: float) -> int:
    """step_count is how many steps the plan takes (1: no key needs a ramp)."""
    return max((len(c) for c in _chains(plan, max_step).values()), default=1)


def step_plan(plan: Plan, max_step: float, number: int) -> Plan:
    """step_plan is step ``number`` (from 1) of ``plan``: step 1 carries every op that needs
    no ramp and the first value of each ramped key; later steps only the ramped keys still
    moving, each from its previous step's value. The fingerprint is the plan's for step 1;
    later steps are planned against the cluster as the step before left it, so the caller
    sets theirs from a fresh read."""
    chains = _chains(plan, max_step)
    alterations = []
    for alt in plan.alterations:
        ops = []
        for op in alt.ops:
            steps = chains.get((alt.entity, op.key), (op.value,))
            if number > len(steps):
                continue
            before = op.before if number == 1 else steps[number - 2]
            ops.append(Op(op.key, steps[number - 1], op.remove, before))
        if ops:
            kind = alt.kind if number == 1 else ChangeKind.UPDATE
            alterations.append(Alteration(alt.entity, tuple(ops), kind))
    stepped = dataclasses.replace(plan, alterations=tuple(alterations))
    return dataclasses.replace(
        stepped,
        removals=Removals(
            stepped.remove_ops,
            stepped.count(ChangeKind.DELETE),
            plan.removals.managed_quotas,
            plan.removals.managed_entities,
        ),
        snapshot_fingerprint=plan.snapshot_fingerprint if number == 1 else None,
    )
