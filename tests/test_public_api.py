"""The public Python API: ``kquota.__all__`` is sorted, complete, pinned, and documented."""

from __future__ import annotations

import inspect
import subprocess
import sys

import kquota

PUBLIC = [
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


def test_all_is_pinned_and_sorted() -> None:
    # Changing the public API is a decision: this list changes with it, in review.
    assert kquota.__all__ == PUBLIC
    assert sorted(kquota.__all__) == kquota.__all__


def test_every_public_name_resolves_and_is_documented() -> None:
    for name in kquota.__all__:
        value = getattr(kquota, name)
        if name == "__version__" or name == "QuotaState":
            continue  # a string, and a type alias (documented in docs/python-api.md)
        assert inspect.getdoc(value), f"kquota.{name} has no docstring"
        if inspect.isclass(value):
            for attr, member in vars(value).items():
                if isinstance(member, property):
                    member = member.fget
                elif isinstance(member, classmethod | staticmethod):
                    member = member.__func__
                if not attr.startswith("_") and callable(member):
                    assert inspect.getdoc(member), f"kquota.{name}.{attr} has no docstring"


def test_star_import_gives_exactly_all() -> None:
    namespace: dict[str, object] = {}
    exec("from kquota import *", namespace)
    assert sorted(k for k in namespace if k != "__builtins__") == sorted(kquota.__all__)


def test_unknown_name_is_an_attribute_error() -> None:
    try:
        kquota.NoSuchThing  # type: ignore[attr-defined]  # noqa: B018
    except AttributeError as e:
        assert "NoSuchThing" in str(e)
    else:
        raise AssertionError("kquota.NoSuchThing resolved")


def test_errors_share_one_root() -> None:
    errors = [n for n in kquota.__all__ if n.endswith(("Error", "Failed"))]
    assert errors and all(issubclass(getattr(kquota, n), kquota.KquotaError) for n in errors)


def test_import_kquota_loads_no_kafka_layer() -> None:
    # The CLI imports the package for its version: the client must load only when used.
    code = "import sys, kquota; print(any(m.startswith('kquota.kafka') for m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
