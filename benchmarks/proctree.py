"""Measure a command's wall time and the peak resident memory of its whole process tree.

``ru_maxrss`` of children reports only the largest single process, which hides a Spark job's
JVM behind its Python driver (or the reverse); sampling /proc sums every process of the tree.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path


def _children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(p) for p in text.split()]


def _tree_rss_kib(root: int) -> int:
    total, stack = 0, [root]
    while stack:
        pid = stack.pop()
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
                    break
        except OSError:
            continue
        stack.extend(_children(pid))
    return total


def tree_cpu(root: int) -> float:
    """tree_cpu is the CPU seconds (user and system) the live processes of ``root``'s tree
    have used so far: a broker's own cost around a step, read from /proc."""
    ticks: dict[int, int] = {}
    _tree_cpu_ticks(root, ticks)
    return sum(ticks.values()) / os.sysconf("SC_CLK_TCK")


def _tree_cpu_ticks(root: int, seen: dict[int, int]) -> None:
    """_tree_cpu_ticks records in ``seen`` each process's own CPU time so far (user + system
    clock ticks; not its children's, which are counted as processes of the tree)."""
    stack = [root]
    while stack:
        pid = stack.pop()
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        # after the command: state(0) ... utime(11) stime(12)
        seen[pid] = max(seen.get(pid, 0), int(fields[11]) + int(fields[12]))
        stack.extend(_children(pid))


def run_measured(
    cmd: list[str],
    *,
    env: dict[str, str] | None = None,
    timeout: float = 3600,
    also: Sequence[int] = (),
    cpu: list[float] | None = None,
) -> tuple[float, float, subprocess.CompletedProcess[str]]:
    """run_measured returns (seconds, peak MiB of the process tree, completed process).

    ``also``: processes whose trees count too (a Spark worker the command's job runs on).
    ``cpu``, when given, gets the CPU seconds of the tree, sampled with the memory: each
    process's last reading, so a process's last tenth of a second (and one that lived less)
    is missed: an estimate, a little low.

    Output goes to temporary files, not pipes: a child that writes more than a pipe holds
    (a large plan) would block until read, and we only read once it has exited.
    """
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        began = time.monotonic()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, text=True, env=env or dict(os.environ))
        peak = 0
        ticks: dict[int, int] = {}
        while proc.poll() is None:
            peak = max(peak, sum(_tree_rss_kib(pid) for pid in (proc.pid, *also)))
            if cpu is not None:
                for pid in (proc.pid, *also):
                    _tree_cpu_ticks(pid, ticks)
            if time.monotonic() - began > timeout:
                proc.kill()
                break
            time.sleep(0.1)
        proc.wait()
        elapsed = time.monotonic() - began
        out.seek(0)
        err.seek(0)
        done = subprocess.CompletedProcess(cmd, proc.returncode, out.read(), err.read())
    if cpu is not None:
        cpu.append(sum(ticks.values()) / os.sysconf("SC_CLK_TCK"))
    return elapsed, peak / 1024, done
