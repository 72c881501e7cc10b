"""Reading the audit trail: every ``quota.altered`` event of a topic, in the order written.

The reader is a confluent-kafka Consumer that joins no group and commits nothing: it assigns
every partition from its earliest offset and reads up to the high watermark taken when it
started, so it always ends (events written meanwhile belong to a later read), and it stops
at the command's deadline. Records that are not kquota's alteration events (drift reports,
another producer's records, a malformed value) are counted and skipped, never trusted:
anyone who may write the topic can put anything there.

The trail holds only what an apply *committed*: :func:`kquota.operations.apply.publish_audit`
publishes one event per entity of the report's ``committed`` list, never for an entity that
was uncertain (its batch cut mid-flight), failed, or not attempted. So an apply's events are
exactly the changes to undo.
"""

from __future__ import annotations

import json
import logging
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kquota import deadline
from kquota.audit import ALTERED, AuditError, AuditOp, topic_name_problem
from kquota.errors import KquotaError
from kquota.kafka.librdkafka import consumer_config, leader_moving
from kquota.model import Entity

_log = logging.getLogger(__name__)

DEFAULT_READ_TIMEOUT = 30.0
"""How long a read may take when no command deadline bounds it."""


@dataclass(frozen=True, slots=True)
class RecordedChange:
    """RecordedChange is one ``quota.altered`` event: one entity's committed ops in one apply."""

    plan_id: str | None
    entity: Entity
    ops: tuple[AuditOp, ...]
    timestamp: str
    actor: str | None
    git_commit: str | None
    cluster: str | None
    partition: int
    offset: int


@dataclass(frozen=True)
class Trail:
    """Trail is what a read found: the alteration events in write order, and how many
    records were skipped as not being one."""

    topic: str
    changes: tuple[RecordedChange, ...]
    skipped: int = 0


def parse_change(value: bytes | None, partition: int, offset: int) -> RecordedChange | None:
    """parse_change reads one record value as a ``quota.altered`` event, or None if it is not
    a well-formed one (a drift report, a foreign or damaged record)."""
    if not value:
        return None
    try:
        data = json.loads(value)
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(data, Mapping) or data.get("event_type") != ALTERED:
        return None
    try:
        entity = Entity.from_json(data["entity"])
        ops = tuple(_op(o) for o in data["ops"])
    except (KeyError, TypeError, ValueError, KquotaError):
        return None
    from kquota.quotakeys import allowed_keys

    # A key the entity cannot hold is not kquota's event (and would make a wrong revert).
    allowed = allowed_keys(entity.types)
    if not ops or any(op.key not in allowed for op in ops):
        return None
    timestamp = data.get("timestamp")
    return RecordedChange(
        plan_id=_text(data.get("plan_id")),
        entity=entity,
        ops=ops,
        timestamp=timestamp if isinstance(timestamp, str) else "",
        actor=_text(data.get("actor")),
        git_commit=_text(data.get("git_commit")),
        cluster=_text(data.get("cluster")),
        partition=partition,
        offset=offset,
    )


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _number(value: object) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError("not a number")
    number = float(value)
    if not math.isfinite(number):
        raise ValueError("not finite")
    return number


def _op(raw: object) -> AuditOp:
    if not isinstance(raw, Mapping):
        raise TypeError("op is not an object")
    key, remove = raw["key"], raw["remove"]
    if not isinstance(key, str) or not key or not isinstance(remove, bool):
        raise ValueError("bad op")
    after = _number(raw["after"])
    if remove != (after is None):
        raise ValueError("a removal has no after value; a set has one")
    return AuditOp(key=key, before=_number(raw["before"]), after=after, remove=remove)


