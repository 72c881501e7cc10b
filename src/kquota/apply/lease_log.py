"""The apply lease's topic, read and written with librdkafka clients that never block for long.

librdkafka's blocking calls (``flush``, ``list_topics``, ``poll``) hold the interpreter in C
for their whole timeout: a SIGINT waits until they return, and a timeout taken from a
10-minute deadline strands the command on a hung broker for 10 minutes. So every wait here
is a loop of short slices (:data:`SLICE`): between slices Python runs its signal handlers
(SIGINT/SIGTERM end the wait at once) and the caller's bound is checked.

Failover: librdkafka learns every broker from Metadata, but only once it reached one. A
client created after the bootstrap broker died (the lease is taken seconds after apply
connects) would try that one address for ever; so the clients are given every broker apply
already learned (``extra_bootstrap``) besides the operator's addresses, and the lease keeps
one producer and one consumer for its whole life instead of a new client per attempt.
"""

from __future__ import annotations

import json
import logging
import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kquota.errors import KquotaError

_log = logging.getLogger(__name__)

SLICE = 0.2
"""Longest single blocking librdkafka call, in seconds: how soon a signal or a stop is seen."""
RECONNECT_BACKOFF_MS = "20"
"""The lease clients' first reconnect backoff, unless the client properties set one. A new
librdkafka client drops its bootstrap connection once Metadata names the broker behind it,
then waits half this backoff before connecting again: at librdkafka's default of 100 ms every
lease took 50 ms longer than its two round trips (most of the lease step of an apply on
loopback); at 20 ms it waits its floor of about 11 ms. Backoffs still double from here on a
broker that is down."""
CLOSE_WAIT = 2.0
"""How long closing the consumer may take before it is left to the process's exit."""
CLAIM_ID = re.compile(r"[0-9A-Za-z_.-]{1,64}")
"""What a claim id may be: kquota's are 16 hex digits; one a user cannot type or read back
(escapes, a megabyte) could never be freed by ``kquota lease release --force ID``."""
MAX_TTL_MS = 24 * 3600 * 1000
"""The longest term a claim or a renewal may ask for: kquota asks for 30 s; a claim for
years would hold every apply off until someone released it by hand."""
MAX_HOLDER_FIELD = 255
"""The longest user or host name a claim may carry (a DNS name is at most 253 bytes)."""


class LeaseError(KquotaError):
    """LeaseError: the apply lease could not be taken or read; nothing was written."""


class LeaseTopicMissing(LeaseError):
    """LeaseTopicMissing: the lease topic does not exist; apply writes nothing without it."""


class LeaseTimeout(LeaseError):
    """LeaseTimeout: a lease step got no answer within its bound (a hung or lost broker)."""


@dataclass(frozen=True)
class LeaseRecord:
    """LeaseRecord is one record of the lease topic: a claim (with ``info``), a renewal of a
    claim (``renews``) or a release (neither). A record kquota did not write, or whose term, id
    or holder is absurd, is ``bad`` (why): it counts as a release of its key, which can never
    take the lease."""

    owner: str
    timestamp_ms: int
    ttl_ms: int = 0
    info: Mapping[str, Any] | None = None
    renews: bool = False
    offset: int = -1
    bad: str | None = None

    @property
    def is_claim(self) -> bool:
        return self.info is not None and not self.renews


@dataclass(frozen=True)
class Appended:
    """Appended is a record the broker confirmed: its offset and its broker timestamp."""

    offset: int
    timestamp_ms: int


def merged_bootstrap(configured: str, learned: Sequence[str]) -> str:
    """merged_bootstrap is the operator's addresses, then every learned broker not among them."""
    given = [a.strip() for a in configured.split(",") if a.strip()]
    return ",".join(dict.fromkeys([*given, *learned]))


