"""Property tests: on any input the decoder returns a body or raises ProtocolError, nothing else.

IndexError, struct.error, UnicodeDecodeError, MemoryError or a hang on hostile bytes would all
be bugs; the broker is not the only thing that can put bytes on a socket.
"""

from __future__ import annotations

import struct
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from protocol_testlib import bits, golden_cases

import kquota.kafka.protocol as kp
from kquota.kafka.protocol.specs import registry

MESSAGES = sorted(
    (spec.name, v)
    for spec in registry().by_name.values()
    for v in range(spec.valid_versions.lo, spec.valid_versions.hi + 1)
)
GOLDEN = [(doc, data) for _, doc, data in golden_cases()]
FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _decode(doc: dict[str, Any], data: bytes) -> object:
    """_decode feeds bytes to whichever entry point the golden case exercises."""
    frame = doc.get("frame")
    if frame == "request":
        return kp.decode_request(data)
    if frame == "response":
        return kp.decode_response(doc["api_key"], doc["version"], data)
    return kp.decode_body(doc["message"], doc["version"], data)


def _only_protocol_errors(doc: dict[str, Any], data: bytes) -> None:
    try:
        _decode(doc, data)
    except kp.ProtocolError as e:
        if "frame" not in doc:  # a frame's bytes may name another API; a body's cannot
            assert str(e).startswith(f"{doc['message']} v{doc['version']}: ")


@FUZZ
@given(target=st.sampled_from(MESSAGES), data=st.binary(max_size=256))
def test_arbitrary_bytes_only_raise_protocol_error(target: tuple[str, int], data: bytes) -> None:
    name, version = target
    try:
        kp.decode_body(name, version, data)
    except kp.ProtocolError as e:
        assert str(e).startswith(f"{name} v{version}: ")


@FUZZ
@given(
    case=st.sampled_from(GOLDEN),
    edits=st.lists(
        st.tuples(
            st.sampled_from(["flip", "set", "insert", "delete"]),
            st.integers(0, 10_000),
            st.integers(0, 255),
        ),
        min_size=1,
        max_size=4,
    ),
)
def test_mutated_golden_bytes_only_raise_protocol_error(
    case: tuple[dict[str, Any], bytes], edits: list[tuple[str, int, int]]
) -> None:
    doc, original = case
    data = bytearray(original)
    for op, where, byte in edits:
        i = where % (len(data) + 1)
        if op == "insert":
            data.insert(i, byte)
        elif data and i < len(data):
            if op == "flip":
                data[i] ^= 1 << (byte % 8)
            elif op == "set":
                data[i] = byte
            else:
                del data[i]
    _only_protocol_errors(doc, bytes(data))


@pytest.mark.parametrize(("doc", "data"), GOLDEN, ids=[name for name, _, _ in golden_cases()])
def test_every_strict_prefix_of_a_golden_message_is_rejected(
    doc: dict[str, Any], data: bytes
) -> None:
    """Decoding is prefix-deterministic, so no strict prefix of a valid message is valid."""
    for end in range(len(data)):
        with pytest.raises(kp.ProtocolError):
            _decode(doc, data[:end])


# ---- encode/decode round trips on generated bodies -------------------------------------------

float64s = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(0, 2**64 - 1).map(lambda b: struct.unpack(">d", b.to_bytes(8, "big"))[0]),
)
names = st.one_of(st.none(), st.text(max_size=20))
entities = st.lists(
    st.fixed_dictionaries({"EntityType": st.text(max_size=10), "EntityName": names}), max_size=3
)
describe_responses = st.fixed_dictionaries(
    {
        "ThrottleTimeMs": st.integers(-(2**31), 2**31 - 1),
        "ErrorCode": st.integers(-(2**15), 2**15 - 1),
        "ErrorMessage": names,
        "Entries": st.one_of(
            st.none(),
            st.lists(
                st.fixed_dictionaries(
                    {
                        "Entity": entities,
                        "Values": st.lists(
                            st.fixed_dictionaries({"Key": st.text(max_size=30), "Value": float64s}),
                            max_size=4,
                        ),
                    }
                ),
                max_size=5,
            ),
        ),
    }
)
alter_requests = st.fixed_dictionaries(
    {
        "Entries": st.lists(
            st.fixed_dictionaries(
                {
                    "Entity": entities,
                    "Ops": st.lists(
                        st.fixed_dictionaries(
                            {
                                "Key": st.text(max_size=30),
                                "Value": float64s,
                                "Remove": st.booleans(),
                            }
                        ),
                        max_size=4,
                    ),
                }
            ),
            max_size=5,
        ),
        "ValidateOnly": st.booleans(),
    }
)


@FUZZ
@given(body=describe_responses, version=st.sampled_from([0, 1]))
def test_describe_response_round_trip(body: dict[str, Any], version: int) -> None:
    data = kp.encode_body("DescribeClientQuotasResponse", version, body)
    assert bits(kp.decode_body("DescribeClientQuotasResponse", version, data)) == bits(body)


@FUZZ
@given(body=alter_requests, version=st.sampled_from([0, 1]), corr=st.integers(-(2**31), 2**31 - 1))
def test_alter_request_round_trip(body: dict[str, Any], version: int, corr: int) -> None:
    frame = kp.encode_request(kp.ALTER_CLIENT_QUOTAS, version, corr, "kquota", body)
    header, decoded = kp.decode_request(frame)
    assert header["CorrelationId"] == corr
    assert bits(decoded) == bits(body)
