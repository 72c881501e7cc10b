"""Plain-text rendering for a terminal or a log: the golden, reviewable form of a plan.

Layout: one block per altered entity, headed by its change glyph (``+`` create, ``~`` update,
``-`` delete) and its KIP-546 form; under it one line per op, an update with its direction
and size (``lower by 75%``), a removal as ``unlimited``; removals first. Entities with the
same change share a block (:mod:`kquota.render.change_groups`): how many, a few names (a
removal's every name); a ``<default>`` entity says whom it reaches. Then the
totals and what was left alone. When a guard stops the plan, its verdict comes first, above
the title (:mod:`kquota.render.verdict`); a guard the operator overrode is noted under the
title. With ``--impact``, the principals whose effective quotas change (the first
:data:`IMPACT_LINES`) and where they were found. Plain
ASCII apart from names; colour, if any, is added by the CLI on top of this text, so the
golden files stay the format.
"""

from __future__ import annotations

from collections.abc import Sequence

from kquota.display import number, safe_text, value_with_unit
from kquota.model import Entity, display_entities, display_entity
from kquota.plan.lookalike import lookalikes
from kquota.plan.resolver import Resolution, ResolutionChange, ResolvedQuota
from kquota.plan.types import (
    Alteration,
    ChangeKind,
    IgnoreReason,
    Op,
    Plan,
    PlanImpact,
    SourceCount,
)
from kquota.render import verdict
from kquota.render.change_groups import (
    DEFAULT_REACH,
    ChangeGroup,
    by_rank,
    change_words,
    group_alterations,
)
from kquota.render.impact_groups import bars, group_changes
from kquota.runtime.gcpause import collector_paused

_IGNORED_WORDS = {
    IgnoreReason.OUT_OF_SCOPE: "out of scope",
    IgnoreReason.NOT_DECLARED: "not declared (prune is off)",
    IgnoreReason.DECLARED_OUT_OF_SCOPE: "declared but outside the ownership scope",
}


@collector_paused()  # a plan of 100k builds large acyclic data: kquota.runtime.gcpause
def render_plan(
    plan: Plan,
    principal_changes: Sequence[ResolutionChange] = (),
    *,
    verdicts: Sequence[str] = (),
) -> str:
    """render_plan formats a plan (and optional effective-quota changes) as text.

    ``verdicts``: messages that stop the plan, printed first (the plan's own guard verdicts
    are printed without being passed). Removals come first: deleted entities, then updates
    that remove keys, then the other updates, then creates. An entity deleted and another
    created whose names read alike are marked on both.
    """
    title = f"kquota plan for cluster {safe_text(plan.cluster)}" if plan.cluster else "kquota plan"
    lines: list[str] = [*verdict.text_lines(plan), title]
    lines.extend(f"STOPPED: {safe_text(v)}" for v in verdicts)
    lines.extend(_overridden(plan))
    if plan.controller_notes:
        from kquota.render.controllers import text_lines as controller_lines

        lines.extend(controller_lines(plan.controller_notes))
    lines.append("")
    if plan.empty:
        lines.append("No changes: the cluster matches the desired state.")
    deletes, removing, updates, creates = by_rank(plan.alterations)
    pairs = lookalikes(plan.alterations)
    sets = removed = 0
    for glyph, group in (("-", deletes), ("~", removing), ("~", updates), ("+", creates)):
        s, r = _alteration_lines(glyph, group, pairs, lines)
        sets, removed = sets + s, removed + r
    if not plan.empty:
        lines.append("")
        lines.append(
            _totals(len(creates), len(removing) + len(updates), len(deletes), sets, removed)
        )
    lines.extend(_left_alone(plan))
    if plan.impact is not None:
        lines.extend(_impact(plan.impact))
    if plan.capacity is not None:
        from kquota.render.capacity import text_lines as capacity_lines

        lines.extend(capacity_lines(plan.capacity))
    if plan.replay is not None:
        from kquota.render.replay import text_lines as replay_lines

        lines.extend(replay_lines(plan.replay))
    if principal_changes:
        lines.append("")
        lines.append("Effective quotas of the named principals:")
        lines.extend(_principal_lines(principal_changes))
    lines.append("")  # the last newline, without a copy of the whole text to add it
    return "\n".join(lines)


