"""Connection and WireAdmin behaviour a real broker cannot produce on demand, on a loopback fake
(:func:`fake_listener.fake_broker`: what it does not emulate is said there)."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import ssl
import struct
import subprocess
from pathlib import Path
from typing import Any

import pytest

from fake_listener import (
    BROKER_APIS,
    Header,
    Script,
    fake_api_versions,
    fake_broker,
    fake_frame,
    fake_reply,
)
from kquota.kafka.admin import (
    AsyncWireAdmin,
    QuotaAlteration,
    QuotaOp,
    WireAdmin,
    chunk_alterations,
)
from kquota.kafka.config import ClientConfig
from kquota.kafka.conn import BrokerConnection, backoff_seconds, connect_any
from kquota.kafka.errors import (
    BrokerConnectionError,
    KafkaTimeoutError,
    UnsupportedVersionError,
)
from kquota.kafka.protocol import decode_request, encode_response
from kquota.model import Entity
from quota_answers import alter_answer, alter_entry, describe_answer, describe_entry


def _fast(**kw: Any) -> ClientConfig:
    # No retries, no backoff; a request bound that only stops a hang (a fake answers at once,
    # and a loaded CI machine can stall this process for more than a short one).
    props = {"request.timeout.ms": "30000", "retries": "0", "retry.backoff.ms": "1"}
    props.update({k.replace("_", "."): str(v) for k, v in kw.items()})
    return ClientConfig.from_properties(props)


async def _raw(header: Header, writer: asyncio.StreamWriter, data: bytes) -> None:
    writer.write(data)


def test_describe_through_fake() -> None:
    async def script(header: Header, body: dict[str, Any], writer: asyncio.StreamWriter) -> None:
        assert header["ClientId"] == "kquota"
        assert body == {"Components": [], "Strict": False}
        entry = describe_entry([("client-id", None), ("user", "a")], {"producer_byte_rate": 1024.0})
        fake_reply(writer, header, describe_answer([entry]))

    async def main() -> None:
        log: list[Header] = []
        async with fake_broker(script, log=log) as addr:
            admin = AsyncWireAdmin([addr], _fast())
            state = await admin.describe_all()
            await admin.close()
        assert state == {
            Entity.of({"user": "a", "client-id": None}): {"producer_byte_rate": 1024.0}
        }
        assert (log[0]["RequestApiKey"], log[0]["RequestApiVersion"]) == (18, 3)
        assert (log[1]["RequestApiKey"], log[1]["RequestApiVersion"]) == (48, 1)

    asyncio.run(main())


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (struct.pack(">i", 2**31 - 1), "frame of 2147483647 bytes"),
        (struct.pack(">i", -5), "frame of -5 bytes"),
        (b"HTTP/1.1 400 Bad Request\r\n\r\n", "not a Kafka response"),
        (fake_frame(b"\x00\x00\x00\x02\x00\x00"), "malformed response"),
        (fake_frame(b"\x00\x00\x7f\x00" + b"\x00" * 20), "correlation id 32512"),
        (struct.pack(">i", 100) + b"\x00" * 10, "closed the connection mid-frame"),
        (b"", "closed the connection"),
    ],
    ids=["2GB", "negative", "http", "garbage", "stray-id", "truncated", "eof"],
)
def test_bad_bytes_are_connection_errors(data: bytes, message: str) -> None:
    async def script(header: Header, body: dict[str, Any], writer: asyncio.StreamWriter) -> None:
        writer.write(data)
        if not data or data.startswith(struct.pack(">i", 100)):
            writer.close()

    async def main() -> None:
        async with fake_broker(script) as addr:
            admin = AsyncWireAdmin([addr], _fast(), max_frame_bytes=1 << 20)
            with pytest.raises(BrokerConnectionError, match=message):
                await admin.describe_all()
            await admin.close()

    asyncio.run(main())


def test_silent_broker_times_out() -> None:
    async def script(header: Header, body: dict[str, Any], writer: asyncio.StreamWriter) -> None:
        return None  # never answers

    async def main() -> None:
        async with fake_broker(script) as addr:
            admin = AsyncWireAdmin([addr], _fast(retries=2, request_timeout_ms=400))
            loop = asyncio.get_running_loop()
            start = loop.time()
            with pytest.raises(KafkaTimeoutError, match="DescribeClientQuotas .* within 400 ms"):
                await admin.describe_all()
            # three attempts of 400 ms each (plus tiny backoffs)
            assert loop.time() - start >= 1.1
            await admin.close()

    asyncio.run(main())


def test_retry_after_a_dropped_connection_succeeds() -> None:
    calls = {"n": 0}

    async def script(header: Header, body: dict[str, Any], writer: asyncio.StreamWriter) -> None:
        calls["n"] += 1
        if calls["n"] == 1:
            writer.close()
            return
        fake_reply(writer, header, describe_answer())

    async def main() -> None:
        async with fake_broker(script) as addr:
            admin = AsyncWireAdmin([addr], _fast(retries=3))
            assert await admin.describe_all() == {}
            await admin.close()
        assert calls["n"] == 2

    asyncio.run(main())


def test_broker_without_quota_apis_needs_kafka_2_6() -> None:
    async def main() -> None:
        async with fake_broker(_noop, apis=[(17, 0, 1), (18, 0, 3), (36, 0, 1)]) as addr:
            with pytest.raises(UnsupportedVersionError, match="needs Kafka 2.6 or newer"):
                await connect_any([addr], _fast())

    asyncio.run(main())


async def _noop(header: Header, body: dict[str, Any], writer: asyncio.StreamWriter) -> None:
    return None


def test_api_versions_falls_back_to_v0() -> None:
    """A broker that does not know ApiVersions v3 answers in v0 with error 35 (KIP-511)."""
    seen: list[int] = []

    done = asyncio.Event()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await _serve_versions(reader, writer)
        finally:
            writer.close()
            done.set()

    async def _serve_versions(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(asyncio.IncompleteReadError, ConnectionError):
            while True:
                size = struct.unpack(">i", await reader.readexactly(4))[0]
                header, _ = decode_request(await reader.readexactly(size))
                version = header["RequestApiVersion"]
                seen.append(version)
                body = fake_api_versions(BROKER_APIS if version == 0 else [(18, 0, 2)])
                body["ErrorCode"] = 0 if version == 0 else 35
                payload = encode_response(18, 0, header["CorrelationId"], body)
                writer.write(fake_frame(payload))
                await writer.drain()

    async def main() -> None:
        server = await asyncio.start_server(handle, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        conn = await BrokerConnection.open(f"127.0.0.1:{port}", _fast())
        assert conn.version_for(48) == 1
        await conn.close()
        await asyncio.wait_for(done.wait(), 2)
        server.close()
        await server.wait_closed()

    asyncio.run(main())
    assert seen == [3, 0]


def test_bootstrap_tries_each_address() -> None:
    async def main() -> None:
        dead = await asyncio.start_server(lambda r, w: w.close(), "127.0.0.1", 0)
        dead_port = dead.sockets[0].getsockname()[1]
        dead.close()
        await dead.wait_closed()
        async with fake_broker(_noop) as addr:
            conn = await connect_any([f"127.0.0.1:{dead_port}", addr], _fast())
            assert conn.address == addr
            await conn.close()
        with pytest.raises(BrokerConnectionError, match=f"cannot connect to 127.0.0.1:{dead_port}"):
            await connect_any([f"127.0.0.1:{dead_port}"], _fast())

    asyncio.run(main())


def test_backoff_is_exponential_capped_and_jittered() -> None:
    for attempt, base in [(0, 0.1), (1, 0.2), (2, 0.4), (10, 1.0)]:
        d = backoff_seconds(attempt, 100)
        assert base * 0.8 <= d <= base * 1.2


def _alteration(name: str, n_ops: int = 1) -> QuotaAlteration:
    keys = ["producer_byte_rate", "consumer_byte_rate", "request_percentage"]
    return QuotaAlteration(
        Entity.of({"user": name}), tuple(QuotaOp.set(k, 1000.0) for k in keys[:n_ops])
    )


def test_chunking_keeps_entities_whole() -> None:
    alts = [_alteration(f"u{i}", 1 + i % 3) for i in range(10)]  # 1,2,3,1,2,3,... = 19 ops
    chunks = chunk_alterations(alts, 4)
    assert [a for c in chunks for a in c] == alts
    assert all(sum(len(a.ops) for a in c) <= 4 for c in chunks)
    assert chunk_alterations([_alteration("big", 3)], 2) == [[_alteration("big", 3)]]


def test_alter_matches_by_entity_retries_retriable_and_chunks() -> None:
    """The fake answers in reverse order with types reversed, and NOT_CONTROLLER once."""
    requests: list[int] = []
    failed_once: set[str] = set()

    async def script(header: Header, body: dict[str, Any], writer: asyncio.StreamWriter) -> None:
        requests.append(len(body["Entries"]))
        entries = []
        for e in reversed(body["Entries"]):
            name = e["Entity"][0]["EntityName"]
            code, message = 0, None
            if name == "retry-me" and name not in failed_once:
                failed_once.add(name)
                code = 41
            elif name == "bad":
                code, message = 42, "Invalid configuration key nope"
            parts = [(p["EntityType"], p["EntityName"]) for p in e["Entity"]]
            entries.append(alter_entry(reversed(parts), code, message))
        fake_reply(writer, header, alter_answer(entries))

    alts = [_alteration(n) for n in ["a", "retry-me", "bad", "b", "c"]]

    async def main() -> list[Any]:
        async with fake_broker(script) as addr:
            admin = AsyncWireAdmin([addr], _fast(retries=2), chunk_keys=2, max_in_flight=2)
            results = await admin.alter(alts, validate_only=True)
            await admin.close()
            return results

    results = asyncio.run(main())
    assert [r.entity for r in results] == [a.entity for a in alts]
    assert [r.error_name for r in results] == [
        "NONE",
        "NONE",
        "INVALID_REQUEST",
        "NONE",
        "NONE",
    ]
    assert results[2].error_message == "Invalid configuration key nope" and not results[2].ok
    assert sorted(requests) == [1, 1, 2, 2]  # three chunks, plus the retried entity


def test_alter_rejects_duplicate_entities_before_sending() -> None:
    from kquota.errors import UsageError

    dup = [_alteration("x"), QuotaAlteration(Entity.of({"user": "x"}), (QuotaOp.delete("k"),))]
    with WireAdmin(["127.0.0.1:1"], _fast()) as admin, pytest.raises(UsageError, match="merge"):
        admin.alter(dup, validate_only=False)


@pytest.fixture(scope="module")
def fake_tls_files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.fail("openssl is needed to make the fake broker's certificate")
    d = tmp_path_factory.mktemp("tls")
    cert, key = d / "cert.pem", d / "key.pem"
    subprocess.run(
        [
            openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
            "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost",
            "-keyout", str(key), "-out", str(cert),
        ],
        check=True,
        capture_output=True,
    )  # fmt: skip
    return cert, key


@pytest.mark.parametrize(
    ("host", "identification", "ok"),
    [("localhost", "https", True), ("127.0.0.1", "https", False), ("127.0.0.1", "none", True)],
)
def test_tls_verifies_certificate_and_hostname(
    fake_tls_files: tuple[Path, Path], host: str, identification: str, ok: bool
) -> None:
    cert, key = fake_tls_files
    server_ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_ctx.load_cert_chain(str(cert), str(key))

    async def script(header: Header, body: dict[str, Any], writer: asyncio.StreamWriter) -> None:
        fake_reply(writer, header, describe_answer())

    async def main() -> None:
        async with fake_broker(script, ssl_ctx=server_ctx) as addr:
            port = addr.rsplit(":", 1)[1]
            config = ClientConfig.from_properties(
                {
                    "security.protocol": "SSL",
                    "ssl.ca.location": str(cert),
                    "ssl.endpoint.identification.algorithm": identification,
                    "request.timeout.ms": "30000",
                    "retries": "0",
                }
            )
            admin = AsyncWireAdmin([f"{host}:{port}"], config)
            if ok:
                assert await admin.describe_all() == {}
            else:
                with pytest.raises(BrokerConnectionError, match="TLS to .* failed"):
                    await admin.describe_all()
            await admin.close()

    asyncio.run(main())


def _sasl_script(seen: list[bytes], mechanisms: list[str]) -> Script:
    async def script(header: Header, body: dict[str, Any], writer: asyncio.StreamWriter) -> None:
        key = header["RequestApiKey"]
        if key == 17:
            ok = body["Mechanism"] in mechanisms
            fake_reply(writer, header, {"ErrorCode": 0 if ok else 33, "Mechanisms": mechanisms})
        elif key == 36:
            seen.append(body["AuthBytes"])
            fake_reply(
                writer,
                header,
                {"ErrorCode": 0, "ErrorMessage": None, "AuthBytes": b"", "SessionLifetimeMs": 0},
            )
        else:
            fake_reply(writer, header, describe_answer())

    return script


def test_oauthbearer_token_file_is_read_per_connection(tmp_path: Path) -> None:
    token = tmp_path / "token"
    token.write_text("first-token\n")
    seen: list[bytes] = []

    async def main() -> None:
        async with fake_broker(_sasl_script(seen, ["OAUTHBEARER"])) as addr:
            config = ClientConfig.from_properties(
                {
                    "security.protocol": "SASL_PLAINTEXT",
                    "sasl.mechanism": "OAUTHBEARER",
                    "sasl.oauthbearer.token.file": str(token),
                    "request.timeout.ms": "30000",
                }
            )
            for _ in range(2):
                admin = AsyncWireAdmin([addr], config)
                assert await admin.describe_all() == {}
                await admin.close()
                token.write_text("second-token")

    asyncio.run(main())
    assert seen == [
        b"n,,\x01auth=Bearer first-token\x01\x01",
        b"n,,\x01auth=Bearer second-token\x01\x01",
    ]


def test_mechanism_not_enabled_names_the_enabled_ones() -> None:
    from kquota.kafka.errors import AuthenticationError

    async def main() -> None:
        async with fake_broker(_sasl_script([], ["GSSAPI", "PLAIN"])) as addr:
            config = ClientConfig.from_properties(
                {
                    "security.protocol": "SASL_PLAINTEXT",
                    "sasl.mechanism": "SCRAM-SHA-512",
                    "sasl.username": "u",
                    "sasl.password": "p-secret",
                }
            )
            with pytest.raises(AuthenticationError) as e:
                await connect_any([addr], config)
            assert "does not enable SCRAM-SHA-512 (enabled: GSSAPI, PLAIN)" in str(e.value)
            assert e.value.code == 33 and "p-secret" not in str(e.value)

    asyncio.run(main())
