"""The status line on stderr, for a terminal only: the phase a command is in, how far it has
got, and what it waits on, for how long.

One thread draws one line, erased and redrawn in place every 0.2 s, so the first line appears
within a fraction of a second of a phase starting: ``commit [#####.....] 9000/20000 entities
2.1 s``, the bar moving with every response (:func:`kquota.runtime.progress.advance`), followed by
``waiting 3 s for AlterClientQuotas at 127.0.0.1:9092 (deadline in 590 s)`` once a request
has been unanswered for :data:`SHOW_AFTER` seconds (a healthy cluster answers well before).
When a phase ends its summary stays as one line (``commit: 20000 entities in 2.3 s``), if
the command has run for :data:`SHOW_AFTER` seconds by then or ``-v`` was given: a quick
command prints nothing extra.

Off a terminal (CI logs, pipes) nothing is drawn: ``-v`` prints each phase's summary line,
and a wait that lasts :data:`LOG_AFTER` seconds gets one plain line, once per wait phase, so a
pipeline's log says why the job is quiet long before the deadline's message does. ``-q``
turns all of it off.
"""

from __future__ import annotations

import contextlib
import functools
import threading
from collections.abc import Iterator
from typing import TextIO

from kquota.cli import console
from kquota.runtime import deadline, progress

SHOW_AFTER = 1.0
LOG_AFTER = 5.0
"""Off a terminal: how long a wait lasts before it gets its line (a loaded CI runner's slow
answer, a second or two, stays out of the log)."""
_TICK = 0.2
_FRAMES = "|/-\\"
_CLEAR = "\r\x1b[2K"
_BAR = 20
_BLOCK = 4


def indicator_line(frame: int, what: str, waited: float, remaining: float | None) -> str:
    """indicator_line is one frame of the waiting part (without the line-clearing prefix)."""
    line = f"{_FRAMES[frame % len(_FRAMES)]} waiting {waited:.0f} s for {what}"
    if remaining is not None:
        line += f" (deadline in {max(0.0, remaining):.0f} s)"
    return line


def phase_line(step: progress.Phase, frame: int = 0) -> str:
    """phase_line is the live part for a phase: its name, a bar when its size is known. A
    phase that reads before it counts (verification) shows the entities its describe answers
    brought so far, and while nothing is counted its bar is a block moving with ``frame``:
    it is working, not stuck."""
    read = f", {step.read} read" if step.reads else ""
    if step.total:
        done = min(step.done, step.total)
        if step.reads and done == 0:
            bar = _moving(frame)
        else:
            filled = done * _BAR // step.total
            bar = "#" * filled + "." * (_BAR - filled)
        counted = f"{done}/{step.total} {step.unit}{read}"
        return f"{step.name} [{bar}] {counted} {step.seconds:.1f} s"
    return f"{step.name}...{read.lstrip(',')} {step.seconds:.1f} s"


def _moving(frame: int) -> str:
    """_moving is an indeterminate bar: a block of :data:`_BLOCK` going to and fro."""
    span = _BAR - _BLOCK
    at = frame % (2 * span)
    at = at if at <= span else 2 * span - at
    return "." * at + "=" * _BLOCK + "." * (span - at)


class _Line:
    """_Line is the one status line of a terminal and the phase reporter that feeds it."""

    def __init__(self, stream: TextIO, draw: bool) -> None:
        self.stream, self.draw = stream, draw
        self.lock = threading.Lock()
        self.drawn = False

    def _clear(self) -> None:
        if self.drawn:
            self.stream.write(_CLEAR)
            self.drawn = False

    # progress.Reporter
    def started(self, phase: progress.Phase) -> None:
        pass

    def ended(self, phase: progress.Phase) -> None:
        show = console.settings.verbose > 0 or (
            self.draw and console.elapsed() >= SHOW_AFTER and not console.settings.quiet
        )
        with self.lock:
            self._clear()
            if show:
                self.stream.write(phase.summary() + "\n")
            self.stream.flush()

    def frame(self, n: int) -> None:
        if console.settings.quiet:  # -q given after the command's name, once it was parsed
            with self.lock:
                self._clear()
            return
        step = progress.current()
        wait = deadline.longest_wait()
        parts = []
        if step is not None:
            parts.append(phase_line(step, n))
        if wait is not None and wait[1] >= SHOW_AFTER:
            limit = deadline.current()
            remaining = limit.remaining() if limit is not None else None
            parts.append(indicator_line(n, wait[0], wait[1], remaining))
        with self.lock:
            if parts:
                self.stream.write(_CLEAR + "  ".join(parts))
                self.drawn = True
            else:
                self._clear()
            self.stream.flush()

    def run(self, stop: threading.Event) -> None:
        n = 0
        while not stop.wait(_TICK):
            self.frame(n)
            n += 1
        with self.lock:
            self._clear()
            self.stream.flush()


def log_line(what: str, waited: float, remaining: float | None) -> str:
    """log_line is the one line a wait phase gets off a terminal."""
    line = f"waiting for {what} ({waited:.0f} s so far"
    if remaining is not None:
        line += f", deadline in {max(0.0, remaining):.0f} s"
    return line + ")"


def _log(stream: TextIO, stop: threading.Event) -> None:
    told: set[int] = set()
    while not stop.wait(_TICK):
        for token, what, waited in deadline.open_waits():
            if waited < LOG_AFTER or token in told or console.settings.quiet:
                continue
            told.add(token)
            limit = deadline.current()
            remaining = limit.remaining() if limit is not None else None
            with contextlib.suppress(OSError, ValueError):  # a closed pipe: the command says
                stream.write(log_line(what, waited, remaining) + "\n")
                stream.flush()


_active = threading.local()


@contextlib.contextmanager
def waiting_indicator(stream: TextIO) -> Iterator[None]:
    """waiting_indicator shows phases and waits on ``stream`` while the block runs: drawn on
    a terminal; off it, one summary line per phase with ``-v`` and one line per long wait;
    nothing with ``-q``. Nested uses share the outer one."""
    if getattr(_active, "on", False):
        yield
        return
    tty = stream.isatty() and not console.settings.quiet
    line = _Line(stream, draw=tty)
    _active.on = True
    try:
        with progress.reporting(line):
            if console.settings.quiet:
                yield
                return
            stop = threading.Event()
            target = line.run if tty else functools.partial(_log, stream)
            thread = threading.Thread(target=target, args=(stop,), daemon=True)
            thread.start()
            try:
                yield
            finally:
                stop.set()
                thread.join()
    finally:
        _active.on = False
