"""The capacity section of a plan (``plan --capacity``, issue 23), as text and markdown.

Reads a :class:`kquota.plan.capacity.CapacityReport` and computes nothing: per key the sum
of effective per-broker quotas before -> after against one broker's capacity, the
protected principals' sum, the quotas that can never throttle, and the principals'
cluster-wide ceilings. An unbounded sum is written as the word, never as a number. The
markdown follows the review-surface rules: every name goes through
:mod:`kquota.render.md_escape`, tables have as many cells as their header, the ceilings are
folded, and rows are spent from the comment's budget.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from kquota.display import safe_text, value_with_unit
from kquota.model import display_entity
from kquota.plan.capacity import CapacityReport, Ceiling, KeyCapacity, KeySum
from kquota.plan.controllers import STATIC_QUOTA_CALLBACK
from kquota.render import md_escape as md

CEILINGS_SHOWN = 50
"""Ceilings listed in text and markdown; the JSON has every one."""
ENTITIES_SHOWN = 5
UNBOUNDED = "unbounded"
NO_QUOTAS = "no quotas"
CALLBACK_NOTE = (
    "the brokers run a custom quota callback ({callback}): what they enforce may differ "
    "from these per-entity sums"
)
STATIC_NOTE = (
    "Strimzi's StaticQuotaCallback enforces its own per-broker totals shared by every client "
    "(client.quota.callback.static.produce and .fetch in the Kafka resource), not these "
    "per-entity quotas; brokers do not disclose a plug-in's settings, so compare them there"
)


class Budget(Protocol):
    """Budget is the markdown comment's character budget (:mod:`kquota.render.markdown`)."""

    def take(self, lines: Sequence[str]) -> bool: ...

    def omit(self, what: str, n: int) -> None: ...


def _value(key: str, value: float) -> str:
    return value_with_unit(key.split(" ", 1)[0], value)


def _sum(k: KeyCapacity, s: KeySum) -> str:
    if s.unbounded:
        return UNBOUNDED
    if not s.limited:
        return NO_QUOTAS
    ratio = s.ratio(k.capacity)
    shown = _value(k.key, s.total)
    return shown if ratio is None else f"{shown}, {ratio:.2f}x"


def key_verdict(k: KeyCapacity) -> str:
    """verdict is the key's verdict after the plan, in words: ``fits``, ``oversubscribed
    1.5x``, or why it cannot tell."""
    a = k.after
    if a.unbounded:
        return "cannot tell: a default applies to unknown principals"
    if not a.limited:
        return "no quotas"
    ratio = a.ratio(k.capacity)
    if ratio is None:
        return "cannot tell: no capacity known"
    return "fits" if ratio <= 1 else f"oversubscribed {ratio:.1f}x"


BAR = 24
"""Cells of a bar that stand for one broker's capacity; a bar runs to twice that, then ``▶``."""
_EIGHTHS = " ▏▎▍▌▋▊▉"


def _bar(s: KeySum, capacity: float | None) -> str:
    """_bar is the sum against one broker's capacity: blocks to the sum, ``░`` to the
    capacity mark ``│``, ``▶`` past twice the capacity; an unbounded sum is ``▒``."""
    if s.unbounded:
        return "▒" * BAR + "│ unbounded"
    ratio = s.ratio(capacity)
    if ratio is None or not s.limited:
        return " " * BAR + "│ " + (NO_QUOTAS if not s.limited else "no capacity known")
    eighths = round(min(ratio, 2.0) * BAR * 8)
    full, part = divmod(eighths, 8)
    cells = "█" * full + (_EIGHTHS[part] if part else "")
    if full < BAR:
        cells = cells + "░" * (BAR - len(cells))
        bar = cells + "│"
    else:
        bar = cells[:BAR] + "│" + cells[BAR:] + ("▶" if ratio > 2.0 else "")
    return f"{bar} {ratio:.2f}x"


def _drawn(s: KeySum) -> bool:
    return s.unbounded or bool(s.limited)


def bar_lines(report: CapacityReport) -> list[str]:
    """bar_lines draws each key's sum before and after the plan against one broker's
    capacity (``│``), with the verdict: plain text for a terminal or a code block."""
    # A key without quotas before or after has nothing to draw.
    keys = [k for k in report.keys if _drawn(k.before) or _drawn(k.after)]
    width = max((len(k.key) for k in keys), default=0)
    out = []
    for k in keys:
        out.append(f"{k.key:<{width}}  before {_bar(k.before, k.capacity)}")
        out.append(f"{'':<{width}}  after  {_bar(k.after, k.capacity)}  {key_verdict(k)}")
    return out


