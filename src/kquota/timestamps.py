"""Timestamps: one home for the two UTC forms kquota writes."""

from __future__ import annotations

from datetime import UTC, datetime


def utc_now_iso() -> str:
    """utc_now_iso is now in UTC to the second, ``2026-01-02T03:04:05+00:00``: what plans,
    drift reports and snapshot files record."""
    return datetime.now(UTC).replace(microsecond=0).isoformat()


def utc_timestamp(now: datetime | None = None) -> str:
    """utc_timestamp is ISO-8601 UTC with milliseconds and a ``Z``: 2026-01-02T03:04:05.678Z."""
    moment = (now or datetime.now(UTC)).astimezone(UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")
