"""The topics kquota keeps on a cluster, created on request and never altered.

librdkafka's AdminClient (confluent-kafka), as the audit producer and the lease use it:
Metadata requests for the brokers and, by name, for each topic (partitions, replicas),
DescribeConfigs for an existing topic's settings, CreateTopics (KIP-4) for a missing one.
Nothing here alters a topic that exists: its settings are read and reported, so an operator
who made the topic by hand, or with other settings on purpose, keeps them.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kquota.errors import KquotaError
from kquota.kafka.librdkafka import (
    PRODUCER_ONLY,
    Scrubber,
    ScrubbingLogger,
    error_code,
    producer_config,
)
from kquota.secrets import is_secret

_log = logging.getLogger(__name__)


class TopicError(KquotaError):
    """TopicError: a topic could not be looked at or created; the message says why."""


@dataclass(frozen=True)
class TopicSpec:
    """TopicSpec is a topic as kquota would create it: its job (for messages), partitions,
    and the topic configs that job needs. The replication factor and ``min.insync.replicas``
    depend on the cluster's size: :func:`replication_for`."""

    name: str
    job: str
    partitions: int
    configs: Mapping[str, str]


@dataclass(frozen=True)
class TopicFacts:
    """TopicFacts is an existing topic as the cluster reports it."""

    name: str
    partitions: int
    replication_factor: int
    configs: Mapping[str, str] = field(default_factory=dict)


def replication_for(brokers: int) -> tuple[int, int]:
    """replication_for: the replication factor and ``min.insync.replicas`` of a topic on a
    cluster of ``brokers``: three copies where there are three brokers (as Kafka's own
    internal topics), and writes (``acks=all``) confirmed by all but one of them, so one
    broker down neither loses a record nor stops the writes."""
    replicas = max(1, min(3, brokers))
    return replicas, max(1, replicas - 1)


def described(
    admin: Any, name: str, timeout: float, *, operations: bool = False, margin: float = 1.0
) -> Any | None:
    """described is topic ``name`` as the cluster describes it (librdkafka's
    ``TopicDescription``; with ``operations``, the operations this principal may perform on
    it), or None when the cluster does not know it (UNKNOWN_TOPIC_OR_PART).

    The topic is asked for by name: a listing (Metadata for every topic) leaves out the
    topics this principal may not Describe, so it cannot tell a topic it may not see from a
    missing one; asked by name, the broker answers TOPIC_AUTHORIZATION_FAILED for the first.
    Every refusal but a missing topic is the client's KafkaException, raised for the caller
    to word (what it needs the topic for); no answer within ``timeout`` (and ``margin``, for
    the client's own timeout to be the one seen first) is TimeoutError.
    """
    from confluent_kafka import KafkaError, KafkaException, TopicCollection

    try:
        futures = admin.describe_topics(
            TopicCollection([name]),
            include_authorized_operations=operations,
            request_timeout=timeout,
        )
        return futures[name].result(timeout=timeout + margin)
    except KafkaException as e:
        if error_code(e) == KafkaError.UNKNOWN_TOPIC_OR_PART:
            return None
        raise


