"""Snapshot files: the ``describe --format json`` contract and JSON Lines of its entries.

JSON document::

    {"format_version": 1, "entries": [
    {"entity": {"user": "alice", "client-id": null}, "quotas": {"producer_byte_rate": 1048576.0}}
    ]}

JSON Lines: one ``{"entity": ..., "quotas": ...}`` object a line (no header), which streams
and splits well for fleets. ``null`` is the default entity. Writers emit entities in
:func:`~kquota.model.sorted_entities` order and keys sorted, one entry a line in both forms so
that diffs of snapshot files are readable and error lines are exact.

Parsing uses orjson: on a 100k-entity snapshot it parses several times faster than the
standard library (see benchmarks/RESULTS-plan.md). The fast path validates in one pass over
the parsed objects; only on error do we go back to the text to find the entry's line.
"""

from __future__ import annotations

import io
import json
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any, Literal, cast

import orjson

from kquota.errors import KquotaError
from kquota.model import CLIENT_ID, USER, Entity, QuotaState, QuotaValues, sorted_entities
from kquota.plan.fingerprint import snapshot_fingerprint

SNAPSHOT_FORMAT_VERSION = 1
SNAPSHOT_META = ("cluster", "cluster_id", "captured_at")
"""Optional metadata ``kquota snapshot`` records: top-level in JSON, on every JSON Lines row."""
SnapshotFormat = Literal["json", "jsonl"]

__all__ = [
    "SNAPSHOT_FORMAT_VERSION",
    "SnapshotError",
    "read_snapshot",
    "parse_snapshot",
    "snapshot_fingerprint",
    "write_snapshot",
    "dump_snapshot",
]


class SnapshotError(KquotaError):
    """SnapshotError: a snapshot file that is not what kquota writes; message has file:line."""


