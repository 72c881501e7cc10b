"""Local worker processes that can be stopped at any moment, leaving nothing held.

multiprocessing's Pool shares one result queue among its workers, guarded by a lock between
processes. A worker terminated while it sends a result (at a deadline, on Ctrl-C) dies holding
that lock, and the pool's own ``terminate()`` then waits for it for ever: CI saw ``kquota fleet
plan --timeout 1s --processes 2`` hang so. Here each worker has a pipe of its own and shares
nothing with the others, so stopping the workers is killing them.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import time
from collections.abc import Callable, Sequence
from multiprocessing.connection import Connection, wait
from typing import Any, Generic, TypeVar

from kquota.errors import KquotaError

T = TypeVar("T")
R = TypeVar("R")

STOP_WAIT = 5.0
"""How long a worker asked to stop may take before it is killed, in seconds."""


def _serve(conn: Connection, work: Callable[[Any], Any], init: Callable[[], None]) -> None:
    init()
    while True:
        try:
            task = conn.recv()
        except EOFError:
            return
        if task is None:
            return
        index, item = task
        try:
            answer: tuple[int, bool, Any] = (index, True, work(item))
        except BaseException as e:  # noqa: BLE001 - handed to the parent, which raises it
            answer = (index, False, e)
        try:
            conn.send(answer)
        except Exception as e:  # noqa: BLE001 - e.g. an exception that does not pickle
            conn.send((index, False, KquotaError(f"a worker's answer could not be sent: {e}")))


class LocalWorkers(Generic[T, R]):
    """LocalWorkers runs ``work`` over items in ``count`` processes, one item at a time each,
    and gives the results back by the items' index. Leaving the block stops every worker:
    idle ones are told to, and whatever is still running after :data:`STOP_WAIT` (or at once,
    when the block ends with an error) is killed."""

    def __init__(
        self,
        count: int,
        work: Callable[[T], R],
        *,
        start_method: str,
        init: Callable[[], None],
    ) -> None:
        self._context: Any = multiprocessing.get_context(start_method)
        self._count, self._work, self._init = count, work, init
        self._workers: list[tuple[Any, Connection]] = []
        self._idle: list[Connection] = []
        self._items: Sequence[T] = ()
        self._next = 0
        self._answers: dict[int, tuple[bool, Any]] = {}

    def __enter__(self) -> LocalWorkers[T, R]:
        for _ in range(self._count):
            ours, theirs = self._context.Pipe()
            process = self._context.Process(
                target=_serve, args=(theirs, self._work, self._init), daemon=True
            )
            process.start()
            theirs.close()
            self._workers.append((process, ours))
            self._idle.append(ours)
        return self

    def __exit__(self, exc_type: object, *exc: object) -> None:
        if exc_type is None:
            for _, conn in self._workers:
                with contextlib.suppress(OSError):
                    conn.send(None)
        end = time.monotonic() + (STOP_WAIT if exc_type is None else 0.0)
        for process, conn in self._workers:
            process.join(max(0.0, end - time.monotonic()))
            if process.is_alive():
                process.kill()
                process.join()
            conn.close()

    def submit(self, items: Sequence[T]) -> None:
        """submit hands ``items`` to the workers, as each becomes free."""
        self._items, self._next = items, 0
        self._dispatch()

    def result(self, index: int, timeout: float | None) -> R:
        """result is item ``index``'s result (its exception raised), waiting at most
        ``timeout`` seconds (None: no bound) before raising :class:`TimeoutError`."""
        end = None if timeout is None else time.monotonic() + timeout
        while index not in self._answers:
            left = None if end is None else end - time.monotonic()
            if left is not None and left <= 0:
                raise TimeoutError
            busy = [conn for _, conn in self._workers if conn not in self._idle]
            if not busy:
                raise KquotaError(f"no local worker process has item {index}")
            for conn in wait(busy, left):
                assert isinstance(conn, Connection)
                try:
                    got, ok, value = conn.recv()
                except EOFError:
                    raise KquotaError("a local worker process ended unexpectedly") from None
                self._answers[got] = (ok, value)
                self._idle.append(conn)
            self._dispatch()
        ok, value = self._answers.pop(index)
        if not ok:
            raise value
        return value  # type: ignore[no-any-return]

    def _dispatch(self) -> None:
        while self._idle and self._next < len(self._items):
            try:
                self._idle.pop().send((self._next, self._items[self._next]))
            except OSError:  # its end of the pipe is closed: the process is gone
                raise KquotaError("a local worker process ended unexpectedly") from None
            self._next += 1
