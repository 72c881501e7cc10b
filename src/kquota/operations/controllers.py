"""Who else manages a cluster's quotas (issue 23 item 2): the controllers from ``kquota.yaml``
and, when the plan read them, the brokers' settings (:mod:`kquota.plan.controllers`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kquota.plan.controllers import Controllers, strimzi_evidence
from kquota.target import Target

if TYPE_CHECKING:
    from kquota.kafka.broker_facts import ClusterFacts


def controllers_of(
    target: Target, facts: ClusterFacts | None = None, callback: str | None = None
) -> Controllers:
    """controllers_of is what ``target``'s config declares, with what ``facts`` (the brokers'
    settings, when read) and ``callback`` (the custom quota callback found) add."""
    cluster = target.cluster
    declared = None if cluster is None else cluster.platform
    callbacks = [callback] if callback else []
    listeners: tuple[str, ...] = ()
    inter: tuple[str, ...] = ()
    if facts is not None:  # read from the brokers: the wire's names (an offline plan has none)
        from kquota.kafka.broker_facts import INTER_BROKER_LISTENER, LISTENERS
        from kquota.kafka.principal_rpcs import QUOTA_CALLBACK_KEY

        callbacks += facts.values(QUOTA_CALLBACK_KEY)
        listeners, inter = facts.values(LISTENERS), facts.values(INTER_BROKER_LISTENER)
    strimzi = None
    if declared != "kafka":  # declared plain Kafka: no guessing from names
        strimzi = strimzi_evidence(
            declared=declared, callbacks=callbacks, listeners=listeners, inter_broker=inter
        )
    shown = ", ".join(sorted(set(callbacks))) or None
    return Controllers(
        strimzi=strimzi,
        keeps_defaults=cluster is not None and cluster.strimzi_quotas_type == "kafka",
        kafka_users=frozenset(() if cluster is None else cluster.kafka_users),
        callback=shown,
    )
