"""Reading the audit trail: every ``quota.altered`` event of a topic, in the order written.

The reader is a confluent-kafka Consumer that joins no group and commits nothing: it assigns
every partition from its earliest offset and reads up to the high watermark taken when it
started, so it always ends (events written meanwhile belong to a later read), and it stops
at the command's deadline. Records that are not kquota's alteration events (drift reports,
another producer's records) are counted and skipped. Anyone who may write the topic can put
anything there, so the trail is evidence, never input: a record that claims to be an
alteration event is checked field by field, bounded (:data:`MAX_RECORD_BYTES`, numbers of at
most :data:`MAX_DIGITS` digits, no deep nesting) and, with keys configured, its signature
verified (:mod:`kquota.audit_keys`); one that breaks a rule is a :class:`BadRecord` naming its
partition and offset, never a traceback. The order is the topic's, never a claimed time.

The trail holds only what an apply *committed*: :func:`kquota.operations.apply.publish_audit`
publishes one event per entity of the report's ``committed`` list, never for an entity that
was uncertain (its batch cut mid-flight), failed, or not attempted. So an apply's events are
exactly the changes to undo.
"""

from __future__ import annotations

import dataclasses
import heapq
import json
import logging
import math
import re
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from kquota.audit import ALTERED, AuditError, AuditOp, record_key, topic_name_problem
from kquota.audit_keys import AuditKeys, Verdict, header_key_id
from kquota.display import safe_text
from kquota.kafka.librdkafka import consumer_config, leader_moving
from kquota.model import Entity
from kquota.runtime import deadline

_log = logging.getLogger(__name__)

DEFAULT_READ_TIMEOUT = 30.0
"""How long a read may take when no command deadline bounds it."""


MAX_RECORD_BYTES = 64 * 1024
"""The largest record value read as an event: one entity's ops are a few hundred bytes."""

MAX_DIGITS = 32
"""The most digits a JSON integer in an event may have (a quota is at most a LONG)."""

MAX_TEXT = 256
"""The longest actor, cluster or commit an event may carry."""

MAX_PLAN_ID = 64

PREFETCH_KIB = 8 * 1024
"""How much of the topic the reader fetches ahead of what it has parsed, in KiB."""
_CLUSTER_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")


@dataclass(frozen=True, slots=True)
class RecordedChange:
    """RecordedChange is one ``quota.altered`` event: one entity's committed ops in one apply,
    where it stands on the topic, and what its signature says."""

    plan_id: str | None
    entity: Entity
    ops: tuple[AuditOp, ...]
    timestamp: str
    actor: str | None
    git_commit: str | None
    cluster: str | None
    partition: int
    offset: int
    cluster_id: str | None = None
    verdict: Verdict = Verdict.UNSIGNED
    key_id: str | None = None

    @property
    def where(self) -> str:
        """where names the record: ``partition 0 offset 12``."""
        return f"partition {self.partition} offset {self.offset}"


@dataclass(frozen=True, slots=True)
class BadRecord:
    """BadRecord is a record that claims to be a ``quota.altered`` event and is not a valid
    one: where it stands and what is wrong with it."""

    partition: int
    offset: int
    reason: str

    def __str__(self) -> str:
        return f"partition {self.partition} offset {self.offset}: {self.reason}"


@dataclass(frozen=True)
class Trail:
    """Trail is what a read found: the alteration events in topic order, the records that
    claim to be one and are not valid (bad), and how many other records were skipped."""

    topic: str
    changes: tuple[RecordedChange, ...]
    skipped: int = 0
    bad: tuple[BadRecord, ...] = ()
    signed: bool = False
    """Whether keys were configured to verify the events with."""


class _Invalid(Exception):
    """_Invalid: the record claims to be an event and breaks a rule (the message says which)."""


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_DIGITS:
        raise _Invalid(f"a number with {len(text)} digits (at most {MAX_DIGITS})")
    return int(text)


def _no_constant(name: str) -> float:
    raise _Invalid(f"{name} is not a number JSON allows")


def _decode(value: bytes) -> object:
    """_decode reads a record value as JSON, bounded: _Invalid for a huge number, None for
    what is not JSON at all (a foreign record)."""
    try:
        return json.loads(value, parse_int=_bounded_int, parse_constant=_no_constant)
    except RecursionError:
        raise _Invalid("nested too deeply") from None
    except (ValueError, UnicodeDecodeError):
        return None


