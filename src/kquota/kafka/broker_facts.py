"""What the brokers say about their capacity and who else manages them (issue 23).

One Metadata request (every topic: partition leadership) and, on each live broker, one
DescribeConfigs for its own static settings: thread counts, the connection-rate limit, the
quota callback class and the listener names (a Strimzi-built broker names its listeners
``REPLICATION-9091``, ``PLAIN-9092``, …). A broker describes only its own static configs,
so each is asked for itself, as :func:`kquota.kafka.principal_rpcs.quota_callbacks` does.
Errors raise :class:`~kquota.kafka.errors.KafkaError`; the caller reports why.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kquota.kafka.discovery import join_host_port
from kquota.kafka.errors import KafkaApiError
from kquota.kafka.principal_rpcs import QUOTA_CALLBACK_KEY, _ask, _failure
from kquota.kafka.protocol import DESCRIBE_CONFIGS, METADATA

if TYPE_CHECKING:
    from kquota.kafka.admin import AsyncWireAdmin

IO_THREADS = "num.io.threads"
NETWORK_THREADS = "num.network.threads"
MAX_CONNECTION_CREATION_RATE = "max.connection.creation.rate"
LISTENERS = "listeners"
INTER_BROKER_LISTENER = "inter.broker.listener.name"
QUOTA_WINDOW_NUM = "quota.window.num"
QUOTA_WINDOW_SIZE_SECONDS = "quota.window.size.seconds"
CONFIG_KEYS = (
    IO_THREADS,
    NETWORK_THREADS,
    MAX_CONNECTION_CREATION_RATE,
    QUOTA_WINDOW_NUM,
    QUOTA_WINDOW_SIZE_SECONDS,
    QUOTA_CALLBACK_KEY,
    LISTENERS,
    INTER_BROKER_LISTENER,
)
_BROKER_RESOURCE = 4
_ALL_TOPICS: dict[str, Any] = {
    "Topics": None,  # null: every topic (v1+)
    "AllowAutoTopicCreation": False,
    "IncludeClusterAuthorizedOperations": False,
    "IncludeTopicAuthorizedOperations": False,
}


@dataclass(frozen=True)
class ClusterFacts:
    """ClusterFacts is the live brokers' ids, the brokers leading at least one partition,
    and each broker's settings among :data:`CONFIG_KEYS` (None: unset or not readable)."""

    brokers: tuple[int, ...]
    leaders: tuple[int, ...]
    configs: Mapping[int, Mapping[str, str | None]]

    def smallest(self, key: str) -> float | None:
        """smallest is ``key``'s smallest numeric value over the brokers (None: none set)."""
        values = []
        for config in self.configs.values():
            raw = config.get(key)
            try:
                values.append(float(raw)) if raw is not None else None
            except ValueError:
                continue
        return min(values) if values else None

    def values(self, key: str) -> tuple[str, ...]:
        """values are ``key``'s distinct values over the brokers, sorted."""
        return tuple(sorted({v for c in self.configs.values() if (v := c.get(key))}))


async def cluster_facts(core: AsyncWireAdmin) -> ClusterFacts:
    """cluster_facts reads leadership from Metadata and each live broker's own settings."""
    conns = await core.broker_connections()
    metadata = await _ask(conns[0], METADATA, _ALL_TOPICS)
    brokers = tuple(sorted(b["NodeId"] for b in metadata["Brokers"]))
    leaders = sorted(
        {
            p["LeaderId"]
            for t in metadata.get("Topics") or ()
            for p in t.get("Partitions") or ()
            if p.get("LeaderId", -1) >= 0
        }
    )
    ids = {join_host_port(b["Host"], b["Port"]): b["NodeId"] for b in metadata["Brokers"]}
    if len(ids) == 1:
        ids = {conn.address: next(iter(ids.values())) for conn in conns}
    configs: dict[int, dict[str, str | None]] = {}
    for conn in conns:
        broker_id = ids.get(conn.address)
        if broker_id is None or broker_id in configs:
            continue
        request = {
            "Resources": [
                {
                    "ResourceType": _BROKER_RESOURCE,
                    "ResourceName": str(broker_id),
                    "ConfigurationKeys": list(CONFIG_KEYS),
                }
            ],
            "IncludeSynonyms": False,
            "IncludeDocumentation": False,
        }
        body = await _ask(conn, DESCRIBE_CONFIGS, request)
        for result in body["Results"]:
            if result["ErrorCode"]:
                raise _failure(core, DESCRIBE_CONFIGS, result["ErrorCode"], result["ErrorMessage"])
            configs[broker_id] = {c["Name"]: c["Value"] or None for c in result["Configs"]}
    if not configs:
        raise KafkaApiError(
            -1, "no live broker could be matched to its id", context="DescribeConfigs"
        )
    return ClusterFacts(brokers, tuple(leaders), configs)
