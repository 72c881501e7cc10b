"""What the operator asks of a target's policy for one plan or apply: the same overrides on
both roads, turned into the policy once."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kquota.policy import Policy, ProtectMatch

if TYPE_CHECKING:
    from kquota.target import Target


@dataclass(frozen=True)
class PolicyOverrides:
    """PolicyOverrides are what the operator asks of the target's policy for this plan or
    apply (``prune``, where the plan is made here; the guards' overrides; more protected
    principals)."""

    prune: bool | None = None
    allow_mass_removal: bool = False
    protect: Sequence[ProtectMatch] = ()
    allow_protected_change: bool = False
    allow_oversubscription: bool = False
    allow_throttling: bool = False

    def applied_to(self, target: Target) -> Policy:
        """applied_to is ``target``'s policy under these overrides: the policy a plan is
        made, and an apply judged, under."""
        policy = target.policy(
            prune=self.prune,
            allow_mass_removal=self.allow_mass_removal,
            protect=self.protect,
            allow_protected_change=self.allow_protected_change,
        )
        if self.allow_oversubscription:
            policy = dataclasses.replace(policy, allow_oversubscription=True)
        if self.allow_throttling:
            policy = dataclasses.replace(policy, allow_throttling=True)
        return policy
