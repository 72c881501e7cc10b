"""The usage report: each rate series against the effective quota its tags resolve to, and
the quotas no traffic matched."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from kquota.desired.loader import load_desired
from kquota.model import Entity, QuotaState
from kquota.usage.profile import profile
from kquota.usage.report import usage_report
from kquota.usage.rows import FETCH_BYTE_RATE, FETCH_THROTTLE_TIME, PRODUCE_BYTE_RATE, REQUEST_TIME
from sample_rows import series, week

DESIRED = """\
apiVersion: kquota/v1
kind: ClientQuotas
quotas:
  - match: {user: alice}
    set: {producer_byte_rate: 10MiB, consumer_byte_rate: 20MiB}
  - match: {user: <default>}
    set: {producer_byte_rate: 1MiB}
  - match: {user: gone}
    set: {producer_byte_rate: 5MiB}
  - match: {client-id: batch}
    set: {request_percentage: 50}
  - match: {user: ops}
    set: {controller_mutation_rate: 10}
  - match: {ip: 10.0.0.1}
    set: {connection_creation_rate: 5}
"""


@pytest.fixture
def state(tmp_path: Path) -> QuotaState:
    (tmp_path / "quotas.yaml").write_text(DESIRED)
    return load_desired([tmp_path / "quotas.yaml"]).quotas


def test_each_series_against_its_effective_quota(state: QuotaState) -> None:
    rows = [
        *series("alice", None, PRODUCE_BYTE_RATE, week(5 * 2**20)),
        *series("alice", None, FETCH_BYTE_RATE, week([2**20, 40 * 2**20])),
        *series("alice", None, FETCH_THROTTLE_TIME, week([0, 120])),
        *series("bob", None, PRODUCE_BYTE_RATE, week(2**19), broker="2"),
        *series(None, "batch", REQUEST_TIME, week(25)),
        *series("carol", "app", FETCH_BYTE_RATE, week(100)),
    ]
    report = usage_report(profile(rows, since_ms=7 * 86400_000), state, "test")
    found = {(u.principal.user, u.principal.client_id, u.key): u for u in report.uses}
    produce = found["alice", None, "producer_byte_rate"]
    assert (produce.quota, produce.source, produce.utilisation()) == (
        10 * 2**20,
        Entity.of({"user": "alice"}),
        0.5,
    )
    assert not produce.censored and produce.throttle is None
    fetch = found["alice", None, "consumer_byte_rate"]
    assert fetch.censored and fetch.rate.at(Decimal(99)) == 40 * 2**20
    assert fetch.utilisation() == 2.0
    assert fetch.to_data()["throttled_samples"] == fetch.rate.count // 2
    bob = found["bob", None, "producer_byte_rate"]
    assert (bob.source, bob.utilisation()) == (Entity.of({"user": None}), 0.5)
    batch = found[None, "batch", "request_percentage"]
    assert (batch.quota, batch.utilisation()) == (50.0, 0.5)
    carol = found["carol", "app", "consumer_byte_rate"]
    assert (carol.quota, carol.source, carol.utilisation()) == (None, None, None)
    # {user=gone} matched nothing; ops sets only a key no sensor here measures; ip quotas
    # have no per-ip rate to match
    assert report.unmatched == (Entity.of({"user": "gone"}),)
    data = report.to_data()
    assert data["unmatched_quotas"] == [
        {"entity": {"user": "gone"}, "note": "candidate for removal: not removed"}
    ]
    assert data["percentiles"] == "nearest-rank"