class TopicAdmin:
    """TopicAdmin looks at and creates topics on one cluster (kquota's client properties)."""

    def __init__(self, client_properties: Mapping[str, str]) -> None:
        from confluent_kafka import KafkaException
        from confluent_kafka.admin import AdminClient

        mapped = producer_config(client_properties)
        self._scrub = Scrubber(
            client_properties, extra=(v for k, v in mapped.items() if is_secret(k))
        )
        self._client_error: str | None = None
        settings: dict[str, Any] = {k: v for k, v in mapped.items() if k not in PRODUCER_ONLY}
        settings["logger"] = ScrubbingLogger(self._scrub, _log)
        settings["error_cb"] = self._on_error
        try:
            self._admin = AdminClient(settings)
        except KafkaException as e:
            raise TopicError(f"cannot set up the admin client: {self._message(e)}") from None

    def _on_error(self, err: Any) -> None:
        # Client-level errors (connection refused, authentication) explain a timeout.
        self._client_error = self._scrub(err.str())

    def _message(self, e: BaseException) -> str:
        err: Any = e.args[0] if e.args else None
        text = err.str() if hasattr(err, "str") else str(e)
        return self._scrub(str(text))

    def _why(self) -> str:
        return f" (last client error: {self._client_error})" if self._client_error else ""

    def look(
        self, names: Sequence[str], timeout: float
    ) -> tuple[int, dict[str, TopicFacts], tuple[str, ...]]:
        """look: how many brokers the cluster has, those of ``names`` that exist, and those
        this principal may not describe (whether they exist, the cluster does not say).

        Each topic is asked for by name (:func:`described`): a listing leaves out the topics
        this principal may not Describe, which would then look missing and be created.
        """
        from confluent_kafka import KafkaError, KafkaException
        from confluent_kafka.admin import (  # type: ignore[attr-defined]
            ConfigResource,
            ResourceType,
        )

        end = time.monotonic() + timeout
        try:
            metadata = self._admin.list_topics(timeout=max(0.1, timeout))
        except KafkaException as e:
            raise TopicError(
                f"cannot read the cluster's metadata: {self._message(e)}{self._why()}"
            ) from None
        found: dict[str, TopicFacts] = {}
        hidden: list[str] = []
        resources = []
        for name in names:
            try:
                topic = described(self._admin, name, max(0.1, end - time.monotonic()))
            except KafkaException as e:
                if error_code(e) == KafkaError.TOPIC_AUTHORIZATION_FAILED:
                    hidden.append(name)
                    continue
                raise TopicError(
                    f"topic {name}: cannot describe it: {self._message(e)}{self._why()}"
                ) from None
            except TimeoutError:
                raise TopicError(
                    f"topic {name}: the cluster did not describe it within {timeout:.0f} s"
                    f"{self._why()}"
                ) from None
            if topic is None:
                continue
            partitions = list(topic.partitions)
            replication = max((len(p.replicas) for p in partitions), default=0)
            found[name] = TopicFacts(name, len(partitions), replication)
            resources.append(ConfigResource(ResourceType.TOPIC, name))
        if resources:
            futures = self._admin.describe_configs(
                resources, request_timeout=max(0.1, end - time.monotonic())
            )
            for resource, future in futures.items():
                try:
                    entries = future.result(timeout=max(0.1, end - time.monotonic()))
                except (KafkaException, TimeoutError) as e:
                    raise TopicError(
                        f"topic {resource.name}: cannot read its settings: {self._message(e)}"
                    ) from None
                configs = {k: str(v.value) for k, v in entries.items() if v.value is not None}
                facts = found[resource.name]
                found[resource.name] = TopicFacts(
                    facts.name, facts.partitions, facts.replication_factor, configs
                )
        return len(metadata.brokers), found, tuple(hidden)

    def create(self, spec: TopicSpec, brokers: int, timeout: float) -> TopicFacts:
        """create makes ``spec`` on a cluster of ``brokers``; a topic made meanwhile by
        someone else is a TopicError, never altered."""
        from confluent_kafka import KafkaError, KafkaException
        from confluent_kafka.admin import NewTopic  # type: ignore[attr-defined]

        replicas, min_insync = replication_for(brokers)
        configs = {**spec.configs, "min.insync.replicas": str(min_insync)}
        futures = self._admin.create_topics(
            [NewTopic(spec.name, spec.partitions, replicas, config=configs)],
            request_timeout=max(0.1, timeout),
            operation_timeout=max(0.1, timeout),
        )
        try:
            futures[spec.name].result(timeout=max(0.1, timeout) + 1.0)
        except TimeoutError:
            raise TopicError(
                f"topic {spec.name}: the cluster did not confirm its creation within "
                f"{timeout:.0f} s{self._why()}"
            ) from None
        except KafkaException as e:
            code = error_code(e)
            if code == KafkaError.TOPIC_ALREADY_EXISTS:
                raise TopicError(
                    f"topic {spec.name} was created by someone else meanwhile; left as it is"
                ) from None
            if code in (
                KafkaError.TOPIC_AUTHORIZATION_FAILED,
                KafkaError.CLUSTER_AUTHORIZATION_FAILED,
            ):
                raise TopicError(
                    f"topic {spec.name}: not allowed to create it (kquota's principal needs "
                    "Create on the cluster or on the topic; or an administrator creates it "
                    "with the settings shown by this command)"
                ) from None
            raise TopicError(f"topic {spec.name}: cannot create it: {self._message(e)}") from None
        return TopicFacts(spec.name, spec.partitions, replicas, configs)
