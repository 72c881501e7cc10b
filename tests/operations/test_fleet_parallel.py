"""The side-by-side driver of fleet apply, with real processes and no broker: what the report
says of a process that ends without a result, the deadline's backstop, and the first failure
starting nothing more."""

from __future__ import annotations

import queue
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from kquota.operations import fleet_parallel
from kquota.operations.fleet_apply import FleetApplyRequest
from kquota.operations.fleet_parallel import _backstop, _Child, _collect, apply_side_by_side
from kquota.plan.rollout import FAILED, NOT_ATTEMPTED, ClusterOutcome, Wave
from kquota.runtime import deadline


def _child(tmp_path: Path, code: str) -> tuple[_Child, queue.Queue[tuple[str, str]]]:
    proc = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    assert proc.stdout is not None
    lines: queue.Queue[tuple[str, str]] = queue.Queue()
    reader = threading.Thread(target=fleet_parallel._read, args=("eu-1", proc.stdout, lines))
    reader.start()
    return _Child(ClusterOutcome("eu-1", 2, "id"), proc, tmp_path / "none.json", reader), lines


def test_a_process_that_ends_without_a_result_leaves_the_outcome_unknown(tmp_path: Path) -> None:
    child, lines = _child(tmp_path, "print('connecting to eu-1', flush=True); raise SystemExit(3)")
    child.proc.wait(30)
    child.reader.join(30)
    while not lines.empty():
        child.tail.append(lines.get()[1])
    _collect(child)
    assert child.outcome.status == FAILED
    assert "its apply process ended (exit 3) without a result" in child.outcome.detail
    assert "what it committed is unknown" in child.outcome.detail
    assert "kquota drift --cluster eu-1" in child.outcome.detail
    assert child.outcome.detail.endswith("its last output: connecting to eu-1")


def test_a_process_still_running_past_the_deadline_and_its_grace_is_killed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A process that ignores SIGTERM, as an apply stuck in a call no signal reaches would.
    child, lines = _child(
        tmp_path,
        "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
        "print('ready', flush=True); time.sleep(120)",
    )
    assert lines.get(timeout=30) == ("eu-1", "ready")
    monkeypatch.setattr(fleet_parallel, "KILL_AFTER", 0.0)
    with deadline.bounded(60, "--timeout 1m"):
        _backstop(child)  # within the deadline: left alone
        assert child.terminated_at is None and child.proc.poll() is None
    with deadline.bounded(-fleet_parallel.GRACE - 1, "--timeout 1m"):
        _backstop(child)  # SIGTERM first (ignored here) ...
        assert child.terminated_at is not None and not child.killed
        _backstop(child)  # ... then SIGKILL
    assert child.proc.wait(30) == -signal.SIGKILL
    child.reader.join(30)
    _collect(child)
    assert "its apply process was killed without a result" in child.outcome.detail


def test_the_first_failure_starts_nothing_more(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # No kquota.yaml names these clusters: each process fails before connecting anywhere.
    monkeypatch.chdir(tmp_path)
    (tmp_path / "plans").mkdir()
    (tmp_path / "desired").mkdir()
    names = ("eu-1", "eu-2", "eu-3")
    request = FleetApplyRequest(tmp_path / "plans", tmp_path / "desired", (Wave(("eu-*",), 2),))
    pending = [ClusterOutcome(n, 1, f"id-{n}") for n in names]
    lines: list[str] = []
    finished: list[str] = []
    with deadline.bounded(120, "--timeout 2m"):
        sig = apply_side_by_side(
            request, pending, 2, finished=lambda o: finished.append(o.cluster),
            progress=lines.append,
        )  # fmt: skip
    assert sig is None
    assert [o.status for o in pending] == [FAILED, FAILED, NOT_ATTEMPTED]
    assert sorted(finished) == ["eu-1", "eu-2"]
    assert "  eu-1: applying (1 of 2 at once)" in lines
    assert "  eu-2: applying (2 of 2 at once)" in lines
    assert not any("eu-3" in line for line in lines)
    assert "eu-1" in pending[0].detail and "without a result" not in pending[0].detail


def test_a_cluster_process_refuses_a_plan_file_changed_since_the_driver_read_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import time

    from kquota.operations.fleet_child import run
    from kquota.operations.fleet_parallel import job
    from rollout_kit import Cluster, Fleet

    monkeypatch.chdir(tmp_path)
    fleet = Fleet(tmp_path, capsys)
    fleet.clusters = {"solo": Cluster("127.0.0.1:1", "u", 10)}  # port 1: never reached
    fleet.write()
    fleet.plan()
    request = FleetApplyRequest(tmp_path / "plans", tmp_path / "desired", ())
    data = job(request, "solo", "0123456789abcdef", 60.0, "--timeout 1m", tmp_path / "r.json")
    assert data["deadline_at"] > time.monotonic()
    result = run(data)
    assert result["status"] == FAILED and result["signal"] is None
    assert result["detail"] == (
        "solo: its plan file changed since the rollout read it; nothing was written (plan the "
        "fleet again and review the new plans)"
    )


def test_what_a_process_committed_comes_back_with_what_the_record_said_before(
    tmp_path: Path,
) -> None:
    """The record's positions go to a cluster's process in its job, and come back in its
    result, joined with those the driver had (a resumed cluster: never fewer than before)."""
    from kquota.operations.fleet_parallel import job

    request = FleetApplyRequest(tmp_path, tmp_path)
    sent = job(request, "eu-1", "id", 60.0, "--timeout 1m", tmp_path / "r.json", committed=(2,))
    assert (sent["committed"], sent["audited"]) == ([2], [])
    result = tmp_path / "result.json"
    result.write_text(
        '{"status": "failed", "detail": "x", "signal": null, "committed": [0, 1], "audited": [0]}'
    )
    child, _lines = _child(tmp_path, "pass")
    child.proc.wait(30)
    child.reader.join(30)
    child.outcome.committed = (2,)
    child = _Child(child.outcome, child.proc, result, child.reader)
    _collect(child)
    assert child.outcome.status == FAILED and child.outcome.detail == "x"
    assert (child.outcome.committed, child.outcome.audited) == ((0, 1, 2), (0,))
