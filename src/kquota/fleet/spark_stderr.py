"""The Spark driver's standard error, minus PySpark's worker noise.

When a job is cancelled (a command's deadline ran out), PySpark's daemon finds the socket to its
killed worker closed and prints a ``BrokenPipeError`` traceback through the driver JVM's
standard error: text that reads as a crash to an operator whose command ended cleanly with its
own one-line error. The JVM inherits the process's file descriptor 2 when it is launched, so
the launch is given a pipe instead, and a thread forwards what comes through it, leaving out
only those tracebacks.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterable, Iterator

_TRACEBACK = b"Traceback (most recent call last):"
# What a worker or daemon raises when the other end of its socket went away: cancellation.
# Which end a worker sees of a cancelled job depends on PySpark's version: a write into the
# closed socket (BrokenPipeError, ConnectionResetError), or from 4.2 often a read at its end
# (EOFError from read_int).
_PEER_GONE = (b"BrokenPipeError", b"ConnectionResetError", b"EOFError")
# A traceback longer than this is not the short worker one: forward it as it is.
_MAX_BLOCK = 64


def _is_worker_noise(block: list[bytes]) -> bool:
    frames = [line for line in block if line.lstrip().startswith(b'File "')]
    return (
        bool(frames)
        and block[-1].startswith(_PEER_GONE)
        and all(b"/pyspark/" in line or b"/pyspark.zip/" in line for line in frames)
    )


def without_worker_noise(lines: Iterable[bytes]) -> Iterator[bytes]:
    """without_worker_noise yields ``lines`` (each with its line ending) except the tracebacks
    whose frames are all PySpark's own and which end in a closed-socket error."""
    block: list[bytes] = []
    for line in lines:
        if not block:
            if line.rstrip(b"\r\n") == _TRACEBACK:
                block.append(line)
            else:
                yield line
            continue
        block.append(line)
        if line[:1] in (b" ", b"\t") and len(block) < _MAX_BLOCK:
            continue
        if not _is_worker_noise(block):
            yield from block
        block = []
    yield from block


def _forward(source: int, target: int) -> None:
    with open(source, "rb", buffering=0) as reader:
        for line in without_worker_noise(reader):
            with contextlib.suppress(OSError):  # a closed stderr is not the driver's problem
                os.write(target, line)
    os.close(target)


@contextlib.contextmanager
def filtered_stderr_for_children() -> Iterator[None]:
    """filtered_stderr_for_children makes processes started inside the block (the Spark
    driver JVM) write their standard error through :func:`without_worker_noise` to this
    process's standard error; this process's own writes after the block are untouched."""
    read_end, write_end = os.pipe()
    real_stderr = os.dup(2)
    threading.Thread(
        target=_forward, args=(read_end, real_stderr), name="spark-stderr", daemon=True
    ).start()
    os.dup2(write_end, 2)
    try:
        yield
    finally:
        os.dup2(real_stderr, 2)
        # Children keep their copies; the thread ends when the last of them closes it.
        os.close(write_end)
