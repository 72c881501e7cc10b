"""Markdown rendering for a pull-request comment (GitHub-flavoured).

A summary table first, then one table of ops (entity on its first row). Past
:data:`FOLD_THRESHOLD` alterations, each change kind goes into its own ``<details>`` section
so a large plan does not bury the conversation; past :data:`MAX_ROWS` op rows the rest is
elided with a pointer to the JSON plan, keeping the comment under GitHub's size limit.
With ``--impact``, a section lists every principal whose effective quota changes (in
``<details>`` past :data:`FOLD_THRESHOLD` rows), where principals were found, and the
protected principals' verdict. Names are HTML-escaped inside ``<code>`` (a ``|`` would
otherwise split a table cell and a backtick would end a code span), after control
characters are escaped like everywhere else.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

from kquota.model import Entity
from kquota.plan.resolver import ResolutionChange, ResolvedQuota
from kquota.plan.types import Alteration, ChangeKind, IgnoreReason, Op, Plan, PlanImpact
from kquota.render.format import display_entity, safe_text, value_with_unit
from kquota.render.text import source_line

FOLD_THRESHOLD = 20
MAX_ROWS = 1000

_KIND_TITLES = {
    ChangeKind.CREATE: "to create",
    ChangeKind.UPDATE: "to update",
    ChangeKind.DELETE: "to delete",
}
_IGNORED_TITLES = {
    IgnoreReason.OUT_OF_SCOPE: "out of scope (never touched)",
    IgnoreReason.NOT_DECLARED: "not declared, left alone (prune is off)",
    IgnoreReason.DECLARED_OUT_OF_SCOPE: "declared but outside the ownership scope",
}
_HEADER = "| | entity | key | before | after |\n|---|---|---|---:|---:|"


def render_plan(plan: Plan, principal_changes: Sequence[ResolutionChange] = ()) -> str:
    """render_plan formats a plan as a Markdown pull-request comment."""
    title = "### kquota plan"
    if plan.cluster:
        title += f" for cluster <code>{_cell(safe_text(plan.cluster))}</code>"
    out = [title, ""]
    out += _guard(plan)
    if plan.empty:
        out.append("**No changes.** The cluster matches the desired state.")
        out.append("")
    out += _summary(plan)
    if not plan.empty:
        out += _details(plan)
    if plan.impact is not None:
        out += _impact(plan.impact)
    if principal_changes:
        out += _principals(principal_changes)
    return "\n".join(out).rstrip("\n") + "\n"


def _impact(impact: PlanImpact) -> list[str]:
    changes = impact.changes
    who = len({c.principal for c in changes})
    out = ["#### Impact", ""]
    if impact.protected:
        items = "".join(f"<br>{_cell(safe_text(v))}" for v in impact.protected)
        if impact.protected_change_allowed:
            out += [
                "> [!WARNING]",
                f"> **Protected-principals guard overridden** (`--allow-protected-change`):{items}",
                "",
            ]
        else:
            out += [
                "> [!CAUTION]",
                "> **Protected principals:** the plan lowers or newly imposes their quotas; it "
                f"will not be applied without `--allow-protected-change`.{items}",
                "",
            ]
    if impact.quota_callback is not None:
        out += [
            "> [!WARNING]",
            "> The broker runs a custom quota callback "
            f"(<code>{_cell(safe_text(impact.quota_callback))}</code>): it may compute quotas "
            "differently from what is shown here.",
            "",
        ]
    if not changes:
        out += [f"No effective quota changes for the {impact.principals} principals resolved.", ""]
    else:
        table = [
            "| principal | key | before | after |",
            "|---|---|---|---|",
            *_impact_rows(changes),
            "",
        ]
        head = (
            f"{len(changes)} effective {_plural(len(changes), 'quota')} of {who} "
            f"{_plural(who, 'principal')} change ({impact.principals} resolved)"
        )
        if len(changes) <= FOLD_THRESHOLD:
            out += [head + ".", "", *table]
        else:
            out += [f"<details><summary>{head}</summary>", "", *table, "</details>", ""]
    out.append("Principals from:")
    out.append("")
    out += [f"- {_cell(source_line(r))}" for r in impact.sources]
    if not impact.sources:
        out.append("- no source (protected principals only)")
    out.append("")
    return out


def _plural(n: int, word: str) -> str:
    return word if n == 1 else word + "s"


def _impact_rows(changes: Sequence[ResolutionChange]) -> list[str]:
    rows = [
        f"| {_entity(c.principal.entity())} | {c.key} | {_resolved(c.before)} | "
        f"{_resolved(c.after)} |"
        for c in changes[:MAX_ROWS]
    ]
    if len(changes) > MAX_ROWS:
        rows.append(f"| … {len(changes) - MAX_ROWS} more: see the JSON plan | | | |")
    return rows


def _summary(plan: Plan) -> list[str]:
    rows = [(f"`{k.glyph}` {title}", plan.count(k)) for k, title in _KIND_TITLES.items()]
    rows.append(("unchanged (declared)", plan.unchanged))
    rows += [
        (t, plan.ignored_count(r)) for r, t in _IGNORED_TITLES.items() if plan.ignored_count(r)
    ]
    out = ["| | entities |", "|---|---:|"]
    out += [f"| {label} | {n} |" for label, n in rows]
    out.append("")
    out.append(f"Quota values: **{plan.set_ops} set**, **{plan.remove_ops} removed**.")
    out.append("")
    return out


def _details(plan: Plan) -> list[str]:
    budget = [MAX_ROWS]
    if len(plan.alterations) <= FOLD_THRESHOLD:
        return [_HEADER, *_rows(plan.alterations, budget), ""]
    out: list[str] = []
    for kind, title in _KIND_TITLES.items():
        group = [a for a in plan.alterations if a.kind is kind]
        if not group:
            continue
        out += [
            f"<details><summary><code>{kind.glyph}</code> {len(group)} {title}</summary>",
            "",
            _HEADER,
            *_rows(group, budget),
            "",
            "</details>",
            "",
        ]
    return out


def _rows(alterations: Sequence[Alteration], budget: list[int]) -> list[str]:
    rows: list[str] = []
    shown_ops = 0
    total_ops = sum(len(a.ops) for a in alterations)
    for a in alterations:
        for i, op in enumerate(a.ops):
            if budget[0] <= 0:
                rows.append(
                    f"| | … {total_ops - shown_ops} more changes: see the JSON plan | | | |"
                )
                return rows
            entity = f"`{a.kind.glyph}` {_entity(a.entity)}" if i == 0 else ""
            rows.append(f"| {entity} | {_op_cells(op)} |")
            budget[0] -= 1
            shown_ops += 1
    return rows


def _op_cells(op: Op) -> str:
    before = "" if op.before is None else value_with_unit(op.key, op.before)
    after = "*(removed)*" if op.remove or op.value is None else value_with_unit(op.key, op.value)
    return f"`{op.kind.glyph}` {op.key} | {before} | {after}"


def _guard(plan: Plan) -> list[str]:
    if plan.guard_violation is None:
        return []
    if plan.mass_removal_allowed:
        return [
            "> [!WARNING]",
            "> **Mass-removal guard overridden** (`--allow-mass-removal`): "
            f"{_cell(safe_text(plan.guard_violation))}.",
            "",
        ]
    return [
        "> [!CAUTION]",
        f"> **Mass-removal guard:** {_cell(safe_text(plan.guard_violation))}. "
        "This plan will not be applied without `--allow-mass-removal`.",
        "",
    ]


def _principals(changes: Sequence[ResolutionChange]) -> list[str]:
    out = [
        "#### Effective quotas of the named principals",
        "",
        "| principal | key | before | after |",
        "|---|---|---|---|",
    ]
    for c in changes:
        out.append(
            f"| {_entity(c.principal.entity())} | {c.key} | {_resolved(c.before)} | "
            f"{_resolved(c.after)} |"
        )
    out.append("")
    return out


def _resolved(q: ResolvedQuota | None) -> str:
    if q is None:
        return "unlimited"
    return f"{value_with_unit(q.key, q.value)} from {_entity(q.source)}"


def _entity(entity: Entity) -> str:
    return f"<code>{_cell(display_entity(entity))}</code>"


def _cell(text: str) -> str:
    return html.escape(text, quote=False).replace("|", "&#124;")
