"""Fleet inputs through Hadoop's file systems: relative paths, file:// URIs, unknown schemes."""

from __future__ import annotations

from pathlib import Path

import pytest

from kquota.errors import KquotaError
from kquota.fleet.layout import discover
from kquota.fleet.local import plan_fleet_local
from kquota.fleet.run import write_plans
from kquota.fleet.spark import SparkEngine
from kquota.fleet.synth import write_fleet
from kquota.policy import Policy


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("fs-fleet")
    write_fleet(base / "desired", base / "snapshots", clusters=2, entities=80,
                formats=("jsonl", "parquet"))  # fmt: skip
    # A second file in a sub-folder: the Spark listing must order files as the loader does.
    (base / "desired" / "cluster-000" / "more").mkdir()
    (base / "desired" / "cluster-000" / "more" / "extra.yml").write_text(
        "apiVersion: kquota/v1\nkind: ClientQuotas\nquotas:\n"
        "  - {match: {user: extra-user}, set: {producer_byte_rate: 1024}}\n"
    )
    (base / "desired" / "cluster-000" / ".hidden.yaml").write_text("not: [valid")
    return base


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_relative_paths_are_made_absolute_on_the_driver(
    fleet: Path, spark_engine: SparkEngine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(fleet)
    clusters = spark_engine.discover("desired", "snapshots")
    assert [c.name for c in clusters] == ["cluster-000", "cluster-001"]
    assert all(c.desired_dir == f"file:{fleet}/desired/{c.name}" for c in clusters)
    assert clusters[1].snapshot == f"file:{fleet}/snapshots/cluster-001.parquet"
    write_plans(spark_engine.plan_fleet(clusters, Policy()), tmp_path / "spark")
    write_plans(plan_fleet_local(discover("desired", "snapshots"), Policy()), tmp_path / "local")
    assert _files(tmp_path / "spark") == _files(tmp_path / "local")
    assert b"extra-user" in (tmp_path / "spark" / "cluster-000.plan.json").read_bytes()


def test_file_uris_are_read_like_paths(fleet: Path, spark_engine: SparkEngine) -> None:
    clusters = spark_engine.discover(f"file://{fleet}/desired", (fleet / "snapshots").as_uri())
    assert [c.snapshot_format for c in clusters] == ["jsonl", "parquet"]


def test_a_scheme_spark_cannot_read_is_one_clear_error(spark_engine: SparkEngine) -> None:
    with pytest.raises(KquotaError) as e:
        spark_engine.discover("s3a://no-such-bucket/fleet", "s3a://no-such-bucket/snaps")
    assert str(e.value).startswith("s3a://no-such-bucket/fleet: cannot reach this location: ")
    assert "s3a" in str(e.value).split(": ", 2)[2]


def test_a_missing_folder_names_the_absolute_location(
    fleet: Path, spark_engine: SparkEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(fleet)
    with pytest.raises(KquotaError) as e:
        spark_engine.discover("nowhere", "snapshots")
    assert str(e.value) == f"file:{fleet}/nowhere: not a directory (expected ROOT/<cluster>/*.yaml)"
