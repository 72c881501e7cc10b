"""The local fleet engine in worker processes writes exactly what it writes in one."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import gfm
from kquota.errors import KquotaError
from kquota.fleet.layout import discover
from kquota.fleet.local import auto_processes, plan_fleet_local
from kquota.fleet.run import write_drift, write_plans
from kquota.fleet.synth import write_fleet
from kquota.policy import Policy


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_two_processes_write_the_same_plans_and_drift(tmp_path: Path) -> None:
    write_fleet(tmp_path / "d", tmp_path / "s", clusters=5, entities=150, formats=("json", "jsonl"))
    clusters = discover(tmp_path / "d", tmp_path / "s")
    policy = Policy.build([{"user": "team-*"}, {"client-id": "*"}], prune=True, max_removals=5)
    one = plan_fleet_local(clusters, policy, processes=1)
    two = plan_fleet_local(clusters, policy, processes=2)
    assert list(two) == [c.name for c in clusters]
    write_plans(one, tmp_path / "one")
    write_plans(two, tmp_path / "two")
    assert _files(tmp_path / "one") == _files(tmp_path / "two")
    assert any(p.guard_violation for p in one.values())  # the guard ran in the workers too
    write_drift(one, tmp_path / "drift-one", prune=True, timestamp=1.0)
    write_drift(two, tmp_path / "drift-two", prune=True, timestamp=1.0)
    assert _files(tmp_path / "drift-one") == _files(tmp_path / "drift-two")
    doc = gfm.assert_aligned((tmp_path / "drift-one" / "fleet-drift.md").read_text())
    table = doc.tables()[0]
    assert sorted(table.column("cluster")) == sorted(c.name for c in clusters)
    prom = (tmp_path / "drift-one" / "fleet-drift.prom").read_text()
    assert all(f'kquota_drift_in_sync{{cluster="{c.name}"}}' in prom for c in clusters)
    assert "kquota_drift_last_check_timestamp_seconds 1.000" in prom


def test_a_bad_file_in_a_worker_is_reported_with_its_line(tmp_path: Path) -> None:
    write_fleet(tmp_path / "d", tmp_path / "s", clusters=3, entities=20)
    (tmp_path / "d" / "cluster-001" / "bad.yaml").write_text(
        "apiVersion: kquota/v1\nkind: ClientQuotas\nquotas:\n"
        "  - {match: {user: a}, set: {producer_byte_rate: -1}}\n"
    )
    with pytest.raises(KquotaError) as e:
        plan_fleet_local(discover(tmp_path / "d", tmp_path / "s"), Policy(), processes=2)
    assert "bad.yaml:4" in str(e.value) and "producer_byte_rate" in str(e.value)


def test_auto_uses_one_process_for_a_small_fleet(tmp_path: Path) -> None:
    write_fleet(tmp_path / "d", tmp_path / "s", clusters=4, entities=50)
    assert auto_processes(discover(tmp_path / "d", tmp_path / "s")) == 1


def test_auto_uses_every_core_from_the_threshold_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    import kquota.fleet.local as local

    write_fleet(tmp_path / "d", tmp_path / "s", clusters=4, entities=50)
    clusters = discover(tmp_path / "d", tmp_path / "s")
    monkeypatch.setattr(local, "PARALLEL_MIN_BYTES", 1)
    cores = len(os.sched_getaffinity(0))
    assert auto_processes(clusters) == (min(cores, 4) if cores >= 2 else 1)
    assert auto_processes(clusters[:1]) == 1  # one cluster: nothing to share


_WITH_A_SIGTERM_HANDLER = """
import signal, sys
from pathlib import Path
from kquota.fleet.layout import discover
from kquota.fleet.local import plan_fleet_local
from kquota.policy import Policy


def interrupt(signum, frame):
    raise KeyboardInterrupt(f"the worker ran the inherited handler for signal {signum}")


# A program embedding kquota (here as the test suite does) with its own SIGTERM handler:
# forked workers inherit it, and the pool ends its workers with SIGTERM.
signal.signal(signal.SIGTERM, interrupt)
root = Path(sys.argv[1])
plans = plan_fleet_local(discover(root / "d", root / "s"), Policy(), processes=2)
print(len(plans))
"""


def test_the_workers_end_by_sigterm_whatever_handler_the_program_has(tmp_path: Path) -> None:
    write_fleet(tmp_path / "d", tmp_path / "s", clusters=3, entities=20)
    # A worker running the program's handler can swallow the exception (raised inside a
    # finaliser) and wait on the task queue forever: the pool's join then hangs (seen in CI).
    # The workers take the default SIGTERM, so the handler never runs in them.
    proc = subprocess.run(
        [sys.executable, "-c", _WITH_A_SIGTERM_HANDLER, str(tmp_path)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert (proc.returncode, proc.stdout) == (0, "3\n"), proc.stderr
    assert "inherited handler" not in proc.stderr
