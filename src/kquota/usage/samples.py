"""Sample files: the rows of :mod:`kquota.usage.rows` as JSON Lines, Parquet, or scrapes.

Three kinds, told by the file's suffix (a folder is every such file in it, by name):

- **JSON Lines** (``.jsonl``, ``.ndjson``): one object a line with exactly the fields of
  :class:`~kquota.usage.rows.Sample`::

      {"cluster": "prod", "broker": "1", "user": "alice", "client_id": null,
       "metric": "produce-byte-rate", "timestamp_ms": 1767225600000, "value": 1048576.0}

  ``null`` (or ``""``) for a tag the broker left empty; ``broker`` a string or a broker id.
- **Parquet** (``.parquet``): the same fields as columns (``broker``, ``user`` and
  ``client_id`` strings, ``timestamp_ms`` an integer, ``value`` a double), read a batch at a
  time with pyarrow; errors name the row.
- **Prometheus text exposition** (``.prom``, ``.txt``): a broker's scrape of the JMX exporter.
  Only the quota metrics of :mod:`kquota.usage.exposition` are read; every other line is not
  ours and is passed over. The broker is the ``broker`` label, else the file's name without
  its suffix (one scrape file per broker: ``1.prom``); the cluster is the ``cluster`` label,
  else the target cluster. A sample without its optional timestamp takes the file's
  modification time (the time the scrape was written).

Every value is checked: a metric that is not one of ours, a missing or unknown field, a
value that is NaN, infinite or negative, a timestamp that is not a whole number of
milliseconds, a sample from another cluster than the target (both named): an error with the
file and line (row). A file larger than the limit is refused before it is read. Files are
read as streams, a line (a batch) at a time: the rows are never all held here.
"""

from __future__ import annotations

import io
import math
import os
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import Any

import orjson

from kquota.errors import KquotaError
from kquota.localfile import MiB, UnreadableFile, open_regular
from kquota.usage.exposition import (
    EXPOSITION_NAMES,
    TYPE_LABEL,
    ExpositionError,
    allowed_types,
    exposition_value,
    metric_of,
    tags,
)
from kquota.usage.rows import METRICS, Sample

MAX_SAMPLE_FILE_BYTES = 64 * 1024 * MiB
"""The largest sample file read (64 GiB): files are streamed, so this bounds time, not memory;
past it a fleet's data belongs to the Spark engine."""

JSONL_SUFFIXES = (".jsonl", ".ndjson")
PARQUET_SUFFIXES = (".parquet",)
EXPOSITION_SUFFIXES = (".prom", ".txt")
SUFFIXES = JSONL_SUFFIXES + PARQUET_SUFFIXES + EXPOSITION_SUFFIXES
FIELDS = ("cluster", "broker", "user", "client_id", "metric", "timestamp_ms", "value")


def _arrow_types(pa: Any) -> list[Any]:
    return list(parquet_schema(pa).types)


def parquet_schema(pa: Any) -> Any:
    """parquet_schema is the sample row as Parquet columns, for writers (``pa``: pyarrow)."""
    text, whole, real = pa.string(), pa.int64(), pa.float64()
    kinds = (text, text, text, text, text, whole, real)
    return pa.schema(list(zip(FIELDS, kinds, strict=True)))


_BATCH_ROWS = 65536
_FIELD_SET = frozenset(FIELDS)
_MAX_FLOAT = sys.float_info.max


class SampleFileError(KquotaError):
    """SampleFileError: a sample file kquota cannot read; the message names file and line."""


