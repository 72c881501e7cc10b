"""kquota's own topics on a test broker, made as an operator makes them once per cluster
(``kquota topics create``): apply never creates its lease topic, so every broker an apply
runs against in the suite has it from the start."""

from __future__ import annotations

import time

from kquota.devbroker.launcher import BrokerInfo
from kquota.kafka.topics import TopicAdmin
from kquota.operations.topics import create_topics, lease_spec
from kquota.target import Target

TOPIC_TIMEOUT = 120.0
"""A fresh broker on a loaded machine may take a while to have a controller that creates."""


def with_lease_topic(info: BrokerInfo) -> BrokerInfo:
    """with_lease_topic makes the apply lease topic on ``info``'s cluster (left as it is when
    it exists: a restarted broker keeps it) and returns ``info``. It waits, bounded, until
    every node of a multi-node cluster is registered first: the topic gets a replica per
    node, up to three, as it would on a cluster that is up (the fault tests kill nodes)."""
    target = Target(bootstrap_server=info.bootstrap_servers)
    nodes = len(info.nodes or [info])
    end = time.monotonic() + TOPIC_TIMEOUT
    admin = TopicAdmin(target.client_properties())
    while admin.look([], 30)[0] < nodes:
        assert time.monotonic() < end, f"{nodes} brokers never registered"
        time.sleep(0.2)
    create_topics(target, [lease_spec()], TOPIC_TIMEOUT)
    return info
