"""The JMX exporter's names for the quota sensors: every metric of ours has exactly one."""

from __future__ import annotations

from kquota.usage.exposition import EXPOSITION_METRICS, allowed_types, metric_of, tags
from kquota.usage.rows import METRICS


def test_every_metric_has_one_exposition_name() -> None:
    assert sorted(EXPOSITION_METRICS.values()) == sorted(METRICS)
    assert metric_of("kafka_server_quota_byte_rate", "Produce") == "produce-byte-rate"
    assert metric_of("kafka_server_quota_byte_rate", "Request") is None
    assert metric_of("kafka_server_quota_byte_rate", None) is None
    assert allowed_types("kafka_server_quota_throttle_time") == ["Fetch", "Produce", "Request"]


def test_tags_from_labels() -> None:
    assert tags({"user": "alice", "client_id": ""}) == ("alice", None)
    assert tags({"client_id": "app"}) == (None, "app")
