"""The Grafana dashboard in examples/grafana reads only what kquota writes.

Each PromQL expression is checked against the metric names and labels of a real
``kquota drift --format prometheus`` textfile (render_prometheus on a report with every kind
of finding), so a renamed metric fails here, not on a blank panel.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from kquota.drift.render import render_prometheus
from kquota.drift.report import DriftKind, DriftReport, Finding
from kquota.model import Entity

DASHBOARDS = sorted((Path(__file__).parents[2] / "examples" / "grafana").glob("*.json"))

# PromQL's functions, aggregations and keywords that the dashboards use or may use.
_PROMQL = frozenset(
    [
        "sum",
        "min",
        "max",
        "avg",
        "count",
        "by",
        "without",
        "on",
        "ignoring",
        "group_left",
        "group_right",
        "and",
        "or",
        "unless",
        "time",
        "rate",
        "irate",
        "increase",
        "delta",
        "changes",
        "resets",
        "abs",
        "clamp_min",
        "clamp_max",
        "label_values",
        "topk",
        "bottomk",
        "sort",
        "sort_desc",
        "vector",
        "scalar",
        "absent",
        "absent_over_time",
        "max_over_time",
        "min_over_time",
        "avg_over_time",
        "last_over_time",
        "offset",
        "bool",
    ]
)
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_MATCHERS = re.compile(r"\{[^}]*\}")
_GROUPING = re.compile(r"\b(?:by|without|on|ignoring)\s*\(([^)]*)\)")
_NAME = re.compile(r"[A-Za-z_:][A-Za-z0-9_:]*")


def _written() -> tuple[set[str], set[str]]:
    """The metric names and label names a drift textfile holds."""
    e = Entity.of({"user": "a"})
    findings = tuple(Finding(e, kind) for kind in DriftKind)
    text = render_prometheus([DriftReport("prod", findings, unmanaged=2)], 1.0)
    metrics, labels = set(), set()
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        m = re.match(r"([a-z_:]+)(?:\{(.*)\})? ", line)
        assert m is not None, line
        metrics.add(m[1])
        labels.update(re.findall(r"([a-z_]+)=", m[2] or ""))
    return metrics, labels


def _exprs(node: Any) -> list[str]:
    if isinstance(node, dict):
        out = [v for k, v in node.items() if k in ("expr", "definition") and isinstance(v, str)]
        q = node.get("query")
        if isinstance(q, dict) and isinstance(q.get("query"), str):
            out.append(q["query"])
        return out + [e for v in node.values() for e in _exprs(v)]
    if isinstance(node, list):
        return [e for v in node for e in _exprs(v)]
    return []


def test_a_dashboard_is_shipped() -> None:
    assert [p.name for p in DASHBOARDS] == ["kquota-drift.json"]


def test_every_expression_names_only_what_kquota_writes() -> None:
    metrics, labels = _written()
    assert "kquota_drift_findings" in metrics and "kind" in labels
    for path in DASHBOARDS:
        dashboard = json.loads(path.read_text(encoding="utf-8"))
        exprs = _exprs(dashboard)
        assert len(exprs) >= len(dashboard["panels"]), path.name
        used: set[str] = set()
        for expr in exprs:
            bare = _STRING.sub("", expr)
            for m in _MATCHERS.finditer(bare):
                assert set(re.findall(r"([A-Za-z_]+)\s*[=!]~?", m[0])) <= labels, expr
            for m in _GROUPING.finditer(bare):
                assert {x.strip() for x in m[1].split(",")} <= labels, expr
            bare = _GROUPING.sub("", _MATCHERS.sub("", bare))
            bare = re.sub(
                r"label_values\(\s*([A-Za-z_:][A-Za-z0-9_:]*)\s*,\s*(\w+)\s*\)",
                lambda m: m[1] if m[2] in labels else "UNKNOWN_LABEL",
                bare,
            )
            names = {n for n in _NAME.findall(bare) if n not in _PROMQL}
            assert names <= metrics, f"{path.name}: {expr!r} names {names - metrics}"
            used |= names
        # Every metric kquota writes has a panel.
        assert used == metrics, f"{path.name}: no panel for {metrics - used}"


def test_panels_are_laid_out_and_use_the_datasource_variable() -> None:
    for path in DASHBOARDS:
        dashboard = json.loads(path.read_text(encoding="utf-8"))
        ids = [p["id"] for p in dashboard["panels"]]
        assert len(ids) == len(set(ids))
        for p in dashboard["panels"]:
            assert p["title"] and 0 <= p["gridPos"]["x"] + p["gridPos"]["w"] <= 24
            for t in p["targets"]:
                assert t["datasource"]["uid"] == "${datasource}"
