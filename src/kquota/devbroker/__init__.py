"""A real Apache Kafka broker for development and tests, run from Maven Central jars.

``kquota dev-broker start`` resolves the jars of a pinned Kafka release with Maven into a
cache, formats KRaft storage and runs a combined broker+controller on free loopback ports
with a PLAINTEXT listener and a SASL_PLAINTEXT listener (PLAIN, SCRAM-SHA-256/512); with
``--zookeeper`` (Kafka 3.x) a ZooKeeper-mode broker and its ZooKeeper instead
(:mod:`kquota.devbroker.zookeeper`).
"""

from kquota.devbroker.jars import DEFAULT_KAFKA_VERSION, SUPPORTED_KAFKA_VERSIONS, KafkaJars
from kquota.devbroker.launcher import BrokerInfo, broker_status, start_broker, stop_broker

__all__ = [
    "DEFAULT_KAFKA_VERSION",
    "SUPPORTED_KAFKA_VERSIONS",
    "BrokerInfo",
    "KafkaJars",
    "broker_status",
    "start_broker",
    "stop_broker",
]
