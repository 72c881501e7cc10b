"""The verdict on a plan a guard stops (render.verdict): one block, first in every format,
naming every guard that stops the plan with its detail and the flag that overrides it; no
name in it becomes markup. Markdown is read back as github.com reads it (tests/gfm.py)."""

from __future__ import annotations

import dataclasses
import json

import pytest

from gfm import Node, parse
from kquota.model import Entity
from kquota.plan.impact import plan_impact
from kquota.plan.planner import plan as make_plan
from kquota.plan.types import Alteration, ChangeKind, Op, Plan, PlanImpact
from kquota.policy import Policy, ProtectMatch
from kquota.principal import Principal
from kquota.render.markdown import render_plan as render_markdown
from kquota.render.text import render_plan as render_text
from kquota.render.verdict import PROTECTED_FOLDED, PROTECTED_SHOWN, json_plan

HOSTILE = "ev```il <img src=x> [link](https://x.example) **b** @team #1 <!-- ``"
P = "producer_byte_rate"
DELETE = Alteration(
    Entity.of({"user": "carol"}),
    (Op(P, None, remove=True, before=5.0),),
    ChangeKind.DELETE,
)


def _protected(*names: str) -> Plan:
    lines = tuple(
        f"{{user={n}}} producer_byte_rate: unlimited -> 1048576 from {{user=<default>}}"
        for n in names or (HOSTILE,)
    )
    return Plan(alterations=(DELETE,), cluster="prod", impact=PlanImpact((), protected=lines))


def _mass_removal(*, allowed: bool = False) -> Plan:
    state = {Entity.of({"user": f"u{i}"}): {P: 1.0} for i in range(3)}
    plan = make_plan({}, state, Policy(prune=True, allow_mass_removal=allowed), cluster="prod")
    assert plan.guard_violation is not None and plan.mass_removal_allowed is allowed
    return plan


def _top(markdown: str) -> list[Node]:
    return [c for c in parse(markdown).root.children if isinstance(c, Node)]


def test_a_plan_no_guard_stops_has_no_verdict() -> None:
    plan = Plan(alterations=(DELETE,), cluster="prod")
    assert render_text(plan).startswith("kquota plan for cluster prod\n")
    assert render_markdown(plan).startswith("### kquota plan")
    assert "[!CAUTION]" not in render_markdown(plan)
    assert "refusal" not in json.loads(json_plan(plan))


def test_a_mass_removal_reads_once_in_markdown_stopped_with_its_detail() -> None:
    plan = _mass_removal()
    out = render_markdown(plan)
    top = _top(out)
    # One quote, then the title: nothing else in the comment speaks of the guard.
    assert [n.tag for n in top[:2]] == ["blockquote", "h3"]
    assert len(parse(out).root.all("blockquote")) == 1
    assert out.count("will not be applied") == 1 and out.count("Mass-removal guard") == 1
    paragraphs = [" ".join(p.text().split()) for p in top[0].all("p")]
    assert paragraphs == [
        "[!CAUTION] Stopped: this plan will not be applied. It is shown in full below for "
        "review; apply it only after review, with --allow-mass-removal.",
        f"Mass-removal guard: {plan.guard_violation}.",
    ]
    assert "3 quota value(s) of 3 entities" in paragraphs[1]


def test_a_mass_removal_reads_once_in_text() -> None:
    plan = _mass_removal()
    lines = render_text(plan).split("\n")
    assert lines[:4] == [
        f"STOPPED: mass-removal guard: {plan.guard_violation}",
        "This plan will not be applied; it is shown in full for review. "
        "Apply it only after review, with --allow-mass-removal.",
        "",
        "kquota plan for cluster prod",
    ]
    assert sum("mass-removal guard" in line.lower() for line in lines) == 1


def test_an_overridden_guard_is_a_warning_under_the_title_not_a_verdict() -> None:
    plan = _mass_removal(allowed=True)
    out = render_markdown(plan)
    assert out.startswith("### kquota plan") and "[!CAUTION]" not in out
    assert "> [!WARNING]\n> **Mass-removal guard overridden** (`--allow-mass-removal`)" in out
    text = render_text(plan)
    assert text.split("\n")[1].startswith("Mass-removal guard overridden (--allow-mass-removal)")
    assert "STOPPED" not in text


def test_every_stopping_guard_is_in_the_one_block_with_its_flag() -> None:
    plan = dataclasses.replace(_mass_removal(), impact=_protected("ceo").impact)
    out = render_markdown(plan)
    assert len(parse(out).root.all("blockquote")) == 1
    quote = _top(out)[0]
    assert [n.tag for n in quote.children if isinstance(n, Node)] == ["p", "p", "p", "ul"]
    assert "`--allow-mass-removal` and `--allow-protected-change`" in out.split("\n")[1]
    assert [li.text() for li in quote.all("li")] == list(plan.impact.protected)  # type: ignore[union-attr]
    assert not quote.all("pre")  # wrapped text, never a side-scrolling block
    text = render_text(plan).split("\n")
    assert [line for line in text if line.startswith("STOPPED: ")] == [
        f"STOPPED: mass-removal guard: {plan.guard_violation}",
        "STOPPED: protected principals: the plan lowers or newly imposes their quotas:",
    ]
    assert text[2] == f"  {plan.impact.protected[0]}"  # type: ignore[union-attr]
    assert text[3].endswith("with --allow-mass-removal and --allow-protected-change.")


