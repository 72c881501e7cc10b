"""What the command waits on, for how long, on stderr: drawn on a terminal, a line in a log.

On a terminal an indicator appears once a wait has lasted :data:`SHOW_AFTER` seconds (a
healthy cluster answers well before, so the normal output is untouched) and is erased when
the answer comes. Off a terminal (CI logs, pipes) nothing is drawn; instead a wait that lasts
:data:`LOG_AFTER` seconds gets one plain line, once per wait phase, so a pipeline's log says
why the job is quiet long before the deadline's message does.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import TextIO

from kquota import deadline

SHOW_AFTER = 1.0
LOG_AFTER = 5.0
"""Off a terminal: how long a wait lasts before it gets its line (a loaded CI runner's slow
answer, a second or two, stays out of the log)."""
_TICK = 0.2
_FRAMES = "|/-\\"
_CLEAR = "\r\x1b[2K"


def indicator_line(frame: int, what: str, waited: float, remaining: float | None) -> str:
    """indicator_line is one frame of the indicator (without the line-clearing prefix)."""
    line = f"{_FRAMES[frame % len(_FRAMES)]} waiting {waited:.0f} s for {what}"
    if remaining is not None:
        line += f" (deadline in {max(0.0, remaining):.0f} s)"
    return line


def _draw(stream: TextIO, stop: threading.Event) -> None:
    frame, drawn = 0, False
    while not stop.wait(_TICK):
        wait = deadline.longest_wait()
        if wait is None or wait[1] < SHOW_AFTER:
            if drawn:
                stream.write(_CLEAR)
                stream.flush()
                drawn = False
            continue
        limit = deadline.current()
        remaining = limit.remaining() if limit is not None else None
        stream.write(_CLEAR + indicator_line(frame, wait[0], wait[1], remaining))
        stream.flush()
        frame, drawn = frame + 1, True
    if drawn:
        stream.write(_CLEAR)
        stream.flush()


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
            if waited < LOG_AFTER or token in told:
                continue
            told.add(token)
            limit = deadline.current()
            remaining = limit.remaining() if limit is not None else None
            with contextlib.suppress(OSError, ValueError):  # a closed pipe: the command says
                stream.write(log_line(what, waited, remaining) + "\n")
                stream.flush()


@contextlib.contextmanager
def waiting_indicator(stream: TextIO) -> Iterator[None]:
    """waiting_indicator draws on ``stream`` while the block runs if it is a terminal, else
    writes one line per long wait."""
    stop = threading.Event()
    target = _draw if stream.isatty() else _log
    thread = threading.Thread(target=target, args=(stream, stop), daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
