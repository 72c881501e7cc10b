"""Where ``--usage`` samples come from: the one door the plan road reads them through.

STUB, replaced at merge by the readers of :mod:`kquota.usage.samples` (issue 30, part 1: sample
files and a Prometheus server). Until then it reads one format only, JSON Lines of
:class:`kquota.usage.rows.Sample` rows, one object a line::

    {"cluster": "prod", "broker": "1", "user": "alice", "client_id": null,
     "metric": "produce-byte-rate", "timestamp_ms": 1764223200000, "value": 1048576.0}

Rows of another cluster (when ``cluster`` is given) and rows outside ``since``..``until`` are
left out. Every bad line is refused with its ``file:line`` and what is allowed.
"""

from __future__ import annotations

import json
import math
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from kquota.errors import KquotaError
from kquota.localfile import MiB, UnreadableFile, read_text
from kquota.usage.rows import METRICS, Sample

MAX_SAMPLES_BYTES = 1024 * MiB
_SINCE = re.compile(r"([0-9]{1,9})([smhd])")
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86_400}
_FIELDS = ("cluster", "broker", "user", "client_id", "metric", "timestamp_ms", "value")


class UsageSourceError(KquotaError):
    """UsageSourceError: the usage samples cannot be read; the message says where and why."""


def parse_since(text: str, option: str = "--since") -> int:
    """parse_since reads ``7d``, ``24h``, ``90m`` or ``3600s`` as milliseconds."""
    m = _SINCE.fullmatch(text.strip())
    if m is None or int(m.group(1)) == 0:
        raise UsageSourceError(
            f"{option} {text[:40]!r}: not a duration; use a whole number and a unit, e.g. "
            "7d, 24h, 90m or 3600s"
        )
    return int(m.group(1)) * _UNIT_SECONDS[m.group(2)] * 1000


def samples_from(
    path_or_url: str,
    since: str,
    until: str | None = None,
    cluster: str | None = None,
    *,
    now_ms: int | None = None,
) -> Iterator[Sample]:
    """samples_from yields the rows of ``path_or_url`` observed from ``since`` ago until
    ``until`` ago (None: now), of ``cluster`` when given."""
    now = int(time.time() * 1000) if now_ms is None else now_ms
    start = now - parse_since(since)
    end = now if until is None else now - parse_since(until, "--until")
    if "://" in path_or_url:
        raise UsageSourceError(
            f"--usage {path_or_url[:80]!r}: only a JSON Lines file of samples is read yet; "
            "allowed: a path"
        )
    path = Path(path_or_url)
    try:
        text = read_text(path, limit=MAX_SAMPLES_BYTES, larger="select a shorter --since")
    except UnreadableFile as e:
        raise UsageSourceError(e.message(path, "usage samples")) from None
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        row = _row(line, f"{path}:{number}")
        if cluster is not None and row.cluster != cluster:
            continue
        if start <= row.timestamp_ms <= end:
            yield row


def _row(line: str, where: str) -> Sample:
    try:
        raw: Any = json.loads(line)
    except ValueError as e:
        raise UsageSourceError(
            f"{where}: not JSON ({e}); allowed: one sample object a line"
        ) from None
    if not isinstance(raw, dict) or set(raw) != set(_FIELDS):
        raise UsageSourceError(f"{where}: a sample has exactly the fields {', '.join(_FIELDS)}")
    for name in ("cluster", "broker", "metric"):
        if not isinstance(raw[name], str) or not raw[name]:
            raise UsageSourceError(f"{where}: {name}: a non-empty string is needed")
    for name in ("user", "client_id"):
        if raw[name] is not None and (not isinstance(raw[name], str) or not raw[name]):
            raise UsageSourceError(f"{where}: {name}: a non-empty string or null is needed")
    if raw["metric"] not in METRICS:
        raise UsageSourceError(
            f"{where}: metric {raw['metric'][:80]!r} is unknown; allowed: "
            + ", ".join(sorted(METRICS))
        )
    t, v = raw["timestamp_ms"], raw["value"]
    if isinstance(t, bool) or not isinstance(t, int) or not 0 <= t < 2**63:
        raise UsageSourceError(f"{where}: timestamp_ms: milliseconds since the epoch are needed")
    if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v) or v < 0:
        raise UsageSourceError(f"{where}: value: a finite number of at least 0 is needed")
    return Sample(
        raw["cluster"], raw["broker"], raw["user"], raw["client_id"], raw["metric"], t, float(v)
    )


__all__ = ["UsageSourceError", "parse_since", "samples_from"]
