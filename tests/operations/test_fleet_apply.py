"""The fleet apply operation against a real broker: the reviewed plan checked against the live
one, empty or not, and kquota.yaml read once for the whole rollout.

The CLI's rollouts (waves, resume, side by side, signals) are in
tests/integration/test_integration_fleet_apply.py; here the operation is called as a program
would call it.
"""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Any

import pytest

import kquota.config.project
from kquota.devbroker.launcher import BrokerInfo
from kquota.kafka.admin import QuotaAlteration, QuotaOp, WireAdmin
from kquota.model import Entity
from kquota.operations.fleet_apply import FleetApplyRequest, fleet_apply
from kquota.plan.rollout import COMMITTED, FAILED, PlannedWave
from rollout_kit import Cluster, Fleet

pytestmark = pytest.mark.integration


@pytest.fixture()
def fleet(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> Fleet:
    monkeypatch.chdir(tmp_path)
    return Fleet(tmp_path, capsys)


def _request(fleet: Fleet) -> FleetApplyRequest:
    return FleetApplyRequest(fleet.root / "plans", fleet.root / "desired")


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


def test_kquota_yaml_is_read_once_for_the_waves_and_every_cluster(
    fleet: Fleet, kafka_broker: BrokerInfo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three clusters in the waves of ``rollout:``: the operation reads kquota.yaml once (it
    read it seven times, 2N+1), and the waves it confirms are the file's."""
    p = f"y{secrets.token_hex(3)}-"
    one = kafka_broker.bootstrap_servers
    fleet.clusters = {
        "canary": Cluster(one, f"{p}c", 20),
        "eu-1": Cluster(one, f"{p}e1", 21),
        "eu-2": Cluster(one, f"{p}e2", 22),
    }
    fleet.write("rollout:\n  - {clusters: [canary]}\n  - {clusters: ['eu-*'], soak: 1s}\n")
    fleet.plan()
    reads: list[str] = []
    read_text = kquota.config.project.read_text

    def counted(path: Path, *args: Any, **kwargs: Any) -> str:
        reads.append(Path(path).name)
        return read_text(path, *args, **kwargs)

    monkeypatch.setattr(kquota.config.project, "read_text", counted)
    confirmed: list[tuple[PlannedWave, ...]] = []
    report = fleet_apply(_request(fleet), confirm=confirmed.append)
    assert reads == ["kquota.yaml"]
    ((first, second),) = confirmed
    assert (first.clusters, second.clusters, second.wave.soak) == (("canary",), ("eu-1", "eu-2"), 1)
    assert [(c.cluster, c.wave, c.status) for c in report.clusters] == [
        ("canary", 1, COMMITTED),
        ("eu-1", 2, COMMITTED),
        ("eu-2", 2, COMMITTED),
    ]
    assert fleet.quota("eu-2") == {"producer_byte_rate": 22.0}


def test_waves_refused_at_confirmation_read_no_plan_and_write_nothing(
    fleet: Fleet, kafka_broker: BrokerInfo
) -> None:
    user = f"z{secrets.token_hex(3)}-a"
    fleet.clusters = {"solo": Cluster(kafka_broker.bootstrap_servers, user, 30)}
    fleet.write()
    fleet.plan()
    (fleet.root / "plans" / "solo.plan.json").write_text("not a plan")  # never read

    class Refused(Exception):
        pass

    def refuse(waves: tuple[PlannedWave, ...]) -> None:
        assert [w.clusters for w in waves] == [("solo",)]
        raise Refused

    with pytest.raises(Refused):
        fleet_apply(_request(fleet), confirm=refuse)
    assert fleet.quota("solo") == {}
    assert not (fleet.root / "plans" / "fleet-apply.json").exists()
