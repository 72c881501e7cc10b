"""Saved plans refuse to apply once the cluster moved under them."""

from __future__ import annotations

from dataclasses import replace

import pytest

from kquota.apply.staleness import StalePlanError, changed_entities, check_not_stale
from kquota.apply.verify import unconverged
from kquota.model import Entity
from kquota.plan.planner import plan as make_plan
from kquota.plan.types import Plan
from kquota.policy import Policy

ALICE = Entity.of({"user": "alice"})
BOB = Entity.of({"user": "bob", "client-id": None})
IP = Entity.of({"ip": "10.0.0.1"})


def _plan(snapshot: dict[Entity, dict[str, float]]) -> Plan:
    desired = {ALICE: {"producer_byte_rate": 2048.0}, BOB: {"request_percentage": 50.0}}
    return replace(make_plan(desired, snapshot, Policy()), cluster_id="c-1")


def test_unchanged_cluster_is_not_stale() -> None:
    snapshot = {ALICE: {"producer_byte_rate": 1024.0}, IP: {"connection_creation_rate": 5.0}}
    p = _plan(snapshot)
    check_not_stale(p, dict(snapshot), "c-1")
    # An entity the plan does not touch may change freely.
    check_not_stale(p, {**snapshot, IP: {"connection_creation_rate": 9.0}}, "c-1")


def test_changed_value_of_a_planned_entity_is_stale_and_named() -> None:
    snapshot = {ALICE: {"producer_byte_rate": 1024.0}}
    p = _plan(snapshot)
    with pytest.raises(StalePlanError) as e:
        check_not_stale(p, {ALICE: {"producer_byte_rate": 4096.0}}, "c-1")
    assert "saved plan is stale" in str(e.value)
    assert "{user=alice}: producer_byte_rate was 1024, now 4096" in str(e.value)
    assert "nothing was applied" in str(e.value)


def test_an_entity_that_appeared_since_makes_it_stale() -> None:
    p = _plan({})
    with pytest.raises(StalePlanError) as e:
        check_not_stale(p, {BOB: {"request_percentage": 10.0}}, "c-1")
    assert "request_percentage was unset, now 10" in str(e.value)


def test_another_key_of_a_planned_entity_changing_is_stale() -> None:
    snapshot = {ALICE: {"producer_byte_rate": 1024.0}}
    p = _plan(snapshot)
    current = {ALICE: {"producer_byte_rate": 1024.0, "consumer_byte_rate": 7.0}}
    # No op's `before` moved, but the entity's fingerprint did: still stale.
    assert changed_entities(p, current) == []
    with pytest.raises(StalePlanError) as e:
        check_not_stale(p, current, "c-1")
    assert "other keys of its entities changed" in str(e.value)


def test_plan_for_another_cluster_is_refused() -> None:
    p = _plan({})
    with pytest.raises(StalePlanError) as e:
        check_not_stale(p, {}, "c-2")
    assert "made for cluster id c-1" in str(e.value) and "c-2" in str(e.value)


def test_unconverged_lists_entities_not_yet_reflected() -> None:
    p = _plan({ALICE: {"producer_byte_rate": 1024.0, "consumer_byte_rate": 1.0}})
    assert set(unconverged(p.alterations, {})) == {ALICE, BOB}
    done = {ALICE: {"producer_byte_rate": 2048.0}, BOB: {"request_percentage": 50.0}}
    assert unconverged(p.alterations, done) == []
    half = {ALICE: {"producer_byte_rate": 2048.0, "consumer_byte_rate": 1.0}, BOB: done[BOB]}
    assert unconverged(p.alterations, half) == [ALICE]


def test_a_partly_applied_plan_is_not_stale_and_says_what_is_done() -> None:
    snapshot = {ALICE: {"producer_byte_rate": 1024.0, "consumer_byte_rate": 3.0}}
    p = _plan(snapshot)
    # ALICE was committed before a connection cut (its consumer_byte_rate removed, as the
    # plan owns the entity whole); BOB was not.
    current = {ALICE: {"producer_byte_rate": 2048.0}}
    assert check_not_stale(p, current, "c-1") == {ALICE}
    fully = {ALICE: {"producer_byte_rate": 2048.0}, BOB: {"request_percentage": 50.0}}
    assert check_not_stale(p, fully, "c-1") == {ALICE, BOB}


def test_an_applied_entity_whose_other_keys_moved_is_still_stale() -> None:
    snapshot = {ALICE: {"producer_byte_rate": 1024.0}, IP: {"connection_creation_rate": 1.0}}
    desired = {ALICE: {"producer_byte_rate": 2048.0, "request_percentage": 5.0}}
    p = replace(make_plan(desired, snapshot, Policy()), cluster_id="c-1")
    check_not_stale(p, {ALICE: {"producer_byte_rate": 2048.0, "request_percentage": 5.0}}, "c-1")
    with pytest.raises(StalePlanError) as e:
        # The plan's ops show, but a key the plan does not touch appeared since.
        moved = {"producer_byte_rate": 2048.0, "request_percentage": 5.0, "consumer_byte_rate": 7.0}
        check_not_stale(p, {ALICE: moved}, "c-1")
    assert "other keys of its entities changed" in str(e.value)
