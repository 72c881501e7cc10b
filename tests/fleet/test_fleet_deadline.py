"""A fleet command's --timeout on Spark: the job group is cancelled, nothing is written.

The engine-level test uses the session's shared local-mode engine, whose session is already
up, and brings the deadline to the moment a Spark job is seen running, so it falls inside
the job on any machine, however loaded; the command-level test runs ``kquota fleet
plan --engine spark`` as a user does, in its own process and JVM.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from kquota.fleet.layout import discover
from kquota.fleet.local import plan_fleet_local
from kquota.fleet.spark import SparkEngine
from kquota.fleet.synth import write_fleet
from kquota.policy import Policy
from kquota.runtime.deadline import Deadline, DeadlineExceeded, bounded


@pytest.fixture(scope="module")
def big_fleet(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """big_fleet takes Spark far longer than the deadlines below on any machine."""
    base = tmp_path_factory.mktemp("big-fleet")
    write_fleet(base / "desired", base / "snaps", clusters=4, entities=25_000)
    return base / "desired", base / "snaps"


def _expire_once_a_job_runs(limit: Deadline, tracker: Any, started: list[float]) -> None:
    """Brings ``limit`` to now as soon as a Spark job is active: the deadline then falls
    inside the job by construction, however long a loaded machine takes to get there."""
    while not limit.expired:
        if tracker.getActiveJobsIds():
            started.append(time.monotonic())
            limit.at = time.monotonic()
            return
        time.sleep(0.05)


def test_the_deadline_cancels_the_spark_job_group_and_the_session_lives_on(
    big_fleet: tuple[Path, Path], spark_engine: SparkEngine, tmp_path: Path
) -> None:
    clusters = spark_engine.discover(str(big_fleet[0]), str(big_fleet[1]))
    tracker = spark_engine.session().sparkContext.statusTracker()
    started: list[float] = []
    # A generous bound that is never meant to be reached: the watcher ends it once a job runs.
    with pytest.raises(DeadlineExceeded) as e, bounded(600.0, "--timeout 10m") as limit:
        watcher = threading.Thread(
            target=_expire_once_a_job_runs, args=(limit, tracker, started), daemon=True
        )
        watcher.start()
        spark_engine.plan_fleet(clusters, Policy())
    watcher.join(30)
    assert started, "no Spark job ever ran"
    assert str(e.value).startswith(
        "the --timeout 10m deadline ran out: it was waiting for the Spark job to plan 4 clusters"
    )
    # Cancelled, not left running: the group's jobs end, and the session takes new work. The
    # bound only catches a hang: as long as the job had run before it was cancelled, at least.
    ran = time.monotonic() - started[0]
    until = time.monotonic() + max(120.0, 10 * ran)
    while tracker.getActiveJobsIds() and time.monotonic() < until:
        time.sleep(0.2)
    assert tracker.getActiveJobsIds() == []
    small = tmp_path / "small"
    write_fleet(small / "d", small / "s", clusters=2, entities=30)
    few = discover(small / "d", small / "s")
    spark = spark_engine.plan_fleet(few, Policy())
    local = plan_fleet_local(few, Policy())
    assert {n: p.to_data() for n, p in spark.items()} == {n: p.to_data() for n, p in local.items()}


@pytest.mark.spark
def test_fleet_plan_on_spark_ends_at_its_deadline_and_writes_nothing(
    big_fleet: tuple[Path, Path], tmp_path: Path
) -> None:
    out = tmp_path / "out"
    argv = [
        "fleet", "plan", "--desired", str(big_fleet[0]), "--snapshots", str(big_fleet[1]),
        "--out", str(out), "--engine", "spark", "--master", "local[1]", "--driver-memory", "1g",
        "--timeout", "20s",
    ]  # fmt: skip
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1"}
    proc = subprocess.run(
        [sys.executable, "-m", "kquota.cli.main", *argv],
        capture_output=True, text=True, env=env, timeout=600,
    )  # fmt: skip
    assert (proc.returncode, proc.stdout) == (1, ""), proc.stderr[-3000:]
    # Under load the JVM may take the whole deadline to start; the job's cancellation is the
    # test above. Either way the message names the Spark step, and no traceback escapes.
    assert "error: the --timeout 20s deadline ran out: it was waiting for the Spark " in proc.stderr
    assert "Py4JJavaError" not in proc.stderr and 'File "' not in proc.stderr, proc.stderr[-3000:]
    assert not out.exists()
