"""Wire primitives: one decoder and one encoder per Kafka field type.

A decoder is ``(buf, pos) -> (value, new_pos)`` over an immutable ``bytes`` buffer; an encoder
is ``(value, out) -> None`` appending to a ``bytearray``. The codec composes these closures once
per (message, version), so the hot path is plain function calls and ``struct.unpack_from``,
with no per-byte Python loops except in varints.

Every failure raises :class:`FieldError` with a reason only; the codec adds the field path on
the way out (``Entries[3].Values[0].Value``) and turns it into a public ``ProtocolError``.
Lengths and counts are checked against the bytes left *before* anything is allocated, so a
corrupt length can never trigger a huge allocation or a long loop.

``float64`` (KAFKA-9474) is ``struct`` ``'>d'``: the raw IEEE 754 bits, big-endian. CPython
copies those bits unchanged, so -0.0, subnormals, infinities and NaN payloads round-trip
bit for bit; the codec never inspects or normalises a value.
"""

from __future__ import annotations

import base64
import binascii
import struct
from collections.abc import Callable, Sequence
from typing import Any

Decoder = Callable[[bytes, int], tuple[Any, int]]
Encoder = Callable[[Any, bytearray], None]

_MAX_UVARINT = 0xFFFFFFFF

MAX_ARRAY_ELEMENTS = 1_000_000
"""The most elements an array may have, both ways, as Kafka 4.4's own codec caps it
(``MessageUtil.MAX_ARRAY_LENGTH``, checked by the generated readers only; 3.9 and 4.3 bound a
count by the bytes left alone): a count above it is refused when decoding (even if the bytes
are there: it bounds the work a peer can ask for) and such an array is never encoded. kquota's
requests stay far below it: AlterClientQuotas is chunked at 5,000 ops
(``kquota.kafka.admin.DEFAULT_CHUNK_KEYS``). The arrays a broker fills without a bound of its
own are read past it (``kquota.kafka.protocol.codec.READ_PAST_CAP``)."""


class FieldError(Exception):
    """FieldError is the codec-internal failure: a reason plus the path, innermost first."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.path: list[str] = []


def truncated(need: int, have: int) -> FieldError:
    return FieldError(f"truncated (need {need} bytes, have {max(have, 0)})")


# ---- fixed-width numbers ----------------------------------------------------------------------


def _fixed(fmt: str, type_name: str) -> tuple[Decoder, Encoder]:
    st = struct.Struct(fmt)
    size = st.size
    unpack_from = st.unpack_from
    pack = st.pack

    def decode(buf: bytes, pos: int) -> tuple[Any, int]:
        try:
            return unpack_from(buf, pos)[0], pos + size
        except struct.error:
            raise truncated(size, len(buf) - pos) from None

    def encode(value: Any, out: bytearray) -> None:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise FieldError(f"expected a number for {type_name}, got {type(value).__name__}")
        try:
            out += pack(value)
        except struct.error as e:
            raise FieldError(f"cannot encode {value!r} as {type_name}: {e}") from None

    return decode, encode


def decode_uuid(buf: bytes, pos: int) -> tuple[Any, int]:
    """decode_uuid yields Kafka's string form of a Uuid (URL-safe base64, no padding)."""
    raw = buf[pos : pos + 16]
    if len(raw) < 16:
        raise truncated(16, len(buf) - pos)
    return base64.urlsafe_b64encode(raw).decode().rstrip("="), pos + 16


def encode_uuid(value: Any, out: bytearray) -> None:
    try:
        raw = base64.urlsafe_b64decode(value + "==") if isinstance(value, str) else b""
    except (ValueError, binascii.Error):
        raw = b""
    if len(raw) != 16:
        raise FieldError(f"expected a Uuid as 22 URL-safe base64 characters, got {value!r}")
    out += raw


FIXED: dict[str, tuple[Decoder, Encoder]] = {
    "int8": _fixed(">b", "int8"),
    "int16": _fixed(">h", "int16"),
    "int32": _fixed(">i", "int32"),
    "int64": _fixed(">q", "int64"),
    "uint16": _fixed(">H", "uint16"),
    "float64": _fixed(">d", "float64"),
    "uuid": (decode_uuid, encode_uuid),
}
FIXED_SIZE = {
    "int8": 1,
    "int16": 2,
    "int32": 4,
    "int64": 8,
    "uint16": 2,
    "float64": 8,
    "bool": 1,
    "uuid": 16,
}
_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")


