"""The resolve operation (KIP-546's resolve, which Kafka never shipped): a principal's
effective quotas and the match each comes from.

Against a live cluster it also reads the brokers' ``client.quota.callback.class``: with a
custom callback the broker computes quotas its own way, and the resolution says so rather
than claim to be the broker's answer.
"""

from __future__ import annotations

import dataclasses
import logging
from typing import TYPE_CHECKING

from kquota.model import QuotaState
from kquota.operations.desired import LoadedDesired
from kquota.plan.resolver import Principal, Resolution, resolve
from kquota.target import Target

if TYPE_CHECKING:
    from kquota.plan.explain import Explanation

log = logging.getLogger(__name__)


def resolve_quotas(source: Target | LoadedDesired, principal: Principal) -> Resolution:
    """resolve_quotas resolves ``principal`` against a target's current state (snapshot or
    live) or against loaded desired state (what the YAML will give once applied)."""
    from kquota import argcheck as check

    allowed = "a kquota.Target or kquota.LoadedDesired"
    check.instance(source, (Target, LoadedDesired), "resolve_quotas: source", allowed)
    check.instance(principal, Principal, "resolve_quotas: principal", "a kquota.Principal")
    state, callback = _state(source)
    return dataclasses.replace(_resolve(state, principal), quota_callback=callback)


def explain_quotas(source: Target | LoadedDesired, principal: Principal) -> Explanation:
    """explain_quotas is :func:`resolve_quotas` with its ladder: every precedence level for
    ``principal``, what each sets, and which wins per key and why (docs/precedence.md)."""
    from kquota import argcheck as check
    from kquota.plan.explain import explain

    allowed = "a kquota.Target or kquota.LoadedDesired"
    check.instance(source, (Target, LoadedDesired), "explain_quotas: source", allowed)
    check.instance(principal, Principal, "explain_quotas: principal", "a kquota.Principal")
    state, callback = _state(source)
    found = explain(state, principal.user, principal.client_id, principal.ip)
    resolution = dataclasses.replace(found.resolution, quota_callback=callback)
    return dataclasses.replace(found, resolution=resolution)


def _state(source: Target | LoadedDesired) -> tuple[QuotaState, str | None]:
    """_state is the state to resolve against and, live, the brokers' custom callback."""
    if isinstance(source, LoadedDesired):
        return source.quotas, None
    if source.offline:
        return source.load_state(), None
    from kquota.principals.live import quota_callback
    from kquota.runtime import progress

    with source.admin() as admin:
        with progress.phase("describe") as step:
            state = admin.describe_all()
            step.count = len(state)
        callback, reason = quota_callback(admin)
    if reason is not None:
        log.warning("cannot tell whether the brokers run a custom quota callback: %s", reason)
    return state, callback


def _resolve(state: QuotaState, principal: Principal) -> Resolution:
    return resolve(state, principal.user, principal.client_id, principal.ip)
