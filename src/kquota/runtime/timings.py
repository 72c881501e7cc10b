"""Wall-clock spans of a command's steps, for benchmarks: ``KQUOTA_PHASE_TIMES=FILE``.

A benchmark sets beside a peer's own clock where a whole process spends its time: every
:func:`kquota.runtime.progress.phase` and every :func:`span` is recorded (nested ones too, and those
run on another thread: overlapped steps show as overlapping spans), and at exit one line a
span is written to FILE: ``name<TAB>start<TAB>end<TAB>cpu``: start and end in seconds since
the epoch, so the benchmark can put the process's own start (its launch) and end beside them,
and the CPU seconds the whole process used meanwhile (every thread: what the client itself
cost, against what it waited for).

Without the variable nothing is recorded: one ``None`` check per span. Nothing a command
prints changes either way.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import threading
import time
from collections.abc import Iterator

ENV = "KQUOTA_PHASE_TIMES"

_path = os.environ.get(ENV) or None
_spans: list[tuple[str, float, float, float]] = []
_lock = threading.Lock()


def enabled() -> bool:
    """enabled: spans are being recorded (the variable names a file)."""
    return _path is not None


def record(name: str, start: float, end: float, cpu: float = 0.0) -> None:
    """record adds one span that ran from ``start`` to ``end`` (``time.time()`` values) and
    used ``cpu`` seconds of the process's CPU time."""
    if _path is None:
        return
    with _lock:
        _spans.append((name, start, end, cpu))


def cpu() -> float:
    """cpu is the process's CPU time so far (user and system, every thread)."""
    return time.process_time()


@contextlib.contextmanager
def span(name: str) -> Iterator[None]:
    """span records the block as the step ``name``."""
    if _path is None:
        yield
        return
    start, used = time.time(), time.process_time()
    try:
        yield
    finally:
        record(name, start, time.time(), time.process_time() - used)


def _write() -> None:
    if _path is None:
        return
    with _lock:
        lines = [f"{n}\t{s:.6f}\t{e:.6f}\t{c:.6f}\n" for n, s, e, c in _spans]
    with contextlib.suppress(OSError), open(_path, "w", encoding="utf-8") as out:
        out.writelines(lines)


if _path is not None:
    atexit.register(_write)
