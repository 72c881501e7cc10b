"""Audit trail in Kafka: every committed quota alteration, and drift reports, as records.

Events go to a topic with confluent-kafka (librdkafka), the data-plane client; kquota's own
wire codec only speaks the quota admin RPCs. One record per altered entity:

- key: the entity in canonical JSON (sorted type names, ``null`` = default entity), so every
  change to one entity lands in one partition, in order, and a compacted topic keeps the last;
- value: UTF-8 JSON, ``event_type``, ``entity``, ``ops`` (key, before, after, remove),
  ``plan_id``, ``git_commit``, ``actor``, ``cluster``, ``cluster_id``, ``kquota_version``,
  ``timestamp``;
- headers (KIP-82): ``event-type``, ``plan-id`` (when there is one), ``content-type``,
  so consumers can route without parsing the value; with signing keys configured, also
  ``kquota-key-id`` and ``kquota-signature``, an HMAC over the value's canonical form
  (:mod:`kquota.audit_keys`).

Decisions:

- Delivery is confirmed before :meth:`AuditPublisher.publish` returns: a bounded flush, then
  every delivery report is counted. Anything unconfirmed (failed or timed out) raises
  :class:`AuditError` saying how many; a lost audit record is an error, never a warning.
- The producer is idempotent with ``acks=all``: librdkafka's internal retries cannot write a
  record twice or out of order, and "confirmed" means the in-sync replicas have it.
- The producer is built in the constructor, so a bad client config fails before apply commits
  anything, not after; the topic name is checked there too, against Kafka's rules.
- :meth:`AuditPublisher.check` checks the topic on the cluster before apply commits anything:
  it exists (never auto-created: ``allow.auto.create.topics`` is forced off, so a typo in the
  name cannot become a new topic) and this principal may write it. WRITE on the topic is what
  the idempotent producer needs too: since KIP-679 it also grants IDEMPOTENT_WRITE.
- Secrets never reach a message or a log line: every error string and every librdkafka log
  line is scrubbed of the secret values it was given (:mod:`kquota.kafka.librdkafka`, where
  the client properties become librdkafka's config).
"""

from __future__ import annotations

import getpass
import json
import logging
import os
import subprocess
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, ClassVar, Protocol

from confluent_kafka import KafkaError, KafkaException, Producer

from kquota.audit_keys import AuditKeys
from kquota.display import safe_text
from kquota.errors import KquotaError
from kquota.kafka.librdkafka import (
    DEFAULT_TIMEOUT,
    PRODUCER_ONLY,
    LibrdkafkaConfigError,
    Scrubber,
    ScrubbingLogger,
    error_code,
    producer_config,
)
from kquota.model import Entity
from kquota.runtime.closing import ClosesOnExit
from kquota.secrets import is_secret
from kquota.timestamps import utc_timestamp
from kquota.version import __version__

CONTENT_TYPE = "application/json"
ALTERED = "quota.altered"
DRIFT = "quota.drift"

# Extra wait for the flush beyond message.timeout.ms: librdkafka reports a timed-out message
# shortly after its timeout expires, and that report is what turns a hang into a count.
_FLUSH_MARGIN = 5.0

_log = logging.getLogger(__name__)


class AuditError(KquotaError):
    """AuditError: audit events could not be written, or not confirmed as written."""


class AuditTopicMissing(AuditError):
    """AuditTopicMissing: the audit topic does not exist (kquota never creates it by writing
    to it); a caller that knows the cluster words the refusal with the command that makes it
    (:func:`kquota.operations.topics.missing_audit_topic`)."""

    def __init__(self, topic: str) -> None:
        self.topic = topic
        super().__init__(
            f"audit topic {topic!r} does not exist on the cluster; create it first with "
            "`kquota topics create` (kquota never lets a topic be auto-created, so a typo "
            "cannot become a new topic)"
        )


MAX_TOPIC_LENGTH = 249
_TOPIC_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")


