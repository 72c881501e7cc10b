"""Reading the audit trail's offsets while a partition's leader moves.

A fake consumer stands in for librdkafka here: a real broker cannot be made to answer
NOT_LEADER_FOR_PARTITION on cue (a just-created topic does so only sometimes, under load).
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from confluent_kafka import KafkaError, KafkaException

from kquota.audit import AuditOp
from kquota.history.trail import RecordedChange, topic_order, watermarks
from kquota.model import Entity


class _LeaderMovingConsumer:
    """Answers the offsets query with ``errors`` first (one per call), then with (3, 9)."""

    def __init__(self, *errors: int) -> None:
        self.errors = list(errors)
        self.calls = 0

    def get_watermark_offsets(self, partition: Any, timeout: float, cached: bool) -> Any:
        assert not cached and timeout > 0
        self.calls += 1
        if self.errors:
            raise KafkaException(KafkaError(self.errors.pop(0)))
        return (3, 9)


def _budget(seconds: float) -> Any:
    end = time.monotonic() + seconds

    def left() -> float:
        remaining = end - time.monotonic()
        if remaining <= 0:
            raise TimeoutError("out of time")
        return remaining

    return left


def test_offsets_are_asked_again_while_the_leader_moves() -> None:
    consumer = _LeaderMovingConsumer(
        KafkaError.NOT_LEADER_FOR_PARTITION, KafkaError.LEADER_NOT_AVAILABLE
    )
    assert watermarks(consumer, "p0", _budget(30)) == (3, 9)
    assert consumer.calls == 3


def test_an_error_that_asking_again_cannot_cure_is_raised_at_once() -> None:
    consumer = _LeaderMovingConsumer(KafkaError.TOPIC_AUTHORIZATION_FAILED)
    with pytest.raises(KafkaException) as caught:
        watermarks(consumer, "p0", _budget(30))
    assert caught.value.args[0].code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    assert consumer.calls == 1


def test_a_leader_that_never_settles_ends_with_the_budget() -> None:
    consumer = _LeaderMovingConsumer(*[KafkaError.NOT_LEADER_FOR_PARTITION] * 1000)
    start = time.monotonic()
    with pytest.raises(TimeoutError):
        watermarks(consumer, "p0", _budget(1.0))
    assert 1.0 <= time.monotonic() - start < 10 and 2 <= consumer.calls < 1000


def _at(partition: int, offset: int, claimed: str) -> RecordedChange:
    op = AuditOp("producer_byte_rate", None, 1.0, False)
    entity = Entity.of({"user": f"u{partition}{offset}"})
    return RecordedChange("p", entity, (op,), claimed, None, None, "c", partition, offset)


def test_topic_order_is_by_position_never_by_the_time_an_event_claims() -> None:
    # Partition 0 holds a, then b (which claims to be older); partition 1 holds c.
    a, b = _at(0, 0, "2026-05-01T00:00:00Z"), _at(0, 1, "1970-01-01T00:00:00Z")
    c = _at(1, 0, "2026-05-02T00:00:00Z")
    broker_times = {(0, 0): 100, (0, 1): 300, (1, 0): 200}
    assert list(topic_order([c, b, a], broker_times)) == [a, c, b]
    # Within a partition the offset wins even over the broker's timestamp.
    skewed = {(0, 0): 500, (0, 1): 100, (1, 0): 200}
    assert list(topic_order([b, a, c], skewed)) == [c, a, b]
