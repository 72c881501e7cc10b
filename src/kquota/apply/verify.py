"""What a cluster should show once a plan is applied, and what it does not show yet.

Brokers answer DescribeClientQuotas from their metadata image, which trails the controller
briefly after an alteration is acknowledged; the applier polls with these pure checks until
they come back empty or a bound runs out.
"""

from __future__ import annotations

from collections.abc import Iterable

from kquota.display import number
from kquota.model import Entity, QuotaState, QuotaValues
from kquota.plan.types import Alteration


def unconverged(alterations: Iterable[Alteration], current: QuotaState) -> list[Entity]:
    """unconverged lists the entities whose planned ops the cluster does not reflect yet."""
    pending = []
    for alt in alterations:
        have = current.get(alt.entity, {})
        for op in alt.ops:
            if op.remove:
                if op.key in have:
                    pending.append(alt.entity)
                    break
            elif have.get(op.key) != op.value:
                pending.append(alt.entity)
                break
    return pending


def _shown(value: float | None) -> str:
    return "unset" if value is None else number(value)


def overwritten(alt: Alteration, have: QuotaValues) -> str | None:
    """overwritten says how another writer changed ``alt``'s entity, or None if nobody did.

    A key that shows neither what this run wrote nor the plan's before value cannot be a
    broker trailing the controller (it would show the before value): another writer set it.
    A key back at its before value is indistinguishable from lag and stays "unconverged".
    """
    for op in alt.ops:
        now = have.get(op.key)
        wrote = None if op.remove else op.value
        if now != wrote and now != op.before:
            return f"{op.key} is {_shown(now)}, this run set {_shown(wrote)}"
    return None
