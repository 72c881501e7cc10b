"""The Prometheus JMX exporter's names for the broker's quota sensors, and ours for them.

The one mapping from an exposition sample (a metric name and its ``type`` label, as the rules
file of ``kquota dev-broker --metrics`` names them) to a :mod:`kquota.usage.rows` metric: the
scrape-file reader and the Prometheus ``query_range`` source both read it here, so a sample
means the same whichever way it came.

Label names are Prometheus's spelling of the sensor's tags: ``client_id`` for ``client-id``
(a label name cannot hold ``-``). An empty label is an empty tag (:class:`Sample` ``None``).
"""

from __future__ import annotations

from collections.abc import Mapping

from kquota.usage.rows import (
    FETCH_BYTE_RATE,
    FETCH_THROTTLE_TIME,
    PRODUCE_BYTE_RATE,
    PRODUCE_THROTTLE_TIME,
    REQUEST_THROTTLE_TIME,
    REQUEST_TIME,
)

BYTE_RATE = "kafka_server_quota_byte_rate"
REQUEST_TIME_NAME = "kafka_server_quota_request_time"
THROTTLE_TIME = "kafka_server_quota_throttle_time"

EXPOSITION_METRICS: dict[tuple[str, str], str] = {
    (BYTE_RATE, "Produce"): PRODUCE_BYTE_RATE,
    (BYTE_RATE, "Fetch"): FETCH_BYTE_RATE,
    (REQUEST_TIME_NAME, "Request"): REQUEST_TIME,
    (THROTTLE_TIME, "Produce"): PRODUCE_THROTTLE_TIME,
    (THROTTLE_TIME, "Fetch"): FETCH_THROTTLE_TIME,
    (THROTTLE_TIME, "Request"): REQUEST_THROTTLE_TIME,
}
"""(exposition metric name, ``type`` label) -> our metric name."""

EXPOSITION_NAMES: frozenset[str] = frozenset(name for name, _ in EXPOSITION_METRICS)
"""The exposition metric names that carry quota samples (every other name is not ours)."""

USER_LABEL = "user"
CLIENT_ID_LABEL = "client_id"
TYPE_LABEL = "type"


def metric_of(name: str, sensor_type: str | None) -> str | None:
    """metric_of is our metric for an exposition sample, or None when the pair is not one."""
    return EXPOSITION_METRICS.get((name, sensor_type or ""))


def tags(labels: Mapping[str, str]) -> tuple[str | None, str | None]:
    """tags are a sample's (user, client-id) tags from its labels: absent or empty is None."""
    return labels.get(USER_LABEL) or None, labels.get(CLIENT_ID_LABEL) or None


def allowed_types(name: str) -> list[str]:
    """allowed_types are the ``type`` labels ``name`` carries, for a message."""
    return sorted(t for n, t in EXPOSITION_METRICS if n == name)
