"""What revert and history hand to their renderers."""

from __future__ import annotations

from dataclasses import dataclass

from kquota.history.applies import AppliedPlan, EntityEvent
from kquota.history.declared import DesiredCheck
from kquota.history.inverse import Conflict
from kquota.history.trail import BadRecord
from kquota.model import Entity, display_entity
from kquota.plan.types import Plan


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
    desired: DesiredCheck = DesiredCheck()
    """The desired state compared with the values the revert puts back: the files that
    still declare what it undoes, so the next apply does not put that back."""


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
