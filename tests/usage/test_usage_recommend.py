"""Recommendations: sized from the percentile and headroom, never below use, censored raised,
protected never lowered, defaults sized for their population, and a patch the loader reads."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from kquota.desired.exportable import export_yaml
from kquota.desired.format import KIND_OVERLAY
from kquota.desired.loader import load_desired
from kquota.model import Entity, QuotaState
from kquota.plan.resolver import Principal, resolve
from kquota.usage.profile import profile
from kquota.usage.recommend import (
    CENSORED_NOTE,
    PROTECTED_NOTE,
    Recommendation,
    RecommendOptions,
    readable,
    recommend,
)
from kquota.usage.report import usage_report
from kquota.usage.rows import FETCH_BYTE_RATE, PRODUCE_BYTE_RATE, PRODUCE_THROTTLE_TIME, Sample
from sample_rows import DAY, series, week

MiB = 2**20
BASE = """\
apiVersion: kquota/v1
kind: ClientQuotas
quotas:
  - match: {user: alice}
    set: {producer_byte_rate: 10MiB, consumer_byte_rate: 20MiB}
  - match: {user: <default>}
    set: {producer_byte_rate: 1MiB}
"""


@pytest.mark.parametrize(
    ("key", "value", "rounded"),
    [
        ("producer_byte_rate", 13.2 * MiB, 14 * MiB),
        ("producer_byte_rate", 14 * MiB, 14 * MiB),
        ("producer_byte_rate", 157 * MiB, 160 * MiB),
        ("producer_byte_rate", 1.23 * MiB, 1.25 * MiB),
        ("producer_byte_rate", 9 * MiB, 9 * MiB),
        ("producer_byte_rate", 9.01 * MiB, 9.25 * MiB),
        ("producer_byte_rate", 12_345.0, 13 * 1024),
        ("consumer_byte_rate", 7.0, 7.0),
        ("request_percentage", 4.21, 4.3),
        ("request_percentage", 137.0, 140.0),
        ("request_percentage", 0.371, 0.38),
    ],
)
def test_readable_rounds_up_to_two_digits_of_a_unit(key: str, value: float, rounded: float) -> None:
    assert readable(key, value) == rounded


def _state(tmp_path: Path) -> QuotaState:
    (tmp_path / "base.yaml").write_text(BASE)
    return load_desired([tmp_path / "base.yaml"]).quotas


def _recommend(
    tmp_path: Path, rows: list[Sample], **kw: object
) -> tuple[Recommendation, QuotaState]:
    state = _state(tmp_path)
    report = usage_report(
        profile(rows, since_ms=7 * DAY, extra=(Decimal(99), Decimal(95))), state, "test"
    )
    options = kw.pop("options", RecommendOptions())
    assert isinstance(options, RecommendOptions)
    return recommend(report, state, options, **kw), state  # type: ignore[arg-type]


def _by(
    rec: Recommendation,
) -> dict[tuple[Entity, str], tuple[float | None, float, tuple[str, ...]]]:
    return {(p.entity, p.key): (p.current, p.proposed, p.notes) for p in rec.proposals}


ALICE = Entity.of({"user": "alice"})
DEFAULT = Entity.of({"user": None})


def test_sized_from_the_busiest_brokers_percentile_times_headroom(tmp_path: Path) -> None:
    # broker 1: p99 2 MiB; broker 2: p99 4 MiB with a single 9 MiB burst above it
    one = week([MiB] * 50 + [2 * MiB] * 50)
    two = week([MiB] * 99 + [4 * MiB])
    two[5] = 9 * MiB
    rec, _ = _recommend(
        tmp_path,
        series("alice", None, PRODUCE_BYTE_RATE, one)
        + series("alice", None, PRODUCE_BYTE_RATE, two, broker="2"),
    )
    [p] = rec.proposals
    assert (p.entity, p.key, p.current, p.peak, p.used) == (
        ALICE,
        "producer_byte_rate",
        10 * MiB,
        4 * MiB,
        9 * MiB,
    )
    assert p.proposed == 9 * MiB  # p99 x 1.5 = 6 MiB is below the 9 MiB it sent
    rec, _ = _recommend(
        tmp_path,
        series("alice", None, PRODUCE_BYTE_RATE, week([MiB] * 90 + [4 * MiB] * 10)),
        options=RecommendOptions(percentile=Decimal(95), headroom=3.0),
    )
    assert rec.proposals[0].proposed == 12 * MiB  # p95 4 MiB x 3


def test_the_patch_is_an_overlay_the_loader_reads_with_the_base(tmp_path: Path) -> None:
    rec, state = _recommend(tmp_path, series("alice", None, PRODUCE_BYTE_RATE, week(2 * MiB)))
    assert rec.patch == {ALICE: {"producer_byte_rate": 3 * MiB, "consumer_byte_rate": 20 * MiB}}
    exported = export_yaml(rec.patch, "patch", KIND_OVERLAY)
    assert exported.left_out == ()
    (tmp_path / "patch.yaml").write_text(exported.text)
    after = load_desired([tmp_path / "base.yaml", tmp_path / "patch.yaml"]).quotas
    assert after == {**state, **rec.patch}


def test_a_censored_principal_is_raised_then_observed(tmp_path: Path) -> None:
    rows = series("bob", None, PRODUCE_BYTE_RATE, week(MiB)) + series(
        "bob", None, PRODUCE_THROTTLE_TIME, week([0, 0, 0, 250])
    )
    rec, _ = _recommend(tmp_path, rows)
    # bob falls back to {user=<default>} and was throttled at it: the default is raised
    assert _by(rec) == {
        (DEFAULT, "producer_byte_rate"): (
            MiB,
            1.5 * MiB,
            (CENSORED_NOTE, "sized for the 1 principal(s) that fall back to it"),
        )
    }


def test_a_default_is_sized_for_its_whole_population(tmp_path: Path) -> None:
    rows = [
        *series("bob", None, PRODUCE_BYTE_RATE, week(100 * 1024)),
        *series("carol", None, PRODUCE_BYTE_RATE, week(400 * 1024), broker="3"),
        *series("dave", None, PRODUCE_BYTE_RATE, week(0)),
    ]
    rec, state = _recommend(tmp_path, rows)
    assert _by(rec) == {
        (DEFAULT, "producer_byte_rate"): (
            MiB,
            600 * 1024,
            ("sized for the 2 principal(s) that fall back to it",),
        )
    }
    assert [(s.principal, s.why) for s in rec.skipped] == [
        (Principal("dave"), "no traffic in the window")
    ]
    after = {**state, **rec.patch}
    for user in ("bob", "carol"):
        q = resolve(after, user, None).get("producer_byte_rate")
        assert q is not None and q.value == 600 * 1024


def test_protected_principals_are_never_lowered(tmp_path: Path) -> None:
    rows = series("alice", None, PRODUCE_BYTE_RATE, week(MiB)) + series(
        "bob", None, PRODUCE_BYTE_RATE, week(1024)
    )
    rec, _ = _recommend(tmp_path, rows, protected=lambda p: p.user in ("alice", "bob"))
    assert _by(rec) == {
        (DEFAULT, "producer_byte_rate"): (
            MiB,
            MiB,
            (PROTECTED_NOTE, "sized for the 1 principal(s) that fall back to it"),
        ),
        (ALICE, "producer_byte_rate"): (10 * MiB, 10 * MiB, (PROTECTED_NOTE,)),
    }
    assert rec.patch == {}
    unprotected, _ = _recommend(tmp_path, rows)
    assert _by(unprotected)[ALICE, "producer_byte_rate"][1] == 1.5 * MiB


def test_a_short_window_gets_no_proposal(tmp_path: Path) -> None:
    rows = series("alice", None, PRODUCE_BYTE_RATE, [MiB] * 145)  # a day, one each 10 minutes
    rec, _ = _recommend(tmp_path, rows)
    assert rec.proposals == () and rec.patch == {}
    [s] = rec.skipped
    assert s.why == "observed for 1d, less than the minimum window 7d"
    rec, _ = _recommend(tmp_path, rows, options=RecommendOptions(min_window_ms=DAY))
    assert rec.proposals[0].proposed == 1.5 * MiB


def test_a_new_principal_gets_its_own_entity_and_capacity_is_summed(tmp_path: Path) -> None:
    rows = series("erin", "loader", FETCH_BYTE_RATE, week(30 * MiB)) + series(
        "alice", None, FETCH_BYTE_RATE, week(10 * MiB), broker="2"
    )
    rec, _ = _recommend(
        tmp_path,
        rows,
        capacity=lambda key: 50 * MiB if key == "consumer_byte_rate" else None,
    )
    erin = Entity.of({"user": "erin", "client-id": "loader"})
    assert rec.patch[erin] == {"consumer_byte_rate": 45 * MiB}
    [consumer] = [s for s in rec.sums if s.key == "consumer_byte_rate"]
    assert (consumer.before.total, consumer.after.total) == (20 * MiB, 60 * MiB)
    assert (consumer.before.unlimited, consumer.after.unlimited) == (1, 0)
    assert consumer.over
    assert rec.warnings == (
        "consumer_byte_rate: the observed principals' quotas after the patch add up to 1.20x "
        "one broker's declared capacity",
    )
