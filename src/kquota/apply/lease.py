"""One apply at a time per cluster: a lease decided by the order of a Kafka log.

Kafka has no compare-and-set, but a single-partition topic gives every client the same
total order of records and (``message.timestamp.type=LogAppendTime``) the same clock: the
broker's. A contender appends a *claim* (key: its own id; value: who it is and how long it
may hold), waits for its offset, then reads the partition up to that offset. Replaying the
log with :func:`holder_after` (a claim wins when nobody holds the lease at the claim's
timestamp; a holder's lease ends at its release or its expiry) gives every contender the same
answer. The loser releases its claim and tries again until its deadline; the winner releases
when apply ends (also after SIGINT/SIGTERM).

The lease lasts the holder's ``--timeout`` plus the settling grace: apply cannot run longer,
so a live holder never loses it, and a holder that died (kill -9, a lost runner) blocks other
applies at most that long. The topic uses time retention, never compaction: compaction drops
records out of order, which would change the replayed winner for late readers.

Needs: Read, Write and Describe on the topic, and Create (once) if it does not exist.
``--no-lease`` skips it (a principal without those ACLs; nothing then stops a concurrent
apply, and verification reports what another writer changed).
"""

from __future__ import annotations

import getpass
import json
import os
import socket
import sys
import time
import uuid
from collections.abc import Iterable, Iterator, Mapping
from contextlib import AbstractContextManager as ContextManager
from contextlib import contextmanager, nullcontext, suppress
from dataclasses import dataclass
from typing import Any

from kquota.deadline import Deadline, DeadlineExceeded, current, waiting_on
from kquota.errors import KquotaError

LEASE_TOPIC = "_kquota_apply_lease"
TOPIC_CONFIG = {
    "cleanup.policy": "delete",
    "retention.ms": str(7 * 24 * 3600 * 1000),
    "message.timestamp.type": "LogAppendTime",
}
RETRY_INTERVAL = 1.0
RELEASE_MIN = 2.0
RELEASE_CAP = 30.0
"""The release waits while the deadline allows, up to this: when the lease partition's
leader was SIGKILLed, the controller fences it only after ``broker.session.timeout.ms`` (9 s
by default) and the producer then has to learn the new leader. Measured on three nodes: the
release took 1.8 s on a quiet machine and did not finish in the 4 s it had in CI, and the lost
release held the next apply for the whole ttl."""
GRACE = 10.0
"""Lease time past the holder's deadline: apply's settling grace plus the release."""


class LeaseError(KquotaError):
    """LeaseError: the apply lease could not be taken or read; nothing was written."""


@dataclass(frozen=True)
class LeaseRecord:
    """LeaseRecord is one record of the lease topic: a claim (with ``info``) or a release."""

    owner: str
    timestamp_ms: int
    ttl_ms: int = 0
    info: Mapping[str, Any] | None = None

    @property
    def is_claim(self) -> bool:
        return self.info is not None


@dataclass(frozen=True)
class Holder:
    owner: str
    since_ms: int
    until_ms: int
    info: Mapping[str, Any]

    def describe(self) -> str:
        who = (
            f"{self.info.get('user', '?')}@{self.info.get('host', '?')} pid {self.info.get('pid')}"
        )
        until = time.strftime("%H:%M:%S", time.gmtime(self.until_ms / 1000))
        return f"{who} (lease until {until} UTC)"


def holder_after(records: Iterable[LeaseRecord]) -> Holder | None:
    """holder_after replays the lease log in order and returns who holds it after it."""
    holder: Holder | None = None
    for r in records:
        if holder is not None and r.timestamp_ms >= holder.until_ms:
            holder = None
        if r.is_claim:
            if holder is None:
                assert r.info is not None
                holder = Holder(r.owner, r.timestamp_ms, r.timestamp_ms + r.ttl_ms, r.info)
        elif holder is not None and r.owner == holder.owner:
            holder = None
    return holder


_PRODUCER_ONLY = ("enable.idempotence", "acks", "message.timeout.ms")
# kquota's own request retries (``retries=0`` in a fault test) are not the lease's: an
# idempotent producer needs its retries, and each lease step is bounded by the deadline.
_NOT_FOR_LEASE = ("retries", "retry.backoff.ms")


def _client_config(config: Mapping[str, str]) -> dict[str, str]:
    """The audit producer's translation of kquota's properties, minus producer-only keys."""
    return {k: v for k, v in config.items() if k not in _PRODUCER_ONLY + _NOT_FOR_LEASE}


