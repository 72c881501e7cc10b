"""The usage operation (``kquota usage``, issue 30): what principals really send.

A :class:`UsageSource` names where the samples come from (sample files today; each source is
one field and one branch of :meth:`UsageSource.open`), the target gives the effective quotas
(a live describe or a snapshot file), and :func:`kquota.usage.report.usage_report` joins the
two. Usage is read, never written: nothing here alters a cluster.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Protocol

from kquota.errors import UsageError
from kquota.model import QuotaState
from kquota.target import Target
from kquota.usage.profile import profile
from kquota.usage.report import UsageReport, usage_report
from kquota.usage.rows import Sample


class SampleStream(Protocol):
    """SampleStream is samples read once, and where the last one came from (for errors)."""

    def __iter__(self) -> Iterator[Sample]: ...

    def where(self) -> str: ...


@dataclass(frozen=True)
class UsageSource:
    """UsageSource is where ``kquota usage`` and ``kquota recommend`` read samples from:
    exactly one source (``--samples PATH``, repeatable)."""

    samples: tuple[Path, ...] = ()
    prometheus: str | None = None
    """A Prometheus server's URL (:mod:`kquota.usage.prometheus`)."""
    prometheus_token_env: str | None = None
    prometheus_basic_auth_env: str | None = None

    def check(self) -> None:
        """check: exactly one source is named (before any file or cluster is read)."""
        if self.samples and self.prometheus is not None:
            raise UsageError("name one sample source: --samples or --prometheus, not both")
        if not self.samples and self.prometheus is None:
            raise UsageError("no samples: name them with --samples PATH (files or folders)")
        if self.prometheus is None and (
            self.prometheus_token_env or self.prometheus_basic_auth_env
        ):
            raise UsageError(
                "--prometheus-token-env and --prometheus-basic-auth-env need --prometheus"
            )

    def describe(self) -> str:
        """describe names the source for a report's reader (a URL without its credentials)."""
        if self.prometheus is not None:
            from kquota.usage.prometheus import PrometheusServer

            return PrometheusServer.parse(self.prometheus, env={}).shown
        return ", ".join(str(p) for p in self.samples)

    def open(self, cluster: str | None, *, since_ms: int) -> SampleStream:
        """open is the samples of ``cluster`` (None: the first sample's cluster) covering at
        least the last ``since_ms`` (a file source reads all it holds, the window is cut by
        :func:`kquota.usage.profile.profile`)."""
        if self.prometheus is not None:
            from kquota.usage.prometheus import PrometheusSamples

            return PrometheusSamples(
                self.prometheus,
                cluster,
                since_ms=since_ms,
                token_env=self.prometheus_token_env,
                basic_auth_env=self.prometheus_basic_auth_env,
            )
        from kquota.usage.samples import SampleFiles

        return SampleFiles(self.samples, cluster)


def target_cluster(target: Target) -> tuple[QuotaState, str | None]:
    """target_cluster is the target's quotas and the cluster name samples must carry:
    kquota.yaml's name, else the name a snapshot file records, else None (the samples'
    own, one cluster)."""
    state, origin = target.load_state_and_origin()
    if target.cluster_name is not None:
        return state, target.cluster_name
    return state, origin.cluster if target.offline else None


def read_usage(
    target: Target,
    source: UsageSource,
    *,
    since_ms: int,
    extra: Sequence[Decimal] = (),
) -> tuple[UsageReport, QuotaState]:
    """read_usage profiles the source's samples over the window and joins them with the
    target's effective quotas; returns the report and the state it was resolved against."""
    source.check()
    state, cluster = target_cluster(target)
    stream = source.open(cluster, since_ms=since_ms)
    profiles = profile(stream, since_ms=since_ms, where=stream.where, extra=extra)
    return usage_report(profiles, state, source.describe()), state
