"""Drift report renderers: text, markdown, JSON and a Prometheus textfile. Format only."""

from __future__ import annotations

import json

from kquota.display import safe_text, value_with_unit
from kquota.drift.report import DriftKind, DriftReport, Finding
from kquota.model import display_entity
from kquota.render import md_escape as md
from kquota.render.markdown import BUDGET, size

_LABELS = {
    DriftKind.VALUE_CHANGED: "value changed",
    DriftKind.KEY_ADDED: "key added out of band",
    DriftKind.KEY_REMOVED: "key missing",
    DriftKind.ENTITY_MISSING: "declared entity missing",
    DriftKind.ENTITY_UNDECLARED: "entity not declared (in scope, prune on)",
    DriftKind.REVERTED_BY_CONTROLLER: "reverted by another controller",
}
FOLD_THRESHOLD = 20
FULL_REPORT_AT = "the JSON report (`kquota drift --format json`)"


PROTECTED = "protected principal"
"""How a finding on an entity naming a protected principal (``policy.protect``) is marked."""


def next_step(report: DriftReport) -> str | None:
    """next_step is what a person does about the report: repair the cluster with apply, or
    adopt what it has with export; None when there is nothing to do."""
    if not report.drifted and not report.unmanaged:
        return None
    if report.drifted and all(f.kind is DriftKind.REVERTED_BY_CONTROLLER for f in report.findings):
        return (
            "next: change the other controller's resources (applying again would only be "
            "reverted), or the desired state to match them"
        )
    if not report.drifted:
        return (
            "next: `kquota export` writes what the cluster has as desired-state files, to "
            "adopt the undeclared entities (or turn prune on to remove them)"
        )
    return (
        "next: `kquota apply` (the same flags) sets the cluster back to the desired state; "
        "`kquota export` writes what the cluster has as desired-state files, to adopt it"
    )


def _values(f: Finding) -> str:
    return ", ".join(f"{safe_text(k)} {value_with_unit(k, v)}" for k, v in f.values)


def _detail(f: Finding) -> str:
    if f.kind is DriftKind.VALUE_CHANGED and f.key is not None:
        assert f.desired is not None and f.actual is not None
        return (
            f"{safe_text(f.key)}: cluster {value_with_unit(f.key, f.actual)}, "
            f"desired {value_with_unit(f.key, f.desired)}"
        )
    if f.kind is DriftKind.KEY_ADDED and f.key is not None and f.actual is not None:
        return f"{safe_text(f.key)}: cluster has {value_with_unit(f.key, f.actual)}, not declared"
    if f.kind is DriftKind.KEY_REMOVED and f.key is not None and f.desired is not None:
        return (
            f"{safe_text(f.key)}: desired {value_with_unit(f.key, f.desired)}, not on the cluster"
        )
    if f.kind is DriftKind.REVERTED_BY_CONTROLLER:
        return f"{'entity' if f.key is None else safe_text(f.key)}: {_reverted(f)}"
    if f.kind is DriftKind.ENTITY_UNDECLARED and f.values:
        return f"{_LABELS[f.kind]}: the cluster has {_values(f)}"
    return _LABELS[f.kind]


def _reverted(f: Finding) -> str:
    """_reverted is ``desired X, cluster Y: reverted by <controller>`` (kquota's own text:
    values and the controller's name)."""
    if f.key is None:
        return f"declared, absent on the cluster: reverted by {f.controller}"
    desired = "absent" if f.desired is None else value_with_unit(f.key, f.desired)
    actual = "absent" if f.actual is None else value_with_unit(f.key, f.actual)
    return f"desired {desired}, cluster {actual}: reverted by {f.controller}"


def _headline(report: DriftReport) -> str:
    name = safe_text(report.cluster) if report.cluster else "cluster"
    if not report.drifted:
        return f"{name}: in sync"
    return f"{name}: drift in {report.drifted_entities} entities ({len(report.findings)} findings)"


def render_text(report: DriftReport) -> str:
    lines = [_headline(report)]
    current = None
    for f in report.findings:
        if f.entity != current:
            current = f.entity
            mark = f" ({PROTECTED})" if f.protected else ""
            lines.append(f"  {display_entity(f.entity)}{mark}")
        lines.append(f"    {f.kind.value}: {_detail(f)}")
    if report.unmanaged:
        lines.append(
            f"  {report.unmanaged} in-scope entities are not declared (prune is off: "
            "left alone, not drift)"
        )
    counts = ", ".join(f"{k} {v}" for k, v in report.counts().items() if v)
    if counts:
        lines.append(f"  totals: {counts}")
    step = next_step(report)
    if step is not None:
        lines.append(f"  {step}")
    return "\n".join(lines) + "\n"


