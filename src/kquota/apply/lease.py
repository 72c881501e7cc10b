"""One apply at a time per cluster: a lease decided by the order of a Kafka log.

Kafka has no compare-and-set, but a single-partition topic gives every client the same
total order of records and (``message.timestamp.type=LogAppendTime``) the same clock: the
broker's. A contender appends a *claim* (key: its own id; value: who it is and how long it
may hold), waits for its offset, then reads the partition up to that offset. Replaying the
log with :func:`holder_after` (a claim wins when nobody holds the lease at the claim's
timestamp; a holder's lease ends at its release or its expiry) gives every contender the same
answer. The loser releases its claim and tries again until its deadline; the winner releases
when apply ends (also after SIGINT/SIGTERM), retrying while its deadline allows.

A claim is short (:data:`TERM`) and the holder renews it every :data:`RENEW_EVERY` while it
lives (a renewal record extends the lease from its own broker timestamp), so a holder that
died (kill -9, a lost runner, a frozen VM) blocks others for at most :data:`TERM` past its
last renewal instead of its whole ``--timeout``. A holder whose renewal did not land in time,
or whose claim was released by ``kquota lease release --force``, has lost the lease: apply
stops before its next batch (:meth:`HeldLease.check`).

The topic uses time retention, never compaction: compaction drops records out of order,
which would change the replayed winner for late readers.

Needs: Read, Write and Describe on the topic, which must exist: apply never creates it (an
operator does, once, with ``kquota topics create``; a missing topic is refused before any
write, naming that command). ``--no-lease`` skips it (a principal without those ACLs;
nothing then stops a concurrent apply, and verification reports what another writer
changed).
"""

from __future__ import annotations

import getpass
import json
import os
import socket
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager as ContextManager
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, replace
from typing import Any

from kquota.apply.lease_log import (
    LeaseError,
    LeaseLog,
    LeaseRecord,
    LeaseTimeout,
    LeaseTopicMissing,
)
from kquota.display import safe_text
from kquota.errors import LEASE_LOST, KquotaError
from kquota.runtime import timings
from kquota.runtime.deadline import Deadline, DeadlineExceeded, current, waiting_on

__all__ = [
    "LEASE_TOPIC",
    "Holder",
    "HeldLease",
    "LeaseError",
    "LeaseLost",
    "LeaseRecord",
    "LeaseTopicMissing",
    "apply_lease",
    "held_lease",
    "holder_after",
    "release_budget",
]

LEASE_TOPIC = "_kquota_apply_lease"
TOPIC_CONFIG = {
    "cleanup.policy": "delete",
    "retention.ms": str(7 * 24 * 3600 * 1000),
    "message.timestamp.type": "LogAppendTime",
}
TERM = 30.0
"""How long a claim or a renewal holds the lease, in seconds (broker clock). Long enough to
ride out a renewal delayed by the lease partition's leader dying (the controller fences it
after ``broker.session.timeout.ms``, 9 s by default, then the producer learns the new
leader: 10-12 s measured on three nodes), short enough that a dead holder's claim is gone
within half a minute."""
RENEW_EVERY = 5.0
"""Seconds between renewals: several renewals fit in one :data:`TERM`, so one or two lost to a
leader election do not lose the lease."""
RETRY_INTERVAL = 1.0
RELEASE_MIN = 2.0
RELEASE_CAP = TERM
"""The release is retried while the deadline allows, up to this: past it the claim has
expired on its own (nothing renews it once the holder is releasing)."""
RELEASE_RETRY = 0.5
UNCONFIRMED_RELEASE = 5.0
"""The release budget of a contender stopped before it knew it held the lease."""


class LeaseLost(KquotaError):
    """LeaseLost: the holder's lease ended while it held it (renewals lost, or released by
    ``kquota lease release --force``); apply stops before its next batch."""


