"""The verdict above a plan a guard stops (render.verdict): first in every format, and no
name in it becomes markup. Markdown is read back as github.com reads it (tests/gfm.py)."""

from __future__ import annotations

import json

import pytest

from gfm import Node, parse
from kquota.model import Entity
from kquota.plan.types import Alteration, ChangeKind, Op, Plan, PlanImpact
from kquota.render.markdown import render_plan as render_markdown
from kquota.render.text import render_plan as render_text
from kquota.render.verdict import with_verdict

HOSTILE = "ev```il <img src=x> [link](https://x.example) **b** @team #1 <!-- ``"
DELETE = Alteration(
    Entity.of({"user": "carol"}),
    (Op("producer_byte_rate", None, remove=True, before=5.0),),
    ChangeKind.DELETE,
)


def _protected() -> Plan:
    line = f"{{user={HOSTILE}}} producer_byte_rate: unlimited -> 1048576 from {{user=<default>}}"
    return Plan(alterations=(DELETE,), cluster="prod", impact=PlanImpact((), protected=(line,)))


def test_a_plan_no_guard_stops_is_left_as_rendered() -> None:
    plan = Plan(alterations=(DELETE,))
    for fmt, rendered in (("text", render_text(plan)), ("markdown", render_markdown(plan))):
        assert with_verdict(rendered, plan, fmt) == rendered


def test_the_markdown_verdict_is_one_quote_whose_names_stay_text() -> None:
    plan = _protected()
    out = with_verdict(render_markdown(plan), plan, "markdown")
    doc = parse(out)
    top = [c for c in doc.root.children if isinstance(c, Node)]
    # First: a blockquote holding a paragraph and a code block, then the plan's heading.
    assert [n.tag for n in top[:2]] == ["blockquote", "h3"]
    quote = [c for c in top[0].children if isinstance(c, Node)]
    assert [n.tag for n in quote] == ["p", "pre"]
    assert quote[1].text() == f"protected principals: {plan.impact.protected[0]}\n"  # type: ignore[union-attr]
    assert "`--allow-protected-change`" in out.splitlines()[1]
    # Nothing from the name becomes markup in the verdict.
    assert not {"img", "a"} & top[0].tags() and not doc.comments
    assert [b.text() for b in top[0].all("strong")] == ["Stopped: this plan will not be applied."]


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_the_verdict_comes_first_in_text_and_json(fmt: str) -> None:
    plan = _protected()
    rendered = render_text(plan) if fmt == "text" else ""
    out = with_verdict(rendered, plan, fmt)
    if fmt == "json":
        data = json.loads(out)
        assert list(data)[:2] == ["refusal", "format_version"]
        assert data["refusal"] == plan.refusal and data["alterations"][0]["change"] == "delete"
    else:
        assert out.startswith(f"STOPPED: protected principals: {{user={HOSTILE}}}")
        assert out.endswith(rendered)
