"""Reading a live cluster's quota snapshot through a :class:`~kquota.target.Target`."""

from __future__ import annotations

from kquota.model import QuotaState
from kquota.target import Target


def fetch_snapshot(target: Target) -> QuotaState:
    """fetch_snapshot describes every quota of the cluster (describe-all, ip entities too)."""
    return fetch_snapshot_and_id(target)[0]


def fetch_snapshot_and_id(target: Target) -> tuple[QuotaState, str | None]:
    """fetch_snapshot_and_id also returns the cluster id, over the same connection."""
    state, origin = target.load_state_and_origin()
    return state, origin.cluster_id


__all__ = ["Target", "fetch_snapshot", "fetch_snapshot_and_id"]
