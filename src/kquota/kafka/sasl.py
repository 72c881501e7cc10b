"""SASL mechanisms as small state machines: bytes in from the broker, bytes out to it.

The connection drives them over SaslAuthenticate (after a SaslHandshake v1 naming the
mechanism): it sends :meth:`SaslMechanism.first`, then feeds every server answer to
:meth:`SaslMechanism.respond` until that returns ``None`` (done). Nothing here does I/O, so
SCRAM is unit-tested against scramp's server side.

* PLAIN (RFC 4616): one message ``authzid NUL user NUL password`` with an empty authzid.
* SCRAM-SHA-256/512 (RFC 5802, via scramp): client-first, client-final, then the server's
  signature is verified: a broker that cannot prove it knows the password is rejected.
* OAUTHBEARER (RFC 7628): ``n,,\\x01auth=Bearer <token>\\x01\\x01``. A non-empty server answer
  is an error report (JSON); RFC 7628 wants a lone ``\\x01`` back, after which the broker
  fails the authentication with its own message.
"""

from __future__ import annotations

from typing import Protocol

from kquota.kafka.errors import SASL_AUTHENTICATION_FAILED, AuthenticationError


class SaslMechanism(Protocol):
    name: str

    def first(self) -> bytes: ...

    def respond(self, challenge: bytes) -> bytes | None: ...


class Plain:
    """Plain is SASL PLAIN; the broker's answer to the single message is empty."""

    name = "PLAIN"

    def __init__(self, username: str, password: str) -> None:
        self._username = username
        self._password = password

    def __repr__(self) -> str:
        return f"Plain(username={self._username!r}, password='***')"

    def first(self) -> bytes:
        return b"\0" + self._username.encode() + b"\0" + self._password.encode()

    def respond(self, challenge: bytes) -> bytes | None:
        return None


class Scram:
    """Scram is SCRAM-SHA-256 or SCRAM-SHA-512 (no channel binding, as Kafka)."""

    def __init__(self, name: str, username: str, password: str) -> None:
        # Imported here: scramp pulls in asn1crypto and importlib.metadata, a tenth of a
        # second of start-up that every command not using SCRAM would pay.
        import scramp

        self.name = name
        self._client = scramp.ScramClient([name], username, password)
        self._scram_error = scramp.ScramException
        self._step = 0

    def __repr__(self) -> str:
        return f"Scram({self.name!r}, password='***')"

    def first(self) -> bytes:
        first: str = self._client.get_client_first()
        return first.encode()

    def respond(self, challenge: bytes) -> bytes | None:
        self._step += 1
        try:
            if self._step == 1:
                self._client.set_server_first(challenge.decode())
                final: str = self._client.get_client_final()
                return final.encode()
            if self._step == 2:
                self._client.set_server_final(challenge.decode())
                return None
        except (self._scram_error, UnicodeDecodeError) as e:
            # scramp's messages carry protocol details, never the password.
            raise AuthenticationError(
                SASL_AUTHENTICATION_FAILED, f"{self.name}: the broker's SCRAM answer failed: {e}"
            ) from None
        raise AuthenticationError(
            SASL_AUTHENTICATION_FAILED, f"{self.name}: unexpected extra SCRAM message"
        )


class OAuthBearer:
    """OAuthBearer sends a bearer token; its value is never shown."""

    name = "OAUTHBEARER"

    def __init__(self, token: str) -> None:
        self._token = token
        self._failed = False

    def __repr__(self) -> str:
        return "OAuthBearer(token='***')"

    def first(self) -> bytes:
        return b"n,,\x01auth=Bearer " + self._token.encode() + b"\x01\x01"

    def respond(self, challenge: bytes) -> bytes | None:
        if not challenge or self._failed:
            return None
        # An error challenge: acknowledge it so the broker ends with its error response.
        self._failed = True
        return b"\x01"
