"""One overall deadline per command, and what the command is waiting on right now.

A hung broker (SIGSTOP, a frozen VM) answers nothing and closes nothing: without an overall
bound every request waits its full ``request.timeout.ms``, then retries on its own, and a
command can sit silent for many minutes. So every command that reaches a cluster runs under
one :class:`Deadline` (``--timeout``); :func:`within_deadline` wraps each call into the Kafka
layer, so connecting, requests, retries and their backoff all end when it runs out.

The Kafka layer records what it is waiting on (:func:`waiting_on`); the deadline's message
and the terminal's waiting indicator (:mod:`kquota.cli.waiting`) both name it.

Deadlines nest: :func:`bounded` narrows the current one (verification inside apply), and
``cap=False`` grants a short grace past an expired one (settling the batch that was in flight
when apply's deadline ran out). The stack is process-wide on purpose: commands run one at a
time, and threading a deadline argument through every layer would touch every caller. Work
that must run side by side with deadlines of its own (the clusters of a fleet wave) runs in
processes of its own, each under its own stack (:mod:`kquota.operations.fleet_parallel`):
SIGINT, which stops an apply, reaches a process's main thread only, so threads could share
neither the deadline nor the stop.
"""

from __future__ import annotations

import contextlib
import itertools
import re
import signal
import sys
import threading
import time
from collections.abc import Callable, Coroutine, Iterator
from dataclasses import dataclass
from types import FrameType
from typing import Any, TypeVar

from kquota.errors import KquotaError, UsageError

T = TypeVar("T")

DEFAULT_TIMEOUTS: dict[str, float] = {
    "apply": 600.0,
    "alter": 120.0,
    "describe": 120.0,
    "drift": 300.0,
    "export": 300.0,
    "fleet": 3600.0,
    "lease": 60.0,
    "history": 120.0,
    "plan": 300.0,
    "recommend": 3600.0,
    "resolve": 300.0,
    "revert": 300.0,
    "snapshot": 300.0,
    "topics": 120.0,
    "usage": 3600.0,
}
"""Default ``--timeout`` per command, in seconds. Generous for a healthy cluster (describe of
100k entities takes about a second; a 100k-entity apply about ten) and short enough that a
hung broker fails a CI job in minutes, not at the job's own limit. Fleet commands read files,
not a cluster: an hour is several times a 10-million-entity fleet plan on two cores, and
bounds a Spark cluster that never gives the job an executor. ``usage`` and ``recommend`` read
a window of samples (millions of rows in process): an hour, like a fleet's files."""


class DeadlineExceeded(KquotaError):
    """DeadlineExceeded: the command's overall ``--timeout`` ran out."""


@dataclass(eq=False)  # nested deadlines may be equal in value; the stack is by identity
class Deadline:
    """Deadline is a point on the monotonic clock and the name the operator knows it by."""

    at: float
    label: str

    def remaining(self) -> float:
        return self.at - time.monotonic()

    @property
    def expired(self) -> bool:
        return self.remaining() <= 0

    def exceeded(self) -> DeadlineExceeded:
        what = _last_unanswered()
        tail = f": it was waiting for {what[0]} for {what[1]:.1f} s" if what else ""
        return DeadlineExceeded(f"the {self.label} deadline ran out{tail}")


_stack: list[Deadline] = []


def current() -> Deadline | None:
    """current is the innermost deadline in force, or None outside any command's."""
    return _stack[-1] if _stack else None


@contextlib.contextmanager
def bounded(seconds: float, label: str, *, cap: bool = True) -> Iterator[Deadline]:
    """bounded runs its block under a deadline ``seconds`` from now.

    With ``cap`` (the default) it never reaches past the deadline already in force.
    """
    at = time.monotonic() + seconds
    outer = current()
    if cap and outer is not None and outer.at < at:
        at, label = outer.at, outer.label
    deadline = Deadline(at, label)
    _stack.append(deadline)
    try:
        yield deadline
    finally:
        _stack.remove(deadline)


async def _bounded(coro: Coroutine[Any, Any, T], deadline: Deadline) -> T:
    remaining = deadline.remaining()
    if remaining <= 0:
        coro.close()
        raise deadline.exceeded()
    import asyncio  # here: a command that never connects (an offline plan) skips loading it

    try:
        return await asyncio.wait_for(coro, remaining)
    except TimeoutError:
        if deadline.expired:
            raise deadline.exceeded() from None
        raise


def within_deadline(coro: Coroutine[Any, Any, T]) -> Coroutine[Any, Any, T]:
    """within_deadline bounds ``coro`` by the current deadline (unchanged when there is none)."""
    deadline = current()
    return coro if deadline is None else _bounded(coro, deadline)


@contextlib.contextmanager
def interrupting() -> Iterator[None]:
    """interrupting raises the current deadline's :class:`DeadlineExceeded` inside the block
    the moment it runs out: for plain Python work in this process (the local fleet engine),
    which no ``await`` can bound. It takes SIGALRM, so only on the main thread; elsewhere (or
    with no deadline) it does nothing, and the work checks :attr:`Deadline.expired` itself.
    """
    limit = current()
    if limit is None or threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(signum: int, frame: FrameType | None) -> None:
        raise limit.exceeded()

    previous_hook = sys.unraisablehook

    def swallowed(unraisable: Any) -> None:
        # The alarm landed where Python cannot raise (a finaliser, a weakref callback): it
        # drops the exception there, so ring again shortly to end the block after all.
        if isinstance(unraisable.exc_value, DeadlineExceeded):
            signal.setitimer(signal.ITIMER_REAL, 0.01)
        else:
            previous_hook(unraisable)

    previous = signal.signal(signal.SIGALRM, expire)
    sys.unraisablehook = swallowed
    signal.setitimer(signal.ITIMER_REAL, max(limit.remaining(), 0.001))
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        sys.unraisablehook = previous_hook


