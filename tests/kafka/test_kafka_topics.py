"""kquota.kafka.topics.described against a real broker: a topic asked for by name is its
description, or None when the cluster does not know it, and asking never creates it. The
third answer, a topic this principal may not describe, is the authorizer's: in
tests/integration/test_integration_authz.py (the lease topic and the audit topic)."""

from __future__ import annotations

import uuid

from confluent_kafka.admin import AdminClient, NewTopic

from kquota.devbroker.launcher import BrokerInfo
from kquota.kafka.topics import described
from polling import eventually


def test_a_topic_is_described_by_name_and_a_missing_one_is_none_never_created(
    kafka_broker: BrokerInfo,
) -> None:
    admin = AdminClient({"bootstrap.servers": kafka_broker.bootstrap_servers})
    topic = f"kquota-described-{uuid.uuid4().hex[:12]}"
    admin.create_topics([NewTopic(topic, num_partitions=2, replication_factor=1)])[topic].result(
        timeout=30
    )
    # A broker learns of a topic from the metadata log a moment after its creation returns.
    description = eventually(lambda: described(admin, topic, 10), lambda d: d is not None)
    assert description is not None
    assert (description.name, len(description.partitions)) == (topic, 2)
    assert description.authorized_operations is None  # not asked for
    with_operations = described(admin, topic, 10, operations=True)
    assert with_operations is not None and with_operations.authorized_operations
    # The dev broker auto-creates topics (Kafka's default): describing must not trigger it.
    typo = f"kquota-typo-{uuid.uuid4().hex[:12]}"
    assert described(admin, typo, 10) is None
    assert typo not in admin.list_topics(timeout=10).topics
