"""kquota's Kafka wire codec: specs kept as data, one generic interpreter.

This package knows bytes, not quotas: bodies are plain dicts keyed by the spec's field names
(``"Components"``, ``"EntityType"``, ...), arrays of structs are lists of dicts, null is
``None``, ``bytes`` fields are ``bytes`` and ``float64`` values are Python floats carrying the
exact IEEE 754 bits. ``kquota.kafka.admin`` maps them to domain types; nothing above it should
import this package.

The three quota messages on the hot path also have specialised codecs
(``kquota.kafka.quotawire``) that this interpreter judges: it is their reference in tests and
their fallback for anything they do not handle.

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
    encode_request_header,
    encode_response,
    request_header_version,
    response_header_version,
    supported_versions,
)

METADATA = 3
DESCRIBE_GROUPS = 15
LIST_GROUPS = 16
SASL_HANDSHAKE = 17
API_VERSIONS = 18
DESCRIBE_ACLS = 29
DESCRIBE_CONFIGS = 32
SASL_AUTHENTICATE = 36
DESCRIBE_CLIENT_QUOTAS = 48
ALTER_CLIENT_QUOTAS = 49
DESCRIBE_USER_SCRAM_CREDENTIALS = 50
DESCRIBE_CLUSTER = 60
CONSUMER_GROUP_DESCRIBE = 69

__all__ = [
    "ALTER_CLIENT_QUOTAS",
    "API_VERSIONS",
    "CONSUMER_GROUP_DESCRIBE",
    "DESCRIBE_ACLS",
    "DESCRIBE_CLIENT_QUOTAS",
    "DESCRIBE_CLUSTER",
    "DESCRIBE_CONFIGS",
    "DESCRIBE_GROUPS",
    "DESCRIBE_USER_SCRAM_CREDENTIALS",
    "LIST_GROUPS",
    "METADATA",
    "ProtocolError",
    "SASL_AUTHENTICATE",
    "SASL_HANDSHAKE",
    "UNKNOWN_TAGS",
    "decode_body",
    "decode_request",
    "decode_response",
    "encode_body",
    "encode_request",
    "encode_request_header",
    "encode_response",
    "request_header_version",
    "response_header_version",
    "supported_versions",
]
