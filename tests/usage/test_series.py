"""Rows into series: grouped by the sensor's tags, in time order, a repeated time once."""

from __future__ import annotations

import math

from kquota.principal import Principal
from kquota.usage.rows import FETCH_BYTE_RATE, PRODUCE_BYTE_RATE, Sample
from kquota.usage.series import group


def _row(
    user: str | None, client: str | None, metric: str, t: int, v: float, broker: str = "1"
) -> Sample:
    return Sample("prod", broker, user, client, metric, t, v)


def test_rows_group_by_tags_metric_and_broker_in_time_order() -> None:
    g = group(
        [
            _row("alice", None, PRODUCE_BYTE_RATE, 120_000, 3.0),
            _row("alice", None, PRODUCE_BYTE_RATE, 60_000, 1.0),
            _row("alice", None, PRODUCE_BYTE_RATE, 60_000, 2.0, broker="2"),
            _row("alice", "app", FETCH_BYTE_RATE, 60_000, 5.0),
            _row(None, "app", PRODUCE_BYTE_RATE, 60_000, 7.0),
        ]
    )
    alice = g.of(Principal("alice"), PRODUCE_BYTE_RATE)
    assert list(alice) == ["1", "2"]
    assert alice["1"].times_ms == (60_000, 120_000)
    assert alice["1"].values == (1.0, 3.0)
    # an empty tag is not the default entity: each tag set is a principal of its own
    assert g.of(Principal("alice", "app"), FETCH_BYTE_RATE)["1"].values == (5.0,)
    assert g.of(Principal(None, "app"), PRODUCE_BYTE_RATE)["1"].values == (7.0,)
    assert g.of(Principal("alice"), FETCH_BYTE_RATE) == {}
    assert g.principals == (Principal(None, "app"), Principal("alice"), Principal("alice", "app"))
    assert (g.rows, g.unattributed, g.dropped) == (5, 0, 0)
    assert (g.first_ms, g.last_ms) == (60_000, 120_000)


def test_a_repeated_time_counts_once_with_its_last_value() -> None:
    g = group(
        [
            _row("alice", None, PRODUCE_BYTE_RATE, 60_000, 1.0),
            _row("alice", None, PRODUCE_BYTE_RATE, 60_000, 9.0),
        ]
    )
    s = g.of(Principal("alice"), PRODUCE_BYTE_RATE)["1"]
    assert (s.times_ms, s.values) == ((60_000,), (9.0,))


def test_rows_of_no_principal_and_values_that_are_no_rate_are_counted_not_grouped() -> None:
    g = group(
        [
            _row(None, None, PRODUCE_BYTE_RATE, 60_000, 1.0),
            _row("alice", None, PRODUCE_BYTE_RATE, 60_000, math.nan),
            _row("alice", None, PRODUCE_BYTE_RATE, 120_000, math.inf),
            _row("alice", None, PRODUCE_BYTE_RATE, 180_000, -1.0),
        ]
    )
    assert g.series == {}
    assert (g.rows, g.unattributed, g.dropped) == (4, 1, 3)
    assert (g.first_ms, g.last_ms) == (None, None)
