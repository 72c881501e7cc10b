"""DescribeCluster gives the id saved plans are pinned to: the id storage was formatted with."""

from __future__ import annotations

from kquota.devbroker.launcher import BrokerInfo
from kquota.kafka.admin import WireAdmin
from kquota.kafka.config import ClientConfig


def test_cluster_id_is_the_formatted_id_on_both_listeners(kafka_broker: BrokerInfo) -> None:
    with WireAdmin(kafka_broker.bootstrap_servers) as admin:
        assert admin.cluster_id() == kafka_broker.cluster_id
    sasl = ClientConfig.from_properties(
        {
            "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "SCRAM-SHA-512",
            "sasl.username": kafka_broker.username,
            "sasl.password": kafka_broker.password,
        }
    )
    with WireAdmin(kafka_broker.sasl_bootstrap_servers, sasl) as admin:
        assert admin.cluster_id() == kafka_broker.cluster_id
