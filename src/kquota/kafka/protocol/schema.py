"""Message specs parsed into an immutable field tree.

The spec files in ``specs/`` are data in the shape of Kafka's message definitions. This module
turns one parsed JSON document into :class:`MessageSpec`, checking it strictly so a typo in a
spec fails at load time with the file and field named, not as odd bytes on the wire.

Decisions:

* Versions are ``"N"``, ``"N+"``, ``"N-M"`` or ``"none"``, as in Kafka.
* ``default`` is a JSON value (``-1``, ``null``, ``true``), not Kafka's string form.
* A field without ``default`` takes its type's zero (``0``, ``0.0``, ``False``, ``""``, ``b""``,
  ``[]``), except a field nullable in the version at hand, which defaults to ``None``.
  (Kafka's generator defaults nullable strings to ``""``; for a Python API ``None`` is the
  less surprising "nothing there".)
* A field-level ``flexibleVersions`` narrows the message's flexible versions for that one field;
  only ``RequestHeader.ClientId`` uses it (``"none"``: always an INT16 length).
* A field whose type is a name (not a primitive, not ``[]...``) is a single struct, with its
  fields nested in the spec (Kafka keeps them in ``commonStructs``; inline keeps one lookup
  rule). It is never null here; its default is a struct of its fields' defaults.
* ``ignorable`` and ``mapKey`` are accepted for fidelity to Kafka's shape and do not change the
  encoding: fields outside a version are ignored on encode whether or not they are ignorable.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

PRIMITIVE_TYPES = frozenset(
    {"int8", "int16", "int32", "int64", "uint16", "float64", "bool", "string", "bytes", "uuid"}
)

_FIELD_KEYS = frozenset(
    {
        "name",
        "type",
        "versions",
        "nullableVersions",
        "taggedVersions",
        "tag",
        "default",
        "about",
        "fields",
        "flexibleVersions",
        "ignorable",
        "mapKey",
    }
)
_MESSAGE_KEYS = frozenset(
    {"apiKey", "type", "name", "about", "validVersions", "flexibleVersions", "fields"}
)
_NULLABLE_TYPES = frozenset({"string", "bytes"})


class SpecError(ValueError):
    """SpecError reports a malformed spec file; it is a bug in kquota, never a wire problem."""


@dataclass(frozen=True, slots=True)
class Versions:
    """Versions is an inclusive version range; ``lo > hi`` is the empty range ("none")."""

    lo: int
    hi: int

    @classmethod
    def parse(cls, text: str) -> Versions:
        """Versions.parse reads Kafka's version syntax: ``"3+"``, ``"0-4"``, ``"1"``, ``"none"``."""
        text = text.strip()
        try:
            if text == "none":
                return NO_VERSIONS
            if text.endswith("+"):
                return cls(int(text[:-1]), 0x7FFF)
            if "-" in text:
                lo, hi = text.split("-", 1)
                return cls(int(lo), int(hi))
            n = int(text)
        except ValueError as e:
            raise SpecError(f"bad version range {text!r}") from e
        return cls(n, n)

    def __contains__(self, version: object) -> bool:
        return isinstance(version, int) and self.lo <= version <= self.hi

    def intersect(self, other: Versions) -> Versions:
        """intersect is the versions in both ranges (possibly none)."""
        return Versions(max(self.lo, other.lo), min(self.hi, other.hi))

    def __str__(self) -> str:
        if self.lo > self.hi:
            return "none"
        return f"{self.lo}+" if self.hi == 0x7FFF else f"{self.lo}-{self.hi}"


NO_VERSIONS = Versions(1, 0)


@dataclass(frozen=True, slots=True)
class FieldSpec:
    """FieldSpec is one field of a message or struct, across all versions.

    ``type`` is the spec's type string. For arrays, ``element`` is the element type (a
    primitive name, or the struct name when ``fields`` is non-empty).
    """

    name: str
    type: str
    versions: Versions
    nullable_versions: Versions
    tagged_versions: Versions
    tag: int | None
    default: Any
    has_default: bool
    flexible_versions: Versions | None
    fields: tuple[FieldSpec, ...]
    about: str

    @property
    def is_array(self) -> bool:
        return self.type.startswith("[]")

    @property
    def element(self) -> str:
        """element is the array's element type (``""`` for a non-array field)."""
        return self.type[2:] if self.is_array else ""

    @property
    def is_struct_array(self) -> bool:
        return self.is_array and self.element not in PRIMITIVE_TYPES

    @property
    def is_struct(self) -> bool:
        """is_struct: a single struct (not an array of them)."""
        return not self.is_array and self.type not in PRIMITIVE_TYPES


