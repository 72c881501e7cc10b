"""Markdown rendering for a pull-request comment (GitHub-flavoured).

Order, top to bottom: the verdict when a guard stops the plan (one ``> [!CAUTION]`` block,
then a fold of what did not stop it, :mod:`kquota.render.verdict`); the title; a caller's
verdicts, as caution blocks; the guards the operator overrode, as warnings (in the verdict's
fold when another guard stops the plan); the look-alike names (an entity removed and one
created that read the same); the summary counts, never folded; a note when anything was left
out; the removals (entities deleted, then updates that remove keys), listed by name and never
folded; the other updates and the creates (folded per kind past :data:`FOLD_THRESHOLD`
alterations); with ``--impact`` the effective-quota changes grouped by change; with
``--usage`` the throttle replay (its summary line with the summary counts, never folded).

The whole comment stays within ``budget`` characters (GitHub counts UTF-16 code units; so
does :func:`size`). The default leaves :data:`WRAPPER_HEADROOM` of GitHub's
:data:`COMMENT_LIMIT` for the Action's wrapper. Rows are spent in the order above, whole
lines only, and every ``<details>`` opened is closed, so a cut never lands inside an element;
what did not fit is counted in a visible line that says where the full plan is.

Every string that kquota did not write goes through :mod:`kquota.render.md_escape`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from kquota.display import value_with_unit
from kquota.model import Entity
from kquota.plan.lookalike import lookalikes
from kquota.plan.resolver import ResolutionChange, ResolvedQuota
from kquota.plan.types import (
    ChangeKind,
    IgnoreReason,
    Op,
    Plan,
    PlanImpact,
    SourceCount,
)
from kquota.render import md_escape as md
from kquota.render import verdict
from kquota.render.change_groups import (
    DEFAULT_REACH,
    ChangeGroup,
    by_rank,
    change_mark,
    group_alterations,
)
from kquota.render.impact_groups import ImpactGroup, bars, group_changes
from kquota.runtime.gcpause import collector_paused

FOLD_THRESHOLD = 20
COMMENT_LIMIT = 65_536
"""GitHub's limit on an issue or pull-request comment, in characters."""
WRAPPER_HEADROOM = 1_000
"""What the Action adds around the rendered plan (marker, commit, run link), at most."""
BUDGET = COMMENT_LIMIT - WRAPPER_HEADROOM
FULL_PLAN_AT = "the JSON plan (`kquota plan --format json`)"
PROTECTED_SHOWN = verdict.PROTECTED_SHOWN

_KIND_TITLES = {
    ChangeKind.DELETE: "to delete",
    ChangeKind.UPDATE: "to update",
    ChangeKind.CREATE: "to create",
}
_IGNORED_TITLES = {
    IgnoreReason.OUT_OF_SCOPE: "out of scope (never touched)",
    IgnoreReason.NOT_DECLARED: "not declared, left alone (prune is off)",
    IgnoreReason.DECLARED_OUT_OF_SCOPE: "declared but outside the ownership scope",
}
_HEADER = "| | entity | key | before | after | change |\n|---|---|---|---:|---:|---|"
_IMPACT_HEADER = "| | key | before | after | change | principals |\n|---|---|---|---|---:|---|"
_NAMED_HEADER = "| principal | key | before | after |\n|---|---|---|---|"
# Lines kept back for the closing parts and the note on what was left out.
_RESERVE = 600


def size(text: str) -> int:
    """size is ``text``'s length as GitHub counts it (UTF-16 code units)."""
    if text.isascii():
        return len(text)
    return len(text) + sum(1 for c in text if ord(c) > 0xFFFF)


@dataclass
class _Budget:
    left: int
    omitted: dict[str, int] = field(default_factory=dict)

    def fits(self, lines: Sequence[str]) -> bool:
        return sum(size(x) + 1 for x in lines) <= self.left

    def take(self, lines: Sequence[str]) -> bool:
        cost = sum(size(x) + 1 for x in lines)
        if cost > self.left:
            return False
        self.left -= cost
        return True

    def omit(self, what: str, n: int) -> None:
        if n:
            self.omitted[what] = self.omitted.get(what, 0) + n


