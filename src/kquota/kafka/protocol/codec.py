"""The generic interpreter: one spec-driven encoder and decoder for every message.

For each (message, version) the spec's field tree is compiled once into closures built from
:mod:`primitives` (no generated source, no ``exec``, no per-message code): a struct decoder
walks a tuple of ``(name, decoder)`` pairs, an array decoder calls its element decoder, and so
on down. Compiled codecs are cached, so a 100k-entry describe response costs only the calls
its bytes require.

Rules implemented here (KAFKA-QUOTA-SEMANTICS.md §1):

* In a flexible version, strings, bytes and arrays use compact (uvarint N+1) lengths and every
  struct (the body and each struct-array element) ends with a tagged-field section.
* A tagged field is written only when it differs from its default (as the Java client does);
  on decode an absent tagged field takes its default.
* Unknown tags are kept on decode under ``"_unknown_tags": {tag: bytes}`` and written back on
  encode, merged with the known tags in ascending tag order, so a body read from a newer
  broker survives a round trip.
* On encode a missing field takes its default; a field outside the version is ignored; a key
  that is no field of the struct in any version is an error (it is almost surely a typo).
* On decode, trailing bytes after the body are an error.
"""

from __future__ import annotations

import gc
import struct
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from kquota.kafka.protocol import primitives as p
from kquota.kafka.protocol.errors import ProtocolError
from kquota.kafka.protocol.primitives import Decoder, Encoder, FieldError
from kquota.kafka.protocol.schema import FieldSpec, MessageSpec
from kquota.kafka.protocol.specs import registry

UNKNOWN_TAGS = "_unknown_tags"
_TAG_SECTION = "_tagged_fields"
_MISSING: Any = object()
_F64 = struct.Struct(">d")
_PAUSE_GC_ABOVE = 1 << 16  # bytes; below this the pause costs more than it saves

READ_PAST_CAP: dict[str, frozenset[str]] = {
    "DescribeClientQuotasResponse": frozenset({"Entries"}),
}
"""READ_PAST_CAP: the top-level arrays, per message, that have no element cap
(:data:`~kquota.kafka.protocol.primitives.MAX_ARRAY_ELEMENTS`), only the bytes of their frame.
A broker of any version answers DescribeClientQuotas with every matching entity (its writer
checks no count), and 3.9's and 4.3's Java readers take any count the bytes hold; Kafka
4.4's reader refuses over a million (``MessageUtil.MAX_ARRAY_LENGTH``), so its AdminClient
and ``kafka-configs`` cannot describe such a cluster. Capping the answer would leave a
larger cluster unreadable by any request: the filter cannot split a single entity shape."""

_ZERO: dict[str, Any] = {
    "int8": 0,
    "int16": 0,
    "int32": 0,
    "int64": 0,
    "uint16": 0,
    "float64": 0.0,
    "bool": False,
    "string": "",
    "bytes": b"",
    "uuid": "AAAAAAAAAAAAAAAAAAAAAA",  # Kafka's zero Uuid in its string form
}


@dataclass(frozen=True, slots=True)
class _Compiled:
    """_Compiled is one field (or struct) ready to run: codec pair plus its smallest size."""

    decode: Decoder
    encode: Encoder
    min_size: int


@dataclass(frozen=True, slots=True)
class _Tagged:
    tag: int
    name: str
    decode: Decoder
    encode: Encoder
    make_default: Callable[[], Any]
    is_default: Callable[[Any], bool]


def _default_factory(field: FieldSpec, version: int) -> Callable[[], Any]:
    """_default_factory gives fresh defaults, so a decoded ``[]`` is never a shared list."""
    if field.is_struct:
        parts = [
            (f.name, _default_factory(f, version)) for f in field.fields if version in f.versions
        ]
        return lambda: {name: make() for name, make in parts}
    if field.has_default:
        value = field.default
    elif version in field.nullable_versions:
        value = None
    elif field.is_array:
        value = []
    else:
        value = _ZERO[field.type]
    if isinstance(value, list):
        return lambda: list(value)
    if field.type == "float64" and isinstance(value, int | float):
        value = float(value)
    return lambda: value