def removals_first(alterations: Sequence[Alteration]) -> list[Alteration]:
    """removals_first orders alterations for a reader: deletes, updates that remove keys,
    other updates, creates; the planner's order within each."""
    deletes, removing, updates, creates = by_rank(alterations)
    return [*deletes, *removing, *updates, *creates]


def _alteration_lines(
    glyph: str,
    alterations: Sequence[Alteration],
    pairs: dict[Entity, tuple[Entity, ...]],
    lines: list[str],
) -> tuple[int, int]:
    """_alteration_lines adds each group's block (:mod:`kquota.render.change_groups`: the
    entity, or how many with a few names, after ``glyph``; then the ops) to ``lines``;
    returns the quota values set and removed."""
    append = lines.append
    sets = removed = 0
    # A new key's line, by op: plans repeat a few tiers across 100k creates that differ in
    # another key (equal changes of one shape are one group already, and an update's line
    # is rarely met twice: not looked up). Only positive values, so that no two equal ops
    # print apart (0.0 and -0.0) and NaN is none; at most _MEMO_LIMIT lines.
    shown: dict[Op, str] = {}
    groups = group_alterations(alterations, pairs)
    # Every group's first entity after the glyph, in one call (most groups are one entity).
    firsts = display_entities([g.entities[0] for g in groups], f"{glyph} ")
    for g, first in zip(groups, firsts, strict=True):
        n = len(g.entities)
        if n == 1 and not (pairs and g.entities[0] in pairs) and not g.default:
            append(first)  # most groups: the head is the entity alone
        else:
            append(_group_head(glyph, first, g, pairs))
        for op in g.ops:
            if op.remove:
                removed += n
            else:
                sets += n
            created = op.before is None and not op.remove
            line = shown.get(op) if created else None
            if line is None:
                line = f"    {_op_line(op)}"
                value = op.value
                if created and value is not None and value > 0 and len(shown) < _MEMO_LIMIT:
                    shown[op] = line
            append(line)
    return sets, removed


_MEMO_LIMIT = 4096


GROUP_NAMES = 3
"""Names shown for a group of sets; a group of removals shows every name."""


def _group_head(
    glyph: str, first: str, g: ChangeGroup, pairs: dict[Entity, tuple[Entity, ...]]
) -> str:
    """_group_head is a group's first line; ``first`` is ``glyph`` and its first entity."""
    n = len(g.entities)
    if n == 1:
        e = g.entities[0]
        line = first
        alike = pairs.get(e)
        if alike:
            line += "  <- looks like " + ", ".join(display_entity(x) for x in alike)
    else:
        shown = g.entities if g.removes else g.entities[:GROUP_NAMES]
        names = ", ".join(display_entity(e) for e in shown)
        more = f" and {n - len(shown)} more (--format json lists all)" if n > len(shown) else ""
        line = f"{glyph} {n} entities, the same change: {names}{more}"
    if g.default:
        line += f"  (default: {DEFAULT_REACH})"
    return line


def totals_line(plan: Plan) -> str:
    """totals_line is Terraform's summary line, with op counts."""
    return _totals(
        plan.count(ChangeKind.CREATE),
        plan.count(ChangeKind.UPDATE),
        plan.count(ChangeKind.DELETE),
        plan.set_ops,
        plan.remove_ops,
    )


def _totals(create: int, update: int, delete: int, sets: int, removed: int) -> str:
    return (
        f"Plan: {create} to create, {update} to update, {delete} to delete "
        f"({sets} {_values(sets)} set, {removed} removed)."
    )


def _values(n: int) -> str:
    return "quota value" if n == 1 else "quota values"


def _op_line(op: Op) -> str:
    if op.remove:
        assert op.before is not None
        return f"- {safe_text(op.key)}: {value_with_unit(op.key, op.before)} -> unlimited (removed)"
    assert op.value is not None
    if op.before is None:
        return f"+ {safe_text(op.key)}: {value_with_unit(op.key, op.value)}"
    before = value_with_unit(op.key, op.before)
    change = change_words(op)
    change = f", {change}" if change else ""
    return f"~ {safe_text(op.key)}: {before} -> {value_with_unit(op.key, op.value)}{change}"


def _left_alone(plan: Plan) -> list[str]:
    parts = [f"{plan.unchanged} declared unchanged"] if plan.unchanged else []
    parts += [
        f"{plan.ignored_count(reason)} {words}"
        for reason, words in _IGNORED_WORDS.items()
        if plan.ignored_count(reason)
    ]
    return [f"Left alone: {', '.join(parts)}."] if parts else []


