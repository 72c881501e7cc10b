"""kquota's own client against the real broker: both listeners, every SASL mechanism."""

from __future__ import annotations

import asyncio

import pytest

from kquota.devbroker.launcher import BrokerInfo
from kquota.kafka.admin import QuotaAlteration, QuotaOp
from kquota.kafka.config import ClientConfig
from kquota.kafka.conn import connect_any
from kquota.kafka.errors import AuthenticationError, BrokerConnectionError
from kquota.model import Entity, QuotaState
from kquota.target import Target

pytestmark = pytest.mark.integration


def _fetch(target: Target) -> QuotaState:
    """A live cluster's quotas, read as every command reads them (describe-all)."""
    return target.load_state()


def _sasl(broker: BrokerInfo, mechanism: str, user: str, password: str) -> Target:
    return Target.from_options(
        broker.sasl_bootstrap_servers,
        None,
        {
            "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": mechanism,
            "sasl.username": user,
            "sasl.password": password,
            "retries": "0",
        },
    )


def test_plaintext_listener(kafka_broker: BrokerInfo) -> None:
    target = Target.from_options(kafka_broker.bootstrap_servers, None)
    assert isinstance(_fetch(target), dict)


@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"])
@pytest.mark.parametrize("user", ["admin", "alice"])
def test_sasl_listener(kafka_broker: BrokerInfo, mechanism: str, user: str) -> None:
    password = kafka_broker.users[user]
    assert isinstance(_fetch(_sasl(kafka_broker, mechanism, user, password)), dict)


@pytest.mark.parametrize(
    ("mechanism", "message"),
    [
        ("PLAIN", "Authentication failed: Invalid username or password"),
        (
            "SCRAM-SHA-256",
            "Authentication failed during authentication due to invalid credentials with SASL "
            "mechanism SCRAM-SHA-256",
        ),
        ("SCRAM-SHA-512", "invalid credentials with SASL mechanism SCRAM-SHA-512"),
    ],
)
def test_wrong_password_is_an_authentication_error(
    kafka_broker: BrokerInfo, mechanism: str, message: str
) -> None:
    wrong = "Wr0ng-Pa55word"
    with pytest.raises(AuthenticationError) as e:
        _fetch(_sasl(kafka_broker, mechanism, "alice", wrong))
    assert message in str(e.value)
    assert e.value.code == 58 and e.value.name == "SASL_AUTHENTICATION_FAILED"
    assert wrong not in str(e.value) and "alice-secret" not in str(e.value)


def test_unknown_user_scram(kafka_broker: BrokerInfo) -> None:
    with pytest.raises(AuthenticationError, match="invalid credentials"):
        _fetch(_sasl(kafka_broker, "SCRAM-SHA-256", "nobody-here", "x"))


def test_plaintext_client_on_sasl_listener_gets_a_clear_error(kafka_broker: BrokerInfo) -> None:
    target = Target.from_options(kafka_broker.sasl_bootstrap_servers, None, {"retries": "0"})
    with pytest.raises(BrokerConnectionError, match="security.protocol") as e:
        _fetch(target)
    assert "dropped a fresh connection's smallest request too" in str(e.value)


@pytest.mark.parametrize("retries", ["0", "1"])
def test_a_request_the_broker_refuses_is_not_blamed_on_the_security_protocol(
    kafka_broker: BrokerInfo, retries: str
) -> None:
    # A name longer than a protocol string may be (32,767 bytes) makes the broker hang up
    # on the request; every retry opens a fresh connection that is dropped the same way.
    # The connection settings are fine, and the message must not suggest otherwise.
    target = Target.from_options(kafka_broker.bootstrap_servers, None, {"retries": retries})
    long_name = Entity.of({"user": "n" * 40_000})
    with target.admin() as admin, pytest.raises(BrokerConnectionError) as e:
        admin.alter(
            [QuotaAlteration(long_name, (QuotaOp.set("request_percentage", 5),))],
            validate_only=True,
        )
    message = str(e.value)
    assert "security.protocol" not in message
    assert "closed the connection in answer to AlterClientQuotas" in message
    assert "it is this request the broker refused (the broker's log says why)" in message
    with target.admin() as admin:  # and the cluster is no worse for it
        assert isinstance(admin.describe_all(), dict)


def test_sasl_client_on_plaintext_listener_gets_a_clear_error(kafka_broker: BrokerInfo) -> None:
    target = _sasl(kafka_broker, "PLAIN", "alice", "alice-secret")
    target = Target.from_options(kafka_broker.bootstrap_servers, None, target.properties)
    with pytest.raises((BrokerConnectionError, AuthenticationError)):
        _fetch(target)


def test_negotiated_versions(kafka_broker: BrokerInfo) -> None:
    async def main() -> tuple[int, int, int]:
        conn = await connect_any([kafka_broker.bootstrap_servers], ClientConfig())
        try:
            return conn.version_for(48), conn.version_for(49), conn.version_for(36)
        finally:
            await conn.close()

    assert asyncio.run(main()) == (1, 1, 2)


def test_second_bootstrap_address_is_used(kafka_broker: BrokerInfo) -> None:
    target = Target.from_options(f"127.0.0.1:1,{kafka_broker.bootstrap_servers}", None)
    assert isinstance(_fetch(target), dict)


def test_fetch_snapshot_accepts_a_properties_target(kafka_broker: BrokerInfo) -> None:
    """A Target built from a properties dict (kquota.yaml's kafka: map) reads the cluster."""
    target = Target(
        cluster_name="dev",
        properties={
            "bootstrap.servers": kafka_broker.sasl_bootstrap_servers,
            "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "SCRAM-SHA-256",
            "sasl.jaas.config": "org.apache.kafka.common.security.scram.ScramLoginModule "
            'required username="alice" password="alice-secret";',
        },
    )
    assert isinstance(_fetch(target), dict)