@dataclass(frozen=True)
class Holder:
    owner: str
    since_ms: int
    until_ms: int
    info: Mapping[str, Any]
    renewed_ms: int | None = None

    @property
    def who(self) -> str:
        """who is the holder as its claim names it, shown safely: anyone who can write to
        the lease topic wrote it (:func:`kquota.apply.lease_log.record_problem` bounds it)."""
        info = self.info
        user, host = safe_text(str(info.get("user", "?"))), safe_text(str(info.get("host", "?")))
        return f"{user}@{host} pid {info.get('pid')}"

    @property
    def claim(self) -> str:
        """claim is the claim id as shown (checked at reading: letters, digits, ``._-``)."""
        return safe_text(self.owner)

    def describe(self) -> str:
        until = utc(self.until_ms, "%H:%M:%S")
        return f"{self.who}, claim {self.claim} (lease until {until} unless renewed)"


def holder_after(records: Iterable[LeaseRecord], now_ms: int | None = None) -> Holder | None:
    """holder_after replays the lease log in order and returns who holds it after it (and,
    with ``now_ms``, still at that time)."""
    holder: Holder | None = None
    for r in records:
        if holder is not None and r.timestamp_ms >= holder.until_ms:
            holder = None
        if r.renews:
            # Only the holder's own renewal, in time, extends it: a late one is a lost lease.
            if holder is not None and r.owner == holder.owner:
                until = max(holder.until_ms, r.timestamp_ms + r.ttl_ms)
                holder = replace(holder, until_ms=until, renewed_ms=r.timestamp_ms)
        elif r.is_claim:
            if holder is None:
                assert r.info is not None
                holder = Holder(r.owner, r.timestamp_ms, r.timestamp_ms + r.ttl_ms, r.info)
        elif holder is not None and r.owner == holder.owner:
            holder = None
    if holder is not None and now_ms is not None and now_ms >= holder.until_ms:
        return None
    return holder


def _claim_value(ttl_ms: int) -> bytes:
    try:
        user = getpass.getuser()
    except (OSError, KeyError):
        user = "?"
    info = {"ttl_ms": ttl_ms, "host": socket.gethostname(), "pid": os.getpid(), "user": user}
    return json.dumps(info).encode()


def _renewal_value(ttl_ms: int) -> bytes:
    return json.dumps({"ttl_ms": ttl_ms, "renews": True}).encode()


def new_claim_id() -> str:
    return uuid.uuid4().hex[:16]


class HeldLease:
    """HeldLease renews a held lease from a thread while apply runs, and knows if it was lost.

    The holder's own clock is only trusted conservatively: a renewal counts from when it was
    *sent* (the broker stamps it later), so the holder believes itself lost no later than the
    broker's log says it is.
    """

    def __init__(
        self, log: LeaseLog, owner: str, sent: float, until_ms: int, term: float, every: float
    ) -> None:
        self._log, self.owner, self._term, self._every = log, owner, term, every
        self._until_ms = until_ms
        self._local_expiry = sent + term
        self.lost: str | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="lease-renewer", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def check(self) -> None:
        """check raises :class:`LeaseLost` once the lease is known lost."""
        if self.lost is not None:
            raise LeaseLost(self.lost)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    @property
    def expires_in(self) -> float:
        """expires_in is how long the lease holds without another renewal (local clock)."""
        return self._local_expiry - time.monotonic()

    def _run(self) -> None:
        wait = self._every
        while not self._stop.wait(wait):
            left = self._local_expiry - time.monotonic()
            if left <= 0:
                self.lost = (
                    f"{LEASE_LOST}: no renewal reached the broker within "
                    f"{self._term:g} s (another apply may have taken it)"
                )
                return
            sent = time.monotonic()
            try:
                done = self._log.append(
                    self.owner, _renewal_value(int(self._term * 1000)), left, self._stop
                )
                if done.timestamp_ms >= self._until_ms:
                    self.lost = f"{LEASE_LOST}: a renewal reached the broker too late"
                    return
                self._until_ms = done.timestamp_ms + int(self._term * 1000)
                self._local_expiry = sent + self._term
                holder = holder_after(self._log.read_until(done.offset, max(0.1, left), self._stop))
            except LeaseError:
                wait = RETRY_INTERVAL  # try again soon: the lease still holds a while
                continue
            wait = self._every
            if holder is None or holder.owner != self.owner:
                self.lost = (
                    f"{LEASE_LOST}: its claim was released by another "
                    "(kquota lease release --force)"
                )
                return


