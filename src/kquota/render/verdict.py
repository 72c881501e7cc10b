"""The verdict on a plan a guard stops: one block, first in every format.

A plan the mass-removal guard, the protected-principals guard, the capacity guard or the
throttle guard stops is the plan a reviewer most needs to read, so it is rendered in full
like any other, headed by one block that says it is stopped, gives each stopping guard's
detail (what it found, the principals it protects, the capacity it would exceed, the
principals it would throttle) and the flags that would let apply take it after review. The
text and markdown renderers put this block above their title; :func:`json_plan` puts
``refusal`` first in the JSON printed for review (the saved plan file stays the plain
contract). A guard that was overridden is not a verdict: the renderers note it where it
applies, and in markdown, under a verdict, in one ``<details>`` fold with the protected
principals past the first ones, so what stops the plan is read first and what does not
is one click away. Values read in the plan's units (:func:`kquota.display.value_with_unit`,
as :mod:`kquota.plan.impact` writes them).

Names in the detail (protected principals) are escaped by the medium's one rule: ``safe_text``
for a terminal, :mod:`kquota.render.md_escape` for markdown.
"""

from __future__ import annotations

from collections.abc import Sequence

from kquota.display import safe_text
from kquota.plan.types import Plan
from kquota.render import md_escape as md
from kquota.render.json import data_bytes, plan_bytes, plan_data

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
    """markdown_lines is the verdict for a pull request, or nothing when no guard stops the
    plan: one ``> [!CAUTION]`` block with what stops it, unfolded, then (when there is any)
    one ``<details>`` fold with what does not: the protected principals past
    :data:`PROTECTED_SHOWN` and the guards the operator overrode (:func:`overridden_notes`);
    a blank line after each."""
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
    rest: list[str] = []
    if plan.impact is not None and plan.impact.stops:
        protected = plan.impact.protected
        shown = [f"- {md.text(v)}" for v in protected[:PROTECTED_SHOWN]]
        rest = _rest(protected[PROTECTED_SHOWN:])
        if rest:
            shown.append(f"- … and {len(protected) - PROTECTED_SHOWN} more, folded below")
        head = f"**Protected principals:** {_PROTECTED}"
        # A list, not a code block: it wraps where the comment does, never side-scrolls.
        parts.append([head, "", *shown])
    if plan.capacity is not None and plan.capacity.stops:
        parts += [[f"**Capacity guard:** {md.text(v)}."] for v in plan.capacity.stopped]
    if plan.replay is not None and plan.replay.stops:
        parts += [[f"**Throttle guard:** {md.text(v)}."] for v in plan.replay.stopped]
    quoted = ["> [!CAUTION]"]
    for i, part in enumerate(parts):
        quoted += [">"] if i else []
        quoted += [f"> {line}" for line in part]
    return [*quoted, "", *_fold(plan, rest)]


def overridden_notes(plan: Plan) -> list[str]:
    """overridden_notes is one markdown paragraph per guard the operator overrode (the
    mass-removal and protected-principals guards; the throttle guard's is with the replay):
    a warning under the title of a plan no guard stops, in the verdict's fold of one that
    another guard stops."""
    out: list[str] = []
    if plan.guard_violation is not None and plan.mass_removal_allowed:
        violation = md.text(plan.guard_violation)
        out.append(f"**Mass-removal guard overridden** (`--allow-mass-removal`): {violation}.")
    impact = plan.impact
    if impact is not None and impact.protected and impact.protected_change_allowed:
        shown = impact.protected[:PROTECTED_SHOWN]
        items = "".join(f"<br>{md.text(v)}" for v in shown)
        if len(impact.protected) > len(shown):
            items += f"<br>… and {len(impact.protected) - len(shown)} more"
        out.append(
            f"**Protected-principals guard overridden** (`--allow-protected-change`):{items}"
        )
    return out


PROTECTED_FOLDED = 100
"""Protected principals past :data:`PROTECTED_SHOWN` listed in the markdown verdict's fold;
the rest are counted (the text and JSON plans list every one), so the comment's budget goes
to the plan."""


def _rest(more: Sequence[str]) -> list[str]:
    """_rest is the fold's list of the protected principals past the first ones."""
    items = [f"- {md.text(v)}" for v in more[:PROTECTED_FOLDED]]
    if len(more) > PROTECTED_FOLDED:
        items.append(f"- … and {len(more) - PROTECTED_FOLDED} more, in the text and JSON plans")
    return items


def _fold(plan: Plan, rest: list[str]) -> list[str]:
    """_fold is what did not stop the plan, or what the verdict leaves out, folded."""
    notes = overridden_notes(plan)
    if not rest and not notes:
        return []
    what = []
    if rest:
        n = len(plan.impact.protected) - PROTECTED_SHOWN if plan.impact is not None else 0
        what.append(f"{n} more protected principal{'s' if n != 1 else ''}")
    if notes:
        what.append(f"{len(notes)} guard{'s' if len(notes) != 1 else ''} overridden")
    out = [f"<details><summary>{', '.join(what)}</summary>", ""]
    if rest:
        out += [*rest, ""]
    for note in notes:
        out += [note, ""]
    return [*out, "</details>", ""]


def json_plan(plan: Plan) -> str:
    """json_plan is the plan's JSON contract as printed for review: ``refusal`` (why apply
    refuses it) first when a guard stops it, else exactly the contract."""
    return json_plan_bytes(plan).decode()


def json_plan_bytes(plan: Plan) -> bytes:
    """json_plan_bytes is :func:`json_plan` as UTF-8, for standard output's own bytes."""
    refusal = plan.refusal
    if refusal is None:
        return plan_bytes(plan, review=True)
    return data_bytes({"refusal": refusal, **plan_data(plan, review=True)})


_PROTECTED = "the plan lowers or newly imposes their quotas:"


def _mass_removal(plan: Plan) -> str | None:
    """_mass_removal is the mass-removal guard's finding when it stops the plan."""
    return None if plan.mass_removal_allowed else plan.guard_violation
