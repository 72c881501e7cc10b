"""The guards' one decision: may this plan be applied, and if not, the one refusal.

Three guards hold a plan back: the mass-removal guard (:meth:`Policy.guard`: too many quota
values removed, or an empty desired state that would prune the scope), the
protected-principals guard (:mod:`kquota.plan.impact`: a protected principal's effective
quota lowered or newly imposed) and the capacity guard (:mod:`kquota.plan.capacity`, issue
23: quotas oversubscribing the brokers beyond ``policy.capacity.max_oversubscription``; a
saved plan it stopped stays stopped, see :mod:`kquota.planfile.reader`, and apply counts it
again from the cluster's facts, :mod:`kquota.operations.capacity`), and so does the
throttle guard (issue 30: the throttle replay of observed usage past
``policy.usage.max_throttled_fraction``). A plan's verdict
is :attr:`Plan.refusal`; :func:`judge` decides the first two under the policy in force now,
from the plan alone or, once connected, with the live cluster's managed counts and effective
quotas; :func:`refuse` (apply and the library), :func:`refuse_shown` (``plan``) and
:func:`refuse_unapplied` (the applier's last line) raise the one refusal, :class:`GuardRefused`,
worded here, that a saved plan's reader raises too.

A saved plan's own verdict (its ``guard_violation``, ``mass_removal_allowed``, managed counts,
protected principals) is its claim, never a decision: only the policy's override counts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import NoReturn

from kquota.errors import KquotaError
from kquota.model import QuotaState
from kquota.plan.types import ChangeKind, Plan
from kquota.policy import Policy
from kquota.principal import Principal


class GuardRefused(KquotaError):
    """GuardRefused: the plan removes too much, or throttles a protected principal harder;
    nothing was applied (a plan is still shown, and saved for review when asked)."""


@dataclass(frozen=True)
class Overrides:
    """Overrides are how a caller spells the guards' overrides in a refusal: the CLI's
    flags, or the library's keyword arguments."""

    mass_removal: str
    protected_change: str
    oversubscription: str = "allow_oversubscription=True"


LIBRARY = Overrides("allow_mass_removal=True", "allow_protected_change=True")
"""How the library spells the overrides (keyword arguments of :func:`kquota.execute_plan`)."""

FLAGS = Overrides("--allow-mass-removal", "--allow-protected-change", "--allow-oversubscription")
"""How the command line spells them."""


def judge(
    plan: Plan,
    policy: Policy,
    current: QuotaState | None = None,
    known: Sequence[Principal] = (),
) -> Plan:
    """judge gives ``plan`` its verdict under ``policy``; only the policy's override counts.

    Offline (``current`` None) the mass-removal guard counts the plan's own managed counts;
    with the live cluster's ``current`` state it counts the cluster's in-scope entities (the
    base the guard's share test is meant to have), and the protected principals are resolved
    again on it: those the plan names, the policy's exact ones and the ``known`` principals
    (found live: what a protected glob matches). Declared entities are the unchanged ones and
    those the plan does not delete (the planner never deletes a declared entity: it keeps at
    least one key).
    """
    if current is not None:
        managed = [values for entity, values in current.items() if policy.in_scope(entity)]
        removals = replace(
            plan.removals,
            managed_quotas=sum(len(v) for v in managed),
            managed_entities=len(managed),
        )
        plan = replace(plan, removals=removals)
    declared = plan.unchanged + sum(1 for a in plan.alterations if a.kind is not ChangeKind.DELETE)
    violation = policy.guard(plan.removals, desired_empty=declared == 0)
    plan = replace(plan, guard_violation=violation, mass_removal_allowed=policy.allow_mass_removal)
    if current is None:
        return plan
    from kquota.plan.impact import recheck_impact

    return recheck_impact(plan, current, policy, known)


CAPACITY = "capacity guard: "
"""How :attr:`Plan.refusal` starts when the capacity guard stops the plan."""
THROTTLE = "throttle guard: "
"""How :attr:`Plan.refusal` starts when the throttle guard (issue 30) stops the plan."""


def refuse(plan: Plan, overrides: Overrides = LIBRARY) -> None:
    """refuse raises :class:`GuardRefused` for a plan a guard holds back, naming the override
    of the guard that stops it, as ``overrides`` spells it."""
    refusal = plan.refusal
    if refusal is not None and refusal.startswith(THROTTLE):
        # The throttle guard (issue 30) has no override at apply: apply reads no usage, so
        # the plan is made again.
        _stop(
            refusal,
            "nothing was applied (review it with kquota plan --usage, save it with "
            "--allow-throttling --out PLAN.json, and apply that plan if this is intended)",
        )
    if refusal is not None:
        mass = plan.guard_violation is not None and not plan.mass_removal_allowed
        override = overrides.mass_removal if mass else overrides.protected_change
        if refusal.startswith(CAPACITY):
            override = overrides.oversubscription
        _stop(refusal, f"nothing was applied (pass {override} if this is intended)")


def refuse_shown(plan: Plan, out: Path | None) -> None:
    """refuse_shown is the plan command's refusal of a plan a guard holds back: the plan was
    shown, and saved to ``out`` for review only when one was given."""
    if plan.refusal is not None:
        _stop(
            plan.refusal, f"saved in {out} for review only" if out is not None else "nothing saved"
        )


def refuse_unapplied(plan: Plan) -> None:
    """refuse_unapplied is the applier's last line: a plan a guard holds back that reached it
    anyway (its callers :func:`refuse` first) is not sent."""
    if plan.refusal is not None:
        _stop(
            plan.refusal,
            "nothing was applied (re-plan with --allow-mass-removal or "
            "--allow-protected-change if this is intended)",
        )


def _stop(refusal: str, then: str) -> NoReturn:
    """_stop is the guards' one raise site: the verdict first, then what became of the plan."""
    raise GuardRefused(f"{refusal}; {then}")


__all__ = [
    "CAPACITY",
    "FLAGS",
    "THROTTLE",
    "LIBRARY",
    "GuardRefused",
    "Overrides",
    "judge",
    "refuse",
    "refuse_shown",
    "refuse_unapplied",
]