def _default_test(field: FieldSpec, version: int) -> Callable[[Any], bool]:
    default = _default_factory(field, version)()
    if field.type == "float64":
        bits = _F64.pack(default)

        def same_float(v: Any) -> bool:
            return isinstance(v, float | int) and _F64.pack(v) == bits

        return same_float
    return lambda v: bool(v == default and type(v) is type(default))


def _compile_field(
    field: FieldSpec, version: int, flexible: bool, capped: bool = True
) -> _Compiled:
    compact = flexible and (field.flexible_versions is None or version in field.flexible_versions)
    nullable = version in field.nullable_versions
    if field.is_array:
        if field.is_struct_array:
            element = _compile_struct(field.fields, version, flexible)
        else:
            element = _compile_primitive(field.element, compact, nullable=False)
        dec, enc = p.array_codec(
            (element.decode, element.encode),
            element.min_size,
            compact,
            nullable,
            p.MAX_ARRAY_ELEMENTS if capped else None,
        )
        return _Compiled(dec, enc, 1 if compact else 4)
    if field.is_struct:
        return _compile_struct(field.fields, version, flexible)
    return _compile_primitive(field.type, compact, nullable)


def _compile_primitive(type_name: str, compact: bool, nullable: bool) -> _Compiled:
    if type_name == "string":
        dec, enc = p.string_codec(compact, nullable)
        return _Compiled(dec, enc, 1 if compact else 2)
    if type_name == "bytes":
        dec, enc = p.bytes_codec(compact, nullable)
        return _Compiled(dec, enc, 1 if compact else 4)
    if type_name == "bool":
        return _Compiled(p.decode_bool, p.encode_bool, 1)
    dec, enc = p.FIXED[type_name]
    return _Compiled(dec, enc, p.FIXED_SIZE[type_name])


def _compile_struct(
    fields: tuple[FieldSpec, ...],
    version: int,
    flexible: bool,
    uncapped: frozenset[str] = frozenset(),
) -> _Compiled:
    regular: list[tuple[str, Decoder, Encoder, Callable[[], Any]]] = []
    tagged: list[_Tagged] = []
    min_size = 1 if flexible else 0
    for field in fields:
        if version not in field.versions:
            continue
        compiled = _compile_field(field, version, flexible, field.name not in uncapped)
        make = _default_factory(field, version)
        if field.tag is not None and version in field.tagged_versions and flexible:
            tagged.append(
                _Tagged(
                    field.tag,
                    field.name,
                    compiled.decode,
                    compiled.encode,
                    make,
                    _default_test(field, version),
                )
            )
        else:
            regular.append((field.name, compiled.decode, compiled.encode, make))
            min_size += compiled.min_size
    tagged.sort(key=lambda t: t.tag)
    allowed = frozenset(f.name for f in fields) | {UNKNOWN_TAGS}
    decode = _struct_decoder(tuple((n, d) for n, d, _, _ in regular), tuple(tagged), flexible)
    encode = _struct_encoder(
        tuple((n, e, m) for n, _, e, m in regular), tuple(tagged), flexible, allowed
    )
    return _Compiled(decode, encode, min_size)


def _struct_decoder(
    regular: tuple[tuple[str, Decoder], ...], tagged: tuple[_Tagged, ...], flexible: bool
) -> Decoder:
    by_tag = {t.tag: t for t in tagged}
    defaults = tuple((t.name, t.make_default) for t in tagged)

    def decode(buf: bytes, pos: int) -> tuple[Any, int]:
        out: dict[str, Any] = {}
        for name, dec in regular:
            try:
                out[name], pos = dec(buf, pos)
            except FieldError as e:
                e.path.append(name)
                raise
        if flexible:
            for name, make in defaults:
                out[name] = make()
            if pos < len(buf) and buf[pos] == 0:  # the usual empty section, inline for speed
                return out, pos + 1
            pos = _read_tag_section(buf, pos, out, by_tag)
        return out, pos

    return decode


