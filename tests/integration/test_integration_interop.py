"""kquota and Kafka's own kafka-configs must agree: what one writes, the other reads."""

from __future__ import annotations

import secrets
from collections.abc import Iterator

import pytest

from conftest import KafkaConfigsTool
from kquota.devbroker.launcher import BrokerInfo
from kquota.kafka.admin import FilterComponent, QuotaAlteration, QuotaOp, WireAdmin
from kquota.kafka.config import ClientConfig
from kquota.model import Entity
from polling import eventually

pytestmark = pytest.mark.integration

T = secrets.token_hex(3)


@pytest.fixture(scope="module")
def admin(kafka_broker: BrokerInfo) -> Iterator[WireAdmin]:
    with WireAdmin([kafka_broker.bootstrap_servers], ClientConfig()) as a:
        yield a


def test_kquota_writes_kafka_configs_reads(
    admin: WireAdmin, kafka_configs_tool: KafkaConfigsTool
) -> None:
    user, client = f"kq-writer-{T}", f"kq-app-{T}"
    results = admin.alter(
        [
            QuotaAlteration(
                Entity.of({"user": user, "client-id": client}),
                (
                    QuotaOp.set("producer_byte_rate", 1048576),
                    QuotaOp.set("request_percentage", 12.5),
                ),
            ),
            QuotaAlteration(Entity.of({"user": user}), (QuotaOp.set("consumer_byte_rate", 4096),)),
        ],
        validate_only=False,
    )
    assert all(r.ok for r in results)

    def pair() -> str:
        proc = kafka_configs_tool(
            "--describe", "--entity-type", "users", "--entity-name", user,
            "--entity-type", "clients", "--entity-name", client,
        )  # fmt: skip
        return proc.stdout

    out = eventually(pair, lambda o: "producer_byte_rate" in o)
    assert f"Quota configs for user-principal '{user}', client-id '{client}' are" in out
    assert "producer_byte_rate=1048576.0" in out and "request_percentage=12.5" in out
    out = kafka_configs_tool("--describe", "--entity-type", "users", "--entity-name", user).stdout
    assert f"Quota configs for user-principal '{user}' are consumer_byte_rate=4096.0" in out


def test_kafka_configs_writes_kquota_reads(
    admin: WireAdmin, kafka_configs_tool: KafkaConfigsTool
) -> None:
    user = f"kc-writer-{T}"
    kafka_configs_tool(
        "--alter", "--add-config", "producer_byte_rate=2048,consumer_byte_rate=8192",
        "--entity-type", "users", "--entity-name", user,
        "--entity-type", "clients", "--entity-default",
    )  # fmt: skip
    kafka_configs_tool(
        "--alter", "--add-config", "connection_creation_rate=17", "--ip", "10.77.0.1"
    )
    entity = Entity.of({"user": user, "client-id": None})
    ip = Entity.of({"ip": "10.77.0.1"})
    state = eventually(admin.describe_all, lambda s: entity in s and ip in s)
    assert state[entity] == {"producer_byte_rate": 2048.0, "consumer_byte_rate": 8192.0}
    assert state[ip] == {"connection_creation_rate": 17.0}
    assert admin.describe(
        [FilterComponent.exact("user", user), FilterComponent.default("client-id")], True
    ) == {entity: state[entity]}
    # and a removal by kquota is seen by kafka-configs
    assert admin.alter(
        [QuotaAlteration(ip, (QuotaOp.delete("connection_creation_rate"),))], validate_only=False
    )[0].ok
    out = eventually(
        lambda: kafka_configs_tool("--describe", "--ip", "10.77.0.1").stdout,
        lambda o: "connection_creation_rate" not in o,
    )
    assert "connection_creation_rate" not in out
