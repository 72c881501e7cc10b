"""kquota.usage.window: one window rule for usage, recommend and the plan's replay.

The samples here are from 2026-01-01, long before the clock: a window counted from now
would select none of them, so every assertion below would fail under that rule.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kquota.usage.profile import profile
from kquota.usage.rows import PRODUCE_BYTE_RATE, PRODUCE_THROTTLE_TIME, Sample
from kquota.usage.samples import SampleFiles
from kquota.usage.source import samples_from
from kquota.usage.window import in_window, parse_since, window_start
from sample_rows import MINUTE, T0, series, write_jsonl

HOUR = 60 * MINUTE


def _rows() -> list[Sample]:
    # Two brokers whose newest samples differ: the window ends at the newest of all.
    return [
        *series("alice", None, PRODUCE_BYTE_RATE, range(13), step=10 * MINUTE),
        *series("bob", None, PRODUCE_BYTE_RATE, range(7), broker="2", step=10 * MINUTE),
        *series("bob", None, PRODUCE_THROTTLE_TIME, [0, 5], broker="2", start=T0 + HOUR, step=HOUR),
    ]


def test_window_start_counts_back_from_the_newest_sample() -> None:
    assert window_start(T0 + 2 * HOUR, HOUR) == T0 + HOUR


def test_in_window_keeps_both_ends_and_the_order_read() -> None:
    rows = _rows()
    kept = in_window(rows, HOUR)
    # the newest sample is alice's at T0 + 120 min: the window is [T0 + 60 min, T0 + 120 min]
    assert [s.timestamp_ms for s in kept if s.user == "alice"] == [
        T0 + m * MINUTE for m in range(60, 121, 10)
    ]
    assert [s.timestamp_ms for s in kept if s.user == "bob"] == [
        T0 + HOUR,
        T0 + HOUR,
        T0 + 2 * HOUR,
    ]
    assert kept == [s for s in rows if s in kept]
    assert in_window([], HOUR) == []


@pytest.mark.parametrize("since", ["30m", "1h", "90m", "7d"])
def test_usage_and_replay_select_the_same_samples(tmp_path: Path, since: str) -> None:
    """``kquota usage`` (profile) and ``plan --usage`` (samples_from) read the same file with
    the same ``--since``: the same samples, series by series."""
    path = write_jsonl(tmp_path / "s.jsonl", _rows())
    replayed = samples_from(str(path), since, "prod")
    profiles = profile(SampleFiles((path,), "prod"), since_ms=parse_since(since))
    by_series: dict[tuple[str, str | None, str], list[int]] = {}
    for s in replayed:
        by_series.setdefault((s.broker, s.user, s.metric), []).append(s.timestamp_ms)
    assert by_series  # an old file still has a window
    assert {
        (p.broker, p.user, p.metric): (p.count, p.first_ms, p.last_ms) for p in profiles.series
    } == {k: (len(v), min(v), max(v)) for k, v in by_series.items()}
    assert profiles.samples == len(replayed)


@pytest.mark.parametrize(
    ("text", "ms"),
    [("7d", 7 * 24 * HOUR), ("12h", 12 * HOUR), ("90m", 90 * MINUTE), ("3600s", HOUR),
     ("1h30m", 90 * MINUTE)],
)  # fmt: skip
def test_one_parser_reads_every_window(text: str, ms: int) -> None:
    """usage, recommend, the fleet commands and plan --usage read --since with this one
    parser: plan once refused 1h30m, which usage took."""
    assert parse_since(text) == ms


@pytest.mark.parametrize("text", ["7 days", "0d", "soon", "-1h"])
def test_a_bad_window_is_refused_naming_the_option(text: str) -> None:
    from kquota.errors import UsageError

    with pytest.raises(UsageError) as refused:
        parse_since(text, "--min-window")
    assert str(refused.value) == (
        f"--min-window {text!r}: not a window; use days (7d) or a duration (12h, 90m)"
    )
