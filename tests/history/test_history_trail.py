"""Reading the audit trail's offsets while a partition's leader moves.

A fake consumer stands in for librdkafka here: a real broker cannot be made to answer
NOT_LEADER_FOR_PARTITION on cue (a just-created topic does so only sometimes, under load).
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from confluent_kafka import KafkaError, KafkaException

from kquota.history.trail import watermarks


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
