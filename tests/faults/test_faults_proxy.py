"""The fault proxy itself, against the real broker: it forwards, and it breaks when told to.

Requests are hand-built v0 frames (like the devbroker probe), independent of kquota's codec,
so a codec bug cannot make the proxy look broken or working.
"""

from __future__ import annotations

import socket
import struct
import subprocess
import uuid
from collections.abc import Callable

import pytest
from fake_proxy import FaultProxy

from kquota.devbroker.launcher import BrokerInfo
from kquota.devbroker.probe import api_versions_ok, describe_quotas_ok
from kquota.kafka.admin import WireAdmin
from kquota.model import Entity
from polling import assert_eventually, eventually

# The kafka_configs_tool fixture (tests/conftest.py), typed by shape: importing its class via
# `from conftest import ...` breaks once another folder has a conftest.py of its own.
KafkaConfigsTool = Callable[..., subprocess.CompletedProcess[str]]

API_VERSIONS = 18
DESCRIBE_QUOTAS = 48
ALTER_QUOTAS = 49
_CLIENT_ID = b"fault-proxy-test"


def _frame(api_key: int, correlation_id: int, body: bytes) -> bytes:
    header = struct.pack(">hhih", api_key, 0, correlation_id, len(_CLIENT_ID)) + _CLIENT_ID
    return struct.pack(">i", len(header) + len(body)) + header + body


def _string(s: str) -> bytes:
    b = s.encode()
    return struct.pack(">h", len(b)) + b


def _alter_user_quota(user: str, key: str, value: float) -> bytes:
    """AlterClientQuotas v0 body: one entity {user}, one set op, validate_only false."""
    entity = struct.pack(">i", 1) + _string("user") + _string(user)
    ops = struct.pack(">i", 1) + _string(key) + struct.pack(">d?", value, False)
    return struct.pack(">i", 1) + entity + ops + struct.pack(">?", False)


def _recv_exact(sock: socket.socket, n: int) -> bytes:
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise EOFError(f"EOF after {len(buf)} of {n} bytes")
        buf += chunk
    return buf


def _roundtrip(sock: socket.socket, api_key: int, correlation_id: int, body: bytes) -> bytes:
    sock.sendall(_frame(api_key, correlation_id, body))
    (size,) = struct.unpack(">i", _recv_exact(sock, 4))
    data = _recv_exact(sock, size)
    assert struct.unpack_from(">i", data, 0)[0] == correlation_id
    return data[4:]


def _reads_eof(sock: socket.socket) -> bool:
    """True if the peer closed: recv returns b"" (or the connection is reset)."""
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True


def _connect(proxy: FaultProxy) -> socket.socket:
    sock = socket.create_connection((proxy.host, proxy.port), timeout=5)
    sock.settimeout(5)
    return sock


def test_listens_on_loopback_only(kafka_broker: BrokerInfo) -> None:
    with FaultProxy(kafka_broker.bootstrap_servers) as proxy:
        assert proxy.host == "127.0.0.1"
        assert proxy.address == f"127.0.0.1:{proxy.port}"
        assert proxy.port != int(kafka_broker.bootstrap_servers.rsplit(":", 1)[1])


def test_forwards_kafka_requests(kafka_broker: BrokerInfo) -> None:
    with FaultProxy(kafka_broker.bootstrap_servers) as proxy:
        assert api_versions_ok(proxy.host, proxy.port)
        assert describe_quotas_ok(proxy.host, proxy.port)
        assert proxy.stats.accepted == 2
        assert proxy.stats.frames_by_api_key[API_VERSIONS] == 1
        assert proxy.stats.frames_by_api_key[DESCRIBE_QUOTAS] == 1
        assert proxy.stats.bytes_to_client > 0


def test_forwards_to_the_sasl_listener(kafka_broker: BrokerInfo) -> None:
    # ApiVersions is answered before authentication: enough to show bytes flow both ways.
    with FaultProxy(kafka_broker.sasl_bootstrap_servers) as proxy:
        assert api_versions_ok(proxy.host, proxy.port)


def test_cut_gives_an_open_connection_eof_and_new_ones_still_work(
    kafka_broker: BrokerInfo,
) -> None:
    with FaultProxy(kafka_broker.bootstrap_servers) as proxy:
        with _connect(proxy) as sock:
            body = _roundtrip(sock, API_VERSIONS, 1, b"")
            assert struct.unpack_from(">h", body, 0)[0] == 0
            assert proxy.active_connections() == 1
            assert proxy.cut() == 1
            assert _reads_eof(sock)
        assert_eventually(lambda: proxy.active_connections() == 0)
        assert api_versions_ok(proxy.host, proxy.port)


