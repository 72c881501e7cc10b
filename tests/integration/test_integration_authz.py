"""A broker with StandardAuthorizer: alice (no ACLs) is refused clearly, admin is not."""

from __future__ import annotations

import secrets
from collections.abc import Iterator

import pytest

from kquota.cli.main import main
from kquota.cluster import ClusterTarget
from kquota.devbroker.launcher import BrokerInfo
from kquota.kafka.admin import QuotaAdmin, QuotaAlteration, QuotaOp
from kquota.kafka.errors import ClusterAuthorizationError
from kquota.model import Entity

pytestmark = pytest.mark.integration

T = secrets.token_hex(3)


def _as(broker: BrokerInfo, user: str) -> ClusterTarget:
    return ClusterTarget.from_options(
        broker.sasl_bootstrap_servers,
        None,
        {
            "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "SCRAM-SHA-256",
            "sasl.username": user,
            "sasl.password": broker.users[user],
        },
    )


@pytest.fixture(scope="module")
def alice(kafka_broker_with_authorizer: BrokerInfo) -> Iterator[QuotaAdmin]:
    with _as(kafka_broker_with_authorizer, "alice").admin() as a:
        yield a


def _alts() -> list[QuotaAlteration]:
    return [
        QuotaAlteration(
            Entity.of({"user": f"authz-{T}-{i}"}), (QuotaOp.set("producer_byte_rate", 1000),)
        )
        for i in range(3)
    ]


def test_alice_cannot_describe(alice: QuotaAdmin) -> None:
    with pytest.raises(ClusterAuthorizationError) as e:
        alice.describe_all()
    assert (e.value.code, e.value.name) == (31, "CLUSTER_AUTHORIZATION_FAILED")
    assert "Cluster authorization failed." in str(e.value)


@pytest.mark.parametrize("validate_only", [True, False])
def test_alice_cannot_alter(alice: QuotaAdmin, validate_only: bool) -> None:
    results = alice.alter(_alts(), validate_only=validate_only)
    assert [r.entity for r in results] == [a.entity for a in _alts()]
    assert {(r.error_code, r.error_name, r.error_message) for r in results} == {
        (31, "CLUSTER_AUTHORIZATION_FAILED", "Cluster authorization failed.")
    }


def test_admin_can(kafka_broker_with_authorizer: BrokerInfo) -> None:
    with _as(kafka_broker_with_authorizer, "admin").admin() as a:
        assert all(r.ok for r in a.alter(_alts(), validate_only=False))
        assert isinstance(a.describe_all(), dict)


def test_cli_shows_the_authorization_error(
    kafka_broker_with_authorizer: BrokerInfo, tmp_path: object, capsys: pytest.CaptureFixture[str]
) -> None:
    from pathlib import Path

    props = Path(str(tmp_path)) / "alice.properties"
    props.write_text(
        "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-512\n"
        "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required "
        'username="alice" password="alice-secret";\n'
    )
    base = [
        "--bootstrap-server",
        kafka_broker_with_authorizer.sasl_bootstrap_servers,
        "--command-config",
        str(props),
    ]
    for argv in (
        ["describe", *base],
        ["alter", *base, "--names", f"user=cli-{T}", "--add", "producer_byte_rate=1000"],
        [
            "alter",
            *base,
            "--names",
            f"user=cli-{T}",
            "--add",
            "producer_byte_rate=1000",
            "--validate-only",
        ],
    ):
        with pytest.raises(SystemExit) as e:
            main(argv)
        assert e.value.code == 1
        err = capsys.readouterr().err
        assert "Cluster authorization failed." in err and "CLUSTER_AUTHORIZATION_FAILED" in err
        assert "alice-secret" not in err