@collector_paused()  # a plan of 100k builds large acyclic data: kquota.runtime.gcpause
def render_plan(
    plan: Plan,
    principal_changes: Sequence[ResolutionChange] = (),
    *,
    verdicts: Sequence[str] = (),
    budget: int = BUDGET,
    full_plan_at: str = FULL_PLAN_AT,
) -> str:
    """render_plan formats a plan as a Markdown pull-request comment.

    ``verdicts``: messages that stop the plan, shown first as caution blocks (escaped; the
    plan's own guard verdicts are shown without being passed). ``budget``: the most
    characters the result may have. ``full_plan_at``: where a reader finds what did not fit
    (markdown, written by the caller).
    """
    title = "### kquota plan"
    if plan.cluster:
        title += f" for cluster {md.code(plan.cluster)}"
    head = [*verdict.markdown_lines(plan), title, ""]
    head += [line for v in verdicts for line in _caution(md.text(v))]
    head += _overridden(plan)
    if plan.controller_notes:
        from kquota.render.controllers import markdown_lines as controller_lines

        head += controller_lines(plan.controller_notes)
    pairs = lookalikes(plan.alterations)
    head += _lookalike_note(pairs)
    if plan.empty:
        head += ["**No changes.** The cluster matches the desired state.", ""]
    head += _summary(plan)
    if plan.replay is not None:
        from kquota.render.replay import summary_markdown

        head += summary_markdown(plan.replay)
    b = _Budget(budget - _RESERVE - size(full_plan_at))
    if not b.take(head):
        b.left = 0
    body: list[str] = []
    if not plan.empty:
        body += _changes(plan, pairs, b)
    if plan.impact is not None:
        body += _impact(plan.impact, b)
    if plan.capacity is not None:
        from kquota.render.capacity import markdown_lines as capacity_lines

        body += capacity_lines(plan.capacity, b)
    if plan.replay is not None:
        from kquota.render.replay import markdown_lines as replay_lines

        body += replay_lines(plan.replay, b)
    if principal_changes:
        body += _principals(principal_changes, b)
    note = _omitted_note(b.omitted, full_plan_at)
    return "\n".join(head + note + body).rstrip("\n") + "\n"


def _caution(message: str) -> list[str]:
    return ["> [!CAUTION]", f"> {message}", ""]


def _overridden(plan: Plan) -> list[str]:
    """_overridden notes each guard the operator overrode, as warnings; a plan another guard
    stops has them in its verdict's fold, and the guard that stops it in the verdict
    (:mod:`kquota.render.verdict`)."""
    if plan.refusal is not None:
        return []
    return [
        line
        for note in verdict.overridden_notes(plan)
        for line in ["> [!WARNING]", f"> {note}", ""]
    ]


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


def _omitted_note(omitted: dict[str, int], full_plan_at: str) -> list[str]:
    if not omitted:
        return []
    parts = ", ".join(f"{n} {what}" for what, n in omitted.items())
    return [
        "> [!IMPORTANT]",
        f"> **Not all shown here** (GitHub's comment size limit): {parts} left out. "
        f"The full plan is in {full_plan_at}.",
        "",
    ]


def _changes(plan: Plan, pairs: dict[Entity, tuple[Entity, ...]], b: _Budget) -> list[str]:
    deletes, removing, setting, creates = by_rank(plan.alterations)
    removals = group_alterations(deletes + removing, pairs)
    sets = group_alterations(setting, pairs)
    news = group_alterations(creates, pairs)
    if len(removals) + len(sets) + len(news) <= FOLD_THRESHOLD:
        return _table(removals + sets + news, pairs, b, "changes")
    out: list[str] = []
    if deletes or removing:
        what = []
        if deletes:
            what.append(f"{len(deletes)} {_plural(len(deletes), 'entity', 'entities')} deleted")
        if removing:
            what.append(
                f"{len(removing)} {_plural(len(removing), 'entity', 'entities')} losing keys"
            )
        out += _section(f"#### Removals: {', '.join(what)}", removals, pairs, b)
    for kind, alts, groups in (
        (ChangeKind.UPDATE, setting, sets),
        (ChangeKind.CREATE, creates, news),
    ):
        if not groups:
            continue
        title = f"<code>{kind.glyph}</code> {len(alts)} {_KIND_TITLES[kind]}"
        if kind is ChangeKind.UPDATE and removing:
            title += " (without removals)"
        out += _folded(title, groups, pairs, b)
    return out


def _ops(groups: Sequence[ChangeGroup]) -> int:
    return sum(len(g.ops) * len(g.entities) for g in groups)


def _section(
    title: str, groups: Sequence[ChangeGroup], pairs: dict[Entity, tuple[Entity, ...]], b: _Budget
) -> list[str]:
    if not b.take([title, ""]):
        b.omit("removals", _ops(groups))
        return []
    return [title, "", *_table(groups, pairs, b, "removals")]


