"""The trail read back (parse, group by apply) and the inverse plan: pure, no broker."""

from __future__ import annotations

import json

from kquota.audit import AuditOp
from kquota.history.applies import applies, combined, entity_history, find_apply
from kquota.history.inverse import inverse_plan
from kquota.history.trail import RecordedChange, parse_change
from kquota.model import Entity
from kquota.plan.types import ChangeKind
from kquota.target import Origin

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
        "timestamp": "2026-01-01T00:00:00Z",
    }
    data.update(over)
    return json.dumps(data).encode()


def test_parse_change_reads_an_altered_event() -> None:
    change = parse_change(_value(), 3, 7)
    assert change is not None
    assert (change.entity, change.plan_id, change.partition, change.offset) == (ALICE, "p1", 3, 7)
    assert change.ops == (AuditOp("producer_byte_rate", 1.0, 2.0, False),)


def test_parse_change_skips_what_is_not_a_well_formed_altered_event() -> None:
    bad_op = {"key": "k", "before": None, "after": None, "remove": False}
    for value in (
        b"",
        b"not json",
        _value(event_type="quota.drift"),
        _value(entity="alice"),
        _value(ops=[]),
        _value(ops=[bad_op]),  # a set without a value
        _value(ops=[{"key": "k", "before": None, "after": "1", "remove": False}]),
        # A key a user entity cannot hold (connection_creation_rate is an ip's).
        _value(
            ops=[{"key": "connection_creation_rate", "before": None, "after": 1.0, "remove": False}]
        ),
    ):
        assert parse_change(value, 0, 0) is None, value


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