def parse_change(
    value: bytes | None,
    partition: int,
    offset: int,
    *,
    key: bytes | None = None,
    headers: Sequence[tuple[str, Any]] = (),
    keys: AuditKeys | None = None,
) -> RecordedChange | BadRecord | None:
    """parse_change reads one record as a ``quota.altered`` event: the event, a BadRecord
    saying what is wrong when it claims to be one and breaks a rule, or None when it is not
    one at all (a drift report, another producer's record).

    ``key`` is the record key, checked against the entity when given; ``keys`` verify the
    signature headers (without them every event is unsigned to the reader)."""
    if not value:
        return None
    if len(value) > MAX_RECORD_BYTES:
        return BadRecord(
            partition, offset, f"{len(value)} bytes; an audit event is at most {MAX_RECORD_BYTES}"
        )
    try:
        data = _decode(value)
        if not isinstance(data, Mapping) or data.get("event_type") != ALTERED:
            return None
        change = _change(data, partition, offset, key)
        labelled = [v for name, v in headers if name == "plan-id"]
        if labelled and labelled != [(change.plan_id or "").encode()]:
            raise _Invalid("its plan-id header is not the plan_id of its value")
    except _Invalid as e:
        return BadRecord(partition, offset, str(e))
    if keys is None:
        return change
    verdict = keys.verify(data, headers)
    return dataclasses.replace(change, verdict=verdict, key_id=header_key_id(headers))


def _change(
    data: Mapping[str, Any], partition: int, offset: int, key: bytes | None
) -> RecordedChange:
    entity = _entity(data.get("entity"))
    if key is not None and key != record_key(entity).encode():
        raise _Invalid("its record key is not its entity's (kquota keys each event by entity)")
    raw_ops = data.get("ops")
    if not isinstance(raw_ops, list) or not raw_ops:
        raise _Invalid("ops: a non-empty list is required")
    ops = tuple(_op(o, entity) for o in raw_ops)
    if len({op.key for op in ops}) != len(ops):
        raise _Invalid("ops: a key is given twice")
    cluster_id = _text(data, "cluster_id", limit=64, required=False)
    if cluster_id is not None and not _CLUSTER_ID.fullmatch(cluster_id):
        raise _Invalid("cluster_id: not a Kafka cluster id")
    return RecordedChange(
        plan_id=_text(data, "plan_id", limit=MAX_PLAN_ID),
        entity=entity,
        ops=ops,
        timestamp=_timestamp(data.get("timestamp")),
        actor=_text(data, "actor", required=False),
        git_commit=_text(data, "git_commit", required=False),
        cluster=_text(data, "cluster"),
        partition=partition,
        offset=offset,
        cluster_id=cluster_id,
    )


def _text(
    data: Mapping[str, Any], name: str, *, limit: int = MAX_TEXT, required: bool = True
) -> str | None:
    value = data.get(name)
    if value is None or value == "":
        if required:
            raise _Invalid(f"{name}: required")
        return None
    if not isinstance(value, str):
        raise _Invalid(f"{name}: a string is required")
    if len(value) > limit:
        raise _Invalid(f"{name}: {len(value)} characters (at most {limit})")
    return value


def _timestamp(value: object) -> str:
    if not isinstance(value, str) or not value:
        raise _Invalid("timestamp: required")
    shown = safe_text(value[:40])
    try:
        when = datetime.fromisoformat(value.replace("Z", "+00:00")) if len(value) <= 40 else None
    except ValueError:
        when = None
    if when is None or when.tzinfo is None:
        raise _Invalid(f"timestamp {shown!r}: not an ISO 8601 time with a zone")
    return value


def _entity(raw: object) -> Entity:
    from kquota.model import ENTITY_TYPES, MAX_NAME_BYTES, name_bytes
    from kquota.quotakeys import entity_kind

    if not isinstance(raw, Mapping) or not raw:
        raise _Invalid("entity: an object of entity type to name is required")
    if any(t not in ENTITY_TYPES for t in raw):
        raise _Invalid(f"entity: types are {', '.join(ENTITY_TYPES)}")
    if any(n is not None and (not isinstance(n, str) or not n) for n in raw.values()):
        raise _Invalid("entity: a name is a non-empty string, or null for the default")
    if any(n is not None and name_bytes(n) > MAX_NAME_BYTES for n in raw.values()):
        raise _Invalid(f"entity: a name longer than the protocol allows ({MAX_NAME_BYTES} bytes)")
    entity = Entity.of(raw)
    if entity_kind(entity.types) is None:
        raise _Invalid("entity: an ip entity cannot be combined with user or client-id")
    return entity