def read_snapshot(path: str | Path) -> QuotaState:
    """read_snapshot reads a snapshot file, JSON document or JSON Lines (detected by content)."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as e:
        raise SnapshotError(f"{p}: cannot read snapshot: {e.strerror or e}") from None
    return parse_snapshot(data, str(p))


def parse_snapshot(data: bytes, name: str = "<snapshot>") -> QuotaState:
    """parse_snapshot parses snapshot bytes; ``name`` labels errors."""
    stripped = data.lstrip()
    if not stripped:
        raise SnapshotError(
            f"{name}:1: empty snapshot file (an empty cluster is "
            '{"format_version": 1, "entries": []})'
        )
    # JSON Lines when the first line alone is an entry; else one JSON document.
    try:
        head = orjson.loads(stripped.split(b"\n", 1)[0])
    except orjson.JSONDecodeError:
        head = None
    if isinstance(head, dict) and "entity" in head:
        return _parse_lines(data, name)
    try:
        doc = orjson.loads(data)
    except orjson.JSONDecodeError as e:
        raise SnapshotError(f"{name}:{e.lineno}:{e.colno}: invalid JSON: {e.msg}") from None
    return _parse_document(doc, data, name)


def _parse_document(doc: Any, data: bytes, name: str) -> QuotaState:
    if not isinstance(doc, dict):
        raise SnapshotError(f"{name}:1: expected a JSON object with format_version and entries")
    unknown = set(doc) - {"format_version", "entries", *SNAPSHOT_META}
    if unknown:
        raise SnapshotError(f"{name}:1: unknown top-level field(s): {', '.join(sorted(unknown))}")
    version = doc.get("format_version")
    if version != SNAPSHOT_FORMAT_VERSION:
        raise SnapshotError(
            f"{name}:1: unsupported snapshot format_version {version!r} "
            f"(this kquota reads {SNAPSHOT_FORMAT_VERSION})"
        )
    entries = doc.get("entries")
    if not isinstance(entries, list):
        raise SnapshotError(f"{name}:1: 'entries' must be a list")
    state: QuotaState = {}
    for index, entry in enumerate(entries):
        problem = _add_entry(state, entry)
        if problem is not None:
            raise SnapshotError(f"{name}:{_entry_line(data, index)}: entries[{index}]: {problem}")
    return state


def _parse_lines(data: bytes, name: str) -> QuotaState:
    state: QuotaState = {}
    for lineno, line in enumerate(data.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            entry = orjson.loads(line)
        except orjson.JSONDecodeError as e:
            raise SnapshotError(f"{name}:{lineno}:{e.colno}: invalid JSON: {e.msg}") from None
        problem = _add_entry(state, entry)
        if problem is not None:
            raise SnapshotError(f"{name}:{lineno}: {problem}")
    return state


def _add_entry(state: QuotaState, entry: object) -> str | None:
    """_add_entry validates one entry and adds it; returns a problem or None."""
    if not isinstance(entry, dict):
        return "an entry must be an object with 'entity' and 'quotas'"
    raw_entity = entry.get("entity")
    raw_quotas = entry.get("quotas")
    if (
        raw_entity is None
        or raw_quotas is None
        or (len(entry) != 2 and not set(entry) - {"entity", "quotas"} <= set(SNAPSHOT_META))
    ):
        return (
            "an entry has the fields 'entity' and 'quotas' (and optionally "
            + ", ".join(repr(m) for m in SNAPSHOT_META)
            + ")"
        )
    if not isinstance(raw_entity, dict) or not raw_entity:
        return "'entity' must be a non-empty object of entity type -> name or null"
    for t, n in raw_entity.items():
        if n is not None and not isinstance(n, str):
            return f"entity name for {t!r} must be a string or null, got {n!r}"
    if not isinstance(raw_quotas, dict) or not raw_quotas:
        return "'quotas' must be a non-empty object of quota key -> number"
    values: QuotaValues = {}
    for k, v in raw_quotas.items():
        if isinstance(v, bool) or not isinstance(v, int | float):
            return f"quota {k!r} must be a number, got {json.dumps(v)}"
        values[k] = float(v)
    entity = _entity(raw_entity)
    if entity in state:
        return f"duplicate entity {entity}"
    state[entity] = values
    return None


def _entity(raw: dict[str, str | None]) -> Entity:
    # Entity.of sorts the types into canonical order; files we write are in that order
    # already, and skipping the sort is a third of the parse time on large snapshots.
    if len(raw) == 1 or (len(raw) == 2 and tuple(raw) == _USER_CLIENT):
        return Entity(tuple(raw.items()))
    return Entity.of(raw)


_USER_CLIENT = (USER, CLIENT_ID)


def _entry_line(data: bytes, index: int) -> int:
    """_entry_line finds the line where entries[index] starts (error path only)."""
    text = data.decode("utf-8", errors="replace")
    start = text.find("[", text.find('"entries"'))
    if start < 0:
        return 1
    decoder = json.JSONDecoder()
    pos = start + 1
    for i in range(index + 1):
        while pos < len(text) and text[pos] in " \t\r\n,":
            pos += 1
        if i == index:
            return text.count("\n", 0, pos) + 1
        try:
            _, pos = decoder.raw_decode(text, pos)
        except ValueError:
            break
    return text.count("\n", 0, pos) + 1


def _entry_bytes(
    entity: Entity, values: Mapping[str, float], meta: Mapping[str, str | None] | None = None
) -> bytes:
    quotas = {k: float(values[k]) for k in sorted(values)}
    return orjson.dumps({"entity": entity.to_json(), "quotas": quotas, **(meta or {})})


def dump_snapshot(
    state: Mapping[Entity, QuotaValues],
    format: SnapshotFormat = "json",
    meta: Mapping[str, str | None] | None = None,
) -> bytes:
    """dump_snapshot encodes a state in one of the two snapshot formats.

    ``meta`` (keys of :data:`SNAPSHOT_META`) goes top-level in JSON and on every JSON Lines row,
    so that each row of a fleet's concatenated lines still says where it came from.
    """
    if meta and not set(meta) <= set(SNAPSHOT_META):
        raise ValueError(f"unknown snapshot metadata {sorted(set(meta) - set(SNAPSHOT_META))}")
    if format == "jsonl":
        return b"".join(_entry_bytes(e, state[e], meta) + b"\n" for e in sorted_entities(state))
    if format != "json":
        raise ValueError(f"unknown snapshot format {format!r}")
    lines = [_entry_bytes(e, state[e]) for e in sorted_entities(state)]
    head = f'{{"format_version": {SNAPSHOT_FORMAT_VERSION}'.encode() + b"".join(
        b", " + orjson.dumps(k) + b": " + orjson.dumps(v) for k, v in (meta or {}).items()
    )
    if not lines:
        return head + b', "entries": []}\n'
    return head + b', "entries": [\n' + b",\n".join(lines) + b"\n]}\n"


def write_snapshot(
    state: Mapping[Entity, QuotaValues], fh: IO[bytes] | IO[str], format: SnapshotFormat = "json"
) -> None:
    """write_snapshot writes a state to a binary or text file handle."""
    data = dump_snapshot(state, format)
    if isinstance(fh, io.TextIOBase) or hasattr(fh, "encoding"):
        cast(IO[str], fh).write(data.decode())
    else:
        cast(IO[bytes], fh).write(data)
