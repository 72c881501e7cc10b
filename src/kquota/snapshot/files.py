"""Snapshot files: the ``describe --format json`` contract and JSON Lines of its entries.

JSON document::

    {"format_version": 1, "entries": [
    {"entity": {"user": "alice", "client-id": null}, "quotas": {"producer_byte_rate": 1048576.0}}
    ]}

JSON Lines: one ``{"entity": ..., "quotas": ...}`` object a line (no header), which streams
and splits well for fleets. ``null`` is the default entity. A quota value is a JSON number,
exactly the double the broker holds (``-0.0``, ``5e-324`` and ``1e+308`` included), or, for
the values JSON has no number for, one of the strings ``"NaN"``, ``"Infinity"`` and
``"-Infinity"`` (:data:`NON_FINITE`). Writers emit entities in
:func:`~kquota.model.sorted_entities` order and keys sorted, one entry a line in both forms so
that diffs of snapshot files are readable and error lines are exact.

Parsing uses orjson: on a 100k-entity snapshot it parses several times faster than the
standard library (see benchmarks/RESULTS-plan.md). The fast path validates in one pass over
the parsed objects; only on error do we go back to the text to find the entry's line.
"""

from __future__ import annotations

import io
import json
import math
from collections.abc import Mapping
from operator import itemgetter
from pathlib import Path
from typing import IO, Any, Literal, cast

import orjson

from kquota.errors import KquotaError
from kquota.localfile import MiB, UnreadableFile, read_regular
from kquota.model import (
    CLIENT_ID,
    USER,
    Entity,
    QuotaState,
    QuotaValues,
    ValuesPool,
    pooled,
    sorted_by_entity,
)

MAX_SNAPSHOT_BYTES = 1024 * MiB
"""The largest snapshot file read: room for millions of entities, not for a device or a log."""

SNAPSHOT_FORMAT_VERSION = 1
SNAPSHOT_META = ("cluster", "cluster_id", "captured_at")
"""Optional metadata ``kquota snapshot`` records: top-level in JSON, on every JSON Lines row."""
SnapshotFormat = Literal["json", "jsonl"]

__all__ = [
    "SNAPSHOT_FORMAT_VERSION",
    "SnapshotError",
    "read_snapshot",
    "read_snapshot_and_meta",
    "read_snapshot_any",
    "parse_snapshot",
    "write_snapshot",
    "dump_snapshot",
]


class SnapshotError(KquotaError):
    """SnapshotError: a snapshot file that is not what kquota writes; message has file:line."""


SnapshotMeta = dict[str, str | None]
"""What a snapshot file records about its origin: :data:`SNAPSHOT_META` keys, None if absent."""


def read_snapshot(path: str | Path) -> QuotaState:
    """read_snapshot reads a snapshot file, JSON document or JSON Lines (detected by content)."""
    return read_snapshot_and_meta(path)[0]


def read_snapshot_and_meta(path: str | Path) -> tuple[QuotaState, SnapshotMeta]:
    """read_snapshot_and_meta also gives the recorded cluster, cluster id and capture time.

    A saved plan made from a snapshot records its cluster id, so apply can check it.
    """
    p = Path(path)
    try:
        data = read_regular(p, limit=MAX_SNAPSHOT_BYTES, larger="a snapshot of one cluster")
    except UnreadableFile as e:
        raise SnapshotError(e.message(p, "snapshot")) from None
    meta: SnapshotMeta = dict.fromkeys(SNAPSHOT_META)
    return parse_snapshot(data, str(p), meta), meta


def parse_snapshot(
    data: bytes, name: str = "<snapshot>", meta: SnapshotMeta | None = None
) -> QuotaState:
    """parse_snapshot parses snapshot bytes; ``name`` labels errors.

    ``meta``, when given, is filled with the file's metadata (JSON Lines: the first row's).
    """
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
        _take_meta(head, meta)
        return _parse_lines(data, name)
    written = _parse_as_written(data, meta)
    if written is not None:
        return written
    try:
        doc = orjson.loads(data)
    except orjson.JSONDecodeError as e:
        raise SnapshotError(f"{name}:{e.lineno}:{e.colno}: invalid JSON: {e.msg}") from None
    state = _parse_document(doc, data, name)
    _take_meta(doc, meta)
    return state


def _take_meta(source: dict[str, Any], meta: SnapshotMeta | None) -> None:
    if meta is not None:
        for key in SNAPSHOT_META:
            value = source.get(key)
            meta[key] = value if isinstance(value, str) and value else None