def _capacity(k: KeyCapacity) -> str:
    if k.capacity is None:
        return f"no capacity known ({k.capacity_source})"
    return f"{_value(k.key, k.capacity)} ({k.capacity_source})"


def _facts_line(report: CapacityReport) -> str:
    f = report.facts
    if f.brokers is None:
        return f"broker facts unknown: {safe_text(f.unknown_because or 'not read')}"
    parts = [f"{f.brokers} brokers, {f.leaders} leading partitions"]
    if f.io_threads is not None and f.network_threads is not None:
        parts.append(f"{f.io_threads} io + {f.network_threads} network threads")
    return "; ".join(parts)


def text_lines(report: CapacityReport) -> list[str]:
    """text_lines is the capacity section for a terminal (names made safe to print)."""
    out = [
        "",
        f"Capacity, per broker ({_facts_line(report)}; {report.principals} principals known):",
    ]
    for k in report.keys:
        change = f"{_sum(k, k.before)} -> {_sum(k, k.after)}"
        out.append(f"  {k.key}: {change} of {_capacity(k)}: {key_verdict(k)}")
        a = k.after
        if a.unbounded:
            defaults = ", ".join(display_entity(e) for e in a.defaults[:ENTITIES_SHOWN])
            out.append(
                f"    unbounded: {defaults} applies to principals nobody can list; the "
                f"{a.limited} known add up to {_value(k.key, a.total)}"
            )
        if a.unlimited:
            out.append(f"    {a.unlimited} known principals have no {k.quota_key} quota")
        if k.protected_after is not None and k.protected_before is not None:
            mark = "WARNING: " if k.protected_over else ""
            out.append(
                f"    {mark}protected principals: {_sum(k, k.protected_before)} -> "
                f"{_sum(k, k.protected_after)}"
                + (": their guarantees cannot all hold" if k.protected_over else "")
            )
        for e, v in k.never_throttle[:ENTITIES_SHOWN]:
            out.append(
                f"    warning: can never throttle: {display_entity(e)} = {_value(k.key, v)}, "
                "above one broker's capacity"
            )
        if len(k.never_throttle) > ENTITIES_SHOWN:
            out.append(f"    ... and {len(k.never_throttle) - ENTITIES_SHOWN} more above capacity")
    for line in report.stopped:
        verdict = "overridden" if report.oversubscription_allowed else "STOPS the plan"
        out.append(f"  capacity guard ({verdict}): {safe_text(line)}")
    for note in report.notes:
        out.append(f"  note: {note}")
    if report.callback is not None:
        out.append("  note: " + CALLBACK_NOTE.format(callback=safe_text(report.callback)))
        if STATIC_QUOTA_CALLBACK in report.callback:
            out.append("  note: " + STATIC_NOTE)
    bars = bar_lines(report)
    if bars:
        out += ["  Sum per broker against one broker's capacity (│):"]
        out += [f"    {safe_text(line)}" for line in bars]
    out += _ceiling_text(report.ceilings)
    return out


def _ceiling_text(ceilings: Sequence[Ceiling]) -> list[str]:
    if not ceilings:
        return []
    out = ["  Cluster-wide ceilings after the plan (quota x brokers leading / x all brokers):"]
    for c in ceilings[:CEILINGS_SHOWN]:
        out.append(
            f"    {display_entity(c.principal.entity())} {c.key}: {_value(c.key, c.quota)} from "
            f"{display_entity(c.source)} -> {_maybe(c.key, c.leaders)} / {_maybe(c.key, c.brokers)}"
        )
    if len(ceilings) > CEILINGS_SHOWN:
        out.append(f"    ... and {len(ceilings) - CEILINGS_SHOWN} more (the JSON plan has all)")
    return out


def _maybe(key: str, value: float | None) -> str:
    return "unknown" if value is None else _value(key, value)


_HEADER = (
    "| key | verdict | before | after | capacity per broker | protected (after) |\n"
    "|---|---|---:|---:|---|---:|"
)
_CEILING_HEADER = (
    "| principal | key | quota | from | × leading brokers | × all brokers |\n"
    "|---|---|---:|---|---:|---:|"
)


