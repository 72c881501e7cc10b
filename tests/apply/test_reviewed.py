"""The live plan held against the reviewed one: pure, planned from states in memory."""

from __future__ import annotations

from dataclasses import replace

import pytest

from kquota.apply.reviewed import PlanDiffers, check_reviewed, differences
from kquota.model import Entity, QuotaState
from kquota.plan.planner import plan as make_plan
from kquota.plan.types import Plan
from kquota.policy import Policy

ALICE = Entity.of({"user": "alice"})
BOB = Entity.of({"user": "bob"})
DESIRED: QuotaState = {ALICE: {"producer_byte_rate": 2048.0}, BOB: {"request_percentage": 50.0}}


def _plan(current: QuotaState, desired: QuotaState = DESIRED) -> Plan:
    return make_plan(desired, current, Policy())


def test_the_same_plan_made_again_is_the_reviewed_one() -> None:
    reviewed = _plan({ALICE: {"producer_byte_rate": 1024.0}})
    assert differences(reviewed, _plan({ALICE: {"producer_byte_rate": 1024.0}})) == []
    check_reviewed(reviewed, _plan({ALICE: {"producer_byte_rate": 1024.0}}), "eu-1")


def test_an_empty_live_plan_is_not_a_reviewed_plan_with_changes() -> None:
    reviewed = _plan({})
    with pytest.raises(PlanDiffers) as e:
        check_reviewed(reviewed, _plan(DESIRED), "eu-1")
    assert str(e.value) == (
        "eu-1: the live plan is not the reviewed plan (the cluster or the desired state changed "
        "since fleet plan); nothing was written:\n"
        "  {user=alice}: in the reviewed plan, not in the live one\n"
        "  {user=bob}: in the reviewed plan, not in the live one\n"
        "plan the fleet again and review the new plans"
    )


def test_other_changes_and_other_entities_are_named() -> None:
    reviewed = _plan({})
    carol = Entity.of({"user": "carol"})
    live = _plan({ALICE: {"producer_byte_rate": 1.0}}, {**DESIRED, carol: {"quota_x": 1.0}})
    found = differences(reviewed, _plan({ALICE: {"producer_byte_rate": 1.0}}))
    assert found == ["{user=alice}: its changes differ"]
    assert "{user=carol}: not in the reviewed plan" in differences(reviewed, live)


def test_the_same_changes_from_another_snapshot_differ() -> None:
    reviewed = _plan({ALICE: {"producer_byte_rate": 1024.0}})
    live = replace(reviewed, snapshot_fingerprint="not the reviewed snapshot's")
    assert differences(reviewed, live) == [
        "other keys of the altered entities changed since the snapshot"
    ]


def test_past_ten_differences_the_rest_are_counted() -> None:
    many: QuotaState = {
        Entity.of({"user": f"u{i:02}"}): {"request_percentage": 5.0} for i in range(13)
    }
    with pytest.raises(PlanDiffers) as e:
        check_reviewed(_plan({}, many), _plan(many, many), None)
    text = str(e.value)
    assert text.startswith("this cluster: the live plan is not the reviewed plan")
    assert "{user=u09}" in text and "{user=u10}" not in text
    assert "  … and 3 more\n" in text


# A resumed rollout: alice committed by its earlier attempt (its record says so), bob not.
ALICE_DONE: QuotaState = {ALICE: {"producer_byte_rate": 2048.0}}


def test_a_resumed_plan_is_the_reviewed_one_without_what_this_rollout_committed() -> None:
    reviewed = _plan({})
    live = _plan(ALICE_DONE)
    assert [a.entity for a in live.alterations] == [BOB]
    assert differences(reviewed, live, frozenset({ALICE}), ALICE_DONE) == []
    check_reviewed(reviewed, live, "eu-1", frozenset({ALICE}), ALICE_DONE)
    everything: QuotaState = {**ALICE_DONE, BOB: {"request_percentage": 50.0}}
    assert differences(reviewed, _plan(everything), frozenset({ALICE, BOB}), everything) == []


def test_what_the_record_does_not_vouch_for_still_differs() -> None:
    """bob holds his reviewed value, but the record names alice only: someone else set it."""
    everything: QuotaState = {**ALICE_DONE, BOB: {"request_percentage": 50.0}}
    found = differences(_plan({}), _plan(everything), frozenset({ALICE}), everything)
    assert found == ["{user=bob}: in the reviewed plan, not in the live one"]


def test_a_committed_entity_changed_since_is_named() -> None:
    current: QuotaState = {ALICE: {"producer_byte_rate": 999.0}}
    with pytest.raises(PlanDiffers) as e:
        check_reviewed(_plan({}), _plan(current), "eu-1", frozenset({ALICE}), current)
    assert str(e.value) == (
        "eu-1: the live plan is not the reviewed plan (the cluster or the desired state changed "
        "since fleet plan); nothing was written:\n"
        "  {user=alice}: committed by this rollout, but the cluster no longer shows its "
        "reviewed values\n"
        "plan the fleet again and review the new plans"
    )


def test_a_committed_entity_with_another_key_set_since_differs() -> None:
    """The live plan leaves alice alone (a key desired state does not name, say, kept by the
    policy), yet she is not as the snapshot said: the fingerprint sees it."""
    current: QuotaState = {ALICE: {"producer_byte_rate": 2048.0, "consumer_byte_rate": 1.0}}
    found = differences(_plan({}), _plan(ALICE_DONE), frozenset({ALICE}), current)
    assert found == ["other keys of the altered entities changed since the snapshot"]


def test_a_committed_entity_the_desired_state_changes_again_differs() -> None:
    desired: QuotaState = {**DESIRED, ALICE: {"producer_byte_rate": 4096.0}}
    live = _plan(ALICE_DONE, desired)
    found = differences(_plan({}), live, frozenset({ALICE}), ALICE_DONE)
    assert found == ["{user=alice}: not in the reviewed plan"]