def render_markdown(
    report: DriftReport, *, budget: int = BUDGET, full_report_at: str = FULL_REPORT_AT
) -> str:
    """render_markdown: the headline, the totals per kind, then the findings per kind (each
    folded past :data:`FOLD_THRESHOLD` rows), within ``budget`` characters; what does not
    fit is counted in a visible line that says where the full report is. Names, keys and the
    cluster name go through :mod:`kquota.render.md_escape`."""
    name = md.code(report.cluster) if report.cluster else "cluster"
    if report.drifted:
        state = f"drift in {report.drifted_entities} entities ({len(report.findings)} findings)"
    else:
        state = "in sync"
    head = [f"### kquota drift: {name}: {state}", ""]
    counts = {k: v for k, v in report.counts().items() if v}
    if counts:
        head += ["| finding | count |", "|---|---:|"]
        head += [f"| {_LABELS[DriftKind(k)]} | {v} |" for k, v in counts.items()]
        head.append("")
    if report.unmanaged:
        head += [f"{report.unmanaged} in-scope entities are not declared (prune off).", ""]
    left = budget - size("\n".join(head)) - 400
    body: list[str] = []
    omitted = 0
    for kind in DriftKind:
        group = [f for f in report.findings if f.kind is kind]
        if not group:
            continue
        rows = ["| entity | detail |", "|---|---|"]
        wrap = [f"<details><summary>{_LABELS[kind]}: {len(group)}</summary>", "", "</details>", ""]
        fold = len(group) > FOLD_THRESHOLD
        title = [] if fold else [f"#### {_LABELS[kind]} ({len(group)})", ""]
        left -= size("\n".join(rows + (wrap if fold else title))) + 4
        shown = 0
        for f in group:
            mark = f" ({PROTECTED})" if f.protected else ""
            row = f"| {md.entity(f.entity, cell=True)}{mark} | {_md_detail(f)} |"
            if left - size(row) - 1 < 0:
                break
            left -= size(row) + 1
            rows.append(row)
            shown += 1
        if shown < len(group):
            omitted += len(group) - shown
            rows.append(f"| … {len(group) - shown} more not shown | |")
        rows.append("")
        body += [*wrap[:2], *rows, *wrap[2:]] if fold else [*title, *rows]
    note = []
    if omitted:
        note = [
            "> [!IMPORTANT]",
            f"> **Not all shown here:** {omitted} findings left out. The full report is in "
            f"{full_report_at}.",
            "",
        ]
    out = "\n".join(head + note + body).rstrip("\n") + "\n"
    step = next_step(report)  # kquota's own words: within the budget's reserve
    return out if step is None else f"{out}\n{step[0].upper()}{step[1:]}\n"


def _md_detail(f: Finding) -> str:
    key = "" if f.key is None else md.code(f.key, cell=True) + ": "
    if f.kind is DriftKind.VALUE_CHANGED and f.desired is not None and f.actual is not None:
        assert f.key is not None
        return (
            f"{key}cluster {value_with_unit(f.key, f.actual)}, "
            f"desired {value_with_unit(f.key, f.desired)}"
        )
    if f.kind is DriftKind.KEY_ADDED and f.key is not None and f.actual is not None:
        return f"{key}cluster has {value_with_unit(f.key, f.actual)}, not declared"
    if f.kind is DriftKind.KEY_REMOVED and f.key is not None and f.desired is not None:
        return f"{key}desired {value_with_unit(f.key, f.desired)}, not on the cluster"
    if f.kind is DriftKind.REVERTED_BY_CONTROLLER:
        return key + md.text(_reverted(f), cell=True)
    if f.kind is DriftKind.ENTITY_UNDECLARED and f.values:
        return f"{_LABELS[f.kind]}: the cluster has {md.text(_values(f), cell=True)}"
    return key + _LABELS[f.kind]


