"""Verification tells a broker that trails the controller from another writer."""

from __future__ import annotations

from kquota.apply.verify import overwritten, unconverged
from kquota.model import Entity
from kquota.plan.planner import plan as make_plan
from kquota.plan.types import Alteration
from kquota.policy import Policy

ALICE = Entity.of({"user": "alice"})
BOB = Entity.of({"user": "bob"})


def _alterations() -> dict[Entity, Alteration]:
    snapshot = {ALICE: {"producer_byte_rate": 1024.0}, BOB: {"consumer_byte_rate": 10.0}}
    desired = {ALICE: {"producer_byte_rate": 2048.0}, BOB: {}}
    p = make_plan(desired, snapshot, Policy())
    return {a.entity: a for a in p.alterations}


def test_the_value_this_run_wrote_is_not_overwritten() -> None:
    alt = _alterations()
    assert overwritten(alt[ALICE], {"producer_byte_rate": 2048.0}) is None
    assert overwritten(alt[BOB], {}) is None


def test_the_planned_against_value_is_lag_not_another_writer() -> None:
    alt = _alterations()
    # A broker that has not caught up still shows the before value: keep waiting for it.
    assert overwritten(alt[ALICE], {"producer_byte_rate": 1024.0}) is None
    assert overwritten(alt[BOB], {"consumer_byte_rate": 10.0}) is None
    assert unconverged([alt[ALICE]], {ALICE: {"producer_byte_rate": 1024.0}}) == [ALICE]


def test_a_third_value_is_another_writer_and_says_what_it_is() -> None:
    alt = _alterations()
    how = overwritten(alt[ALICE], {"producer_byte_rate": 5.0})
    assert how == "producer_byte_rate is 5, this run set 2048"
    # This run removed the key; someone set it to a value it never had.
    how = overwritten(alt[BOB], {"consumer_byte_rate": 99.0})
    assert how == "consumer_byte_rate is 99, this run set unset"
    # This run set the key; someone removed it (it existed before, so not lag either).
    assert overwritten(alt[ALICE], {}) == "producer_byte_rate is unset, this run set 2048"
