"""One connection to one broker: framing, correlation ids, version negotiation, TLS and SASL.

Decisions:

* **Framing.** Every frame is a 4-byte big-endian size then the payload. A size outside
  ``[4, max_frame_bytes]`` (a non-Kafka peer, a TLS/plaintext mix-up, a bogus 2 GB length) is a
  :class:`BrokerConnectionError` before anything is allocated.
* **Pipelining.** Requests are written as they come; one reader task reads frames and hands
  each to the future waiting on its correlation id. A response whose id nobody waits for
  means the stream is out of step, and the connection is dropped.
* **Timeouts.** Each request waits at most ``request.timeout.ms``. A timeout closes the
  connection (as Kafka's NetworkClient does): later bytes on it could not be trusted, and the
  caller retries on a fresh one.
* **Negotiation.** ApiVersions v3 first (it carries ``ClientSoftwareName=kquota``); a broker
  that does not know v3 answers in v0 with UNSUPPORTED_VERSION, and we ask again at v0. Each
  API is then used at the highest version both sides support.
* **Authentication.** SaslHandshake v1 then SaslAuthenticate at the highest common version;
  the mechanisms live in :mod:`kquota.kafka.sasl`.

Retries are the caller's business (:func:`backoff_seconds` gives the delays); what is
retriable is a connection error, a timeout, or a retriable error code.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import random
import ssl
import struct
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from kquota.errors import UsageError
from kquota.kafka.config import ClientConfig, split_host_port
from kquota.kafka.errors import (
    UNSUPPORTED_SASL_MECHANISM,
    UNSUPPORTED_VERSION,
    AuthenticationError,
    BrokerConnectionError,
    DroppedAfterRequest,
    KafkaError,
    KafkaTimeoutError,
    UnsupportedVersionError,
    error_for,
)
from kquota.kafka.protocol import (
    ALTER_CLIENT_QUOTAS,
    API_VERSIONS,
    CONSUMER_GROUP_DESCRIBE,
    DESCRIBE_ACLS,
    DESCRIBE_CLIENT_QUOTAS,
    DESCRIBE_CLUSTER,
    DESCRIBE_CONFIGS,
    DESCRIBE_GROUPS,
    DESCRIBE_USER_SCRAM_CREDENTIALS,
    LIST_GROUPS,
    METADATA,
    SASL_AUTHENTICATE,
    SASL_HANDSHAKE,
    ProtocolError,
    decode_response,
    encode_request,
    encode_request_header,
    supported_versions,
)
from kquota.kafka.sasl import OAuthBearer, Plain, SaslMechanism, Scram
from kquota.kafka.tls import error_words, ssl_context
from kquota.version import __version__

log = logging.getLogger(__name__)

# Large enough for a describe of ~2M entities; small enough that a garbage length is refused.
DEFAULT_MAX_FRAME_BYTES = 256 * 1024 * 1024
# ApiVersions v3 is the first with ClientSoftwareName/Version (KIP-511); brokers since 2.4.
API_VERSIONS_VERSION = 3
QUOTA_APIS = (DESCRIBE_CLIENT_QUOTAS, ALTER_CLIENT_QUOTAS)
MAX_BACKOFF_MS = 1000

API_NAMES = {
    SASL_HANDSHAKE: "SaslHandshake",
    API_VERSIONS: "ApiVersions",
    SASL_AUTHENTICATE: "SaslAuthenticate",
    DESCRIBE_CLIENT_QUOTAS: "DescribeClientQuotas",
    ALTER_CLIENT_QUOTAS: "AlterClientQuotas",
    DESCRIBE_CLUSTER: "DescribeCluster",
    METADATA: "Metadata",
    DESCRIBE_USER_SCRAM_CREDENTIALS: "DescribeUserScramCredentials",
    DESCRIBE_ACLS: "DescribeAcls",
    LIST_GROUPS: "ListGroups",
    DESCRIBE_GROUPS: "DescribeGroups",
    CONSUMER_GROUP_DESCRIBE: "ConsumerGroupDescribe",
    DESCRIBE_CONFIGS: "DescribeConfigs",
}

API_SINCE = {
    DESCRIBE_USER_SCRAM_CREDENTIALS: "Kafka 2.7 (KIP-554)",
    DESCRIBE_CLUSTER: "Kafka 2.8 (KIP-700)",
    CONSUMER_GROUP_DESCRIBE: "Kafka 4.0 (KIP-848)",
}
"""The release that brought an API kquota uses, for saying why a broker lacks it (the quota
APIs say it their own way; the others are older than any broker kquota can talk to)."""

CONTROLLER_ONLY_APIS = frozenset({52, 53, 54, 62, 63, 70})
"""Vote, BeginQuorumEpoch, EndQuorumEpoch (KIP-595), BrokerRegistration, BrokerHeartbeat
(KIP-631) and ControllerRegistration (KIP-919): a KRaft controller's listener answers
ApiVersions with these and without the client APIs (the quota APIs among them); a broker's
listener never lists them. So a missing quota API next to them means the address is a
controller's, not an old broker's."""

T = TypeVar("T")
BodyEncoder = Callable[[int], bytes]
"""BodyEncoder gives a request body's bytes at the negotiated version."""
FrameDecoder = Callable[[int, bytes], T]
"""FrameDecoder reads a response frame (header included) at a version; raises ProtocolError."""

