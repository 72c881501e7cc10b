"""Up to ``max_parallel`` clusters of a wave applied at once, each in a process of its own.

Why processes and not threads: an apply's deadline (:mod:`kquota.runtime.deadline`), its
SIGINT/SIGTERM handling (:mod:`kquota.apply.interrupts`: KeyboardInterrupt, which the event
loop inside WireAdmin turns into cancelling the request in flight so the batch can be
settled) and its status are process-wide, and Python delivers a signal to the main thread
only: a thread could not be stopped mid-commit, nor its batch settled. In a process of its
own (:mod:`kquota.operations.fleet_child`) each cluster's apply is exactly the one ``kquota
apply`` runs: its own deadline, lease, settling and audit. The price is a Python start per
cluster (0.6 s measured on a loaded two-core machine): it pays where applies wait on the
network (remote clusters, verification, a lease held elsewhere), not for small applies to
clusters next door, which are as quick one at a time.

This driver (on the machine that runs ``fleet apply``: no write ever goes from anywhere
else) starts a process per cluster in wave order while fewer than ``max_parallel`` run,
forwards each one's output line by line, prefixed with its cluster, and reads its result
(JSON) when it ends. The first cluster that fails stops the wave: nothing more starts, the
ones running finish, and every cluster not started stays *not attempted*.

Signals: the processes run in sessions of their own, so a Ctrl-C at the terminal reaches the
driver only, which passes each SIGINT/SIGTERM on to every process still running, once per
signal received: the first stops each apply as ``kquota apply`` stops (the batch in flight
settled, the lease released, a result written), a second cuts the settling short, as it
does for ``kquota apply``. A hung broker is bounded by each process's own deadline (what was
left of the driver's when it started); a process still running :data:`GRACE` seconds past
the driver's deadline gets SIGTERM, and :data:`KILL_AFTER` seconds later SIGKILL, and the
report says its outcome is unknown. If the driver itself dies, each process gets SIGTERM
(Linux: ``PR_SET_PDEATHSIG``) and stops as on a signal.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import queue
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import FrameType
from typing import IO, Any

from kquota.display import safe_text
from kquota.plan.rollout import COMMITTED, DONE, FAILED, UNCHANGED, ClusterOutcome
from kquota.runtime import deadline
from kquota.runtime.deadline import DEFAULT_TIMEOUTS, format_duration

GRACE = 45.0
"""Seconds past the driver's deadline a cluster's process may take to end on its own: its
settling of the batch in flight (5 s at most), the release of its lease (30 s at most) and
closing its clients."""
KILL_AFTER = 5.0
"""Seconds between the backstop's SIGTERM and its SIGKILL."""
_TAIL = 5
_POLL = 0.05
_results = itertools.count()


@dataclass
class _Child:
    outcome: ClusterOutcome
    proc: subprocess.Popen[bytes]
    result: Path
    reader: threading.Thread
    tail: deque[str] = field(default_factory=lambda: deque(maxlen=_TAIL))
    terminated_at: float | None = None
    killed: bool = False


def job(
    request: Any,
    cluster: str,
    plan_id: str,
    seconds: float,
    label: str,
    result: Path,
    *,
    committed: tuple[int, ...] = (),
    audited: tuple[int, ...] = (),
) -> dict[str, Any]:
    """job is the JSON a cluster's process (:mod:`kquota.operations.fleet_child`) reads on
    stdin (``request``: the fleet request; ``committed`` and ``audited``: what the record
    says an earlier attempt did, :attr:`ClusterOutcome.committed`)."""
    return {
        "cluster": cluster,
        "plan_id": plan_id,
        "committed": list(committed),
        "audited": list(audited),
        "plans_dir": str(request.plans_dir.resolve()),
        "desired_root": str(request.desired_root.resolve()),
        "config_path": str(request.config_path.resolve()) if request.config_path else None,
        "prune": request.prune,
        "allow_mass_removal": request.allow_mass_removal,
        "audit_topic": request.audit_topic,
        "verify_timeout": request.verify_timeout,
        "overrides": asdict(request.overrides),
        "deadline_seconds": seconds,
        # The monotonic clock is the machine's, shared by its processes (Linux, macOS,
        # Windows): the process's deadline ends when the driver's does, its start-up included.
        "deadline_at": time.monotonic() + seconds,
        "deadline_label": label,
        "result": str(result),
    }


def _read(name: str, stream: IO[bytes], lines: queue.Queue[tuple[str, str]]) -> None:
    with stream:
        for raw in stream:
            lines.put((name, raw.decode("utf-8", errors="replace").rstrip("\r\n")))


