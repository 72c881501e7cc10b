"""The topics operation: kquota's own topics (the audit trail, the apply lease), created when
an operator asks (``kquota topics create``) with the settings their jobs need, never altered.

The audit topic is never created by anything else (apply refuses a missing one, so a typo
cannot become a topic). An existing topic is reported as it is, with every setting that
differs from what kquota would have made: changing a topic an operator may have tuned is a
decision this command does not take.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from kquota.kafka.topics import (
    TopicAdmin,
    TopicError,
    TopicFacts,
    TopicSpec,
    replication_for,
)
from kquota.target import Target

AUDIT_RETENTION_DAYS = 3 * 365
"""How long the audit trail keeps an event: years, not Kafka's default week, since a trail is
read back long after the change (who lowered this quota last spring?)."""


def audit_spec(topic: str) -> TopicSpec:
    """audit_spec: one partition, so every reader sees the trail in the order it was written
    (a few events per apply; ordering matters more than throughput), deleted only by age."""
    return TopicSpec(
        topic,
        "the audit trail",
        1,
        {"cleanup.policy": "delete", "retention.ms": str(AUDIT_RETENTION_DAYS * 24 * 3600 * 1000)},
    )


def lease_spec() -> TopicSpec:
    """lease_spec: the lease topic as apply itself makes it (:mod:`kquota.apply.lease`): one
    partition (one order of claims), the broker's clock, time retention, never compaction."""
    from kquota.apply.lease import LEASE_TOPIC, TOPIC_CONFIG

    return TopicSpec(LEASE_TOPIC, "the apply lease", 1, dict(TOPIC_CONFIG))


@dataclass(frozen=True)
class TopicOutcome:
    """TopicOutcome is one topic after the command: made now, or found, and then every
    setting of it that differs from what kquota would have set (``name: is, kquota: would``)."""

    spec: TopicSpec
    created: bool
    facts: TopicFacts
    differences: tuple[str, ...] = ()


def create_topics(target: Target, specs: Sequence[TopicSpec], timeout: float) -> list[TopicOutcome]:
    """create_topics makes those of ``specs`` the cluster lacks and reports the others; it
    makes none when this principal may not describe one of them."""
    from kquota.audit import AuditError, topic_name_problem

    for spec in specs:
        problem = topic_name_problem(spec.name)
        if problem is not None:
            raise AuditError(problem)
    admin = TopicAdmin(target.client_properties())
    brokers, existing, hidden = admin.look([s.name for s in specs], timeout)
    if hidden:
        raise TopicError(_not_described([s for s in specs if s.name in hidden], target))
    out = []
    for spec in specs:
        facts = existing.get(spec.name)
        if facts is None:
            out.append(TopicOutcome(spec, True, admin.create(spec, brokers, timeout)))
        else:
            out.append(TopicOutcome(spec, False, facts, _differences(spec, facts, brokers)))
    return out


def _not_described(specs: Sequence[TopicSpec], target: Target) -> str:
    """_not_described refuses the whole command, before anything is made, for topics this
    principal may not describe: the broker answers so whether or not such a topic exists, and
    creating one that does would fail confusingly (or, were it missing, make a topic the
    principal could not see afterwards)."""
    from kquota.kafka.authz import shown_principal

    who = shown_principal(target.config)
    lines = [
        f"topic {s.name} ({s.job}): {who} is not allowed to describe it, so kquota cannot "
        "tell whether it exists (kquota topics create needs Describe on the topic, and Create "
        "on the cluster or on the topic to make it)"
        for s in specs
    ]
    return "\n".join([*lines, "nothing was created"])


def _differences(spec: TopicSpec, facts: TopicFacts, brokers: int) -> tuple[str, ...]:
    replicas, min_insync = replication_for(brokers)
    wanted = {**spec.configs, "min.insync.replicas": str(min_insync)}
    found = []
    if facts.partitions != spec.partitions:
        found.append(f"partitions: {facts.partitions}, kquota: {spec.partitions}")
    if facts.replication_factor < replicas:
        found.append(f"replication factor: {facts.replication_factor}, kquota: {replicas}")
    for key, value in wanted.items():
        have = facts.configs.get(key)
        if have is not None and have != value:
            found.append(f"{key}: {have}, kquota: {value}")
    return tuple(found)


def create_command(target: Target, audit_topic: str | None = None) -> str:
    """create_command is the ``kquota topics create`` line that makes the topics of
    ``target``'s cluster as this command reached it: by ``--cluster NAME`` when it was named
    so, else by its bootstrap servers (and the same ``--command-config``); ``--audit-topic``
    when the topic is not the cluster's configured one. Shown to the operator, so quoted for a
    shell and made safe to print."""
    from kquota.display import safe_text

    words = ["kquota", "topics", "create"]
    if target.cluster_name and not target.policy_only:
        words += ["--cluster", target.cluster_name]
    else:
        servers = target.bootstrap_server or target.properties.get("bootstrap.servers")
        words += ["--bootstrap-server", servers or "HOST:PORT"]
        if target.command_config is not None:
            words += ["--command-config", str(target.command_config)]
    if audit_topic and audit_topic != target.audit_topic:
        words += ["--audit-topic", audit_topic]
    return safe_text(" ".join(shlex.quote(w) for w in words))


def missing_lease_topic(target: Target, audit_topic: str | None = None) -> Callable[[str], str]:
    """missing_lease_topic words an apply's refusal when ``target``'s cluster has no lease
    topic: the cluster, the topic, and the command that makes it (with the apply's audit
    topic, which it makes too)."""
    from kquota.apply.lease import missing_topic

    return lambda topic: missing_topic(topic, target.label, create_command(target, audit_topic))


def missing_audit_topic(target: Target, topic: str) -> str:
    """missing_audit_topic is the refusal of a write to an audit topic the cluster lacks:
    the cluster, the topic, the command that makes it."""
    from kquota.display import safe_text

    where = f"cluster {safe_text(target.label)}: " if target.label else ""
    return (
        f"{where}audit topic {topic!r} does not exist; create it with "
        f"`{create_command(target, topic)}` (kquota never lets a topic be auto-created, so a "
        "typo cannot become a new topic)"
    )
