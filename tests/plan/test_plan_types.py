"""The plan JSON contract: exact shape, round trip, refusal of what it cannot read."""

import json
from typing import Any

from kquota.model import Entity
from kquota.plan.planner import plan
from kquota.plan.types import ChangeKind, Op, Plan
from kquota.planfile.reader import parse_plan
from kquota.policy import Policy


def _read(data: dict[str, Any]) -> Plan:
    """The JSON contract read back by the one strict reader (as ``kquota show`` reads it)."""
    return parse_plan(json.dumps(data).encode(), "plan.json", Policy(), review=True)


ALICE = Entity.of({"user": "alice", "client-id": None})


def test_contract_shape() -> None:
    p = plan(
        {ALICE: {"producer_byte_rate": 2097152.0}},
        {ALICE: {"producer_byte_rate": 1048576.0, "consumer_byte_rate": 5.0}},
        Policy(),
        cluster="prod",
    )
    data = p.to_data()
    assert list(data) == [
        "format_version",
        "cluster",
        "cluster_id",
        "snapshot_fingerprint",
        "desired_digest",
        "kquota_version",
        "created_at",
        "alterations",
        "summary",
    ]
    assert data["format_version"] == 1 and data["cluster"] == "prod"
    assert data["alterations"] == [
        {
            "entity": {"user": "alice", "client-id": None},
            "change": "update",
            "ops": [
                {"key": "consumer_byte_rate", "value": None, "remove": True, "before": 5.0},
                {
                    "key": "producer_byte_rate",
                    "value": 2097152.0,
                    "remove": False,
                    "before": 1048576.0,
                },
            ],
        }
    ]
    assert data["summary"]["update"] == 1 and data["summary"]["remove_ops"] == 1
    again = _read(data)
    assert again.to_data() == data and again.alterations == p.alterations


def test_glyphs() -> None:
    assert [k.glyph for k in ChangeKind] == ["+", "~", "-"]
    assert Op("k", 1.0, False, None).kind is ChangeKind.CREATE
    assert Op("k", 1.0, False, 2.0).kind is ChangeKind.UPDATE
    assert Op("k", None, True, 2.0).kind is ChangeKind.DELETE


def test_metadata_round_trips() -> None:
    data = Plan(
        alterations=(),
        cluster_id="abc",
        desired_digest="d",
        kquota_version="0.1.0",
        created_at="2026-01-01T00:00:00+00:00",
    ).to_data()
    again = _read(data)
    assert (again.cluster_id, again.desired_digest, again.kquota_version, again.created_at) == (
        "abc",
        "d",
        "0.1.0",
        "2026-01-01T00:00:00+00:00",
    )
