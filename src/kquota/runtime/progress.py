"""What a command is doing now: its phases, their counts, and how far each has gone.

The work (operations, the applier, the Kafka layer) says which phase it is in and reports
progress as it goes: :func:`phase` around a phase, :func:`advance` as each response arrives.
A command's front end may install one :class:`Reporter` (:func:`reporting`) to show it; with
none installed every call here is a no-op, so the library's own users see nothing.

Process-wide on purpose, like :mod:`kquota.runtime.deadline`: commands run one at a time, and
threading a callback through every layer down to one response of a pipelined request would
touch every caller.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Protocol

from kquota.runtime import timings


@dataclass
class Phase:
    """Phase is one labelled step of a command (load, describe, validate-only, commit, verify,
    audit): how many units it has to do (None when unknown until it ends), how many are done,
    and, at the end, what it counted (``count`` may be set by the work that knows it)."""

    name: str
    total: int | None
    unit: str
    began: float = field(default_factory=time.monotonic)
    done: int = 0
    count: int | None = None
    ended: float | None = None
    reads: bool = False
    """reads: the phase reads the cluster before it can count anything done (verification
    waits for whole describe answers, one per broker): its line shows what was read so far,
    and a moving bar while nothing is counted yet."""
    read: int = 0
    """How many entities the describe answers of this phase brought so far (every round,
    every broker): it moves with each answer while ``done`` waits for a whole round."""

    @property
    def seconds(self) -> float:
        return (self.ended if self.ended is not None else time.monotonic()) - self.began

    def summary(self) -> str:
        """summary is the phase's one line: ``describe: 100000 entities in 1.2 s``."""
        n = self.count if self.count is not None else (self.total or self.done)
        return f"{self.name}: {n} {self.unit} in {self.seconds:.1f} s"


class Reporter(Protocol):
    """Reporter shows phases; its methods are called from the command's thread."""

    def started(self, phase: Phase) -> None: ...

    def ended(self, phase: Phase) -> None: ...


_lock = threading.Lock()
_reporter: Reporter | None = None
_current: Phase | None = None


@contextlib.contextmanager
def reporting(reporter: Reporter) -> Iterator[None]:
    """reporting installs ``reporter`` for the block."""
    global _reporter
    previous, _reporter = _reporter, reporter
    try:
        yield
    finally:
        _reporter = previous


@contextlib.contextmanager
def phase(
    name: str, total: int | None = None, unit: str = "entities", *, reads: bool = False
) -> Iterator[Phase]:
    """phase marks a step of the work; the yielded :class:`Phase` takes ``count`` when the
    step learns it. A phase inside another (a describe inside verification) is counted into
    the outer one and not shown on its own. ``reads``: see :attr:`Phase.reads`."""
    global _current
    step = Phase(name, total, unit, reads=reads)
    reporter = _reporter
    if reporter is None or _current is not None:
        with timings.span(name):
            yield step
        return
    with _lock:
        _current = step
    reporter.started(step)
    try:
        with timings.span(name):
            yield step
    finally:
        step.ended = time.monotonic()
        with _lock:
            _current = None
        reporter.ended(step)


def advance(n: int = 1) -> None:
    """advance counts ``n`` units of the current phase done (one response's worth)."""
    with _lock:
        if _current is not None:
            _current.done += n


def read(n: int) -> None:
    """read counts ``n`` entities one describe answer brought into the current phase."""
    with _lock:
        if _current is not None:
            _current.read += n


def current() -> Phase | None:
    """current is the phase in progress, for a display thread to draw."""
    return _current
