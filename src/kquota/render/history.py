"""Text, JSON and markdown of ``kquota history``, and the heading of ``kquota revert``.

Everything here comes from the audit topic, which anyone allowed to write it can fill: every
string is passed through :func:`safe_text` before it reaches a terminal, and through
:mod:`kquota.render.md_escape` before it reaches markdown. Values are shown as the plan shows
them (:func:`value_with_unit`: ``8388608 (8 MiB/s)``), so a reviewer compares like with like.
"""

from __future__ import annotations

import json
from typing import Any

from kquota.audit import AuditOp
from kquota.audit_keys import Verdict
from kquota.display import cut, number, safe_text, value_with_unit
from kquota.history.applies import AppliedPlan
from kquota.history.declared import Declared, DesiredCheck
from kquota.history.results import History, RevertResult
from kquota.model import display_entity
from kquota.render import md_escape as md
from kquota.render.markdown import BUDGET, FOLD_THRESHOLD, size


def _value(key: str, v: float | None) -> str:
    return "unset" if v is None else value_with_unit(key, v)


def _raw(v: float | None) -> str:
    """_raw is a value as the revert's refusal shows it (:class:`~kquota.history.inverse.
    Conflict`), so the forced keys read the same in every format."""
    return "unset" if v is None else number(v, long_range=True)


def _op_line(op: AuditOp) -> str:
    return f"{safe_text(op.key)}: {_value(op.key, op.before)} → {_value(op.key, op.after)}"


def _short(commit: str | None) -> str:
    return safe_text(commit[:12]) if commit else "-"


def _cut(text: str | None, limit: int = 40) -> str:
    """_cut is a field from the trail, shown safely and no longer than ``limit``."""
    return cut(safe_text(text), limit) if text else "-"


def _mark(verdicts: list[Verdict]) -> str | None:
    """_mark is what the events' signatures say, when that is not "all verified"."""
    if any(v in (Verdict.BAD_SIGNATURE, Verdict.UNKNOWN_KEY) for v in verdicts):
        return "[DOES NOT VERIFY]"
    if any(v is Verdict.UNSIGNED for v in verdicts):
        return "[unverified]"
    return None


def _trust(verdicts: list[Verdict]) -> str:
    mark = _mark(verdicts)
    return "" if mark is None else f"  {mark}"


def apply_line(a: AppliedPlan) -> str:
    """apply_line is one apply in one line: id, time, actor, commit, cluster and counts,
    marked when its events are not all verified or do not agree."""
    counts = f"+{a.count('create')} ~{a.count('update')} -{a.count('remove')}"
    line = (
        f"{_cut(a.plan_id, 64)}  {_cut(a.timestamp)}  "
        f"{_cut(a.actor)}  commit {_short(a.git_commit)}  "
        f"{_cut(a.cluster)}  {len(a.changes)} entities ({counts})"
    )
    if a.reverts:
        line += f"  reverts {_cut(a.reverts, 64)}"
    line += _trust([e.verdict for e in a.events])
    if a.problems:
        line += f"  [inconsistent: {_cut(a.problems[0], 120)}]"
    return line


def render_history_text(h: History) -> str:
    out: list[str] = []
    if h.entity is not None:
        out.append(f"changes to {h.entity_shown} on audit topic {safe_text(h.topic)}:")
        if not h.events:
            out.append("  none recorded")
        for e in h.events:
            out.append(
                f"  {_cut(e.timestamp)}  {_cut(e.plan_id, 64)}  {_cut(e.actor)}"
                + _trust([e.verdict])
            )
            out += [f"    {_op_line(op)}" for op in e.ops]
    else:
        out.append(f"applies recorded on audit topic {safe_text(h.topic)}: {len(h.applies)}")
        out += [f"  {apply_line(a)}" for a in h.applies]
    if h.skipped:
        out.append(f"({h.skipped} records on the topic are not quota.altered events: skipped)")
    if h.bad:
        out.append(f"{len(h.bad)} records claim to be quota.altered events and are not valid:")
        out += [f"  {b}" for b in h.bad[:_SHOW]]
        if len(h.bad) > _SHOW:
            out.append(f"  … and {len(h.bad) - _SHOW} more")
    if not h.signed:
        out.append(
            "(no audit signing key is configured (audit_signing in kquota.yaml): no event is "
            "verified, and anyone who may write the topic can write one)"
        )
    return "\n".join(out) + "\n"


