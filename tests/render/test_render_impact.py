"""The impact section of text and markdown plans: long lists fold (the JSON keeps them all)
and a custom quota callback is called out."""

from __future__ import annotations

import dataclasses

import pytest

import gfm
from kquota.model import Entity, QuotaState
from kquota.plan.impact import plan_impact
from kquota.plan.planner import plan as make
from kquota.plan.resolver import Principal
from kquota.plan.types import Plan
from kquota.policy import Policy
from kquota.render import markdown, text
from kquota.render.markdown import FOLD_THRESHOLD
from kquota.render.text import IMPACT_LINES

P = "producer_byte_rate"
DEFAULT_USER = Entity.of({"user": None})


def _plan_moving_the_default(users: int, callback: str | None = None) -> Plan:
    state: QuotaState = {DEFAULT_USER: {P: 100.0}}
    desired: QuotaState = {DEFAULT_USER: {P: 200.0}}
    plan = make(desired, state, Policy(), cluster="c")
    who = [Principal(f"u{i:03}") for i in range(users)]
    impact = plan_impact(state, plan, who, Policy(), quota_callback=callback)
    assert len(impact.changes) == users  # every user falls back to the default
    return dataclasses.replace(plan, impact=impact)


def test_text_groups_principals_by_change() -> None:
    out = text.render_plan(_plan_moving_the_default(IMPACT_LINES + 7))
    assert f"Impact: {IMPACT_LINES + 7} effective quotas of {IMPACT_LINES + 7} principals" in out
    assert (
        "  looser producer_byte_rate: 100 (100 B/s) from {user=<default>} -> "
        "200 (200 B/s) from {user=<default>} (+100%)\n"
        "    █████░░░░░ -> ██████████\n"
        f"    {IMPACT_LINES + 7} principals: {{user=u000}}, {{user=u001}}, {{user=u002}} and "
        f"{IMPACT_LINES + 4} more\n"
    ) in out


def test_text_counts_the_groups_past_the_limit() -> None:
    state: QuotaState = {Entity.of({"user": f"u{i:03}"}): {P: 100.0} for i in range(60)}
    desired: QuotaState = {Entity.of({"user": f"u{i:03}"}): {P: 100.0 - i} for i in range(60)}
    plan = make(desired, state, Policy(), cluster="c")
    who = [Principal(f"u{i:03}") for i in range(60)]
    plan = dataclasses.replace(plan, impact=plan_impact(state, plan, who, Policy()))
    out = text.render_plan(plan)
    assert out.count("  harder producer_byte_rate") == IMPACT_LINES
    assert "  same   producer_byte_rate" not in out  # u000 keeps 100: no change at all
    assert f"  … and {59 - IMPACT_LINES} more changes, see --format json" in out


@pytest.mark.parametrize("users", [1, FOLD_THRESHOLD + 1, 5000])
def test_markdown_groups_principals_by_change(users: int) -> None:
    doc = gfm.assert_aligned(markdown.render_plan(_plan_moving_the_default(users)))
    impact = doc.tables()[-1]
    assert impact.header == ["", "key", "before", "after", "change", "principals"]
    assert len(impact.rows) == 1  # one change, however many principals it hits
    (row,) = impact.rows
    assert row[0] == "▲ loosened" and row[1] == P and row[4] == "+100% █████░░░░░→██████████"
    assert row[2] == "100 (100 B/s) from {user=<default>}"
    assert row[5].startswith(f"{users}: {{user=u000}}")
    if users > 3:
        assert row[5].endswith(f"and {users - 3} more")


def test_markdown_lists_throttled_harder_first() -> None:
    state: QuotaState = {DEFAULT_USER: {P: 100.0}, Entity.of({"user": "big"}): {P: 1000.0}}
    desired: QuotaState = {DEFAULT_USER: {P: 200.0}, Entity.of({"user": "big"}): {P: 250.0}}
    plan = make(desired, state, Policy(), cluster="c")
    who = [Principal("big"), Principal("u1"), Principal("u2")]
    plan = dataclasses.replace(plan, impact=plan_impact(state, plan, who, Policy()))
    impact = gfm.assert_aligned(markdown.render_plan(plan)).tables()[-1]
    assert [r[0] for r in impact.rows] == ["▼ throttled harder", "▲ loosened"]
    assert (
        impact.rows[0][4] == "-75% ██████████→██▌░░░░░░░" and impact.rows[0][5] == "1: {user=big}"
    )
    assert impact.rows[1][5] == "2: {user=u1}, {user=u2}"


def test_a_custom_quota_callback_is_called_out_in_both_formats() -> None:
    plan = _plan_moving_the_default(2, callback="com.example.TenantQuotas")
    assert (
        "Warning: the broker runs a custom quota callback (com.example.TenantQuotas): it may "
        "compute quotas differently from what is shown here."
    ) in text.render_plan(plan)
    md = markdown.render_plan(plan)
    assert "> [!WARNING]" in md and "`com.example.TenantQuotas`" in md
    assert "custom quota callback" not in text.render_plan(_plan_moving_the_default(2))


def test_who_is_throttled_harder_has_a_bar_and_the_protected_mark() -> None:
    state: QuotaState = {DEFAULT_USER: {P: 1000.0}}
    desired: QuotaState = {DEFAULT_USER: {P: 250.0}}
    plan = make(desired, state, Policy(), cluster="c")
    guarded = Policy.build(protect=[{"user": "ceo"}])
    who = [Principal("ceo"), Principal("u1")]
    plan = dataclasses.replace(plan, impact=plan_impact(state, plan, who, guarded))
    assert plan.impact is not None and plan.impact.protected
    impact = gfm.assert_aligned(markdown.render_plan(plan)).tables()[-1]
    (row,) = impact.rows
    assert row[0] == "▼ throttled harder"
    assert row[4] == "-75% ██████████→██▌░░░░░░░ 🛡️ 1 protected"
    out = text.render_plan(plan)
    assert "    ██████████ -> ██▌░░░░░░░  PROTECTED: 1\n" in out
