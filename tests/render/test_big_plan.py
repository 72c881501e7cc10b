"""A plan at 20,000 creates (each its own value) and 300 deletes (one change, grouped):
removals first and every one by name, the counts outside any fold, the comment within
GitHub's limit with room for the Action's wrapper, and a visible line that says what was
left out and where the full plan is."""

from __future__ import annotations

import gc
from collections.abc import Callable

import pytest

import gfm
from kquota.model import Entity, QuotaState
from kquota.plan.planner import plan as make_plan
from kquota.plan.types import Plan
from kquota.policy import Policy
from kquota.render import markdown, text
from kquota.render.markdown import BUDGET, COMMENT_LIMIT, WRAPPER_HEADROOM

P = "producer_byte_rate"


@pytest.fixture(scope="module")
def big() -> Plan:
    desired: QuotaState = {
        Entity.of({"user": f"new-{i:05}"}): {P: 1024.0 * (i + 1)} for i in range(20_000)
    }
    snapshot: QuotaState = {Entity.of({"user": f"gone-{i:03}"}): {P: 2048.0} for i in range(300)}
    return make_plan(desired, snapshot, Policy(prune=True, allow_mass_removal=True), cluster="big")


def test_the_budget_leaves_room_for_the_wrapper() -> None:
    assert BUDGET + WRAPPER_HEADROOM == COMMENT_LIMIT == 65_536


def test_removals_first_and_all_of_them(big: Plan) -> None:
    out = markdown.render_plan(big, full_plan_at="the job summary")
    assert len(out) <= BUDGET
    doc = gfm.assert_aligned(out)
    assert out.count("<details>") == out.count("</details>")
    summary, removals, creates = doc.tables()
    assert ["- to delete", "300"] in summary.rows and ["+ to create", "20000"] in summary.rows
    # one row for the 300: three names, the rest behind the row's fold, none cut
    [cell] = removals.column("entity")
    assert cell.startswith("300 entities: {user=gone-000}, {user=gone-001}, {user=gone-002}")
    names = [f"{{user=gone-{i:03}}}" for i in range(300)]
    assert [n for n in names if n in cell] == names and "JSON plan" not in cell
    assert out.index("#### Removals") < out.index("<summary><code>+</code>")
    shown = len([e for e in creates.column("entity") if e.startswith("{")])
    assert 0 < shown < 20_000
    left = 20_000 - shown
    assert f"{left} creates left out. The full plan is in the job summary." in doc.text()
    # the note sits before any fold, right after the counts
    assert out.index("Not all shown here") < out.index("#### Removals")


@pytest.mark.parametrize("budget", [4_000, 20_000])
def test_a_smaller_budget_cuts_creates_before_removals(big: Plan, budget: int) -> None:
    out = markdown.render_plan(big, budget=budget)
    assert len(out) <= budget
    doc = gfm.assert_aligned(out)
    assert out.count("<details>") == out.count("</details>")
    assert "Not all shown here" in doc.text()
    names = doc.text()
    first_gone = names.index("{user=gone-000}")
    assert "{user=new-00000}" not in names or names.index("{user=new-00000}") > first_gone


def test_text_lists_removals_first(big: Plan) -> None:
    out = text.render_plan(big)
    assert out.index("- 300 entities, the same change: {user=gone-000}") == out.index("- ")
    assert out.index("{user=gone-299}") < out.index("+ {user=new-00000}")


@pytest.mark.parametrize("render", [text.render_plan, markdown.render_plan])
def test_rendering_runs_no_cyclic_collection(big: Plan, render: Callable[[Plan], str]) -> None:
    """A plan of 20,000 groups builds tens of thousands of objects, none in a cycle: each
    collection the cyclic collector started would walk the whole plan and find nothing
    (kquota.runtime.gcpause). Rendering pauses it, whoever calls the renderer: unpaused, this plan
    started dozens."""
    started: list[int] = []

    def note(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            started.append(info["generation"])

    gc.collect()
    gc.callbacks.append(note)
    try:
        render(big)
    finally:
        gc.callbacks.remove(note)
    assert gc.isenabled()
    # At most the one collection that turning it back on may start (of the youngest objects)
    assert started in ([], [0])