def _read_tag_section(buf: bytes, pos: int, out: dict[str, Any], by_tag: dict[int, _Tagged]) -> int:
    """_read_tag_section reads ``count, (tag, size, bytes)*`` into ``out`` and returns the end."""
    try:
        if pos < len(buf) and buf[pos] == 0:  # the usual empty section
            return pos + 1
        count, pos = p.read_uvarint(buf, pos)
        if count * 2 > len(buf) - pos:
            raise FieldError(f"{count} tagged fields cannot fit in the {len(buf) - pos} bytes left")
        seen: set[int] = set()
        for _ in range(count):
            tag, pos = p.read_uvarint(buf, pos)
            size, pos = p.read_uvarint(buf, pos)
            end = pos + size
            if end > len(buf):
                raise p.truncated(size, len(buf) - pos)
            if tag in seen:
                raise FieldError(f"tag {tag} appears twice")
            seen.add(tag)
            known = by_tag.get(tag)
            if known is None:
                unknown = out.setdefault(UNKNOWN_TAGS, {})
                unknown[tag] = buf[pos:end]
            else:
                try:
                    value, used = known.decode(buf[pos:end], 0)
                    if used != size:
                        raise FieldError(f"tagged field holds {size} bytes but uses {used}")
                except FieldError as e:
                    e.path.append(known.name)
                    raise
                out[known.name] = value
            pos = end
        return pos
    except FieldError as e:
        if not e.path:
            e.path.append(_TAG_SECTION)
        raise


def _struct_encoder(
    regular: tuple[tuple[str, Encoder, Callable[[], Any]], ...],
    tagged: tuple[_Tagged, ...],
    flexible: bool,
    allowed: frozenset[str],
) -> Encoder:
    known_tags = frozenset(t.tag for t in tagged)

    def encode(value: Any, out: bytearray) -> None:
        if not isinstance(value, Mapping):
            raise FieldError(f"expected a mapping, got {type(value).__name__}")
        extra = value.keys() - allowed
        if extra:
            raise FieldError(f"unknown field(s) {sorted(map(str, extra))}")
        for name, enc, make in regular:
            v = value.get(name, _MISSING)
            try:
                enc(make() if v is _MISSING else v, out)
            except FieldError as e:
                e.path.append(name)
                raise
        unknown = value.get(UNKNOWN_TAGS) or {}
        if not flexible:
            if unknown:
                raise FieldError(
                    "unknown tagged fields cannot be written in a non-flexible version"
                )
            return
        _write_tag_section(value, out, tagged, known_tags, unknown)

    return encode


def _write_tag_section(
    value: Mapping[str, Any],
    out: bytearray,
    tagged: tuple[_Tagged, ...],
    known_tags: frozenset[int],
    unknown: Any,
) -> None:
    entries: list[tuple[int, bytes]] = []
    for t in tagged:
        v = value.get(t.name, _MISSING)
        if v is _MISSING or t.is_default(v):
            continue
        encoded = bytearray()
        try:
            t.encode(v, encoded)
        except FieldError as e:
            e.path.append(t.name)
            raise
        entries.append((t.tag, bytes(encoded)))
    if unknown:
        if not isinstance(unknown, Mapping):
            raise FieldError(f"{UNKNOWN_TAGS} must map tag numbers to bytes")
        for tag, data in unknown.items():
            if isinstance(tag, bool) or not isinstance(tag, int) or tag < 0:
                raise FieldError(f"{UNKNOWN_TAGS}: bad tag {tag!r}")
            if tag in known_tags:
                raise FieldError(f"{UNKNOWN_TAGS}: tag {tag} is a known field")
            if not isinstance(data, bytes | bytearray | memoryview):
                raise FieldError(f"{UNKNOWN_TAGS}: tag {tag} must hold bytes")
            entries.append((tag, bytes(data)))
        entries.sort(key=lambda e: e[0])
    p.write_uvarint(len(entries), out)
    for tag, data in entries:
        p.write_uvarint(tag, out)
        p.write_uvarint(len(data), out)
        out += data


