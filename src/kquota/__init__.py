"""kquota: GitOps for Apache Kafka client quotas, and a Python client for them.

Declare quotas in YAML, review a plan, apply it safely (validate-only first), detect drift.
From Python::

    import kquota

    with kquota.QuotaAdmin({"bootstrap.servers": "localhost:9092"}) as admin:
        admin.alter([({"user": "alice"}, {"producer_byte_rate": 1048576})])
        print(admin.resolve({"user": "alice", "client-id": "app"}))

The names below are the public API (see docs/python-api.md); everything else may change.
They are imported on first use, so ``import kquota`` (and the CLI) stays fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kquota.runtime.lazy_exports import lazy_getattr
from kquota.version import __version__

if TYPE_CHECKING:
    from kquota.api.admin import AsyncQuotaAdmin, QuotaAdmin
    from kquota.api.alterations import AlterResult
    from kquota.apply.applier import ApplyReport
    from kquota.apply.lease_log import LeaseError
    from kquota.apply.staleness import StalePlanError
    from kquota.audit import AuditError
    from kquota.config.project import ConfigError
    from kquota.desired.problems import DesiredStateError
    from kquota.errors import AlterationFailed, KquotaError, UsageError
    from kquota.kafka.admin import QuotaAlteration, QuotaOp
    from kquota.kafka.errors import (
        AuthenticationError,
        BrokerConnectionError,
        ClusterAuthorizationError,
        InvalidRequestError,
        KafkaApiError,
        KafkaError,
        KafkaTimeoutError,
        UnsupportedVersionError,
    )
    from kquota.model import Entity, QuotaState
    from kquota.operations.apply import ApplyResult, AuditOutcome, execute_plan
    from kquota.operations.desired import (
        DesiredValidation,
        LoadedDesired,
        load_desired_state,
        validate_desired,
    )
    from kquota.operations.drift import DriftResult, check_drift
    from kquota.operations.plan import PlanResult, make_plan
    from kquota.operations.resolve import resolve_quotas
    from kquota.plan.guard import GuardRefused
    from kquota.plan.resolver import Resolution, ResolvedQuota
    from kquota.plan.types import Plan
    from kquota.planfile.reader import PlanFileError, read_plan
    from kquota.planfile.writer import write_plan
    from kquota.policy import Policy
    from kquota.principal import Principal
    from kquota.runtime.deadline import DeadlineExceeded
    from kquota.target import Target

_EXPORTS: dict[str, str] = {
    "AlterResult": "kquota.api.alterations",
    "AlterationFailed": "kquota.errors",
    "ApplyReport": "kquota.apply.applier",
    "ApplyResult": "kquota.operations.apply",
    "AsyncQuotaAdmin": "kquota.api.admin",
    "AuditError": "kquota.audit",
    "AuditOutcome": "kquota.operations.apply",
    "AuthenticationError": "kquota.kafka.errors",
    "BrokerConnectionError": "kquota.kafka.errors",
    "ClusterAuthorizationError": "kquota.kafka.errors",
    "ConfigError": "kquota.config.project",
    "DeadlineExceeded": "kquota.runtime.deadline",
    "DesiredStateError": "kquota.desired.problems",
    "DesiredValidation": "kquota.operations.desired",
    "DriftResult": "kquota.operations.drift",
    "Entity": "kquota.model",
    "GuardRefused": "kquota.plan.guard",
    "InvalidRequestError": "kquota.kafka.errors",
    "KafkaApiError": "kquota.kafka.errors",
    "KafkaError": "kquota.kafka.errors",
    "KafkaTimeoutError": "kquota.kafka.errors",
    "KquotaError": "kquota.errors",
    "LeaseError": "kquota.apply.lease_log",
    "LoadedDesired": "kquota.operations.desired",
    "Plan": "kquota.plan.types",
    "PlanFileError": "kquota.planfile.reader",
    "PlanResult": "kquota.operations.plan",
    "Policy": "kquota.policy",
    "Principal": "kquota.principal",
    "QuotaAdmin": "kquota.api.admin",
    "QuotaAlteration": "kquota.kafka.admin",
    "QuotaOp": "kquota.kafka.admin",
    "QuotaState": "kquota.model",
    "Resolution": "kquota.plan.resolver",
    "ResolvedQuota": "kquota.plan.resolver",
    "StalePlanError": "kquota.apply.staleness",
    "Target": "kquota.target",
    "UnsupportedVersionError": "kquota.kafka.errors",
    "UsageError": "kquota.errors",
    "check_drift": "kquota.operations.drift",
    "execute_plan": "kquota.operations.apply",
    "load_desired_state": "kquota.operations.desired",
    "make_plan": "kquota.operations.plan",
    "read_plan": "kquota.planfile.reader",
    "resolve_quotas": "kquota.operations.resolve",
    "validate_desired": "kquota.operations.desired",
    "write_plan": "kquota.planfile.writer",
}

__all__ = [
    "AlterResult",
    "AlterationFailed",
    "ApplyReport",
    "ApplyResult",
    "AsyncQuotaAdmin",
    "AuditError",
    "AuditOutcome",
    "AuthenticationError",
    "BrokerConnectionError",
    "ClusterAuthorizationError",
    "ConfigError",
    "DeadlineExceeded",
    "DesiredStateError",
    "DesiredValidation",
    "DriftResult",
    "Entity",
    "GuardRefused",
    "InvalidRequestError",
    "KafkaApiError",
    "KafkaError",
    "KafkaTimeoutError",
    "KquotaError",
    "LeaseError",
    "LoadedDesired",
    "Plan",
    "PlanFileError",
    "PlanResult",
    "Policy",
    "Principal",
    "QuotaAdmin",
    "QuotaAlteration",
    "QuotaOp",
    "QuotaState",
    "Resolution",
    "ResolvedQuota",
    "StalePlanError",
    "Target",
    "UnsupportedVersionError",
    "UsageError",
    "__version__",
    "check_drift",
    "execute_plan",
    "load_desired_state",
    "make_plan",
    "read_plan",
    "resolve_quotas",
    "validate_desired",
    "write_plan",
]


__getattr__ = lazy_getattr("kquota", _EXPORTS, globals())


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