def test_cut_at_frame_drops_the_nth_request(kafka_broker: BrokerInfo) -> None:
    with FaultProxy(kafka_broker.bootstrap_servers) as proxy, _connect(proxy) as sock:
        proxy.cut_at_frame(2)
        _roundtrip(sock, API_VERSIONS, 1, b"")  # frame 1 goes through
        sock.sendall(_frame(API_VERSIONS, 2, b""))  # frame 2 never reaches the broker
        assert _reads_eof(sock)
        assert proxy.fired.is_set()
        assert proxy.stats.frames_by_api_key[API_VERSIONS] == 2


def test_cut_at_frame_counts_only_the_given_api_key(kafka_broker: BrokerInfo) -> None:
    with FaultProxy(kafka_broker.bootstrap_servers) as proxy, _connect(proxy) as sock:
        proxy.cut_at_frame(1, api_key=DESCRIBE_QUOTAS)
        for correlation_id in (1, 2, 3):
            _roundtrip(sock, API_VERSIONS, correlation_id, b"")
        assert not proxy.fired.is_set()
        sock.sendall(_frame(DESCRIBE_QUOTAS, 4, struct.pack(">ib", 0, 0)))
        assert _reads_eof(sock)
        assert proxy.fired.is_set()


def test_cut_at_frame_undelivered_means_the_broker_never_saw_it(
    kafka_broker: BrokerInfo, kafka_configs_tool: KafkaConfigsTool
) -> None:
    user = f"proxy-{uuid.uuid4().hex[:8]}"
    with FaultProxy(kafka_broker.bootstrap_servers) as proxy, _connect(proxy) as sock:
        proxy.cut_at_frame(1, api_key=ALTER_QUOTAS, deliver=False)
        sock.sendall(_frame(ALTER_QUOTAS, 1, _alter_user_quota(user, "producer_byte_rate", 1024)))
        assert _reads_eof(sock)
    out = kafka_configs_tool("--describe", "--entity-type", "users", "--entity-name", user)
    assert "producer_byte_rate" not in out.stdout


def test_cut_at_frame_delivered_commits_but_loses_the_response(
    kafka_broker: BrokerInfo, kafka_configs_tool: KafkaConfigsTool
) -> None:
    user = f"proxy-{uuid.uuid4().hex[:8]}"
    with FaultProxy(kafka_broker.bootstrap_servers) as proxy, _connect(proxy) as sock:
        proxy.cut_at_frame(1, api_key=ALTER_QUOTAS, deliver=True)
        sock.sendall(_frame(ALTER_QUOTAS, 1, _alter_user_quota(user, "producer_byte_rate", 2048)))
        # The client reads EOF, not a response...
        assert _reads_eof(sock)
        assert proxy.stats.bytes_to_client == 0

    # ...yet the broker committed the alteration (describe may trail the controller, by
    # seconds on a loaded machine): polled with kquota's own fast client, then confirmed by
    # Kafka's tool once (a JVM per poll would make the bound a count of JVM start-ups).
    entity = Entity.of({"user": user})
    with WireAdmin(kafka_broker.bootstrap_servers) as admin:
        shown = eventually(admin.describe_all, lambda state: entity in state)
    assert shown.get(entity) == {"producer_byte_rate": 2048.0}
    proc = kafka_configs_tool("--describe", "--entity-type", "users", "--entity-name", user)
    assert "producer_byte_rate=2048" in proc.stdout


def test_cut_after_bytes_tears_a_request(kafka_broker: BrokerInfo) -> None:
    with FaultProxy(kafka_broker.bootstrap_servers) as proxy, _connect(proxy) as sock:
        _roundtrip(sock, API_VERSIONS, 1, b"")
        before = proxy.stats.bytes_to_broker
        proxy.cut_after_bytes(10)
        sock.sendall(_frame(API_VERSIONS, 2, b""))
        assert _reads_eof(sock)
        assert proxy.stats.bytes_to_broker - before == 10
        assert proxy.fired.is_set()


def test_refuse_for_refuses_then_listens_again(kafka_broker: BrokerInfo) -> None:
    with FaultProxy(kafka_broker.bootstrap_servers) as proxy:
        # Long enough for both checks on a loaded machine; the wait after it is measured.
        window = 5.0
        proxy.refuse_for(window)
        with pytest.raises(ConnectionRefusedError):
            socket.create_connection((proxy.host, proxy.port), timeout=2).close()
        assert not api_versions_ok(proxy.host, proxy.port)
        assert_eventually(lambda: api_versions_ok(proxy.host, proxy.port), timeout=window + 30)


def test_stops_by_itself_after_its_lifetime(kafka_broker: BrokerInfo) -> None:
    # A lifetime a loaded machine still connects within; the cut is awaited, not timed.
    proxy = FaultProxy(kafka_broker.bootstrap_servers, lifetime=3.0)
    try:
        sock = _connect(proxy)
        sock.settimeout(proxy.lifetime + 60)  # a hang detector: the cut comes at the lifetime
        with sock:
            assert _reads_eof(sock)  # cut when the lifetime ends
        with pytest.raises(ConnectionRefusedError):
            socket.create_connection((proxy.host, proxy.port), timeout=2).close()
    finally:
        proxy.close()
