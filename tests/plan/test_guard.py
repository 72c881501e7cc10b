"""The guards' verdict and refusals (kquota.plan.guard): judged under the policy in force, live
or from the plan alone, and each caller's wording, all raised at one site."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from kquota.model import Entity
from kquota.plan.guard import (
    FLAGS,
    LIBRARY,
    GuardRefused,
    judge,
    refuse,
    refuse_shown,
    refuse_unapplied,
)
from kquota.plan.planner import plan as make_plan
from kquota.plan.types import Plan
from kquota.policy import Policy, ScopeMatch

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


TEAM = Policy(prune=True, scope=(ScopeMatch.of({"user": "team-*"}),))


def _removing(n: int, of: int) -> Plan:
    """A plan under TEAM that removes ``n`` of ``of`` in-scope entities' one value each."""
    current = {Entity.of({"user": f"team-{i}"}): {P: 1.0} for i in range(of)}
    desired = {e: v for i, (e, v) in enumerate(current.items()) if i >= n}
    return make_plan(desired, current, TEAM)


def test_judged_live_the_guard_counts_the_clusters_in_scope_entities() -> None:
    # Planned against 100 managed values, 5 removals are 5%; the live cluster holds 12 in
    # scope (and 200 out of it, which the share never counts): 5 of 12 stops the plan.
    plan = _removing(5, of=100)
    assert plan.guard_violation is None
    live = {Entity.of({"user": f"team-{i}"}): {P: 1.0} for i in range(12)}
    live |= {Entity.of({"user": f"other-{i}"}): {P: 1.0} for i in range(200)}
    again = judge(plan, TEAM, live)
    assert (again.removals.managed_quotas, again.removals.managed_entities) == (12, 12)
    assert again.guard_violation == (
        "the plan removes 5 of 12 managed quota values (42%), more than max_removal_fraction=0.3"
    )
    assert not again.applyable


def test_judged_offline_the_plan_keeps_its_own_counts() -> None:
    plan = _removing(5, of=100)
    assert judge(plan, TEAM).removals == plan.removals


def test_only_the_policy_in_force_overrides_the_guard() -> None:
    stopped = _removing(11, of=100)
    assert stopped.guard_violation == "the plan removes 11 quota values, more than max_removals=10"
    allowed = judge(stopped, Policy(prune=True, allow_mass_removal=True, scope=TEAM.scope))
    # The verdict is kept for the reviewer; the override is recorded beside it.
    assert allowed.guard_violation == stopped.guard_violation
    assert allowed.mass_removal_allowed and allowed.applyable
    # A plan that claims the override is judged again without it: the claim does not count.
    assert not judge(allowed, TEAM).applyable
