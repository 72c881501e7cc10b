"""Grouping identical per-entity failures for the terminal."""

from __future__ import annotations

from kquota.apply.applier import EntityFailure
from kquota.model import Entity
from kquota.render.failures import failure_lines


def _user(i: int) -> Entity:
    return Entity.of({"user": f"u{i}"})


def test_distinct_failures_print_one_line_each_in_order() -> None:
    failures = [
        EntityFailure(_user(1), "INVALID_REQUEST", "Empty user not supported"),
        EntityFailure(_user(2), "POLICY_VIOLATION", None),
    ]
    assert failure_lines(failures) == [
        "  {user=u1}: INVALID_REQUEST: Empty user not supported",
        "  {user=u2}: POLICY_VIOLATION",
    ]


def test_identical_failures_are_one_group_with_a_count_and_examples() -> None:
    same = [
        EntityFailure(_user(i), "CLUSTER_AUTHORIZATION_FAILED", "denied") for i in range(19_950)
    ]
    other = EntityFailure(_user(99_999), "INVALID_REQUEST", "bad")
    lines = failure_lines([other, *same])
    assert lines == [
        "  19950 entities: CLUSTER_AUTHORIZATION_FAILED: denied",
        "      e.g. {user=u0}, {user=u1}, {user=u2} and 19947 more",
        "  {user=u99999}: INVALID_REQUEST: bad",
    ]


def test_same_code_different_message_are_different_groups() -> None:
    failures = [
        EntityFailure(_user(1), "INVALID_REQUEST", "a"),
        EntityFailure(_user(2), "INVALID_REQUEST", "b"),
        EntityFailure(_user(3), "INVALID_REQUEST", "a"),
    ]
    assert failure_lines(failures, prefix="failed ") == [
        "  failed 2 entities: INVALID_REQUEST: a",
        "      e.g. {user=u1}, {user=u3}",
        "  failed {user=u2}: INVALID_REQUEST: b",
    ]


def test_messages_and_names_are_made_safe_to_print() -> None:
    forged = Entity.of({"user": "x\x1b[2J"})
    lines = failure_lines([EntityFailure(forged, "INVALID_REQUEST", "name x\x1b[2J\nfake line")])
    assert lines == ["  {user=x\\x1b[2J}: INVALID_REQUEST: name x\\x1b[2J\\x0afake line"]
