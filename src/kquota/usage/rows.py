"""The one row every usage source is normalised to, and the metrics it may name.

A broker's per-client quota sensors (``kafka.server:type=Produce|Fetch|Request``) carry two tags,
``user`` and ``client-id``. The broker fills only the tags of the quota level that matched: a
client matched by ``{client-id=<default>}`` is measured with an empty ``user`` tag, so an empty
tag means "not part of the matched level", not the default entity. :class:`Sample` keeps that
as ``None``.
"""

from __future__ import annotations

from dataclasses import dataclass

# metric -> the quota key that bounds it (None: a throttle time, bounded by nothing).
# Names are the broker's sensor attributes prefixed with the sensor type, lower-case.
PRODUCE_BYTE_RATE = "produce-byte-rate"
FETCH_BYTE_RATE = "fetch-byte-rate"
REQUEST_TIME = "request-time"
PRODUCE_THROTTLE_TIME = "produce-throttle-time"
FETCH_THROTTLE_TIME = "fetch-throttle-time"
REQUEST_THROTTLE_TIME = "request-throttle-time"

RATE_METRICS: dict[str, str] = {
    PRODUCE_BYTE_RATE: "producer_byte_rate",
    FETCH_BYTE_RATE: "consumer_byte_rate",
    REQUEST_TIME: "request_percentage",
}
"""A rate metric and the quota key that bounds it."""

THROTTLE_METRICS: dict[str, str] = {
    PRODUCE_THROTTLE_TIME: PRODUCE_BYTE_RATE,
    FETCH_THROTTLE_TIME: FETCH_BYTE_RATE,
    REQUEST_THROTTLE_TIME: REQUEST_TIME,
}
"""A throttle-time metric and the rate metric whose quota it enforces."""

METRICS: frozenset[str] = frozenset(RATE_METRICS) | frozenset(THROTTLE_METRICS)


@dataclass(frozen=True, slots=True)
class Sample:
    """Sample is one observation of one broker's sensor for one principal.

    ``user`` / ``client_id`` are the sensor's tags, ``None`` where the tag is empty (the matched
    quota level does not include that type). ``timestamp_ms`` is milliseconds since the epoch,
    UTC; ``value`` is bytes/s for byte rates, percent of one thread for request time, and
    milliseconds (the sensor's average over its window) for throttle times.
    """

    cluster: str
    broker: str
    user: str | None
    client_id: str | None
    metric: str
    timestamp_ms: int
    value: float
