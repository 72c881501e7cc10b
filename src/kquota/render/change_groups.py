"""A plan's alterations as a reader takes them in: each change's direction and size, and
repeated changes grouped. Shared by the text, markdown and JSON renderers.

A plan that moves a hundred users from one tier to another says the same thing a hundred
times; a reviewer needs it once, with how many entities and which. Alterations group when
they have the same kind and exactly the same ops (key, before, after, removal each) and the
same entity shape (its types, and which of them are ``<default>``): a default entity never
shares a row with named ones, since it reaches every principal without a quota of its own.
Groups keep the planner's order (first member first) within :func:`by_rank`'s ranks.

Direction is the entity's own limit, not a principal's effective quota (``--impact`` shows
those): ``lower`` and ``higher`` for an update, ``new`` for a key set where there was none,
``removed`` for a key removed (the entity no longer limits it: unlimited unless a less
specific quota applies).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from kquota.model import Entity
from kquota.plan.types import Alteration, ChangeKind, Op

LOWER, HIGHER, SAME, NEW, REMOVED = "lower", "higher", "same", "new", "removed"
DEFAULT_REACH = "reaches every principal without a quota of its own"
"""What a ``<default>`` entity is marked with, wherever it is shown."""


def direction(op: Op) -> str:
    """direction is :data:`LOWER`, :data:`HIGHER`, :data:`SAME`, :data:`NEW` or
    :data:`REMOVED` for ``op``'s limit on its entity."""
    if op.remove or op.value is None:
        return REMOVED
    if op.before is None:
        return NEW
    if op.value < op.before:
        return LOWER
    return HIGHER if op.value > op.before else SAME


def percent(op: Op) -> float | None:
    """percent is the update's change in percent of the value before (``-75.0``), or None
    where a number would mislead: a new or removed key, a value from or to a non-finite one,
    or from zero."""
    if op.remove or op.value is None or op.before is None:
        return None
    before, after = op.before, op.value
    if not (math.isfinite(before) and math.isfinite(after)) or before == 0:
        return None
    return (after - before) / abs(before) * 100


def percent_text(p: float) -> str:
    """percent_text is ``75%``, ``0.5%``, ``<0.1%``: the size, without its sign."""
    size = abs(p)
    if size == 0:
        return "0%"
    if size < 0.1:
        return "<0.1%"
    shown = f"{size:.1f}".rstrip("0").rstrip(".") if size < 100 else f"{size:.0f}"
    return f"{shown}%"


def change_mark(op: Op) -> str:
    """change_mark is the markdown change cell: ``▼75%``, ``▲100%``, ``new limit``,
    ``▲ removed``, ``= same`` (a no-break space: a narrow column never splits it)."""
    d = direction(op)
    if d == REMOVED:
        return "▲\u00a0removed"
    if d == NEW:
        return "new limit"
    if d == SAME:
        return "=\u00a0same"
    p = percent(op)
    arrow = "▼" if d == LOWER else "▲"
    return arrow if p is None else f"{arrow}{percent_text(p)}"


def change_words(op: Op) -> str:
    """change_words is the plain-text form: ``lower by 75%``, ``higher by 100%``, ``lower``."""
    # direction and percent written out: a text plan of 100k updates asks for each.
    after, before = op.value, op.before
    if op.remove or after is None or before is None:
        return ""
    if after < before:
        d = LOWER
    elif after > before:
        d = HIGHER
    else:
        return ""
    if before == 0 or not (math.isfinite(before) and math.isfinite(after)):
        return d
    return f"{d} by {percent_text((after - before) / abs(before) * 100)}"


def is_default(entity: Entity) -> bool:
    """is_default: one of the entity's types is ``<default>``."""
    parts = entity.parts
    if len(parts) == 1:  # most entities: no generator
        return parts[0][1] is None
    return any(name is None for _, name in parts)


@dataclass(frozen=True, slots=True)
class ChangeGroup:
    """ChangeGroup is alterations with the same kind, ops and entity shape, in plan order."""

    kind: ChangeKind
    ops: tuple[Op, ...]
    entities: tuple[Entity, ...]

    @property
    def removes(self) -> bool:
        return self.kind is ChangeKind.DELETE or any(op.remove for op in self.ops)

    @property
    def default(self) -> bool:
        return is_default(self.entities[0])


