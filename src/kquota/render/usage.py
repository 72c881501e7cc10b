"""``kquota usage`` and ``kquota recommend`` as text and markdown (JSON is their to_data).

Computes nothing: reads a :class:`~kquota.usage.report.UsageReport` or a
:class:`~kquota.usage.recommend.Recommendation`. Every name (principals, brokers, clusters,
entities, sources) goes through the medium's one escaping module: text through
:mod:`kquota.display`, markdown through :mod:`kquota.render.md_escape`, tables with as
many cells as their header. The markdown stays within the review comment's budget
(:data:`kquota.render.markdown.BUDGET`): only whole rows are cut, and what was cut is counted
in a visible line that says the JSON has all.
"""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

from kquota.display import display_name, human, number, safe_text
from kquota.model import display_entity
from kquota.render import md_escape as md
from kquota.usage.profile import Profiles, SeriesProfile
from kquota.usage.recommend import CapacitySum, Proposal, Recommendation
from kquota.usage.report import RateUse, UsageReport

UNMATCHED_TITLE = (
    "Quotas that matched no traffic in the window (candidates for removal; kquota usage "
    "removes nothing)"
)
_P50, _P95, _P99 = Decimal(50), Decimal(95), Decimal(99)
LISTED = 50
"""Skipped principals listed in markdown; the JSON has every one."""
CENSORED = "censored: throttled, so the observed rate is a floor of the demand"


