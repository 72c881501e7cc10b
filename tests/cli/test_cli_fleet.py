"""``kquota fleet`` from the command line (local engine; the Spark parity is in tests/fleet)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_runner import run_kquota
from kquota.fleet.synth import write_fleet


@pytest.fixture()
def fleet(tmp_path: Path) -> list[str]:
    write_fleet(tmp_path / "desired", tmp_path / "snaps", clusters=2, entities=60)
    return ["--desired", str(tmp_path / "desired"), "--snapshots", str(tmp_path / "snaps")]


def test_fleet_plan_writes_a_plan_per_cluster(
    fleet: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_kquota(["fleet", "plan", *fleet, "--out", str(tmp_path / "o")], capsys)
    assert code == 0, err
    assert "2 clusters, 2 with changes" in out
    plan = json.loads((tmp_path / "o" / "cluster-001.plan.json").read_text())
    assert plan["format_version"] == 1 and plan["cluster"] == "cluster-001"
    assert plan["snapshot_fingerprint"].startswith("sha256:")
    summary = json.loads((tmp_path / "o" / "fleet-plan.json").read_text())
    assert [c["cluster"] for c in summary["clusters"]] == ["cluster-000", "cluster-001"]


def test_fleet_drift_exits_2_on_drift(
    fleet: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run_kquota(["fleet", "drift", *fleet, "--out", str(tmp_path / "d")], capsys)
    assert code == 2 and "2 of 2 clusters drifted" in out
    assert json.loads((tmp_path / "d" / "cluster-000.drift.json").read_text())["in_sync"] is False


def test_fleet_resolve_and_a_bad_principals_file(
    fleet: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    principals = tmp_path / "p.csv"
    principals.write_text("user,client-id\nteam-6,x\nnobody,team-app-1\n")
    out_dir = tmp_path / "r"
    code, out, err = run_kquota(
        ["fleet", "resolve", *fleet, "--out", str(out_dir), "--principals", str(principals)], capsys
    )
    assert code == 0, err
    lines = (out_dir / "cluster-000.effective.jsonl").read_text().splitlines()
    assert [json.loads(line)["entity"]["user"] for line in lines] == ["team-6", "nobody"]
    principals.write_text("user;client\n")
    code, _, err = run_kquota(
        ["fleet", "resolve", *fleet, "--out", str(out_dir), "--principals", str(principals)], capsys
    )
    assert code == 1 and "p.csv:1: expected the header 'user,client-id'" in err
