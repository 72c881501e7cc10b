"""The plan operation: desired state against a target's current state, stamped for saving."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kquota.model import Origin, QuotaState
from kquota.operations.desired import DesiredPaths, LoadedDesired
from kquota.operations.overrides import PolicyOverrides
from kquota.plan.controllers import Controllers
from kquota.plan.resolver import Principal, ResolutionChange, resolution_changes
from kquota.plan.simulate import simulate_plan
from kquota.plan.types import Plan
from kquota.policy import Policy, ProtectMatch
from kquota.principals.model import Discovery, SourceReport
from kquota.target import Target
from kquota.timestamps import utc_now_iso
from kquota.usage.rows import Sample

if TYPE_CHECKING:  # loaded when asked for: the replay's road loads the Kafka client layer
    from kquota.operations.capacity import CapacityInputs
    from kquota.operations.replay import UsageInputs

OFFLINE = "offline: plan against a snapshot"
"""Why the live discovery sources cannot look when the state is a snapshot file."""


@dataclass(frozen=True)
class PlanResult:
    """PlanResult is a stamped plan, the state it was planned against, how the principals
    asked about are affected, and warnings about that state (for standard error)."""

    plan: Plan
    state: QuotaState
    changes: tuple[ResolutionChange, ...] = ()
    warnings: tuple[str, ...] = ()


def ip_spelling_warnings(state: QuotaState) -> tuple[str, ...]:
    """ip_spelling_warnings names each address the cluster holds under several spellings
    (:func:`kquota.names.held_twice`): plans cannot make that safe alone."""
    from kquota.display import safe_text
    from kquota.names import held_twice

    return tuple(
        f"the cluster holds one ip address as {', '.join(map(safe_text, spellings))}:"
        " the broker enforces one limit for them, whichever was written last, and removing"
        " any of them removes it; keep one spelling (kquota alter --delete the others, then"
        " apply again)"
        for spellings in held_twice(state)
    )


@dataclass(frozen=True)
class PlanOptions:
    """PlanOptions are what a plan reports beside its changes: how the ``principals`` named
    are affected; its ``impact`` on the principals the cluster serves, and on those
    ``listed`` in files; its ``capacity`` report (None: where ``kquota.yaml`` declares a
    capacity); the throttle replay of observed ``usage`` rows (read from ``usage_source``)."""

    principals: Sequence[Principal] = ()
    impact: bool = False
    listed: Discovery | None = None
    capacity: bool | None = None
    usage: Iterable[Sample] | None = None
    usage_source: str | None = None


@dataclass(frozen=True)
class PlanRequest:
    """PlanRequest is one plan: where, what (desired state to read, or read already), under
    which policy overrides, and what it reports beside its changes."""

    target: Target
    desired: DesiredPaths | LoadedDesired
    policy: PolicyOverrides = PolicyOverrides()
    options: PlanOptions = PlanOptions()


@dataclass(frozen=True)
class PlanInputs:
    """PlanInputs are what the target told the plan beside its state: the principals
    discovered, the capacity's inputs, the other controllers at work, the usage to replay."""

    discovery: Discovery | None = None
    capacity: CapacityInputs | None = None
    controllers: Controllers | None = None
    usage: UsageInputs | None = None


