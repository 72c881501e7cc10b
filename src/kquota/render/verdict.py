"""The verdict on a plan a guard stops, put above the whole plan in every format.

A plan the mass-removal guard or the protected-principals guard stops is the plan a reviewer
most needs to read, so it is rendered in full like any other; this module only puts the
verdict first: lines above the text, a ``[!CAUTION]`` block above the markdown, and a
``refusal`` field first in the JSON (the saved plan file stays the plain contract). The
renderers' own guard notes stay where they are; the verdict here is the headline.

The refusal may name principals from files and clusters: in markdown it sits in a fenced code
block (longer than any backtick run in it), where nothing in a name can become markup.
"""

from __future__ import annotations

import re

import orjson

from kquota.plan.types import Plan
from kquota.render.format import safe_text

_BACKTICKS = re.compile(r"`+")


def overrides(plan: Plan) -> list[str]:
    """overrides are the flags that would let apply take this plan, after review."""
    out = []
    if plan.guard_violation is not None and not plan.mass_removal_allowed:
        out.append("--allow-mass-removal")
    if plan.impact is not None and plan.impact.stops:
        out.append("--allow-protected-change")
    if plan.capacity is not None and plan.capacity.stops:
        out.append("--allow-oversubscription")
    return out


def with_verdict(rendered: str, plan: Plan, fmt: str) -> str:
    """with_verdict is ``rendered`` (the plan in ``fmt``) headed by the verdict when a guard
    stops the plan; unchanged otherwise. JSON is rebuilt from the plan, verdict first."""
    refusal = plan.refusal
    if refusal is None:
        return rendered
    if fmt == "json":
        data = {"refusal": refusal, **plan.to_data()}
        return orjson.dumps(data, option=orjson.OPT_INDENT_2).decode() + "\n"
    flags = " and ".join(overrides(plan))
    if fmt == "markdown":
        return _markdown(safe_text(refusal), flags) + rendered
    return (
        f"STOPPED: {safe_text(refusal)}\n"
        f"This plan will not be applied; it is shown in full for review. "
        f"Apply it only after review, with {flags}.\n\n" + rendered
    )


def _markdown(refusal: str, flags: str) -> str:
    longest = max((len(m) for m in _BACKTICKS.findall(refusal)), default=0)
    fence = "`" * max(3, longest + 1)
    code = " and ".join(f"`{f}`" for f in flags.split(" and "))
    return (
        "> [!CAUTION]\n"
        "> **Stopped: this plan will not be applied.** It is shown in full below for review; "
        f"apply it only after review, with {code}.\n"
        ">\n"
        f"> {fence}text\n"
        f"> {refusal}\n"
        f"> {fence}\n\n"
    )
