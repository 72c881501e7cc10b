"""The verdict above a plan a guard stops (render.verdict): first in every format, and no
name in it becomes markup. Markdown is read back with a real CommonMark parser."""

from __future__ import annotations

import json

import pytest
from markdown_it import MarkdownIt

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
    tokens = MarkdownIt("commonmark").parse(out)
    # First: a blockquote holding a paragraph and a code block, and nothing from the name.
    assert [t.type for t in tokens[:9]] == [
        "blockquote_open", "paragraph_open", "inline", "paragraph_close", "fence",
        "blockquote_close", "heading_open", "inline", "heading_close",
    ]  # fmt: skip
    fence = tokens[4]
    assert fence.content == f"protected principals: {plan.impact.protected[0]}\n"  # type: ignore[union-attr]
    assert "`--allow-protected-change`" in out.splitlines()[1]
    html = MarkdownIt("commonmark").render(out.split("### kquota plan")[0])
    assert "<img" not in html and "<a " not in html and "<strong>b</strong>" not in html


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
