"""execute_plan against a real broker: it applies a current plan and refuses a stale one."""

from __future__ import annotations

import secrets
from pathlib import Path

import pytest

from kquota.api.admin import QuotaAdmin
from kquota.apply.staleness import StalePlanError
from kquota.devbroker.launcher import BrokerInfo
from kquota.model import Entity
from kquota.operations import execute_plan, load_desired_state, make_plan
from kquota.policy import Policy
from kquota.target import Target
from polling import assert_eventually

pytestmark = pytest.mark.integration


def _setup(broker: BrokerInfo, tmp_path: Path, user: str) -> tuple[Target, Path]:
    (tmp_path / "q.yaml").write_text(
        "apiVersion: kquota/v1\nkind: ClientQuotas\nquotas:\n"
        f"  - match: {{user: {user}}}\n    set: {{request_percentage: 40}}\n"
    )
    policy = Policy.build([{"user": user}])
    return Target.live({"bootstrap.servers": broker.bootstrap_servers}, policy=policy), tmp_path


def test_execute_plan_commits_and_verifies(kafka_broker: BrokerInfo, tmp_path: Path) -> None:
    user = f"ops-{secrets.token_hex(3)}"
    target, folder = _setup(kafka_broker, tmp_path, user)
    result = execute_plan(target, make_plan(target, load_desired_state([folder])).plan)
    assert result.ok and [a.entity for a in result.report.committed] == [Entity.of({"user": user})]
    with QuotaAdmin({"bootstrap.servers": kafka_broker.bootstrap_servers}) as admin:
        assert admin.describe({"user": user}) == {
            Entity.of({"user": user}): {"request_percentage": 40.0}
        }


def test_execute_plan_refuses_a_plan_the_cluster_moved_past(
    kafka_broker: BrokerInfo, tmp_path: Path
) -> None:
    user = f"ops-{secrets.token_hex(3)}"
    target, folder = _setup(kafka_broker, tmp_path, user)
    planned = make_plan(target, load_desired_state([folder])).plan
    with QuotaAdmin({"bootstrap.servers": kafka_broker.bootstrap_servers}) as admin:
        admin.alter([({"user": user}, {"request_percentage": 7})])
        seven = {Entity.of({"user": user}): {"request_percentage": 7.0}}
        assert_eventually(lambda: admin.describe({"user": user}) == seven)
        with pytest.raises(StalePlanError, match="stale"):
            execute_plan(target, planned)
        assert admin.describe({"user": user}) == seven
