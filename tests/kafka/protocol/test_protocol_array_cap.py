"""The array cap (Kafka 4.4's): over 1,000,000 elements is refused both ways, but for the
describe answer, which a broker sends whole; kquota's own AlterClientQuotas requests are
chunked far below it."""

from __future__ import annotations

import struct
from typing import Any

import pytest

import kquota.kafka.protocol as kp
from kquota.kafka import quotawire as qw
from kquota.kafka.admin import DEFAULT_CHUNK_KEYS, QuotaAlteration, QuotaOp, chunk_alterations
from kquota.kafka.protocol import primitives as p
from kquota.kafka.protocol.codec import READ_PAST_CAP, message_codec
from kquota.kafka.protocol.primitives import MAX_ARRAY_ELEMENTS, FieldError
from kquota.model import Entity

CAP = MAX_ARRAY_ELEMENTS


def _count(n: int, compact: bool) -> bytes:
    if not compact:
        return struct.pack(">i", n)
    out = bytearray()
    p.write_uvarint(n + 1, out)
    return bytes(out)


def test_the_cap_is_kafkas() -> None:
    assert CAP == 1_000_000


@pytest.mark.parametrize("compact", [False, True])
def test_an_array_at_the_cap_decodes_and_one_over_is_refused(compact: bool) -> None:
    codec = p.array_codec(p.FIXED["int8"], 1, compact, nullable=False)
    items, end = codec[0](_count(CAP, compact) + bytes(CAP), 0)
    assert len(items) == CAP and end == len(_count(CAP, compact)) + CAP
    # The bytes for every element are there: it is the count alone that is refused.
    with pytest.raises(
        FieldError, match=r"array of 1000001 elements exceeds the limit of 1,000,000"
    ):
        codec[0](_count(CAP + 1, compact) + bytes(CAP + 1), 0)


@pytest.mark.parametrize("compact", [False, True])
def test_an_array_over_the_cap_is_never_encoded(compact: bool) -> None:
    codec = p.array_codec(p.FIXED["int8"], 1, compact, nullable=False)
    out = bytearray()
    codec[1]([0] * CAP, out)
    assert len(out) == len(_count(CAP, compact)) + CAP
    out = bytearray()
    with pytest.raises(FieldError, match="exceeds the limit of 1,000,000"):
        codec[1]([0] * (CAP + 1), out)
    assert out == bytearray(), "nothing is written before the refusal"


def _describe_frame(version: int, entries: int) -> bytes:
    """A DescribeClientQuotas response frame of ``entries`` users (u0000000, u0000001, ...),
    each with producer_byte_rate 1.0, all their bytes there."""
    compact = version >= 1
    header = struct.pack(">i", 7) + (b"\x00" if compact else b"")
    message = b"\x00" if compact else b"\xff\xff"  # null ErrorMessage
    key = b"producer_byte_rate"
    if compact:
        head = b"\x02\x05user\x09"
        tail = b"\x00\x02" + bytes((len(key) + 1,)) + key + struct.pack(">d", 1.0) + b"\x00\x00"
    else:
        head = struct.pack(">i", 1) + b"\x00\x04user\x00\x08"
        tail = struct.pack(">i", 1) + struct.pack(">h", len(key)) + key + struct.pack(">d", 1.0)
    body = b"".join(
        [
            struct.pack(">ih", 0, 0),
            message,
            _count(entries, compact),
            *(head + b"u%07d" % i + tail for i in range(entries)),
        ]
    )
    return header + body + (b"\x00" if compact else b"")


@pytest.mark.parametrize("version", [0, 1])
def test_a_describe_response_over_the_cap_is_read_by_the_fast_reader_and_the_interpreter(
    version: int,
) -> None:
    """A broker sends every entity it holds (its writer checks no count; 3.9's and 4.3's Java
    readers take it, 4.4's refuses it): Entries is read past the cap, bounded by the frame.
    """
    frame = _describe_frame(version, CAP + 1)
    fast = qw.decode_describe_response(version, frame)
    assert fast.error_code == 0 and len(fast.state) == CAP + 1
    assert fast.state[Entity.of({"user": f"u{CAP:07d}"})] == {"producer_byte_rate": 1.0}
    _, body = kp.decode_response(kp.DESCRIBE_CLIENT_QUOTAS, version, frame)
    assert len(body["Entries"]) == CAP + 1


@pytest.mark.parametrize("version", [0, 1])
def test_a_describe_count_the_bytes_cannot_hold_is_refused(version: int) -> None:
    """Past the cap the bytes are the bound: a count more entries than the frame holds."""
    frame = bytearray(_describe_frame(version, 3))
    compact = version >= 1
    at = 4 + (1 if compact else 0) + 6 + (1 if compact else 2)
    big = _count(CAP + 1, compact)
    frame[at : at + len(_count(3, compact))] = big
    with pytest.raises(kp.ProtocolError, match="cannot fit in the") as info:
        qw.decode_describe_response(version, bytes(frame))
    assert info.value.path == "Entries"


def test_only_the_describe_answer_is_read_past_the_cap() -> None:
    """The other arrays keep the cap: an AlterClientQuotas response over it is refused."""
    assert {"DescribeClientQuotasResponse": frozenset({"Entries"})} == READ_PAST_CAP
    codec = message_codec("AlterClientQuotasResponse", 1)
    entry = b"\x00\x00\x00" + b"\x02\x05user\x02u\x00" + b"\x00"
    body = struct.pack(">i", 0) + _count(CAP + 1, True) + entry * (CAP + 1) + b"\x00"
    with pytest.raises(kp.ProtocolError, match="exceeds the limit of 1,000,000"):
        codec.decode(body)


def _alteration(name: str) -> QuotaAlteration:
    return QuotaAlteration(Entity.of({"user": name}), (QuotaOp.set("producer_byte_rate", 1.0),))


@pytest.mark.parametrize("version", [0, 1])
def test_an_alter_request_over_the_cap_is_never_encoded(version: int) -> None:
    one = _alteration("u")
    with pytest.raises(kp.ProtocolError, match="exceeds the limit of 1,000,000") as info:
        qw.encode_alter_request(version, [one] * (CAP + 1), False)
    assert info.value.path == "Entries"


def test_apply_requests_are_chunked_far_below_the_cap() -> None:
    """apply sends every alteration through QuotaAdmin.alter, which cuts them with
    chunk_alterations at DEFAULT_CHUNK_KEYS ops (each entity has at least one op), so no
    AlterClientQuotas request's Entries comes near the cap."""
    assert DEFAULT_CHUNK_KEYS * 100 <= CAP
    alts: list[Any] = [_alteration(f"u{i}") for i in range(3 * DEFAULT_CHUNK_KEYS + 1)]
    chunks = chunk_alterations(alts, DEFAULT_CHUNK_KEYS)
    assert [len(c) for c in chunks] == [DEFAULT_CHUNK_KEYS] * 3 + [1]
    for c in chunks:
        assert qw.encode_alter_request(1, c, False).startswith(_count(len(c), True))
