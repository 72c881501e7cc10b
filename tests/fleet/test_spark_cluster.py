"""``kquota fleet … --engine spark --master spark://…`` on a real standalone cluster.

The cluster (tests/spark_cluster.py) runs its executors on a Python that has pyspark and not
kquota, so these runs pass only if kquota ships what its executors need. Each run is the real
command in its own process (the driver), with relative input paths, and must write exactly
the files the local engine writes.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from kquota.fleet.synth import write_fleet
from spark_cluster import SparkCluster

_CHECKED_AT = re.compile(rb"^(kquota_drift_last_check_timestamp_seconds) \S+$", re.M)


def _files(folder: Path) -> dict[str, bytes]:
    """_files is what a run wrote, with the Prometheus textfile's check time (the one value
    that differs between two runs by design) blanked."""
    return {p.name: _CHECKED_AT.sub(rb"\1 T", p.read_bytes()) for p in sorted(folder.iterdir())}


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("cluster-fleet")
    write_fleet(
        base / "desired",
        base / "snapshots",
        clusters=3,
        entities=200,
        formats=("json", "jsonl", "parquet"),
    )
    (base / "principals.txt").write_text(
        "user=team-3,client-id=app-3\nuser=nobody,client-id=team-app-1\n"
    )
    return base


def _kquota(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1"}
    return subprocess.run(
        [sys.executable, "-m", "kquota.cli.main", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def _on_cluster(cluster: SparkCluster, *extra: str) -> list[str]:
    return [
        "--engine", "spark", "--master", cluster.master, "--driver-memory", "1g",
        "--conf", f"spark.pyspark.python={cluster.executor_python}",
        "--conf", "spark.driver.host=127.0.0.1", "--conf", "spark.driver.bindAddress=127.0.0.1",
        "--conf", "spark.executor.memory=1g", "--conf", "spark.sql.shuffle.partitions=4",
        *extra,
    ]  # fmt: skip


@pytest.mark.parametrize("command", ["plan", "drift", "resolve"])
def test_cluster_runs_write_what_the_local_engine_writes(
    spark_cluster: SparkCluster, fleet: Path, command: str
) -> None:
    inputs = ["--desired", "desired", "--snapshots", "snapshots"]  # relative to the driver
    if command == "resolve":
        inputs += ["--principals", "principals.txt"]
    if command == "plan":
        inputs += ["--prune", "--allow-mass-removal"]
    local = _kquota(fleet, "fleet", command, *inputs, "--out", f"{command}-local")
    spark = _kquota(
        fleet, "fleet", command, *inputs, "--out", f"{command}-spark", *_on_cluster(spark_cluster)
    )
    assert spark.returncode == local.returncode, spark.stderr[-3000:]
    assert local.returncode == (2 if command == "drift" else 0)
    local_files, spark_files = (
        _files(fleet / f"{command}-local"),
        _files(fleet / f"{command}-spark"),
    )
    # 3 clusters, + the summary (plan, drift), + drift's comment and Prometheus textfile
    assert len(local_files) == {"plan": 4, "drift": 6, "resolve": 3}[command]
    assert spark_files == local_files
    assert "Traceback" not in spark.stderr


def test_executors_without_kquota_give_a_clear_error(
    spark_cluster: SparkCluster, fleet: Path
) -> None:
    # --no-ship leaves the executors' Python as it is: without kquota.
    run = _kquota(
        fleet, "fleet", "plan", "--desired", "desired", "--snapshots", "snapshots",
        "--out", "no-ship", *_on_cluster(spark_cluster, "--no-ship"),
    )  # fmt: skip
    assert run.returncode == 1
    assert "the Spark executors cannot import what kquota needs there" in run.stderr
    assert "No module named 'kquota'" in run.stderr
    assert spark_cluster.executor_python in run.stderr
    assert "Install kquota into the executors' Python, or let kquota ship it" in run.stderr
    assert "Traceback" not in run.stderr and "Py4J" not in run.stderr
    assert not (fleet / "no-ship").exists()


def test_cluster_fleet_usage_writes_what_the_local_engine_writes(
    spark_cluster: SparkCluster, tmp_path: Path
) -> None:
    from kquota.fleet.synth_usage import write_usage_fleet

    write_usage_fleet(tmp_path / "samples", tmp_path / "snapshots", clusters=2, minutes=30)
    inputs = ["--samples", "samples", "--snapshots", "snapshots", "--since", "20m"]
    local = _kquota(tmp_path, "fleet", "usage", *inputs, "--out", "usage-local")
    spark = _kquota(
        tmp_path, "fleet", "usage", *inputs, "--out", "usage-spark", *_on_cluster(spark_cluster)
    )
    assert (local.returncode, spark.returncode) == (0, 0), spark.stderr[-3000:]
    local_files = _files(tmp_path / "usage-local")
    assert len(local_files) == 5  # 2 clusters' .json and .md, and the summary
    assert _files(tmp_path / "usage-spark") == local_files
    assert "Traceback" not in spark.stderr