def apply_lease(
    producer_config: Mapping[str, str],
    deadline: Deadline,
    *,
    topic: str = LEASE_TOPIC,
    brokers: Sequence[str] = (),
    term: float = TERM,
    renew_every: float = RENEW_EVERY,
    missing: Callable[[str], str] | None = None,
) -> ContextManager[HeldLease]:
    """apply_lease holds the cluster's apply lease for the block, waiting for it if needed,
    and renews it while the block runs. ``brokers`` are the cluster's brokers already learned
    (failover when the bootstrap address dies). A missing topic raises
    :class:`LeaseTopicMissing` with ``missing(topic)`` (default: :func:`missing_topic` of no
    cluster) before anything is written."""
    said = missing or (lambda name: missing_topic(name, None, ""))
    return _apply_lease(producer_config, deadline, topic, brokers, term, renew_every, said)


def missing_topic(topic: str, cluster: str | None, create: str) -> str:
    """missing_topic is the refusal of an apply whose cluster has no lease topic: which
    cluster, what is missing, the command that makes it (``create``), the way round it."""
    where = f"cluster {safe_text(cluster)}: " if cluster else ""
    return (
        f"{where}the apply lease topic {topic} does not exist, and apply never creates it; "
        f"create it with `{create or 'kquota topics create'}`, or run apply with --no-lease; "
        "nothing was written"
    )


@contextmanager
def _apply_lease(
    producer_config: Mapping[str, str],
    deadline: Deadline,
    topic: str,
    brokers: Sequence[str],
    term: float,
    renew_every: float,
    missing: Callable[[str], str],
) -> Iterator[HeldLease]:
    began, used = time.time(), timings.cpu()
    log = LeaseLog(_deadline_bound(producer_config, deadline), topic, brokers)
    owner = new_claim_id()
    held: HeldLease | None = None
    claimed = False
    try:
        # One wait for the whole phase (what a terminal's indicator and a log line name),
        # each step inside it its own (what the deadline's message names).
        with waiting_on(f"the apply lease on topic {topic}"):
            _bounded(
                deadline,
                f"the metadata of the lease topic {topic}",
                lambda t: log.require_topic(t, missing),
            )
            claimed = True  # from here a claim may be on the log: release it whatever happens
            held = _acquire(log, owner, int(term * 1000), deadline, term, renew_every)
        timings.record("lease", began, time.time(), timings.cpu() - used)
        held.start()
        yield held
    finally:
        if held is not None:
            held.stop()
        with timings.span("lease release"):
            if claimed:
                _release(log, owner, deadline, held)
            log.close()


def _release(log: LeaseLog, owner: str, deadline: Deadline, held: HeldLease | None) -> None:
    """The release is retried until confirmed, while what is left of the deadline allows
    (at least :data:`RELEASE_MIN`) and never past the claim's own expiry."""
    budget = release_budget(deadline.remaining())
    if held is not None:
        budget = min(budget, max(RELEASE_MIN, held.expires_in))
    else:
        # Stopped while taking the lease (a signal, a hung broker): the claim may not even
        # have landed, and it lapses within one term; do not hold the operator up for long.
        budget = min(budget, UNCONFIRMED_RELEASE)
    end = time.monotonic() + budget
    with waiting_on(f"the release of the apply lease on topic {log.topic}"):
        while True:
            left = end - time.monotonic()
            if left <= 0:
                return  # a hung or lost cluster: the claim expires at its term instead
            try:
                log.append(owner, None, left)
                return
            except LeaseError:
                time.sleep(min(RELEASE_RETRY, max(0.0, end - time.monotonic())))


def _deadline_bound(producer_config: Mapping[str, str], deadline: Deadline) -> dict[str, str]:
    """_deadline_bound lets each lease record wait for the broker's confirmation as long as
    the deadline does. Under librdkafka's 30 s bound, a broker back after 31 s failed a
    10-minute apply with "Message timed out". The broker stamps a record's time when it
    appends it (LogAppendTime), so a claim confirmed late is as valid as one confirmed at
    once; every wait for a confirmation already ends at the deadline or a signal."""
    from kquota.kafka.librdkafka import DEFAULT_TIMEOUT

    bound = max(deadline.remaining(), DEFAULT_TIMEOUT)
    return {**producer_config, "message.timeout.ms": str(int(bound * 1000))}