def read_trail(
    topic: str, client_properties: Mapping[str, str], *, timeout: float | None = None
) -> Trail:
    """read_trail reads every alteration event of ``topic`` up to its current end.

    Bounded by ``timeout`` (default: the command's deadline, else
    :data:`DEFAULT_READ_TIMEOUT`); a read that cannot finish in time raises AuditError, since
    a partial trail would make a wrong history and a wrong revert.
    """
    from confluent_kafka import Consumer, KafkaException, TopicPartition

    problem = topic_name_problem(topic)
    if problem is not None:
        raise AuditError(problem)
    outer = deadline.current()
    budget = timeout if timeout is not None else DEFAULT_READ_TIMEOUT
    if outer is not None and timeout is None:
        budget = max(0.0, outer.remaining())
    ends = time.monotonic() + budget
    config, scrub = consumer_config(client_properties, _log)
    try:
        consumer = Consumer(config)
    except KafkaException as e:
        raise AuditError(f"cannot create the audit reader: {scrub(str(e))}") from None

    def left() -> float:
        remaining = ends - time.monotonic()
        if remaining <= 0:
            raise AuditError(
                f"audit topic {topic!r}: the trail could not be read within {budget:.0f}s"
            )
        return remaining

    try:
        with deadline.waiting_on(f"the audit topic {topic!r}"):
            partitions = _partitions(consumer, topic, left())
            assigned: list[Any] = []
            last: dict[int, int] = {}
            for p in partitions:
                low, high = watermarks(consumer, TopicPartition(topic, p), left)
                if high > low:
                    assigned.append(TopicPartition(topic, p, low))
                    last[p] = high - 1
            changes, skipped = _consume(consumer, assigned, last, left)
    except KafkaException as e:
        raise AuditError(f"audit topic {topic!r}: cannot read it: {scrub(str(e))}") from None
    finally:
        consumer.close()
    # Offsets order one partition; across partitions the event time orders the applies.
    changes.sort(key=lambda c: (c.timestamp, c.partition, c.offset))
    return Trail(topic, tuple(changes), skipped)


LEADER_RETRY = 0.2
"""Seconds between two offset queries of a partition whose leader is moving."""


def watermarks(consumer: Any, partition: Any, left: Callable[[], float]) -> tuple[int, int]:
    """watermarks is a partition's low and high offsets, asked again while its leader moves
    (a topic just created, a broker failing over) until ``left`` runs out and raises."""
    from confluent_kafka import KafkaException

    while True:
        try:
            low, high = consumer.get_watermark_offsets(partition, timeout=left(), cached=False)
            return int(low), int(high)
        except KafkaException as e:
            if not leader_moving(e):
                raise
        time.sleep(min(LEADER_RETRY, left()))


def _partitions(consumer: Any, topic: str, timeout: float) -> Sequence[int]:
    from confluent_kafka import KafkaError

    metadata = consumer.list_topics(topic, timeout=timeout)
    described = metadata.topics.get(topic)
    if described is None or (
        described.error is not None and described.error.code() == KafkaError.UNKNOWN_TOPIC_OR_PART
    ):
        raise AuditError(f"audit topic {topic!r} does not exist on the cluster")
    if described.error is not None:
        raise AuditError(f"audit topic {topic!r}: cannot read it: {described.error.str()}")
    return sorted(described.partitions)


def _consume(
    consumer: Any, assigned: list[Any], last: dict[int, int], left: Any
) -> tuple[list[RecordedChange], int]:
    changes: list[RecordedChange] = []
    skipped = 0
    if not assigned:
        return changes, skipped
    consumer.assign(assigned)
    pending = dict(last)
    while pending:
        for msg in consumer.consume(num_messages=500, timeout=min(1.0, left())):
            if msg.error() is not None:
                continue  # partition EOF and transient errors: the watermark decides the end
            p, offset = msg.partition(), msg.offset()
            if p not in pending:
                continue
            change = parse_change(msg.value(), p, offset)
            if change is None:
                skipped += 1
            else:
                changes.append(change)
            if offset >= pending[p]:
                del pending[p]
    return changes, skipped
