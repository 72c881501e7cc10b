"""One semantics, two engines: the Spark job and the local planner write identical files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kquota.fleet.layout import discover
from kquota.fleet.local import plan_fleet_local
from kquota.fleet.run import write_drift, write_plans
from kquota.fleet.spark import SparkEngine
from kquota.fleet.synth import write_fleet
from kquota.policy import Policy


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
    local, spark = plan_fleet_local(clusters, policy), spark_engine.plan_fleet(clusters, policy)
    write_drift(local, tmp_path / "local", prune=False, timestamp=1.0)
    write_drift(spark, tmp_path / "spark", prune=False, timestamp=1.0)
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
    lines = ["user=team-3,client-id=app-3", "user=team-6,client-id=x"]
    lines += ["user=nobody,client-id=team-app-1", "user=team-7"]
    lines += ["client-id=team-app-2", "user=team-undeclared-0,client-id=c"]
    lines += [f"user=team-{i},client-id=app-{i % 7}" for i in range(0, 300, 7)]
    path = tmp_path / "principals.txt"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("source", ["snapshot", "desired"])
def test_spark_and_local_resolutions_are_identical(
    fleet: tuple[Path, Path], spark_engine: SparkEngine, tmp_path: Path, source: str
) -> None:
    from kquota.fleet.resolve import resolve_local, write_effective
    from kquota.principals.listed import read_user_clients

    clusters = discover(*fleet)
    pairs = read_user_clients(_principals(tmp_path))
    spark = spark_engine.resolve_fleet(clusters, pairs, source)
    from kquota.fleet.run import resolve_fleet

    local = resolve_fleet(*fleet, pairs, source=source, engine="local")
    write_effective(local, pairs, tmp_path / "local")
    write_effective(spark, pairs, tmp_path / "spark")
    assert _files(tmp_path / "local") == _files(tmp_path / "spark")
    first = (tmp_path / "local" / "cluster-000.effective.jsonl").read_text().splitlines()
    assert len(first) == len(pairs)
    assert any('"source":{"user":null' in line for line in first)  # a default entity wins
    assert resolve_local({}, pairs) == [{} for _ in pairs]


def test_ip_spellings_plan_alike_in_both_engines(spark_engine: SparkEngine, tmp_path: Path) -> None:
    # The cluster holds addresses under other spellings than kquota's canonical ones: both
    # engines change the entity the cluster holds, and neither creates a second spelling.
    from kquota.model import Entity
    from kquota.snapshot.files import dump_snapshot

    rate = {"connection_creation_rate": 5.0}
    (tmp_path / "desired" / "c1").mkdir(parents=True)
    (tmp_path / "desired" / "c1" / "q.yaml").write_text(
        "apiVersion: kquota/v1\nkind: ClientQuotas\nquotas:\n"
        "  - {match: {ip: 10.0.0.1}, set: {connection_creation_rate: 6}}\n"
        '  - {match: {ip: "2001:db8::1"}, set: {connection_creation_rate: 5}}\n'
        '  - {match: {ip: "2001:db8::2"}, set: {connection_creation_rate: 7}}\n'
    )
    (tmp_path / "snaps").mkdir()
    held = {
        Entity.of({"ip": "::FFFF:10.0.0.1"}): rate,
        Entity.of({"ip": "2001:DB8::1"}): rate,
        Entity.of({"ip": "2001:DB8:0::2"}): rate,  # two other spellings: the first by name
        Entity.of({"ip": "2001:db8:0:0::2"}): rate,
    }
    (tmp_path / "snaps" / "c1.json").write_bytes(dump_snapshot(held))
    clusters = discover(tmp_path / "desired", tmp_path / "snaps")
    policy = Policy(prune=True, allow_mass_removal=True)
    write_plans(plan_fleet_local(clusters, policy), tmp_path / "local")
    write_plans(spark_engine.plan_fleet(clusters, policy), tmp_path / "spark")
    local = _files(tmp_path / "local")
    assert local == _files(tmp_path / "spark")
    plan = json.loads(local["c1.plan.json"])
    assert [(a["entity"]["ip"], a["change"]) for a in plan["alterations"]] == [
        ("2001:DB8:0::2", "update"),
        ("2001:db8:0:0::2", "delete"),
        ("::FFFF:10.0.0.1", "update"),
    ]


def test_spark_and_local_plans_with_impact_are_identical(
    fleet: tuple[Path, Path], spark_engine: SparkEngine, tmp_path: Path
) -> None:
    from kquota.operations.fleet import FleetRun, fleet_impact
    from kquota.operations.plan import offline_discovery
    from kquota.plan.resolver import Principal
    from kquota.principals.model import Discovery, SourceReport

    listed = Discovery(
        (Principal("team-1", "app-1"), Principal("team-2"), Principal("nobody", "x")),
        (SourceReport("file:p.txt", 3),),
    )
    found = offline_discovery(live=True, listed=listed)
    policy = Policy(prune=True, allow_mass_removal=True)
    run = FleetRun(str(fleet[0]), str(fleet[1]), "local")
    clusters = discover(*fleet)
    local = fleet_impact(run, plan_fleet_local(clusters, policy), found, policy)
    spark = fleet_impact(run, spark_engine.plan_fleet(clusters, policy), found, policy)
    write_plans(local, tmp_path / "local")
    write_plans(spark, tmp_path / "spark")
    assert _files(tmp_path / "local") == _files(tmp_path / "spark")
    plans = [json.loads(t) for f, t in _files(tmp_path / "local").items() if ".plan." in f]
    assert all(p["impact_principals"] == 3 and len(p["impact_sources"]) == 4 for p in plans)
