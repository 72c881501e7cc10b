"""Kafka error codes kquota meets, and the typed exceptions the Kafka layer raises.

A kerr-style table (franz-go): each code is data, ``KafkaErrorCode(name, code, retriable,
message)``, with Kafka's own default message, so the rest of the code branches on
``.retriable`` and shows a broker's ``ErrorMessage`` when it sent one and the default text
when it did not (the broker drops the message when it equals the default, e.g. 31 on
describe).

Exception tree (all :class:`~kquota.errors.KquotaError`, so the CLI prints one line)::

    KafkaError
    ├── KafkaApiError (.name, .code, .message: the broker said no)
    │   ├── ClusterAuthorizationError   31
    │   ├── InvalidRequestError         42
    │   ├── UnsupportedVersionError     35 (also: broker lacks an API kquota needs)
    │   └── AuthenticationError         58 / 33 / 34 (or the client rejected the server)
    ├── KafkaTimeoutError               a request got no answer in time
    └── BrokerConnectionError           cannot connect, connection lost, malformed bytes
        └── DroppedAfterRequest         closed in answer to the first request past handshake

Messages never contain passwords or tokens: the broker does not echo them and kquota builds
its own messages only from names, addresses and codes.
"""

from __future__ import annotations

from dataclasses import dataclass

from kquota.errors import KquotaError


@dataclass(frozen=True, slots=True)
class KafkaErrorCode:
    """KafkaErrorCode is one row of Kafka's error table (``common.protocol.Errors``)."""

    name: str
    code: int
    retriable: bool
    message: str


_TABLE = (
    KafkaErrorCode(
        "UNKNOWN_SERVER_ERROR",
        -1,
        False,
        "The server experienced an unexpected error when processing the request.",
    ),
    KafkaErrorCode("NONE", 0, False, ""),
    KafkaErrorCode("REQUEST_TIMED_OUT", 7, True, "The request timed out."),
    KafkaErrorCode(
        "NETWORK_EXCEPTION",
        13,
        True,
        "The server disconnected before a response was received.",
    ),
    KafkaErrorCode(
        "COORDINATOR_LOAD_IN_PROGRESS",
        14,
        True,
        "The coordinator is loading and hence can't process requests.",
    ),
    KafkaErrorCode("COORDINATOR_NOT_AVAILABLE", 15, True, "The coordinator is not available."),
    KafkaErrorCode("NOT_COORDINATOR", 16, True, "This is not the correct coordinator."),
    KafkaErrorCode("GROUP_AUTHORIZATION_FAILED", 30, False, "Group authorization failed."),
    KafkaErrorCode("CLUSTER_AUTHORIZATION_FAILED", 31, False, "Cluster authorization failed."),
    KafkaErrorCode(
        "UNSUPPORTED_SASL_MECHANISM",
        33,
        False,
        "The broker does not support the requested SASL mechanism.",
    ),
    KafkaErrorCode(
        "ILLEGAL_SASL_STATE", 34, False, "Request is not valid given the current SASL state."
    ),
    KafkaErrorCode("UNSUPPORTED_VERSION", 35, False, "The version of API is not supported."),
    KafkaErrorCode("INVALID_CONFIG", 40, False, "Configuration is invalid."),
    KafkaErrorCode(
        "NOT_CONTROLLER", 41, True, "This is not the correct controller for this cluster."
    ),
    KafkaErrorCode(
        "INVALID_REQUEST",
        42,
        False,
        "This most likely occurs because of a request being malformed by the client library "
        "or the message was sent to an incompatible broker. See the broker logs for more "
        "details.",
    ),
    KafkaErrorCode(
        "POLICY_VIOLATION", 44, False, "Request parameters do not satisfy the configured policy."
    ),
    KafkaErrorCode("SECURITY_DISABLED", 54, False, "Security features are disabled."),
    KafkaErrorCode("SASL_AUTHENTICATION_FAILED", 58, False, "SASL Authentication failed."),
    KafkaErrorCode("GROUP_ID_NOT_FOUND", 69, False, "The group id does not exist."),
    KafkaErrorCode(
        "THROTTLING_QUOTA_EXCEEDED", 89, True, "The throttling quota has been exceeded."
    ),
)