def markdown_lines(report: CapacityReport, b: Budget) -> list[str]:
    """markdown_lines is the capacity section for a pull-request comment, within ``b``."""
    head = ["#### Capacity", ""]
    for w in report.warnings:
        head += ["> [!WARNING]", f"> {md.text(w)}", ""]
    if report.callback is not None:
        note = CALLBACK_NOTE.format(callback=md.code(report.callback))
        head += ["> [!NOTE]", f"> {note[0].upper()}{note[1:]}.", ""]
        if STATIC_QUOTA_CALLBACK in report.callback:
            head += ["> [!NOTE]", f"> {md.text(STATIC_NOTE)}.", ""]
    head += [
        f"Per broker: {md.text(_facts_line(report))}; {report.principals} principals known. "
        "Kafka enforces these quotas on each broker on its own; a sum above 1.00x "
        "oversubscribes one broker.",
        "",
    ]
    rows = [_HEADER]
    for k in report.keys:
        protected = "" if k.protected_after is None else _sum(k, k.protected_after)
        if k.protected_over:
            protected = f"**{protected}: over capacity**"
        shown = key_verdict(k)
        shown = f"**{shown}**" if shown.startswith("oversubscribed") else shown
        rows.append(
            f"| `{k.key}` | {shown} | {md.text(_sum(k, k.before), cell=True)} | "
            f"{md.text(_sum(k, k.after), cell=True)} | {md.text(_capacity(k), cell=True)} | "
            f"{md.text(protected, cell=True) if not k.protected_over else protected} |"
        )
    rows.append("")
    bars = bar_lines(report)
    if bars:
        rows += [*md.fenced_lines(bars).splitlines(), ""]
    never = []
    for k in report.keys:
        for e, v in k.never_throttle[:ENTITIES_SHOWN]:
            never.append(
                f"> `{k.key}`: {md.entity(e)} = {md.text(_value(k.key, v))} can never "
                "throttle (above one broker's capacity).<br>"
            )
        if len(k.never_throttle) > ENTITIES_SHOWN:
            never.append(f"> … and {len(k.never_throttle) - ENTITIES_SHOWN} more above capacity.")
    if never:
        never[-1] = never[-1].removesuffix("<br>")
        rows += ["> [!WARNING]", *never, ""]
    details = []
    for k in report.keys:
        a = k.after
        if a.unbounded:
            shown = ", ".join(md.entity(e) for e in a.defaults[:ENTITIES_SHOWN])
            details.append(
                f"- `{k.key}` is **unbounded**: {shown} applies to principals nobody can list "
                f"(the {a.limited} known add up to {md.text(_value(k.key, a.total))})."
            )
        if a.unlimited:
            details.append(f"- `{k.key}`: {a.unlimited} known principals have no quota.")
    for line in report.stopped:
        verdict = "overridden" if report.oversubscription_allowed else "stops the plan"
        details.append(f"- **Capacity guard ({verdict}):** {md.text(line)}")
    details += [f"- {md.text(n)}." for n in report.notes]
    details.append("")
    section = head + rows + details
    if not b.take(section):
        b.omit("capacity rows", len(report.keys) + len(report.ceilings))
        return []
    return section + _ceiling_markdown(report.ceilings, b)


def _ceiling_markdown(ceilings: Sequence[Ceiling], b: Budget) -> list[str]:
    if not ceilings:
        return []
    shown = ceilings[:CEILINGS_SHOWN]
    out = [
        f"<details><summary>Cluster-wide ceilings after the plan ({len(ceilings)})</summary>",
        "",
        _CEILING_HEADER,
    ]
    close = ["", "</details>", ""]
    if not b.take(out + close):
        b.omit("capacity ceilings", len(ceilings))
        return []
    left = len(ceilings)
    for c in shown:
        row = (
            f"| {md.entity(c.principal.entity(), cell=True)} | `{c.key}` | "
            f"{md.text(_value(c.key, c.quota), cell=True)} | {md.entity(c.source, cell=True)} | "
            f"{md.text(_maybe(c.key, c.leaders), cell=True)} | "
            f"{md.text(_maybe(c.key, c.brokers), cell=True)} |"
        )
        if not b.take([row]):
            break
        out.append(row)
        left -= 1
    b.omit("capacity ceilings", left)
    return out + close
