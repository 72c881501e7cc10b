"""The trail read back (parse, group by apply) and the inverse plan: pure, no broker."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from kquota.audit import AuditOp
from kquota.history.applies import applies, combined, entity_history, find_apply
from kquota.history.inverse import inverse_plan
from kquota.history.trail import BadRecord, RecordedChange, parse_change
from kquota.model import Entity, Origin
from kquota.plan.types import ChangeKind

ALICE = Entity.of({"user": "alice"})
BOB = Entity.of({"user": "bob", "client-id": None})


def _change(
    pid: str, entity: Entity, *ops: AuditOp, ts: str = "2026-01-01T00:00:00Z"
) -> RecordedChange:
    return RecordedChange(pid, entity, ops, ts, "ci", "abc", "local", 0, 0)


def _value(**over: object) -> bytes:
    data: dict[str, object] = {
        "event_type": "quota.altered",
        "entity": {"user": "alice"},
        "ops": [{"key": "producer_byte_rate", "before": 1.0, "after": 2.0, "remove": False}],
        "plan_id": "p1",
        "cluster": "local",
        "timestamp": "2026-01-01T00:00:00Z",
    }
    data.update(over)
    return json.dumps(data).encode()


def test_parse_change_reads_an_altered_event() -> None:
    change = parse_change(_value(), 3, 7)
    assert isinstance(change, RecordedChange)
    assert (change.entity, change.plan_id, change.partition, change.offset) == (ALICE, "p1", 3, 7)
    assert change.ops == (AuditOp("producer_byte_rate", 1.0, 2.0, False),)


def test_parse_change_skips_what_is_not_an_altered_event() -> None:
    for value in (b"", b"not json", b"[1]", _value(event_type="quota.drift")):
        assert parse_change(value, 0, 0) is None, value


def _op(**over: object) -> dict[str, object]:
    return {"key": "producer_byte_rate", "before": 1.0, "after": 2.0, "remove": False, **over}


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        (_value(entity="alice"), "entity: an object of entity type to name is required"),
        (_value(entity={"group": "x"}), "entity: types are user, client-id, ip"),
        (_value(entity={"user": "a", "ip": "1.2.3.4"}), "cannot be combined"),
        (_value(ops=[]), "ops: a non-empty list is required"),
        (_value(ops=[_op(after=None)]), "a removal has no after value; a set has one"),
        (_value(ops=[_op(after="1")]), "producer_byte_rate: after is not a number"),
        (_value(ops=[_op(after=0.5)]), "after 0.5: must be a whole number"),
        (_value(ops=[_op(before=-1)]), "before -1: must be greater than 0"),
        (_value(ops=[_op(), _op()]), "ops: a key is given twice"),
        # A key a user entity cannot hold (connection_creation_rate is an ip's).
        (_value(ops=[_op(key="connection_creation_rate")]), "is not a quota key of this entity"),
        (_value(cluster=None), "cluster: required"),
        (_value(cluster="x" * 300), "cluster: 300 characters (at most 256)"),
        (_value(plan_id=None), "plan_id: required"),
        (_value(plan_id=7), "plan_id: a string is required"),
        (_value(timestamp="yesterday"), "timestamp 'yesterday': not an ISO 8601 time"),
        (_value(timestamp="2026-01-01T00:00:00"), "not an ISO 8601 time with a zone"),
        (_value(cluster_id="a/b"), "cluster_id: not a Kafka cluster id"),
        (_value(ops=[_op(after=10**40)]), "a number with 41 digits (at most 32)"),
        (_value(ops=[_op(after=12345.0)]).replace(b"12345.0", b"1e400"), "not finite"),
        (
            b'{"event_type":"quota.altered","x":' + b"[" * 100_000 + b"]" * 100_000 + b"}",
            "bytes; an audit event is at most 65536",
        ),
        (
            b'{"event_type":"quota.altered","x":' + b"[" * 30_000 + b"]" * 30_000 + b"}",
            "nested too deeply",
        ),
        (b'{"event_type":"quota.altered","x":NaN}', "NaN is not a number JSON allows"),
    ],
)
def test_parse_change_names_what_is_wrong_with_a_bad_event(value: bytes, reason: str) -> None:
    bad = parse_change(value, 2, 9)
    assert isinstance(bad, BadRecord), bad
    assert reason in bad.reason
    assert str(bad).startswith("partition 2 offset 9: ")


def test_parse_change_checks_the_record_key_and_headers_against_the_value() -> None:
    good = parse_change(_value(), 0, 0, key=b'{"user":"alice"}', headers=[("plan-id", b"p1")])
    assert isinstance(good, RecordedChange)
    relabelled = parse_change(_value(), 0, 0, headers=[("plan-id", b"p2")])
    assert isinstance(relabelled, BadRecord)
    assert relabelled.reason == "its plan-id header is not the plan_id of its value"
    bad = parse_change(_value(), 0, 0, key=b'{"user":"bob"}')
    assert isinstance(bad, BadRecord) and "record key is not its entity's" in bad.reason


def test_applies_group_by_plan_id_and_see_an_exact_undo() -> None:
    trail = [
        _change("p1", ALICE, AuditOp("producer_byte_rate", 1.0, 2.0, False)),
        _change("p1", BOB, AuditOp("request_percentage", None, 5.0, False)),
        _change("p2", ALICE, AuditOp("producer_byte_rate", 2.0, 1.0, False), ts="2026-01-02"),
        _change("p2", BOB, AuditOp("request_percentage", 5.0, None, True), ts="2026-01-02"),
        _change("p3", ALICE, AuditOp("producer_byte_rate", 1.0, 9.0, False), ts="2026-01-03"),
    ]
    found = applies(trail)
    assert [a.plan_id for a in found] == ["p1", "p2", "p3"]
    assert (found[0].count("create"), found[0].count("update"), found[0].count("remove")) == (
        1,
        1,
        0,
    )
    assert [a.reverts for a in found] == [None, "p1", None]
    assert find_apply(found, None) is found[-1]
    assert find_apply(found, "p2") is found[1] and find_apply(found, "nope") is None
    assert [e.plan_id for e in entity_history(trail, ALICE)] == ["p1", "p2", "p3"]


def test_inverse_sets_back_and_removes_what_was_created() -> None:
    (apply,) = applies(
        [
            _change("p1", ALICE, AuditOp("producer_byte_rate", 1.0, 2.0, False)),
            _change("p1", BOB, AuditOp("request_percentage", None, 5.0, False)),
        ]
    )
    current = {
        ALICE: {"producer_byte_rate": 2.0, "consumer_byte_rate": 3.0},
        BOB: {"request_percentage": 5.0},
    }
    inverse = inverse_plan(apply.changes, current, Origin("local", "id-1"))
    assert inverse.conflicts == ()
    plan = inverse.plan
    assert (plan.cluster, plan.cluster_id) == ("local", "id-1")
    assert plan.snapshot_fingerprint is not None
    by_entity = {a.entity: a for a in plan.alterations}
    assert by_entity[ALICE].kind is ChangeKind.UPDATE
    assert [(o.key, o.value, o.remove, o.before) for o in by_entity[ALICE].ops] == [
        ("producer_byte_rate", 1.0, False, 2.0)
    ]
    assert by_entity[BOB].kind is ChangeKind.DELETE
    assert [(o.key, o.remove, o.before) for o in by_entity[BOB].ops] == [
        ("request_percentage", True, 5.0)
    ]
    assert plan.removals.quotas == 1 and plan.removals.entities == 1


def test_inverse_of_a_removal_recreates_the_entity_and_conflicts_are_named() -> None:
    (apply,) = applies(
        [
            _change("p1", ALICE, AuditOp("producer_byte_rate", 4.0, None, True)),
            _change("p1", BOB, AuditOp("request_percentage", 1.0, 2.0, False)),
        ]
    )
    current = {BOB: {"request_percentage": 3.0}}  # someone changed bob since
    inverse = inverse_plan(apply.changes, current, Origin("local", "id-1"))
    alice = next(a for a in inverse.plan.alterations if a.entity == ALICE)
    assert alice.kind is ChangeKind.CREATE
    assert [(o.key, o.value, o.before) for o in alice.ops] == [("producer_byte_rate", 4.0, None)]
    (conflict,) = inverse.conflicts
    assert (conflict.entity, conflict.wrote, conflict.now) == (BOB, 2.0, 3.0)
    assert "was set to 2 by the apply, now 3" in str(conflict)


def test_inverse_skips_keys_already_back() -> None:
    (apply,) = applies([_change("p1", ALICE, AuditOp("producer_byte_rate", 1.0, 2.0, False))])
    inverse = inverse_plan(apply.changes, {ALICE: {"producer_byte_rate": 1.0}}, Origin("x", "i"))
    assert inverse.plan.empty and len(inverse.conflicts) == 1


def test_combined_applies_go_from_the_first_before_to_the_last_after() -> None:
    steps = applies(
        [
            _change("s1", ALICE, AuditOp("producer_byte_rate", 8.0, 4.0, False)),
            _change("s1", BOB, AuditOp("request_percentage", None, 5.0, False)),
            _change("s2", ALICE, AuditOp("producer_byte_rate", 4.0, 2.0, False), ts="2026-01-02"),
        ]
    )
    both = combined(steps)
    assert both.plan_id == "s1+s2"
    ops = {c.entity: c.ops for c in both.changes}
    assert ops == {
        ALICE: (AuditOp("producer_byte_rate", 8.0, 2.0, False),),
        BOB: (AuditOp("request_percentage", None, 5.0, False),),
    }


def test_events_of_one_plan_id_must_agree_to_be_one_apply() -> None:
    real = _change("p1", ALICE, AuditOp("producer_byte_rate", 1.0, 2.0, False))
    echo = _change("p1", ALICE, AuditOp("producer_byte_rate", 1.0, 2.0, False))
    (ok,) = applies([real, echo])  # a duplicate delivery repeats the event exactly
    assert ok.problems == ()
    # A forged record reusing the plan id to claim another before value for the same key.
    forged = replace(
        real, ops=(AuditOp("producer_byte_rate", 9.0, 2.0, False),), partition=1, offset=4
    )
    (bad,) = applies([real, forged])
    assert bad.problems == (
        "{user=alice} producer_byte_rate is recorded twice with different values "
        "(partition 0 offset 0 and partition 1 offset 4)",
    )
    other = replace(real, entity=BOB, cluster="staging", actor="mallory", offset=5)
    (mixed,) = applies([real, other])
    assert mixed.problems == (
        "its events name 2 different clusters: 'local' (partition 0 offset 0), "
        "'staging' (partition 0 offset 5)",
        "its events name 2 different actors: 'ci' (partition 0 offset 0), "
        "'mallory' (partition 0 offset 5)",
    )
