"""The dev broker's process helpers (devbroker.processes), with real child processes: a
stop takes the whole process group, a JVM that ignores SIGTERM is killed after the grace
time, and a pid file is trusted only for the process it names."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from kquota.devbroker import processes
from kquota.errors import KquotaError
from polling import assert_eventually

# A stand-in for a JVM: it writes its child's pid, ignores SIGTERM when asked, and waits.
CHILD = """
import signal, subprocess, sys, time
if sys.argv[2] == "stubborn":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
grandchild = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
open(sys.argv[1], "w").write(str(grandchild.pid))
time.sleep(600)
"""


def _spawn(tmp_path: Path, mode: str) -> tuple[int, Path]:
    script = tmp_path / "jvm.py"
    script.write_text(CHILD)
    grandchild = tmp_path / f"grandchild-{mode}"
    argv = [sys.executable, str(script), str(grandchild), mode]
    pid = processes.spawn(argv, tmp_path / "out", tmp_path / "x.pid", die_with_parent=True)
    assert_eventually(lambda: grandchild.is_file() and grandchild.read_text())
    return pid, grandchild


def test_stop_takes_the_whole_group_and_reaps_the_child(tmp_path: Path) -> None:
    pid, grandchild = _spawn(tmp_path, "polite")
    assert (tmp_path / "x.pid").read_text() == f"{pid}\n" and pid in processes.CHILDREN
    processes.stop_group(pid, timeout=60)
    assert not processes.pid_alive(pid) and pid not in processes.CHILDREN
    assert_eventually(lambda: not processes.pid_alive(int(grandchild.read_text())))


def test_a_process_that_ignores_sigterm_is_killed_after_the_grace_time(tmp_path: Path) -> None:
    pid, grandchild = _spawn(tmp_path, "stubborn")
    processes.stop_group(pid, timeout=0.5)
    assert not processes.pid_alive(pid) and pid not in processes.CHILDREN
    assert_eventually(lambda: not processes.pid_alive(int(grandchild.read_text())))


def test_a_pid_file_is_trusted_only_for_the_process_it_names(tmp_path: Path) -> None:
    pid, _ = _spawn(tmp_path, "polite")
    pid_file = tmp_path / "x.pid"
    try:
        script = str(tmp_path / "jvm.py").encode()
        assert processes.running_pid(pid_file, script, b"polite") == pid
        # A recycled pid: alive, but not this directory's process.
        assert processes.running_pid(pid_file, script, b"stubborn") is None
    finally:
        processes.kill_group(pid)
    assert processes.running_pid(pid_file, script) is None  # gone
    pid_file.write_text("not a pid\n")
    assert processes.running_pid(pid_file) is None
    assert processes.running_pid(tmp_path / "missing.pid") is None


def test_tail_reads_the_first_log_that_has_lines(tmp_path: Path) -> None:
    (tmp_path / "empty.log").write_text("")
    (tmp_path / "out").write_text("".join(f"line {i}\n" for i in range(40)))
    text = processes.tail(tmp_path / "missing.log", tmp_path / "empty.log", tmp_path / "out")
    assert text.splitlines() == [f"line {i}" for i in range(15, 40)]
    assert processes.tail(tmp_path / "missing.log") == ""


def test_await_ready_returns_once_every_check_has_passed(tmp_path: Path) -> None:
    pid, _ = _spawn(tmp_path, "polite")
    try:
        asked: list[int] = []

        def first() -> bool:
            asked.append(1)
            return len(asked) > 2

        def second() -> bool:
            asked.append(2)
            return True

        logs = (tmp_path / "out",)
        processes.await_ready(pid, [first, second], timeout=600, name="the JVM", logs=logs)
        assert asked == [1, 1, 1, 2]  # in order, each until it passes
    finally:
        processes.stop_group(pid, timeout=60)


def test_await_ready_names_an_exit_and_shows_the_log(tmp_path: Path) -> None:
    argv = [sys.executable, "-c", "print('no such port'); raise SystemExit(3)"]
    pid = processes.spawn(argv, tmp_path / "out", tmp_path / "x.pid", die_with_parent=True)
    logs = (tmp_path / "server.log", tmp_path / "out")
    with pytest.raises(KquotaError) as e:
        processes.await_ready(pid, [lambda: False], timeout=600, name="the JVM", logs=logs)
    assert str(e.value) == (
        f"the JVM exited with code 3 while starting; last log lines ({tmp_path}):\nno such port"
    )
    processes.reap(pid)
    assert pid not in processes.CHILDREN


def test_await_ready_gives_up_at_the_timeout(tmp_path: Path) -> None:
    pid, _ = _spawn(tmp_path, "polite")
    try:
        logs = (tmp_path / "out",)
        with pytest.raises(KquotaError) as e:
            processes.await_ready(pid, [lambda: False], timeout=0.3, name="the JVM", logs=logs)
        assert str(e.value) == f"the JVM did not answer within 0s; see {tmp_path / 'out'}"
    finally:
        processes.stop_group(pid, timeout=60)
