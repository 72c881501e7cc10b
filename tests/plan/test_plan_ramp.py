"""Ramped tightening: the steps a sharp lowering is cut into. Pure."""

from __future__ import annotations

import pytest

from kquota.apply.staleness import check_not_stale
from kquota.model import Entity
from kquota.plan.fingerprint import snapshot_fingerprint
from kquota.plan.ramp import (
    chain,
    ramped_keys,
    resume_step,
    resumed_step,
    step_count,
    step_plan,
    values_after,
)
from kquota.plan.types import Alteration, ChangeKind, Op, Plan

A = Entity.of({"user": "a"})
B = Entity.of({"user": "b"})


def test_chain_halves_rounding_up_and_lands_on_the_target() -> None:
    assert chain(8000, 1000, 0.5) == (4000, 2000, 1000)
    assert chain(1000, 100, 0.5) == (500, 250, 125, 100)
    assert chain(1000, 600, 0.5) == (600,)  # within one step: no ramp
    assert chain(100, 1000, 0.5) == (1000,)  # raising: no ramp
    # Every step lowers by at most the factor.
    values = (1000.0, *chain(1000, 7, 0.3))
    assert all(b >= a * 0.3 for a, b in zip(values, values[1:], strict=False))
    assert values[-1] == 7


def test_chain_of_a_value_too_small_to_round_down_goes_to_the_target() -> None:
    assert chain(2, 1, 0.9) == (1,)  # ceil(1.8) is 2: no smaller whole step exists
    assert chain(50, 0.5, 0.5)[-1] == 0.5


@pytest.mark.parametrize("bad", [0.0, 1.0, 1.5, -0.1])
def test_chain_refuses_a_factor_outside_zero_to_one(bad: float) -> None:
    with pytest.raises(ValueError, match="between 0 and 1"):
        chain(10, 1, bad)


def _plan() -> Plan:
    return Plan(
        alterations=(
            Alteration(
                A,
                (
                    Op("consumer_byte_rate", 4000.0, False, 1000.0),  # raise
                    Op("producer_byte_rate", 1000.0, False, 8000.0),  # ramp: 3 steps
                ),
                ChangeKind.UPDATE,
            ),
            Alteration(B, (Op("request_percentage", 10.0, False, None),), ChangeKind.CREATE),
        ),
        cluster="c",
        cluster_id="id",
        snapshot_fingerprint="sha256:" + "0" * 64,
    )


def test_steps_put_every_unramped_op_in_the_first_and_ramp_the_rest() -> None:
    plan = _plan()
    assert step_count(plan, 0.5) == 3
    (key,) = ramped_keys(plan, 0.5)
    assert (key.entity, key.key, key.before, key.steps) == (
        A,
        "producer_byte_rate",
        8000.0,
        (4000.0, 2000.0, 1000.0),
    )
    first = step_plan(plan, 0.5, 1)
    assert first.snapshot_fingerprint == plan.snapshot_fingerprint
    assert [(a.entity, [(o.key, o.value, o.before) for o in a.ops]) for a in first.alterations] == [
        (A, [("consumer_byte_rate", 4000.0, 1000.0), ("producer_byte_rate", 4000.0, 8000.0)]),
        (B, [("request_percentage", 10.0, None)]),
    ]
    third = step_plan(plan, 0.5, 3)
    assert third.snapshot_fingerprint is None  # planned against a fresh read by the caller
    assert [
        (a.entity, a.kind, [(o.value, o.before) for o in a.ops]) for a in third.alterations
    ] == [(A, ChangeKind.UPDATE, [(1000.0, 2000.0)])]


def test_a_plan_without_a_sharp_lowering_is_one_step() -> None:
    plan = Plan(alterations=(Alteration(A, (Op("k", 900.0, False, 1000.0),), ChangeKind.UPDATE),))
    assert step_count(plan, 0.5) == 1 and ramped_keys(plan, 0.5) == []
    assert step_plan(plan, 0.5, 1).alterations == plan.alterations