def decode_bool(buf: bytes, pos: int) -> tuple[Any, int]:
    """decode_bool follows the Java client: any non-zero byte is true."""
    if pos >= len(buf):
        raise truncated(1, 0)
    return buf[pos] != 0, pos + 1


def encode_bool(value: Any, out: bytearray) -> None:
    if not isinstance(value, bool):
        raise FieldError(f"expected a bool, got {type(value).__name__}")
    out.append(1 if value else 0)


# ---- unsigned varints (flexible versions) ---------------------------------------------------


def read_uvarint(buf: bytes, pos: int) -> tuple[int, int]:
    """read_uvarint reads Kafka's unsigned varint (at most 5 bytes, at most 2**32-1)."""
    n = len(buf)
    result = 0
    shift = 0
    while True:
        if pos >= n:
            raise FieldError("truncated (varint runs past the end)")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            if result > _MAX_UVARINT:
                raise FieldError("varint out of range")
            return result, pos
        shift += 7
        if shift >= 35:
            raise FieldError("varint longer than 5 bytes")


def write_uvarint(value: int, out: bytearray) -> None:
    if value < 0 or value > _MAX_UVARINT:
        raise FieldError(f"cannot encode {value} as an unsigned varint")
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


def decode_uvarint(buf: bytes, pos: int) -> tuple[Any, int]:
    return read_uvarint(buf, pos)


def encode_uvarint(value: Any, out: bytearray) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise FieldError(f"expected an int, got {type(value).__name__}")
    write_uvarint(value, out)


def _read_length(buf: bytes, pos: int, compact: bool, wide: bool) -> tuple[int, int]:
    """_read_length reads a length or count; -1 means null in both encodings."""
    if compact:
        if pos < len(buf) and buf[pos] < 0x80:  # the common one-byte case
            return buf[pos] - 1, pos + 1
        n, pos = read_uvarint(buf, pos)
        return n - 1, pos
    fmt = _I32 if wide else _I16
    try:
        return fmt.unpack_from(buf, pos)[0], pos + fmt.size
    except struct.error:
        raise truncated(fmt.size, len(buf) - pos) from None


def _write_length(n: int, out: bytearray, compact: bool, wide: bool) -> None:
    if compact:
        write_uvarint(n + 1, out)
    elif wide:
        out += _I32.pack(n)
    else:
        out += _I16.pack(n)


def _null_or_error(nullable: bool, n: int, pos: int, what: str) -> tuple[Any, int]:
    if n == -1 and nullable:
        return None, pos
    if n == -1:
        raise FieldError(f"null {what} in a non-nullable field")
    raise FieldError(f"invalid {what} length {n}")


# ---- strings and bytes -------------------------------------------------------------------------


def string_codec(compact: bool, nullable: bool) -> tuple[Decoder, Encoder]:
    """string_codec: INT16 length (-1 null) or, when compact, uvarint N+1 (0 null); UTF-8.

    The decoders read the length inline (no helper call): strings are most of the fields in a
    describe response, so this is the hottest path of the codec.
    """
    limit = 0x7FFFFFFF if compact else 0x7FFF
    i16_from = _I16.unpack_from

    def finish(buf: bytes, pos: int, n: int) -> tuple[Any, int]:
        if n < 0:
            return _null_or_error(nullable, n, pos, "string")
        raise truncated(n, len(buf) - pos)

    def decode_compact(buf: bytes, pos: int) -> tuple[Any, int]:
        if pos < len(buf) and buf[pos] < 0x80:
            n = buf[pos] - 1
            pos += 1
        else:
            n, pos = read_uvarint(buf, pos)
            n -= 1
        end = pos + n
        if n < 0 or end > len(buf):
            return finish(buf, pos, n)
        try:
            return buf[pos:end].decode("utf-8"), end
        except UnicodeDecodeError as e:
            raise FieldError(f"invalid UTF-8 ({e.reason})") from None

    def decode_classic(buf: bytes, pos: int) -> tuple[Any, int]:
        try:
            n = i16_from(buf, pos)[0]
        except struct.error:
            raise truncated(2, len(buf) - pos) from None
        pos += 2
        end = pos + n
        if n < 0 or end > len(buf):
            return finish(buf, pos, n)
        try:
            return buf[pos:end].decode("utf-8"), end
        except UnicodeDecodeError as e:
            raise FieldError(f"invalid UTF-8 ({e.reason})") from None

    def encode(value: Any, out: bytearray) -> None:
        if value is None:
            if not nullable:
                raise FieldError("null is not allowed here")
            _write_length(-1, out, compact, False)
            return
        if not isinstance(value, str):
            raise FieldError(f"expected a str, got {type(value).__name__}")
        try:
            raw = value.encode("utf-8")
        except UnicodeEncodeError as e:
            raise FieldError(f"not encodable as UTF-8 ({e.reason})") from None
        if len(raw) > limit:
            raise FieldError(f"string of {len(raw)} bytes exceeds the limit of {limit}")
        _write_length(len(raw), out, compact, False)
        out += raw

    return (decode_compact if compact else decode_classic), encode