@contextlib.contextmanager
def on_expiry(stop: Callable[[], None], *, every: float | None = None) -> Iterator[None]:
    """on_expiry calls ``stop`` from a watcher thread if the current deadline runs out while
    the block runs (cancelling work that runs elsewhere: a Spark job group), and again every
    ``every`` seconds until the block ends, for work that starts new pieces after the first
    stop (the next Spark job). The block then raises the deadline's
    :class:`DeadlineExceeded`, whatever the stopped work raised."""
    limit = current()
    if limit is None:
        yield
        return
    done = threading.Event()

    def watch() -> None:
        # In slices, re-reading the deadline: one that is moved earlier (a test that makes it
        # fall inside the work it watches) still stops the work on time.
        while not limit.expired:
            if done.wait(min(max(limit.remaining(), 0.0), 0.5)):
                return
        while True:
            # A failed stop (the work ended meanwhile) must not print a thread's traceback:
            # the block still ends with the deadline's error below.
            with contextlib.suppress(Exception):
                stop()
            if every is None or done.wait(every):
                return

    watcher = threading.Thread(target=watch, name="deadline-watcher", daemon=True)
    watcher.start()
    try:
        yield
    except Exception:
        if limit.expired:
            raise limit.exceeded() from None
        raise
    finally:
        done.set()
        watcher.join(5.0)
    if limit.expired:
        raise limit.exceeded()


def check() -> None:
    """check raises the current deadline's :class:`DeadlineExceeded` if it has run out: a
    step boundary in work the deadline cannot cut (before writing results, between clusters).
    """
    limit = current()
    if limit is not None and limit.expired:
        raise limit.exceeded()


# What the Kafka layer waits on: token -> (what, since). Several requests can be in flight.
_waits: dict[int, tuple[str, float]] = {}
_tokens = itertools.count()
_unanswered: list[tuple[str, float]] = []


@contextlib.contextmanager
def waiting_on(what: str) -> Iterator[None]:
    """waiting_on marks the block as waiting for ``what`` (an answer, a connection)."""
    token = next(_tokens)
    since = time.monotonic()
    _waits[token] = (what, since)
    try:
        yield
    except BaseException:
        # Cut off (the deadline's cancellation or a signal): remembered for the message.
        _unanswered[:] = [(what, time.monotonic() - since)]
        raise
    else:
        # Answered, but only after the deadline ran out (a step no await can cut, such as a
        # JVM starting): the next check's message names it, not an unrelated older wait.
        limit = current()
        if limit is not None and limit.expired:
            _unanswered[:] = [(what, time.monotonic() - since)]
    finally:
        del _waits[token]


def longest_wait() -> tuple[str, float] | None:
    """longest_wait is the oldest wait still open and how long it has lasted, if any."""
    if not _waits:
        return None
    what, since = min(list(_waits.values()), key=lambda w: w[1])
    return what, time.monotonic() - since


def open_waits() -> list[tuple[int, str, float]]:
    """open_waits is every wait still open: its token (one per wait), what, and for how long."""
    now = time.monotonic()
    return [(token, what, now - since) for token, (what, since) in list(_waits.items())]


def _last_unanswered() -> tuple[str, float] | None:
    return longest_wait() or (_unanswered[0] if _unanswered else None)


_DURATION = re.compile(
    r"(?:([0-9]+(?:\.[0-9]+)?)h)?(?:([0-9]+(?:\.[0-9]+)?)m)?(?:([0-9]+(?:\.[0-9]+)?)s?)?"
)
DURATION_SYNTAX = "90s, 5m, 1h or 1m30s"
"""The one duration syntax of every time option (a bare number still means seconds)."""


def parse_duration(
    text: str,
    option: str = "--timeout",
    *,
    minimum: float | None = None,
    maximum: float | None = None,
) -> float:
    """parse_duration reads ``90s``, ``5m``, ``1h``, ``1m30s`` (or ``90``: seconds) as seconds.

    Without bounds a duration must be more than zero; with them it must lie within
    ``minimum..maximum``, and the message says so. The message names ``option``.
    """
    allowed = (
        f"; allowed: {format_duration(minimum)} to {format_duration(maximum)}"
        if minimum is not None and maximum is not None
        else ""
    )
    stripped = text.strip()
    m = _DURATION.fullmatch(stripped)
    if not stripped or m is None or not any(m.groups()):
        raise UsageError(f"{option} {_shown(text)}: not a duration; use {DURATION_SYNTAX}{allowed}")
    h, mins, s = (float(g) if g else 0.0 for g in m.groups())
    seconds = h * 3600 + mins * 60 + s
    if seconds <= 0 and not allowed:
        raise UsageError(f"{option} {_shown(text)}: must be more than zero")
    if (minimum is not None and seconds < minimum) or (maximum is not None and seconds > maximum):
        raise UsageError(f"{option} {_shown(text)}: out of range{allowed}")
    return seconds


def _shown(text: str) -> str:
    # An option's value is the operator's own, but a 1 MB argument must not flood the log.
    return repr(text if len(text) <= 40 else text[:40] + "…")


def format_duration(seconds: float) -> str:
    """format_duration writes seconds the way --timeout takes them (``1h``, ``10m``, ``90s``)."""
    if seconds >= 3600 and seconds % 3600 == 0:
        return f"{int(seconds // 3600)}h"
    if seconds >= 60 and seconds % 60 == 0:
        return f"{int(seconds // 60)}m"
    return f"{seconds:g}s"
