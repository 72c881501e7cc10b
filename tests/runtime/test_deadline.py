"""The overall deadline: durations, nesting, bounding a wait that never ends, the message."""

from __future__ import annotations

import asyncio
import signal
import sys
import threading
import time

import pytest

from kquota.cli.waiting import indicator_line
from kquota.errors import UsageError
from kquota.runtime import deadline
from kquota.runtime.deadline import (
    DeadlineExceeded,
    bounded,
    check,
    format_duration,
    interrupting,
    on_expiry,
    parse_duration,
    waiting_on,
    within_deadline,
)


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("90", 90.0), ("90s", 90.0), ("5m", 300.0), ("1h", 3600.0), ("1m30s", 90.0), ("0.5s", 0.5)],
)
def test_durations(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "soon", "5x", "-3", "0", "1m-3s"])
def test_bad_durations_say_what_is_allowed(text: str) -> None:
    with pytest.raises(UsageError, match=r"--timeout .*(use 90s, 5m, 1h or 1m30s|more than zero)"):
        parse_duration(text)


def test_an_inner_bound_never_reaches_past_the_outer_one_unless_it_is_a_grace() -> None:
    with bounded(1.0, "--timeout 1s") as outer:
        with bounded(60.0, "verification") as inner:
            assert inner.at == outer.at and inner.label == "--timeout 1s"
            assert deadline.current() is inner
        with bounded(60.0, "settling", cap=False) as grace:
            assert grace.remaining() > 30
        assert deadline.current() is outer
    assert deadline.current() is None


async def _wait_forever() -> None:
    with deadline.waiting_on("DescribeClientQuotas from 127.0.0.1:1"):
        await asyncio.Event().wait()


def test_a_wait_that_never_ends_stops_at_the_deadline_and_names_what_it_waited_on() -> None:
    start = time.monotonic()
    with bounded(0.3, "--timeout 0.3s"), pytest.raises(DeadlineExceeded) as e:
        asyncio.run(within_deadline(_wait_forever()))
    assert time.monotonic() - start < 2
    assert "the --timeout 0.3s deadline ran out" in str(e.value)
    assert "waiting for DescribeClientQuotas from 127.0.0.1:1 for 0." in str(e.value)
    assert deadline.longest_wait() is None


def test_without_a_deadline_a_call_is_not_wrapped() -> None:
    async def answer() -> int:
        return 42

    coro = answer()
    assert within_deadline(coro) is coro
    assert asyncio.run(coro) == 42


def test_the_indicator_names_the_wait_and_the_deadline() -> None:
    line = indicator_line(1, "AlterClientQuotas from 127.0.0.1:9092", 12.4, 47.6)
    assert line == "/ waiting 12 s for AlterClientQuotas from 127.0.0.1:9092 (deadline in 48 s)"


def test_hours_are_written_as_taken() -> None:
    assert [format_duration(s) for s in (3600.0, 600.0, 90.0)] == ["1h", "10m", "90s"]
    assert all(parse_duration(format_duration(s)) == s for s in (7200.0, 600.0, 90.0, 0.5))


def test_interrupting_stops_plain_python_work_at_the_deadline() -> None:
    previous = signal.getsignal(signal.SIGALRM)
    ran_out = pytest.raises(DeadlineExceeded, match=r"0.2s deadline ran out: it was waiting for a")
    with ran_out, bounded(0.2, "--timeout 0.2s"), interrupting(), waiting_on("a loop"):
        while True:
            pass
    # Disarmed, and the handler put back: nothing fires after the block.
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    assert signal.getsignal(signal.SIGALRM) is previous


class _SlowFinaliser:
    """_SlowFinaliser spins in ``__del__`` until the alarm has fired there: Python swallows
    what a signal handler raises inside a finaliser."""

    def __del__(self) -> None:
        until = time.monotonic() + 0.5
        while time.monotonic() < until:
            pass


def test_interrupting_survives_the_alarm_landing_in_a_finaliser() -> None:
    hook = sys.unraisablehook
    seen: list[BaseException | None] = []
    sys.unraisablehook = lambda u: seen.append(u.exc_value)
    try:
        ran_out = pytest.raises(DeadlineExceeded, match="0.1s deadline ran out")
        with ran_out, bounded(0.1, "--timeout 0.1s"), interrupting():
            _SlowFinaliser()  # dropped at once: its __del__ runs while the alarm fires
            until = time.monotonic() + 10
            while time.monotonic() < until:
                pass
            pytest.fail("the deadline was lost in the finaliser")
        # The raise inside __del__ was dropped, not reported, and the deadline still ended
        # the loop after it.
        assert seen == []
    finally:
        sys.unraisablehook = hook
    assert sys.unraisablehook is hook


def test_on_expiry_stops_work_elsewhere_and_raises_the_deadline_not_its_error() -> None:
    stopped = threading.Event()
    ran_out = pytest.raises(DeadlineExceeded, match="the --timeout 0.2s deadline ran out")
    with ran_out, bounded(0.2, "--timeout 0.2s"), on_expiry(stopped.set):
        assert stopped.wait(30)
        raise RuntimeError("job cancelled")  # what the cancelled work raises
    # Stopped again and again while the work goes on (a Spark job started after the first
    # cancel); a stop that fails is no traceback of its own.
    calls: list[float] = []

    def failing_stop() -> None:
        calls.append(time.monotonic())
        raise RuntimeError("the context is gone")

    ran_out = pytest.raises(DeadlineExceeded)
    with ran_out, bounded(0.1, "--timeout 0.1s"), on_expiry(failing_stop, every=0.05):
        while len(calls) < 3:
            time.sleep(0.01)
    # Without a deadline there is nothing to stop, and the work's own errors pass.
    with pytest.raises(RuntimeError), on_expiry(stopped.clear):
        raise RuntimeError("its own error")
    assert stopped.is_set()


def test_check_raises_only_once_the_deadline_has_run_out() -> None:
    check()  # no deadline: nothing to check
    with bounded(60, "--timeout 1m"):
        check()
    with bounded(0.01, "--timeout 0.01s"):
        time.sleep(0.05)
        with pytest.raises(DeadlineExceeded):
            check()
