"""Golden renderings: each case's plan as JSON, text and Markdown, compared byte for byte.

Inputs per case in ``golden/<case>/``: ``desired.json`` and ``snapshot.json`` (the snapshot
format; desired state has the same shape), ``case.json`` (cluster, policy, principals; with
``protect`` in the policy the principals are the plan's impact, and its verdict is rendered).
Outputs: ``plan.json``, ``plan.txt``, ``plan.md``. Regenerate after an intended change with
``KQUOTA_REGEN_GOLDEN=1 pytest tests/render`` and review the diff; without it, any drift fails.
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

import pytest

from kquota.plan.impact import plan_impact
from kquota.plan.planner import plan
from kquota.plan.resolver import Principal, resolution_changes
from kquota.plan.simulate import simulate_plan
from kquota.policy import Policy
from kquota.render import json as render_json
from kquota.render import markdown, text
from kquota.snapshot.files import read_snapshot

GOLDEN = Path(__file__).parent / "golden"
CASES = sorted(p.name for p in GOLDEN.iterdir() if (p / "case.json").is_file())
REGEN = os.environ.get("KQUOTA_REGEN_GOLDEN") == "1"


def render_case(case: Path) -> dict[str, str]:
    meta = json.loads((case / "case.json").read_text())
    desired = read_snapshot(case / "desired.json")
    snapshot = read_snapshot(case / "snapshot.json")
    policy = Policy.build(**meta["policy"])
    p = plan(desired, snapshot, policy, cluster=meta["cluster"])
    principals = [Principal(**x) for x in meta.get("principals", [])]
    changes = resolution_changes(snapshot, simulate_plan(snapshot, p), principals)
    if policy.protect:
        p = dataclasses.replace(p, impact=plan_impact(snapshot, p, principals, policy))
        changes = []
    return {
        "plan.json": render_json.render_plan(p),
        "plan.txt": text.render_plan(p, changes),
        "plan.md": markdown.render_plan(p, changes),
    }


def test_there_are_cases() -> None:
    assert {"empty", "creates_only", "mixed", "large_folded", "defaults_ip"} <= set(CASES)


@pytest.mark.parametrize("name", CASES)
def test_golden(name: str) -> None:
    case = GOLDEN / name
    for filename, rendered in render_case(case).items():
        path = case / filename
        if REGEN:
            path.write_text(rendered, encoding="utf-8")
        assert path.is_file(), f"{path} missing: run with KQUOTA_REGEN_GOLDEN=1"
        assert rendered == path.read_text(encoding="utf-8"), f"{path} drifted"
