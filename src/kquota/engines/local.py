"""LocalEngine: the in-process planner, the embedded default."""

from __future__ import annotations

from kquota.model import QuotaState
from kquota.plan.planner import plan
from kquota.plan.policy import Policy
from kquota.plan.types import Plan


class LocalEngine:
    """LocalEngine plans with :func:`kquota.plan.planner.plan` in this process."""

    name = "local"

    def plan(
        self, desired: QuotaState, snapshot: QuotaState, policy: Policy, cluster: str | None
    ) -> Plan:
        return plan(desired, snapshot, policy, cluster=cluster)