C = Entity.of({"user": "c"})
BEFORE = {A: {"consumer_byte_rate": 1000.0, "producer_byte_rate": 8000.0, "other": 7.0}}
"""The cluster the plan was made against: ``other`` is a key of A the plan leaves alone."""


def _fingerprinted() -> Plan:
    import dataclasses

    plan = _plan()
    return dataclasses.replace(plan, snapshot_fingerprint=snapshot_fingerprint(BEFORE, (A, B)))


def test_values_after_each_step_walk_the_ramp() -> None:
    plan = _fingerprinted()
    assert values_after(plan, 0.5, BEFORE, 0) == BEFORE
    assert values_after(plan, 0.5, BEFORE, 1) == {
        A: {"consumer_byte_rate": 4000.0, "producer_byte_rate": 4000.0, "other": 7.0},
        B: {"request_percentage": 10.0},
    }
    after = values_after(plan, 0.5, BEFORE, 3)
    assert after[A]["producer_byte_rate"] == 1000.0 and after == values_after(plan, 0.5, after, 9)


def test_resume_step_is_the_step_after_the_one_the_cluster_holds() -> None:
    plan = _fingerprinted()
    for held in range(4):
        state = values_after(plan, 0.5, BEFORE, held)
        assert resume_step(plan, 0.5, state) == held + 1
    # Unrelated entities do not matter; the plan's own fingerprint covers its entities.
    assert resume_step(plan, 0.5, {**values_after(plan, 0.5, BEFORE, 2), C: {"k": 1.0}}) == 3


def test_a_step_cut_short_mid_commit_is_run_again() -> None:
    plan = _fingerprinted()
    # Step 1 wrote B but not A (each entity whole, not every entity).
    state = {**BEFORE, B: {"request_percentage": 10.0}}
    assert resume_step(plan, 0.5, state) == 1
    # Step 3's only entity is A: two keys of one entity are never split, so a cut step 2
    # of a plan with two ramped entities is the case: one at step 2, one still at step 1.
    two = Plan(
        alterations=(
            Alteration(A, (Op("producer_byte_rate", 1000.0, False, 8000.0),), ChangeKind.UPDATE),
            Alteration(C, (Op("producer_byte_rate", 1000.0, False, 8000.0),), ChangeKind.UPDATE),
        ),
        cluster_id="id",
        snapshot_fingerprint=snapshot_fingerprint(
            {A: {"producer_byte_rate": 8000.0}, C: {"producer_byte_rate": 8000.0}}, (A, C)
        ),
    )
    cut = {A: {"producer_byte_rate": 2000.0}, C: {"producer_byte_rate": 4000.0}}
    assert resume_step(two, 0.5, cut) == 2
    step = resumed_step(two, 0.5, cut, 2)
    # Its own staleness check passes and skips A, which step 2 already wrote.
    assert check_not_stale(step, cut, "id") == frozenset({A})


def test_a_cluster_at_no_step_of_the_ramp_is_left_to_the_staleness_check() -> None:
    plan = _fingerprinted()
    at_two = values_after(plan, 0.5, BEFORE, 2)
    moved = {**at_two, A: {**at_two[A], "producer_byte_rate": 3000.0}}  # someone else
    assert resume_step(plan, 0.5, moved) is None
    other = {**at_two, A: {**at_two[A], "other": 8.0}}  # a key the plan leaves alone moved
    assert resume_step(plan, 0.5, other) is None
    skewed = {**at_two, B: {}}  # B, made in step 1, is gone while A went on
    assert resume_step(plan, 0.5, skewed) is None


def test_a_resumed_step_is_planned_against_the_step_before_it() -> None:
    plan = _fingerprinted()
    state = values_after(plan, 0.5, BEFORE, 1)
    step = resumed_step(plan, 0.5, state, 2)
    assert [(o.value, o.before) for a in step.alterations for o in a.ops] == [(2000.0, 4000.0)]
    assert check_not_stale(step, state, "id") == frozenset()
    assert step.snapshot_fingerprint == snapshot_fingerprint(state, (A,))
    assert resumed_step(plan, 0.5, BEFORE, 1) == step_plan(plan, 0.5, 1)
