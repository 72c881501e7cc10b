"""Where ``--usage`` samples come from: the one door the plan road reads them through.

Sample files of every kind :mod:`kquota.usage.samples` reads (JSON Lines, Parquet, Prometheus
scrapes; a folder of them), with its checks: a bad line or row is refused with its
``file:line`` and what is allowed, and so is a sample of another cluster than the one named.
The plan road keeps the rows observed from ``since`` ago until ``until`` ago.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path

from kquota.errors import KquotaError
from kquota.usage.rows import Sample

_SINCE = re.compile(r"([0-9]{1,9})([smhd])")
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86_400}


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
    """samples_from yields the rows of ``path_or_url`` (a sample file or a folder of them)
    observed from ``since`` ago until ``until`` ago (None: now). Every sample must be of
    ``cluster`` (None: of the first sample's cluster)."""
    from kquota.usage.samples import SampleFiles

    now = int(time.time() * 1000) if now_ms is None else now_ms
    start = now - parse_since(since)
    end = now if until is None else now - parse_since(until, "--until")
    if "://" in path_or_url:
        raise UsageSourceError(
            f"--usage {path_or_url[:80]!r}: only sample files are read yet; allowed: a path"
        )
    for row in SampleFiles((Path(path_or_url),), cluster):
        if start <= row.timestamp_ms <= end:
            yield row


__all__ = ["UsageSourceError", "parse_since", "samples_from"]
