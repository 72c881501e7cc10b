"""The Grafana dashboards kquota ships (examples/grafana), and what their queries name: read
by tests/examples/test_grafana.py (against what kquota and its exporter rules write) and by
the live usage tests (every query run by a real Prometheus)."""

from __future__ import annotations

import json
from typing import Any

from repo_root import ROOT

GRAFANA = ROOT / "examples" / "grafana"


def dashboard(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((GRAFANA / name).read_text(encoding="utf-8"))
    return loaded


def expressions(node: Any) -> list[str]:
    """expressions are every PromQL text of a dashboard: panel targets' ``expr``, and the
    variables' ``definition`` and ``query.query``."""
    if isinstance(node, dict):
        out = [v for k, v in node.items() if k in ("expr", "definition") and isinstance(v, str)]
        q = node.get("query")
        if isinstance(q, dict) and isinstance(q.get("query"), str):
            out.append(q["query"])
        return out + [e for v in node.values() for e in expressions(v)]
    if isinstance(node, list):
        return [e for v in node for e in expressions(v)]
    return []