def render_fleet_markdown(
    reports: list[DriftReport], *, budget: int = BUDGET, full_report_at: str = FULL_REPORT_AT
) -> str:
    """render_fleet_markdown: many clusters in one comment. A table of the clusters (the
    drifted ones first, with their counts per kind), then each drifted cluster's report,
    sharing what is left of ``budget``; a visible line counts what did not fit."""
    drifted = [r for r in reports if r.drifted]
    head = [
        f"### kquota fleet drift: {len(drifted)} of {len(reports)} clusters drifted",
        "",
    ]
    kinds = list(DriftKind)
    head.append("| cluster | state | " + " | ".join(_LABELS[k] for k in kinds) + " | unmanaged |")
    head.append("|---|---|" + "---:|" * (len(kinds) + 1))
    left = budget - size("\n".join(head)) - 400
    rows, cut = [], 0
    for r in sorted(reports, key=lambda r: (not r.drifted, r.cluster or "")):
        counts = r.counts()
        row = (
            f"| {md.code(r.cluster or '', cell=True)} | {'drift' if r.drifted else 'in sync'} | "
            + " | ".join(str(counts[k.value]) for k in kinds)
            + f" | {r.unmanaged} |"
        )
        if size(row) + 1 > left:
            cut += 1
            continue
        left -= size(row) + 1
        rows.append(row)
    if cut:
        rows.append(f"| … {cut} more clusters not shown | |" + " |" * (len(kinds) + 1))
    body: list[str] = []
    shown = 0
    for i, r in enumerate(drifted):
        share = left // (len(drifted) - i)
        if share < 600:
            break
        part = render_markdown(r, budget=share, full_report_at=full_report_at)
        left -= size(part) + 1
        body.append(part)
        shown += 1
    note = []
    if cut or shown < len(drifted) or any("Not all shown here" in b for b in body):
        note = [
            "> [!IMPORTANT]",
            f"> **Not all shown here:** {cut} clusters left out of the table, "
            f"{len(drifted) - shown} drifted clusters' reports left out. The full reports are in "
            f"{full_report_at}.",
            "",
        ]
    return "\n".join([*head, *rows, "", *note, *body]).rstrip("\n") + "\n"


def render_json(report: DriftReport) -> str:
    return json.dumps(report.to_data(), indent=2, sort_keys=False) + "\n"


def _label_value(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def render_prometheus(reports: list[DriftReport], timestamp: float) -> str:
    """render_prometheus writes the node_exporter textfile-collector format for cron jobs."""
    out = [
        "# HELP kquota_drift_in_sync 1 when the cluster matches its desired state.",
        "# TYPE kquota_drift_in_sync gauge",
    ]
    for r in reports:
        out.append(
            f'kquota_drift_in_sync{{cluster="{_label_value(r.cluster or "")}"}} '
            f"{0 if r.drifted else 1}"
        )
    out += [
        "# HELP kquota_drift_findings Drift findings by kind.",
        "# TYPE kquota_drift_findings gauge",
    ]
    for r in reports:
        c = _label_value(r.cluster or "")
        for kind, n in r.counts().items():
            out.append(f'kquota_drift_findings{{cluster="{c}",kind="{kind}"}} {n}')
    out += [
        "# HELP kquota_drift_unmanaged_entities In-scope entities no file declares (prune off).",
        "# TYPE kquota_drift_unmanaged_entities gauge",
    ]
    for r in reports:
        out.append(
            f'kquota_drift_unmanaged_entities{{cluster="{_label_value(r.cluster or "")}"}} '
            f"{r.unmanaged}"
        )
    out += [
        "# HELP kquota_drift_last_check_timestamp_seconds When the drift check ran.",
        "# TYPE kquota_drift_last_check_timestamp_seconds gauge",
        f"kquota_drift_last_check_timestamp_seconds {timestamp:.3f}",
    ]
    return "\n".join(out) + "\n"


def render_reports(reports: list[DriftReport], fmt: str, timestamp: float) -> str:
    """render_reports joins one or many clusters' reports in one format (``text``,
    ``markdown``, ``json``, ``prometheus``): one cluster's JSON or markdown is its report
    alone; many clusters' markdown is :func:`render_fleet_markdown`."""
    if fmt == "prometheus":
        return render_prometheus(reports, timestamp)
    if fmt == "json":
        if len(reports) == 1:
            return render_json(reports[0])
        data = {"format_version": 1, "clusters": [r.to_data() for r in reports]}
        return json.dumps(data, indent=2) + "\n"
    if fmt == "markdown":
        # One comment for all: the clusters share one budget.
        return render_markdown(reports[0]) if len(reports) == 1 else render_fleet_markdown(reports)
    return "".join(render_text(r) for r in reports)
