"""The wrong listener, as a person first types it, against real brokers: a KRaft
controller's address, TLS spoken to a plaintext listener and plain bytes to a TLS one. Each
says what the address is and what to change, never a Python exception's name nor "needs
Kafka 2.6" of a 4.x cluster."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_runner import run_kquota
from conftest import ZOOKEEPER
from kquota.devbroker.launcher import BrokerInfo

pytestmark = pytest.mark.integration


def _describe(
    address: str, capsys: pytest.CaptureFixture[str], props: Path | None = None
) -> tuple[int, str]:
    argv = ["describe", "--bootstrap-server", address, "--timeout", "1m"]
    code, out, err = run_kquota(
        [*argv, *(["--command-config", str(props)] if props else [])], capsys
    )
    assert out == ""
    return code, err


def test_a_controllers_address_is_named_as_one(
    kafka_broker: BrokerInfo, capsys: pytest.CaptureFixture[str]
) -> None:
    assert not ZOOKEEPER, "a ZooKeeper-mode broker has no KRaft controller listener"
    code, err = _describe(kafka_broker.controller_bootstrap_servers, capsys)
    assert code == 1
    assert err.startswith(
        f"error: {kafka_broker.controller_bootstrap_servers} is a KRaft controller's listener, "
        "not a broker's: give a broker's address"
    ), err
    assert "2.6" not in err


@pytest.mark.parametrize("protocol", ["SSL", "SASL_SSL"])
def test_tls_to_a_plaintext_listener_says_so(
    kafka_broker: BrokerInfo, tmp_path: Path, capsys: pytest.CaptureFixture[str], protocol: str
) -> None:
    props = tmp_path / "client.properties"
    props.write_text(
        f"security.protocol={protocol}\nsasl.mechanism=PLAIN\n"
        f"sasl.username={kafka_broker.username}\nsasl.password={kafka_broker.password}\n"
    )
    address = kafka_broker.bootstrap_servers
    if protocol == "SASL_SSL":
        address = kafka_broker.sasl_bootstrap_servers
    code, err = _describe(address, capsys, props)
    assert code == 1
    assert err == (
        f"error: cannot connect to {address}: the TLS handshake failed (the connection was "
        f"reset): is it a listener without TLS? security.protocol is {protocol}, but a "
        "PLAINTEXT or SASL_PLAINTEXT listener needs security.protocol=PLAINTEXT or "
        "SASL_PLAINTEXT\n"
    )
    assert "Error" not in err and kafka_broker.password not in err


def test_plain_bytes_to_a_tls_listener_says_so(
    kafka_broker_tls: BrokerInfo, capsys: pytest.CaptureFixture[str]
) -> None:
    assert kafka_broker_tls.ssl_bootstrap_servers is not None
    address = kafka_broker_tls.ssl_bootstrap_servers
    code, err = _describe(address, capsys)
    assert code == 1
    assert err == (
        f"error: {address} answered in TLS: it is an SSL or SASL_SSL listener, but "
        "security.protocol is PLAINTEXT; set security.protocol=SSL (or SASL_SSL) and "
        "ssl.ca.location\n"
    )


def test_unreadable_tls_files_are_said_in_words(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Checked before any connection (port 1 is closed): OpenSSL's reason, not a class name
    nor its source line."""
    garbage = tmp_path / "not.pem"
    garbage.write_text("not a certificate\n")
    props = tmp_path / "client.properties"
    props.write_text(f"security.protocol=SSL\nssl.ca.location={garbage}\n")
    code, err = _describe("127.0.0.1:1", capsys, props)
    assert code == 1
    assert err.endswith(f"'{garbage}': cannot load CAs: no certificate or crl found\n"), err
    props.write_text(
        f"security.protocol=SSL\nssl.certificate.location={garbage}\nssl.key.location={garbage}\n"
    )
    code, err = _describe("127.0.0.1:1", capsys, props)
    assert code == 1
    assert err.endswith(": not a PEM file TLS can use\n"), err
    assert "SSLError" not in err and "_ssl.c" not in err
