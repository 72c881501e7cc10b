"""Per-entity failures for a terminal: identical ones grouped, so 19,950 entities refused for
one reason read as one line with a count and a few examples, not 19,950 lines.

A failure that is alone in its group prints as one line, ``{user=a}: CODE: message``. A group
prints its size, the reason once, and the first few entities (in the plan's order). Groups
come largest first; equal sizes keep the order their first entity had. Broker messages are
made safe to print like names (they may quote one).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from kquota.display import safe_text
from kquota.model import Entity, display_entity

EXAMPLES = 3
"""Entities shown for a group of identical failures."""


class Failure(Protocol):
    @property
    def entity(self) -> Entity: ...

    @property
    def error_name(self) -> str: ...

    @property
    def message(self) -> str | None: ...


def failure_lines(
    failures: Sequence[Failure], *, indent: str = "  ", prefix: str = ""
) -> list[str]:
    """failure_lines renders failures, grouping those with the same code and message."""
    groups: dict[tuple[str, str | None], list[Entity]] = {}
    for f in failures:
        groups.setdefault((f.error_name, f.message), []).append(f.entity)
    lines: list[str] = []
    for (name, message), entities in sorted(groups.items(), key=lambda g: -len(g[1])):
        reason = name + (f": {safe_text(message)}" if message else "")
        if len(entities) == 1:
            lines.append(f"{indent}{prefix}{display_entity(entities[0])}: {reason}")
            continue
        shown = ", ".join(display_entity(e) for e in entities[:EXAMPLES])
        more = len(entities) - EXAMPLES
        lines.append(f"{indent}{prefix}{len(entities)} entities: {reason}")
        lines.append(f"{indent}    e.g. {shown}" + (f" and {more} more" if more > 0 else ""))
    return lines