def _folded(
    title: str, groups: Sequence[ChangeGroup], pairs: dict[Entity, tuple[Entity, ...]], b: _Budget
) -> list[str]:
    wrapper = [f"<details><summary>{title}</summary>", "", "</details>", ""]
    what = "updates" if groups[0].kind is ChangeKind.UPDATE else "creates"
    if not b.take(wrapper):
        b.omit(what, _ops(groups))
        return []
    return [*wrapper[:2], *_table(groups, pairs, b, what), *wrapper[2:]]


def _table(
    groups: Sequence[ChangeGroup],
    pairs: dict[Entity, tuple[Entity, ...]],
    b: _Budget,
    what: str,
) -> list[str]:
    header = _HEADER.split("\n")
    if not b.take([*header, ""]):
        b.omit(what, _ops(groups))
        return []
    rows: list[str] = []
    left = _ops(groups)
    for g in groups:
        # A removal's every name, a set's first ones: fewer (halved) until the row fits.
        wanted = names = max(len(g.entities) - GROUP_NAMES, 0)
        if not g.removes:
            wanted = names = min(names, GROUP_FOLD_NAMES)
        lines = [_row(g, i, op, pairs, names) for i, op in enumerate(g.ops)]
        while not b.fits(lines) and names > 0:
            names //= 2
            lines = [_row(g, i, op, pairs, names) for i, op in enumerate(g.ops)]
        if not b.take(lines):
            break
        b.omit("entity names", wanted - names)
        rows += lines
        left -= len(g.ops) * len(g.entities)
    if left:
        b.omit(what, left)
        rows.append(f"| | … {left} more {_plural(left, 'change', 'changes')} not shown | | | | |")
    return [*header, *rows, ""]


GROUP_NAMES = 3
"""Names in a group's row; the rest are behind its fold."""
GROUP_FOLD_NAMES = 200
"""Names behind the fold of a group of sets; a group of removals has every name there (as
many as the comment holds); the JSON plan's ``groups`` has every one."""


def _row(
    g: ChangeGroup, i: int, op: Op, pairs: dict[Entity, tuple[Entity, ...]], names: int
) -> str:
    glyph = entity = ""
    if i == 0:
        glyph = f"`{g.kind.glyph}`"
        entity = _entities(g, pairs, names)
    before = "" if op.before is None else value_with_unit(op.key, op.before)
    removed = op.remove or op.value is None
    after = "unlimited" if removed or op.value is None else value_with_unit(op.key, op.value)
    key = f"`{op.kind.glyph}` {md.code(op.key, cell=True)}"
    return f"| {glyph} | {entity} | {key} | {before} | {after} | {change_mark(op)} |"


def _entities(g: ChangeGroup, pairs: dict[Entity, tuple[Entity, ...]], folded: int) -> str:
    """_entities is a row's entity cell: the entity, or how many with a few names and up to
    ``folded`` more behind a fold (on one line: a table cell cannot hold more)."""
    n = len(g.entities)
    if n == 1:
        cell = md.entity(g.entities[0], cell=True)
        alike = pairs.get(g.entities[0])
        if alike:
            others = ", ".join(md.entity(e, cell=True) for e in alike)
            cell += f" ⚠️ **looks like** {others}"
    else:
        names = [md.entity(e, cell=True) for e in g.entities[: GROUP_NAMES + folded]]
        cell = f"**{n} entities**: {', '.join(names[:GROUP_NAMES])}"
        if n > GROUP_NAMES:
            rest = ", ".join(names[GROUP_NAMES:])
            more = n - len(names)
            if more:
                rest += f" … and {more} more (the JSON plan's `groups` lists all)"
            cell += f" <details><summary>and {n - GROUP_NAMES} more</summary>{rest}</details>"
    if g.default:
        cell += f" *(default: {DEFAULT_REACH})*"
    return cell


def _lookalike_note(pairs: dict[Entity, tuple[Entity, ...]]) -> list[str]:
    """The pairs of an entity removed and one created that read alike, on top and never cut
    (the first :data:`PROTECTED_SHOWN`, then a count)."""
    if not pairs:
        return []
    lines = [
        "> [!WARNING]",
        "> **Look-alike names:** entities removed and created that read the same:",
    ]
    done: set[Entity] = set()
    groups = []
    for e, others in pairs.items():
        if e not in done:
            done.update(others)
            groups.append((e, others))
    for e, others in groups[:PROTECTED_SHOWN]:
        lines.append(f"> - {md.entity(e)} and {', '.join(md.entity(o) for o in others)}")
    if len(groups) > PROTECTED_SHOWN:
        lines.append(f"> - … and {len(groups) - PROTECTED_SHOWN} more (see the JSON plan)")
    lines.append("")
    return lines


