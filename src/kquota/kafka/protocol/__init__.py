"""kquota's Kafka wire codec: specs kept as data, one generic interpreter.

This package knows bytes, not quotas: bodies are plain dicts keyed by the spec's field names
(``"Components"``, ``"EntityType"``, ...), arrays of structs are lists of dicts, null is
``None``, ``bytes`` fields are ``bytes`` and ``float64`` values are Python floats carrying the
exact IEEE 754 bits. ``kquota.kafka.admin`` maps them to domain types; nothing above it should
import this package.

Every decoding failure, whatever the input, is a :class:`ProtocolError` naming the message,
version and field path.
"""

from __future__ import annotations

from kquota.kafka.protocol.codec import UNKNOWN_TAGS, decode_body, encode_body
from kquota.kafka.protocol.errors import ProtocolError
from kquota.kafka.protocol.header import (
    decode_request,
    decode_response,
    encode_request,
    encode_response,
    request_header_version,
    response_header_version,
    supported_versions,
)

SASL_HANDSHAKE = 17
API_VERSIONS = 18
SASL_AUTHENTICATE = 36
DESCRIBE_CLIENT_QUOTAS = 48
ALTER_CLIENT_QUOTAS = 49
DESCRIBE_CLUSTER = 60

__all__ = [
    "ALTER_CLIENT_QUOTAS",
    "API_VERSIONS",
    "DESCRIBE_CLIENT_QUOTAS",
    "DESCRIBE_CLUSTER",
    "ProtocolError",
    "SASL_AUTHENTICATE",
    "SASL_HANDSHAKE",
    "UNKNOWN_TAGS",
    "decode_body",
    "decode_request",
    "decode_response",
    "encode_body",
    "encode_request",
    "encode_response",
    "request_header_version",
    "response_header_version",
    "supported_versions",
]
