"""SASL mechanisms: SCRAM against scramp's server side, PLAIN and OAUTHBEARER bytes."""

from __future__ import annotations

import pytest
import scramp

from kquota.kafka.errors import AuthenticationError
from kquota.kafka.sasl import OAuthBearer, Plain, Scram


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_scram_against_scramp_server(mechanism: str) -> None:
    m = scramp.ScramMechanism(mechanism)
    salt, stored_key, server_key, iterations = m.make_auth_info(
        "alice-secret", iteration_count=4096
    )
    server = m.make_server(lambda user: (salt, stored_key, server_key, iterations))
    client = Scram(mechanism, "alice", "alice-secret")
    server.set_client_first(client.first().decode())
    final = client.respond(server.get_server_first().encode())
    assert final is not None
    server.set_client_final(final.decode())
    assert client.respond(server.get_server_final().encode()) is None


def test_scram_rejects_a_server_that_does_not_know_the_password() -> None:
    m = scramp.ScramMechanism("SCRAM-SHA-256")
    salt, stored_key, server_key, iterations = m.make_auth_info("other", iteration_count=4096)
    server = m.make_server(lambda user: (salt, stored_key, server_key, iterations))
    client = Scram("SCRAM-SHA-256", "alice", "alice-secret")
    server.set_client_first(client.first().decode())
    final = client.respond(server.get_server_first().encode())
    assert final is not None
    # The server (wrong stored key) rejects the proof; a forged final must fail on our side.
    with pytest.raises(scramp.ScramException):
        server.set_client_final(final.decode())
    with pytest.raises(AuthenticationError) as e:
        client.respond(b"v=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=")
    assert "alice-secret" not in str(e.value)


def test_plain_message() -> None:
    p = Plain("alice", "pw")
    assert p.first() == b"\0alice\0pw"
    assert p.respond(b"") is None
    assert "pw" not in repr(p)


def test_oauthbearer_gs2_and_error_ack() -> None:
    o = OAuthBearer("tok.en")
    assert o.first() == b"n,,\x01auth=Bearer tok.en\x01\x01"
    assert o.respond(b"") is None
    assert o.respond(b'{"status":"invalid_token"}') == b"\x01"
    assert "tok.en" not in repr(o)