def _ops_data(ops: tuple[AuditOp, ...]) -> list[dict[str, Any]]:
    return [op.to_json() for op in ops]


def render_history_json(h: History) -> str:
    data: dict[str, Any] = {"topic": h.topic, "skipped": h.skipped}
    if h.entity is not None:
        data["entity"] = h.entity.to_json()
        data["changes"] = [
            {"plan_id": e.plan_id, "timestamp": e.timestamp, "actor": e.actor,
             "ops": _ops_data(e.ops), "signature": e.verdict.value}
            for e in h.events
        ]  # fmt: skip
    else:
        data["applies"] = [a.to_data() for a in h.applies]
    data["signed"] = h.signed
    data["bad"] = [
        {"partition": b.partition, "offset": b.offset, "reason": b.reason} for b in h.bad
    ]
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


_SHOW = 20

_APPLY_HEADER = ("| entity | key | before → after | kind |", "|---|---|---|---|")
_ENTITY_HEADER = (
    "| time | plan id | actor | key | before → after | signature |",
    "|---|---|---|---|---|---|",
)
# Kept back for the closing lines (bad records, the signing note, what was left out).
_RESERVE = 6_000
_FULL_HISTORY = "`kquota history --format json` lists them all"


class _Lines:
    """_Lines is markdown spent against the comment budget, whole lines at a time."""

    def __init__(self, budget: int) -> None:
        self.left = budget
        self.out: list[str] = []
        self.omitted = 0

    def take(self, lines: list[str]) -> bool:
        cost = sum(size(x) + 1 for x in lines)
        if cost > self.left:
            return False
        self.left -= cost
        self.out += lines
        return True


def _kind(op: AuditOp) -> str:
    if op.before is None:
        return "`+` create"
    if op.remove or op.after is None:
        return "`-` remove"
    return "`~` update"


def _change(op: AuditOp) -> str:
    return f"{_value(op.key, op.before)} → {_value(op.key, op.after)}"


def _md_marks(verdicts: list[Verdict], problems: tuple[str, ...] = ()) -> str:
    mark = _mark(verdicts)
    out = "" if mark is None else f" **{md.text(mark)}**"
    if problems:
        out += f" **{md.text('[inconsistent: ' + cut(problems[0], 120) + ']')}**"
    return out


def _apply_md(a: AppliedPlan, b: _Lines) -> None:
    counts = f"+{a.count('create')} ~{a.count('update')} -{a.count('remove')}"
    meta = [
        md.code(a.timestamp[:40]),
        f"actor {md.code(a.actor[:40]) if a.actor else '-'}",
        f"commit {md.code(a.git_commit[:12]) if a.git_commit else '-'}",
        f"cluster {md.code(a.cluster[:40]) if a.cluster else '-'}",
        f"{len(a.changes)} entities ({counts})",
    ]
    if a.reverts:
        meta.append(f"reverts {md.code(a.reverts[:64])}")
    rows = [
        f"| {md.entity(c.entity, cell=True) if i == 0 else ''} | {md.code(op.key, cell=True)} "
        f"| {_change(op)} | {_kind(op)} |"
        for c in a.changes
        for i, op in enumerate(c.ops)
    ]
    marks = _md_marks([e.verdict for e in a.events], a.problems)
    head = [
        f"#### Apply {md.code(a.plan_id[:64])}{marks}",
        "",
        " · ".join(meta),
        "",
    ]
    folded = len(rows) > FOLD_THRESHOLD
    wrapper = [f"<details><summary>{len(rows)} changes</summary>", ""] if folded else []
    if not b.take([*head, *wrapper, *_APPLY_HEADER]):
        b.omitted += len(rows)
        return
    _rows(rows, b, 4)
    b.take(["", *(["</details>", ""] if folded else [])])


def _rows(rows: list[str], b: _Lines, cells: int) -> None:
    for i, row in enumerate(rows):
        if not b.take([row]):
            left = len(rows) - i
            b.omitted += left
            b.out.append(f"| … {left} more not shown |" + " |" * (cells - 1))
            return


