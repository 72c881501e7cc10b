"""The engine seam: anything that turns (desired, snapshot, policy) into a Plan.

Engines must agree exactly: the same inputs give Plans with equal ``to_data()``. They share
the classify rules of :mod:`kquota.plan.rules`; an engine is a translation of those rules to
its runtime, not a second design.
"""

from __future__ import annotations

from typing import Protocol

from kquota.model import QuotaState
from kquota.plan.policy import Policy
from kquota.plan.types import Plan


class Engine(Protocol):
    """Engine plans one cluster; ``name`` identifies it in output and ``--engine``."""

    name: str

    def plan(
        self, desired: QuotaState, snapshot: QuotaState, policy: Policy, cluster: str | None
    ) -> Plan: ...