def _overridden(plan: Plan) -> list[str]:
    """_overridden notes each guard the operator overrode; a guard that stops the plan is in
    the verdict (:mod:`kquota.render.verdict`) instead."""
    lines = []
    if plan.guard_violation is not None and plan.mass_removal_allowed:
        lines.append(
            "Mass-removal guard overridden (--allow-mass-removal): "
            f"{safe_text(plan.guard_violation)}."
        )
    impact = plan.impact
    if impact is not None and impact.protected and impact.protected_change_allowed:
        lines.append("Protected-principals guard overridden (--allow-protected-change):")
        lines.extend(f"  {safe_text(v)}" for v in impact.protected)
    return lines


IMPACT_LINES = 50
"""Impact groups shown in a text plan; the rest are counted (the JSON plan has every change)."""

_DIRECTION = {"harder": "harder", "looser": "looser", "same": "same  "}


def _impact(impact: PlanImpact) -> list[str]:
    lines = [""]
    changes = impact.changes
    who = len({c.principal for c in changes})
    if changes:
        lines.append(
            f"Impact: {len(changes)} effective {_quotas(len(changes))} of {who} "
            f"{_principals(who)} change ({impact.principals} resolved), throttled harder first:"
        )
        groups = group_changes(changes, frozenset(impact.protected))
        for g in groups[:IMPACT_LINES]:
            before, after = _resolved(g.before), _resolved(g.after)
            lines.append(
                f"  {_DIRECTION[g.direction]} {safe_text(g.key)}: {before} -> {after} ({g.percent})"
            )
            if g.direction != "same":  # a bar where the value moves
                bar_before, bar_after = bars(g.before, g.after)
                mark = f"  PROTECTED: {g.protected}" if g.protected else ""
                lines.append(f"    {bar_before} -> {bar_after}{mark}")
            names = ", ".join(display_entity(p.entity()) for p in g.sample)
            more = f" and {g.count - len(g.sample)} more" if g.count > len(g.sample) else ""
            lines.append(f"    {g.count} {_principals(g.count)}: {names}{more}")
        if len(groups) > IMPACT_LINES:
            rest = sum(g.count for g in groups[IMPACT_LINES:])
            lines.append(f"  … and {rest} more changes, see --format json")
    else:
        lines.append(
            f"Impact: no effective quota changes for the {impact.principals} "
            f"{_principals(impact.principals)} resolved."
        )
    lines.append("Principals from:")
    lines.extend(f"  {source_line(r)}" for r in impact.sources)
    if not impact.sources:
        lines.append("  no source (protected principals only)")
    if impact.quota_callback is not None:
        lines.append(
            f"Warning: the broker runs a custom quota callback ({safe_text(impact.quota_callback)}"
            "): it may compute quotas differently from what is shown here."
        )
    return lines


def source_line(r: SourceCount) -> str:
    """source_line is one discovery source's report: how many it found, or why not."""
    note = f" ({safe_text(r.note)})" if r.note else ""
    if r.found is None:
        why = safe_text(r.reason or "no reason given")
        return f"{safe_text(r.source)}: could not look: {why}{note}"
    return f"{safe_text(r.source)}: {r.found} found{note}"


def _quotas(n: int) -> str:
    return "quota" if n == 1 else "quotas"


def _principals(n: int) -> str:
    return "principal" if n == 1 else "principals"


def _principal_lines(changes: Sequence[ResolutionChange]) -> list[str]:
    lines: list[str] = []
    current = None
    for change in changes:
        if change.principal != current:
            current = change.principal
            lines.append(f"  {display_entity(change.principal.entity())}")
        before, after = _resolved(change.before), _resolved(change.after)
        glyph = "+" if change.before is None else "-" if change.after is None else "~"
        lines.append(f"    {glyph} {safe_text(change.key)}: {before} -> {after}")
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
            lines.append(f"{safe_text(key)}={number(q.value)} {display_entity(q.source)}")
    if resolution.quota_callback is not None:
        lines.append(callback_note(resolution.quota_callback))
    return "\n".join(lines) + "\n"


def callback_note(callback: str) -> str:
    """callback_note says that quotas shown by Kafka's default rules may not be the broker's."""
    return (
        f"note: the brokers run a custom quota callback ({safe_text(callback)}); they may "
        "compute quotas differently from Kafka's default rules used here"
    )
