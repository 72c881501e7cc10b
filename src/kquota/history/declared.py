"""What the desired state says about the values a revert puts back: pure, no I/O.

A revert changes the cluster, not the YAML. Whatever the desired state declares for the keys
the revert touches is what the next plan aims at: if a file still declares the value being
reverted, the next apply puts it back. So each key the revert puts back is compared with the
desired state, and every one it does not already agree with is named with the file and line
of the entry that declares its entity (the loader keeps one position per entity).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kquota.desired.problems import SourceLocation
from kquota.history.applies import EntityChange
from kquota.model import Entity, QuotaState


@dataclass(frozen=True)
class Declared:
    """Declared is one key whose desired value is not the one the revert puts back."""

    entity: Entity
    key: str
    restored: float | None
    """What the revert puts back (the apply's before; None: the key is removed)."""
    reverted: float | None
    """What the apply wrote, which the revert undoes (None: the apply removed the key)."""
    declared: float | None
    """What the desired state declares (None: its entry, or no entry, sets no such key)."""
    where: str | None
    """``file:line:column`` of the entry that declares the entity, as the file is named (not
    made safe: each renderer does that for its medium); None: no file declares it."""

    @property
    def still(self) -> bool:
        """still: the desired state declares exactly the value the revert undoes."""
        return self.declared is not None and self.declared == self.reverted


@dataclass(frozen=True)
class DesiredCheck:
    """DesiredCheck is the desired state compared with a revert: the paths read (none: not
    known), the keys it disagrees on, or why it could not be read."""

    paths: tuple[str, ...] = ()
    found: tuple[Declared, ...] = ()
    problem: str | None = None

    @property
    def known(self) -> bool:
        return bool(self.paths)


def declared(
    changes: Sequence[EntityChange],
    quotas: QuotaState,
    sources: Mapping[Entity, SourceLocation],
) -> tuple[Declared, ...]:
    """declared are the keys of ``changes`` (an apply being reverted) whose value in
    ``quotas`` (the desired state, each entity's entry at ``sources[entity]``) is not the
    apply's before value, in the apply's order. An entity no file declares is listed only
    when the revert puts a value back on it (with prune on, the next apply removes it
    again); a key the revert removes is fine when nothing declares it."""
    out: list[Declared] = []
    for change in changes:
        values = quotas.get(change.entity)
        at = sources.get(change.entity)
        where = None if at is None else f"{at.file}:{at.line}:{at.column}"
        for op in change.ops:
            want = None if values is None else values.get(op.key)
            if want == op.before:
                continue
            out.append(Declared(change.entity, op.key, op.before, op.after, want, where))
    return tuple(out)
