"""Local worker processes: results by index, errors carried back, and stopping them at any
moment, even while one is in the middle of sending a result, with nothing left behind."""

from __future__ import annotations

import multiprocessing
import os
import time

import pytest

from kquota.errors import KquotaError
from kquota.fleet.workers import LocalWorkers


def _nothing() -> None:
    return None


def _square_or_fail(n: int) -> int:
    if n == 3:
        raise ValueError("three is refused")
    return n * n


def _big_or_forever(n: int) -> bytes:
    if n == 0:
        time.sleep(600)
    return b"x" * (64 << 20)  # far more than a pipe holds: the send blocks until read


def _exit_at_once(n: int) -> int:
    os._exit(3)


def test_results_come_back_by_index_and_a_workers_error_is_raised_here() -> None:
    with LocalWorkers(2, _square_or_fail, start_method="fork", init=_nothing) as pool:
        pool.submit(list(range(6)))
        assert [pool.result(i, 60) for i in (0, 1, 2)] == [0, 1, 4]
        with pytest.raises(ValueError, match="three is refused"):
            pool.result(3, 60)
        assert [pool.result(i, 60) for i in (4, 5)] == [16, 25]
    assert multiprocessing.active_children() == []


def test_leaving_on_an_error_kills_a_worker_that_is_sending_and_one_still_working() -> None:
    # With multiprocessing's Pool, a worker killed while it sends holds the shared result
    # queue's lock for ever, and the pool's terminate() hung on it (a clean-clone CI run's floors).
    start = time.monotonic()
    with (
        pytest.raises(TimeoutError),
        LocalWorkers(2, _big_or_forever, start_method="fork", init=_nothing) as pool,
    ):
        pool.submit([0, 1])
        time.sleep(0.5)  # item 1's worker is now blocked sending 64 MiB nobody reads
        raise TimeoutError  # a deadline, while item 0 still runs
    assert time.monotonic() - start < 30
    assert multiprocessing.active_children() == []


def test_a_worker_that_dies_is_an_error_not_a_hang() -> None:
    with LocalWorkers(1, _exit_at_once, start_method="fork", init=_nothing) as pool:
        pool.submit([1])
        with pytest.raises(KquotaError, match="ended unexpectedly"):
            pool.result(0, 60)
    assert multiprocessing.active_children() == []
