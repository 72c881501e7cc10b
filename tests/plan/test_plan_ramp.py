"""Ramped tightening: the steps a sharp lowering is cut into. Pure."""

from __future__ import annotations

import pytest

from kquota.model import Entity
from kquota.plan.ramp import chain, ramped_keys, step_count, step_plan
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
