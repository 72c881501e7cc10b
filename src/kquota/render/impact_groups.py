"""Effective-quota changes grouped for a reader: one line per (key, before → after, source).

A plan that lowers a default changes the same quota of thousands of principals in the same
way; a reader needs the change once, how many it hits and a few names, and the changes that
throttle harder first. Shared by the text and markdown renderers.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from kquota.plan.impact import describe_change
from kquota.plan.resolver import Principal, ResolutionChange, ResolvedQuota

SAMPLE = 3
_ORDER = {"harder": 0, "looser": 1, "same": 2}


@dataclass(frozen=True)
class ImpactGroup:
    key: str
    before: ResolvedQuota | None
    after: ResolvedQuota | None
    direction: str
    """``harder`` (lower, or newly limited), ``looser`` (higher, or no longer limited) or
    ``same`` (the value stays, its source changes)."""
    percent: str
    count: int
    sample: tuple[Principal, ...]
    protected: int = 0
    """How many of the group are protected principals (their change is a guard's finding)."""


def _direction(before: ResolvedQuota | None, after: ResolvedQuota | None) -> str:
    if after is None:
        return "same" if before is None else "looser"
    if before is None or after.value < before.value:
        return "harder"
    return "looser" if after.value > before.value else "same"


def percent(before: ResolvedQuota | None, after: ResolvedQuota | None) -> str:
    """percent is the change of the value: ``-50%``, ``+100%``, or words where a number
    would mislead (newly limited, no longer limited, from zero)."""
    if before is None:
        return "newly limited"
    if after is None:
        return "no longer limited"
    if after.value == before.value:
        return "0%"
    if before.value == 0:
        return "from 0"
    p = (after.value - before.value) / before.value * 100
    text = f"{p:+.1f}".rstrip("0").rstrip(".")
    return ("<0.1" if text in ("+0", "-0") else text) + "%"


BAR = 10
_EIGHTHS = " ▏▎▍▌▋▊▉"


def _bar(value: float | None, scale: float) -> str:
    if value is None or scale <= 0 or not math.isfinite(value) or not math.isfinite(scale):
        return "▒" * BAR  # unlimited: no bar can say how much
    eighths = round(max(0.0, min(value / scale, 1.0)) * BAR * 8)
    full, part = divmod(eighths, 8)
    cells = "█" * full + (_EIGHTHS[part] if part else "")
    return cells + "░" * (BAR - len(cells))


def bars(before: ResolvedQuota | None, after: ResolvedQuota | None) -> tuple[str, str]:
    """bars draws before and after against the larger of the two (``▒``: unlimited), so a
    reader sees at a glance how much harder the quota throttles."""
    values = [q.value for q in (before, after) if q is not None]
    scale = max(values, default=0.0)
    b = _bar(None if before is None else before.value, scale)
    a = _bar(None if after is None else after.value, scale)
    return b, a


def group_changes(
    changes: Sequence[ResolutionChange], protected: Collection[str] = ()
) -> list[ImpactGroup]:
    """group_changes groups ``changes``: throttled harder first, then larger groups first.
    ``protected``: the protected-principals guard's findings
    (:func:`kquota.plan.impact.describe_change` of each), counted per group."""
    groups: dict[tuple[object, ...], list[ResolutionChange]] = {}
    for c in changes:
        key = (
            c.key,
            None if c.before is None else (c.before.value, c.before.source),
            None if c.after is None else (c.after.value, c.after.source),
        )
        groups.setdefault(key, []).append(c)
    out = []
    for members in groups.values():
        first = members[0]
        guarded = sum(1 for m in members if describe_change(m) in protected) if protected else 0
        out.append(
            ImpactGroup(
                key=first.key,
                before=first.before,
                after=first.after,
                direction=_direction(first.before, first.after),
                percent=percent(first.before, first.after),
                count=len(members),
                sample=tuple(m.principal for m in members[:SAMPLE]),
                protected=guarded,
            )
        )
    out.sort(key=lambda g: (_ORDER[g.direction], -g.count))
    return out
