"""The ramp's schedule as text: what ``apply --ramp`` will do, key by key."""

from __future__ import annotations

from collections.abc import Sequence

from kquota.display import number
from kquota.model import display_entity
from kquota.plan.ramp import RampedKey


def schedule_lines(keys: Sequence[RampedKey], max_step: float, interval: str) -> list[str]:
    """schedule_lines show the ramp: one line per ramped key, its values step by step."""
    n = max((len(k.steps) for k in keys), default=1)
    out = [
        f"ramp: {n} steps, each lowering a quota to at least {number(max_step)} of its value "
        f"before, {interval} apart, drift checked between steps:"
    ]
    for k in keys:
        values = " → ".join(number(v, long_range=True) for v in (k.before, *k.steps))
        out.append(f"  {display_entity(k.entity)} {k.key}: {values}")
    return out
