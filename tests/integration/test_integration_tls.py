"""TLS against a real broker: CA checking, hostname verification, client certificates, SASL_SSL."""

from __future__ import annotations

import secrets
from pathlib import Path

import pytest

from kquota.devbroker.launcher import BrokerInfo
from kquota.devbroker.tls import make_pki
from kquota.kafka.admin import QuotaAlteration, QuotaOp, WireAdmin
from kquota.kafka.config import ClientConfig
from kquota.kafka.errors import AuthenticationError, BrokerConnectionError
from kquota.model import Entity
from polling import served

pytestmark = pytest.mark.integration


def _ssl(broker: BrokerInfo, **extra: str) -> ClientConfig:
    assert broker.ssl_ca_location is not None
    props = {"security.protocol": "SSL", "ssl.ca.location": broker.ssl_ca_location}
    assert broker.ssl_certificate_location and broker.ssl_key_location
    props["ssl.certificate.location"] = broker.ssl_certificate_location
    props["ssl.key.location"] = broker.ssl_key_location
    props.update(extra)
    return ClientConfig.from_properties(props)


def test_mutual_tls_round_trip(kafka_broker_tls: BrokerInfo) -> None:
    entity = Entity.of({"user": f"tls-{secrets.token_hex(3)}"})
    assert kafka_broker_tls.ssl_bootstrap_servers is not None
    with WireAdmin(kafka_broker_tls.ssl_bootstrap_servers, _ssl(kafka_broker_tls)) as admin:
        assert admin.cluster_id() == kafka_broker_tls.cluster_id
        (result,) = admin.alter(
            [QuotaAlteration(entity, (QuotaOp.set("producer_byte_rate", 123.0),))],
            validate_only=False,
        )
        assert result.ok
    held = {"producer_byte_rate": 123.0}
    served(kafka_broker_tls.bootstrap_servers, {entity: held})


def test_the_ssl_listener_refuses_a_client_without_a_certificate(
    kafka_broker_tls: BrokerInfo,
) -> None:
    assert kafka_broker_tls.ssl_bootstrap_servers and kafka_broker_tls.ssl_ca_location
    config = ClientConfig.from_properties(
        {"security.protocol": "SSL", "ssl.ca.location": kafka_broker_tls.ssl_ca_location}
    )
    with (
        pytest.raises(BrokerConnectionError) as e,
        WireAdmin(kafka_broker_tls.ssl_bootstrap_servers, config) as admin,
    ):
        admin.cluster_id()
    # TLS 1.2 brokers refuse in the handshake (bad certificate alert), TLS 1.3 ones hang up
    # right after it: either way the operator is pointed at the certificate.
    assert "certificate" in str(e.value).lower()


def test_a_server_signed_by_another_ca_is_refused(
    kafka_broker_tls: BrokerInfo, tmp_path: Path
) -> None:
    other = make_pki(tmp_path / "other-ca")
    config = _ssl(kafka_broker_tls, **{"ssl.ca.location": str(other.ca_certificate)})
    assert kafka_broker_tls.ssl_bootstrap_servers is not None
    with (
        pytest.raises(BrokerConnectionError) as e,
        WireAdmin(kafka_broker_tls.ssl_bootstrap_servers, config) as admin,
    ):
        admin.cluster_id()
    assert "unable to get local issuer certificate" in str(e.value)
    assert "check ssl.ca.location" in str(e.value)


def test_hostname_verification_uses_the_name_dialled(kafka_broker_tls: BrokerInfo) -> None:
    # The certificate names localhost and 127.0.0.1, so both verify; hostname checks are on.
    assert kafka_broker_tls.ssl_bootstrap_servers is not None
    port = kafka_broker_tls.ssl_bootstrap_servers.rsplit(":", 1)[1]
    with WireAdmin(f"localhost:{port}", _ssl(kafka_broker_tls)) as admin:
        assert admin.cluster_id() == kafka_broker_tls.cluster_id


@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_sasl_ssl(kafka_broker_tls: BrokerInfo, mechanism: str) -> None:
    assert kafka_broker_tls.sasl_ssl_bootstrap_servers and kafka_broker_tls.ssl_ca_location
    base = {
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": mechanism,
        "sasl.username": kafka_broker_tls.username,
        "ssl.ca.location": kafka_broker_tls.ssl_ca_location,
    }
    good = ClientConfig.from_properties({**base, "sasl.password": kafka_broker_tls.password})
    with WireAdmin(kafka_broker_tls.sasl_ssl_bootstrap_servers, good) as admin:
        assert admin.cluster_id() == kafka_broker_tls.cluster_id
    bad = ClientConfig.from_properties({**base, "sasl.password": "wrong-password"})
    with (
        pytest.raises(AuthenticationError) as e,
        WireAdmin(kafka_broker_tls.sasl_ssl_bootstrap_servers, bad) as admin,
    ):
        admin.cluster_id()
    assert "Authentication failed" in str(e.value) and "wrong-password" not in str(e.value)
