"""Plain-text rendering for a terminal or a log: the golden, reviewable form of a plan.

Layout: one block per altered entity, headed by its change glyph (``+`` create, ``~`` update,
``-`` delete) and its KIP-546 form; under it one line per op. Then the totals, what was left
alone, and the mass-removal guard's verdict. Plain ASCII apart from names; colour, if any, is
added by the CLI on top of this text, so the golden files stay the format.
"""

from __future__ import annotations

from collections.abc import Sequence

from kquota.plan.resolver import Resolution, ResolutionChange, ResolvedQuota
from kquota.plan.types import ChangeKind, IgnoreReason, Op, Plan
from kquota.render.format import display_entity, number, safe_text, value_with_unit

_IGNORED_WORDS = {
    IgnoreReason.OUT_OF_SCOPE: "out of scope",
    IgnoreReason.NOT_DECLARED: "not declared (prune is off)",
    IgnoreReason.DECLARED_OUT_OF_SCOPE: "declared but outside the ownership scope",
}


def render_plan(plan: Plan, principal_changes: Sequence[ResolutionChange] = ()) -> str:
    """render_plan formats a plan (and optional effective-quota changes) as text."""
    title = f"kquota plan for cluster {safe_text(plan.cluster)}" if plan.cluster else "kquota plan"
    lines: list[str] = [title]
    lines.append("")
    if plan.empty:
        lines.append("No changes: the cluster matches the desired state.")
    for alteration in plan.alterations:
        lines.append(f"{alteration.kind.glyph} {display_entity(alteration.entity)}")
        lines.extend(f"    {_op_line(op)}" for op in alteration.ops)
    if not plan.empty:
        lines.append("")
        lines.append(totals_line(plan))
    lines.extend(_left_alone(plan))
    lines.extend(_guard(plan))
    if principal_changes:
        lines.append("")
        lines.append("Effective quotas of the named principals:")
        lines.extend(_principal_lines(principal_changes))
    return "\n".join(lines) + "\n"


def totals_line(plan: Plan) -> str:
    """totals_line is Terraform's summary line, with op counts."""
    return (
        f"Plan: {plan.count(ChangeKind.CREATE)} to create, {plan.count(ChangeKind.UPDATE)} to "
        f"update, {plan.count(ChangeKind.DELETE)} to delete "
        f"({plan.set_ops} {_values(plan.set_ops)} set, {plan.remove_ops} removed)."
    )


def _values(n: int) -> str:
    return "quota value" if n == 1 else "quota values"


def _op_line(op: Op) -> str:
    if op.remove:
        assert op.before is not None
        return f"- {op.key}: {value_with_unit(op.key, op.before)} -> (removed)"
    assert op.value is not None
    if op.before is None:
        return f"+ {op.key}: {value_with_unit(op.key, op.value)}"
    before = value_with_unit(op.key, op.before)
    return f"~ {op.key}: {before} -> {value_with_unit(op.key, op.value)}"


def _left_alone(plan: Plan) -> list[str]:
    parts = [f"{plan.unchanged} declared unchanged"] if plan.unchanged else []
    parts += [
        f"{plan.ignored_count(reason)} {words}"
        for reason, words in _IGNORED_WORDS.items()
        if plan.ignored_count(reason)
    ]
    return [f"Left alone: {', '.join(parts)}."] if parts else []


def _guard(plan: Plan) -> list[str]:
    if plan.guard_violation is None:
        return []
    if plan.mass_removal_allowed:
        return [
            "",
            f"Mass-removal guard overridden (--allow-mass-removal): {plan.guard_violation}.",
        ]
    return [
        "",
        f"Mass-removal guard: {plan.guard_violation}.",
        "This plan will not be applied; review it, then re-run with --allow-mass-removal.",
    ]


def _principal_lines(changes: Sequence[ResolutionChange]) -> list[str]:
    lines: list[str] = []
    current = None
    for change in changes:
        if change.principal != current:
            current = change.principal
            lines.append(f"  {display_entity(change.principal.entity())}")
        before, after = _resolved(change.before), _resolved(change.after)
        glyph = "+" if change.before is None else "-" if change.after is None else "~"
        lines.append(f"    {glyph} {change.key}: {before} -> {after}")
    return lines


def _resolved(q: ResolvedQuota | None) -> str:
    if q is None:
        return "unlimited"
    return f"{value_with_unit(q.key, q.value)} from {display_entity(q.source)}"


def render_resolution(resolution: Resolution) -> str:
    """render_resolution is KIP-546's resolve form, one key a line; no match is unlimited."""
    lines = []
    for key in resolution.keys:
        q = resolution.get(key)
        if q is None:
            lines.append(f"{key}=unlimited")
        else:
            lines.append(f"{key}={number(q.value)} {display_entity(q.source)}")
    return "\n".join(lines) + "\n"
