"""Text and JSON of ``kquota history`` and the heading of ``kquota revert``.

Everything here comes from the audit topic, which anyone allowed to write it can fill: every
string is passed through :func:`safe_text` before it reaches a terminal.
"""

from __future__ import annotations

import json
from typing import Any

from kquota.audit import AuditOp
from kquota.history.applies import AppliedPlan
from kquota.history.results import History, RevertResult
from kquota.render.format import number, safe_text


def _value(v: float | None) -> str:
    return "unset" if v is None else number(v, long_range=True)


def _op_line(op: AuditOp) -> str:
    return f"{safe_text(op.key)}: {_value(op.before)} → {_value(op.after)}"


def _short(commit: str | None) -> str:
    return safe_text(commit[:12]) if commit else "-"


def apply_line(a: AppliedPlan) -> str:
    """apply_line is one apply in one line: id, time, actor, commit, cluster and counts."""
    counts = f"+{a.count('create')} ~{a.count('update')} -{a.count('remove')}"
    line = (
        f"{safe_text(a.plan_id)}  {safe_text(a.timestamp) or '-'}  "
        f"{safe_text(a.actor or '-')}  commit {_short(a.git_commit)}  "
        f"{safe_text(a.cluster or '-')}  {len(a.changes)} entities ({counts})"
    )
    if a.reverts:
        line += f"  reverts {safe_text(a.reverts)}"
    return line


def render_history_text(h: History) -> str:
    out: list[str] = []
    if h.entity is not None:
        out.append(f"changes to {h.entity_shown} on audit topic {safe_text(h.topic)}:")
        if not h.events:
            out.append("  none recorded")
        for e in h.events:
            who = safe_text(e.actor or "-")
            out.append(f"  {safe_text(e.timestamp) or '-'}  {safe_text(e.plan_id)}  {who}")
            out += [f"    {_op_line(op)}" for op in e.ops]
    else:
        out.append(f"applies recorded on audit topic {safe_text(h.topic)}: {len(h.applies)}")
        out += [f"  {apply_line(a)}" for a in h.applies]
    if h.skipped:
        out.append(f"({h.skipped} records on the topic are not quota.altered events: skipped)")
    return "\n".join(out) + "\n"


def _ops_data(ops: tuple[AuditOp, ...]) -> list[dict[str, Any]]:
    return [op.to_json() for op in ops]


def render_history_json(h: History) -> str:
    data: dict[str, Any] = {"topic": h.topic, "skipped": h.skipped}
    if h.entity is not None:
        data["entity"] = h.entity.to_json()
        data["changes"] = [
            {"plan_id": e.plan_id, "timestamp": e.timestamp, "actor": e.actor,
             "ops": _ops_data(e.ops)}
            for e in h.events
        ]  # fmt: skip
    else:
        data["applies"] = [a.to_data() for a in h.applies]
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def revert_heading(result: RevertResult) -> str:
    """revert_heading says which apply the plan below undoes, and what --force let through."""
    lines = [f"revert of apply {apply_line(result.source)}"]
    if result.forced:
        lines.append(
            f"warning: --force: {len(result.forced)} keys changed since the apply are put back "
            "to the apply's before values:"
        )
        lines += [f"  {c}" for c in result.forced[:20]]
    return "\n".join(lines) + "\n"


__all__ = ["apply_line", "render_history_json", "render_history_text"]