def _parse_as_written(data: bytes, meta: SnapshotMeta | None = None) -> QuotaState | None:
    """_parse_as_written reads a document laid out as :func:`dump_snapshot` writes it (the
    header line, one entry a line, ``]}``) entry by entry, or returns None for the document
    path to read it (any other layout, and every problem, whose message that path words).

    Parsing the whole document first would hold every entry as JSON objects at once: at 1M
    entities that transient alone was about 700 MiB of the peak.
    """
    first = data.find(b"\n")
    end = len(data) - 4
    if first < 1 or data[first - 1 : first] != b"[" or data[end:] != b"\n]}\n" or end <= first:
        return None
    try:
        top = orjson.loads(data[:first] + b"]}")
    except orjson.JSONDecodeError:
        return None
    if (
        not isinstance(top, dict)
        or top.get("entries") != []
        or top.get("format_version") != SNAPSHOT_FORMAT_VERSION
        or not set(top) <= {"format_version", "entries", *SNAPSHOT_META}
    ):
        return None
    state: QuotaState = {}
    pool: ValuesPool = {}
    pos = first + 1
    while pos < end:
        # A chunk of lines a call: one orjson call an entry cost as much as parsing did. A
        # written line holds no raw newline (JSON escapes it), so ",\n" ends an entry; a
        # chunk that is not a list of entries (another layout) declines.
        stop = data.find(b",\n", min(pos + _READ_CHUNK, end), end)
        if stop < 0:
            stop = end
        try:
            entries = orjson.loads(b"[" + data[pos:stop] + b"]")
        except orjson.JSONDecodeError:
            return None
        if not entries or not _add_entries(state, entries, pool):
            return None
        pos = stop + 2
    _take_meta(top, meta)
    return state


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
    pool: ValuesPool = {}
    for index, entry in enumerate(entries):
        problem = _add_entry(state, entry, pool)
        if problem is not None:
            raise SnapshotError(f"{name}:{_entry_line(data, index)}: entries[{index}]: {problem}")
    return state


