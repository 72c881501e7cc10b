"""A waiting indicator on stderr, for a terminal only: what the command waits on, for how long.

It appears once a wait has lasted :data:`SHOW_AFTER` seconds (a healthy cluster answers
well before, so the normal output is untouched) and is erased when the answer comes. Off a
terminal (CI logs, pipes) it never draws: the deadline's message says what was waited on.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import TextIO

from kquota import deadline

SHOW_AFTER = 1.0
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


@contextlib.contextmanager
def waiting_indicator(stream: TextIO) -> Iterator[None]:
    """waiting_indicator draws on ``stream`` while the block runs, if it is a terminal."""
    if not stream.isatty():
        yield
        return
    stop = threading.Event()
    thread = threading.Thread(target=_draw, args=(stream, stop), daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
