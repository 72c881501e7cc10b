"""Table-driven checks of the wire primitives: varints, float64 bits, (compact) nulls."""

from __future__ import annotations

import struct
from typing import Any

import pytest

from kquota.kafka.protocol import primitives as p
from kquota.kafka.protocol.primitives import FieldError


def _encode(codec: tuple[p.Decoder, p.Encoder], value: Any) -> bytes:
    out = bytearray()
    codec[1](value, out)
    return bytes(out)


def _decode_all(codec: tuple[p.Decoder, p.Encoder], data: bytes) -> Any:
    value, end = codec[0](data, 0)
    assert end == len(data), "decoder must consume exactly the encoding"
    return value


UVARINTS = [
    (0, "00"),
    (1, "01"),
    (127, "7f"),
    (128, "8001"),
    (300, "ac02"),
    (16383, "ff7f"),
    (16384, "808001"),
    (2**31 - 1, "ffffffff07"),
    (2**32 - 1, "ffffffff0f"),
]


@pytest.mark.parametrize(("value", "hex_bytes"), UVARINTS)
def test_uvarint(value: int, hex_bytes: str) -> None:
    out = bytearray()
    p.write_uvarint(value, out)
    assert out.hex() == hex_bytes
    assert p.read_uvarint(bytes.fromhex(hex_bytes) + b"\xaa", 0) == (value, len(out))


@pytest.mark.parametrize(
    ("hex_bytes", "reason"),
    [
        ("", "truncated"),
        ("80", "truncated"),
        ("ffffffff", "truncated"),
        ("8080808080", "longer than 5 bytes"),
        ("ffffffff1f", "out of range"),
    ],
)
def test_uvarint_rejects(hex_bytes: str, reason: str) -> None:
    with pytest.raises(FieldError, match=reason):
        p.read_uvarint(bytes.fromhex(hex_bytes), 0)


@pytest.mark.parametrize("value", [-1, 2**32])
def test_uvarint_refuses_to_encode_out_of_range(value: int) -> None:
    with pytest.raises(FieldError):
        p.write_uvarint(value, bytearray())


# Bit patterns from Kafka's ByteUtilsTest.testDouble, plus NaNs with payloads.
FLOAT64_BITS = [
    "0000000000000000",  # 0.0
    "8000000000000000",  # -0.0
    "3ff0000000000000",  # 1.0
    "4090000000000000",  # 1024.0 (KAFKA-QUOTA-SEMANTICS §1.9)
    "7fe1ccf385ebc8a0",  # 1e308
    "0000000000000001",  # Double.MIN_VALUE, the smallest subnormal
    "000fffffffffffff",  # the largest subnormal
    "7fefffffffffffff",  # Double.MAX_VALUE
    "7ff0000000000000",  # +inf
    "fff0000000000000",  # -inf
    "7ff8000000000000",  # canonical NaN
    "7ff80000deadbeef",  # NaN with a payload
    "fff8000000000001",  # negative NaN with a payload
]


@pytest.mark.parametrize("hex_bits", FLOAT64_BITS)
def test_float64_is_raw_ieee_bits(hex_bits: str) -> None:
    codec = p.FIXED["float64"]
    value = _decode_all(codec, bytes.fromhex(hex_bits))
    assert struct.pack(">d", value).hex() == hex_bits
    assert _encode(codec, value).hex() == hex_bits


def test_float64_known_values() -> None:
    codec = p.FIXED["float64"]
    assert _encode(codec, 1e308).hex() == "7fe1ccf385ebc8a0"
    assert _encode(codec, -0.0).hex() == "8000000000000000"
    assert _encode(codec, 5e-324).hex() == "0000000000000001"
    assert _encode(codec, 1024).hex() == "4090000000000000", "ints are accepted as doubles"


@pytest.mark.parametrize(
    ("type_name", "value", "hex_bytes"),
    [
        ("int8", -1, "ff"),
        ("int8", 127, "7f"),
        ("int16", -2, "fffe"),
        ("int32", 2**31 - 1, "7fffffff"),
        ("int64", -1, "ffffffffffffffff"),
        ("uint16", 65535, "ffff"),
    ],
)
def test_fixed_ints(type_name: str, value: int, hex_bytes: str) -> None:
    codec = p.FIXED[type_name]
    assert _encode(codec, value).hex() == hex_bytes
    assert _decode_all(codec, bytes.fromhex(hex_bytes)) == value


@pytest.mark.parametrize(
    ("type_name", "value"),
    [
        ("int8", 128),
        ("int16", 2**15),
        ("int32", 2**31),
        ("uint16", -1),
        ("int32", "1"),
        ("int64", True),
    ],
)
def test_fixed_ints_reject_bad_values(type_name: str, value: Any) -> None:
    with pytest.raises(FieldError):
        _encode(p.FIXED[type_name], value)


def test_fixed_truncated_names_sizes() -> None:
    with pytest.raises(FieldError, match=r"truncated \(need 8 bytes, have 2\)"):
        p.FIXED["float64"][0](b"\x40\x90", 0)