def _plural(n: int, one: str, many: str) -> str:
    return one if n == 1 else many


def _impact(impact: PlanImpact, b: _Budget) -> list[str]:
    changes = impact.changes
    who = len({c.principal for c in changes})
    intro = ["#### Impact", ""]
    if impact.quota_callback is not None:
        intro += [
            "> [!WARNING]",
            "> The broker runs a custom quota callback "
            f"({md.code(impact.quota_callback)}): it may compute quotas "
            "differently from what is shown here.",
            "",
        ]
    if not changes:
        intro += [
            f"No effective quota changes for the {impact.principals} principals resolved.",
            "",
        ]
    else:
        intro += [
            f"{len(changes)} effective {_plural(len(changes), 'quota', 'quotas')} of {who} "
            f"{_plural(who, 'principal', 'principals')} change ({impact.principals} resolved), "
            "throttled harder first:",
            "",
        ]
    sources = ["Principals from:", ""]
    sources += [f"- {_source(r)}" for r in impact.sources]
    if not impact.sources:
        sources.append("- no source (protected principals only)")
    sources.append("")
    if not b.take(intro + sources):
        b.omit("impact changes", len(changes))
        return []
    return intro + _impact_table(changes, b, impact.protected) + sources


def _impact_table(
    changes: Sequence[ResolutionChange], b: _Budget, protected: Sequence[str] = ()
) -> list[str]:
    header = _IMPACT_HEADER.split("\n")
    if not changes:
        return []
    if not b.take([*header, ""]):
        b.omit("impact changes", len(changes))
        return []
    groups = group_changes(changes, frozenset(protected))
    rows: list[str] = []
    for i, g in enumerate(groups):
        row = _impact_row(g)
        if not b.take([row]):
            left = sum(x.count for x in groups[i:])
            b.omit("impact changes", left)
            rows.append(f"| | … {left} more not shown | | | | |")
            break
        rows.append(row)
    return [*header, *rows, ""]


_DIRECTION = {"harder": "▼ throttled harder", "looser": "▲ loosened", "same": "= same value"}


def _impact_row(g: ImpactGroup) -> str:
    names = ", ".join(md.entity(p.entity(), cell=True) for p in g.sample)
    if g.count > len(g.sample):
        names += f" and {g.count - len(g.sample)} more"
    change = g.percent
    if g.direction != "same":  # a bar where the value moves
        before, after = bars(g.before, g.after)
        change += f" `{before}`→`{after}`"
    if g.protected:
        change += f" 🛡️ **{g.protected} protected**"
    return (
        f"| {_DIRECTION[g.direction]} | {md.code(g.key, cell=True)} | "
        f"{_resolved(g.before, cell=True)} | {_resolved(g.after, cell=True)} | "
        f"{change} | {g.count}: {names} |"
    )


def _source(r: SourceCount) -> str:
    note = f" ({md.text(r.note)})" if r.note else ""
    if r.found is None:
        why = md.text(r.reason or "no reason given")
        return f"{md.code(r.source)}: could not look: {why}{note}"
    return f"{md.code(r.source)}: {r.found} found{note}"


def _principals(changes: Sequence[ResolutionChange], b: _Budget) -> list[str]:
    out = ["#### Effective quotas of the named principals", "", *_NAMED_HEADER.split("\n")]
    if not b.take([*out, ""]):
        b.omit("named principals' changes", len(changes))
        return []
    for i, c in enumerate(changes):
        row = (
            f"| {md.entity(c.principal.entity(), cell=True)} | {md.code(c.key, cell=True)} | "
            f"{_resolved(c.before, cell=True)} | {_resolved(c.after, cell=True)} |"
        )
        if not b.take([row]):
            b.omit("named principals' changes", len(changes) - i)
            out.append(f"| … {len(changes) - i} more not shown | | | |")
            break
        out.append(row)
    out.append("")
    return out


def _resolved(q: ResolvedQuota | None, *, cell: bool = False) -> str:
    if q is None:
        return "unlimited"
    return f"{value_with_unit(q.key, q.value)} from {md.entity(q.source, cell=cell)}"
