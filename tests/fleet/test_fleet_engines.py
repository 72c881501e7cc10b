"""One semantics, two engines: the Spark job and the local planner write identical files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kquota.engines.spark import SparkEngine
from kquota.fleet.layout import discover
from kquota.fleet.run import plan_fleet_local, write_drift, write_plans
from kquota.fleet.synth import write_fleet
from kquota.plan.policy import Policy


def _files(folder: Path) -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted(folder.iterdir())}


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("fleet")
    write_fleet(
        base / "desired",
        base / "snapshots",
        clusters=4,
        entities=300,
        formats=("json", "jsonl", "parquet"),
    )
    return base / "desired", base / "snapshots"


POLICIES = {
    "all-no-prune": Policy(),
    "all-prune": Policy(prune=True, allow_mass_removal=True),
    "scoped-prune": Policy.build(
        [
            {"user": "team-*"},
            {"user": "team-*", "client-id": "*"},
            {"ip": "*"},
            {"user": "<default>"},
        ],
        prune=True,
        max_removals=1000,
    ),
    "scoped-guarded": Policy.build([{"client-id": "*"}], prune=True, max_removals=0),
    # Nothing declared falls in this scope: the guard must read it as an empty desired state.
    "scope-nothing-declared": Policy.build([{"user": "legacy-*"}], prune=True, max_removals=1000),
}


@pytest.mark.parametrize("name", sorted(POLICIES))
def test_spark_and_local_plans_are_identical(
    fleet: tuple[Path, Path], spark_engine: SparkEngine, tmp_path: Path, name: str
) -> None:
    policy = POLICIES[name]
    clusters = discover(*fleet)
    local = plan_fleet_local(clusters, policy)
    spark = spark_engine.plan_fleet(clusters, policy)
    write_plans(local, tmp_path / "local")
    write_plans(spark, tmp_path / "spark")
    local_files, spark_files = _files(tmp_path / "local"), _files(tmp_path / "spark")
    assert local_files.keys() == spark_files.keys()
    for fname in local_files:
        assert spark_files[fname] == local_files[fname], fname
    # The inputs really exercise the rules: changes of every kind, and the policy matters.
    totals = json.loads(local_files["fleet-plan.json"])["totals"]
    assert totals["alterations"] > 0
    summaries = [
        json.loads(t)["summary"] for f, t in local_files.items() if f.endswith(".plan.json")
    ]
    if name != "scope-nothing-declared":
        assert all(s["create"] and s["update"] for s in summaries)
    else:
        assert all("desired state is empty" in s["guard_violation"] for s in summaries)
    assert sum(s["remove_ops"] for s in summaries) > 0
    if policy.scope is not None:
        assert all(sum(s["ignored"].values()) > 0 for s in summaries)
    if policy.max_removals == 0:
        assert all(s["guard_violation"] for s in summaries if s["remove_ops"])


def test_spark_and_local_drift_reports_are_identical(
    fleet: tuple[Path, Path], spark_engine: SparkEngine, tmp_path: Path
) -> None:
    clusters = discover(*fleet)
    policy = Policy(prune=False)
    write_drift(plan_fleet_local(clusters, policy), tmp_path / "local", prune=False)
    write_drift(spark_engine.plan_fleet(clusters, policy), tmp_path / "spark", prune=False)
    assert _files(tmp_path / "local") == _files(tmp_path / "spark")
    report = json.loads((tmp_path / "local" / "cluster-001.drift.json").read_text())
    assert not report["in_sync"]
    assert report["unmanaged_entities"] > 0
    assert report["counts"]["value_changed"] > 0


def test_bad_desired_state_in_one_cluster_is_reported_by_both_engines(
    fleet: tuple[Path, Path], spark_engine: SparkEngine, tmp_path: Path
) -> None:
    from kquota.errors import KquotaError

    desired, snapshots = fleet
    bad_root = tmp_path / "desired"
    bad_root.mkdir()
    (bad_root / "cluster-000").mkdir()
    (bad_root / "cluster-000" / "q.yaml").write_text(
        "apiVersion: kquota/v1\nkind: ClientQuotas\nquotas:\n"
        "  - {match: {user: a}, set: {producer_byte_rate: -1}}\n"
    )
    snaps = tmp_path / "snaps"
    snaps.mkdir()
    (snaps / "cluster-000.json").write_text('{"format_version": 1, "entries": []}')
    clusters = discover(bad_root, snaps)
    for run in (
        lambda: plan_fleet_local(clusters, Policy()),
        lambda: spark_engine.plan_fleet(clusters, Policy()),
    ):
        with pytest.raises(KquotaError) as e:
            run()
        assert "q.yaml:4" in str(e.value)
        assert "producer_byte_rate" in str(e.value)


def _principals(tmp_path: Path) -> Path:
    lines = ['{"user": "team-3", "client-id": "app-3"}', '{"user": "team-6", "client-id": "x"}']
    lines += ['{"user": "nobody", "client-id": "team-app-1"}', '{"user": "team-7"}']
    lines += ['{"client-id": "team-app-2"}', '{"user": "team-undeclared-0", "client-id": "c"}']
    lines += [f'{{"user": "team-{i}", "client-id": "app-{i % 7}"}}' for i in range(0, 300, 7)]
    path = tmp_path / "principals.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("source", ["snapshot", "desired"])
def test_spark_and_local_resolutions_are_identical(
    fleet: tuple[Path, Path], spark_engine: SparkEngine, tmp_path: Path, source: str
) -> None:
    from kquota.fleet.resolve import read_principals, resolve_local, write_effective

    clusters = discover(*fleet)
    pairs = read_principals(_principals(tmp_path))
    spark = spark_engine.resolve_fleet(clusters, pairs, source)
    from kquota.fleet.run import resolve_fleet

    local = resolve_fleet(clusters, pairs, source=source, engine="local")
    write_effective(local, pairs, tmp_path / "local")
    write_effective(spark, pairs, tmp_path / "spark")
    assert _files(tmp_path / "local") == _files(tmp_path / "spark")
    first = (tmp_path / "local" / "cluster-000.effective.jsonl").read_text().splitlines()
    assert len(first) == len(pairs)
    assert any('"source":{"user":null' in line for line in first)  # a default entity wins
    assert resolve_local({}, pairs) == [{} for _ in pairs]