ERRORS: dict[int, KafkaErrorCode] = {e.code: e for e in _TABLE}

NONE = 0
UNKNOWN_SERVER_ERROR = -1
REQUEST_TIMED_OUT = 7
NETWORK_EXCEPTION = 13
GROUP_AUTHORIZATION_FAILED = 30
CLUSTER_AUTHORIZATION_FAILED = 31
UNSUPPORTED_SASL_MECHANISM = 33
ILLEGAL_SASL_STATE = 34
UNSUPPORTED_VERSION = 35
NOT_CONTROLLER = 41
INVALID_REQUEST = 42
POLICY_VIOLATION = 44
SECURITY_DISABLED = 54
SASL_AUTHENTICATION_FAILED = 58
GROUP_ID_NOT_FOUND = 69
THROTTLING_QUOTA_EXCEEDED = 89


def error_code(code: int) -> KafkaErrorCode:
    """error_code looks a code up; codes kquota does not list get a generic, non-retriable row."""
    known = ERRORS.get(code)
    if known is not None:
        return known
    return KafkaErrorCode(f"UNKNOWN_ERROR_CODE_{code}", code, False, f"Kafka error code {code}.")


def is_retriable(code: int) -> bool:
    return error_code(code).retriable


class KafkaError(KquotaError):
    """KafkaError is the root of everything the Kafka layer raises."""


class KafkaApiError(KafkaError):
    """KafkaApiError: the broker answered with an error code.

    ``message`` is the broker's ErrorMessage, or the code's default text when it sent none.
    """

    def __init__(self, code: int, message: str | None = None, *, context: str = "") -> None:
        row = error_code(code)
        self.code = code
        self.name = row.name
        self.message = message or row.message
        self.retriable = row.retriable
        prefix = f"{context}: " if context else ""
        super().__init__(f"{prefix}{self.message} ({self.name}, error code {code})")


class ClusterAuthorizationError(KafkaApiError):
    """ClusterAuthorizationError: the principal lacks the CLUSTER permission the call needs."""


class InvalidRequestError(KafkaApiError):
    """InvalidRequestError: the broker rejected the request's content (e.g. a bad filter)."""


class UnsupportedVersionError(KafkaApiError):
    """UnsupportedVersionError: a version or feature the broker does not support."""


class AuthenticationError(KafkaApiError):
    """AuthenticationError: SASL failed (bad credentials, mechanism off, bad server proof)."""


class KafkaTimeoutError(KafkaError):
    """KafkaTimeoutError: no answer within ``request.timeout.ms`` (after retries)."""


class BrokerConnectionError(KafkaError):
    """BrokerConnectionError: no connection, a lost one, or bytes that are not Kafka's."""


class DroppedAfterRequest(BrokerConnectionError):
    """DroppedAfterRequest: the broker closed a connection in answer to its first request
    past the handshake. The admin probes a fresh connection to say why (a listener that wants
    SASL, or a request the broker refused) rather than guess."""


_BY_CODE: dict[int, type[KafkaApiError]] = {
    CLUSTER_AUTHORIZATION_FAILED: ClusterAuthorizationError,
    INVALID_REQUEST: InvalidRequestError,
    UNSUPPORTED_VERSION: UnsupportedVersionError,
    SASL_AUTHENTICATION_FAILED: AuthenticationError,
    UNSUPPORTED_SASL_MECHANISM: AuthenticationError,
    ILLEGAL_SASL_STATE: AuthenticationError,
}


def error_for(code: int, message: str | None = None, *, context: str = "") -> KafkaApiError:
    """error_for builds the typed exception for a non-zero error code."""
    cls = _BY_CODE.get(code, KafkaApiError)
    return cls(code, message, context=context)
