"""Where ``--usage`` samples come from: the one door the plan road reads them through.

Sample files of every kind :mod:`kquota.usage.samples` reads (JSON Lines, Parquet, Prometheus
scrapes; a folder of them), with its checks: a bad line or row is refused with its
``file:line`` and what is allowed, and so is a sample of another cluster than the one named.
The plan road keeps the rows of the ``--since`` window (:mod:`kquota.usage.window`).
"""

from __future__ import annotations

from pathlib import Path

from kquota.errors import KquotaError
from kquota.usage.rows import Sample
from kquota.usage.window import in_window, parse_since


class UsageSourceError(KquotaError):
    """UsageSourceError: the usage samples cannot be read; the message says where and why."""


def samples_from(path_or_url: str, since: str, cluster: str | None = None) -> list[Sample]:
    """samples_from is the rows of ``path_or_url`` (a sample file or a folder of them) in the
    window of ``since`` (:mod:`kquota.usage.window`: back from the newest sample, the rule
    ``kquota usage`` cuts by). Every sample must be of ``cluster`` (None: of the first
    sample's cluster)."""
    from kquota.usage.samples import SampleFiles

    since_ms = parse_since(since)
    if "://" in path_or_url:
        raise UsageSourceError(
            f"--usage {path_or_url[:80]!r}: only sample files are read yet; allowed: a path"
        )
    return in_window(SampleFiles((Path(path_or_url),), cluster), since_ms)


__all__ = ["UsageSourceError", "samples_from"]
