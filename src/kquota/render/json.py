"""JSON rendering: exactly :meth:`Plan.to_data`, the versioned contract, indented."""

from __future__ import annotations

import orjson

from kquota.plan.resolver import Resolution
from kquota.plan.types import Plan


def render_plan(plan: Plan) -> str:
    """render_plan is the plan's JSON contract, two-space indented, newline-terminated."""
    return orjson.dumps(plan.to_data(), option=orjson.OPT_INDENT_2).decode() + "\n"


def render_resolution(resolution: Resolution) -> str:
    """render_resolution is the resolve JSON form: entity, and per key value and source."""
    return orjson.dumps(resolution.to_data(), option=orjson.OPT_INDENT_2).decode() + "\n"