def bytes_codec(compact: bool, nullable: bool) -> tuple[Decoder, Encoder]:
    """bytes_codec: INT32 length (-1 null) or, when compact, uvarint N+1 (0 null)."""

    def decode(buf: bytes, pos: int) -> tuple[Any, int]:
        n, pos = _read_length(buf, pos, compact, True)
        if n < 0:
            return _null_or_error(nullable, n, pos, "bytes")
        end = pos + n
        if end > len(buf):
            raise truncated(n, len(buf) - pos)
        return buf[pos:end], end

    def encode(value: Any, out: bytearray) -> None:
        if value is None:
            if not nullable:
                raise FieldError("null is not allowed here")
            _write_length(-1, out, compact, True)
            return
        if not isinstance(value, bytes | bytearray | memoryview):
            raise FieldError(f"expected bytes, got {type(value).__name__}")
        raw = bytes(value)
        _write_length(len(raw), out, compact, True)
        out += raw

    return decode, encode


# ---- arrays ----------------------------------------------------------------------------------


def array_codec(
    element: tuple[Decoder, Encoder],
    min_element_size: int,
    compact: bool,
    nullable: bool,
    max_elements: int | None = MAX_ARRAY_ELEMENTS,
) -> tuple[Decoder, Encoder]:
    """array_codec: INT32 count (-1 null) or, when compact, uvarint N+1 (0 null).

    A count is rejected when even ``min_element_size`` bytes per element would not fit in
    what is left, which bounds both memory and time on corrupt input; and, both ways, when
    it is over ``max_elements`` (None: the bytes, and so the frame, are the only bound).
    """
    decode_element, encode_element = element
    floor = max(min_element_size, 1)
    cap = max_elements if max_elements is not None else -1

    def decode(buf: bytes, pos: int) -> tuple[Any, int]:
        n, pos = _read_length(buf, pos, compact, True)
        if n < 0:
            return _null_or_error(nullable, n, pos, "array")
        left = len(buf) - pos
        if n * floor > left:
            raise FieldError(f"array of {n} elements cannot fit in the {left} bytes left")
        if n > cap >= 0:
            raise FieldError(f"array of {n} elements exceeds the limit of {cap:,}")
        items: list[Any] = []
        append = items.append
        for i in range(n):
            try:
                value, pos = decode_element(buf, pos)
            except FieldError as e:
                e.path.append(f"[{i}]")
                raise
            append(value)
        return items, pos

    def encode(value: Any, out: bytearray) -> None:
        if value is None:
            if not nullable:
                raise FieldError("null is not allowed here")
            _write_length(-1, out, compact, True)
            return
        if isinstance(value, str | bytes | bytearray) or not isinstance(value, Sequence):
            raise FieldError(f"expected a list, got {type(value).__name__}")
        if len(value) > cap >= 0:
            raise FieldError(f"array of {len(value)} elements exceeds the limit of {cap:,}")
        _write_length(len(value), out, compact, True)
        for i, item in enumerate(value):
            try:
                encode_element(item, out)
            except FieldError as e:
                e.path.append(f"[{i}]")
                raise

    return decode, encode
