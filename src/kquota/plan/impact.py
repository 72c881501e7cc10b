"""A plan's blast radius: whose effective quota it changes, and whether it may (issue 13).

Pure: given the state a plan was made against, the plan, and the principals known to use the
cluster (found by discovery, listed in a file, or protected by name), it resolves each
principal before and after with the broker's precedence (:func:`kquota.plan.resolver.
resolve`) and keeps the effective quotas whose value or source change.

Fast on large clusters without a second resolver: a principal can only change if one of the
entities it may draw a quota from is altered (:func:`kquota.plan.resolver.
resolution_changes`), so the others are skipped with a few set lookups. Defaults need nothing
special: every user's candidates include ``user=<default>``, so a change there resolves every
user principal, and only those without a quota of their own for that key come out changed.

Protected principals (:class:`kquota.policy.ProtectMatch`): a plan that lowers an
effective quota of one, or limits one that was unlimited, is stopped like a mass removal,
naming principal, key and the match each value comes from, unless the operator allows it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from kquota.display import value_with_unit
from kquota.model import QuotaState, display_entity
from kquota.plan.resolver import (
    Principal,
    ResolutionChange,
    ResolvedQuota,
    resolution_changes,
    unique_principals,
)
from kquota.plan.simulate import simulate_plan
from kquota.plan.types import Plan, PlanImpact, SourceCount
from kquota.policy import Policy


def with_protected(principals: Iterable[Principal], policy: Policy) -> tuple[Principal, ...]:
    """with_protected adds the principals the policy protects by exact name (a protected
    name is resolved even if no source found it), each principal once, sorted."""
    exact = (m.exact() for m in policy.protect)
    return unique_principals([*principals, *(p for p in exact if p is not None)])


def plan_impact(
    state: QuotaState,
    plan: Plan,
    principals: Iterable[Principal],
    policy: Policy,
    *,
    sources: Sequence[SourceCount] = (),
    quota_callback: str | None = None,
) -> PlanImpact:
    """plan_impact is ``plan``'s blast radius on ``state`` for ``principals`` (and the
    policy's protected ones), with the protected principals' verdict."""
    everyone = with_protected(principals, policy)
    after = simulate_plan(state, plan)
    altered = [a.entity for a in plan.alterations]
    changes = resolution_changes(state, after, everyone, altered=altered)
    return PlanImpact(
        changes=changes,
        sources=tuple(sources),
        principals=len(everyone),
        quota_callback=quota_callback,
        protected=protected_violations(changes, policy),
        protected_change_allowed=policy.allow_protected_change,
        resolved=everyone,
    )


def recheck_impact(
    plan: Plan, state: QuotaState, policy: Policy, known: Sequence[Principal] = ()
) -> Plan:
    """recheck_impact resolves the plan's principals, the ``known`` ones (found on the live
    cluster: whom a protected glob matches) and the policy's protected ones again against
    ``state``, the live cluster at apply: a saved plan's own verdict and values are its claim,
    not a decision, and a plan saved without ``--impact`` is judged all the same. A plan
    without impact under a policy protecting no one is returned as it is."""
    import dataclasses

    if plan.impact is None and not policy.protect:
        return plan
    old = plan.impact
    impact = plan_impact(
        state,
        plan,
        [*(() if old is None else old.resolved), *known],
        policy,
        sources=() if old is None else old.sources,
        quota_callback=None if old is None else old.quota_callback,
    )
    return dataclasses.replace(plan, impact=impact)


def tightens(change: ResolutionChange) -> bool:
    """tightens: the change lowers the effective value, or limits what was unlimited."""
    if change.after is None:
        return False
    return change.before is None or change.after.value < change.before.value


def protected_violations(changes: Sequence[ResolutionChange], policy: Policy) -> tuple[str, ...]:
    """protected_violations is one line per change that tightens a protected principal's
    quota: principal, key, before and after with the match each comes from."""
    if not policy.protect:
        return ()
    return tuple(
        describe_change(c)
        for c in changes
        if tightens(c) and any(m.matches(c.principal) for m in policy.protect)
    )


def describe_change(c: ResolutionChange) -> str:
    """describe_change is ``{user=svc} producer_byte_rate: 2048 (2 KiB/s) from {user=svc} ->
    1024 (1 KiB/s) from {user=<default>}``, names made safe to print, values in the units the
    rendered plan shows them in (the guard's verdict is read beside it)."""
    before, after = _value(c.key, c.before), _value(c.key, c.after)
    return f"{display_entity(c.principal.entity())} {c.key}: {before} -> {after}"


def _value(key: str, q: ResolvedQuota | None) -> str:
    if q is None:
        return "unlimited"
    return f"{value_with_unit(key, q.value)} from {display_entity(q.source)}"
