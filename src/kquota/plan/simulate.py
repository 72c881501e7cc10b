"""Simulate a plan: the state a cluster holds after its alterations, computed offline.

Used for "how do effective quotas change" (resolution before vs after) and by the property
tests (snapshot + plan == desired, within scope). Follows the broker's replay rules: a set
writes the key, a remove deletes it (removing an absent key is a no-op), and an entity left
with no keys disappears.
"""

from __future__ import annotations

from kquota.model import QuotaState
from kquota.plan.types import Plan


def simulate_plan(state: QuotaState, plan: Plan) -> QuotaState:
    """simulate_plan returns a new state; ``state`` is not modified."""
    result: QuotaState = dict(state)
    for alteration in plan.alterations:
        values = dict(result.get(alteration.entity, {}))
        for op in alteration.ops:
            if op.remove:
                values.pop(op.key, None)
            else:
                assert op.value is not None
                values[op.key] = op.value
        if values:
            result[alteration.entity] = values
        else:
            result.pop(alteration.entity, None)
    return result
