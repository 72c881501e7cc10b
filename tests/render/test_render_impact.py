"""The impact section of text and markdown plans: long lists fold (the JSON keeps them all)
and a custom quota callback is called out."""

from __future__ import annotations

import dataclasses

import pytest

from kquota.engines.local import LocalEngine
from kquota.model import Entity, QuotaState
from kquota.plan.impact import plan_impact
from kquota.plan.policy import Policy
from kquota.plan.resolver import Principal
from kquota.plan.types import Plan
from kquota.render import markdown, text
from kquota.render.markdown import FOLD_THRESHOLD
from kquota.render.text import IMPACT_LINES

P = "producer_byte_rate"
DEFAULT_USER = Entity.of({"user": None})


def _plan_moving_the_default(users: int, callback: str | None = None) -> Plan:
    state: QuotaState = {DEFAULT_USER: {P: 100.0}}
    desired: QuotaState = {DEFAULT_USER: {P: 200.0}}
    plan = LocalEngine().plan(desired, state, Policy(), "c")
    who = [Principal(f"u{i:03}") for i in range(users)]
    impact = plan_impact(state, plan, who, Policy(), quota_callback=callback)
    assert len(impact.changes) == users  # every user falls back to the default
    return dataclasses.replace(plan, impact=impact)


def test_text_shows_the_first_changes_and_counts_the_rest() -> None:
    out = text.render_plan(_plan_moving_the_default(IMPACT_LINES + 7))
    assert f"Impact: {IMPACT_LINES + 7} effective quotas of {IMPACT_LINES + 7} principals" in out
    assert "u000" in out and f"u{IMPACT_LINES - 1:03}" in out
    assert f"u{IMPACT_LINES:03}" not in out
    assert "  … and 7 more, see --format json" in out


def test_text_within_the_limit_shows_everything() -> None:
    out = text.render_plan(_plan_moving_the_default(IMPACT_LINES))
    assert f"u{IMPACT_LINES - 1:03}" in out and "more, see --format json" not in out


@pytest.mark.parametrize(("users", "folded"), [(FOLD_THRESHOLD, False), (FOLD_THRESHOLD + 1, True)])
def test_markdown_folds_a_long_table(users: int, folded: bool) -> None:
    out = markdown.render_plan(_plan_moving_the_default(users))
    assert (f"<details><summary>{users} effective quotas of {users} principals" in out) is folded
    assert out.count("| <code>{user=u0") == users  # folded, never cut: every row is there


def test_a_custom_quota_callback_is_called_out_in_both_formats() -> None:
    plan = _plan_moving_the_default(2, callback="com.example.TenantQuotas")
    assert (
        "Warning: the broker runs a custom quota callback (com.example.TenantQuotas): it may "
        "compute quotas differently from what is shown here."
    ) in text.render_plan(plan)
    md = markdown.render_plan(plan)
    assert "> [!WARNING]" in md and "<code>com.example.TenantQuotas</code>" in md
    assert "custom quota callback" not in text.render_plan(_plan_moving_the_default(2))