@dataclass
class SampleFiles:
    """SampleFiles reads sample files (or folders of them) as one stream of :class:`Sample`.

    ``cluster`` is the target cluster every sample must come from; None takes the first
    sample's, so files of two clusters are still refused. :meth:`where` is the place of the
    sample last yielded (``file:line``, ``file: row N``), for an error found downstream.
    """

    paths: Sequence[Path]
    cluster: str | None = None
    max_file_bytes: int = MAX_SAMPLE_FILE_BYTES

    def __post_init__(self) -> None:
        self._where: Callable[[], str] = lambda: "sample files"

    def where(self) -> str:
        return self._where()

    def files(self) -> list[Path]:
        """files are the files read, in order: each path, a folder's files by name."""
        out: list[Path] = []
        for path in self.paths:
            if path.is_dir():
                found = sorted(p for p in path.iterdir() if p.suffix in SUFFIXES and p.is_file())
                if not found:
                    raise SampleFileError(
                        f"{path}: no sample file in this folder; allowed: files named "
                        f"*{', *'.join(SUFFIXES)}"
                    )
                out += found
            elif path.suffix in SUFFIXES:
                out.append(path)
            elif not path.exists():
                raise SampleFileError(f"{path}: no such sample file")
            else:
                raise SampleFileError(
                    f"{path}: not a sample file by its name; allowed: *{', *'.join(SUFFIXES)} "
                    "(JSON Lines, Parquet, Prometheus text exposition)"
                )
        return out

    def __iter__(self) -> Iterator[Sample]:
        for path in self.files():
            if path.suffix in PARQUET_SUFFIXES:
                yield from self._parquet(path)
                continue
            try:
                f = open_regular(path, limit=self.max_file_bytes, larger="split it by time")
            except UnreadableFile as e:
                raise SampleFileError(e.message(path, "sample file")) from None
            with f:
                if path.suffix in JSONL_SUFFIXES:
                    yield from self._jsonl(path, f)
                else:
                    mtime_ms = int(os.fstat(f.fileno()).st_mtime * 1000)
                    yield from self._exposition(path, f, mtime_ms)

    def read_bytes(self, path: PurePath, data: bytes, mtime_ms: int) -> Iterator[Sample]:
        """read_bytes reads one sample file's contents as :meth:`__iter__` reads the file
        ``path`` (named in errors, its suffix the kind; ``mtime_ms`` its modification time)."""
        if path.suffix in PARQUET_SUFFIXES:
            yield from _samples(self._parquet_batches(path, self._parquet_of(path, data)))
        elif path.suffix in JSONL_SUFFIXES:
            yield from self._jsonl(path, io.BytesIO(self._within_limit(path, data)))
        elif path.suffix in EXPOSITION_SUFFIXES:
            yield from self._exposition(path, io.BytesIO(self._within_limit(path, data)), mtime_ms)
        else:
            raise SampleFileError(
                f"{path}: not a sample file by its name; allowed: *{', *'.join(SUFFIXES)} "
                "(JSON Lines, Parquet, Prometheus text exposition)"
            )

    def read_batches(self, path: PurePath, data: bytes, mtime_ms: int) -> Iterator[Any]:
        """read_batches reads as :meth:`read_bytes` does, as pyarrow record batches of the
        sample columns (:func:`parquet_schema`): the Spark engine's executors read files
        they got from Hadoop's file systems through here and hand the batches to the JVM as
        they are. A Parquet file's batches pass through unless a row needs a closer look."""
        import pyarrow as pa

        if path.suffix in PARQUET_SUFFIXES:
            parts: Iterator[Any] = self._parquet_batches(path, self._parquet_of(path, data))
        else:
            parts = _chunked(self.read_bytes(path, data, mtime_ms))
        schema = parquet_schema(pa)
        for part in parts:
            if isinstance(part, list):
                typed = zip(FIELDS, schema.types, strict=True)
                columns = [pa.array([getattr(s, f) for s in part], t) for f, t in typed]
                part = pa.RecordBatch.from_arrays(columns, schema=schema)
            yield part

    def _within_limit(self, path: PurePath, data: bytes) -> bytes:
        if len(data) > self.max_file_bytes:
            raise SampleFileError(
                f"{path}: cannot read sample file: file too large ({len(data)} bytes; the limit "
                f"is {self.max_file_bytes} bytes); allowed: smaller files (split it by time)"
            )
        return data

    def _parquet_of(self, path: PurePath, data: bytes) -> Any:
        from kquota.snapshot.parquet import _pyarrow

        _, pq = _pyarrow()
        try:
            return pq.ParquetFile(io.BytesIO(self._within_limit(path, data)))
        except (OSError, ValueError) as e:
            raise SampleFileError(f"{path}: not a Parquet sample file: {e}") from None

    def _fast(self, row: object) -> Sample | None:
        """_fast is the sample of a row as kquota writes it (strings, an int time, a float
        value, all in range), or None for :meth:`_checked` to take it apart and say why.
        The one path of millions of rows: type checks by identity, no message built."""
        if type(row) is not dict or row.keys() != _FIELD_SET:
            return None
        cluster, broker, user, client_id = (
            row["cluster"], row["broker"], row["user"], row["client_id"]
        )  # fmt: skip
        metric, ts, value = row["metric"], row["timestamp_ms"], row["value"]
        if (
            cluster != self.cluster
            or type(cluster) is not str
            or type(broker) is not str
            or not broker
            or metric not in METRICS
            or type(ts) is not int
            or ts < 0
            or type(value) is not float
            or not 0.0 <= value <= _MAX_FLOAT  # NaN compares false
            or (user is not None and (type(user) is not str or not user))
            or (client_id is not None and (type(client_id) is not str or not client_id))
        ):
            return None
        return Sample(cluster, broker, user, client_id, metric, ts, value)

    def _checked(self, at: str, row: dict[str, Any]) -> Sample:
        cluster = row["cluster"]
        if not isinstance(cluster, str) or not cluster:
            raise SampleFileError(f"{at}: cluster {_shown(cluster)}: a cluster name is needed")
        if self.cluster is None:
            self.cluster = cluster
        elif cluster != self.cluster:
            raise SampleFileError(
                f"{at}: a sample of cluster {_shown(cluster)}, not of {_shown(self.cluster)} "
                "(the cluster read): one cluster's samples at a time"
            )
        broker = row["broker"]
        if isinstance(broker, int) and not isinstance(broker, bool) and broker >= 0:
            broker = str(broker)
        if not isinstance(broker, str) or not broker:
            raise SampleFileError(
                f"{at}: broker {_shown(broker)}; allowed: a broker id or name (a string or a "
                "whole number)"
            )
        names = []
        for field in ("user", "client_id"):
            name = row[field]
            if name is not None and not isinstance(name, str):
                raise SampleFileError(
                    f"{at}: {field} {_shown(name)}; allowed: a string, or null for an empty tag"
                )
            names.append(name or None)
        metric = row["metric"]
        if metric not in METRICS:
            raise SampleFileError(
                f"{at}: unknown metric {_shown(metric)}; allowed: {', '.join(sorted(METRICS))}"
            )
        ts = row["timestamp_ms"]
        if not isinstance(ts, int) or isinstance(ts, bool) or ts < 0:
            raise SampleFileError(
                f"{at}: timestamp_ms {_shown(ts)}; allowed: milliseconds since the epoch (a "
                "whole number, 0 or more)"
            )
        value = row["value"]
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise SampleFileError(f"{at}: value {_shown(value)}; allowed: a number")
        value = float(value)
        _check_value(at, value)
        return Sample(cluster, broker, names[0], names[1], metric, ts, value)

    def _jsonl(self, path: PurePath, f: Any) -> Iterator[Sample]:
        line = 0
        self._where = lambda: f"{path}:{line}"
        for raw in f:
            line += 1
            if not raw.strip():
                continue
            try:
                row = orjson.loads(raw)
            except orjson.JSONDecodeError as e:
                raise SampleFileError(f"{path}:{line}: invalid JSON: {e.msg}") from None
            sample = self._fast(row)
            if sample is not None:
                yield sample
                continue
            at = f"{path}:{line}"
            if not isinstance(row, dict):
                raise SampleFileError(
                    f"{at}: a JSON {type(row).__name__}; allowed: one sample object a line"
                )
            _check_fields(at, row)
            yield self._checked(at, row)

    def _parquet(self, path: Path) -> Iterator[Sample]:
        from kquota.snapshot.parquet import _pyarrow

        _, pq = _pyarrow()
        try:
            size = path.stat().st_size
            if size > self.max_file_bytes:
                raise SampleFileError(
                    f"{path}: cannot read sample file: file too large ({size} bytes; the limit "
                    f"is {self.max_file_bytes} bytes); allowed: smaller files (split it by time)"
                )
            pf = pq.ParquetFile(path)
        except (OSError, ValueError) as e:
            raise SampleFileError(f"{path}: not a Parquet sample file: {e}") from None
        yield from _samples(self._parquet_batches(path, pf))

    def _parquet_batches(self, path: PurePath, pf: Any) -> Iterator[Any]:
        """_parquet_batches reads ``pf`` a batch at a time: a batch that passes
        :meth:`_columnar` as a record batch of the sample columns, else as the list of its
        samples, checked row by row (the error, if any, names the row)."""
        have = set(pf.schema_arrow.names)
        missing = [f for f in FIELDS if f not in have]
        if missing:
            raise SampleFileError(
                f"{path}: Parquet sample file without column(s) {', '.join(missing)}; "
                f"allowed: the columns {', '.join(FIELDS)}"
            )
        row_no = 0
        self._where = lambda: f"{path}: row {row_no}"
        try:
            for batch in pf.iter_batches(batch_size=_BATCH_ROWS, columns=list(FIELDS)):
                good = self._columnar(batch)
                if good is not None:
                    row_no += batch.num_rows
                    yield good
                    continue
                columns = [batch.column(i).to_pylist() for i in range(len(FIELDS))]
                samples = []
                for values in zip(*columns, strict=True):
                    row_no += 1
                    row = dict(zip(FIELDS, values, strict=True))
                    sample = self._fast(row)
                    samples.append(
                        self._checked(f"{path}: row {row_no}", row) if sample is None else sample
                    )
                yield samples
        except (OSError, ValueError) as e:  # pyarrow's ArrowInvalid is a ValueError
            raise SampleFileError(f"{path}: row {row_no + 1}: cannot read: {e}") from None

    def _columnar(self, batch: Any) -> Any:
        """_columnar is ``batch`` (the sample columns) if every row is one :meth:`_fast`
        takes, checked column by column, with empty tags made null as :meth:`_checked`
        makes them; else None, for the row-by-row check. Millions of rows, no Python per row."""
        import pyarrow as pa
        import pyarrow.compute as pc

        if batch.schema.names != list(FIELDS) or batch.schema.types != _arrow_types(pa):
            return None  # another column type (an integer broker, ...): read row by row
        cluster, broker, user, client_id, metric, ts, value = batch.columns
        if any(c.null_count for c in (cluster, broker, metric, ts, value)):
            return None
        if self.cluster is None and batch.num_rows:
            first = cluster[0].as_py()
            if not first:
                return None
            self.cluster = first
        checks = (
            pc.equal(cluster, self.cluster),
            pc.greater(pc.utf8_length(broker), 0),
            pc.is_in(metric, value_set=pa.array(sorted(METRICS))),
            pc.greater_equal(ts, 0),
            pc.is_finite(value),
            pc.greater_equal(value, 0.0),
        )
        if not all(pc.all(c).as_py() is True for c in checks):
            return None
        empty = pa.scalar(None, pa.string())
        tags = [pc.if_else(pc.equal(t, ""), empty, t) for t in (user, client_id)]
        return pa.RecordBatch.from_arrays(
            [cluster, broker, *tags, metric, ts, value], schema=batch.schema
        )

    def _exposition(self, path: PurePath, f: Any, mtime_ms: int) -> Iterator[Sample]:
        line = 0
        self._where = lambda: f"{path}:{line}"
        for raw in f:
            line += 1
            name_end = _NAME.match(raw)
            if name_end is None:  # a comment, a blank line, or not a metric line at all
                continue
            name = name_end.group().decode("ascii")
            if name not in EXPOSITION_NAMES:
                continue
            at = f"{path}:{line}"
            try:
                text = raw.decode("utf-8").rstrip("\r\n")
            except UnicodeDecodeError:
                raise SampleFileError(f"{at}: not UTF-8 text") from None
            labels, rest = _labels(at, text, len(name))
            parts = rest.split()
            if len(parts) not in (1, 2):
                raise SampleFileError(
                    f"{at}: expected a value and an optional timestamp after the labels"
                )
            metric = metric_of(name, labels.get(TYPE_LABEL))
            if metric is None:
                raise SampleFileError(
                    f"{at}: {name} with type {_shown(labels.get(TYPE_LABEL))}; allowed: "
                    f"type={', '.join(allowed_types(name))}"
                )
            try:
                value = float(parts[0])
            except ValueError:
                raise SampleFileError(f"{at}: value {_shown(parts[0])}: not a number") from None
            value = exposition_value(metric, value)
            _check_value(at, value)
            ts = mtime_ms
            if len(parts) == 2:
                if not re.fullmatch(r"-?[0-9]+", parts[1]):
                    raise SampleFileError(
                        f"{at}: timestamp {_shown(parts[1])}; allowed: milliseconds since the epoch"
                    )
                ts = int(parts[1])
                if ts < 0:
                    raise SampleFileError(f"{at}: timestamp {ts}: before the epoch")
            try:
                user, client_id = tags(labels, name)
            except ExpositionError as e:
                raise SampleFileError(f"{at}: {e}") from None
            row = {
                "cluster": labels.get("cluster", self.cluster),
                "broker": labels.get("broker", path.name.removesuffix(path.suffix)),
                "user": user,
                "client_id": client_id,
                "metric": metric,
                "timestamp_ms": ts,
                "value": value,
            }
            if row["cluster"] is None:
                raise SampleFileError(
                    f"{at}: no cluster label, and no cluster named: name it with --cluster "
                    "(kquota.yaml), a snapshot that records it, or a cluster label"
                )
            yield self._checked(at, row)