def release_budget(deadline_left: float) -> float:
    """release_budget is how long the release may wait: what is left of the deadline, at
    least :data:`RELEASE_MIN` (a run that hit its deadline still tries), at most
    :data:`RELEASE_CAP` (by then the claim expired on its own)."""
    return min(RELEASE_CAP, max(RELEASE_MIN, deadline_left))


def _acquire(
    log: LeaseLog, owner: str, ttl_ms: int, deadline: Deadline, term: float, every: float
) -> HeldLease:
    told: str | None = None
    while True:
        sent = time.monotonic()
        claim = _bounded(
            deadline,
            f"the broker to confirm this apply's claim on topic {log.topic}",
            lambda t: log.append(owner, _claim_value(ttl_ms), t),
        )
        offset = claim.offset
        records = _bounded(
            deadline,
            f"reading back the lease topic {log.topic}",
            lambda t: log.read_until(offset, t),  # noqa: B023
        )
        holder = holder_after(records)
        won = holder is not None and holder.owner == owner
        # The holder counts its term from when the claim was sent: one confirmed too late to
        # be renewed in time (a broker that hung) is withdrawn and made afresh.
        if holder is not None and won and time.monotonic() - sent < term - every:
            return HeldLease(log, owner, sent, holder.until_ms, term, every)
        _bounded(
            deadline,
            f"the broker to confirm this apply's withdrawn claim on {log.topic}",
            lambda t: log.append(owner, None, t),
        )
        if holder is not None and not won and holder.owner != told:
            print(waiting_message(holder), file=sys.stderr, flush=True)
            told = holder.owner
        if deadline.remaining() <= RETRY_INTERVAL:
            raise DeadlineExceeded(
                f"the {deadline.label} deadline ran out waiting for the apply lease"
                + (f", held by {holder.describe()}" if holder else "")
                + "; nothing was written"
            )
        time.sleep(RETRY_INTERVAL)


def waiting_message(holder: Holder) -> str:
    """waiting_message is what a waiting apply prints once per holder: who, until when, and
    the two commands that inspect or free the lease."""
    since = utc(holder.since_ms)
    until = utc(holder.until_ms)
    return (
        f"waiting for the apply lease: held by {holder.who} since {since}, until {until} "
        f"unless renewed (claim {holder.claim}); see `kquota lease status`, or "
        f"`kquota lease release --force {holder.claim}` if that apply is gone"
    )


def utc(ms: int, shape: str = "%Y-%m-%d %H:%M:%S") -> str:
    """utc shows a broker timestamp as a UTC date; one no calendar holds (a lease topic made
    by hand with CreateTime lets a producer pick it) as the number it is."""
    try:
        return time.strftime(shape, time.gmtime(ms / 1000)) + " UTC"
    except (OverflowError, OSError, ValueError):
        return f"{ms} ms after 1970 (not a date)"


def _bounded(deadline: Deadline, what: str, step: Callable[[float], Any]) -> Any:
    """_bounded runs one lease step, waiting on ``what``, with what is left of the deadline; a
    step that timed out because the deadline ran out says so, and what it waited on: nothing
    was written."""
    since = time.monotonic()
    with waiting_on(what):
        remaining = deadline.remaining()
        if remaining > 0:
            try:
                return step(remaining)
            except LeaseTimeout:
                if deadline.remaining() > 0.05:
                    raise
    raise DeadlineExceeded(
        f"the {deadline.label} deadline ran out: it was waiting for {what} for "
        f"{time.monotonic() - since:.1f} s; nothing was written"
    )


def held_lease(
    client_properties: Mapping[str, str],
    enabled: bool,
    brokers: Sequence[str] = (),
    missing: Callable[[str], str] | None = None,
) -> ContextManager[HeldLease | None]:
    """held_lease is apply's lease on the cluster of ``client_properties``, or nothing;
    ``missing`` words the refusal when the cluster has no lease topic."""
    limit = current()
    if not enabled or limit is None:
        return nullcontext()
    return apply_lease(lease_config(client_properties), limit, brokers=brokers, missing=missing)


def lease_config(client_properties: Mapping[str, str]) -> dict[str, str]:
    """lease_config is the lease clients' librdkafka config, from kquota's client properties
    (as the audit producer's: :func:`kquota.kafka.librdkafka.producer_config`)."""
    from kquota.kafka.librdkafka import producer_config

    return producer_config(client_properties)
