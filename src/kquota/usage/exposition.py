"""The quota metrics as the JMX exporter names them, mapped to :class:`~kquota.usage.rows.Sample`.

kquota ships the exporter's rules (``kquota/devbroker/jmx-exporter.yaml``, attached by
``kquota dev-broker start --metrics``); they publish the broker's per-client quota sensors
as three metrics, the sensor type in a ``type`` label::

    kafka_server_quota_byte_rate{type="Produce"|"Fetch", user="...", client_id="..."}
    kafka_server_quota_request_time{type="Request", user="...", client_id="..."}
    kafka_server_quota_throttle_time{type="Produce"|"Fetch"|"Request", user="...", client_id="..."}

Every source of exposition-shaped data (a Prometheus server's API, a Prometheus text file)
names a series through :func:`series_identity`, so they all agree on what a series is.

The label values are the MBean's property values, untouched by the exporter: Kafka's JMX
reporter quotes a value holding characters an ObjectName reserves (``ObjectName.quote``:
``"a,b"``), and the user tag is the principal name URL-encoded (Kafka's ``Sanitizer``).
Both are undone here, so a row names the principal as the quota entity does. A label that
is absent or empty is a tag the matched quota level does not include (``None``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import NamedTuple
from urllib.parse import unquote

from kquota.errors import KquotaError
from kquota.usage.rows import (
    FETCH_BYTE_RATE,
    FETCH_THROTTLE_TIME,
    PRODUCE_BYTE_RATE,
    PRODUCE_THROTTLE_TIME,
    REQUEST_THROTTLE_TIME,
    REQUEST_TIME,
    THROTTLE_METRICS,
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
"""(exposition metric name, ``type`` label) -> the :mod:`kquota.usage.rows` metric."""

EXPOSITION_NAMES: frozenset[str] = frozenset(name for name, _ in EXPOSITION_METRICS)
"""The exposition metric names that carry quota samples (every other name is not ours)."""

USER_LABEL = "user"
CLIENT_ID_LABEL = "client_id"
TYPE_LABEL = "type"

SELECTOR = '{__name__=~"' + "|".join(sorted(EXPOSITION_NAMES)) + '"}'
"""A PromQL selector for every quota series (and nothing else)."""


class ExpositionError(KquotaError):
    """ExpositionError: a quota series whose labels kquota cannot read (the message says
    which label and what is allowed)."""


class SeriesIdentity(NamedTuple):
    """SeriesIdentity is what a quota series is about: a metric and the sensor's tags."""

    metric: str
    user: str | None
    client_id: str | None


def exposition_value(metric: str, value: float) -> float:
    """exposition_value is a sample's value as a row holds it: a throttle time of NaN is the
    broker's average over no throttles in its window (a sensor that never throttled), 0 ms.
    Every other value is as exported (the readers refuse NaN, infinities, negatives)."""
    return 0.0 if metric in THROTTLE_METRICS and math.isnan(value) else value


def metric_of(name: str, sensor_type: str | None) -> str | None:
    """metric_of is our metric for an exposition sample, or None when the pair is not one."""
    return EXPOSITION_METRICS.get((name, sensor_type or ""))


def allowed_types(name: str) -> list[str]:
    """allowed_types are the ``type`` labels ``name`` carries, for a message."""
    return sorted(t for n, t in EXPOSITION_METRICS if n == name)


def tags(labels: Mapping[str, str], name: str = "a quota series") -> tuple[str | None, str | None]:
    """tags are a sample's (user, client-id) tags from its labels, Kafka's encodings undone:
    absent or empty is None. Raises :class:`ExpositionError` for a value Kafka never writes."""
    user = _tag(name, labels, USER_LABEL)
    if user is not None:
        try:
            user = unquote(user, errors="strict")
        except UnicodeDecodeError:
            raise ExpositionError(
                f"{name}: label user: its URL-encoding is not UTF-8 (Kafka encodes the "
                "principal name as UTF-8)"
            ) from None
    return user, _tag(name, labels, CLIENT_ID_LABEL)


def series_identity(name: str, labels: Mapping[str, str]) -> SeriesIdentity | None:
    """series_identity maps an exported series to its row identity; None for a series that is
    not one of the quota metrics (a source may hold others: the JVM's, the exporter's own)."""
    if name not in EXPOSITION_NAMES:
        return None
    kind = labels.get(TYPE_LABEL, "")
    metric = metric_of(name, kind)
    if metric is None:
        raise ExpositionError(
            f"{name}: label type={kind!r} is not one kquota reads; allowed: "
            + ", ".join(allowed_types(name))
        )
    user, client_id = tags(labels, name)
    return SeriesIdentity(metric, user, client_id)


def _tag(name: str, labels: Mapping[str, str], label: str) -> str | None:
    value = labels.get(label, "")
    if not value:
        return None
    try:
        return jmx_unquote(value)
    except ValueError as e:
        raise ExpositionError(f"{name}: label {label}: {e}") from None


def jmx_unquote(value: str) -> str:
    """jmx_unquote undoes ``ObjectName.quote`` on a value that starts with a quote; a value
    that does not is returned as it is (Kafka quotes only values that need it)."""
    if not value.startswith('"'):
        return value
    if len(value) < 2 or not value.endswith('"'):
        raise ValueError("a quoted MBean value must end with a quote")
    out: list[str] = []
    body = value[1:-1]
    i = 0
    while i < len(body):
        ch = body[i]
        if ch == "\\":
            if i + 1 == len(body):
                raise ValueError("a quoted MBean value ends inside an escape")
            nxt = body[i + 1]
            if nxt not in '"\\*?n':
                raise ValueError(f"a quoted MBean value has an unknown escape \\{nxt}")
            out.append("\n" if nxt == "n" else nxt)
            i += 2
            continue
        if ch == '"':
            raise ValueError("a quoted MBean value has an unescaped quote inside")
        out.append(ch)
        i += 1
    return "".join(out)
