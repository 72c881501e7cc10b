"""Signed audit events: the MAC over the canonical form, verified as read. Pure, no broker."""

from __future__ import annotations

import json

import pytest

from kquota.audit import AuditEvent, AuditOp
from kquota.audit_keys import (
    KEY_ID_HEADER,
    SIGNATURE_HEADER,
    AuditKeys,
    Verdict,
    key_problem,
)
from kquota.model import Entity

KEY = b"k" * 32
KEYS = AuditKeys("k1", {"k1": KEY})


def _event(**over: object) -> AuditEvent:
    fields: dict[str, object] = {
        "entity": Entity.of({"user": "alice"}),
        "ops": (AuditOp("producer_byte_rate", 1024.0, 2048.0, False),),
        "plan_id": "p1",
        "cluster": "prod",
        "cluster_id": "abcDEF123_-xyz",
        "actor": "ci",
        "timestamp": "2026-01-02T03:04:05.678Z",
    }
    fields.update(over)
    return AuditEvent(**fields)  # type: ignore[arg-type]


def _read_back(event: AuditEvent) -> dict[str, object]:
    data = json.loads(event.record().value)
    assert isinstance(data, dict)
    return data


def test_a_signed_event_verifies_as_read_back_whatever_its_spacing() -> None:
    event = _event()
    headers = KEYS.headers(event.payload())
    assert [name for name, _ in headers] == [KEY_ID_HEADER, SIGNATURE_HEADER]
    assert KEYS.verify(_read_back(event), headers) is Verdict.VERIFIED
    # Another producer re-encoding the same JSON (spaces, key order) does not break it.
    respaced = json.loads(json.dumps(_read_back(event), indent=3))
    assert KEYS.verify(respaced, headers) is Verdict.VERIFIED


@pytest.mark.parametrize(
    "field", ["cluster", "cluster_id", "plan_id", "entity", "ops", "actor", "timestamp"]
)
def test_every_field_that_matters_is_covered(field: str) -> None:
    event = _event()
    headers = KEYS.headers(event.payload())
    changed = _read_back(event)
    changed[field] = {"entity": {"user": "bob"}, "ops": []}.get(field, "other")
    assert KEYS.verify(changed, headers) is Verdict.BAD_SIGNATURE


def test_unsigned_unknown_key_and_garbled_headers_are_told_apart() -> None:
    payload = _read_back(_event())
    assert KEYS.verify(payload, []) is Verdict.UNSIGNED
    other = AuditKeys("k9", {"k9": b"z" * 32})
    assert KEYS.verify(payload, other.headers(payload)) is Verdict.UNKNOWN_KEY
    signed = KEYS.headers(payload)
    assert KEYS.verify(payload, signed[:1]) is Verdict.BAD_SIGNATURE  # a key id, no MAC
    twice = [*signed, (SIGNATURE_HEADER, b"00")]
    assert KEYS.verify(payload, twice) is Verdict.BAD_SIGNATURE
    # A forger's MAC made with a key of their own under the real key id.
    forged = AuditKeys("k1", {"k1": b"f" * 32}).headers(payload)
    assert KEYS.verify(payload, forged) is Verdict.BAD_SIGNATURE


def test_a_rotated_key_still_verifies_the_events_it_signed() -> None:
    payload = _read_back(_event())
    old = AuditKeys("k1", {"k1": KEY}).headers(payload)
    rotated = AuditKeys("k2", {"k1": KEY, "k2": b"n" * 32})
    assert rotated.verify(payload, old) is Verdict.VERIFIED
    assert rotated.headers(payload)[0] == (KEY_ID_HEADER, b"k2")


def test_short_keys_are_refused_by_id_never_by_value() -> None:
    problem = key_problem("k1", "hunter2")
    assert problem is not None and "'k1' is 7 bytes long; at least 32" in problem
    assert "hunter2" not in problem
    assert key_problem("k1", "x" * 32) is None


def test_keys_never_show_in_repr() -> None:
    assert "kkkk" not in repr(KEYS) and "k1" in repr(KEYS)
