"""The background JVMs of the dev broker (brokers and their ZooKeeper): start, find, stop.

Each JVM runs in a session of its own, so stopping it signals its whole process group and no
child is left behind. Its pid is kept in a file beside its data; a pid read back is trusted
only while the process is alive and its command line names that directory (a pid can be
recycled). :data:`CHILDREN` holds the processes this Python process started, so their
``Popen`` is not collected while the JVM runs (it would warn) and their zombies are reaped.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from kquota.errors import KquotaError
from kquota.runtime.parentdeath import signal_on_parent_death
from kquota.runtime.pids import pid_alive

CHILDREN: dict[int, subprocess.Popen[bytes]] = {}
"""The JVMs this process started, by pid."""


def running_pid(pid_file: Path, *cmdline: bytes) -> int | None:
    """running_pid is the pid in ``pid_file`` if that process is alive and its command line
    holds every word of ``cmdline`` (the main class, its config file); else None."""
    try:
        pid = int(pid_file.read_text().strip())
    except (OSError, ValueError):
        return None
    if not pid_alive(pid):
        return None
    try:
        words = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return None
    return pid if all(w in words for w in cmdline) else None


def spawn(argv: Sequence[str], out: Path, pid_file: Path, *, die_with_parent: bool) -> int:
    """spawn starts ``argv`` in a session of its own, its output appended to ``out``, records
    its pid in ``pid_file`` and returns it. ``die_with_parent``: the kernel kills it if this
    process dies (test fixtures: no JVM outlives a killed pytest)."""
    with open(out, "ab") as log:  # the child keeps its own copy of the descriptor
        proc = subprocess.Popen(
            list(argv),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=signal_on_parent_death if die_with_parent else None,
        )
    CHILDREN[proc.pid] = proc
    pid_file.write_text(f"{proc.pid}\n")
    return proc.pid


def await_ready(
    pid: int,
    checks: Sequence[Callable[[], bool]],
    *,
    timeout: float,
    name: str,
    logs: Sequence[Path],
) -> None:
    """await_ready polls ``checks`` in order until each has passed once. KquotaError if
    process ``pid`` (``name`` in the message) exits first, with the last lines of the first of
    ``logs`` that has any, or if ``timeout`` seconds pass (naming ``logs[0]``)."""
    deadline = time.monotonic() + timeout
    left = list(checks)
    while left:
        if not pid_alive(pid):
            raise KquotaError(
                f"{name} exited{_exit_note(pid)} while starting; last log lines "
                f"({logs[0].parent}):\n" + tail(*logs)
            )
        if time.monotonic() > deadline:
            raise KquotaError(f"{name} did not answer within {timeout:.0f}s; see {logs[0]}")
        if left[0]():
            left.pop(0)
        else:
            time.sleep(0.2)


def _exit_note(pid: int) -> str:
    child = CHILDREN.get(pid)
    return "" if child is None else f" with code {child.poll()}"


def stop_group(pid: int, timeout: float) -> None:
    """stop_group stops ``pid``'s process group: SIGTERM (a JVM's shutdown hooks run), then
    SIGKILL if it lingers past ``timeout`` seconds; it returns once the process is gone."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while pid_alive(pid) and time.monotonic() < deadline:
        reap(pid)
        time.sleep(0.1)
    kill_group(pid)


def kill_group(pid: int) -> None:
    """kill_group SIGKILLs ``pid``'s process group unless it is gone already, and returns
    once it is."""
    if pid_alive(pid):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGKILL)
        while pid_alive(pid):
            reap(pid)
            time.sleep(0.05)
    reap(pid)


def reap(pid: int) -> None:
    """reap collects ``pid``'s exit status if it is a child of ours that has exited, so it
    does not linger as a zombie."""
    child = CHILDREN.get(pid)
    if child is not None and child.poll() is not None:
        del CHILDREN[pid]


def tail(*logs: Path, lines: int = 25) -> str:
    """tail is the last ``lines`` of the first of ``logs`` that has any (the JVM's own log,
    then its captured output), or empty."""
    for log in logs:
        if log.is_file():
            text = "\n".join(log.read_text(errors="replace").splitlines()[-lines:])
            if text:
                return text
    return ""
