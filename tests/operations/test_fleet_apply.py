"""The fleet apply operation against a real broker: the reviewed plan checked against the live
one, empty or not, and kquota.yaml read once for the whole rollout.

The CLI's rollouts (waves, resume, side by side, signals) are in
tests/integration/test_integration_fleet_apply.py; here the operation is called as a program
would call it.
"""

from __future__ import annotations

import secrets
from pathlib import Path

import pytest

from kquota.devbroker.launcher import BrokerInfo
from kquota.kafka.admin import QuotaAlteration, QuotaOp, WireAdmin
from kquota.model import Entity
from kquota.operations.fleet_apply import FleetApplyRequest, fleet_apply
from kquota.plan.rollout import COMMITTED, FAILED, PlannedWave, Wave
from rollout_kit import Cluster, Fleet

pytestmark = pytest.mark.integration


@pytest.fixture()
def fleet(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> Fleet:
    monkeypatch.chdir(tmp_path)
    return Fleet(tmp_path, capsys)


def _request(fleet: Fleet) -> FleetApplyRequest:
    names = tuple(sorted(fleet.clusters))
    return FleetApplyRequest(
        fleet.root / "plans", fleet.root / "desired", (PlannedWave(1, Wave(("*",)), names),)
    )


def test_a_reviewed_plan_the_cluster_already_holds_differs_from_the_empty_live_plan(
    fleet: Fleet, kafka_broker: BrokerInfo
) -> None:
    """The reviewed plan sets a quota; someone else set it on the cluster since: the live plan
    is empty, which is not what was reviewed (docs/rollout.md), and nothing is written."""
    user = f"x{secrets.token_hex(3)}-a"
    fleet.clusters = {"solo": Cluster(kafka_broker.bootstrap_servers, user, 10)}
    fleet.write()
    fleet.plan()
    with WireAdmin(kafka_broker.bootstrap_servers) as admin:
        (done,) = admin.alter(
            [QuotaAlteration(Entity.of({"user": user}), (QuotaOp("producer_byte_rate", 10.0),))],
            validate_only=False,
        )
        assert done.ok
    report = fleet_apply(_request(fleet))
    (outcome,) = report.clusters
    assert outcome.status == FAILED, outcome.detail
    assert outcome.detail == (
        "solo: the live plan is not the reviewed plan (the cluster or the desired state changed "
        "since fleet plan); nothing was written:\n"
        f"  {{user={user}}}: in the reviewed plan, not in the live one\n"
        "plan the fleet again and review the new plans"
    )
    assert report.stopped == "solo (wave 1) failed" and not report.ok


def test_a_reviewed_plan_equal_to_the_live_one_is_committed(
    fleet: Fleet, kafka_broker: BrokerInfo
) -> None:
    user = f"x{secrets.token_hex(3)}-b"
    fleet.clusters = {"solo": Cluster(kafka_broker.bootstrap_servers, user, 11)}
    fleet.write()
    fleet.plan()
    report = fleet_apply(_request(fleet))
    assert [(c.cluster, c.status) for c in report.clusters] == [("solo", COMMITTED)]
    assert report.ok and fleet.quota("solo") == {"producer_byte_rate": 11.0}
