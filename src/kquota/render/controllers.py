"""What other controllers will do with a plan (:mod:`kquota.plan.controllers`), as text and
markdown: a Strimzi operator that removes or owns an entity, a quota callback that enforces
something else. Shown near the top, under the guards: it changes what the plan means."""

from __future__ import annotations

from collections.abc import Sequence

from kquota.display import safe_text
from kquota.render import md_escape as md


def text_lines(notes: Sequence[str]) -> list[str]:
    """text_lines are the notes for a terminal, one line each (made safe to print)."""
    if not notes:
        return []
    return ["Other controllers:", *(f"  ! {safe_text(n)}" for n in notes)]


def markdown_lines(notes: Sequence[str]) -> list[str]:
    """markdown_lines are the notes as one ``[!WARNING]`` block (every note escaped)."""
    if not notes:
        return []
    items = "".join(f"<br>{md.text(n)}" for n in notes)
    return ["> [!WARNING]", f"> **Other controllers:**{items}", ""]