def _op(raw: object, entity: Entity) -> AuditOp:
    from kquota.quotakeys import allowed_keys

    if not isinstance(raw, Mapping):
        raise _Invalid("ops: each op is an object")
    key, remove = raw.get("key"), raw.get("remove")
    allowed = allowed_keys(entity.types)
    if not isinstance(key, str) or key not in allowed:
        shown = safe_text(str(key)[:64])
        raise _Invalid(f"ops: {shown!r} is not a quota key of this entity")
    if not isinstance(remove, bool):
        raise _Invalid(f"ops: {key}: remove is true or false")
    before, after = _value(raw, key, "before"), _value(raw, key, "after")
    if remove != (after is None):
        raise _Invalid(f"ops: {key}: a removal has no after value; a set has one")
    if before is None and after is None:
        raise _Invalid(f"ops: {key}: neither a before nor an after value")
    return AuditOp(key=key, before=before, after=after, remove=remove)


def _value(raw: Mapping[str, Any], key: str, name: str) -> float | None:
    from kquota.quotakeys import value_problem

    if name not in raw:
        raise _Invalid(f"ops: {key}: {name} is required (null when unset)")
    value = raw[name]
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _Invalid(f"ops: {key}: {name} is not a number")
    number = float(value)
    problem = value_problem(key, number) if math.isfinite(number) else "not finite"
    if problem is not None:
        raise _Invalid(f"ops: {key}: {name} {safe_text(repr(value)[:40])}: {problem}")
    return number


def read_trail(
    topic: str,
    client_properties: Mapping[str, str],
    *,
    timeout: float | None = None,
    keys: AuditKeys | None = None,
) -> Trail:
    """read_trail reads every alteration event of ``topic`` up to its current end, in topic
    order (:func:`topic_order`), each verified with ``keys`` when given.

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
    # The reader keeps parsed events only; librdkafka's prefetch is what holds raw records,
    # so it is bounded too (its default is 64 MiB).
    config["queued.max.messages.kbytes"] = str(PREFETCH_KIB)
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
            read = _consume(consumer, assigned, last, left, keys)
    except KafkaException as e:
        raise AuditError(f"audit topic {topic!r}: cannot read it: {scrub(str(e))}") from None
    finally:
        consumer.close()
    return Trail(
        topic,
        tuple(topic_order(read.changes, read.times)),
        read.skipped,
        tuple(read.bad),
        keys is not None,
    )


def topic_order(
    changes: Sequence[RecordedChange], times: Mapping[tuple[int, int], int]
) -> Iterator[RecordedChange]:
    """topic_order is the trail in the order the topic holds it, never the order the events
    claim: each partition by offset, and partitions interleaved by the record timestamp the
    broker stored (``times``, by partition and offset). With ``message.timestamp.type=
    LogAppendTime`` on the topic, or one partition, no producer can move its record."""
    by_partition: dict[int, list[RecordedChange]] = {}
    for change in changes:
        by_partition.setdefault(change.partition, []).append(change)
    runs = [sorted(run, key=lambda c: c.offset) for _, run in sorted(by_partition.items())]
    # heapq.merge keeps each run's own order whatever the timestamps within it.
    return heapq.merge(*runs, key=lambda c: (times.get((c.partition, c.offset), 0), c.partition))


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


@dataclass
class _Read:
    changes: list[RecordedChange] = dataclasses.field(default_factory=list)
    times: dict[tuple[int, int], int] = dataclasses.field(default_factory=dict)
    bad: list[BadRecord] = dataclasses.field(default_factory=list)
    skipped: int = 0


def _consume(
    consumer: Any, assigned: list[Any], last: dict[int, int], left: Any, keys: AuditKeys | None
) -> _Read:
    # Record by record: only the parsed, bounded events are kept, never the values read.
    read = _Read()
    if not assigned:
        return read
    consumer.assign(assigned)
    pending = dict(last)
    while pending:
        for msg in consumer.consume(num_messages=100, timeout=min(1.0, left())):
            if msg.error() is not None:
                continue  # partition EOF and transient errors: the watermark decides the end
            p, offset = msg.partition(), msg.offset()
            if p not in pending:
                continue
            change = parse_change(
                msg.value(), p, offset, key=msg.key(), headers=msg.headers() or (), keys=keys
            )
            if change is None:
                read.skipped += 1
            elif isinstance(change, BadRecord):
                read.bad.append(change)
            else:
                read.changes.append(change)
                read.times[(p, offset)] = msg.timestamp()[1]
            if offset >= pending[p]:
                del pending[p]
    return read
