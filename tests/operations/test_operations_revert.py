"""What revert trusts from the trail: signatures, agreement, the cluster id. Pure, no broker
(the same refusals on a real topic: tests/integration/test_integration_revert.py)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from kquota.audit import AuditOp
from kquota.audit_keys import Verdict
from kquota.errors import KquotaError
from kquota.history.applies import applies
from kquota.history.trail import RecordedChange
from kquota.model import Entity
from kquota.operations.revert import check_cluster_id, check_trusted

OP = AuditOp("producer_byte_rate", None, 5.0, False)


def _event(user: str, offset: int, verdict: Verdict, **over: object) -> RecordedChange:
    event = RecordedChange(
        "p1", Entity.of({"user": user}), (OP,), "2026-01-01T00:00:00Z", "ci", None, "prod",
        0, offset, cluster_id="id-1", verdict=verdict, key_id="k1",
    )  # fmt: skip
    return replace(event, **over)  # type: ignore[arg-type]


def _refusal(*events: RecordedChange, signed: bool = True, allow: bool = False) -> str:
    (apply,) = applies(events)
    with pytest.raises(KquotaError) as err:
        check_trusted(apply, signed=signed, allow_unsigned=allow)
    return str(err.value)


def test_verified_events_pass_and_unsigned_ones_need_the_flag() -> None:
    (ok,) = applies([_event("a", 0, Verdict.VERIFIED)])
    check_trusted(ok, signed=True, allow_unsigned=False)
    unsigned = _event("b", 1, Verdict.UNSIGNED)
    message = _refusal(_event("a", 0, Verdict.VERIFIED), unsigned)
    assert "not reverting apply p1: 1 of its events are not signed" in message
    assert "partition 0 offset 1: {user=b}: not signed" in message
    (mixed,) = applies([_event("a", 0, Verdict.VERIFIED), unsigned])
    check_trusted(mixed, signed=True, allow_unsigned=True)
    assert "no audit signing key is configured" in _refusal(unsigned, signed=False)


def test_a_signature_that_does_not_verify_is_refused_even_with_the_flag() -> None:
    message = _refusal(
        _event("a", 0, Verdict.BAD_SIGNATURE),
        _event("b", 1, Verdict.UNKNOWN_KEY, key_id="k9"),
        allow=True,
    )
    assert "2 of its events do not verify" in message
    assert "partition 0 offset 0: {user=a}: its signature does not verify" in message
    assert (
        "offset 1: {user=b}: signed with key id 'k9', which audit_signing does not hold" in message
    )


def test_disagreeing_events_are_refused_first() -> None:
    message = _refusal(
        _event("a", 0, Verdict.VERIFIED), _event("b", 1, Verdict.VERIFIED, actor="mallory")
    )
    assert "its events cannot all be one apply's" in message
    assert "2 different actors" in message


def test_the_cluster_id_must_be_the_live_one() -> None:
    (apply,) = applies([_event("a", 0, Verdict.VERIFIED)])
    check_cluster_id(apply, "id-1", allow_unsigned=False)
    with pytest.raises(KquotaError) as err:
        check_cluster_id(apply, "id-2", allow_unsigned=True)
    assert "was made to the cluster with id 'id-1', but the target's cluster id is 'id-2'" in str(
        err.value
    )
    (old,) = applies([_event("a", 0, Verdict.UNSIGNED, cluster_id=None)])
    with pytest.raises(KquotaError) as err:
        check_cluster_id(old, "id-1", allow_unsigned=False)
    assert "its events record no cluster id" in str(err.value)
    check_cluster_id(old, "id-1", allow_unsigned=True)
