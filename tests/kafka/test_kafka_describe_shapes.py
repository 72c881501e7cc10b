"""The entity shapes a broker holds, described one shape at a time, add up to a describe-all.

``benchmarks/describe_split.py`` measured a describe-all split into these filters (issue 22:
slower, not adopted); this pins, against a real broker, what such a split relies on: the
strict shapes ``{user}``, ``{client-id}``, ``{user, client-id}`` and ``{ip}`` with
MATCH_TYPE_SPECIFIED, and the entities with a default part of each type, together return
exactly the describe-all, defaults, ip entities and hostile names included.
"""

from __future__ import annotations

import secrets

import pytest

from hostile_names import HOSTILE
from kquota.devbroker.launcher import BrokerInfo
from kquota.kafka.admin import FilterComponent, QuotaAlteration, QuotaOp, WireAdmin
from kquota.model import Entity, QuotaState
from polling import eventually

pytestmark = pytest.mark.integration
P = "producer_byte_rate"
SHAPES = (("user",), ("client-id",), ("user", "client-id"), ("ip",))


def test_every_shape_described_apart_adds_up_to_describe_all(kafka_broker: BrokerInfo) -> None:
    tag = secrets.token_hex(3)
    names = [f"s{tag}{n}" for n in HOSTILE if n == n.strip()][:20]
    parts: list[dict[str, str | None]] = [
        {"user": None},
        {"client-id": None},
        {"user": None, "client-id": None},
        {"user": f"s{tag}u", "client-id": None},
        {"user": None, "client-id": f"s{tag}c"},
        {"ip": None},
        {"ip": "10.99.0.1"},
    ]
    for n in names:
        parts += [{"user": n}, {"client-id": n}, {"user": n, "client-id": n}]
    entities = [Entity.of(p) for p in parts]
    with WireAdmin(kafka_broker.bootstrap_servers) as admin:
        sets = [
            QuotaAlteration(e, (QuotaOp.set("connection_creation_rate" if e.is_ip else P, 7.0),))
            for e in entities
        ]
        assert all(r.ok for r in admin.alter(sets, validate_only=False))
        try:
            whole = eventually(admin.describe_all, lambda s: all(e in s for e in entities))
            split: QuotaState = {}
            for shape in SHAPES:
                split.update(admin.describe([FilterComponent.specified(t) for t in shape], True))
            for t in ("user", "client-id", "ip"):
                split.update(admin.describe([FilterComponent.default(t)], False))
            assert split == whole
        finally:
            removals = [
                QuotaAlteration(e, (QuotaOp.delete("connection_creation_rate" if e.is_ip else P),))
                for e in entities
            ]
            admin.alter(removals, validate_only=False)
