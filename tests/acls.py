"""Principals and ACLs on the authorizer broker, made through Kafka's own admin API
(confluent-kafka, as the super user ``admin``): SCRAM users and ALLOW ACLs, waited for until
the broker enforces them (both travel through the metadata log)."""

from __future__ import annotations

import time
from typing import Any, TypeVar

from confluent_kafka import KafkaException
from confluent_kafka.admin import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AdminClient,
    NewTopic,
    ResourcePatternType,
    ResourceType,
    ScramCredentialInfo,
    ScramMechanism,
    UserScramCredentialUpsertion,
)

from kquota.devbroker.launcher import BrokerInfo

_B = TypeVar("_B", AclBinding, AclBindingFilter)


def sasl_properties(broker: BrokerInfo, user: str, password: str) -> dict[str, str]:
    """sasl_properties: librdkafka/kquota client properties for USER on the SASL listener."""
    return {
        "bootstrap.servers": broker.sasl_bootstrap_servers,
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": "SCRAM-SHA-256",
        "sasl.username": user,
        "sasl.password": password,
    }


def _admin(broker: BrokerInfo) -> AdminClient:
    return AdminClient(sasl_properties(broker, "admin", broker.users["admin"]))


def _wait(futures: dict[Any, Any]) -> None:
    for f in futures.values():
        f.result(timeout=30)


def add_user(broker: BrokerInfo, user: str, password: str) -> None:
    """add_user creates a SCRAM-SHA-256 user and waits until it can log in."""
    upsert = UserScramCredentialUpsertion(
        user, ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 4096), password.encode()
    )
    admin = _admin(broker)  # held: a collected client fails its pending futures
    _wait(admin.alter_user_scram_credentials([upsert]))
    probe = AdminClient(sasl_properties(broker, user, password))
    deadline = time.monotonic() + 30
    while True:
        try:
            probe.list_topics(timeout=5)
            return
        except KafkaException:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def allow(
    broker: BrokerInfo,
    user: str,
    operation: AclOperation,
    resource: tuple[ResourceType, str] = (ResourceType.BROKER, "kafka-cluster"),
) -> None:
    """allow adds an ALLOW ACL for User:USER (default resource: the cluster)."""
    admin = _admin(broker)  # held while its futures run: a collected client cancels them
    _wait(admin.create_acls([_allowed(AclBinding, user, operation, resource)]))


def revoke(
    broker: BrokerInfo,
    user: str,
    operation: AclOperation,
    resource: tuple[ResourceType, str],
) -> None:
    """revoke deletes the ALLOW ACL that :func:`allow` made."""
    admin = _admin(broker)
    _wait(admin.delete_acls([_allowed(AclBindingFilter, user, operation, resource)]))


def _allowed(
    kind: type[_B], user: str, operation: AclOperation, resource: tuple[ResourceType, str]
) -> _B:
    """_allowed is the ALLOW ACL (a binding, or the filter that finds it) of User:USER."""
    return kind(
        resource[0],
        resource[1],
        ResourcePatternType.LITERAL,
        f"User:{user}",
        "*",
        operation,
        AclPermissionType.ALLOW,
    )


def create_topic(broker: BrokerInfo, topic: str) -> None:
    """create_topic makes a one-partition topic as the super user."""
    admin = _admin(broker)
    _wait(admin.create_topics([NewTopic(topic, num_partitions=1, replication_factor=1)]))
