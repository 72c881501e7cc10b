"""JSON rendering: :meth:`Plan.to_data`, the versioned contract, indented.

Fields are added for a reader when they apply: ``groups`` (printed for review, not in a
fleet's plan files: it repeats every entity), the alterations grouped by the same change,
removals first, each op with its ``direction`` and ``percent``
(:mod:`kquota.render.change_groups`); ``lookalikes``, the pairs of an entity deleted and one
created whose names read the same (:mod:`kquota.plan.lookalike`). The plan reader accepts
and ignores both (they are derived from the alterations). JSON escapes any name.
"""

from __future__ import annotations

from typing import Any

import orjson

from kquota.plan.lookalike import lookalikes
from kquota.plan.resolver import Resolution
from kquota.plan.types import ChangeKind, Plan
from kquota.render.change_groups import groups_data


def render_plan(plan: Plan, *, review: bool = False) -> str:
    """render_plan is the plan's JSON contract, two-space indented, newline-terminated;
    ``review`` adds ``groups`` (the JSON printed for a reader, not a fleet's plan files)."""
    return plan_bytes(plan, review=review).decode()


def plan_bytes(plan: Plan, *, review: bool = False) -> bytes:
    """plan_bytes is :func:`render_plan` as UTF-8, for a stream that takes bytes: a plan of
    100k changes is 50 MB of JSON, which a str would copy twice on its way out."""
    return data_bytes(plan_data(plan, review=review))


def data_bytes(data: dict[str, Any]) -> bytes:
    """data_bytes is ``data`` as the JSON contracts are written: two-space indented, UTF-8,
    newline-terminated."""
    return orjson.dumps(data, option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE)


def plan_data(plan: Plan, *, review: bool = False) -> dict[str, Any]:
    """plan_data is what :func:`render_plan` writes, as data."""
    data = plan.to_data()
    if review and plan.alterations:
        data["groups"] = groups_data(plan.alterations)
    pairs = lookalikes(plan.alterations)
    if pairs:
        deleted = {a.entity for a in plan.alterations if a.kind is ChangeKind.DELETE}
        data["lookalikes"] = [
            {"deleted": d.to_json(), "created": c.to_json()}
            for d in pairs
            if d in deleted
            for c in pairs[d]
        ]
    return data


def render_resolution(resolution: Resolution) -> str:
    """render_resolution is the resolve JSON form: entity, and per key value and source."""
    return orjson.dumps(resolution.to_data(), option=orjson.OPT_INDENT_2).decode() + "\n"