def topic_name_problem(name: str) -> str | None:
    """topic_name_problem is why Kafka would refuse ``name`` as a topic name, or None."""
    # Quoted by hand: repr() would escape safe_text's backslashes a second time.
    shown = "'" + safe_text(name) + "'"
    if not name:
        return "the audit topic name is empty"
    if name in (".", ".."):
        return f"audit topic {shown}: '.' and '..' are not topic names"
    if len(name) > MAX_TOPIC_LENGTH:
        return f"audit topic name is {len(name)} characters long; Kafka allows {MAX_TOPIC_LENGTH}"
    bad = sorted({c for c in name if c not in _TOPIC_CHARS})
    if bad:
        listed = " ".join(f"'{safe_text(c)}'" for c in bad)
        return (
            f"audit topic {shown} has characters Kafka does not allow in a topic name "
            f"({listed}); allowed: ASCII letters, digits, '.', '_' and '-'"
        )
    return None


# --- events -------------------------------------------------------------------------------


def record_key(entity: Entity) -> str:
    """record_key is an audit record's key: the entity's canonical JSON, types sorted."""
    return json.dumps(entity.to_json(), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _json_bytes(payload: Mapping[str, Any]) -> bytes:
    # allow_nan=False: NaN is not JSON, and a consumer in another language would choke on it.
    return json.dumps(payload, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode()


def _timestamp_ms(timestamp: str) -> int:
    return int(datetime.fromisoformat(timestamp.replace("Z", "+00:00")).timestamp() * 1000)


@dataclass(frozen=True, slots=True)
class AuditRecord:
    """AuditRecord is one Kafka record, ready for the producer."""

    key: bytes
    value: bytes
    headers: list[tuple[str, bytes]]
    timestamp_ms: int


class Event(Protocol):
    """Event is anything :class:`AuditPublisher` can publish."""

    def payload(self) -> dict[str, Any]: ...

    def record(self) -> AuditRecord: ...


class _OpLike(Protocol):
    @property
    def key(self) -> str: ...
    @property
    def value(self) -> float | None: ...
    @property
    def remove(self) -> bool: ...
    @property
    def before(self) -> float | None: ...


class _AlterationLike(Protocol):
    @property
    def entity(self) -> Entity: ...
    @property
    def ops(self) -> Sequence[_OpLike]: ...


@dataclass(frozen=True, slots=True)
class AuditOp:
    """AuditOp is one key of an alteration: ``before`` -> ``after`` (None = absent)."""

    key: str
    before: float | None
    after: float | None
    remove: bool

    def to_json(self) -> dict[str, Any]:
        return {"key": self.key, "before": self.before, "after": self.after, "remove": self.remove}


@dataclass(frozen=True, slots=True)
class AuditEvent:
    """AuditEvent records one committed alteration of one entity (event type quota.altered)."""

    event_type: ClassVar[str] = ALTERED

    entity: Entity
    ops: tuple[AuditOp, ...]
    plan_id: str | None
    cluster: str | None
    git_commit: str | None = None
    actor: str | None = None
    kquota_version: str = __version__
    timestamp: str = field(default_factory=utc_timestamp)
    cluster_id: str | None = None
    """The Kafka cluster id the apply was committed to: what revert checks the target by."""

    @classmethod
    def from_alteration(
        cls,
        alteration: _AlterationLike,
        *,
        plan_id: str | None,
        cluster: str | None,
        git_commit: str | None,
        actor: str | None,
        timestamp: str | None = None,
        cluster_id: str | None = None,
    ) -> AuditEvent:
        """from_alteration builds the event for a committed plan alteration (entity + ops).

        Accepts any object shaped like ``kquota.plan.types.Alteration`` (ops with key, value,
        remove, before), so the audit trail does not depend on the planner's module.
        """
        ops = tuple(
            AuditOp(
                key=op.key,
                before=op.before,
                after=None if op.remove else op.value,
                remove=op.remove,
            )
            for op in alteration.ops
        )
        return cls(
            entity=alteration.entity,
            ops=ops,
            plan_id=plan_id,
            cluster=cluster,
            git_commit=git_commit,
            actor=actor,
            timestamp=timestamp or utc_timestamp(),
            cluster_id=cluster_id,
        )

    def payload(self) -> dict[str, Any]:
        """payload is the record value as a dict (the JSON contract of quota.altered)."""
        return {
            "event_type": self.event_type,
            "entity": self.entity.to_json(),
            "ops": [op.to_json() for op in self.ops],
            "plan_id": self.plan_id,
            "git_commit": self.git_commit,
            "actor": self.actor,
            "cluster": self.cluster,
            "cluster_id": self.cluster_id,
            "kquota_version": self.kquota_version,
            "timestamp": self.timestamp,
        }

    def headers(self) -> list[tuple[str, bytes]]:
        headers = [("event-type", self.event_type.encode())]
        if self.plan_id is not None:
            headers.append(("plan-id", self.plan_id.encode()))
        headers.append(("content-type", CONTENT_TYPE.encode()))
        return headers

    def record(self) -> AuditRecord:
        return AuditRecord(
            key=record_key(self.entity).encode(),
            value=_json_bytes(self.payload()),
            headers=self.headers(),
            timestamp_ms=_timestamp_ms(self.timestamp),
        )


@dataclass(frozen=True, slots=True)
class DriftEvent:
    """DriftEvent publishes one drift report of one cluster (event type quota.drift).

    The key is the cluster name, so a cluster's reports stay in order in one partition. The
    report is the drift command's JSON report, carried as is.
    """

    event_type: ClassVar[str] = DRIFT

    cluster: str
    report: Mapping[str, Any]
    git_commit: str | None = None
    actor: str | None = None
    kquota_version: str = __version__
    timestamp: str = field(default_factory=utc_timestamp)

    def payload(self) -> dict[str, Any]:
        return {
            "event_type": self.event_type,
            "cluster": self.cluster,
            "report": dict(self.report),
            "git_commit": self.git_commit,
            "actor": self.actor,
            "kquota_version": self.kquota_version,
            "timestamp": self.timestamp,
        }

    def headers(self) -> list[tuple[str, bytes]]:
        return [("event-type", self.event_type.encode()), ("content-type", CONTENT_TYPE.encode())]

    def record(self) -> AuditRecord:
        return AuditRecord(
            key=self.cluster.encode(),
            value=_json_bytes(self.payload()),
            headers=self.headers(),
            timestamp_ms=_timestamp_ms(self.timestamp),
        )


# --- provenance ---------------------------------------------------------------------------


def git_commit(cwd: str | os.PathLike[str] | None = None) -> str | None:
    """git_commit is the commit being applied: ``$GITHUB_SHA`` in Actions, else ``git rev-parse
    HEAD`` in ``cwd``; None when neither is available (no git, not a repository)."""
    sha = os.environ.get("GITHUB_SHA", "").strip()
    if sha:
        return sha
    try:
        proc = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    out = proc.stdout.strip()
    return out if proc.returncode == 0 and out else None


def actor() -> str | None:
    """actor is who applied: ``$GITHUB_ACTOR`` in Actions, else the OS user (None if unknown)."""
    name = os.environ.get("GITHUB_ACTOR", "").strip()
    if name:
        return name
    try:
        return getpass.getuser() or None
    except (OSError, KeyError):
        # getuser() raises when no login name is set and the uid has no passwd entry (containers).
        return None


# --- publisher ----------------------------------------------------------------------------


class AuditPublisher(ClosesOnExit):
    """AuditPublisher produces audit and drift events to one topic and confirms delivery.

    Use it as a context manager (``with AuditPublisher(topic, config) as audit:``); leaving it
    purges whatever was never confirmed and closes the producer within a bound, so a dead
    cluster cannot hang the process on exit.

    ``producer_config`` is kquota's client properties (see :func:`producer_config`) or an
    already mapped librdkafka config; ``timeout`` bounds one :meth:`publish` call; with
    ``signer`` every record carries the headers that sign it.
    """

    def __init__(
        self,
        topic: str,
        producer_config: Mapping[str, str],
        *,
        timeout: float = DEFAULT_TIMEOUT,
        signer: AuditKeys | None = None,
    ) -> None:
        problem = topic_name_problem(topic)
        if problem is not None:
            raise AuditError(problem)
        self.topic = topic
        self.signer = signer
        config = _map_config(producer_config, timeout)
        self._config = config
        self._timeout = timeout
        self._scrub = Scrubber(
            producer_config, extra=(v for k, v in config.items() if is_secret(k))
        )
        self._logger = ScrubbingLogger(self._scrub, _log)
        self._client_error: str | None = None
        # message.timeout.ms may be given explicitly (tests, users): the flush waits for it.
        self._flush_timeout = int(config["message.timeout.ms"]) / 1000 + _FLUSH_MARGIN
        try:
            self._producer: Producer | None = Producer(
                {**config, "error_cb": self._on_error, "logger": self._logger}
            )
        except KafkaException as e:
            raise AuditError(
                f"cannot create the audit producer: {self._scrub(_kafka_message(e))}"
            ) from None

    def _on_error(self, err: KafkaError) -> None:
        # Client-level errors (connection refused, auth failed) come here, not per message;
        # the last one explains a timeout better than "Message timed out".
        self._client_error = self._scrub(err.str())

    def check(self) -> None:
        """check confirms, before anything is committed, that events can go to the topic: it
        exists and this principal may write it. Raises AuditError saying what to fix.

        One DescribeTopics by name (:func:`kquota.kafka.topics.described`: Metadata without
        auto-creation) with the topic's authorized operations; a broker too old to report
        them (before 2.3) is only checked for the topic's existence, and a denied write then
        still fails at publish, loudly.
        """
        from confluent_kafka.admin import AdminClient

        from kquota.kafka.topics import described

        # The stubs type the config as plain values; callbacks are taken all the same.
        hooks: dict[str, Any] = {"error_cb": self._on_error, "logger": self._logger}
        # The connection settings without the producer's own: an admin handle with
        # enable.idempotence would ask for a producer id it never uses.
        producer_only = PRODUCER_ONLY
        settings = {k: v for k, v in self._config.items() if k not in producer_only}
        admin = AdminClient({**settings, **hooks})
        try:
            description = described(
                admin, self.topic, self._timeout, operations=True, margin=_FLUSH_MARGIN
            )
        except KafkaException as e:
            raise AuditError(self._check_failure(e)) from None
        except TimeoutError:
            raise AuditError(
                f"audit topic {self.topic!r}: the cluster did not answer within "
                f"{self._timeout:.0f}s{self._last_client_error()}"
            ) from None
        if description is None:
            raise AuditTopicMissing(self.topic)
        ops = description.authorized_operations
        if ops is not None and not {"WRITE", "ALL"} & {op.name for op in ops}:
            raise AuditError(
                f"audit topic {self.topic!r}: {self._principal()} is not allowed WRITE on it, "
                "which the audit producer needs (for its idempotent producer id too)"
            )

    def _check_failure(self, e: KafkaException) -> str:
        if error_code(e) == KafkaError.TOPIC_AUTHORIZATION_FAILED:
            return (
                f"audit topic {self.topic!r}: {self._principal()} is not allowed to describe "
                "or write it (the audit producer needs WRITE on the topic)"
            )
        return (
            f"audit topic {self.topic!r}: cannot check it: {self._scrub(_kafka_message(e))}"
            f"{self._last_client_error()}"
        )

    def _last_client_error(self) -> str:
        return f" (last client error: {self._client_error})" if self._client_error else ""

    def _principal(self) -> str:
        from kquota.kafka.authz import principal_name

        principal = principal_name(
            self._config.get("security.protocol", "PLAINTEXT").upper(),
            self._config.get("sasl.mechanism"),
            self._config.get("sasl.username"),
        )
        return safe_text(principal) if principal else "the connection's principal"

    def publish(self, events: Iterable[Event]) -> None:
        """publish produces every event and returns once each one is confirmed by the broker.

        Raises AuditError if any event failed or was not confirmed within the bound; the
        message says how many of how many, and why (first distinct causes, secrets removed).
        An unconfirmed event may still have been written: consumers must tolerate duplicates.
        """
        producer = self._require_open()
        try:
            records = [self._signed(event) for event in events]
        except ValueError as e:
            raise AuditError(f"an audit event cannot be encoded as JSON: {e}") from None
        if not records:
            return
        confirmed = 0
        failures: list[str] = []
        first_error: KafkaError | None = None
        last_error: KafkaError | None = None

        def on_delivery(err: KafkaError | None, _msg: object) -> None:
            # No calls in here: confluent-kafka runs delivery callbacks while a fatal error it
            # is about to raise may already be pending, and any C call made then (even
            # err.str()) fails with SystemError. The errors are read after the flush.
            nonlocal confirmed, first_error, last_error
            if err is None:
                confirmed += 1
            else:
                if first_error is None:
                    first_error = err
                last_error = err

        deadline = time.monotonic() + self._flush_timeout
        for record in records:
            if not self._produce(producer, record, on_delivery, deadline, failures):
                break
        try:
            remaining = producer.flush(max(0.0, deadline - time.monotonic()))
        except (KafkaException, SystemError) as e:
            # A fatal producer error (e.g. its idempotent producer id refused: no WRITE on the
            # topic any more) is raised here rather than reported per record.
            failures.append(self._scrub(_kafka_message(_fatal_error(e))))
            remaining = 0
        for err in (first_error, last_error):
            if err is not None:
                failures.append(self._scrub(err.str()))
        missing = len(records) - confirmed
        if missing == 0:
            return
        raise AuditError(self._failure_message(missing, len(records), failures, remaining))

    def _signed(self, event: Event) -> AuditRecord:
        record = event.record()
        if self.signer is None:
            return record
        signature = self.signer.headers(event.payload())
        return AuditRecord(
            record.key, record.value, [*record.headers, *signature], record.timestamp_ms
        )

    def _produce(
        self,
        producer: Producer,
        record: AuditRecord,
        on_delivery: Any,
        deadline: float,
        failures: list[str],
    ) -> bool:
        # The stubs want the wider header type; a list is invariant, so copy into one.
        headers: list[tuple[str, str | bytes | None]] = list(record.headers)
        while True:
            try:
                producer.produce(
                    self.topic,
                    key=record.key,
                    value=record.value,
                    headers=headers,
                    timestamp=record.timestamp_ms,
                    on_delivery=on_delivery,
                )
                return True
            except BufferError:
                # The local queue is full: serve delivery reports to make room, within bound.
                if time.monotonic() >= deadline:
                    failures.append("the producer queue stayed full")
                    return False
                producer.poll(0.1)
            except KafkaException as e:
                # Refused locally (e.g. record too large): it counts as not confirmed.
                failures.append(self._scrub(_kafka_message(e)))
                return True

    def _failure_message(
        self, missing: int, total: int, failures: list[str], remaining: int
    ) -> str:
        reasons = list(dict.fromkeys(failures))[:3]
        if remaining:
            reasons.append(f"{remaining} still unacknowledged after {self._flush_timeout:.0f}s")
        if self._client_error and self._client_error not in reasons:
            reasons.append(f"last client error: {self._client_error}")
        elif self._logger.last_error and not failures:
            reasons.append(f"last client error: {self._logger.last_error}")
        why = "; ".join(reasons) or "no delivery report"
        return (
            f"audit trail: {missing} of {total} event(s) to topic {self.topic!r} were not "
            f"confirmed as written ({why})"
        )

    def close(self, timeout: float = 5.0) -> None:
        """close drops unconfirmed records and releases the producer, within ``timeout``."""
        producer, self._producer = self._producer, None
        if producer is None:
            return
        # After a failed publish records may still be queued: purge them, or close() would
        # wait for their delivery with no bound. A producer in a fatal state (say, its
        # idempotent producer id was refused) raises from purge: what went wrong has already
        # been reported by publish or check, so closing never adds a traceback.
        try:
            producer.purge(in_queue=True, in_flight=True, blocking=True)
            producer.flush(timeout)
        except (KafkaException, SystemError) as e:
            fatal = _fatal_error(e)
            _log.debug("closing the audit producer: %s", self._scrub(_kafka_message(fatal)))
        producer.close()

    def _require_open(self) -> Producer:
        if self._producer is None:
            raise AuditError("the audit publisher is closed")
        return self._producer


def _map_config(config: Mapping[str, str], timeout: float) -> dict[str, str]:
    try:
        mapped = producer_config(config, timeout=timeout)
    except LibrdkafkaConfigError as e:
        raise AuditError(str(e)) from None
    # An explicit message.timeout.ms wins over ``timeout``.
    if "message.timeout.ms" in config:
        mapped["message.timeout.ms"] = str(config["message.timeout.ms"])
    return mapped


def _fatal_error(e: KafkaException | SystemError) -> KafkaException:
    """_fatal_error is the KafkaException behind ``e``: when a delivery callback runs while
    confluent-kafka has a fatal error pending, that error surfaces as the cause of a
    SystemError. A SystemError with any other cause is not ours to translate."""
    if isinstance(e, KafkaException):
        return e
    if isinstance(e.__cause__, KafkaException):
        return e.__cause__
    raise e


def _kafka_message(e: KafkaException) -> str:
    err = e.args[0] if e.args else None
    return err.str() if isinstance(err, KafkaError) else str(e)
