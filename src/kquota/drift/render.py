"""Drift report renderers: text, markdown, JSON and a Prometheus textfile. Format only."""

from __future__ import annotations

import json

from kquota.drift.report import DriftKind, DriftReport, Finding
from kquota.render.format import display_entity, value_with_unit

_LABELS = {
    DriftKind.VALUE_CHANGED: "value changed",
    DriftKind.KEY_ADDED: "key added out of band",
    DriftKind.KEY_REMOVED: "key missing",
    DriftKind.ENTITY_MISSING: "declared entity missing",
    DriftKind.ENTITY_UNDECLARED: "entity not declared (in scope, prune on)",
}
_MD_ROWS_SHOWN = 200


def _detail(f: Finding) -> str:
    if f.kind is DriftKind.VALUE_CHANGED and f.key is not None:
        assert f.desired is not None and f.actual is not None
        return (
            f"{f.key}: cluster {value_with_unit(f.key, f.actual)}, "
            f"desired {value_with_unit(f.key, f.desired)}"
        )
    if f.kind is DriftKind.KEY_ADDED and f.key is not None and f.actual is not None:
        return f"{f.key}: cluster has {value_with_unit(f.key, f.actual)}, not declared"
    if f.kind is DriftKind.KEY_REMOVED and f.key is not None and f.desired is not None:
        return f"{f.key}: desired {value_with_unit(f.key, f.desired)}, not on the cluster"
    return _LABELS[f.kind]


def _headline(report: DriftReport) -> str:
    name = report.cluster or "cluster"
    if not report.drifted:
        return f"{name}: in sync"
    return f"{name}: drift in {report.drifted_entities} entities ({len(report.findings)} findings)"


def render_text(report: DriftReport) -> str:
    lines = [_headline(report)]
    current = None
    for f in report.findings:
        if f.entity != current:
            current = f.entity
            lines.append(f"  {display_entity(f.entity)}")
        lines.append(f"    {f.kind.value}: {_detail(f)}")
    if report.unmanaged:
        lines.append(
            f"  {report.unmanaged} in-scope entities are not declared (prune is off: "
            "left alone, not drift)"
        )
    counts = ", ".join(f"{k} {v}" for k, v in report.counts().items() if v)
    if counts:
        lines.append(f"  totals: {counts}")
    return "\n".join(lines) + "\n"


def render_markdown(report: DriftReport) -> str:
    lines = [f"### kquota drift: {_headline(report)}", ""]
    if report.drifted:
        lines += ["| entity | finding | detail |", "|---|---|---|"]
        for f in report.findings[:_MD_ROWS_SHOWN]:
            entity = display_entity(f.entity).replace("|", "\\|")
            detail = _detail(f).replace("|", "\\|")
            lines.append(f"| `{entity}` | {f.kind.value} | {detail} |")
        if len(report.findings) > _MD_ROWS_SHOWN:
            lines.append(f"\n… and {len(report.findings) - _MD_ROWS_SHOWN} more findings")
    if report.unmanaged:
        lines += ["", f"{report.unmanaged} in-scope entities are not declared (prune off)."]
    return "\n".join(lines) + "\n"


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
    ``markdown``, ``json``, ``prometheus``): one cluster's JSON is its report alone."""
    if fmt == "prometheus":
        return render_prometheus(reports, timestamp)
    if fmt == "json":
        if len(reports) == 1:
            return render_json(reports[0])
        data = {"format_version": 1, "clusters": [r.to_data() for r in reports]}
        return json.dumps(data, indent=2) + "\n"
    render = render_markdown if fmt == "markdown" else render_text
    return "".join(render(r) for r in reports)
