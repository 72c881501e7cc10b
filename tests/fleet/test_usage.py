"""Fleet usage on the local engine: SAMPLES/<cluster>/ profiled cluster by cluster, each the
profile ``kquota usage`` gives that folder, and errors that name the cluster, file and line."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest

from cli_runner import run_kquota
from kquota.errors import KquotaError
from kquota.fleet.synth_usage import write_usage_fleet
from kquota.fleet.usage import discover_usage, profile_fleet_local
from kquota.usage.profile import profile
from kquota.usage.samples import SampleFiles

WINDOW_MS = 30 * 60_000


@pytest.fixture()
def fleet(tmp_path: Path) -> Path:
    write_usage_fleet(tmp_path / "samples", tmp_path / "snaps", clusters=2, minutes=45)
    return tmp_path


def test_each_cluster_is_profiled_as_its_own_folder_would_be(fleet: Path) -> None:
    clusters = discover_usage(str(fleet / "samples"), str(fleet / "snaps"))
    assert [c.name for c in clusters] == ["cluster-00", "cluster-01"]
    found = profile_fleet_local(clusters, since_ms=WINDOW_MS, extra=(Decimal("99.9"),))
    for c in clusters:
        alone = profile(
            SampleFiles((Path(c.desired_dir),), c.name),
            since_ms=WINDOW_MS,
            extra=(Decimal("99.9"),),
        )
        assert found[c.name] == alone
        assert found[c.name].cluster == c.name
    # The synthetic samples hold what the engines must agree on: duplicates (read counts
    # them once), throttled principals, tags of every level.
    p = found["cluster-00"]
    assert p.read < sum(1 for _ in SampleFiles((fleet / "samples" / "cluster-00",)))
    assert any(s.above_zero for s in p.series if s.metric.endswith("throttle-time"))
    assert {(s.user is None, s.client_id is None) for s in p.series} == {
        (False, True),
        (False, False),
        (True, False),
    }


def test_a_sample_of_another_cluster_is_refused_with_its_cluster_file_and_line(
    fleet: Path,
) -> None:
    bad = fleet / "samples" / "cluster-01" / "broker-1.jsonl"
    lines = bad.read_text().splitlines()
    lines[2] = lines[2].replace('"cluster-01"', '"cluster-00"')
    bad.write_text("\n".join(lines) + "\n")
    clusters = discover_usage(str(fleet / "samples"), str(fleet / "snaps"))
    with pytest.raises(KquotaError) as e:
        profile_fleet_local(clusters, since_ms=WINDOW_MS)
    assert str(e.value) == (
        f"cluster cluster-01: {bad}:3: a sample of cluster 'cluster-00', not of 'cluster-01' "
        "(the cluster read): one cluster's samples at a time"
    )


def test_the_layout_pairs_sample_folders_with_snapshots(fleet: Path) -> None:
    (fleet / "samples" / "lonely").mkdir()
    (fleet / "snaps" / "ghost.json").write_text("{}")
    with pytest.raises(KquotaError) as e:
        discover_usage(str(fleet / "samples"), str(fleet / "snaps"))
    assert str(e.value) == (
        "the fleet layout is inconsistent:\n"
        f"  cluster 'lonely': no snapshot {fleet / 'snaps'}/lonely.json|.jsonl|.parquet\n"
        f"  snapshot 'ghost' has no samples folder {fleet / 'samples'}/ghost/"
    )


def test_fleet_usage_writes_what_usage_prints_for_each_cluster(
    fleet: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(fleet)
    args = ["--samples", "samples", "--snapshots", "snaps", "--since", "30m"]
    code, out, err = run_kquota(["fleet", "usage", *args, "--out", "out"], capsys)
    assert code == 0, err
    assert out.startswith("2 clusters, ") and "reports in out" in out
    assert sorted(p.name for p in (fleet / "out").iterdir()) == [
        "cluster-00.usage.json",
        "cluster-00.usage.md",
        "cluster-01.usage.json",
        "cluster-01.usage.md",
        "fleet-usage.json",
    ]
    for name in ("cluster-00", "cluster-01"):
        one = ["usage", "--snapshot", f"snaps/{name}.json", "--samples", f"samples/{name}"]
        code, printed, err = run_kquota([*one, "--since", "30m", "--format", "json"], capsys)
        assert code == 0, err
        assert (fleet / "out" / f"{name}.usage.json").read_text() == printed
        code, printed, err = run_kquota([*one, "--since", "30m", "--format", "markdown"], capsys)
        assert (fleet / "out" / f"{name}.usage.md").read_text() == printed
    summary = json.loads((fleet / "out" / "fleet-usage.json").read_text())
    assert summary["totals"]["clusters"] == 2 and summary["totals"]["censored"] > 0


def test_fleet_recommend_writes_an_overlay_per_cluster(
    fleet: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(fleet)
    args = ["--samples", "samples", "--snapshots", "snaps", "--since", "30m", "--min-window", "20m"]
    code, out, err = run_kquota(["fleet", "recommend", *args, "--out", "rec"], capsys)
    assert code == 0, err
    for name in ("cluster-00", "cluster-01"):
        one = ["recommend", "--snapshot", f"snaps/{name}.json", "--samples", f"samples/{name}"]
        code, printed, err = run_kquota(
            [*one, "--since", "30m", "--min-window", "20m", "--format", "json"], capsys
        )
        assert code == 0, err
        data = json.loads(printed)
        assert (fleet / "rec" / f"{name}.recommend.yaml").read_text() == data.pop("patch")
        assert json.loads((fleet / "rec" / f"{name}.recommend.json").read_text()) == data
        assert data["proposals"]
    summary = json.loads((fleet / "rec" / "fleet-recommend.json").read_text())
    assert summary["totals"]["proposals"] > 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--since", "soon"], "--since 'soon': not a window"),
        (["--percentile", "101"], "--percentile '101': allowed: a percentile above 0"),
        (["--out", "samples"], "--out samples is the --samples folder"),
    ],
)
def test_bad_flags_are_messages(
    fleet: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    args: list[str],
    message: str,
) -> None:
    monkeypatch.chdir(fleet)
    base = ["fleet", "recommend", "--samples", "samples", "--snapshots", "snaps"]
    out = [] if "--out" in args else ["--out", "rec"]
    code, _, err = run_kquota([*base, *out, *args], capsys)
    assert code != 0 and message in err and "Traceback" not in err
    assert not (fleet / "rec").exists()


def test_a_bad_sample_file_is_a_message_and_nothing_is_written(
    fleet: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(fleet)
    (fleet / "samples" / "cluster-00" / "broker-1.jsonl").write_text('{"cluster": "x"}\n')
    args = ["--samples", "samples", "--snapshots", "snaps", "--out", "out"]
    code, out, err = run_kquota(["fleet", "usage", *args], capsys)
    assert code == 1 and out == ""
    assert "cluster cluster-00: samples/cluster-00/broker-1.jsonl:1: missing broker" in err
    assert "Traceback" not in err
    assert not (fleet / "out").exists()