def _parse_lines(data: bytes, name: str) -> QuotaState:
    state: QuotaState = {}
    pool: ValuesPool = {}
    for lineno, line in enumerate(data.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            entry = orjson.loads(line)
        except orjson.JSONDecodeError as e:
            raise SnapshotError(f"{name}:{lineno}:{e.colno}: invalid JSON: {e.msg}") from None
        problem = _add_entry(state, entry, pool)
        if problem is not None:
            raise SnapshotError(f"{name}:{lineno}: {problem}")
    return state


_READ_CHUNK = 1 << 16
"""Bytes of entry lines :func:`_parse_as_written` parses at a time (then to the line's end)."""


def _add_entries(state: QuotaState, entries: list[Any], pool: ValuesPool) -> bool:
    """_add_entries adds parsed entries as :func:`_add_entry` does; False at the first problem.

    The shape every written entry has (an entity of one part, or user and client-id in that
    order, named by strings or null; quotas whose values the pool holds already, checked)
    is added here in a few operations; anything else goes through :func:`_add_entry`.
    """
    add = _add_entry
    for entry in entries:
        if entry.__class__ is dict and len(entry) == 2:
            raw_entity = entry.get("entity")
            raw_quotas = entry.get("quotas")
            if raw_entity.__class__ is dict and raw_quotas.__class__ is dict:
                parts = tuple(raw_entity.items())
                values = _checked_before(raw_quotas, pool)
                if values is not None and _written_parts(parts):
                    size = len(state)
                    state[Entity(parts)] = values
                    if len(state) == size:  # a duplicate: _add_entry's message says so
                        return False
                    continue
        if add(state, entry, pool) is not None:
            return False
    return True


def _written_parts(parts: tuple[tuple[str, Any], ...]) -> bool:
    """_written_parts: ``parts`` (an entity's items as parsed) are in canonical order and
    named by strings or null, as :func:`_entity` takes them without sorting."""
    if len(parts) == 1:
        name = parts[0][1]
        return name.__class__ is str or name is None
    if len(parts) == 2:
        (t0, n0), (t1, n1) = parts
        return (
            t0 == USER
            and t1 == CLIENT_ID
            and (n0.__class__ is str or n0 is None)
            and (n1.__class__ is str or n1 is None)
        )
    return False


def _add_entry(state: QuotaState, entry: object, pool: ValuesPool) -> str | None:
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
    values = _values(raw_quotas, pool)
    if isinstance(values, str):
        return values
    entity = _entity(raw_entity)
    if entity in state:
        return f"duplicate entity {entity}"
    state[entity] = values
    return None


def _values(raw: dict[str, Any], pool: ValuesPool) -> QuotaValues | str:
    """_values checks one entry's quotas and gives them as floats, shared through ``pool``.

    Snapshots repeat a few tiers, so most entries find their values already checked in the
    pool (:func:`_checked_before`).
    """
    found = _checked_before(raw, pool)
    if found is not None:
        return found
    values: QuotaValues = {}
    for k, v in raw.items():
        if isinstance(v, str) and v in NON_FINITE:
            values[k] = float(v)
        elif isinstance(v, bool) or not isinstance(v, int | float):
            return (
                f"quota {k!r} must be a number, got {json.dumps(v)} (a value JSON has no "
                'number for is "NaN", "Infinity" or "-Infinity")'
            )
        else:
            values[k] = float(v)
    return pooled(values, pool)


def _checked_before(raw: dict[str, Any], pool: ValuesPool) -> QuotaValues | None:
    """_checked_before is the pool's values for quotas written as ``raw``, when an earlier
    entry's were checked and pooled (looked up by the values as parsed: 1 and 1.0 give the
    same float), else None. ``True == 1``, so quotas holding a boolean, or anything equal to
    one, are never found: they are always checked in full."""
    try:
        found = pool.get(tuple(raw.items()))
    except TypeError:  # a list or object among the values: the full check names it
        return None
    if found is None or True in raw.values() or False in raw.values():
        return None
    return found


NON_FINITE = ("NaN", "Infinity", "-Infinity")
"""How a snapshot writes, as strings, a value JSON has no number for. A broker holds NaN for
any key and +Infinity for the keys that are doubles (its checks, ``value <= 0`` and a
maximum, let NaN through), so ``describe --format json`` writes what it holds and ``plan
--snapshot`` reads it back: never a ``null`` that no reader takes."""


def _number(value: float) -> float | str:
    """_number is a quota value as JSON can hold it: NaN and the infinities as strings."""
    if math.isfinite(value):
        return value
    return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")


def _entity(raw: dict[str, str | None]) -> Entity:
    # Entity.of sorts the types into canonical order; files we write are in that order
    # already, and skipping the sort is a third of the parse time on large snapshots.
    if len(raw) == 1 or (len(raw) == 2 and tuple(raw) == _USER_CLIENT):
        return Entity(tuple(raw.items()))
    return Entity.of_checked(raw)


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


_DUMP_CHUNK = 2000
_QUOTAS_MEMO_LIMIT = 4096


def _entry_lines(
    state: Mapping[Entity, QuotaValues], meta: Mapping[str, str | None] | None, sep: bytes
) -> bytes:
    """_entry_lines is every entry, one a line, joined by ``sep`` (``b",\n"`` or ``b"\n"``).

    Each entry is put together from orjson's encoding of its entity and of its quotas, which
    many entities share (a few tiers): the encoding is remembered per distinct values
    (bounded). Lines are joined a chunk at a time:
    one ``orjson.dumps`` result kept per entry holds about 4 KiB of heap each (orjson 3.x), 400
    MiB of peak RSS on a 100k-entity describe. Byte for byte what ``orjson.dumps`` of the
    entry's dict gives (``{"entity": ..., "quotas": ..., **meta}``).
    """
    dumps = orjson.dumps
    tail = b"," + dumps(dict(meta))[1:-1] + b"}" if meta else b"}"
    # Entries with their values, in order: looking each entity up again would hash it once
    # more (a Python-level __hash__: a third of this function's time at 100k entities).
    order = sorted_by_entity(state.items(), itemgetter(0))
    quotas_json: dict[tuple[tuple[str, float], ...], bytes] = {}
    heads: dict[str, bytes] = {}
    out: list[bytes] = []
    for start in range(0, len(order), _DUMP_CHUNK):
        lines: list[bytes] = []
        line = lines.append
        for e, values in order[start : start + _DUMP_CHUNK]:
            items = tuple(values.items())
            quotas = quotas_json.get(items)
            if quotas is None:
                if len(quotas_json) >= _QUOTAS_MEMO_LIMIT:
                    quotas_json.clear()
                quotas = dumps({k: float(v) for k, v in sorted(items)})
                if b"null" in quotas:  # NaN or an infinity: orjson writes null for them
                    quotas = dumps({k: _number(float(v)) for k, v in sorted(items)})
                if 0.0 not in values.values():  # 0.0 == -0.0, but they print apart
                    quotas_json[items] = quotas
            parts = e.parts
            if len(parts) == 1:
                t, n = parts[0]
                head = heads.get(t)
                if head is None:
                    head = heads[t] = b'{"entity":{' + dumps(t) + b":"
                name = b"null" if n is None else dumps(n)
                line(b'%s%s},"quotas":%s%s' % (head, name, quotas, tail))
            else:
                line(b'{"entity":%s,"quotas":%s%s' % (dumps(dict(parts)), quotas, tail))
        out.append(sep.join(lines))
    return sep.join(out)


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
        return _entry_lines(state, meta, b"\n") + b"\n" if state else b""
    if format != "json":
        raise ValueError(f"unknown snapshot format {format!r}")
    head = f'{{"format_version": {SNAPSHOT_FORMAT_VERSION}'.encode() + b"".join(
        b", " + orjson.dumps(k) + b": " + orjson.dumps(v) for k, v in (meta or {}).items()
    )
    if not state:
        return head + b', "entries": []}\n'
    return head + b', "entries": [\n' + _entry_lines(state, None, b",\n") + b"\n]}\n"


def write_snapshot(
    state: Mapping[Entity, QuotaValues], fh: IO[bytes] | IO[str], format: SnapshotFormat = "json"
) -> None:
    """write_snapshot writes a state to a binary or text file handle."""
    data = dump_snapshot(state, format)
    if isinstance(fh, io.TextIOBase) or hasattr(fh, "encoding"):
        cast(IO[str], fh).write(data.decode())
    else:
        cast(IO[bytes], fh).write(data)


def read_snapshot_any(path: Path) -> QuotaState:
    """read_snapshot_any reads JSON / JSON Lines, or the Parquet ``kquota snapshot`` writes."""
    if path.suffix == ".parquet":
        from kquota.snapshot.parquet import read_parquet_snapshot

        return read_parquet_snapshot(path)
    return read_snapshot(path)
