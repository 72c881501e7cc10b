"""What principal discovery found, and what each source reported."""

from __future__ import annotations

from dataclasses import dataclass

from kquota.plan.resolver import Principal, unique_principals


@dataclass(frozen=True)
class SourceReport:
    """SourceReport is one discovery source's outcome: how many it found, or why it could
    not look (not authorised, not supported by the broker). Never silent: ``found`` is None
    exactly when ``reason`` says why."""

    source: str
    """e.g. ``scram-users``, ``acl-principals``, ``group-members``, ``file:PATH``"""
    found: int | None
    reason: str | None = None
    note: str | None = None
    """what else a source that could look has to say, e.g. that ACLs grant ``User:*``
    (every user, not a principal to resolve) or that some groups could not be read"""


@dataclass(frozen=True)
class Discovery:
    """Discovery is the principals to resolve for ``--impact``, de-duplicated and sorted,
    with every source's report, and the broker's custom quota callback class if it runs one
    (``client.quota.callback.class``: then the broker may compute quotas differently)."""

    principals: tuple[Principal, ...]
    reports: tuple[SourceReport, ...]
    quota_callback: str | None = None

    def merged(self, other: Discovery) -> Discovery:
        """merged is both discoveries' principals (each once) and both sets of reports."""
        return Discovery(
            unique_principals(self.principals + other.principals),
            self.reports + other.reports,
            self.quota_callback or other.quota_callback,
        )
