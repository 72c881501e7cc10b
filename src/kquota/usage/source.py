"""Where ``--usage`` samples come from: the one door the plan road reads them through.

Sample files of every kind :mod:`kquota.usage.samples` reads (JSON Lines, Parquet, Prometheus
scrapes; a folder of them), with its checks: a bad line or row is refused with its
``file:line`` and what is allowed, and so is a sample of another cluster than the one named.
Or a Prometheus server's URL, read as ``kquota usage --prometheus`` reads it
(:class:`kquota.usage.prometheus.PrometheusSamples`: credentials from an environment
variable or the URL, never shown; bounded by the command's deadline). The plan road keeps
the rows of the ``--since`` window (:mod:`kquota.usage.window`).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from kquota.errors import KquotaError
from kquota.usage.rows import Sample
from kquota.usage.window import in_window, parse_since


class UsageSourceError(KquotaError):
    """UsageSourceError: the usage samples cannot be read; the message says where and why."""


def samples_from(
    path_or_url: str,
    since: str,
    cluster: str | None = None,
    *,
    token_env: str | None = None,
    basic_auth_env: str | None = None,
) -> list[Sample]:
    """samples_from is the rows of ``path_or_url`` (a sample file, a folder of them, or a
    Prometheus server's http(s) URL) in the window of ``since`` (:mod:`kquota.usage.window`:
    back from the newest sample, the rule ``kquota usage`` cuts by). Every sample must be of
    ``cluster`` (None: of the first sample's cluster; from Prometheus, of the series'
    ``cluster`` label). ``token_env``/``basic_auth_env`` name the environment variable
    holding Prometheus's credentials."""
    since_ms = parse_since(since)
    rows: Iterable[Sample]
    if is_url(path_or_url):
        from kquota.usage.prometheus import PrometheusSamples

        rows = PrometheusSamples(
            path_or_url,
            cluster,
            since_ms=since_ms,
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
    return in_window(rows, since_ms)


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


__all__ = ["UsageSourceError", "is_url", "samples_from", "shown_source"]