def render_history_markdown(h: History, budget: int = BUDGET) -> str:
    """render_history_markdown is ``kquota history`` for a pull request or a ticket: a table
    per apply (entity, key, before → after in the plan's units, kind), or one table of an
    entity's changes; marks where events do not verify or do not agree; the bad records
    listed. It stays within ``budget`` characters: rows past it are counted, not shown."""
    b = _Lines(budget - _RESERVE)
    topic = md.code(h.topic)
    if h.entity is not None:
        b.take(
            [f"**Changes to {md.entity(h.entity)} on audit topic {topic}: {len(h.events)}**", ""]
        )
        rows = [
            f"| {md.code(e.timestamp[:40], cell=True)} | {md.code(e.plan_id[:64], cell=True)} "
            f"| {md.code(e.actor[:40], cell=True) if e.actor else '-'} "
            f"| {md.code(op.key, cell=True)} | {_change(op)} "
            f"| {_md_marks([e.verdict]).strip() or 'verified'} |"
            for e in h.events
            for op in e.ops
        ]
        if rows and b.take(list(_ENTITY_HEADER)):
            _rows(rows, b, 6)
            b.out.append("")
        else:
            b.omitted += len(rows)
    else:
        b.take([f"**Applies recorded on audit topic {topic}: {len(h.applies)}**", ""])
        for a in h.applies:
            _apply_md(a, b)
    out = b.out
    if b.omitted:
        out += [f"{b.omitted} changes are not shown here: {_FULL_HISTORY}.", ""]
    if h.skipped:
        out += [f"{h.skipped} records on the topic are not quota.altered events: skipped.", ""]
    if h.bad:
        out += [f"**{len(h.bad)} records claim to be quota.altered events and are not valid:**", ""]
        out += [f"- {md.text(cut(str(bad), 300))}" for bad in h.bad[:_SHOW]]
        if len(h.bad) > _SHOW:
            out.append(f"- … and {len(h.bad) - _SHOW} more")
        out.append("")
    if not h.signed:
        out += [
            "> [!WARNING]",
            "> No audit signing key is configured (`audit_signing` in kquota.yaml): no event is "
            "verified, and anyone who may write the topic can write one.",
            "",
        ]
    return "\n".join(out)


def revert_heading(result: RevertResult) -> str:
    """revert_heading says which apply the plan below undoes, what --force let through, and
    which guard stops the revert."""
    lines = [f"revert of apply {apply_line(result.source)}"]
    if result.forced:
        lines.append(
            f"warning: --force: {len(result.forced)} keys changed since the apply are put back "
            "to the apply's before values:"
        )
        lines += [f"  {c}" for c in result.forced[:_SHOW]]
    lines += _stopped(result)
    return "\n".join(lines) + "\n"


def _stopped(result: RevertResult) -> list[str]:
    refusal = result.plan.refusal
    if refusal is None:
        return []
    return [
        f"this revert of apply {_cut(result.source.plan_id, 64)} is stopped by a guard: "
        f"{refusal}; kquota apply refuses the inverse plan without that guard's override"
    ]


_UNKNOWN = (
    "the desired state was not checked (no --desired PATH, no kquota.yaml cluster, no "
    "quotas/ folder here): a desired-state file that declares the values this revert undoes "
    "makes the next apply put them back, so change it too (--desired PATH names the file and "
    "line)"
)


def _declared_line(d: Declared, entity: str, key: str, where: str) -> str:
    """_declared_line is one key the desired state disagrees with the revert on, naming the
    file and line to change; ``entity``, ``key`` and ``where`` are made safe for the medium."""
    restored = (
        "no " + key if d.restored is None else f"{key} = {value_with_unit(d.key, d.restored)}"
    )
    if d.where is None:
        return (
            f"no desired-state file declares {entity}, and this revert puts back {restored}: "
            "declare it, or the next apply (with prune on) removes it again"
        )
    if d.declared is None:
        return (
            f"{where} declares {entity} without {key}, and this revert puts back {restored}: "
            f"add it there, or the next apply (with prune on) removes it again"
        )
    declared = f"{key} = {value_with_unit(d.key, d.declared)}"
    if d.still:
        return (
            f"{where} still declares {entity} {declared}, the value this revert undoes: "
            f"change it there ({restored}), or the next apply puts it back"
        )
    return (
        f"{where} declares {entity} {declared}, not the {restored} this revert puts back: "
        "change it there, or the next apply sets it again"
    )


