"""Loopback fakes for what a real broker cannot do on demand, each named fake.

:class:`FakeListener` counts connection attempts and hangs up: "how many times did kquota
try to connect" is nothing a real broker reports, and every refusal that must happen before
the first connection is counted against it.

:func:`fake_broker` is a tiny asyncio server speaking Kafka framing with kquota's own codec.
It answers ApiVersions like a 4.3 broker and hands every other request to the test's script,
which may answer with bytes no broker sends (a malformed answer, a stray correlation id). It
does not emulate: SASL, quota storage, validation, authorization, or a broker's ordering
guarantees beyond one connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import ssl
import struct
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from kquota.kafka.protocol import decode_request, encode_response


class FakeListener:
    """FakeListener accepts TCP connections on loopback, counts them and hangs up."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.accepted = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.sock.getsockname()[1]}"

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            self.accepted += 1
            conn.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self.sock.close()


Header = dict[str, Any]
Script = Callable[[Header, dict[str, Any], asyncio.StreamWriter], Awaitable[None]]

BROKER_APIS = [(17, 0, 1), (18, 0, 4), (36, 0, 2), (48, 0, 1), (49, 0, 1)]


def fake_frame(payload: bytes) -> bytes:
    return struct.pack(">i", len(payload)) + payload


def fake_reply(writer: asyncio.StreamWriter, header: Header, body: dict[str, Any]) -> None:
    payload = encode_response(
        header["RequestApiKey"], header["RequestApiVersion"], header["CorrelationId"], body
    )
    writer.write(fake_frame(payload))


def fake_api_versions(apis: list[tuple[int, int, int]]) -> dict[str, Any]:
    return {
        "ErrorCode": 0,
        "ApiKeys": [{"ApiKey": k, "MinVersion": lo, "MaxVersion": hi} for k, lo, hi in apis],
        "ThrottleTimeMs": 0,
    }


@contextlib.asynccontextmanager
async def fake_broker(
    script: Script,
    *,
    apis: list[tuple[int, int, int]] = BROKER_APIS,
    ssl_ctx: ssl.SSLContext | None = None,
    log: list[Header] | None = None,
) -> AsyncIterator[str]:
    """fake_broker serves on 127.0.0.1 and yields its address."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                size = struct.unpack(">i", await reader.readexactly(4))[0]
                header, body = decode_request(await reader.readexactly(size))
                if log is not None:
                    log.append(header)
                if header["RequestApiKey"] == 18:
                    fake_reply(writer, header, fake_api_versions(apis))
                else:
                    await script(header, body, writer)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0, ssl=ssl_ctx)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"127.0.0.1:{port}"
    finally:
        server.close()
        # Handlers stuck in readexactly are cancelled with the server in 3.11+.
        with contextlib.suppress(Exception):
            await asyncio.wait_for(server.wait_closed(), 1)