def test_bool_reads_like_java() -> None:
    codec = (p.decode_bool, p.encode_bool)
    assert _decode_all(codec, b"\x00") is False
    assert _decode_all(codec, b"\x01") is True
    assert _decode_all(codec, b"\x02") is True, "Java reads any non-zero byte as true"
    assert _encode(codec, True) == b"\x01"
    with pytest.raises(FieldError):
        _encode(codec, 1)


@pytest.mark.parametrize(
    ("compact", "value", "hex_bytes"),
    [
        (False, None, "ffff"),
        (True, None, "00"),
        (False, "", "0000"),
        (True, "", "01"),
        (False, "user", "000475736572"),
        (True, "user", "0575736572"),
        (True, "用户", "07e794a8e688b7"),
    ],
)
def test_nullable_strings(compact: bool, value: str | None, hex_bytes: str) -> None:
    codec = p.string_codec(compact, nullable=True)
    assert _encode(codec, value).hex() == hex_bytes
    assert _decode_all(codec, bytes.fromhex(hex_bytes)) == value


@pytest.mark.parametrize(("compact", "null"), [(False, "ffff"), (True, "00")])
def test_non_nullable_string_rejects_null(compact: bool, null: str) -> None:
    codec = p.string_codec(compact, nullable=False)
    with pytest.raises(FieldError, match="null string"):
        codec[0](bytes.fromhex(null), 0)
    with pytest.raises(FieldError, match="null is not allowed"):
        _encode(codec, None)


def test_string_rejects_invalid_utf8_and_bad_lengths() -> None:
    codec = p.string_codec(False, nullable=True)
    with pytest.raises(FieldError, match="invalid UTF-8"):
        codec[0](bytes.fromhex("0002c328"), 0)
    with pytest.raises(FieldError, match="invalid string length -2"):
        codec[0](bytes.fromhex("fffe"), 0)
    with pytest.raises(FieldError, match=r"truncated \(need 32767 bytes, have 1\)"):
        codec[0](bytes.fromhex("7fff41"), 0)
    with pytest.raises(FieldError, match="exceeds the limit"):
        _encode(codec, "x" * 32768)


@pytest.mark.parametrize(
    ("compact", "value", "hex_bytes"),
    [
        (False, None, "ffffffff"),
        (True, None, "00"),
        (False, b"", "00000000"),
        (True, b"", "01"),
        (False, b"\x00ab", "00000003006162"),
        (True, b"\x00ab", "04006162"),
    ],
)
def test_nullable_bytes(compact: bool, value: bytes | None, hex_bytes: str) -> None:
    codec = p.bytes_codec(compact, nullable=True)
    assert _encode(codec, value).hex() == hex_bytes
    assert _decode_all(codec, bytes.fromhex(hex_bytes)) == value


@pytest.mark.parametrize(
    ("compact", "value", "hex_bytes"),
    [
        (False, None, "ffffffff"),
        (True, None, "00"),
        (False, [], "00000000"),
        (True, [], "01"),
        (False, [1, -1], "000000020001ffff"),
        (True, [1, -1], "030001ffff"),
    ],
)
def test_nullable_arrays(compact: bool, value: list[int] | None, hex_bytes: str) -> None:
    codec = p.array_codec(p.FIXED["int16"], 2, compact, nullable=True)
    assert _encode(codec, value).hex() == hex_bytes
    assert _decode_all(codec, bytes.fromhex(hex_bytes)) == value


def test_array_count_is_checked_before_allocating() -> None:
    codec = p.array_codec(p.FIXED["int64"], 8, compact=False, nullable=False)
    with pytest.raises(FieldError, match="array of 2147483647 elements cannot fit"):
        codec[0](bytes.fromhex("7fffffff") + bytes(16), 0)
    with pytest.raises(FieldError, match="null array"):
        codec[0](bytes.fromhex("ffffffff"), 0)


def test_array_error_names_the_index() -> None:
    codec = p.array_codec(p.FIXED["int16"], 1, compact=False, nullable=False)
    with pytest.raises(FieldError) as info:
        codec[0](bytes.fromhex("00000002 0001 00".replace(" ", "")), 0)
    assert info.value.path == ["[1]"]


UUIDS = [
    # Kafka's string form of a Uuid: its 16 bytes in URL-safe base64 without padding.
    ("AAAAAAAAAAAAAAAAAAAAAA", "00" * 16),
    ("b1Fu0Mq6RNWzRWtpA7mXkg", "6f516ed0caba44d5b3456b6903b99792"),
    ("_____________________w", "ff" * 16),
]


@pytest.mark.parametrize(("text", "hex_bytes"), UUIDS)
def test_uuid_is_sixteen_raw_bytes_shown_as_kafka_prints_it(text: str, hex_bytes: str) -> None:
    codec = p.FIXED["uuid"]
    assert _encode(codec, text).hex() == hex_bytes
    assert _decode_all(codec, bytes.fromhex(hex_bytes)) == text


@pytest.mark.parametrize("value", ["", "AAAA", "not a uuid at all!!!!!", None, b"\0" * 16])
def test_uuid_rejects_anything_but_the_string_form(value: Any) -> None:
    with pytest.raises(FieldError, match="expected a Uuid"):
        _encode(p.FIXED["uuid"], value)


def test_uuid_truncated() -> None:
    with pytest.raises(FieldError, match="truncated"):
        p.FIXED["uuid"][0](b"\0" * 15, 0)