def desired_lines(check: DesiredCheck) -> list[str]:
    """desired_lines say, for a terminal, which desired-state files still declare what the
    revert undoes (or that the desired state could not be checked, and how to have it)."""
    if not check.known:
        return [f"note: {_UNKNOWN}"]
    paths = ", ".join(safe_text(p) for p in check.paths)
    if check.problem is not None:
        return [
            f"note: the desired state ({paths}) does not load, so it was not compared with "
            f"this revert: {check.problem}"
        ]
    if not check.found:
        return [f"the desired state ({paths}) already declares every value this revert puts back"]
    lines = [
        "note: "
        + _declared_line(d, display_entity(d.entity), safe_text(d.key), safe_text(d.where or ""))
        for d in check.found[:_SHOW]
    ]
    if len(check.found) > _SHOW:
        lines.append(f"note: … and {len(check.found) - _SHOW} more keys (--format json lists them)")
    return lines


def desired_markdown(check: DesiredCheck) -> list[str]:
    """desired_markdown is :func:`desired_lines` for a pull request: which files must change
    with the revert."""
    if not check.known:
        return [md.text(_UNKNOWN[0].upper() + _UNKNOWN[1:] + "."), ""]
    paths = ", ".join(md.code(p) for p in check.paths)
    if check.problem is not None:
        return [
            f"The desired state ({paths}) does not load, so it was not compared with this "
            f"revert: {md.text(check.problem)}",
            "",
        ]
    if not check.found:
        return [
            f"The desired state ({paths}) already declares every value this revert puts back.",
            "",
        ]
    lines = [f"**The desired state ({paths}) must change too:**", ""]
    lines += [
        "- " + _declared_line(d, md.entity(d.entity), md.code(d.key), md.code(d.where or ""))
        for d in check.found[:_SHOW]
    ]
    if len(check.found) > _SHOW:
        lines.append(f"- … and {len(check.found) - _SHOW} more keys (`--format json` lists them)")
    return [*lines, ""]


def desired_data(check: DesiredCheck) -> dict[str, Any]:
    """desired_data is the desired state compared with a revert, for JSON."""
    return {
        "paths": list(check.paths) if check.known else None,
        "problem": check.problem,
        "keys": [
            {
                "entity": d.entity.to_json(),
                "key": d.key,
                "restored": d.restored,
                "reverted": d.reverted,
                "declared": d.declared,
                "at": d.where,
                "still_declares_reverted": d.still,
            }
            for d in check.found
        ],
    }


def revert_data(result: RevertResult) -> dict[str, Any]:
    """revert_data is what a JSON inverse plan carries about the apply it reverts."""
    return {
        "plan_id": result.source.plan_id,
        "apply": result.source.to_data(),
        "forced": [
            {"entity": c.entity.to_json(), "key": c.key, "wrote": c.wrote, "now": c.now}
            for c in result.forced
        ],
        "refusal": result.plan.refusal,
        "desired": desired_data(result.desired),
    }


def revert_markdown(result: RevertResult) -> str:
    """revert_markdown heads a markdown inverse plan: the apply it reverts, the forced keys."""
    lines = [f"**Revert of apply {md.code(result.source.plan_id)}**", ""]
    if result.forced:
        lines.append(
            f"{len(result.forced)} keys changed since the apply are put back by `--force`:"
        )
        lines += [
            f"- {md.entity(c.entity)}: {md.code(c.key)} was set to {_raw(c.wrote)} by the "
            f"apply, now {_raw(c.now)}"
            for c in result.forced[:_SHOW]
        ]
        lines.append("")
    stopped = _stopped(result)
    if stopped:
        lines += [md.text(stopped[0]), ""]
    lines += desired_markdown(result.desired)
    return "\n".join(lines) + "\n"


__all__ = [
    "apply_line",
    "desired_data",
    "desired_lines",
    "desired_markdown",
    "render_history_json",
    "render_history_markdown",
    "render_history_text",
    "revert_data",
    "revert_heading",
    "revert_markdown",
]