def _samples(parts: Iterator[Any]) -> Iterator[Sample]:
    """_samples are the samples of :meth:`SampleFiles._parquet_batches`' parts."""
    for part in parts:
        if isinstance(part, list):
            yield from part
        else:
            yield from map(Sample, *(c.to_pylist() for c in part.columns))


def _chunked(samples: Iterator[Sample]) -> Iterator[list[Sample]]:
    chunk: list[Sample] = []
    for s in samples:
        chunk.append(s)
        if len(chunk) == _BATCH_ROWS:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


_NAME = re.compile(rb"[a-zA-Z_:][a-zA-Z0-9_:]*")
_LABEL = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"\s*(,|\})')
_UNESCAPE = {"\\\\": "\\", '\\"': '"', "\\n": "\n"}


def _labels(at: str, text: str, start: int) -> tuple[dict[str, str], str]:
    """_labels reads ``{a="x",b="y"}`` from ``text[start:]``: the labels and what follows."""
    labels: dict[str, str] = {}
    pos = start
    if pos < len(text) and text[pos] == "{":
        pos += 1
        if text[pos:].lstrip().startswith("}"):
            pos = text.index("}", pos) + 1
        else:
            while True:
                m = _LABEL.match(text, pos)
                if m is None:
                    raise SampleFileError(
                        f'{at}: labels not in the exposition format (name="value", ...) at '
                        f"column {pos + 1}"
                    )
                key = m.group(1)
                if key in labels:
                    raise SampleFileError(f"{at}: label {key} given twice")
                labels[key] = re.sub(r"\\.", lambda e: _UNESCAPE.get(e.group(), e.group()), m[2])
                pos = m.end()
                if m.group(3) == "}":
                    break
                rest = text[pos:].lstrip()
                if rest.startswith("}"):  # a trailing comma, as the JMX exporter writes
                    pos = len(text) - len(rest) + 1
                    break
    return labels, text[pos:]


def _check_fields(at: str, row: dict[str, Any]) -> None:
    missing = [f for f in FIELDS if f not in row]
    unknown = sorted(f for f in row if f not in FIELDS)
    if missing or unknown:
        what = "; ".join(
            part
            for part in (
                f"missing {', '.join(missing)}" if missing else "",
                f"unknown field(s) {', '.join(_shown(u) for u in unknown)}" if unknown else "",
            )
            if part
        )
        raise SampleFileError(f"{at}: {what}; allowed: exactly the fields {', '.join(FIELDS)}")


def _check_value(at: str, value: float) -> None:
    if math.isnan(value):
        raise SampleFileError(f"{at}: value NaN; allowed: a finite number, 0 or more")
    if math.isinf(value):
        raise SampleFileError(f"{at}: value {value}; allowed: a finite number, 0 or more")
    if value < 0:
        raise SampleFileError(f"{at}: value {value!r} is negative; allowed: 0 or more")


def _shown(value: object) -> str:
    from kquota.display import safe_text

    text = repr(value)
    return safe_text(text if len(text) <= 80 else text[:80] + "…")