@dataclass(frozen=True, slots=True)
class MessageSpec:
    """MessageSpec is one message (a request, a response or a header) across all versions."""

    name: str
    kind: str
    api_key: int | None
    valid_versions: Versions
    flexible_versions: Versions
    fields: tuple[FieldSpec, ...]
    about: str


def parse_message(doc: Mapping[str, Any], source: str) -> MessageSpec:
    """parse_message checks and converts one spec document; ``source`` names it in errors."""
    unknown = set(doc) - _MESSAGE_KEYS
    if unknown:
        raise SpecError(f"{source}: unknown message keys {sorted(unknown)}")
    try:
        name = str(doc["name"])
        kind = str(doc["type"])
        valid = Versions.parse(doc["validVersions"])
        flexible = Versions.parse(doc.get("flexibleVersions", "none"))
        raw_fields = doc["fields"]
    except KeyError as e:
        raise SpecError(f"{source}: missing {e.args[0]!r}") from e
    if kind not in ("request", "response", "header"):
        raise SpecError(f"{source}: type must be request, response or header, not {kind!r}")
    api_key = doc.get("apiKey")
    if kind != "header" and not isinstance(api_key, int):
        raise SpecError(f"{source}: {kind} needs an integer apiKey")
    fields = _parse_fields(raw_fields, f"{source}: {name}")
    return MessageSpec(
        name=name,
        kind=kind,
        api_key=api_key if isinstance(api_key, int) else None,
        valid_versions=valid,
        flexible_versions=flexible,
        fields=fields,
        about=str(doc.get("about", "")),
    )


def _parse_fields(raw: Any, where: str) -> tuple[FieldSpec, ...]:
    if not isinstance(raw, list):
        raise SpecError(f"{where}: fields must be a list")
    out = [_parse_field(item, where) for item in raw]
    names = [f.name for f in out]
    if len(set(names)) != len(names):
        raise SpecError(f"{where}: duplicate field names in {names}")
    tags = [f.tag for f in out if f.tag is not None]
    if len(set(tags)) != len(tags):
        raise SpecError(f"{where}: duplicate tags {tags}")
    return tuple(out)


def _parse_field(raw: Any, where: str) -> FieldSpec:
    if not isinstance(raw, Mapping) or "name" not in raw:
        raise SpecError(f"{where}: a field must be an object with a name")
    here = f"{where}.{raw['name']}"
    unknown = set(raw) - _FIELD_KEYS
    if unknown:
        raise SpecError(f"{here}: unknown field keys {sorted(unknown)}")
    type_ = raw.get("type")
    if not isinstance(type_, str):
        raise SpecError(f"{here}: missing type")
    element = type_[2:] if type_.startswith("[]") else None
    sub = raw.get("fields")
    if element is not None and element not in PRIMITIVE_TYPES:
        if not sub:
            raise SpecError(f"{here}: struct array {type_} needs nested fields")
        fields = _parse_fields(sub, here)
    elif element is None and type_ not in PRIMITIVE_TYPES:
        if not sub:
            raise SpecError(f"{here}: unknown type {type_!r} (a struct needs nested fields)")
        fields = _parse_fields(sub, here)
    elif sub:
        raise SpecError(f"{here}: only structs and struct arrays may have nested fields")
    else:
        fields = ()
    nullable = Versions.parse(raw.get("nullableVersions", "none"))
    if nullable != NO_VERSIONS and element is None and type_ not in _NULLABLE_TYPES:
        raise SpecError(f"{here}: {type_} can never be null")
    tagged = Versions.parse(raw.get("taggedVersions", "none"))
    tag = raw.get("tag")
    if (tag is None) != (tagged == NO_VERSIONS):
        raise SpecError(f"{here}: tag and taggedVersions go together")
    if tag is not None and (not isinstance(tag, int) or tag < 0):
        raise SpecError(f"{here}: tag must be a non-negative integer")
    flex = raw.get("flexibleVersions")
    return FieldSpec(
        name=str(raw["name"]),
        type=type_,
        versions=Versions.parse(raw.get("versions", "0+")),
        nullable_versions=nullable,
        tagged_versions=tagged,
        tag=tag,
        default=raw.get("default"),
        has_default="default" in raw,
        flexible_versions=None if flex is None else Versions.parse(flex),
        fields=fields,
        about=str(raw.get("about", "")),
    )