def _refusal(what: str, err: Any, topic: str) -> str:
    """_refusal says what failed and, for an authorization failure, what the principal needs
    and how to do without the lease (docs/apply-safety.md)."""
    name = err.name() if hasattr(err, "name") else ""
    text = err.str() if hasattr(err, "str") else str(err)
    message = f"{what}: {name + ': ' if name else ''}{text}"
    # A fatal producer error here is almost always a refused producer id: no rights.
    if "AUTHORIZATION_FAILED" in name or name == "_FATAL":
        message += (
            f"; the apply lease needs Read, Write and Describe on topic {topic} (see "
            "docs/apply-safety.md), or run apply with --no-lease"
        )
    return message


_PRODUCER_ONLY = ("enable.idempotence", "acks", "message.timeout.ms")
# kquota's own request retries (``retries=0`` in a fault test) are not the lease's: an
# idempotent producer needs its retries, and each lease step is bounded by its caller.
_NOT_FOR_LEASE = ("retries", "retry.backoff.ms")


class LeaseLog:
    """LeaseLog appends to and reads the single-partition lease topic.

    ``records`` is everything read so far, in log order: each read continues where the last
    one stopped (the partition is read from its start once per process, not per attempt).
    """

    def __init__(
        self, producer_config: Mapping[str, str], topic: str, extra_bootstrap: Sequence[str] = ()
    ) -> None:
        from confluent_kafka import KafkaException, Producer

        from kquota.kafka.librdkafka import Scrubber, ScrubbingLogger

        self.topic = topic
        config = dict(producer_config)
        config["bootstrap.servers"] = merged_bootstrap(
            config.get("bootstrap.servers", ""), extra_bootstrap
        )
        self.bootstrap = config["bootstrap.servers"]
        config.setdefault("reconnect.backoff.ms", RECONNECT_BACKOFF_MS)
        # librdkafka logs every failed reconnect to stderr by default: to DEBUG, scrubbed.
        logger: Any = ScrubbingLogger(Scrubber(producer_config), _log)
        self._base: dict[str, Any] = {
            **{k: v for k, v in config.items() if k not in _PRODUCER_ONLY + _NOT_FOR_LEASE},
            "logger": logger,
        }
        own = {k: v for k, v in config.items() if k not in _NOT_FOR_LEASE}
        try:
            self._producer = Producer({**own, "linger.ms": "0", "logger": logger})
        except KafkaException as e:
            raise LeaseError(f"cannot set up the apply lease client: {e}") from None
        self._consumer: Any = None
        self._admin: Any = None
        self.records: list[LeaseRecord] = []
        self._next = 0  # the offset the consumer reads next

    # --- the topic --------------------------------------------------------------------------

    def topic_exists(self, timeout: float) -> tuple[bool, int]:
        """topic_exists says whether the lease topic exists, and how many brokers answered."""
        from confluent_kafka import KafkaException

        end = time.monotonic() + timeout
        metadata = _sliced(
            lambda t: self._admin_client().list_topics(timeout=t),
            timeout,
            retry_on=(KafkaException,),
            what=f"the metadata of topic {self.topic}",
        )
        if self.topic in metadata.topics:
            return True, len(metadata.brokers)
        # A listing leaves out the topics this principal may not Describe: ask for this one,
        # so that a topic it may not see is refused as such, not called missing.
        return self._described(max(0.1, end - time.monotonic())), len(metadata.brokers)

    def _described(self, timeout: float) -> bool:
        """_described: the lease topic exists (False: the cluster does not know it); a
        principal not allowed to describe it is refused with what the lease needs."""
        from confluent_kafka import KafkaException

        from kquota.kafka.topics import described

        try:
            return described(self._admin_client(), self.topic, timeout) is not None
        except KafkaException as e:
            err = e.args[0] if e.args else e
            raise LeaseError(_refusal(f"the lease topic {self.topic}", err, self.topic)) from None
        except TimeoutError:
            raise LeaseTimeout(
                f"no answer for the description of topic {self.topic} within {timeout:.1f} s"
            ) from None

    def require_topic(self, timeout: float, missing: Callable[[str], str]) -> None:
        """require_topic: the lease topic exists, or :class:`LeaseTopicMissing` with
        ``missing(topic)`` as its message. kquota never makes it here: a topic is made on
        request only (``kquota topics create``), so a typo'd cluster cannot grow one."""
        exists, _ = self.topic_exists(timeout)
        if not exists:
            raise LeaseTopicMissing(missing(self.topic))

    def end_offset(self, timeout: float) -> int:
        """end_offset is the offset the next record will get (0 for an empty partition)."""
        from confluent_kafka import KafkaException, TopicPartition

        _, high = _sliced(
            lambda t: self._consumer_client().get_watermark_offsets(
                TopicPartition(self.topic, 0), timeout=t
            ),
            timeout,
            retry_on=(KafkaException,),
            what=f"the end of topic {self.topic}",
        )
        return int(high)

    # --- records ----------------------------------------------------------------------------

    def append(
        self,
        owner: str,
        value: bytes | None,
        timeout: float,
        stop: threading.Event | None = None,
    ) -> Appended:
        """append writes one record and returns it once the broker confirmed it (polling in
        slices: a signal, ``stop`` or ``timeout`` ends the wait)."""
        from confluent_kafka import KafkaException

        what = f"cannot write to the lease topic {self.topic}"
        outcome: list[Any] = []

        def delivered(err: Any, msg: Any) -> None:
            # No calls in here: a fatal producer error (e.g. its producer id refused) may be
            # pending while callbacks run, and any C call would then fail with SystemError.
            outcome.append((err, msg))

        end = time.monotonic() + timeout
        try:
            self._producer.produce(self.topic, key=owner.encode(), value=value, partition=0,
                                   on_delivery=delivered)  # fmt: skip
            while not outcome:
                left = end - time.monotonic()
                if left <= 0 or (stop is not None and stop.is_set()):
                    raise LeaseTimeout(f"{what}: no confirmation within {timeout:.1f} s")
                self._producer.poll(min(SLICE, left))
        except (KafkaException, SystemError) as e:
            fatal = e if isinstance(e, KafkaException) else e.__cause__
            if not isinstance(fatal, KafkaException):
                raise
            raise LeaseError(_refusal(what, fatal.args[0], self.topic)) from None
        err, msg = outcome[0]
        if err is not None:
            raise LeaseError(_refusal(what, err, self.topic))
        _, ts = msg.timestamp()
        return Appended(int(msg.offset()), int(ts))

    def read_until(
        self, offset: int, timeout: float, stop: threading.Event | None = None
    ) -> list[LeaseRecord]:
        """read_until reads the partition through ``offset`` and returns every record so far
        (``stop`` or ``timeout`` ends the wait)."""
        from confluent_kafka import TopicPartition

        consumer = self._consumer_client()
        if self._next == 0 and not self.records:
            consumer.assign([TopicPartition(self.topic, 0, 0)])
        end = time.monotonic() + timeout
        while self._next <= offset:
            left = end - time.monotonic()
            if left <= 0 or (stop is not None and stop.is_set()):
                raise LeaseTimeout(
                    f"cannot read the lease topic {self.topic} to offset {offset} in time"
                )
            msg = consumer.poll(min(SLICE, left))
            if msg is None:
                continue
            if msg.error():
                if not _is_refusal(msg.error()):
                    continue  # a broker lost or moving: librdkafka fails over on its own
                what = f"cannot read the lease topic {self.topic}"
                raise LeaseError(_refusal(what, msg.error(), self.topic))
            self.records.append(parse_record(msg))
            self._next = int(msg.offset() or 0) + 1
        return self.records

    def close(self) -> None:
        """close drops what was never confirmed and releases the clients, within a bound:
        on a hung broker librdkafka's own close could wait for it."""
        from confluent_kafka import KafkaException

        # Every append waited for its own confirmation; what is still queued was given up on.
        try:
            self._producer.purge(in_queue=True, in_flight=True, blocking=False)
            self._producer.flush(0)
        except (KafkaException, SystemError):
            pass
        consumer, self._consumer = self._consumer, None
        if consumer is not None:
            closer = threading.Thread(target=consumer.close, name="lease-consumer-close")
            closer.daemon = True
            closer.start()
            closer.join(CLOSE_WAIT)

    def _admin_client(self) -> Any:
        if self._admin is None:
            from confluent_kafka.admin import AdminClient

            self._admin = AdminClient(dict(self._base))
        return self._admin

    def _consumer_client(self) -> Any:
        if self._consumer is None:
            from confluent_kafka import Consumer

            self._consumer = Consumer(
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
        return self._consumer


def _sliced(
    call: Callable[[float], Any],
    timeout: float,
    *,
    retry_on: tuple[type[BaseException], ...],
    what: str,
) -> Any:
    """_sliced calls ``call(slice)`` until it answers, each call at most :data:`SLICE`-ish
    long (a blocking librdkafka call that times out raises; it is then asked again)."""
    end = time.monotonic() + timeout
    last: BaseException | None = None
    while True:
        left = end - time.monotonic()
        if left <= 0:
            tail = f" (last: {last})" if last is not None else ""
            raise LeaseTimeout(f"no answer for {what} within {timeout:.1f} s{tail}")
        try:
            # A metadata call needs a connection first: a whole second per try, not a slice.
            return call(max(0.05, min(1.0, left)))
        except retry_on as e:
            if not _is_timeout(e):
                err = e.args[0] if e.args else e
                raise LeaseError(_refusal(f"no answer for {what}", err, "")) from None
            last = e


def _is_timeout(e: BaseException) -> bool:
    """_is_timeout: no answer yet (a timeout, a lost connection, a leader moving); asking
    again may get one."""
    from kquota.kafka.librdkafka import leader_moving

    if isinstance(e, TimeoutError) or leader_moving(e):
        return True
    err: Any = e.args[0] if e.args else None
    name = err.name() if hasattr(err, "name") else ""
    return name in ("_TIMED_OUT", "_TRANSPORT", "REQUEST_TIMED_OUT", "_ALL_BROKERS_DOWN")


def _is_refusal(err: Any) -> bool:
    """_is_refusal: a consumer error that retrying cannot cure (no rights, a fatal error),
    unlike a lost connection or a leader moving, which librdkafka recovers from itself."""
    name = err.name() if hasattr(err, "name") else ""
    fatal = bool(err.fatal()) if hasattr(err, "fatal") else False
    return fatal or "AUTHORIZATION_FAILED" in name or "SASL" in name or "SSL" in name


def parse_record(msg: Any) -> LeaseRecord:
    """parse_record reads one record of the lease topic; whoever can write to the topic
    wrote it, so anything not shaped as kquota writes it is a bad record, never a crash."""
    owner = (msg.key() or b"").decode(errors="replace")
    _, ts = msg.timestamp()
    offset = int(msg.offset() or 0)
    value = msg.value()
    if value is None:
        return LeaseRecord(owner, ts, offset=offset)
    try:
        data = json.loads(value)
    except (ValueError, RecursionError):
        return LeaseRecord(owner, ts, offset=offset, bad="not a kquota lease record (not JSON)")
    problem = record_problem(owner, data)
    if problem is not None:
        return LeaseRecord(owner, ts, offset=offset, bad=problem)
    renews = data.get("renews") is True
    return LeaseRecord(owner, ts, data["ttl_ms"], data, renews=renews, offset=offset)


def record_problem(owner: str, data: object) -> str | None:
    """record_problem says why a decoded claim or renewal is not one kquota would write."""
    if not isinstance(data, dict):
        return "not a kquota lease record (not a JSON object)"
    if CLAIM_ID.fullmatch(owner) is None:
        return "its claim id is not 1 to 64 letters, digits, '.', '_' or '-'"
    ttl = data.get("ttl_ms")
    if type(ttl) is not int or not 0 < ttl <= MAX_TTL_MS:
        return f"its ttl_ms is not a whole number of milliseconds from 1 to {MAX_TTL_MS} (24 h)"
    if data.get("renews") is True:
        return None
    for field in ("user", "host"):
        text = data.get(field, "?")
        if not isinstance(text, str) or len(text) > MAX_HOLDER_FIELD:
            return f"its holder's {field} is not text of at most {MAX_HOLDER_FIELD} characters"
    pid = data.get("pid", 0)
    if type(pid) is not int or not 0 <= pid < 2**31:
        return "its holder's pid is not a process id"
    return None
