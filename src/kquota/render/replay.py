"""The throttle-replay section of a plan (``plan --usage``, issue 30), as text and markdown.

Reads a :class:`kquota.plan.replay.ReplayReport` and computes nothing: per principal whose
rate quota the plan changes, the bound before -> after, the share of the observed time it
would have been throttled (worst broker), the peak over the bound and the broker's throttle
time for it; censored principals are marked :data:`kquota.plan.replay.CENSORED`. Harder
throttled first, as the report orders them. In markdown the summary line is never folded
(it sits with the plan's summary, :func:`summary_markdown`); the table is folded past
:data:`FOLD_THRESHOLD` rows and spent from the comment's budget; every name goes through
:mod:`kquota.render.md_escape`.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Protocol

from kquota.display import safe_text, value_with_unit
from kquota.model import display_entity
from kquota.plan.replay import CENSORED, Exposure, Replayed, ReplayReport
from kquota.plan.resolver import ResolvedQuota
from kquota.plan.types import Op
from kquota.render import md_escape as md
from kquota.render.change_groups import change_mark, change_words
from kquota.usage.replay import percent

SHOWN = 50
"""Principals listed in text and markdown; the JSON has every one."""
FOLD_THRESHOLD = 20
UNOBSERVED_SHOWN = 10


class Budget(Protocol):
    """Budget is the markdown comment's character budget (:mod:`kquota.render.markdown`)."""

    def take(self, lines: Sequence[str]) -> bool: ...

    def omit(self, what: str, n: int) -> None: ...


def _when(ms: int | None) -> str:
    if ms is None:
        return "?"
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M UTC")


def _span(ms: float) -> str:
    """_span is a duration for a reader: ``3d 4h``, ``2h 5m``, ``1m 30s``, ``6s``, ``250ms``."""
    if ms < 1000:
        return f"{round(ms)}ms"
    s = round(ms / 1000)
    d, h, m = s // 86_400, s % 86_400 // 3600, s % 3600 // 60
    if d:
        return f"{d}d {h}h" if h else f"{d}d"
    if h:
        return f"{h}h {m}m" if m else f"{h}h"
    if m:
        return f"{m}m {s % 60}s" if s % 60 else f"{m}m"
    return f"{s}s"


def _quota(key: str, q: ResolvedQuota | None) -> str:
    """_quota is the effective quota and the match it comes from, as ``--impact`` shows it."""
    if q is None:
        return "unlimited"
    return f"{value_with_unit(key, q.value)} from {display_entity(q.source)}"


def _update(key: str, before: ResolvedQuota | None, after: ResolvedQuota | None) -> Op | None:
    """_update is the change of the effective value as the plan's update lines mark it
    (lower/higher and by how much), or None where a side is unlimited: that word says it."""
    if before is None or after is None:
        return None
    return Op(key, after.value, False, before.value)


def _md_quota(key: str, q: ResolvedQuota | None) -> str:
    if q is None:
        return "unlimited"
    return (
        f"{md.text(value_with_unit(key, q.value), cell=True)} from {md.entity(q.source, cell=True)}"
    )


def _throttled(e: Exposure) -> str:
    return percent(e.fraction)


def _worst(key: str, r: Replayed) -> str:
    """_worst is where and how hard the plan's bound throttles, for one principal."""
    a = r.after
    if not a.throttled_ms:
        return f"never above the new bound (peak {_measured(key, a.peak_rate)})"
    where = (
        f"{_span(a.throttled_ms)} of {_span(a.observed_ms)} on broker {safe_text(a.broker or '?')}"
    )
    if r.brokers > 1:
        where += f" ({a.brokers_throttled} of {r.brokers} brokers throttled)"
    delay = "" if a.throttle_time_ms is None else f", throttle time ~{_span(a.throttle_time_ms)}"
    return f"{where}; peak {_measured(key, a.peak_over)} over the bound{delay}"


def summary(report: ReplayReport) -> str:
    """summary is the section's one line: how many replayed, throttled harder, censored."""
    n = len(report.replayed)
    harder = sum(1 for r in report.replayed if r.harder)
    censored = sum(1 for r in report.replayed if r.censored)
    line = (
        f"{n} observed principal quota{'s' if n != 1 else ''} the plan changes: "
        f"{harder} throttled harder, {censored} already throttled ({CENSORED})"
    )
    if report.unobserved:
        line += f", {len(report.unobserved)} not observed"
    return line


def _heading(report: ReplayReport) -> str:
    w = report.window
    return (
        f"samples {_when(report.first_ms)} to {_when(report.last_ms)}; quota window "
        f"{w.num} x {w.size_seconds} s, {w.source}"
    )


