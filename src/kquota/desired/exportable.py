"""What ``kquota export`` writes: the rendered YAML, checked by the loader itself.

Export must never write what ``validate`` refuses. Rather than a second copy of the rules,
the rendered text is read back through the very reader, walker and merge that ``validate``
runs; every entity the loader has a problem with (an unknown entity type, ip with user, a
hostname or a second spelling of one address, a value the broker should not hold) is left
out and named, and the rest is rendered again until it reads back clean.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass

from kquota.desired.document import read_document
from kquota.desired.format import KIND_BASE
from kquota.desired.merge import merge
from kquota.desired.problems import Problems
from kquota.desired.reader import read_nodes
from kquota.desired.writer import render_desired_lines
from kquota.model import Entity, display_entity

_SELF = "<export>"
_AT = re.compile(re.escape(_SELF) + r":(\d+):\d+")


@dataclass(frozen=True)
class Export:
    """Export is the YAML to write and what was left out of it, with why."""

    text: str
    left_out: tuple[tuple[Entity, str], ...]


def export_yaml(
    state: Mapping[Entity, Mapping[str, float]], header: str, kind: str = KIND_BASE
) -> Export:
    """export_yaml renders ``state`` as desired-state YAML that ``validate`` accepts
    (``kind``: a base file, or an overlay whose entries replace the base's)."""
    kept = dict(state)
    left_out: list[tuple[Entity, str]] = []
    while True:
        text, lines = render_desired_lines(kept, header, kind)
        problems = Problems()
        root, ok = read_nodes(_SELF, text.encode("utf-8"), problems)
        if ok:
            merge([read_document(_SELF, root, problems)], problems)
        bad: dict[Entity, str] = {}
        for p in sorted(problems.items):
            entity = lines.get(p.line)
            if entity is None:  # not about an entry: a bug in the renderer, never hidden
                raise AssertionError(f"export wrote YAML its loader refuses: {p}")
            if entity not in bad:
                bad[entity] = _AT.sub(functools.partial(_entity_at, lines), p.message)
        if not bad:
            return Export(text, tuple(left_out))
        for entity, why in bad.items():
            del kept[entity]
            left_out.append((entity, why))


def _entity_at(lines: dict[int, Entity], m: re.Match[str]) -> str:
    entity = lines.get(int(m[1]))
    return "the exported entity " + display_entity(entity) if entity else m[0]
