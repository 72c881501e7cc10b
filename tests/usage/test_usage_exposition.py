"""The JMX exporter's names for the quota sensors: every metric of ours has exactly one."""

from __future__ import annotations

from importlib import resources

import pytest

from kquota.usage.exposition import (
    EXPOSITION_METRICS,
    ExpositionError,
    SeriesIdentity,
    allowed_types,
    jmx_unquote,
    metric_of,
    series_identity,
    tags,
)
from kquota.usage.rows import METRICS, PRODUCE_BYTE_RATE, REQUEST_THROTTLE_TIME, REQUEST_TIME


def test_every_metric_has_one_exposition_name() -> None:
    assert sorted(EXPOSITION_METRICS.values()) == sorted(METRICS)
    assert metric_of("kafka_server_quota_byte_rate", "Produce") == "produce-byte-rate"
    assert metric_of("kafka_server_quota_byte_rate", "Request") is None
    assert metric_of("kafka_server_quota_byte_rate", None) is None
    assert allowed_types("kafka_server_quota_throttle_time") == ["Fetch", "Produce", "Request"]


def test_tags_from_labels() -> None:
    assert tags({"user": "alice", "client_id": ""}) == ("alice", None)
    assert tags({"client_id": "app"}) == (None, "app")


def test_the_shipped_rules_write_the_names_read_here() -> None:
    rules = resources.files("kquota.devbroker").joinpath("jmx-exporter.yaml").read_text()
    for name, kind in EXPOSITION_METRICS:
        assert f"name: {name}\n" in rules
        assert kind in rules


def test_both_tags() -> None:
    labels = {"type": "Produce", "user": "alice", "client_id": "app-1", "instance": "b1:9404"}
    assert series_identity("kafka_server_quota_byte_rate", labels) == SeriesIdentity(
        PRODUCE_BYTE_RATE, "alice", "app-1"
    )


def test_a_missing_or_empty_tag_is_none() -> None:
    assert series_identity(
        "kafka_server_quota_request_time", {"type": "Request", "client_id": "c", "user": ""}
    ) == SeriesIdentity(REQUEST_TIME, None, "c")
    assert series_identity(
        "kafka_server_quota_throttle_time", {"type": "Request", "user": "u"}
    ) == SeriesIdentity(REQUEST_THROTTLE_TIME, "u", None)


def test_kafka_encodings_are_undone() -> None:
    # The user tag is URL-encoded by Kafka; a client-id with reserved characters JMX-quoted.
    got = series_identity(
        "kafka_server_quota_byte_rate",
        {"type": "Fetch", "user": "bob%20smith%2A", "client_id": '"odd,client=id \\"q\\" \\\\"'},
    )
    assert got is not None
    assert got.user == "bob smith*"
    assert got.client_id == 'odd,client=id "q" \\'


def test_other_series_are_not_quota_series() -> None:
    assert series_identity("jvm_memory_bytes_used", {"area": "heap"}) is None


@pytest.mark.parametrize(
    ("name", "labels", "message"),
    [
        ("kafka_server_quota_byte_rate", {"type": "Request"}, "type='Request'.*Fetch, Produce"),
        ("kafka_server_quota_request_time", {}, "type=''.*allowed: Request"),
        ("kafka_server_quota_byte_rate", {"type": "Fetch", "client_id": '"open'}, "client_id"),
        ("kafka_server_quota_byte_rate", {"type": "Fetch", "user": "%ff"}, "not UTF-8"),
    ],
)
def test_unreadable_labels_are_refused(name: str, labels: dict[str, str], message: str) -> None:
    with pytest.raises(ExpositionError, match=message):
        series_identity(name, labels)


@pytest.mark.parametrize("bad", ['"', '"a', '"a\\"', '"a\\x"', '"a"b"'])
def test_jmx_unquote_refuses_what_quote_never_writes(bad: str) -> None:
    with pytest.raises(ValueError):
        jmx_unquote(bad)


def test_jmx_unquote_leaves_plain_values() -> None:
    assert jmx_unquote("plain-id") == "plain-id"
    assert jmx_unquote('"a\\nb\\*\\?"') == "a\nb*?"
