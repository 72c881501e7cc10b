"""The verdict on a plan a guard stops: one block, first in every format.

A plan the mass-removal guard, the protected-principals guard, the capacity guard or the
throttle guard stops is the plan a reviewer most needs to read, so it is rendered in full
like any other, headed by one block that says it is stopped, gives each stopping guard's
detail (what it found, the principals it protects, the capacity it would exceed, the
principals it would throttle) and the flags that would let apply take it after review. The
text and markdown renderers put this block above their title; :func:`json_plan` puts
``refusal`` first in the JSON printed for review (the saved plan file stays the plain
contract). A guard that was overridden is not a verdict: the renderers note it where it
applies.

Names in the detail (protected principals) are escaped by the medium's one rule: ``safe_text``
for a terminal, :mod:`kquota.render.md_escape` for markdown.
"""

from __future__ import annotations

import orjson

from kquota.display import safe_text
from kquota.plan.types import Plan
from kquota.render import md_escape as md
from kquota.render.json import plan_data, render_plan

PROTECTED_SHOWN = 20
"""Protected principals listed in the markdown verdict; the rest are counted."""


def overrides(plan: Plan) -> list[str]:
    """overrides are the flags that would let apply take this plan, after review."""
    out = []
    if _mass_removal(plan) is not None:
        out.append("--allow-mass-removal")
    if plan.impact is not None and plan.impact.stops:
        out.append("--allow-protected-change")
    if plan.capacity is not None and plan.capacity.stops:
        out.append("--allow-oversubscription")
    if plan.replay is not None and plan.replay.stops:
        out.append("--allow-throttling")
    return out


def text_lines(plan: Plan) -> list[str]:
    """text_lines is the verdict for a terminal (a blank line after it), or nothing when no
    guard stops the plan: a ``STOPPED:`` line per stopping guard, then what to do."""
    if plan.refusal is None:
        return []
    lines = []
    violation = _mass_removal(plan)
    if violation is not None:
        lines.append(f"STOPPED: mass-removal guard: {safe_text(violation)}")
    if plan.impact is not None and plan.impact.stops:
        lines.append(f"STOPPED: protected principals: {_PROTECTED}")
        lines += [f"  {safe_text(v)}" for v in plan.impact.protected]
    if plan.capacity is not None and plan.capacity.stops:
        lines += [f"STOPPED: capacity guard: {safe_text(v)}" for v in plan.capacity.stopped]
    if plan.replay is not None and plan.replay.stops:
        lines += [f"STOPPED: throttle guard: {safe_text(v)}" for v in plan.replay.stopped]
    flags = " and ".join(overrides(plan))
    lines.append(
        "This plan will not be applied; it is shown in full for review. "
        f"Apply it only after review, with {flags}."
    )
    return [*lines, ""]


def markdown_lines(plan: Plan) -> list[str]:
    """markdown_lines is the verdict for a pull request, one ``> [!CAUTION]`` block (a blank
    line after it), or nothing when no guard stops the plan."""
    if plan.refusal is None:
        return []
    flags = " and ".join(f"`{f}`" for f in overrides(plan))
    parts = [
        [
            "**Stopped: this plan will not be applied.** It is shown in full below for review; "
            f"apply it only after review, with {flags}."
        ]
    ]
    violation = _mass_removal(plan)
    if violation is not None:
        parts.append([f"**Mass-removal guard:** {md.text(violation)}."])
    if plan.impact is not None and plan.impact.stops:
        protected = plan.impact.protected
        shown = list(protected[:PROTECTED_SHOWN])
        if len(protected) > len(shown):
            shown.append(f"… and {len(protected) - len(shown)} more")
        head = f"**Protected principals:** {_PROTECTED}"
        # A list, not a code block: it wraps where the comment does, never side-scrolls.
        parts.append([head, "", *(f"- {md.text(v)}" for v in shown)])
    if plan.capacity is not None and plan.capacity.stops:
        parts += [[f"**Capacity guard:** {md.text(v)}."] for v in plan.capacity.stopped]
    if plan.replay is not None and plan.replay.stops:
        parts += [[f"**Throttle guard:** {md.text(v)}."] for v in plan.replay.stopped]
    quoted = ["> [!CAUTION]"]
    for i, part in enumerate(parts):
        quoted += [">"] if i else []
        quoted += [f"> {line}" for line in part]
    return [*quoted, ""]


def json_plan(plan: Plan) -> str:
    """json_plan is the plan's JSON contract as printed for review: ``refusal`` (why apply
    refuses it) first when a guard stops it, else exactly the contract."""
    refusal = plan.refusal
    if refusal is None:
        return render_plan(plan, review=True)
    data = {"refusal": refusal, **plan_data(plan, review=True)}
    return orjson.dumps(data, option=orjson.OPT_INDENT_2).decode() + "\n"


_PROTECTED = "the plan lowers or newly imposes their quotas:"


def _mass_removal(plan: Plan) -> str | None:
    """_mass_removal is the mass-removal guard's finding when it stops the plan."""
    return None if plan.mass_removal_allowed else plan.guard_violation