def plan_against(
    request: PlanRequest,
    state: QuotaState,
    origin: Origin,
    inputs: PlanInputs = PlanInputs(),
    policy: Policy | None = None,
) -> PlanResult:
    """plan_against plans the request's desired state (read already) against ``state`` and
    stamps the plan with what a saved plan records: cluster and cluster id, desired digest,
    version, time. ``policy``: the request's, when the caller built it already.

    With a discovery (``--impact``, ``--principals``), or principals protected by the
    policy or the request, the plan carries its impact
    (:func:`kquota.plan.impact.plan_impact`) and the protected principals' verdict. With
    capacity inputs it carries its capacity report (:mod:`kquota.operations.capacity`); with
    controllers the notes on what other controllers will do with it; with usage the throttle
    replay of the observed samples (:mod:`kquota.operations.replay`).

    The caller loads the desired state first (:func:`~kquota.operations.load_desired_state`):
    local files are read and checked before any connection, so a typo is never reported as a
    network error.
    """
    from kquota.plan.planner import plan as make
    from kquota.runtime import timings
    from kquota.version import __version__

    desired = request.desired
    if not isinstance(desired, LoadedDesired):
        raise TypeError("plan_against: the request's desired state is not read yet")
    principals = request.options.principals
    warnings = ip_spelling_warnings(state)
    if policy is None:
        policy = request.policy.applied_to(request.target)
    with timings.span("plan"):
        plan = make(desired.quotas, state, policy, cluster=origin.cluster, order=desired.order)
    plan = dataclasses.replace(
        plan,
        cluster_id=origin.cluster_id,
        desired_digest=desired.digest,
        kquota_version=__version__,
        created_at=utc_now_iso(),
    )
    plan = with_impact(plan, state, policy, inputs.discovery)
    capacity = inputs.capacity
    if capacity is not None:
        from kquota.operations.capacity import with_capacity

        known = [*capacity.discovery.principals, *principals]
        plan = with_capacity(
            plan, state, policy, known, capacity.declared, capacity.facts, capacity.callback
        )
        assert plan.capacity is not None
        warnings += plan.capacity.warnings
    if inputs.usage is not None:
        from kquota.operations.replay import with_replay

        with timings.span("replay"):
            plan = with_replay(plan, state, policy, inputs.usage)
    controllers = inputs.controllers
    if controllers is not None and controllers.any:
        from kquota.plan.controllers import controller_notes

        plan = dataclasses.replace(plan, controller_notes=controller_notes(plan, controllers))
    observed = policy.observed_in(a.entity for a in plan.alterations)
    if policy.observe or observed:
        from kquota.plan.controllers import observe_note

        note = observe_note(len(observed), whole_cluster=policy.observe)
        plan = dataclasses.replace(plan, controller_notes=(*plan.controller_notes, note))
    changes: tuple[ResolutionChange, ...] = ()
    if principals:
        altered = [a.entity for a in plan.alterations]
        after = simulate_plan(state, plan)
        changes = resolution_changes(state, after, principals, altered=altered)
    return PlanResult(plan, state, changes, warnings)


def with_impact(plan: Plan, state: QuotaState, policy: Policy, discovery: Discovery | None) -> Plan:
    """with_impact gives ``plan`` its impact on the discovered principals and the policy's
    protected ones; unchanged when neither was asked for (its JSON then stays as it was)."""
    from kquota.plan.impact import plan_impact

    if discovery is None and not policy.protect:
        return plan
    found = discovery or Discovery((), ())
    impact = plan_impact(
        state,
        plan,
        found.principals,
        policy,
        sources=found.reports,
        quota_callback=found.quota_callback,
    )
    return dataclasses.replace(plan, impact=impact)


def discover_principals(target: Target, *, live: bool, listed: Discovery | None) -> Discovery:
    """discover_principals is who ``--impact`` resolves: the cluster's principals (``live``;
    a snapshot target reports each live source as offline) and those ``listed`` in files."""
    if not live or target.offline:
        return offline_discovery(live=live, listed=listed)
    from kquota.principals.live import discover

    with target.admin() as admin:
        found = discover(admin)
    return found if listed is None else found.merged(listed)


def offline_discovery(*, live: bool, listed: Discovery | None) -> Discovery:
    """offline_discovery is who ``--impact`` resolves when the state is a snapshot: the
    ``listed`` principals; each live source (when ``live`` was asked) reports it could not
    look, so no list is empty in silence."""
    from kquota.principals.live import SOURCES

    found = Discovery((), tuple(SourceReport(s, None, OFFLINE) for s in SOURCES) if live else ())
    return found if listed is None else found.merged(listed)


