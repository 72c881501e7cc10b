"""SIGINT and SIGTERM during apply: a controlled stop, then the same report a broken
connection gets.

Python turns SIGINT into KeyboardInterrupt, and ``asyncio.Runner`` (inside WireAdmin) turns
it into cancelling the request in flight first, so the event loop and the connection stay
usable for settling. SIGTERM (what a cancelled CI job or ``kill`` sends) ends the process
silently by default; :func:`signals_stop_apply` routes it through the same SIGINT handler, so
both stop the same way, and :func:`stop_signal` tells them apart afterwards for the report
and the exit status (128 + signal number: 130 for SIGINT, 143 for SIGTERM).

The applier settles the batch that was in flight by describing (a few seconds at most). A
second signal while it settles stops that too: the in-flight batch stays "uncertain".
"""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator
from types import FrameType

_received: list[int] = []


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    _received.append(signum)
    handler = signal.getsignal(signal.SIGINT)
    if callable(handler):
        # default_int_handler raises KeyboardInterrupt; asyncio.Runner's cancels its task.
        handler(signal.SIGINT, frame)
    else:
        raise KeyboardInterrupt


@contextlib.contextmanager
def signals_stop_apply() -> Iterator[None]:
    """signals_stop_apply makes SIGTERM stop the block as SIGINT (KeyboardInterrupt) does."""
    _received.clear()
    previous = signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def stop_signal() -> int:
    """stop_signal is the signal behind the latest KeyboardInterrupt: SIGTERM if one came."""
    return signal.SIGTERM if _received else signal.SIGINT


def signal_name(signum: int) -> str:
    return signal.Signals(signum).name


def exit_status(signum: int) -> int:
    """exit_status is the shell's convention for death by a signal: 128 + its number."""
    return 128 + signum
