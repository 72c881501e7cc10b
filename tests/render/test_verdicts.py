"""Verdicts on top: a plan a guard (or the caller) stops is still shown in full, the verdict
first, escaped like any other text that kquota did not write."""

from __future__ import annotations

import dataclasses

import gfm
from kquota.model import Entity
from kquota.plan.planner import plan as make_plan
from kquota.plan.types import Plan, PlanImpact
from kquota.policy import Policy
from kquota.render import markdown, text

P = "producer_byte_rate"


def _stopped() -> Plan:
    state = {Entity.of({"user": f"u{i}"}): {P: 1.0} for i in range(5)}
    p = make_plan({}, state, Policy(prune=True), cluster="prod")
    assert p.guard_violation is not None and not p.mass_removal_allowed
    impact = PlanImpact(changes=(), protected=("{user=<b>ceo</b>}: lowered @team",))
    return dataclasses.replace(p, impact=impact)


def test_markdown_verdicts_come_first_and_the_plan_is_whole() -> None:
    out = markdown.render_plan(_stopped(), verdicts=["apply refused: [click](https://x.example)"])
    doc = gfm.assert_aligned(out)
    quotes = doc.root.all("blockquote")
    assert len(quotes) == 2 and all(q.text().strip().startswith("[!CAUTION]") for q in quotes)
    # The guards' verdict, one block above the title; the caller's under it.
    guards, caller = (" ".join(q.text().split()) for q in quotes)
    assert out.index("[!CAUTION]") < out.index("### kquota plan") < out.rindex("[!CAUTION]")
    assert "Mass-removal guard:" in guards and "{user=<b>ceo</b>}: lowered @team" in guards
    assert "apply refused: [click](https://x.example)" in caller
    assert not {"a", "b"} & doc.root.tags()
    assert out.index("[!CAUTION]") < out.index("| | entities |")
    removals = doc.tables()[1]
    # the whole plan, though it will not be applied: the five removals, one change, one row
    [cell] = removals.column("entity")
    assert all(f"{{user=u{i}}}" in cell for i in range(5))


def test_text_verdicts_come_first() -> None:
    lines = text.render_plan(_stopped(), verdicts=["apply refused:\nstale\x1b[2J"]).split("\n")
    assert lines[0].startswith("STOPPED: mass-removal guard: ")
    assert (
        lines[1] == "STOPPED: protected principals: the plan lowers or newly imposes their quotas:"
    )
    assert lines[2] == "  {user=<b>ceo</b>}: lowered @team"
    assert lines[5:7] == [
        "kquota plan for cluster prod",
        "STOPPED: apply refused:\\x0astale\\x1b[2J",
    ]
    assert (
        lines.index(
            "- 5 entities, the same change: {user=u0}, {user=u1}, {user=u2}, {user=u3}, {user=u4}"
        )
        > 6
    )
