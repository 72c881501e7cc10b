"""``kquota fleet`` from the command line (local engine; the Spark parity is in tests/fleet)."""

from __future__ import annotations

import json
import multiprocessing
import re
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


def _resolve(fleet: list[str], tmp_path: Path, pairs: str) -> tuple[Path, Path, list[str]]:
    """_resolve: a principals file of ``pairs``, the output folder, and the command line."""
    principals = tmp_path / "p.txt"
    principals.write_text(pairs)
    out = tmp_path / "r"
    return (
        principals,
        out,
        ["fleet", "resolve", *fleet, "--out", str(out), "--principals", str(principals)],
    )


def test_fleet_resolve_and_a_bad_principals_file(
    fleet: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pairs = (
        "# as for plan --principals\nuser=team-6,client-id=x\nuser=nobody,client-id=team-app-1\n"
    )
    principals, out_dir, argv = _resolve(fleet, tmp_path, pairs)
    code, out, err = run_kquota(argv, capsys)
    assert code == 0, err
    lines = (out_dir / "cluster-000.effective.jsonl").read_text().splitlines()
    assert [json.loads(line)["entity"]["user"] for line in lines] == ["team-6", "nobody"]
    principals.write_text("user=ok\nuser;client\nip=203.0.113.7\n")
    code, _, err = run_kquota(argv, capsys)
    assert code == 1 and f"{principals}:2:1: expected type=name pairs" in err, err
    assert f"{principals}:3:1: ip: fleet resolve resolves user and client-id quotas" in err


def test_fleet_engine_options_are_checked(
    fleet: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = ["--out", str(tmp_path / "o")]
    code, _, err = run_kquota(["fleet", "plan", *fleet, *out, "--conf", "spark.x"], capsys)
    assert code == 1 and "'spark.x': expected KEY=VALUE" in err
    code, _, err = run_kquota(["fleet", "plan", *fleet, *out, "--processes", "0"], capsys)
    assert code == 1 and "'0': expected a number from 1 to 1024, or auto" in err
    code, out_text, err = run_kquota(["fleet", "plan", *fleet, *out, "--processes", "2"], capsys)
    assert code == 0, err
    assert "2 clusters, 2 with changes" in out_text


@pytest.fixture(scope="module")
def big_fleet(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """big_fleet takes seconds to plan on any machine: more than a 1 s deadline allows."""
    root = tmp_path_factory.mktemp("big-fleet")
    write_fleet(root / "desired", root / "snaps", clusters=4, entities=25_000)
    return ["--desired", str(root / "desired"), "--snapshots", str(root / "snaps")]


_RAN_OUT = "error: the --timeout 1s deadline ran out: it was waiting for the local engine to "


@pytest.mark.parametrize("processes", ["1", "2"])
@pytest.mark.parametrize("what", ["plan", "drift"])
def test_fleet_stops_at_its_deadline_and_writes_nothing(
    big_fleet: list[str],
    what: str,
    processes: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = tmp_path / "o"
    argv = ["fleet", what, *big_fleet, "--out", str(out), "--processes", processes]
    code, stdout, err = run_kquota([*argv, "--timeout", "1s"], capsys)
    assert (code, stdout) == (1, ""), err
    in_processes = "" if processes == "1" else " in 2 processes"
    assert re.fullmatch(
        re.escape(_RAN_OUT) + r"plan cluster cluster-00\d \(\d of 4 planned\)"
        + re.escape(in_processes) + r" for \d+\.\d s\n",
        err,
    ), err  # fmt: skip
    assert not out.exists()
    # The worker processes were terminated, not left to finish their clusters.
    assert multiprocessing.active_children() == []


def test_fleet_resolve_stops_at_its_deadline_and_writes_nothing(
    big_fleet: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, out, argv = _resolve(big_fleet, tmp_path, "user=team-6,client-id=x\n")
    code, stdout, err = run_kquota([*argv, "--source", "desired", "--timeout", "1s"], capsys)
    assert (code, stdout) == (1, ""), err
    assert err.startswith(_RAN_OUT + "resolve on cluster cluster-00"), err
    assert not out.exists()


def test_fleet_timeout_is_checked_and_documented(
    fleet: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = ["--out", str(tmp_path / "o")]
    code, _, err = run_kquota(["fleet", "plan", *fleet, *out, "--timeout", "soon"], capsys)
    assert code == 1 and "--timeout 'soon': not a duration; use 90s, 5m, 1h" in err
    for what in ("plan", "drift", "resolve"):
        code, text, _ = run_kquota(["fleet", what, "--help"], capsys)
        assert code == 0 and "--timeout DURATION" in text and "[default: 1h]" in text


def test_fleet_plan_impact_and_protect(
    fleet: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "p.txt").write_text("user=team-1,client-id=app-1\nuser=someone-new\n")
    argv = [
        "fleet",
        "plan",
        *fleet,
        "--out",
        str(tmp_path / "o"),
        "--principals",
        str(tmp_path / "p.txt"),
    ]
    code, _, err = run_kquota(argv, capsys)
    assert code == 0, err
    plan = json.loads((tmp_path / "o" / "cluster-000.plan.json").read_text())
    assert plan["impact_sources"] == [
        {"source": f"file:{tmp_path / 'p.txt'}", "found": 2, "reason": None}
    ]
    assert plan["impact_principals"] == 2 and plan["protected_violations"] == []
    code, _, err = run_kquota([*argv, "--protect", "user=*"], capsys)
    assert code == 0, err  # nothing these principals get is tightened
    (tmp_path / "bad.txt").write_text("user=\n")
    code, _, err = run_kquota([*argv[:-1], str(tmp_path / "bad.txt")], capsys)
    assert code == 1 and "bad.txt:1:1: user: empty name" in err
