"""A minimal liveness probe that speaks just enough Kafka to know a listener really answers.

It is deliberately independent of kquota's codec (hand-built v0 frames, §1.9 of the
semantics notes), so the launcher keeps working while the codec changes and a codec bug
cannot make the test broker look dead.
"""

from __future__ import annotations

import socket
import struct

_CLIENT_ID = b"kquota-probe"


def _frame(api_key: int, correlation_id: int, body: bytes) -> bytes:
    header = struct.pack(">hhih", api_key, 0, correlation_id, len(_CLIENT_ID)) + _CLIENT_ID
    payload = header + body
    return struct.pack(">i", len(payload)) + payload


def _recv_exact(sock: socket.socket, n: int) -> bytes:
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise ConnectionError("connection closed")
        buf += chunk
    return buf


def _roundtrip(host: str, port: int, api_key: int, body: bytes, timeout: float) -> bytes:
    with socket.create_connection((host, port), timeout=timeout) as sock:
        sock.settimeout(timeout)
        sock.sendall(_frame(api_key, 7, body))
        (size,) = struct.unpack(">i", _recv_exact(sock, 4))
        data = _recv_exact(sock, size)
    (correlation_id,) = struct.unpack_from(">i", data, 0)
    if correlation_id != 7:
        raise ConnectionError("unexpected correlation id")
    return data[4:]


def api_versions_ok(host: str, port: int, timeout: float = 2.0) -> bool:
    """api_versions_ok: the listener answers ApiVersions v0 with no error."""
    try:
        body = _roundtrip(host, port, 18, b"", timeout)
    except OSError:
        return False
    return len(body) >= 2 and struct.unpack_from(">h", body, 0)[0] == 0


def describe_quotas_ok(host: str, port: int, timeout: float = 2.0) -> bool:
    """describe_quotas_ok: DescribeClientQuotas v0 (empty filter) answers with no error."""
    try:
        # Components: empty INT32 array; Strict: false.
        body = _roundtrip(host, port, 48, struct.pack(">ib", 0, 0), timeout)
    except OSError:
        return False
    return len(body) >= 6 and struct.unpack_from(">h", body, 4)[0] == 0


def metrics_ok(host: str, port: int, timeout: float = 2.0) -> bool:
    """metrics_ok: the JMX exporter answers ``GET /metrics`` with 200."""
    import http.client

    conn = http.client.HTTPConnection(host, port, timeout=timeout)
    try:
        conn.request("GET", "/metrics")
        response = conn.getresponse()
        response.read()
        return response.status == 200
    except (OSError, http.client.HTTPException):
        return False
    finally:
        conn.close()
