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

from kquota.lazy_exports import lazy_getattr
from kquota.version import __version__

if TYPE_CHECKING:
    from kquota.api.admin import AsyncQuotaAdmin, QuotaAdmin
    from kquota.api.alterations import AlterResult
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
    from kquota.operations.apply import ApplyResult, execute_plan
    from kquota.operations.desired import (
        DesiredValidation,
        LoadedDesired,
        load_desired_state,
        validate_desired,
    )
    from kquota.operations.drift import DriftResult, check_drift
    from kquota.operations.plan import PlanResult, make_plan
    from kquota.operations.resolve import resolve_quotas
    from kquota.plan.policy import Policy
    from kquota.plan.resolver import Principal, Resolution, ResolvedQuota
    from kquota.target import Target

_EXPORTS: dict[str, str] = {
    "AlterResult": "kquota.api.alterations",
    "AlterationFailed": "kquota.errors",
    "ApplyResult": "kquota.operations.apply",
    "AsyncQuotaAdmin": "kquota.api.admin",
    "AuthenticationError": "kquota.kafka.errors",
    "BrokerConnectionError": "kquota.kafka.errors",
    "ClusterAuthorizationError": "kquota.kafka.errors",
    "DesiredValidation": "kquota.operations.desired",
    "DriftResult": "kquota.operations.drift",
    "Entity": "kquota.model",
    "InvalidRequestError": "kquota.kafka.errors",
    "KafkaApiError": "kquota.kafka.errors",
    "KafkaError": "kquota.kafka.errors",
    "KafkaTimeoutError": "kquota.kafka.errors",
    "KquotaError": "kquota.errors",
    "LoadedDesired": "kquota.operations.desired",
    "PlanResult": "kquota.operations.plan",
    "Policy": "kquota.plan.policy",
    "Principal": "kquota.plan.resolver",
    "QuotaAdmin": "kquota.api.admin",
    "QuotaAlteration": "kquota.kafka.admin",
    "QuotaOp": "kquota.kafka.admin",
    "QuotaState": "kquota.model",
    "Resolution": "kquota.plan.resolver",
    "ResolvedQuota": "kquota.plan.resolver",
    "Target": "kquota.target",
    "UnsupportedVersionError": "kquota.kafka.errors",
    "UsageError": "kquota.errors",
    "check_drift": "kquota.operations.drift",
    "execute_plan": "kquota.operations.apply",
    "load_desired_state": "kquota.operations.desired",
    "make_plan": "kquota.operations.plan",
    "resolve_quotas": "kquota.operations.resolve",
    "validate_desired": "kquota.operations.desired",
}

__all__ = [
    "AlterResult",
    "AlterationFailed",
    "ApplyResult",
    "AsyncQuotaAdmin",
    "AuthenticationError",
    "BrokerConnectionError",
    "ClusterAuthorizationError",
    "DesiredValidation",
    "DriftResult",
    "Entity",
    "InvalidRequestError",
    "KafkaApiError",
    "KafkaError",
    "KafkaTimeoutError",
    "KquotaError",
    "LoadedDesired",
    "PlanResult",
    "Policy",
    "Principal",
    "QuotaAdmin",
    "QuotaAlteration",
    "QuotaOp",
    "QuotaState",
    "Resolution",
    "ResolvedQuota",
    "Target",
    "UnsupportedVersionError",
    "UsageError",
    "__version__",
    "check_drift",
    "execute_plan",
    "load_desired_state",
    "make_plan",
    "resolve_quotas",
    "validate_desired",
]


__getattr__ = lazy_getattr("kquota", _EXPORTS, globals())


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