_SIZE = struct.Struct(">i")
_HANDSHAKE_APIS = frozenset({API_VERSIONS, SASL_HANDSHAKE, SASL_AUTHENTICATE})
# Answers that do not count as the first real answer (see _lost): the handshake, and the
# Metadata request every connection of WireAdmin starts with to learn the brokers.
_SETUP_APIS = _HANDSHAKE_APIS | {METADATA}


def backoff_seconds(attempt: int, base_ms: int, max_ms: int = MAX_BACKOFF_MS) -> float:
    """backoff_seconds: exponential backoff (base * 2^attempt, capped) with ±20% jitter.

    The jitter (Kafka's ``retry.backoff`` uses the same ±20%) keeps many clients that failed
    together from retrying in lockstep.
    """
    delay = min(max_ms, base_ms * (2**attempt))
    return float(delay * random.uniform(0.8, 1.2) / 1000.0)


@dataclass(slots=True)
class _Pending:
    api_key: int
    version: int
    future: asyncio.Future[Any]
    decode: FrameDecoder[Any] | None = None


class BrokerConnection:
    """BrokerConnection is an open, negotiated and authenticated connection to one broker."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        address: str,
        config: ClientConfig,
        max_frame_bytes: int,
    ) -> None:
        self.address = address
        self.shown = config.show_address(address)  # how messages name it: no ${VAR} value
        self._reader = reader
        self._writer = writer
        self._config = config
        self._max_frame = max_frame_bytes
        self._next_id = 1
        self._pending: dict[int, _Pending] = {}
        self._answered = False
        self._handshaking = True
        self._error: KafkaError | None = None
        self.broker_versions: dict[int, tuple[int, int]] = {}
        self._read_task = asyncio.get_running_loop().create_task(self._read_loop())

    @classmethod
    async def open(
        cls,
        address: str,
        config: ClientConfig,
        *,
        required_apis: Iterable[int] = QUOTA_APIS,
        max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES,
    ) -> BrokerConnection:
        """open connects, negotiates versions, authenticates, and checks the needed APIs."""
        host, port = split_host_port(address)
        shown = config.show_address(address)
        ctx = ssl_context(config) if config.uses_ssl else None
        timeout = config.request_timeout_ms / 1000
        try:
            reader, writer = await asyncio.wait_for(
                asyncio.open_connection(
                    host, port, ssl=ctx, server_hostname=host if ctx is not None else None
                ),
                timeout,
            )
        except TimeoutError:
            raise BrokerConnectionError(
                f"cannot connect to {shown}: no answer within {config.request_timeout_ms} ms"
            ) from None
        except ssl.SSLCertVerificationError as e:
            raise BrokerConnectionError(
                f"TLS to {shown} failed: {e.verify_message or e.reason} (check ssl.ca.location"
                ", or ssl.endpoint.identification.algorithm for host-name checks)"
            ) from None
        except (OSError, ssl.SSLError) as e:
            reason = _reason(e)
            if ctx is not None and _closed_on_hello(e):
                reason = (
                    f"the TLS handshake failed ({reason}): is it a listener without TLS? "
                    f"security.protocol is {config.security_protocol}, but a PLAINTEXT or "
                    "SASL_PLAINTEXT listener needs security.protocol=PLAINTEXT or SASL_PLAINTEXT"
                )
            if shown != address:  # "Multiple exceptions: … ('h', 9092)" names the host
                reason = reason.replace(host, "<host>")
            raise BrokerConnectionError(f"cannot connect to {shown}: {reason}") from None
        conn = cls(reader, writer, address, config, max_frame_bytes)
        try:
            await conn._negotiate()
            if config.uses_sasl:
                await conn._authenticate()
            for api in required_apis:
                conn.version_for(api)
        except BaseException:
            await conn.close()
            raise
        conn._handshaking = False
        return conn

    @property
    def closed(self) -> bool:
        return self._error is not None

    def version_for(self, api_key: int) -> int:
        """version_for is the highest version of ``api_key`` both kquota and the broker speak."""
        ours = supported_versions(api_key)
        theirs = self.broker_versions.get(api_key)
        name = API_NAMES.get(api_key, f"API {api_key}")
        hint = (
            "; kquota needs Kafka 2.6 or newer (KIP-546 client-quota APIs)"
            if api_key in QUOTA_APIS
            else ""
        )
        since = f" (it came with {API_SINCE[api_key]})" if api_key in API_SINCE else ""
        if theirs is None and CONTROLLER_ONLY_APIS & self.broker_versions.keys():
            raise UnsupportedVersionError(
                UNSUPPORTED_VERSION,
                f"{self.shown} is a KRaft controller's listener, not a broker's: give a "
                "broker's address (a client's bootstrap.servers, not controller.quorum.voters "
                "or controller.quorum.bootstrap.servers)",
            )
        if theirs is None:
            raise UnsupportedVersionError(
                UNSUPPORTED_VERSION,
                f"{name} is not supported by this broker ({self.shown}){since}{hint}",
            )
        lo, hi = max(ours[0], theirs[0]), min(ours[1], theirs[1])
        if lo > hi:
            raise UnsupportedVersionError(
                UNSUPPORTED_VERSION,
                f"{name} v{ours[0]}-{ours[1]} is not supported by this broker "
                f"({self.shown}), which speaks v{theirs[0]}-{theirs[1]}{hint}",
            )
        return hi

    async def request(
        self,
        api_key: int,
        body: Mapping[str, Any],
        *,
        version: int | None = None,
        timeout_ms: int | None = None,
    ) -> dict[str, Any]:
        """request sends one request and waits for its response body (pipelining allowed)."""
        if version is None:
            version = self.version_for(api_key)
        future = self.send(api_key, body, version)
        return await self.wait(future, api_key, timeout_ms)

    async def call(
        self,
        api_key: int,
        encode: BodyEncoder,
        decode: FrameDecoder[T],
        *,
        timeout_ms: int | None = None,
    ) -> T:
        """call is :meth:`request` with the caller's own codec (kquota.kafka.quotawire's
        specialised ones): ``encode(version)`` gives the body's bytes and ``decode(version,
        frame)`` reads the response, header included, straight into the caller's types."""
        version = self.version_for(api_key)
        future: asyncio.Future[T] = self._send(
            api_key,
            version,
            lambda cid: (
                encode_request_header(api_key, version, cid, self._config.client_id)
                + encode(version)
            ),
            decode,
        )
        return await self.wait(future, api_key, timeout_ms)

    def send(
        self, api_key: int, body: Mapping[str, Any], version: int
    ) -> asyncio.Future[dict[str, Any]]:
        """send writes a request now and returns the future of its response body."""
        return self._send(
            api_key,
            version,
            lambda cid: encode_request(api_key, version, cid, self._config.client_id, body),
            None,
        )

    def _send(
        self,
        api_key: int,
        version: int,
        frame_for: Callable[[int], bytes],
        decode: FrameDecoder[T] | None,
    ) -> asyncio.Future[T]:
        if self._error is not None:
            raise self._error
        correlation_id = self._next_id
        self._next_id = (self._next_id + 1) & 0x7FFFFFFF
        try:
            frame = frame_for(correlation_id)
        except ProtocolError as e:
            # Our own body did not fit the spec: a programming error, not the broker's.
            raise ValueError(f"cannot encode {API_NAMES.get(api_key, api_key)}: {e}") from e
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        self._pending[correlation_id] = _Pending(api_key, version, future, decode)
        self._writer.write(_SIZE.pack(len(frame)) + frame)
        return future

    async def wait(
        self, future: asyncio.Future[T], api_key: int, timeout_ms: int | None = None
    ) -> T:
        """wait awaits a sent request's response; a timeout closes the connection."""
        ms = self._config.request_timeout_ms if timeout_ms is None else timeout_ms
        try:
            await self._writer.drain()
            return await asyncio.wait_for(asyncio.shield(future), ms / 1000)
        except TimeoutError:
            timed_out = KafkaTimeoutError(
                f"{API_NAMES.get(api_key, api_key)} to {self.shown} got no answer within "
                f"{ms} ms (request.timeout.ms)"
            )
            self._fail(timed_out)
            await self.close()
            raise timed_out from None
        except (ConnectionError, OSError) as e:
            lost = self._lost(f"connection to {self.shown} lost: {_reason(e)}")
            self._fail(lost)
            raise lost from None

    async def close(self) -> None:
        """close ends the connection; waiting requests fail with BrokerConnectionError."""
        self._fail(BrokerConnectionError(f"connection to {self.shown} closed"))
        self._read_task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await self._read_task
        self._writer.close()
        with contextlib.suppress(Exception):
            await self._writer.wait_closed()

    def _fail(self, error: KafkaError) -> None:
        if self._error is None:
            self._error = error
        pending, self._pending = self._pending, {}
        for p in pending.values():
            if not p.future.done():
                p.future.set_exception(error)
                # Nobody may be waiting (a pipelined request abandoned by its caller).
                p.future.exception()

    async def _read_loop(self) -> None:
        try:
            while True:
                head = await self._reader.readexactly(4)
                (size,) = _SIZE.unpack(head)
                if size < 4 or size > self._max_frame:
                    if head[:2] == b"\x15\x03" and not self._config.uses_ssl:
                        # A TLS alert record (content type 21, version 3.x): the listener
                        # speaks TLS and refused the plain bytes of ApiVersions.
                        raise BrokerConnectionError(
                            f"{self.shown} answered in TLS: it is an SSL or SASL_SSL listener, "
                            f"but security.protocol is {self._config.security_protocol}; set "
                            "security.protocol=SSL (or SASL_SSL) and ssl.ca.location"
                        )
                    raise BrokerConnectionError(
                        f"{self.shown} sent a frame of {size} bytes (limit {self._max_frame}): "
                        "not a Kafka response; is security.protocol right for this listener?"
                    )
                payload = await self._reader.readexactly(size)
                (correlation_id,) = _SIZE.unpack_from(payload, 0)
                pending = self._pending.pop(correlation_id, None)
                if pending is None:
                    raise BrokerConnectionError(
                        f"{self.shown} answered correlation id {correlation_id}, which no "
                        "request is waiting for"
                    )
                try:
                    if pending.decode is None:
                        body = _decode(pending.api_key, pending.version, payload)
                    else:
                        body = pending.decode(pending.version, payload)
                except ProtocolError as e:
                    # Put it back so that _fail reports the error to its waiter too.
                    self._pending[correlation_id] = pending
                    raise BrokerConnectionError(
                        f"malformed response from {self.shown}: {e}"
                    ) from None
                if not pending.future.done():
                    pending.future.set_result(body)
                if pending.api_key not in _SETUP_APIS:
                    self._answered = True
        except asyncio.IncompleteReadError as e:
            what = "mid-frame" if e.partial else ""
            self._fail(self._lost(f"{self.shown} closed the connection {what}".rstrip()))
        except BrokerConnectionError as e:
            self._fail(e)
        except (OSError, ssl.SSLError) as e:
            self._fail(self._lost(f"connection to {self.shown} lost: {_reason(e)}"))
        finally:
            if self._error is None:
                self._fail(BrokerConnectionError(f"connection to {self.shown} closed"))
            self._writer.close()

    def _lost(self, message: str) -> BrokerConnectionError:
        """_lost explains a dropped connection, guessing at the configuration only when the
        handshake is what failed.

        - During the handshake (ApiVersions, SASL), a close is a configuration mismatch: with
          TLS 1.3 a missing client certificate is only refused after the TLS handshake.
        - After the handshake but before any other answer, the close answered our first real
          request. Either the listener wants SASL this client skipped (a broker answers
          ApiVersions on any listener, then hangs up), or the broker refused that request's
          content (a name longer than 32,767 bytes, say): only a probe on a fresh connection
          tells which, so this is a :class:`DroppedAfterRequest` for the caller to probe.
        - After that, the connection was cut.
        """
        if self._handshaking:
            return BrokerConnectionError(f"{message} ({config_hint(self._config)})")
        if not self._answered:
            return DroppedAfterRequest(message)
        return BrokerConnectionError(message)

    async def _negotiate(self) -> None:
        version = min(API_VERSIONS_VERSION, supported_versions(API_VERSIONS)[1])
        body = await self.request(
            API_VERSIONS,
            {"ClientSoftwareName": "kquota", "ClientSoftwareVersion": __version__},
            version=version,
        )
        if body["ErrorCode"] == UNSUPPORTED_VERSION and version > 0:
            # The broker answered in v0 and lists the ApiVersions versions it knows.
            body = await self.request(API_VERSIONS, {}, version=0)
        if body["ErrorCode"] != 0:
            raise error_for(body["ErrorCode"], None, context=f"ApiVersions to {self.shown}")
        self.broker_versions = {
            k["ApiKey"]: (k["MinVersion"], k["MaxVersion"]) for k in body["ApiKeys"]
        }

    def _sasl_user(self) -> str:
        user = self._config.sasl_username
        if user is None:
            return "(token)"
        if self._config.provenance.hides("sasl.username"):
            return self._config.provenance.name("sasl.username")
        return user

    async def _authenticate(self) -> None:
        mechanism = _mechanism(self._config)
        who = f"SASL {mechanism.name} as {self._sasl_user()} at {self.shown}"
        if self.version_for(SASL_HANDSHAKE) < 1:
            raise UnsupportedVersionError(
                UNSUPPORTED_VERSION, f"{self.shown} does not support SaslHandshake v1"
            )
        hs = await self.request(SASL_HANDSHAKE, {"Mechanism": mechanism.name}, version=1)
        if hs["ErrorCode"] != 0:
            enabled = ", ".join(hs.get("Mechanisms") or []) or "none"
            message = (
                f"the listener does not enable {mechanism.name} (enabled: {enabled})"
                if hs["ErrorCode"] == UNSUPPORTED_SASL_MECHANISM
                else None
            )
            raise error_for(hs["ErrorCode"], message, context=who)
        version = self.version_for(SASL_AUTHENTICATE)
        token: bytes | None = mechanism.first()
        while token is not None:
            resp = await self.request(SASL_AUTHENTICATE, {"AuthBytes": token}, version=version)
            if resp["ErrorCode"] != 0:
                raise AuthenticationError(resp["ErrorCode"], resp.get("ErrorMessage"), context=who)
            token = mechanism.respond(resp.get("AuthBytes") or b"")
        log.debug("authenticated: %s", who)


