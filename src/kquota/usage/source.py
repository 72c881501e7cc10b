"""Where ``--usage`` samples come from: the one door the plan road reads them through.

Sample files of every kind :mod:`kquota.usage.samples` reads (JSON Lines, Parquet, Prometheus
scrapes; a folder of them), with its checks: a bad line or row is refused with its
``file:line`` and what is allowed, and so is a sample of another cluster than the one named.
Or a Prometheus server's URL, read as ``kquota usage --prometheus`` reads it
(:class:`kquota.usage.prometheus.PrometheusSamples`: credentials from an environment
variable or the URL, never shown; bounded by the command's deadline). The plan road keeps
the rows observed from ``since`` ago until ``until`` ago.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable, Iterator
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
    token_env: str | None = None,
    basic_auth_env: str | None = None,
    now_ms: int | None = None,
) -> Iterator[Sample]:
    """samples_from yields the rows of ``path_or_url`` (a sample file, a folder of them, or
    a Prometheus server's http(s) URL) observed from ``since`` ago until ``until`` ago (None:
    now). Every sample must be of ``cluster`` (None: of the first sample's cluster; from
    Prometheus, of the series' ``cluster`` label). ``token_env``/``basic_auth_env`` name the
    environment variable holding Prometheus's credentials."""
    now = int(time.time() * 1000) if now_ms is None else now_ms
    window = parse_since(since)
    start = now - window
    end = now if until is None else now - parse_since(until, "--until")
    rows: Iterable[Sample]
    if is_url(path_or_url):
        from kquota.usage.prometheus import PrometheusSamples

        rows = PrometheusSamples(
            path_or_url,
            cluster,
            since_ms=window,
            token_env=token_env,
            basic_auth_env=basic_auth_env,
            option="--usage",
        )
    else:
        if token_env or basic_auth_env:
            raise UsageSourceError(
                "--prometheus-token-env and --prometheus-basic-auth-env need --usage URL "
                "(a Prometheus server), not a samples file"
            )
        from kquota.usage.samples import SampleFiles

        rows = SampleFiles((Path(path_or_url),), cluster)
    for row in rows:
        if start <= row.timestamp_ms <= end:
            yield row


def is_url(path_or_url: str) -> bool:
    """is_url: ``--usage`` names a server (``scheme://...``), not a file."""
    return "://" in path_or_url


def shown_source(path_or_url: str) -> str:
    """shown_source is ``--usage`` as a plan may print and save it: a URL without its
    credentials, a path as given."""
    if is_url(path_or_url):
        from kquota.usage.prometheus import PrometheusServer

        return PrometheusServer.parse(path_or_url, env={}, option="--usage").shown
    return path_or_url


__all__ = ["UsageSourceError", "is_url", "parse_since", "samples_from", "shown_source"]
