"""Effective-quota changes grouped for a reader: one line per (key, before → after, source).

A plan that lowers a default changes the same quota of thousands of principals in the same
way; a reader needs the change once, how many it hits and a few names, and the changes that
throttle harder first. Shared by the text and markdown renderers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

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


def group_changes(changes: Sequence[ResolutionChange]) -> list[ImpactGroup]:
    """group_changes groups ``changes``: throttled harder first, then larger groups first."""
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
        out.append(
            ImpactGroup(
                key=first.key,
                before=first.before,
                after=first.after,
                direction=_direction(first.before, first.after),
                percent=percent(first.before, first.after),
                count=len(members),
                sample=tuple(m.principal for m in members[:SAMPLE]),
            )
        )
    out.sort(key=lambda g: (_ORDER[g.direction], -g.count))
    return out
