"""scripts/compat-matrix without brokers: its cells, its refusals, and the document it
writes from a run's results (here a made-up run of two cells)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from repo_root import ROOT

SCRIPT = ROOT / "scripts" / "compat-matrix"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=60
    )


def test_list_names_every_cell_and_zookeeper_cells_add_their_tests() -> None:
    proc = _run("--list")
    assert proc.returncode == 0, proc.stderr
    cells = [line.split(":")[0] for line in proc.stdout.splitlines()]
    assert cells == [
        "4.3.1/kraft",
        "4.4.0/kraft",
        "3.9.2/kraft",
        "3.9.2/zookeeper",
        "3.6.2/zookeeper",
        "3.0.2/zookeeper",
    ]
    for line in proc.stdout.splitlines():
        assert "tests/compat" in line
        assert ("test_devbroker_zookeeper.py" in line) == ("zookeeper:" in line)


def test_an_unknown_cell_is_refused_with_the_allowed_ones() -> None:
    proc = _run("--cell", "2.8.2/zookeeper", "--list")
    assert proc.returncode == 2
    assert "'2.8.2/zookeeper' is not a cell of the matrix" in proc.stderr
    assert "allowed: 4.3.1/kraft, 4.4.0/kraft" in proc.stderr


def test_the_document_is_written_from_the_results(tmp_path: Path) -> None:
    results, docs = tmp_path / "results", tmp_path / "compatibility.md"
    results.mkdir()
    for version, mode, seconds, failed in [
        ("3.0.2", "zookeeper", 300.0, 1),
        ("4.4.0", "kraft", 120.0, 0),
    ]:
        name = f"{version}-{mode}"
        summary = {
            "version": version,
            "mode": mode,
            "exit_code": 1 if failed else 0,
            "seconds": seconds,
            "ran_at": "2026-11-25 14:00 UTC",
            "passed": 20,
            "failed": failed,
            "skipped": 0,
        }
        (results / f"{name}.summary.json").write_text(json.dumps(summary))
        consumer = {"kquota": [0, 1], "broker": None, "negotiated": None, "reason": "x"}
        if mode == "kraft":
            consumer = {"kquota": [0, 1], "broker": [0, 1], "negotiated": 1, "reason": None}
        report = {
            "apis": {
                "DescribeClientQuotas": {"kquota": [0, 1], "broker": [0, 1], "negotiated": 1},
                "ConsumerGroupDescribe": consumer,
            },
            "ip_entities": True,
            "apply_with_lease": True,
            "impact_sources": {
                "scram-users": {"found": 2, "reason": None},
                "acl-principals": {
                    "found": None,
                    "reason": "DescribeAcls: the cluster runs no authorizer (SECURITY_DISABLED)",
                },
            },
        }
        (results / f"{name}.report.json").write_text(json.dumps(report))
    proc = _run("--render-only", "--results", str(results), "--docs", str(docs))
    assert proc.returncode == 0, proc.stderr
    text = docs.read_text()
    assert "do not edit by hand" in text
    # Cells in the matrix's order (newest first), whatever order the files came in.
    assert text.index("| 4.4.0 | kraft | 20 passed |") < text.index("| 3.0.2 | zookeeper |")
    assert "| 3.0.2 | zookeeper | 20 passed, **1 failed** (exit 1) | 5.0 min |" in text
    assert "| ConsumerGroupDescribe | v1 (broker v0-1) | not supported |" in text
    assert "reports: DescribeAcls: the cluster runs no authorizer" in text
    assert "reads (2 found)" in text
