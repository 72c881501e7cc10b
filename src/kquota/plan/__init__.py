"""Planning: pure functions from (desired, snapshot, policy) to a Plan, and resolution.

Nothing in this package does I/O; the CLI and engines feed it states and render its output.
"""

from kquota.plan.planner import plan
from kquota.plan.resolver import Principal, Resolution, resolution_changes, resolve
from kquota.plan.simulate import simulate_plan
from kquota.plan.types import Alteration, ChangeKind, IgnoredGroup, IgnoreReason, Op, Plan
from kquota.policy import Policy, ScopeMatch

__all__ = [
    "Alteration",
    "ChangeKind",
    "IgnoreReason",
    "IgnoredGroup",
    "Op",
    "Plan",
    "Policy",
    "Principal",
    "Resolution",
    "ScopeMatch",
    "simulate_plan",
    "plan",
    "resolution_changes",
    "resolve",
]
