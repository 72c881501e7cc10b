"""What revert and history hand to their renderers."""

from __future__ import annotations

from dataclasses import dataclass

from kquota.history.applies import AppliedPlan, EntityEvent
from kquota.history.inverse import Conflict
from kquota.history.trail import BadRecord
from kquota.model import Entity
from kquota.plan.types import Plan
from kquota.render.format import display_entity


@dataclass(frozen=True)
class RevertResult:
    """RevertResult is the apply being undone and the plan that undoes it (its guards counted
    on the live cluster), with the conflicts that --force let through."""

    source: AppliedPlan
    plan: Plan
    forced: tuple[Conflict, ...]
    warnings: tuple[str, ...] = ()
    """What the operator must know about the trail it came from (no key to verify it with,
    bad records on the topic)."""


@dataclass(frozen=True)
class History:
    """History is the trail's applies, oldest first, or one entity's changes."""

    topic: str
    applies: tuple[AppliedPlan, ...]
    entity: Entity | None = None
    events: tuple[EntityEvent, ...] = ()
    skipped: int = 0
    bad: tuple[BadRecord, ...] = ()
    signed: bool = False
    """Whether keys were configured to verify the events with."""

    @property
    def entity_shown(self) -> str:
        return "" if self.entity is None else display_entity(self.entity)
