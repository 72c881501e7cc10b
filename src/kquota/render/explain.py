"""``kquota resolve --explain`` as text: the effective quotas (the resolve form), then the
ladder for the principal, then per key which level wins and why. Names are shown safely, as
everywhere in text output (:func:`kquota.model.display_entity`)."""

from __future__ import annotations

from kquota.display import number
from kquota.model import display_entity
from kquota.plan.explain import Explanation
from kquota.render.text import render_resolution


def render_explanation(found: Explanation) -> str:
    """render_explanation is the resolution, a blank line, the ladder and the verdicts."""
    lines = [render_resolution(found.resolution).rstrip("\n"), ""]
    who = display_entity(found.resolution.principal.entity())
    lines.append(f"precedence ladder for {who}, highest first (docs/precedence.md):")
    width = max((len(display_entity(r.entity)) for r in found.ladder), default=0)
    for rung in found.ladder:
        entity = display_entity(rung.entity)
        if rung.values is None:
            held = "(no such entity)"
        elif not rung.values:
            held = "(sets nothing)"
        else:
            held = ", ".join(f"{k}={number(v)}" for k, v in rung.values.items())
        lines.append(f"  {rung.level:>4}  {entity:<{width}}  {held}")
    lines.append("")
    for verdict in found.verdicts:
        if verdict.winner is None:
            if verdict.reasons[0][0] == "-":
                lines.append(f"{verdict.key}=unlimited: {verdict.reasons[0][1]}")
                continue
            lines.append(f"{verdict.key}=unlimited:")
            lines += [f"    level {level} {why}" for level, why in verdict.reasons]
            continue
        assert verdict.value is not None
        source = next(r.entity for r in found.ladder if r.level == verdict.winner)
        lines.append(
            f"{verdict.key}={number(verdict.value)} from level {verdict.winner} "
            f"{display_entity(source)}:"
        )
        for level, why in verdict.reasons:
            mark = "wins" if level == verdict.winner else "loses"
            lines.append(f"    level {level} {mark}: {why}")
    return "\n".join(lines) + "\n"
