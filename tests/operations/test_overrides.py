"""The policy overrides plan and apply share, turned into the target's policy."""

from __future__ import annotations

from kquota.operations.overrides import PolicyOverrides
from kquota.policy import ProtectMatch
from kquota.target import Target


def test_the_overrides_build_the_policy_plan_and_apply_share() -> None:
    target = Target.from_options("127.0.0.1:9092", None)
    protect = (ProtectMatch.of({"user": "svc-*"}),)
    plain = PolicyOverrides().applied_to(target)
    assert plain == target.policy(prune=None, allow_mass_removal=False)
    assert not (plain.prune or plain.allow_oversubscription or plain.allow_throttling)
    every = PolicyOverrides(True, True, protect, True, True, True).applied_to(target)
    assert every.prune and every.allow_mass_removal and every.allow_protected_change
    assert every.allow_oversubscription and every.allow_throttling
    assert every.protect == plain.protect + protect
