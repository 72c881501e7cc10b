"""The guards' refusals: each caller's wording, all raised by kquota.plan.guard."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from kquota.model import Entity
from kquota.plan.guard import FLAGS, LIBRARY, GuardRefused, refuse, refuse_shown, refuse_unapplied
from kquota.plan.planner import plan as make_plan
from kquota.plan.types import Plan
from kquota.policy import Policy

P = "producer_byte_rate"
EMPTIED = (
    "mass-removal guard: the desired state is empty (nothing declared in scope) but the plan "
    "would remove 1 quota value(s) of 1 entities; check the desired-state paths"
)


def _stopped() -> Plan:
    """A plan the mass-removal guard holds back: an empty desired state that would prune."""
    plan = make_plan({}, {Entity.of({"user": "a"}): {P: 1.0}}, Policy(prune=True))
    assert plan.refusal == EMPTIED
    return plan


def _refusal(call: Callable[..., None], *args: object) -> str:
    with pytest.raises(GuardRefused) as info:
        call(*args)
    return str(info.value)


def test_apply_names_the_override_as_its_caller_spells_it() -> None:
    plan = _stopped()
    assert _refusal(refuse, plan, FLAGS) == (
        f"{EMPTIED}; nothing was applied (pass --allow-mass-removal if this is intended)"
    )
    assert _refusal(refuse, plan, LIBRARY) == (
        f"{EMPTIED}; nothing was applied (pass allow_mass_removal=True if this is intended)"
    )


def test_the_plan_command_says_where_the_stopped_plan_went() -> None:
    plan = _stopped()
    assert _refusal(refuse_shown, plan, Path("p.json")) == (
        f"{EMPTIED}; saved in p.json for review only"
    )
    assert _refusal(refuse_shown, plan, None) == f"{EMPTIED}; nothing saved"


def test_the_applier_last_line_sends_nothing_and_says_re_plan() -> None:
    assert _refusal(refuse_unapplied, _stopped()) == (
        f"{EMPTIED}; nothing was applied (re-plan with --allow-mass-removal or "
        "--allow-protected-change if this is intended)"
    )


def test_a_plan_no_guard_holds_back_is_refused_by_none() -> None:
    plan = make_plan({Entity.of({"user": "a"}): {P: 1.0}}, {}, Policy())
    assert plan.refusal is None
    refuse(plan, FLAGS)
    refuse_shown(plan, Path("p.json"))
    refuse_unapplied(plan)
