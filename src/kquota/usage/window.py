"""The usage window: which samples ``--since`` selects, for every command that reads usage.

One rule, here only: the window is ``--since`` back from the **newest sample read**, both ends
included, never from the clock. ``kquota usage``, ``kquota recommend``, the fleet commands on
either engine and ``kquota plan --usage`` all cut their samples with it, so the same files and
the same ``--since`` give the same samples to every one of them, today and next month (a
Prometheus source reads up to now, so its newest sample is about now anyway). ``--since``
is read by one parser, :func:`parse_since`, for all of them.
"""

from __future__ import annotations

from collections.abc import Iterable

from kquota.errors import UsageError
from kquota.usage.rows import Sample

DAY_MS = 24 * 3600 * 1000


def parse_since(text: str, option: str = "--since") -> int:
    """parse_since reads a window, ``7d`` or a duration as every time option takes it
    (``12h``, ``90m``, ``3600s``, ``1h30m``), as milliseconds."""
    from kquota.runtime.deadline import parse_duration

    stripped = text.strip()
    if stripped.endswith("d") and stripped[:-1].isdigit() and int(stripped[:-1]) > 0:
        return int(stripped[:-1]) * DAY_MS
    try:
        return int(parse_duration(text, option) * 1000)
    except UsageError:
        raise UsageError(
            f"{option} {text[:40]!r}: not a window; use days (7d) or a duration (12h, 90m)"
        ) from None


def window_start(newest_ms: int, since_ms: int) -> int:
    """window_start is the first millisecond of the window that ends at ``newest_ms``."""
    return newest_ms - since_ms


def in_window(samples: Iterable[Sample], since_ms: int) -> list[Sample]:
    """in_window is the samples of the window of ``since_ms`` that ends at the newest of
    them, in the order read."""
    rows = list(samples)
    if not rows:
        return rows
    start = window_start(max(s.timestamp_ms for s in rows), since_ms)
    return [s for s in rows if s.timestamp_ms >= start]


__all__ = ["in_window", "parse_since", "window_start"]
