"""Request and response frames: which header version goes with which body, and the framing.

The header version follows the body's flexibility, as Kafka's generator decides it
(``ApiMessageTypeGenerator.generateHeaderVersion``):

* requests: header v2 for a flexible request version, v1 otherwise;
* responses: header v1 for a flexible response version, v0 otherwise, **except ApiVersions
  (key 18), whose response header is always v0** (KIP-511): a client that sent a version the
  broker does not know must still be able to read the error reply.

Frames here have no 4-byte size prefix; the connection layer adds and strips it.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping
from typing import Any

from kquota.kafka.protocol.codec import MessageCodec, message_codec
from kquota.kafka.protocol.errors import ProtocolError
from kquota.kafka.protocol.schema import MessageSpec
from kquota.kafka.protocol.specs import registry

API_VERSIONS = 18
_API_KEY_AND_VERSION = struct.Struct(">hh")


def api_spec(api_key: int, kind: str) -> MessageSpec:
    """api_spec finds the request or response spec of an API key."""
    spec = registry().by_api.get((api_key, kind))
    if spec is None:
        raise ProtocolError(f"API key {api_key} has no {kind} spec in kquota")
    return spec


def supported_versions(api_key: int) -> tuple[int, int]:
    """supported_versions is the (min, max) version range kquota's request spec defines."""
    spec = api_spec(api_key, "request")
    return spec.valid_versions.lo, spec.valid_versions.hi


def body_codec(api_key: int, kind: str, api_version: int) -> MessageCodec:
    return message_codec(api_spec(api_key, kind).name, api_version)


def request_header_version(api_key: int, api_version: int) -> int:
    """request_header_version: 2 for flexible request versions, else 1."""
    return 2 if body_codec(api_key, "request", api_version).flexible else 1


def response_header_version(api_key: int, api_version: int) -> int:
    """response_header_version: 1 for flexible response versions, else 0; ApiVersions: 0."""
    if api_key == API_VERSIONS:
        return 0
    return 1 if body_codec(api_key, "response", api_version).flexible else 0


def encode_request(
    api_key: int,
    api_version: int,
    correlation_id: int,
    client_id: str | None,
    body: Mapping[str, Any],
) -> bytes:
    """encode_request builds header + body for a request (no size prefix)."""
    out = bytearray(encode_request_header(api_key, api_version, correlation_id, client_id))
    body_codec(api_key, "request", api_version).encode_into(body, out)
    return bytes(out)


def encode_request_header(
    api_key: int, api_version: int, correlation_id: int, client_id: str | None
) -> bytes:
    """encode_request_header is the request header alone, for a body encoded elsewhere."""
    flexible = body_codec(api_key, "request", api_version).flexible
    return message_codec("RequestHeader", 2 if flexible else 1).encode(
        {
            "RequestApiKey": api_key,
            "RequestApiVersion": api_version,
            "CorrelationId": correlation_id,
            "ClientId": client_id,
        }
    )


def decode_request(payload: bytes) -> tuple[dict[str, Any], dict[str, Any]]:
    """decode_request parses a request frame into (header, body); for tests and fakes.

    The header version is not on the wire: it follows from the API key and version in the
    first four bytes, so those are peeked before the header is decoded properly.
    """
    buf = bytes(payload)
    if len(buf) < _API_KEY_AND_VERSION.size:
        raise ProtocolError(
            f"RequestHeader: truncated (need 4 bytes, have {len(buf)})",
            path="RequestApiKey",
            reason="truncated",
        )
    api_key, api_version = _API_KEY_AND_VERSION.unpack_from(buf, 0)
    body_c = body_codec(api_key, "request", api_version)
    header, pos = message_codec("RequestHeader", 2 if body_c.flexible else 1).decode_from(buf, 0)
    return header, body_c.decode(buf[pos:])


def encode_response(
    api_key: int, api_version: int, correlation_id: int, body: Mapping[str, Any]
) -> bytes:
    """encode_response builds header + body for a response (no size prefix); for fakes."""
    body_c = body_codec(api_key, "response", api_version)
    out = bytearray()
    header_c = message_codec("ResponseHeader", response_header_version(api_key, api_version))
    header_c.encode_into({"CorrelationId": correlation_id}, out)
    body_c.encode_into(body, out)
    return bytes(out)


def decode_response(api_key: int, api_version: int, payload: bytes) -> tuple[int, dict[str, Any]]:
    """decode_response parses a response frame into (correlation_id, body)."""
    buf = bytes(payload)
    body_c = body_codec(api_key, "response", api_version)
    header_c = message_codec("ResponseHeader", response_header_version(api_key, api_version))
    header, pos = header_c.decode_from(buf, 0)
    correlation_id: int = header["CorrelationId"]
    return correlation_id, body_c.decode(buf[pos:])