def config_hint(config: ClientConfig) -> str:
    """config_hint is what to check when a broker hangs up on this client's handshake."""
    hint = "wrong security.protocol for this listener, or the broker dropped us"
    tls = config.security_protocol in ("SSL", "SASL_SSL")
    if tls and config.ssl_certificate_location is None:
        hint += "; if the listener requires client certificates, set ssl.certificate.location"
    return hint


def _decode(api_key: int, version: int, payload: bytes) -> dict[str, Any]:
    if (
        api_key == API_VERSIONS
        and version > 0
        and len(payload) >= 6
        and struct.unpack_from(">h", payload, 4)[0] == UNSUPPORTED_VERSION
    ):
        # KIP-511: an ApiVersions request at a version the broker does not know is answered
        # in v0 (header and body), whatever version was asked for.
        version = 0
    return decode_response(api_key, version, payload)[1]


def _mechanism(config: ClientConfig) -> SaslMechanism:
    name = config.sasl_mechanism or "PLAIN"
    if name == "OAUTHBEARER":
        return OAuthBearer(config.oauthbearer())
    if config.sasl_username is None or config.sasl_password is None:
        raise UsageError(f"SASL {name} needs sasl.username and sasl.password")
    if name == "PLAIN":
        return Plain(config.sasl_username, config.sasl_password)
    return Scram(name, config.sasl_username, config.sasl_password)


