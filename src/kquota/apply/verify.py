"""What a cluster should show once a plan is applied, and what it does not show yet.

Brokers answer DescribeClientQuotas from their metadata image, which trails the controller
briefly after an alteration is acknowledged; the applier polls with these pure checks until
they come back empty or a bound runs out.
"""

from __future__ import annotations

from collections.abc import Iterable

from kquota.model import Entity, QuotaState
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
