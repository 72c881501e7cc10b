"""Look-alike pairs in a plan: an entity removed and another created that read the same.

"delete payments, create payments" (the second with a Hangul filler, a Cyrillic а, ...)
reads as a no-op and leaves the real ``payments`` unlimited. Every renderer names such pairs
next to both entities. Pure; names compared by :func:`kquota.confusables.name_key`.
"""

from __future__ import annotations

from collections.abc import Iterable

from kquota.confusables import name_key
from kquota.model import Entity
from kquota.plan.types import Alteration, ChangeKind

Key = tuple[tuple[str, str | None], ...]


def _key(entity: Entity) -> Key:
    return tuple((t, None if n is None else name_key(n)) for t, n in entity.parts)


def lookalikes(alterations: Iterable[Alteration]) -> dict[Entity, tuple[Entity, ...]]:
    """lookalikes maps each deleted or created entity to the created or deleted entities that
    look like it (empty when none do)."""
    listed = alterations if isinstance(alterations, (list, tuple)) else list(alterations)
    kinds = [a.kind for a in listed]
    # Only a delete and a create make a pair: a plan of 100k creates is decided here, with no
    # per-alteration appends (every renderer asks).
    if ChangeKind.DELETE not in kinds or ChangeKind.CREATE not in kinds:
        return {}
    deleted: dict[Key, list[Entity]] = {}
    created: list[Entity] = []
    for a in listed:
        if a.kind is ChangeKind.DELETE:
            deleted.setdefault(_key(a.entity), []).append(a.entity)
        elif a.kind is ChangeKind.CREATE:
            created.append(a.entity)
    if not deleted or not created:
        return {}
    out: dict[Entity, list[Entity]] = {}
    for c in created:
        for d in deleted.get(_key(c), ()):
            if d != c:
                out.setdefault(c, []).append(d)
                out.setdefault(d, []).append(c)
    return {e: tuple(v) for e, v in out.items()}