class _LeaseLog:
    """_LeaseLog appends to and reads the lease topic with librdkafka clients."""

    def __init__(self, producer_config: Mapping[str, str], topic: str) -> None:
        from confluent_kafka import KafkaException, Producer

        from kquota.audit import _Scrubber, _ScrubbingLogger

        self.topic = topic
        # librdkafka logs every failed reconnect to stderr by default: to DEBUG, scrubbed.
        logger: Any = _ScrubbingLogger(_Scrubber(producer_config))
        self._base: dict[str, Any] = {**_client_config(producer_config), "logger": logger}
        own = {k: v for k, v in producer_config.items() if k not in _NOT_FOR_LEASE}
        try:
            self._producer = Producer({**own, "linger.ms": "0", "logger": logger})
        except KafkaException as e:
            raise LeaseError(f"cannot set up the apply lease client: {e}") from None

    def ensure_topic(self, timeout: float) -> None:
        from confluent_kafka import KafkaError, KafkaException
        from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]

        admin = AdminClient(dict(self._base))
        metadata = admin.list_topics(timeout=timeout)
        if self.topic in metadata.topics:
            return
        # Replicated like Kafka's own internal topics (up to three copies): with the broker's
        # default of one, the lease dies with the node that holds it and no apply can run.
        replicas = max(1, min(3, len(metadata.brokers)))
        future = admin.create_topics(
            [NewTopic(self.topic, 1, replicas, config=dict(TOPIC_CONFIG))],
            request_timeout=timeout,
        )[self.topic]
        try:
            future.result(timeout)
        except KafkaException as e:
            if e.args[0].code() != KafkaError.TOPIC_ALREADY_EXISTS:
                what = f"cannot create the lease topic {self.topic}"
                raise LeaseError(_refusal(what, e.args[0])) from None

    def append(self, owner: str, value: bytes | None, timeout: float) -> int:
        """append writes one record and returns its offset once the broker confirmed it."""
        from confluent_kafka import KafkaException

        what = f"cannot write to the lease topic {self.topic}"
        delivered_msg: Any = None
        delivery_error: Any = None

        def delivered(err: Any, msg: Any) -> None:
            # No calls in here: a fatal producer error (e.g. its producer id refused) may be
            # pending while callbacks run, and any C call would then fail with SystemError.
            nonlocal delivered_msg, delivery_error
            if err is not None:
                delivery_error = err
            else:
                delivered_msg = msg

        try:
            self._producer.produce(self.topic, key=owner.encode(), value=value, partition=0,
                                   on_delivery=delivered)  # fmt: skip
            self._producer.flush(timeout)
        except (KafkaException, SystemError) as e:
            fatal = e if isinstance(e, KafkaException) else e.__cause__
            if not isinstance(fatal, KafkaException):
                raise
            raise LeaseError(_refusal(what, fatal.args[0])) from None
        if delivery_error is not None:
            raise LeaseError(_refusal(what, delivery_error))
        if delivered_msg is None:
            raise LeaseError(f"{what}: no confirmation")
        offset: int = delivered_msg.offset()
        return offset

    def read_until(self, offset: int, timeout: float) -> list[LeaseRecord]:
        """read_until reads the partition from its start through ``offset``."""
        from confluent_kafka import Consumer, TopicPartition

        consumer = Consumer(
            {
                **self._base,
                "group.id": "kquota-apply-lease",
                "enable.auto.commit": "false",
                "enable.partition.eof": "false",
                "fetch.wait.max.ms": "10",
                # Offset 0, reset to the earliest once retention removed it: an
                # OFFSET_BEGINNING lookup first costs half a second (measured).
                "auto.offset.reset": "earliest",
            }
        )
        records: list[LeaseRecord] = []
        end = time.monotonic() + timeout
        try:
            consumer.assign([TopicPartition(self.topic, 0, 0)])
            while time.monotonic() < end:
                msg = consumer.poll(min(0.5, max(0.0, end - time.monotonic())))
                if msg is None:
                    continue
                if msg.error():
                    what = f"cannot read the lease topic {self.topic}"
                    raise LeaseError(_refusal(what, msg.error()))
                records.append(_parse(msg))
                if (msg.offset() or 0) >= offset:
                    return records
        finally:
            consumer.close()
        raise LeaseError(f"cannot read the lease topic {self.topic} to offset {offset} in time")

    def close(self) -> None:
        # Every append waited for its own confirmation; what is still queued was given up on.
        self._producer.flush(0)


