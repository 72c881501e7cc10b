"""SCRAM credentials for a ZooKeeper-mode dev broker, written through the broker itself.

A KRaft broker gets its users' SCRAM credentials at format time; a ZooKeeper-mode broker keeps
them in ZooKeeper, so once it answers they are upserted with AlterUserScramCredentials (KIP-554,
every 3.x broker) over the PLAINTEXT listener of the controller (a ZooKeeper-mode broker that is
not answers NOT_CONTROLLER, so the brokers are tried in turn). Brokers pick them up from a
ZooKeeper change notification, so :func:`scram_login_ok` is polled until a SCRAM login works on
every broker. Frames are hand-built, as in :mod:`kquota.devbroker.probe`, so the launcher does
not depend on the codec it is used to test.
"""

from __future__ import annotations

import hashlib
import os
import socket
import struct

from kquota.devbroker.probe import _recv_exact
from kquota.errors import KquotaError

_CLIENT_ID = b"kquota-dev-broker"
_ITERATIONS = 4096  # the minimum Kafka accepts for both mechanisms
_MECHANISMS = {"SCRAM-SHA-256": (1, "sha256"), "SCRAM-SHA-512": (2, "sha512")}


def _uvarint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _compact(raw: bytes) -> bytes:
    return _uvarint(len(raw) + 1) + raw


def _read_uvarint(buf: bytes, pos: int) -> tuple[int, int]:
    n = shift = 0
    while True:
        b = buf[pos]
        pos += 1
        n |= (b & 0x7F) << shift
        if b < 0x80:
            return n, pos
        shift += 7


def _call(sock: socket.socket, api_key: int, version: int, body: bytes, flexible: bool) -> bytes:
    header = struct.pack(">hhih", api_key, version, 7, len(_CLIENT_ID)) + _CLIENT_ID
    if flexible:
        header += b"\x00"
    payload = header + body
    sock.sendall(struct.pack(">i", len(payload)) + payload)
    (size,) = struct.unpack(">i", _recv_exact(sock, 4))
    data = _recv_exact(sock, size)
    return data[5:] if flexible else data[4:]


NOT_CONTROLLER = 41


class NotController(KquotaError):
    """NotController: the broker asked is not the controller; ask another."""


def upsert_scram_credentials(host: str, port: int, users: dict[str, str]) -> None:
    """upsert_scram_credentials gives every user both SCRAM mechanisms' credentials; it
    raises :class:`NotController` when the broker asked is not the controller."""
    upserts = []
    for name, password in users.items():
        for mechanism, algorithm in _MECHANISMS.values():
            salt = os.urandom(32)
            salted = hashlib.pbkdf2_hmac(algorithm, password.encode(), salt, _ITERATIONS)
            upserts.append(
                _compact(name.encode())
                + struct.pack(">bi", mechanism, _ITERATIONS)
                + _compact(salt)
                + _compact(salted)
                + b"\x00"
            )
    body = _uvarint(1) + _uvarint(len(upserts) + 1) + b"".join(upserts) + b"\x00"
    with socket.create_connection((host, port), timeout=30) as sock:
        sock.settimeout(30)
        data = _call(sock, 51, 0, body, flexible=True)  # AlterUserScramCredentials v0
    count, pos = _read_uvarint(data, 4)  # after ThrottleTimeMs
    for _ in range(count - 1):
        n, pos = _read_uvarint(data, pos)
        user = data[pos : pos + n - 1].decode()
        pos += n - 1
        (code,) = struct.unpack_from(">h", data, pos)
        n, pos = _read_uvarint(data, pos + 2)
        message = data[pos : pos + n - 1].decode() if n else None
        pos += max(n - 1, 0) + 1  # the message, then the result's tagged fields
        if code == NOT_CONTROLLER:
            raise NotController(f"{host}:{port} is not the controller")
        if code:
            raise KquotaError(
                f"the broker refused SCRAM credentials for {user!r}: error {code} {message or ''}"
            )


def scram_login_ok(host: str, port: int, username: str, password: str) -> bool:
    """scram_login_ok: a SCRAM-SHA-512 login of ``username`` succeeds on the SASL listener."""
    from kquota.kafka.sasl import Scram

    scram = Scram("SCRAM-SHA-512", username, password)
    mech = b"SCRAM-SHA-512"
    try:
        with socket.create_connection((host, port), timeout=5) as sock:
            sock.settimeout(5)
            # SaslHandshake v1, then SaslAuthenticate v1 (neither flexible).
            answer = _call(sock, 17, 1, struct.pack(">h", len(mech)) + mech, flexible=False)
            if struct.unpack_from(">h", answer, 0)[0] != 0:
                return False
            message: bytes | None = scram.first()
            while message is not None:
                reply = _call(sock, 36, 1, struct.pack(">i", len(message)) + message, False)
                code, n = struct.unpack_from(">hh", reply, 0)
                if code:
                    return False
                pos = 4 + max(n, 0)
                (size,) = struct.unpack_from(">i", reply, pos)
                message = scram.respond(reply[pos + 4 : pos + 4 + size])
    except (OSError, KquotaError, struct.error):
        return False
    return True