def make_plan(
    target: Target,
    desired: LoadedDesired,
    *,
    prune: bool | None = None,
    allow_mass_removal: bool = False,
    principals: Sequence[Principal] = (),
    impact: bool = False,
    listed: Discovery | None = None,
    protect: Sequence[ProtectMatch] = (),
    allow_protected_change: bool = False,
    capacity: bool | None = None,
    allow_oversubscription: bool = False,
    usage: Iterable[Sample] | None = None,
    usage_source: str | None = None,
    allow_throttling: bool = False,
) -> PlanResult:
    """make_plan is :func:`run_plan` with its request spelled as keyword arguments, each
    checked: it reads the target's current state (snapshot or live) and plans against it.

    ``impact`` asks the cluster who it serves (:mod:`kquota.principals.live`); ``listed``
    principals (:func:`kquota.principals.listed.read_principals`) are resolved too.
    ``capacity`` (None: on where ``kquota.yaml`` declares a capacity) adds the capacity
    report, over the principals discovered (the cluster is asked even without ``impact``).
    ``usage`` (observed :class:`kquota.usage.rows.Sample` rows, from ``usage_source``) adds
    the throttle replay, over the brokers' quota window (read from a live cluster).
    """
    from kquota import argcheck as check

    check.instance(target, Target, "make_plan: target", "a kquota.Target")
    check.instance(desired, LoadedDesired, "make_plan: desired", "a kquota.LoadedDesired")
    check.optional_flag(prune, "make_plan: prune")
    check.flag(allow_mass_removal, "make_plan: allow_mass_removal")
    principals = check.items(principals, Principal, "make_plan: principals", "kquota.Principal")
    check.flag(impact, "make_plan: impact")
    check.optional(listed, Discovery, "make_plan: listed", "a Discovery")
    protect = check.items(protect, ProtectMatch, "make_plan: protect", "ProtectMatch")
    check.flag(allow_protected_change, "make_plan: allow_protected_change")
    check.optional_flag(capacity, "make_plan: capacity")
    check.flag(allow_oversubscription, "make_plan: allow_oversubscription")
    check.optional(usage, Iterable, "make_plan: usage", "an iterable of kquota Sample rows")
    check.optional(usage_source, str, "make_plan: usage_source", "a str")
    check.flag(allow_throttling, "make_plan: allow_throttling")
    overrides = PolicyOverrides(
        prune,
        allow_mass_removal,
        protect,
        allow_protected_change,
        allow_oversubscription,
        allow_throttling,
    )
    options = PlanOptions(principals, impact, listed, capacity, usage, usage_source)
    return run_plan(PlanRequest(target, desired, overrides, options))


def run_plan(request: PlanRequest) -> PlanResult:
    """run_plan is the whole road of a plan, the CLI's and the library's alike: desired state
    still to be read is read first (its warnings lead the result's), then the target's
    current state (snapshot or live), the principals, capacity facts, controllers and usage
    window asked for, and the plan against them (:func:`plan_against`)."""
    from kquota.operations import capacity as cap
    from kquota.operations.controllers import controllers_of

    target, asked = request.target, request.options
    loaded: tuple[str, ...] = ()
    if isinstance(request.desired, DesiredPaths):  # local files before the network
        desired = request.desired.load(target)
        loaded = tuple(map(str, desired.warnings))
        request = dataclasses.replace(request, desired=desired)
    state, origin = target.load_state_and_origin()
    discovery = None
    if asked.impact or asked.listed is not None:
        discovery = discover_principals(target, live=asked.impact, listed=asked.listed)
    inputs = None
    settings = None
    if cap.wanted(target, asked.capacity):
        facts, callback, settings = cap.broker_facts(target)
        found = discovery
        if found is None:
            found = discover_principals(target, live=not target.offline, listed=None)
        inputs = cap.CapacityInputs(cap.declared_capacity(target), facts, callback, found)
    usage_in = None
    if asked.usage is not None:
        from kquota.operations.replay import usage_inputs

        if settings is None and not target.offline:
            settings = cap.broker_facts(target)[2]
        usage_in = usage_inputs(target, asked.usage, settings, asked.usage_source)
    found_callback = None if discovery is None else discovery.quota_callback
    controllers = controllers_of(target, settings, found_callback)
    result = plan_against(
        request, state, origin, PlanInputs(discovery, inputs, controllers, usage_in)
    )
    if loaded:
        result = dataclasses.replace(result, warnings=(*loaded, *result.warnings))
    return result
