"""Describe and resolve as text: ``kquota describe`` and KIP-546's kafka-client-quotas."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kquota.display import number, safe_text
from kquota.model import QuotaState, display_entity, sorted_entities

if TYPE_CHECKING:  # describe needs no planning package at start-up
    from kquota.plan.resolver import Resolution


def render_text(state: QuotaState) -> str:
    """render_text is ``kquota describe``: the entity line, one indented ``key=value`` a quota."""
    lines: list[str] = []
    for entity in sorted_entities(state):
        lines.append(display_entity(entity))
        values = state[entity]
        lines.extend(
            f"  {safe_text(k)}={number(values[k], long_range=True)}" for k in sorted(values)
        )
    return "".join(line + "\n" for line in lines)


def render_describe(state: QuotaState) -> str:
    """render_describe is the KIP's describe output: entity, its quotas, a blank line between."""
    blocks: list[str] = []
    for entity in sorted_entities(state):
        values = state[entity]
        lines = [display_entity(entity)]
        lines.extend(f"{safe_text(k)}={number(values[k], long_range=True)}" for k in sorted(values))
        blocks.append("".join(line + "\n" for line in lines))
    return "\n".join(blocks)


def render_resolve(resolution: Resolution) -> str:
    """render_resolve is the KIP's resolve output: ``key=value {source entity}`` a line."""
    return "".join(
        f"{q.key}={number(q.value, long_range=True)} {display_entity(q.source)}\n"
        for q in resolution.quotas
    )