def group_alterations(
    alterations: Sequence[Alteration], alone: Collection[Entity] = ()
) -> list[ChangeGroup]:
    """group_alterations groups ``alterations`` (already in the order to show them): each
    group at its first member's place. An entity in ``alone`` (one with a look-alike, say)
    is a group of its own."""
    # One pass, no call per alteration: a plan of 100k distinct changes is 100k groups, and
    # this runs while apply's validate-only pass waits on the main thread. The signature is
    # the kind, the entity's shape and the ops themselves (equal values are one change: 0.0
    # and -0.0 print alike); a one-type shape is spelt flat, never equal to a longer one's.
    # A list only for a group of two or more: most plans' groups are single entities.
    # Ops and kinds hash in Python (dataclass and Enum), but the planner shares one ops tuple
    # among the entities it sets alike: each tuple is hashed once, and the signature holds
    # the id of the first equal one (every tuple lives in ``alterations`` meanwhile).
    place: dict[tuple[object, ...], int] = {}
    at = place.setdefault
    same_ops: dict[tuple[Op, ...], tuple[Op, ...]] = {}
    ops_id: dict[int, int] = {}
    firsts: list[Alteration] = []
    more: dict[int, list[Entity]] = {}
    for a in alterations:
        entity = a.entity
        if alone and entity in alone:
            firsts.append(a)  # alone even beside itself: never keyed, never joined
            continue
        ops = ops_id.get(id(a.ops))
        if ops is None:
            ops = ops_id[id(a.ops)] = id(same_ops.setdefault(a.ops, a.ops))
        sig: tuple[object, ...]
        parts = entity.parts
        if len(parts) == 1:
            t, n = parts[0]
            sig = (id(a.kind), t, n is None, ops)
        else:
            sig = (id(a.kind), tuple([(t, n is None) for t, n in parts]), ops)
        i = at(sig, len(firsts))
        if i == len(firsts):
            firsts.append(a)
        elif i in more:
            more[i].append(entity)
        else:
            more[i] = [firsts[i].entity, entity]
    return [
        ChangeGroup(a.kind, a.ops, (a.entity,) if i not in more else tuple(more[i]))
        for i, a in enumerate(firsts)
    ]


def op_data(op: Op) -> dict[str, object]:
    """op_data is the op's contract fields plus ``direction`` and ``percent`` (rounded to
    0.01, null where :func:`percent` is)."""
    p = percent(op)
    return {
        **op.to_data(),
        "direction": direction(op),
        "percent": None if p is None else round(p, 2),
    }


def by_rank(
    alterations: Sequence[Alteration],
) -> tuple[list[Alteration], list[Alteration], list[Alteration], list[Alteration]]:
    """by_rank is the order a reader takes alterations in, as four lists, each in the
    planner's order: deletes, updates that remove keys, other updates, creates. One walk
    where a sort would call a rank function per alteration."""
    kinds = [a.kind for a in alterations]
    if kinds.count(ChangeKind.CREATE) == len(kinds):  # a first apply: nothing to group
        return [], [], [], list(alterations)
    deletes: list[Alteration] = []
    removing: list[Alteration] = []
    updates: list[Alteration] = []
    creates: list[Alteration] = []
    delete, update = ChangeKind.DELETE, ChangeKind.UPDATE
    for a, kind in zip(alterations, kinds, strict=True):
        if kind is delete:
            deletes.append(a)
        elif kind is update:
            (removing if any(op.remove for op in a.ops) else updates).append(a)
        else:
            creates.append(a)
    return deletes, removing, updates, creates


def groups_data(alterations: Sequence[Alteration]) -> list[dict[str, object]]:
    """groups_data is the JSON plan's ``groups``, removals first: every group with all its
    entities."""
    deletes, removing, updates, creates = by_rank(alterations)
    ordered = [*deletes, *removing, *updates, *creates]
    return [
        {
            "change": g.kind.word,
            "count": len(g.entities),
            "default": g.default,
            "ops": [op_data(op) for op in g.ops],
            "entities": [e.to_json() for e in g.entities],
        }
        for g in group_alterations(ordered)
    ]
