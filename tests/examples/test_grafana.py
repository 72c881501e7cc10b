"""The Grafana dashboards in examples/grafana read only what kquota writes.

Each PromQL expression of the drift dashboard is checked against the metric names and labels
of a real ``kquota drift --format prometheus`` textfile (render_prometheus on a report with
every kind of finding); the usage dashboard's against the names and labels the JMX exporter
rules kquota ships publish (plus the scrape's own ``instance``, ``job`` and the ``cluster``
label docs/usage.md puts on each target). So a renamed metric fails here, not on a blank
panel. The live usage tests run every usage query on a real Prometheus scraping a broker.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import yaml

from grafana_dashboards import GRAFANA, expressions
from kquota.drift.report import DriftKind, DriftReport, Finding
from kquota.model import Entity
from kquota.render.drift import render_prometheus
from repo_root import ROOT

DASHBOARDS = sorted(GRAFANA.glob("*.json"))
RULES = ROOT / "src" / "kquota" / "devbroker" / "jmx-exporter.yaml"
SCRAPE_LABELS = frozenset(["instance", "job", "cluster"])
"""Labels a Prometheus scrape adds to every series: its own, and docs/usage.md's cluster."""

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
_RANGES = re.compile(r"\[[^\]]*\]")
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


def _exported() -> tuple[set[str], set[str]]:
    """The metric names and label names the JMX exporter rules publish, with the scrape's."""
    rules = yaml.safe_load(RULES.read_text(encoding="utf-8"))["rules"]
    metrics = {r["name"] for r in rules}
    labels = {k for r in rules for k in r.get("labels", {})} | SCRAPE_LABELS
    return metrics, labels


def _names(path: Path, metrics: set[str], labels: set[str]) -> set[str]:
    """_names checks every expression of the dashboard at ``path`` names only ``metrics``
    and ``labels``, and returns the metrics it uses."""
    dashboard = json.loads(path.read_text(encoding="utf-8"))
    exprs = expressions(dashboard)
    assert len(exprs) >= len(dashboard["panels"]), path.name
    used: set[str] = set()
    for expr in exprs:
        bare = _STRING.sub("", expr)
        for m in _MATCHERS.finditer(bare):
            assert set(re.findall(r"([A-Za-z_]+)\s*[=!]~?", m[0])) <= labels, expr
        for m in _GROUPING.finditer(bare):
            assert {x.strip() for x in m[1].split(",")} <= labels, expr
        bare = _RANGES.sub("", _GROUPING.sub("", _MATCHERS.sub("", bare)))
        bare = re.sub(
            r"label_values\(\s*([A-Za-z_:][A-Za-z0-9_:]*)\s*,\s*(\w+)\s*\)",
            lambda m: m[1] if m[2] in labels else "UNKNOWN_LABEL",
            bare,
        )
        names = {n for n in _NAME.findall(bare) if n not in _PROMQL}
        assert names <= metrics, f"{path.name}: {expr!r} names {names - metrics}"
        used |= names
    return used


def test_the_dashboards_are_shipped() -> None:
    assert [p.name for p in DASHBOARDS] == ["kquota-drift.json", "kquota-usage.json"]


def test_every_drift_expression_names_only_what_kquota_writes() -> None:
    metrics, labels = _written()
    assert "kquota_drift_findings" in metrics and "kind" in labels
    used = _names(GRAFANA / "kquota-drift.json", metrics, labels)
    assert used == metrics, f"no panel for {metrics - used}"  # every metric kquota writes


def test_every_usage_expression_names_only_what_the_exporter_rules_publish() -> None:
    metrics, labels = _exported()
    assert metrics == {
        "kafka_server_quota_byte_rate",
        "kafka_server_quota_request_time",
        "kafka_server_quota_throttle_time",
    }
    assert {"type", "user", "client_id"} <= labels
    used = _names(GRAFANA / "kquota-usage.json", metrics, labels)
    assert used == metrics, f"no panel for {metrics - used}"  # every quota sensor


def test_a_misnamed_metric_or_label_is_caught(tmp_path: Path) -> None:
    """The check itself: a dashboard naming a metric or a label the rules do not publish."""
    metrics, labels = _exported()
    for expr in ('max by (principal) (kafka_server_quota_byte_rate{type="Produce"})',
                 'kafka_server_quota_byte_rate{broker="1"}',
                 "kafka_server_quota_bytes_rate"):  # fmt: skip
        bad = {"panels": [{"targets": [{"expr": expr}]}]}
        path = tmp_path / "bad.json"
        path.write_text(json.dumps(bad))
        try:
            _names(path, metrics, labels)
        except AssertionError:
            continue
        raise AssertionError(f"{expr!r} passed the check")


def test_panels_are_laid_out_and_use_the_datasource_variable() -> None:
    for path in DASHBOARDS:
        dashboard = json.loads(path.read_text(encoding="utf-8"))
        ids = [p["id"] for p in dashboard["panels"]]
        assert len(ids) == len(set(ids))
        for p in dashboard["panels"]:
            assert p["title"] and 0 <= p["gridPos"]["x"] + p["gridPos"]["w"] <= 24
            for t in p["targets"]:
                assert t["datasource"]["uid"] == "${datasource}"