def _parse(msg: Any) -> LeaseRecord:
    owner = (msg.key() or b"").decode(errors="replace")
    _, ts = msg.timestamp()
    value = msg.value()
    if value is None:
        return LeaseRecord(owner, ts)
    try:
        data = json.loads(value)
        return LeaseRecord(owner, ts, int(data["ttl_ms"]), data)
    except (ValueError, KeyError, TypeError):
        # A foreign record: treat it as a release, which can never take the lease.
        return LeaseRecord(owner, ts)


def _claim_value(ttl_ms: int) -> bytes:
    try:
        user = getpass.getuser()
    except (OSError, KeyError):
        user = "?"
    info = {"ttl_ms": ttl_ms, "host": socket.gethostname(), "pid": os.getpid(), "user": user}
    return json.dumps(info).encode()


@contextmanager
def apply_lease(
    producer_config: Mapping[str, str],
    deadline: Deadline,
    *,
    grace: float = GRACE,
    topic: str = LEASE_TOPIC,
) -> Iterator[None]:
    """apply_lease holds the cluster's apply lease for the block, waiting for it if needed."""
    log = _LeaseLog(producer_config, topic)
    owner = uuid.uuid4().hex
    ttl_ms = int((max(0.0, deadline.remaining()) + grace) * 1000)
    try:
        with waiting_on(f"the apply lease on topic {topic}"):
            log.ensure_topic(_step(deadline))
            _acquire(log, owner, ttl_ms, deadline)
        yield
    finally:
        # A hung or lost cluster: the claim then expires at its ttl instead.
        with waiting_on(f"the release of the apply lease on topic {topic}"), suppress(LeaseError):
            log.append(owner, None, release_budget(deadline.remaining()))
        log.close()


def release_budget(deadline_left: float) -> float:
    """release_budget is how long the release may wait: what is left of the deadline (the
    lease outlives it, so the release always frees others sooner), at least
    :data:`RELEASE_MIN` (a run that hit its deadline still tries), at most :data:`RELEASE_CAP`."""
    return min(RELEASE_CAP, max(RELEASE_MIN, deadline_left))


def _acquire(log: _LeaseLog, owner: str, ttl_ms: int, deadline: Deadline) -> None:
    told = False
    while True:
        offset = log.append(owner, _claim_value(ttl_ms), _step(deadline))
        holder = holder_after(log.read_until(offset, _step(deadline)))
        if holder is not None and holder.owner == owner:
            return
        log.append(owner, None, _step(deadline))
        if holder is not None and not told:
            print(f"waiting for the apply lease: held by {holder.describe()}", file=sys.stderr)
            told = True
        if deadline.remaining() <= RETRY_INTERVAL:
            raise DeadlineExceeded(
                f"the {deadline.label} deadline ran out waiting for the apply lease"
                + (f", held by {holder.describe()}" if holder else "")
                + "; nothing was written"
            )
        time.sleep(RETRY_INTERVAL)


def _step(deadline: Deadline) -> float:
    remaining = deadline.remaining()
    if remaining <= 0:
        raise deadline.exceeded()
    return remaining


def held_lease(client_properties: Mapping[str, str], enabled: bool) -> ContextManager[None]:
    """held_lease is apply's lease on the cluster of ``client_properties``, or nothing."""
    limit = current()
    if not enabled or limit is None:
        return nullcontext()
    from kquota.audit import producer_config

    return apply_lease(producer_config(client_properties), limit)


def _refusal(what: str, err: Any) -> str:
    """_refusal says what failed and, for an authorization failure, what the principal needs
    and how to do without the lease (docs/apply-safety.md)."""
    name = err.name() if hasattr(err, "name") else ""
    text = err.str() if hasattr(err, "str") else str(err)
    message = f"{what}: {name + ': ' if name else ''}{text}"
    # A fatal producer error here is almost always a refused producer id: no rights.
    if "AUTHORIZATION_FAILED" in name or name == "_FATAL":
        message += (
            f"; the apply lease needs Read, Write and Describe on topic {LEASE_TOPIC} (and "
            "Create unless it exists, see docs/apply-safety.md), or run apply with --no-lease"
        )
    return message
