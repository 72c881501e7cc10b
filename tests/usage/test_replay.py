"""The throttle replay: each changed bound replayed on the observed per-broker series with
the broker's model, worst broker per principal, censored principals marked, harder first."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from kquota.model import Entity
from kquota.plan.replay import QuotaWindow
from kquota.plan.resolver import ResolutionChange, ResolvedQuota
from kquota.principal import Principal
from kquota.usage.replay import percent, replay, step_ms
from kquota.usage.rows import (
    FETCH_BYTE_RATE,
    PRODUCE_BYTE_RATE,
    PRODUCE_THROTTLE_TIME,
    REQUEST_TIME,
    Sample,
)
from kquota.usage.series import group

P = "producer_byte_rate"
STEP = 60_000


def _rows(
    user: str | None,
    client: str | None,
    values: Sequence[float],
    *,
    metric: str = PRODUCE_BYTE_RATE,
    broker: str = "1",
    start: int = 0,
) -> list[Sample]:
    return [
        Sample("prod", broker, user, client, metric, start + i * STEP, v)
        for i, v in enumerate(values)
    ]


def _q(value: float, source: Entity | None = None) -> ResolvedQuota:
    return ResolvedQuota(P, value, source or Entity.of({"user": None}))


def _change(
    p: Principal, before: float | None, after: float | None, key: str = P
) -> ResolutionChange:
    b = None if before is None else ResolvedQuota(key, before, Entity.of({"user": None}))
    a = None if after is None else ResolvedQuota(key, after, Entity.of({"user": None}))
    return ResolutionChange(p, key, b, a)


ALICE = Principal("alice")


def test_a_lowered_bound_throttles_the_intervals_above_it() -> None:
    g = group(_rows("alice", None, [100, 300, 100, 300]))
    report = replay([_change(ALICE, None, 200)], g)
    (r,) = report.replayed
    assert r.before.throttled_ms == 0 and r.before.bound is None
    assert (r.after.throttled_ms, r.after.observed_ms) == (2 * STEP, 4 * STEP)
    assert r.after.fraction == 0.5
    assert (r.after.peak_rate, r.after.peak_over) == (300, 100)
    # QuotaUtils.throttleTime over the default 11 x 1 s window: (300 - 200) / 200 x 11 s
    assert r.after.throttle_time_ms == pytest.approx(5_500)
    assert r.harder and not r.censored
    assert (r.brokers, r.samples) == (1, 4)


def test_a_bound_above_every_sample_throttles_nothing() -> None:
    g = group(_rows("alice", None, [100, 300]))
    (r,) = replay([_change(ALICE, 100, 400)], g).replayed
    assert r.before.throttled_ms == STEP
    assert r.after.throttled_ms == 0 and r.after.peak_over == 0
    assert r.after.throttle_time_ms is None
    assert not r.harder


def test_a_rate_equal_to_the_bound_is_not_throttled() -> None:
    # the broker's Quota is an upper bound: a value at the bound is accepted
    g = group(_rows("alice", None, [200, 200]))
    (r,) = replay([_change(ALICE, None, 200)], g).replayed
    assert r.after.throttled_ms == 0


def test_the_window_is_num_times_size_and_request_time_is_capped_at_one_sample() -> None:
    window = QuotaWindow(num=30, size_seconds=2, source="declared")
    g = group(_rows("alice", None, [300]))
    (r,) = replay([_change(ALICE, None, 100)], g, window).replayed
    assert r.after.throttle_time_ms == pytest.approx(2 * 60_000)
    rq = group(_rows("alice", None, [300], metric=REQUEST_TIME))
    change = _change(ALICE, None, 100, key="request_percentage")
    (r,) = replay([change], rq, window).replayed
    assert r.after.throttle_time_ms == pytest.approx(2_000)  # ClientRequestQuotaManager's cap


def test_the_worst_broker_gives_the_time_and_any_broker_the_peak() -> None:
    rows = _rows("alice", None, [300, 100, 100, 100], broker="1")
    rows += _rows("alice", None, [250, 250, 250, 100], broker="2")
    (r,) = replay([_change(ALICE, None, 200)], group(rows)).replayed
    assert r.after.broker == "2"
    assert r.after.throttled_ms == 3 * STEP and r.after.fraction == 0.75
    assert r.after.brokers_throttled == 2
    assert r.after.peak_rate == 300 and r.after.peak_over == 100
    assert (r.brokers, r.samples) == (2, 8)


def test_a_gap_in_the_samples_is_not_observed_time() -> None:
    times = [0, STEP, 2 * STEP, 6 * STEP]
    rows = [Sample("prod", "1", "alice", None, PRODUCE_BYTE_RATE, t, 300) for t in times]
    (r,) = replay([_change(ALICE, None, 200)], group(rows)).replayed
    assert r.after.observed_ms == 4 * STEP
    assert r.after.throttled_ms == 4 * STEP


def test_step_is_the_usual_gap() -> None:
    assert step_ms([0, 15_000, 30_000, 90_000]) == 15_000
    assert step_ms([5]) == 60_000


def test_a_bound_of_zero_throttles_any_traffic_and_has_no_finite_throttle_time() -> None:
    (r,) = replay([_change(ALICE, None, 0)], group(_rows("alice", None, [0, 1]))).replayed
    assert r.after.throttled_ms == STEP
    assert r.after.throttle_time_ms is None


def test_a_principal_already_throttled_is_censored() -> None:
    rows = _rows("alice", None, [200, 200])
    rows += _rows("alice", None, [0, 24_000], metric=PRODUCE_THROTTLE_TIME, broker="2")
    (r,) = replay([_change(ALICE, 200, 100)], group(rows)).replayed
    assert r.censored and r.censored_brokers == ("2",)
    quiet = _rows("bob", None, [200]) + _rows("bob", None, [0], metric=PRODUCE_THROTTLE_TIME)
    (r,) = replay([_change(Principal("bob"), 200, 100)], group(quiet)).replayed
    assert not r.censored


def test_harder_throttled_first() -> None:
    rows = _rows("a", None, [300, 300, 100, 100])  # 50% after
    rows += _rows("b", None, [300, 300, 300, 100])  # 75% after
    rows += _rows("c", None, [300, 300, 300, 100])  # 75% after, 75% before: no rise
    changes = [
        _change(Principal("a"), None, 200),
        _change(Principal("c"), 200, 250),
        _change(Principal("b"), None, 200),
    ]
    order = [r.change.principal.user for r in replay(changes, group(rows)).replayed]
    assert order == ["b", "c", "a"]


def test_changes_without_samples_or_without_a_sensor_are_not_replayed() -> None:
    g = group(_rows("alice", None, [300]))
    fetch = _change(ALICE, None, 100, key="consumer_byte_rate")
    mutation = _change(ALICE, None, 1, key="controller_mutation_rate")
    report = replay([fetch, mutation, _change(Principal("nobody"), None, 1)], g)
    assert report.replayed == ()
    assert [c.key for c in report.unobserved] == ["consumer_byte_rate", P]
    assert FETCH_BYTE_RATE not in g.series[ALICE]


def test_the_guard_stops_a_plan_throttling_past_the_fraction_and_longer_than_before() -> None:
    rows = _rows("alice", None, [300, 300, 100, 100])
    rows += _rows("bob", None, [300, 300, 300, 100])
    changes = [_change(ALICE, None, 200), _change(Principal("bob"), 100, 200)]
    report = replay(changes, group(rows), max_throttled_fraction=0.25)
    # bob is throttled 75% after, but was 100% before: a plan that loosens never stops
    assert report.stopped == (
        "{user=alice} producer_byte_rate: throttled 50.0% of the observed time after the plan "
        "(was 0.0%), over max_throttled_fraction=0.25",
    )
    assert report.stops
    allowed = replay(changes, group(rows), max_throttled_fraction=0.25, throttling_allowed=True)
    assert allowed.stopped == report.stopped and not allowed.stops
    assert replay(changes, group(rows)).stopped == ()
    assert replay(changes, group(rows), max_throttled_fraction=0.5).stopped == ()


def test_the_guard_names_a_hostile_principal_safely() -> None:
    rows = _rows("evil\nname", None, [300])
    change = _change(Principal("evil\nname"), None, 1)
    report = replay([change], group(rows), max_throttled_fraction=0)
    assert report.stopped[0].startswith("{user=evil\\x0aname} producer_byte_rate: throttled")


def test_percent_never_shows_a_small_share_as_none() -> None:
    assert percent(0.0) == "0.0%"
    assert percent(0.0004) == "<0.1%"
    assert percent(0.125) == "12.5%"


def test_the_json_form_carries_all_of_it() -> None:
    rows = _rows("alice", None, [300, 100]) + _rows(None, None, [5])
    report = replay([_change(ALICE, None, 200)], group(rows), source="usage.jsonl")
    data = report.to_data()
    assert data["source"] == "usage.jsonl"
    assert data["window"] == {"num": 11, "size_seconds": 1, "source": "Kafka's defaults"}
    assert (data["rows"], data["unattributed_rows"]) == (3, 1)
    (p,) = data["principals"]
    assert p["principal"] == {"user": "alice"}
    assert p["before"] == {"value": None, "source": None}
    assert p["after"] == {"value": 200, "source": {"user": None}}
    assert p["throttled_after"]["throttled_fraction"] == 0.5
    assert p["throttled_after"]["peak_over_bound"] == 100
    assert p["censored"] is False