def test_the_markdown_verdict_names_stay_text() -> None:
    plan = _protected(HOSTILE, "two\nlines")
    out = render_markdown(plan)
    doc = parse(out)
    quote = _top(out)[0]
    assert [n.tag for n in quote.children if isinstance(n, Node)] == ["p", "p", "ul"]
    code = [li.text() for li in quote.all("li")]
    assert code[0] == plan.impact.protected[0]  # type: ignore[union-attr]
    assert (
        code[1]
        == "{user=two\\x0alines} producer_byte_rate: unlimited -> 1048576 from {user=<default>}"
    )
    assert not {"img", "a"} & quote.tags() and not doc.comments
    assert [b.text() for b in quote.all("strong")] == [
        "Stopped: this plan will not be applied.",
        "Protected principals:",
    ]


def test_a_long_protected_list_is_bounded_in_markdown_and_whole_in_text() -> None:
    names = [f"p{i}" for i in range(PROTECTED_SHOWN + 5)]
    plan = _protected(*names)
    top = _top(render_markdown(plan))
    code = [li.text() for li in top[0].all("li")]
    assert len(code) == PROTECTED_SHOWN + 1 and code[-1] == "… and 5 more, folded below"
    # The rest folds under the verdict, above the title: listed, not merely counted.
    assert [n.tag for n in top[:3]] == ["blockquote", "details", "h3"]
    fold = top[1]
    assert fold.all("summary")[0].text() == "5 more protected principals"
    assert [li.text() for li in fold.all("li")] == list(plan.impact.protected[PROTECTED_SHOWN:])  # type: ignore[union-attr]
    text = render_text(plan)
    assert all(f"  {{user={n}}} producer_byte_rate" in text for n in names)


def test_the_fold_is_bounded_too() -> None:
    names = [f"p{i}" for i in range(PROTECTED_SHOWN + PROTECTED_FOLDED + 7)]
    fold = _top(render_markdown(_protected(*names)))[1]
    items = [li.text() for li in fold.all("li")]
    assert len(items) == PROTECTED_FOLDED + 1
    assert items[-1] == "… and 7 more, in the text and JSON plans"
    assert fold.all("summary")[0].text() == f"{PROTECTED_FOLDED + 7} more protected principals"


def _stopped_by_protected_with_mass_removal_overridden() -> Plan:
    """A plan the planner and the impact make: four principals' byte rates newly limited by
    a default, one protected; the removals past the guard's limit overridden."""
    state = {Entity.of({"user": f"old{i}"}): {P: 2097152.0} for i in range(12)}
    desired = {Entity.of({"user": None}): {P: 1048576.0}}
    policy = Policy(
        prune=True,
        allow_mass_removal=True,
        protect=(ProtectMatch.of({"user": "svc-*"}),),
    )
    plan = make_plan(desired, state, policy, cluster="prod")
    who = [Principal("svc-etl"), Principal("alice")]
    plan = dataclasses.replace(plan, impact=plan_impact(state, plan, who, policy))
    assert plan.guard_violation is not None and plan.mass_removal_allowed
    assert plan.impact is not None and plan.impact.stops
    return plan


VERDICT = "{user=svc-etl} producer_byte_rate: unlimited -> 1048576 (1 MiB/s) from {user=<default>}"


def test_a_stopped_plans_first_lines_name_what_tripped_in_the_plans_units() -> None:
    plan = _stopped_by_protected_with_mass_removal_overridden()
    text = render_text(plan).split("\n")
    assert text[:2] == [
        "STOPPED: protected principals: the plan lowers or newly imposes their quotas:",
        f"  {VERDICT}",
    ]
    assert json.loads(json_plan(plan))["refusal"] == f"protected principals: {VERDICT}"
    out = render_markdown(plan)
    assert out.startswith("> [!CAUTION]\n")
    quote = _top(out)[0]
    assert [li.text() for li in quote.all("li")] == [VERDICT]
    assert [b.text() for b in quote.all("strong")][1] == "Protected principals:"
    assert not parse(out).root.all("pre")  # wrapped text, never a side-scrolling block


def test_what_did_not_trip_folds_below_the_verdict() -> None:
    plan = _stopped_by_protected_with_mass_removal_overridden()
    out = render_markdown(plan)
    top = _top(out)
    assert [n.tag for n in top[:3]] == ["blockquote", "details", "h3"]
    assert "overridden" not in top[0].text()  # the verdict is what stops the plan, only
    fold = top[1]
    assert fold.all("summary")[0].text() == "1 guard overridden"
    note = " ".join(fold.all("p")[0].text().split())
    assert note == f"Mass-removal guard overridden (--allow-mass-removal): {plan.guard_violation}."
    # Once, folded: not again as a warning under the title.
    assert len(parse(out).root.all("blockquote")) == 1
    assert out.count("Mass-removal guard overridden") == 1


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_the_verdict_comes_first_in_text_and_json(fmt: str) -> None:
    plan = _protected()
    if fmt == "json":
        data = json.loads(json_plan(plan))
        assert list(data)[:2] == ["refusal", "format_version"]
        assert data["refusal"] == plan.refusal and data["alterations"][0]["change"] == "delete"
    else:
        out = render_text(plan)
        assert out.startswith("STOPPED: protected principals: the plan lowers")
        assert f"\n  {{user={HOSTILE}}} producer_byte_rate" in out


def test_the_json_for_review_keeps_what_the_contract_adds() -> None:
    """A stopped plan's JSON is the contract with ``refusal`` first: nothing of the
    contract's rendering (the look-alike pairs) is dropped to put it there."""
    created = Alteration(
        Entity.of({"user": "carol\u3164"}),
        (Op(P, 5.0, remove=False, before=None),),
        ChangeKind.CREATE,
    )
    plan = dataclasses.replace(_protected(), alterations=(DELETE, created))
    data = json.loads(json_plan(plan))
    assert data["refusal"] == plan.refusal and data["lookalikes"]