def _join_path(parts: list[str]) -> str:
    text = ""
    for part in reversed(parts):
        text += part if part.startswith("[") or not text else "." + part
    return text


@dataclass(frozen=True, slots=True)
class MessageCodec:
    """MessageCodec encodes and decodes one message at one version."""

    spec: MessageSpec
    version: int
    flexible: bool
    _struct: _Compiled

    @property
    def label(self) -> str:
        return f"{self.spec.name} v{self.version}"

    def _error(self, e: FieldError) -> ProtocolError:
        path = _join_path(e.path)
        where = f"{self.label}: {path}: " if path else f"{self.label}: "
        return ProtocolError(where + e.reason, path=path, reason=e.reason)

    def decode_from(self, buf: bytes, pos: int) -> tuple[dict[str, Any], int]:
        """decode_from reads the message starting at ``pos``; it returns the body and the end.

        For large payloads the cyclic garbage collector is paused while decoding: a describe
        of 100k entities creates about a million dicts and lists, none in a cycle, and
        repeated generation scans over them would double the decode time. The previous GC
        state is restored whatever happens.
        """
        pause_gc = len(buf) - pos >= _PAUSE_GC_ABOVE and gc.isenabled()
        if pause_gc:
            gc.disable()
        try:
            body, end = self._struct.decode(buf, pos)
        except FieldError as e:
            raise self._error(e) from None
        finally:
            if pause_gc:
                gc.enable()
        result: dict[str, Any] = body
        return result, end

    def decode(self, data: bytes | bytearray | memoryview) -> dict[str, Any]:
        """decode reads exactly one message; leftover bytes are an error."""
        buf = bytes(data)
        body, end = self.decode_from(buf, 0)
        if end != len(buf):
            raise ProtocolError(
                f"{self.label}: {len(buf) - end} trailing bytes after the message",
                reason="trailing bytes",
            )
        return body

    def encode_into(self, body: Mapping[str, Any], out: bytearray) -> None:
        try:
            self._struct.encode(body, out)
        except FieldError as e:
            raise self._error(e) from None

    def encode(self, body: Mapping[str, Any]) -> bytes:
        out = bytearray()
        self.encode_into(body, out)
        return bytes(out)


def spec_named(name: str) -> MessageSpec:
    """spec_named finds a message spec, or raises ProtocolError for an unknown name."""
    spec = registry().by_name.get(name)
    if spec is None:
        raise ProtocolError(f"unknown message {name!r}")
    return spec


@cache
def message_codec(name: str, version: int) -> MessageCodec:
    """message_codec compiles (once) the codec for a message at a version."""
    spec = spec_named(name)
    if version not in spec.valid_versions:
        raise ProtocolError(
            f"{name}: version {version} is not supported (valid: {spec.valid_versions})"
        )
    flexible = version in spec.flexible_versions
    uncapped = READ_PAST_CAP.get(name, frozenset())
    return MessageCodec(
        spec, version, flexible, _compile_struct(spec.fields, version, flexible, uncapped)
    )


def encode_body(message_name: str, version: int, body: Mapping[str, Any]) -> bytes:
    """encode_body serialises a body dict (spec field names) without any header."""
    return message_codec(message_name, version).encode(body)


def decode_body(message_name: str, version: int, data: bytes) -> dict[str, Any]:
    """decode_body parses exactly one body; corrupt or trailing bytes raise ProtocolError."""
    return message_codec(message_name, version).decode(data)