def _start(
    request: Any, outcome: ClusterOutcome, workdir: Path, lines: queue.Queue[tuple[str, str]]
) -> _Child:
    limit = deadline.current()
    seconds = limit.remaining() if limit is not None else DEFAULT_TIMEOUTS["apply"]
    label = limit.label if limit is not None else f"apply {format_duration(seconds)}"
    result = workdir / f"{next(_results)}.json"  # not the name: it is the operator's text
    data = job(
        request, outcome.cluster, outcome.plan_id, max(seconds, 0.001), label, result,
        committed=outcome.committed, audited=outcome.audited,
    )  # fmt: skip
    proc = subprocess.Popen(
        [sys.executable, "-m", "kquota.operations.fleet_child"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # the terminal's Ctrl-C reaches the driver only
    )
    assert proc.stdin is not None and proc.stdout is not None
    # A process that died at once: no result, and the report says its outcome is unknown.
    with contextlib.suppress(BrokenPipeError):
        proc.stdin.write(json.dumps(data).encode())
        proc.stdin.close()
    reader = threading.Thread(target=_read, args=(outcome.cluster, proc.stdout, lines), daemon=True)
    reader.start()
    return _Child(outcome, proc, result, reader)


@contextlib.contextmanager
def _forwarding(received: list[int], running: dict[str, _Child]) -> Iterator[None]:
    """While the wave runs, SIGINT and SIGTERM are passed on to every running process and
    remembered; the driver itself keeps waiting for their results."""
    if threading.current_thread() is not threading.main_thread():
        yield  # a library caller's thread: its processes still stop when it dies
        return

    def forward(signum: int, frame: FrameType | None) -> None:
        received.append(signum)
        for child in list(running.values()):
            if child.proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    child.proc.send_signal(signum)

    previous = {s: signal.signal(s, forward) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


def _backstop(child: _Child) -> None:
    """A process still running :data:`GRACE` past the driver's deadline is stopped."""
    limit = deadline.current()
    if limit is None or limit.remaining() > -GRACE:
        return
    now = time.monotonic()
    with contextlib.suppress(ProcessLookupError):
        if child.terminated_at is None:
            child.terminated_at = now
            child.proc.send_signal(signal.SIGTERM)
        elif not child.killed and now - child.terminated_at > KILL_AFTER:
            child.killed = True
            child.proc.kill()


def _collect(child: _Child) -> None:
    """_collect reads a process's result into its outcome; without one, the outcome is
    unknown and the report says so."""
    outcome = child.outcome
    try:
        data = json.loads(child.result.read_text(encoding="utf-8"))
        status, detail, sig = data["status"], data["detail"], data["signal"]
        if status not in (COMMITTED, UNCHANGED, FAILED) or not isinstance(detail, str):
            raise ValueError(f"status {status!r}")
        committed, audited = data.get("committed", []), data.get("audited", [])
        if any(type(i) is not int for i in [*committed, *audited]):
            raise ValueError("committed")
    except (OSError, ValueError, KeyError, TypeError):
        how = "was killed" if child.killed else f"ended (exit {child.proc.returncode})"
        last = f"; its last output: {' / '.join(child.tail)}" if child.tail else ""
        outcome.status = FAILED
        outcome.detail = (
            f"its apply process {how} without a result: what it committed is unknown; "
            f"check it with kquota drift --cluster {outcome.cluster} (--resume checks it "
            f"against the live cluster again){last}"
        )
        return
    outcome.status, outcome.detail = status, detail
    outcome.signal = sig if isinstance(sig, int) else None
    # A process's own positions, or the driver's when it has none: never fewer than it knew.
    outcome.committed = tuple(sorted({*outcome.committed, *committed}))
    outcome.audited = tuple(sorted({*outcome.audited, *audited}))


def _pump(
    lines: queue.Queue[tuple[str, str]],
    running: dict[str, _Child],
    progress: Callable[[str], None],
) -> None:
    while True:
        try:
            name, line = lines.get_nowait()
        except queue.Empty:
            return
        if name in running:
            running[name].tail.append(safe_text(line))
        progress(f"  [{name}] {safe_text(line)}")


def apply_side_by_side(
    request: Any,
    pending: Sequence[ClusterOutcome],
    parallel: int,
    *,
    finished: Callable[[ClusterOutcome], None],
    progress: Callable[[str], None],
) -> int | None:
    """apply_side_by_side applies ``pending`` (in order) with up to ``parallel`` at once,
    filling in each outcome and calling ``finished`` as each ends; the signal that stopped the
    wave, if one did."""
    lines: queue.Queue[tuple[str, str]] = queue.Queue()
    received: list[int] = []
    running: dict[str, _Child] = {}
    waiting = list(pending)
    stopped_by: int | None = None
    failed = False
    names = ", ".join(o.cluster for o in pending)
    with (
        tempfile.TemporaryDirectory(prefix="kquota-fleet-") as tmp,
        _forwarding(received, running),
        deadline.waiting_on(f"the applies of {names}"),
    ):
        while waiting or running:
            while waiting and not failed and not received and len(running) < parallel:
                outcome = waiting.pop(0)
                try:
                    running[outcome.cluster] = _start(request, outcome, Path(tmp), lines)
                except OSError as e:  # no process (the system's limits): nothing was written
                    outcome.status = FAILED
                    outcome.detail = f"cannot start its apply process: {e}; nothing was written"
                    finished(outcome)
                    failed = True
                    break
                progress(f"  {outcome.cluster}: applying ({len(running)} of {parallel} at once)")
            if failed or received:
                waiting.clear()  # the first failure (or a signal) starts nothing more
            _pump(lines, running, progress)
            for name, child in list(running.items()):
                if child.proc.poll() is None:
                    _backstop(child)
                    continue
                child.reader.join(1.0)
                _pump(lines, running, progress)
                _collect(child)
                del running[name]
                finished(child.outcome)
                if child.outcome.status not in DONE:
                    failed = True
                    stopped_by = stopped_by or child.outcome.signal
            time.sleep(_POLL)
    return received[0] if received else stopped_by
