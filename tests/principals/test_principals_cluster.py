"""Discovery on three nodes: groups are listed and described at the broker coordinating
each, so members of groups on different coordinators are all found; each broker's quota
callback setting is read from that broker."""

from __future__ import annotations

import secrets
import time

import pytest
from confluent_kafka import Consumer
from confluent_kafka.admin import AdminClient, NewTopic

from cluster_harness import NODE_IDS, ThreeNodes
from kquota.kafka import principal_rpcs
from kquota.kafka.admin import WireAdmin
from kquota.principals.live import discover
from kquota.principals.model import SourceReport

pytestmark = pytest.mark.integration

T = secrets.token_hex(3)
OFFSETS_TOPIC = "__consumer_offsets"


def java_hash(text: str) -> int:
    """java_hash is Java's String.hashCode (a group's offsets partition derives from it)."""
    h = 0
    for unit in text.encode("utf-16-be").hex(" ", 2).split():
        h = (31 * h + int(unit, 16)) & 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h


def _member(bootstrap: str, group: str, topic: str) -> Consumer:
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "client.id": f"app-{group}",
            "auto.offset.reset": "earliest",
        }
    )
    consumer.subscribe([topic])
    deadline = time.monotonic() + 60
    while not consumer.assignment():
        assert time.monotonic() < deadline, f"{group} was never assigned {topic}"
        consumer.poll(0.2)
    return consumer


def _offsets_leader(admin: AdminClient, group: str) -> int:
    """_offsets_leader is the current leader of ``group``'s offsets partition: where its
    coordinator most likely sits."""
    partitions = admin.list_topics(OFFSETS_TOPIC, timeout=30).topics[OFFSETS_TOPIC].partitions
    return partitions[(java_hash(group) & 0x7FFFFFFF) % len(partitions)].leader


def _coordinator(admin: AdminClient, group: str) -> int:
    described = admin.describe_consumer_groups([group])[group].result(timeout=30)
    return int(described.coordinator.id)


def test_groups_on_every_coordinator_are_found(three_nodes: ThreeNodes) -> None:
    bootstrap = three_nodes.address(1)
    admin = AdminClient({"bootstrap.servers": bootstrap})
    topic = f"members-{T}"
    admin.create_topics([NewTopic(topic, num_partitions=1, replication_factor=1)])[topic].result(
        timeout=30
    )
    groups = [f"first-{T}"]
    consumers = [_member(bootstrap, groups[0], topic)]  # makes the offsets topic
    try:
        # One more group per node. The offsets partition's leader only predicts the coordinator
        # (leaders still settle after the offsets topic is made), so each candidate is joined
        # and the coordinator it really got is what counts.
        wanted = set(NODE_IDS) - {_coordinator(admin, groups[0])}
        joined = 0
        for i in range(200):
            if not wanted or joined >= 12:
                break
            group = f"g{i}-{T}"
            if _offsets_leader(admin, group) not in wanted:
                continue
            groups.append(group)
            consumers.append(_member(bootstrap, group, topic))
            joined += 1
            wanted.discard(_coordinator(admin, group))
        assert not wanted, f"no group found for nodes {wanted} after {joined} joins"
        described = admin.describe_consumer_groups(groups)
        coordinators = {f.result(timeout=30).coordinator.id for f in described.values()}
        assert coordinators == set(NODE_IDS), "the groups must sit on every coordinator"

        with WireAdmin(three_nodes.address(2)) as kq:
            found = discover(kq)
            callbacks = kq.run(principal_rpcs.quota_callbacks)
        clients = {p.client_id for p in found.principals if p.client_id}
        assert {f"app-{g}" for g in groups} <= clients
        report = next(r for r in found.reports if r.source == "group-members")
        assert report == SourceReport("group-members", len(clients))
        assert callbacks == dict.fromkeys(NODE_IDS)
        assert found.quota_callback is None
    finally:
        for c in consumers:
            c.close()