_CLOSED = {
    ConnectionResetError: "the connection was reset",
    ConnectionAbortedError: "the connection was aborted",
    BrokenPipeError: "the connection was closed",
    ConnectionRefusedError: "connection refused",
}
"""Words for the exceptions asyncio raises without an errno (a TLS handshake cut short):
a message names what happened, never a Python class."""


def _closed_on_hello(e: BaseException) -> bool:
    """_closed_on_hello: the other end dropped or garbled the TLS handshake, as a Kafka
    listener without TLS does (it reads the ClientHello as a request size and hangs up)."""
    if isinstance(e, ConnectionResetError | ConnectionAbortedError | BrokenPipeError):
        return True
    if isinstance(e, ssl.SSLEOFError | ssl.SSLZeroReturnError):
        return True
    reason = getattr(e, "reason", None) or ""
    return isinstance(e, ssl.SSLError) and reason in (
        "WRONG_VERSION_NUMBER",
        "RECORD_LAYER_FAILURE",
    )


def _reason(e: BaseException) -> str:
    if isinstance(e, ssl.SSLError) and not isinstance(e, ssl.SSLCertVerificationError):
        # "[SSL: WRONG_VERSION_NUMBER] wrong version number (_ssl.c:1000)": the words only.
        return f"TLS error: {error_words(e)}"
    if isinstance(e, OSError) and e.errno and e.errno > 0:
        # os.strerror, not e.strerror: asyncio's "Connect call failed ('10.0.0.1', 9092)"
        # repeats the address, which may have come from a ${VAR} (kquota names it instead).
        try:
            return os.strerror(e.errno)
        except ValueError:
            pass
    if isinstance(e, OSError) and e.strerror:
        return e.strerror
    for kind, words in _CLOSED.items():
        if isinstance(e, kind):
            return words
    return str(e) or "the connection failed"


async def connect_any(
    servers: Iterable[str],
    config: ClientConfig,
    *,
    required_apis: Iterable[int] = QUOTA_APIS,
    max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES,
) -> BrokerConnection:
    """connect_any tries each bootstrap address in turn and returns the first that works.

    Connection failures move on to the next address; authentication, version and usage
    errors do not (another address of the same cluster would say the same).
    """
    failures: list[str] = []
    for address in servers:
        try:
            return await BrokerConnection.open(
                address, config, required_apis=required_apis, max_frame_bytes=max_frame_bytes
            )
        except (BrokerConnectionError, KafkaTimeoutError) as e:
            log.debug("bootstrap %s failed: %s", address, e)
            failures.append(str(e))
    if not failures:
        raise UsageError("no bootstrap servers given")
    raise BrokerConnectionError("; ".join(failures))
