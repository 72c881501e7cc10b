"""Text and JSON of ``kquota history`` and the heading of ``kquota revert``.

Everything here comes from the audit topic, which anyone allowed to write it can fill: every
string is passed through :func:`safe_text` before it reaches a terminal.
"""

from __future__ import annotations

import json
from typing import Any

from kquota.audit import AuditOp
from kquota.audit_keys import Verdict
from kquota.display import cut
from kquota.history.applies import AppliedPlan
from kquota.history.results import History, RevertResult
from kquota.render import md_escape as md
from kquota.render.format import number, safe_text


def _value(v: float | None) -> str:
    return "unset" if v is None else number(v, long_range=True)


def _op_line(op: AuditOp) -> str:
    return f"{safe_text(op.key)}: {_value(op.before)} → {_value(op.after)}"


def _short(commit: str | None) -> str:
    return safe_text(commit[:12]) if commit else "-"


def _cut(text: str | None, limit: int = 40) -> str:
    """_cut is a field from the trail, shown safely and no longer than ``limit``."""
    return cut(safe_text(text), limit) if text else "-"


def _trust(verdicts: list[Verdict]) -> str:
    if any(v in (Verdict.BAD_SIGNATURE, Verdict.UNKNOWN_KEY) for v in verdicts):
        return "  [DOES NOT VERIFY]"
    if any(v is Verdict.UNSIGNED for v in verdicts):
        return "  [unverified]"
    return ""


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
    }


def revert_markdown(result: RevertResult) -> str:
    """revert_markdown heads a markdown inverse plan: the apply it reverts, the forced keys."""
    lines = [f"**Revert of apply {md.code(result.source.plan_id)}**", ""]
    if result.forced:
        lines.append(
            f"{len(result.forced)} keys changed since the apply are put back by `--force`:"
        )
        lines += [
            f"- {md.entity(c.entity)}: {md.code(c.key)} was set to {_value(c.wrote)} by the "
            f"apply, now {_value(c.now)}"
            for c in result.forced[:_SHOW]
        ]
        lines.append("")
    stopped = _stopped(result)
    if stopped:
        lines += [md.text(stopped[0]), ""]
    return "\n".join(lines) + "\n"


__all__ = [
    "apply_line",
    "render_history_json",
    "render_history_text",
    "revert_data",
    "revert_heading",
    "revert_markdown",
]
