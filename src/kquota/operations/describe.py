"""The describe operation: a live cluster's quotas, filtered as KIP-546 describes."""

from __future__ import annotations

from collections.abc import Mapping

from kquota.model import QuotaState
from kquota.target import Target


def describe(target: Target, parts: Mapping[str, str | None], *, strict: bool) -> QuotaState:
    """describe returns the entities matching ``parts`` (type -> name, None = default):
    every entity for no parts; with ``strict`` only entities of exactly those types."""
    from kquota.api.entities import filter_components

    with target.admin() as admin:
        return admin.describe(filter_components(parts), strict=strict and bool(parts))