def text_lines(report: ReplayReport) -> list[str]:
    """text_lines is the throttle-replay section for a terminal (names made safe)."""
    source = "" if report.source is None else f" of {safe_text(report.source)}"
    out = ["", f"Throttle replay{source} ({_heading(report)}):", f"  {summary(report)}"]
    for r in report.replayed[:SHOWN]:
        c = r.change
        update = _update(c.key, c.before, c.after)
        words = "" if update is None else change_words(update)
        change = f", {words}" if words else ""
        head = (
            f"  {display_entity(c.principal.entity())} {c.key}: {_quota(c.key, c.before)} -> "
            f"{_quota(c.key, c.after)}{change}: throttled {_throttled(r.before)} -> "
            f"{_throttled(r.after)}"
        )
        out.append(head)
        out.append(f"    {_worst(c.key, r)}")
        if r.censored:
            brokers = ", ".join(safe_text(b) for b in r.censored_brokers)
            out.append(f"    {CENSORED}: already throttled on broker {brokers}")
    if len(report.replayed) > SHOWN:
        out.append(f"  ... and {len(report.replayed) - SHOWN} more (the JSON plan has all)")
    for c in report.unobserved[:UNOBSERVED_SHOWN]:
        out.append(f"  not observed: {display_entity(c.principal.entity())} {c.key} (no samples)")
    if len(report.unobserved) > UNOBSERVED_SHOWN:
        out.append(f"  ... and {len(report.unobserved) - UNOBSERVED_SHOWN} more not observed")
    if report.unattributed:
        out.append(
            f"  note: {report.unattributed} samples of clients no quota matched (no user or "
            "client-id tag) are not replayed"
        )
    for line in report.stopped:
        verdict = "overridden" if report.throttling_allowed else "STOPS the plan"
        out.append(f"  throttle guard ({verdict}): {safe_text(line)}")
    return out


def _measured(key: str, value: float) -> str:
    """A measured rate, not a quota: a windowed average carries no exactness worth 16 digits
    (``1363148.8000000003``), so byte rates show whole bytes and request time two decimals.
    The JSON plan keeps the value as computed."""
    return value_with_unit(key, float(round(value, 2 if key == "request_percentage" else 0)))


_HEADER = (
    "| principal | key | quota before → after | throttled before → after | worst broker | "
    "peak over the bound |\n|---|---|---|---:|---|---:|"
)


def summary_markdown(report: ReplayReport) -> list[str]:
    """summary_markdown is the replay's summary for a pull request, never folded: it goes
    with the plan's own summary, whatever the budget leaves of the table; a throttle guard
    the operator overrode is a warning there, as the other guards' are."""
    out = [f"**Throttle replay:** {md.text(summary(report))}.", ""]
    if report.stopped and report.throttling_allowed:
        items = "".join(f"<br>{md.text(v)}" for v in report.stopped[:SHOWN])
        if len(report.stopped) > SHOWN:
            items += f"<br>… and {len(report.stopped) - SHOWN} more"
        out += [
            "> [!WARNING]",
            f"> **Throttle guard overridden** (`--allow-throttling`):{items}",
            "",
        ]
    return out


def markdown_lines(report: ReplayReport, b: Budget) -> list[str]:
    """markdown_lines is the throttle-replay table for a pull-request comment, within ``b``."""
    source = "" if report.source is None else f" of {md.code(report.source)}"
    head = [
        "#### Throttle replay",
        "",
        f"Observed usage{source}: {md.text(_heading(report))}. Each principal's rate on each "
        "broker is replayed against its quota before and after the plan; the worst broker "
        "is shown.",
        "",
    ]
    rows = report.replayed[:SHOWN]
    folded = len(rows) > FOLD_THRESHOLD
    table = (
        [_HEADER]
        if not folded
        else [
            f"<details><summary>Principals replayed ({len(report.replayed)})</summary>",
            "",
            _HEADER,
        ]
    )
    close = ["", "</details>", ""] if folded else [""]
    notes = _markdown_notes(report)
    if not b.take(head + table + close + notes):
        b.omit("throttle replay rows", len(report.replayed))
        return []
    left = len(report.replayed)
    for r in rows:
        row = _row(r)
        if not b.take([row]):
            break
        table.append(row)
        left -= 1
    b.omit("throttle replay rows", left)
    return head + table + close + notes


def _row(r: Replayed) -> str:
    c = r.change
    before_after = f"{_md_quota(c.key, c.before)} → {_md_quota(c.key, c.after)}"
    update = _update(c.key, c.before, c.after)
    if update is not None:
        before_after += f" {change_mark(update)}"
    throttled = f"{_throttled(r.before)} → **{_throttled(r.after)}**"
    if r.censored:
        throttled += f"<br>{md.text(CENSORED, cell=True)}"
    a = r.after
    broker = "" if not a.throttled_ms else md.code(a.broker or "?", cell=True)
    over = "" if not a.peak_over else md.text(_measured(c.key, a.peak_over), cell=True)
    return (
        f"| {md.entity(c.principal.entity(), cell=True)} | `{c.key}` | "
        f"{before_after} | {throttled} | {broker} | {over} |"
    )


def _markdown_notes(report: ReplayReport) -> list[str]:
    out = []
    for c in report.unobserved[:UNOBSERVED_SHOWN]:
        out.append(f"- Not observed (no samples): {md.entity(c.principal.entity())} `{c.key}`.")
    if len(report.unobserved) > UNOBSERVED_SHOWN:
        out.append(f"- … and {len(report.unobserved) - UNOBSERVED_SHOWN} more not observed.")
    if report.unattributed:
        out.append(
            f"- {report.unattributed} samples of clients no quota matched (no user or "
            "client-id tag) are not replayed."
        )
    # the guard's lines are in the verdict (stopped) or the warning (overridden) above
    return [*out, ""] if out else []
