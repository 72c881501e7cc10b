"""kquota's own topics on a test broker, made as an operator makes them once per cluster
(``kquota topics create``): apply never creates its lease topic, so every broker an apply
runs against in the suite has it from the start."""

from __future__ import annotations

from kquota.devbroker.launcher import BrokerInfo
from kquota.operations.topics import create_topics, lease_spec
from kquota.target import Target

TOPIC_TIMEOUT = 120.0
"""A fresh broker on a loaded machine may take a while to have a controller that creates."""


def with_lease_topic(info: BrokerInfo) -> BrokerInfo:
    """with_lease_topic makes the apply lease topic on ``info``'s cluster (left as it is when
    it exists: a restarted broker keeps it) and returns ``info``."""
    create_topics(Target(bootstrap_server=info.bootstrap_servers), [lease_spec()], TOPIC_TIMEOUT)
    return info
