"""The capacity part of the plan road (``plan --capacity``, issue 23): read the declared
capacity and the live broker facts, and give the plan its report
(:func:`kquota.plan.capacity.capacity_report`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kquota.model import QuotaState
from kquota.plan.resolver import Principal
from kquota.plan.types import Plan
from kquota.policy import Policy
from kquota.principals.model import Discovery
from kquota.target import Target

# The report's own modules load when a capacity report is made: every plan asks whether one
# is wanted, and most never are.
if TYPE_CHECKING:
    from kquota.kafka.broker_facts import ClusterFacts
    from kquota.plan.capacity import BrokerFacts, DeclaredCapacity

OFFLINE = "offline: a snapshot has no brokers to ask"


@dataclass(frozen=True)
class CapacityInputs:
    """CapacityInputs is what a plan's capacity report is made from besides the state: the
    declared capacity, the brokers' facts, their quota callback, the principals found."""

    declared: DeclaredCapacity | None
    facts: BrokerFacts
    callback: str | None = None
    discovery: Discovery = Discovery((), ())


def for_apply(target: Target, policy: Policy, discovery: Discovery | None) -> CapacityInputs | None:
    """for_apply is what apply needs to count the capacity guard again on the live cluster
    (None when the policy sets no ``max_oversubscription``: apply then asks nothing more)."""
    if policy.max_oversubscription is None:
        return None
    from kquota.principals.live import discover

    facts, callback, _ = broker_facts(target)
    if discovery is None:
        with target.admin() as admin:
            discovery = discover(admin)
    return CapacityInputs(declared_capacity(target), facts, callback, discovery)


def declared_capacity(target: Target) -> DeclaredCapacity | None:
    """declared_capacity is the configured cluster's ``capacity:`` (None: not declared)."""
    cluster = target.cluster
    if cluster is None or cluster.capacity is None:
        return None
    from kquota.plan.capacity import DeclaredCapacity

    c = cluster.capacity
    return DeclaredCapacity(c.ingress, c.egress, c.disk_write)


def wanted(target: Target, asked: bool | None) -> bool:
    """wanted: ``--capacity``/``--no-capacity`` when given, else on where declared."""
    return declared_capacity(target) is not None if asked is None else asked


def broker_facts(target: Target) -> tuple[BrokerFacts, str | None, ClusterFacts | None]:
    """broker_facts reads the live brokers' capacity facts, the custom quota callback they
    run (None: Kafka's default) and the settings read. A snapshot, or a cluster that will
    not say, gives facts that are unknown, with the reason."""
    from kquota.plan.capacity import BrokerFacts

    if target.offline:
        return BrokerFacts(unknown_because=OFFLINE), None, None
    from kquota.kafka import broker_facts as rpcs
    from kquota.kafka.errors import KafkaError
    from kquota.kafka.principal_rpcs import QUOTA_CALLBACK_KEY
    from kquota.principals.live import SOURCE_SECONDS
    from kquota.runtime.deadline import DeadlineExceeded, bounded, current

    try:
        with bounded(SOURCE_SECONDS, "broker facts lookup"), target.admin() as admin:
            found = admin.run(rpcs.cluster_facts)
    except KafkaError as e:
        return BrokerFacts(unknown_because=str(e)), None, None
    except DeadlineExceeded as e:
        outer = current()
        if outer is not None and outer.expired:
            raise  # the command's own deadline: nothing more can be asked
        return BrokerFacts(unknown_because=str(e)), None, None
    io = found.smallest(rpcs.IO_THREADS)
    net = found.smallest(rpcs.NETWORK_THREADS)
    facts = BrokerFacts(
        brokers=len(found.brokers),
        leaders=len(found.leaders),
        io_threads=None if io is None else int(io),
        network_threads=None if net is None else int(net),
        max_connection_creation_rate=found.smallest(rpcs.MAX_CONNECTION_CREATION_RATE),
    )
    return facts, ", ".join(found.values(QUOTA_CALLBACK_KEY)) or None, found


def with_capacity(
    plan: Plan,
    state: QuotaState,
    policy: Policy,
    principals: Sequence[Principal],
    declared: DeclaredCapacity | None,
    facts: BrokerFacts,
    callback: str | None = None,
) -> Plan:
    """with_capacity gives ``plan`` its capacity report over ``principals`` and the
    policy's protected ones."""
    from kquota.plan.capacity import DeclaredCapacity, capacity_report
    from kquota.plan.impact import with_protected
    from kquota.plan.simulate import simulate_plan

    everyone = with_protected(principals, policy)
    protect = policy.protect
    report = capacity_report(
        state,
        simulate_plan(state, plan),
        everyone,
        declared or DeclaredCapacity(),
        facts,
        protected=(lambda p: any(m.matches(p) for m in protect)) if protect else None,
        max_oversubscription=policy.max_oversubscription,
        oversubscription_allowed=policy.allow_oversubscription,
        callback=callback,
    )
    return dataclasses.replace(plan, capacity=report)