def _when(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _span(ms: int) -> str:
    from kquota.usage.recommend import span_text

    return span_text(ms)


def _amount(key: str, value: float | None) -> str:
    if value is None:
        return "unlimited"
    if key == "request_percentage":
        return f"{number(value)}%"
    return human(key, value) or number(value)


def _pct(ratio: float | None) -> str:
    return "-" if ratio is None else f"{ratio * 100:.0f}%"


def _window(p: Profiles, source: str) -> str:
    cluster = "(unnamed)" if p.cluster is None else display_name(p.cluster)
    return (
        f"cluster {cluster}, {_when(p.start_ms)} .. {_when(p.end_ms)} ({_span(p.since_ms)} back "
        f"from the newest sample), from {safe_text(source)}: {p.samples} samples in "
        f"{len(p.series)} series; percentiles are nearest-rank"
    )


def _throttle(t: SeriesProfile | None) -> str:
    if t is None:
        return "throttle time not read"
    if not t.above_zero:
        return "never throttled"
    return f"throttled at {t.above_zero} of {t.count} samples (max {number(t.max)} ms)"


def render_usage_text(report: UsageReport) -> str:
    """render_usage_text is the usage report for a terminal."""
    out = [f"Usage of {_window(report.profiles, report.source)}"]
    out += [f"warning: {w}" for w in report.warnings]
    shown = None
    for u in report.uses:
        principal = display_entity(u.principal.entity())
        if principal != shown:
            out += ["", principal]
            shown = principal
        r = u.rate
        line = (
            f"  broker {display_name(r.broker)} {u.key}: p50 {_amount(u.key, r.at(_P50))}, "
            f"p95 {_amount(u.key, r.at(_P95))}, p99 {_amount(u.key, r.at(_P99))}, max "
            f"{_amount(u.key, r.max)}; {_quota(u)}; {_throttle(u.throttle)}"
        )
        out.append(line)
        if u.censored:
            out.append(f"    {CENSORED}")
    if report.unmatched:
        out += ["", f"{UNMATCHED_TITLE}:"]
        out += [f"  {display_entity(e)}" for e in report.unmatched]
    return "\n".join(out) + "\n"


def _quota(u: RateUse) -> str:
    if u.quota is None or u.source is None:
        return "no quota (unlimited)"
    return (
        f"quota {_amount(u.key, u.quota)} from {display_entity(u.source)}, p99 at "
        f"{_pct(u.utilisation())}"
    )


def render_usage_markdown(report: UsageReport, budget: int | None = None) -> str:
    """render_usage_markdown is the usage report for a pull request or job summary."""
    from kquota.render.markdown import BUDGET

    limit = BUDGET if budget is None else budget
    p = report.profiles
    cluster = "(unnamed)" if p.cluster is None else md.code(p.cluster)
    head = [
        f"### Usage of cluster {cluster}",
        "",
        f"{_when(p.start_ms)} .. {_when(p.end_ms)} ({_span(p.since_ms)} back from the newest "
        f"sample), from {md.code(report.source)}: {p.samples} samples in {len(p.series)} "
        "series; percentiles are nearest-rank.",
        "",
    ]
    head += [f"> [!WARNING]\n> {md.text(w)}\n" for w in report.warnings]
    table = [
        "| principal | broker | key | p50 | p95 | p99 | max | quota | from | p99 use | throttled |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    rows = [_usage_row(u) for u in report.uses]
    tail: list[str] = []
    if report.unmatched:
        tail += ["", f"#### {UNMATCHED_TITLE}", ""]
        tail += [f"- {md.entity(e)}" for e in report.unmatched[:LISTED]]
        if len(report.unmatched) > LISTED:
            tail.append(f"- ... and {len(report.unmatched) - LISTED} more (the JSON has all)")
    return _fit(head, table, rows, tail, limit)


def _usage_row(u: RateUse) -> str:
    r = u.rate
    cells = [
        md.entity(u.principal.entity(), cell=True),
        md.code(r.broker, cell=True),
        md.code(u.key, cell=True),
        _amount(u.key, r.at(_P50)),
        _amount(u.key, r.at(_P95)),
        _amount(u.key, r.at(_P99)),
        _amount(u.key, r.max),
        _amount(u.key, u.quota),
        "-" if u.source is None else md.entity(u.source, cell=True),
        _pct(u.utilisation()),
        (_throttle(u.throttle) + (" (censored)" if u.censored else "")),
    ]
    return "| " + " | ".join(cells) + " |"


def _fit(head: list[str], table: list[str], rows: list[str], tail: list[str], limit: int) -> str:
    """_fit is the document with as many whole rows as the budget holds, and a count of the
    rest in a visible line."""
    from kquota.render.markdown import size

    fixed = size("\n".join(head + table + tail)) + 200
    kept: list[str] = []
    used = fixed
    for row in rows:
        used += size(row) + 1
        if used > limit:
            break
        kept.append(row)
    body = table + kept if rows else ["(no rate samples in the window)"]
    if len(kept) < len(rows):
        body += [
            "",
            f"> [!IMPORTANT]\n> {len(rows) - len(kept)} more rows did not fit in this comment: "
            "the JSON output (--format json) has all.",
        ]
    return "\n".join(head + body + tail) + "\n"


def render_recommend_text(rec: Recommendation) -> str:
    """render_recommend_text is the recommendation for a terminal (the patch is written
    apart, to --out or after this)."""
    o = rec.options
    out = [
        f"Recommended quotas for {_window(rec.report.profiles, rec.report.source)}",
        f"p{o.percentile.normalize():f} x {o.headroom:g} headroom, never below the largest rate "
        f"sent, rounded up; minimum window {_span(o.min_window_ms)}",
    ]
    out += [f"warning: {w}" for w in rec.warnings]
    out.append("")
    changed = [p for p in rec.proposals if p.changed]
    out.append(f"{len(changed)} change(s) proposed:" if changed else "No change proposed.")
    out += [_proposal_text(p) for p in rec.proposals]
    for s in rec.skipped:
        out.append(
            f"  not sized: {display_entity(s.principal.entity())} {s.key}: {safe_text(s.why)}"
        )
    if rec.sums:
        out += ["", "Effective quotas of the observed principals, summed per broker:"]
        out += [f"  {_sum_text(s)}" for s in rec.sums]
    return "\n".join(out) + "\n"


def _proposal_text(p: Proposal) -> str:
    mark = "~" if p.changed else "="
    notes = "".join(f"; {n}" for n in p.notes)
    return (
        f"  {mark} {display_entity(p.entity)} {p.key}: {_amount(p.key, p.current)} -> "
        f"{_amount(p.key, p.proposed)} (peak {_amount(p.key, p.peak)}, used "
        f"{_amount(p.key, p.used)}){notes}"
    )


def _total(key: str, s: CapacitySum, after: bool) -> str:
    k = s.after if after else s.before
    if k.unbounded:
        return f"unbounded ({k.limited} known add up to {_amount(key, k.total)})"
    if not k.limited:
        return "no quotas"
    ratio = k.ratio(s.capacity)
    return _amount(key, k.total) + ("" if ratio is None else f", {ratio:.2f}x")


def _sum_text(s: CapacitySum) -> str:
    cap = (
        "no capacity declared"
        if s.capacity is None
        else f"one broker's declared capacity {_amount(s.key, s.capacity)}"
    )
    return f"{s.key}: {_total(s.key, s, False)} -> {_total(s.key, s, True)}; {cap}"


def render_recommend_markdown(
    rec: Recommendation, patch: str | None = None, budget: int | None = None
) -> str:
    """render_recommend_markdown is the recommendation for a pull request; ``patch``, when
    given, follows it as a fenced YAML block (never cut: it is the thing reviewed)."""
    from kquota.render.markdown import BUDGET

    limit = BUDGET if budget is None else budget
    p = rec.report.profiles
    o = rec.options
    cluster = "(unnamed)" if p.cluster is None else md.code(p.cluster)
    head = [
        f"### Recommended quotas for cluster {cluster}",
        "",
        f"From {md.code(rec.report.source)}, {_when(p.start_ms)} .. {_when(p.end_ms)}: "
        f"p{o.percentile.normalize():f} × {o.headroom:g} headroom, never below the largest "
        f"rate sent, rounded up; minimum window {_span(o.min_window_ms)}. Review the patch "
        "with `kquota plan`.",
        "",
    ]
    head += [f"> [!WARNING]\n> {md.text(w)}\n" for w in rec.warnings]
    table = [
        "| entity | key | now | proposed | peak | used | principals | notes |",
        "|---|---|---|---|---|---|---|---|",
    ]
    rows = [
        "| "
        + " | ".join(
            [
                md.entity(x.entity, cell=True),
                md.code(x.key, cell=True),
                _amount(x.key, x.current),
                _amount(x.key, x.proposed) + ("" if x.changed else " (same)"),
                _amount(x.key, x.peak),
                _amount(x.key, x.used),
                str(x.principals),
                md.text("; ".join(x.notes), cell=True) or "-",
            ]
        )
        + " |"
        for x in rec.proposals
    ]
    tail: list[str] = []
    if rec.skipped:
        tail += ["", "#### Not sized", ""]
        tail += [
            f"- {md.entity(s.principal.entity())} {md.code(s.key)}: {md.text(s.why)}"
            for s in rec.skipped[:LISTED]
        ]
        if len(rec.skipped) > LISTED:
            tail.append(f"- ... and {len(rec.skipped) - LISTED} more (the JSON has all)")
    if rec.sums:
        tail += ["", "#### Effective quotas of the observed principals, summed per broker", ""]
        # every word but the key is kquota's own (numbers and units): no escaping needed
        tail += [f"- {md.code(s.key)}: {_sum_text(s).split(': ', 1)[1]}" for s in rec.sums]
    if patch is not None:
        tail += ["", "#### Patch", "", md.fenced(patch)]
    return _fit(head, table, rows, tail, limit)
