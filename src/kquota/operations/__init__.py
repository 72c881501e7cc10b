"""Operations: what kquota's commands do, as plain typed functions for commands and programs.

Each takes a :class:`~kquota.target.Target` (or loaded desired state) and options, and returns
a result; none imports click or prints. A command parses its flags, calls one operation,
renders the result and chooses its exit code.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kquota.runtime.lazy_exports import lazy_getattr

if TYPE_CHECKING:
    from kquota.operations.apply import ApplyResult, AuditOutcome, execute_plan
    from kquota.operations.desired import (
        DesiredValidation,
        LoadedDesired,
        load_desired_state,
        validate_desired,
    )
    from kquota.operations.drift import DriftResult, check_drift
    from kquota.operations.plan import PlanResult, make_plan, plan_against
    from kquota.operations.resolve import resolve_quotas

# Imported on first use, as in kquota/__init__.py: a command imports only its own operation
# (``describe`` never loads the apply, desired-state and drift modules).
_EXPORTS: dict[str, str] = {
    "ApplyResult": "kquota.operations.apply",
    "AuditOutcome": "kquota.operations.apply",
    "execute_plan": "kquota.operations.apply",
    "DesiredValidation": "kquota.operations.desired",
    "LoadedDesired": "kquota.operations.desired",
    "validate_desired": "kquota.operations.desired",
    "load_desired_state": "kquota.operations.desired",
    "DriftResult": "kquota.operations.drift",
    "check_drift": "kquota.operations.drift",
    "PlanResult": "kquota.operations.plan",
    "make_plan": "kquota.operations.plan",
    "plan_against": "kquota.operations.plan",
    "resolve_quotas": "kquota.operations.resolve",
}

__all__ = [
    "ApplyResult",
    "AuditOutcome",
    "DesiredValidation",
    "DriftResult",
    "LoadedDesired",
    "PlanResult",
    "check_drift",
    "execute_plan",
    "load_desired_state",
    "make_plan",
    "plan_against",
    "resolve_quotas",
    "validate_desired",
]


__getattr__ = lazy_getattr("kquota.operations", _EXPORTS, globals())
