"""Ramped tightening: a plan that lowers quotas sharply, cut into gentle steps. Pure.

Lowering a quota by a large factor at once can throttle a busy client from one second to
the next. With ``policy.ramp: {max_step: F}`` a lowering to less than ``F`` times the old
value is done in steps, each to at least ``F`` times the value before it (rounded up to a
whole number, so a byte rate stays whole); the last step lands on the planned value.
Raising a quota, creating one and removing one (which lifts the limit) need no ramp and
all go in the first step, with the first step of every ramped key.

A ramp cut short (Ctrl-C, a lost lease, the deadline) leaves the cluster at one of its steps:
:func:`resume_step` finds which from a read of the cluster, so that running the ramp again
continues from there instead of refusing the plan as stale or starting over.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

from kquota.model import Entity, QuotaState
from kquota.plan.fingerprint import snapshot_fingerprint
from kquota.plan.types import Alteration, ChangeKind, Op, Plan
from kquota.policy import Removals


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


def _paths(plan: Plan, max_step: float) -> list[tuple[Entity, str, tuple[float | None, ...]]]:
    """Every op of the plan with the values its key passes through: before, then after each
    of its steps (None: unset). An op needing no ramp has one step, the first."""
    chains = _chains(plan, max_step)
    out = []
    for alt in plan.alterations:
        for op in alt.ops:
            steps = chains.get((alt.entity, op.key), (None if op.remove else op.value,))
            out.append((alt.entity, op.key, (op.before, *steps)))
    return out


def values_after(plan: Plan, max_step: float, state: QuotaState, number: int) -> QuotaState:
    """values_after is ``state`` with every key of the plan as step ``number`` leaves it (0:
    as before the ramp); keys the plan does not touch as they are in ``state``."""
    out = dict(state)
    touched: dict[Entity, dict[str, float]] = {}
    for entity, key, path in _paths(plan, max_step):
        values = touched.setdefault(entity, dict(state.get(entity, {})))
        value = path[min(number, len(path) - 1)]
        if value is None:
            values.pop(key, None)
        else:
            values[key] = value
    for entity, values in touched.items():
        if values:
            out[entity] = values
        else:
            out.pop(entity, None)
    return out


def resume_step(plan: Plan, max_step: float, state: QuotaState) -> int | None:
    """resume_step is the step a ramp of ``plan`` goes on with on a cluster in ``state``: 1
    when none of it is there, ``step_count + 1`` when all of it is; None when the cluster
    stands at no step of the ramp (a key moved by someone else, or other keys of the altered
    entities changed since the plan was made), which the first step's staleness check then
    refuses.

    Every key must hold its value after the same step k, or (a step cut short mid-commit:
    each entity is written whole, but not every entity) some after step k and the rest after
    step k - 1; then step k runs again, and its staleness check skips what it already wrote.
    The plan's own fingerprint proves the rest: the cluster, with the plan's keys put back to
    their values before the ramp, must hash to what the plan was made against."""
    positions = []
    for entity, key, path in _paths(plan, max_step):
        now = state.get(entity, {}).get(key)
        if now not in path:
            return None
        positions.append((path.index(now), len(path) - 1))
    reached = max((p for p, _ in positions), default=0)
    if any(p not in (min(reached, last), min(reached - 1, last)) for p, last in positions):
        return None
    whole = all(p == min(reached, last) for p, last in positions)
    following = reached + 1 if whole else reached
    if following > 1 and plan.snapshot_fingerprint is not None:
        before = values_after(plan, max_step, state, 0)
        entities = [a.entity for a in plan.alterations]
        if snapshot_fingerprint(before, entities) != plan.snapshot_fingerprint:
            return None
    return max(following, 1)


def resumed_step(plan: Plan, max_step: float, state: QuotaState, number: int) -> Plan:
    """resumed_step is step ``number`` of ``plan`` when a ramp resumes there on a cluster in
    ``state``: its fingerprint is of the cluster as step ``number - 1`` left it, so its own
    staleness check (under the lease) proves nothing moved since this read."""
    step = step_plan(plan, max_step, number)
    if number == 1:
        return step
    before = values_after(plan, max_step, state, number - 1)
    return dataclasses.replace(
        step,
        snapshot_fingerprint=snapshot_fingerprint(before, (a.entity for a in step.alterations)),
    )
