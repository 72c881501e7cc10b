"""Off a terminal, a long wait gets one plain line per wait phase (issue 19 item 6)."""

from __future__ import annotations

import io
import time

import pytest

from kquota.cli import waiting
from kquota.cli.waiting import log_line, waiting_indicator
from kquota.runtime import deadline
from polling import assert_eventually


def test_the_log_line_names_the_wait_its_length_and_the_deadline() -> None:
    assert (
        log_line("X from b:9092", 5.2, 14.6)
        == "waiting for X from b:9092 (5 s so far, deadline in 15 s)"
    )
    assert log_line("X", 6.0, None) == "waiting for X (6 s so far)"


def test_off_a_terminal_each_long_wait_phase_gets_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(waiting, "LOG_AFTER", 0.1)
    stream = io.StringIO()  # not a terminal: no frames, no escapes
    with deadline.bounded(60, "--timeout 1m"), waiting_indicator(stream):
        with deadline.waiting_on("the first thing"):
            assert_eventually(lambda: "the first thing" in stream.getvalue())
            seen = stream.getvalue()
            # Several ticks later, still one line for this phase.
            ticks = time.monotonic() + 5 * waiting._TICK
            assert_eventually(lambda: time.monotonic() > ticks)
            assert stream.getvalue() == seen
        with deadline.waiting_on("the second thing"):
            assert_eventually(lambda: "the second thing" in stream.getvalue())
        with deadline.waiting_on("a quick answer"):
            pass
    lines = stream.getvalue().splitlines()
    assert [line.split(" (")[0] for line in lines] == [
        "waiting for the first thing",
        "waiting for the second thing",
    ]
    assert all(line.endswith(" s)") and "deadline in " in line for line in lines)
    assert "\r" not in stream.getvalue() and "\x1b" not in stream.getvalue()


def test_a_wait_answered_only_after_the_deadline_is_what_the_message_names() -> None:
    # A step that no await can cut (a JVM starting) ends late; the check after it must say
    # what took the time, not end with a bare "deadline ran out".
    with deadline.bounded(0.05, "--timeout 20s") as limit:
        with deadline.waiting_on("the Spark session to start"):
            assert_eventually(lambda: limit.expired)
        with pytest.raises(deadline.DeadlineExceeded) as e:
            deadline.check()
    assert str(e.value).startswith(
        "the --timeout 20s deadline ran out: it was waiting for the Spark session to start for "
    )
