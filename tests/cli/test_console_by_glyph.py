"""by_glyph puts click's own colour codes around each op line, exactly as a click.style call
per line did (a plan of 100k lines is coloured without one): compared with that loop on
rendered plans with hostile names and on generated text with every line break Python knows
and leading whitespace."""

from __future__ import annotations

import click
from hypothesis import given, settings
from hypothesis import strategies as st

from hostile_names import HOSTILE
from kquota.cli.console import by_glyph
from kquota.model import Entity, QuotaState
from kquota.plan.planner import plan as make_plan
from kquota.policy import Policy
from kquota.render import text


def _styled_per_line(plan_text: str) -> str:
    colors = {"+": "green", "~": "yellow", "-": "red"}
    out = []
    for line in plan_text.splitlines(keepends=True):
        glyph = line.lstrip()[:1]
        is_op = line.lstrip()[1:2] == " "
        out.append(click.style(line, fg=colors[glyph]) if glyph in colors and is_op else line)
    return "".join(out)


def test_a_rendered_plan_with_hostile_names() -> None:
    p, c = "producer_byte_rate", "consumer_byte_rate"
    snapshot: QuotaState = {Entity.of({"user": "d" + n}): {p: 2048.0} for n in HOSTILE}
    snapshot[Entity.of({"user": "u"})] = {p: 1.0, c: 2.0}
    desired: QuotaState = {Entity.of({"client-id": n}): {p: 1024.0, c: 5.0} for n in HOSTILE}
    desired[Entity.of({"user": "u"})] = {p: 3.0}
    plan_text = text.render_plan(make_plan(desired, snapshot, Policy(prune=True), cluster="c"))
    coloured = by_glyph(plan_text)
    assert coloured == _styled_per_line(plan_text)
    assert "\x1b[31m" in coloured and "\x1b[32m" in coloured and "\x1b[33m" in coloured


_PIECES = ["+", "~", "-", " ", "  ", "\t", "a", "{user=x}", "\n", "\r\n", "\r", "\x0b", "\x0c"]
_PIECES += ["\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029", "\xa0", "\u3000", "*", ""]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=30).map("".join))
def test_generated_text(plan_text: str) -> None:
    assert by_glyph(plan_text) == _styled_per_line(plan_text)
