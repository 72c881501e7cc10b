"""Looking at the apply lease and freeing it by hand: ``kquota lease status`` and ``release``.

Status reads the lease topic to its end and replays it as every apply does
(:func:`kquota.apply.lease.holder_after`), then drops a holder whose lease ran out by now:
a dead holder's claim simply lapses, nothing writes its end.

Release is Terraform's ``force-unlock``: it appends a release record under the holder's claim
id, which ends that claim for every reader. A holder that is still alive notices at its next
renewal and stops before its next batch, so freeing a live apply's lease cannot make two
applies interleave for more than one batch; the command still asks first.
"""

from __future__ import annotations

import getpass
import socket
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kquota.apply.lease import LEASE_TOPIC, RENEW_EVERY, Holder, holder_after, utc
from kquota.apply.lease_log import LeaseLog, LeaseRecord
from kquota.runtime.deadline import Deadline, waiting_on
from kquota.runtime.pids import pid_alive


@dataclass(frozen=True)
class LeaseState:
    """LeaseState is what the lease topic says now: whether it exists, who holds it, and the
    bad records it holds (ignored as claims, see :class:`~kquota.apply.lease_log.LeaseRecord`)."""

    topic: str
    exists: bool
    holder: Holder | None
    records: int
    bad: tuple[LeaseRecord, ...] = ()


def lease_state(
    producer_config: Mapping[str, str],
    deadline: Deadline,
    *,
    topic: str = LEASE_TOPIC,
    brokers: Sequence[str] = (),
) -> LeaseState:
    """lease_state reads the whole lease topic and replays it (bounded by ``deadline``)."""
    log = LeaseLog(producer_config, topic, brokers)
    try:
        return _read(log, deadline)
    finally:
        log.close()


def _read(log: LeaseLog, deadline: Deadline) -> LeaseState:
    with waiting_on(f"the metadata of the lease topic {log.topic}"):
        exists, _ = log.topic_exists(_left(deadline))
    if not exists:
        return LeaseState(log.topic, False, None, 0)
    with waiting_on(f"the end of the lease topic {log.topic}"):
        end = log.end_offset(_left(deadline))
    records = []
    if end > 0:
        with waiting_on(f"reading the lease topic {log.topic}"):
            records = log.read_until(end - 1, _left(deadline))
    now_ms = int(time.time() * 1000)
    bad = tuple(r for r in records if r.bad is not None)
    return LeaseState(log.topic, True, holder_after(records, now_ms), len(records), bad)


def release_claim(
    producer_config: Mapping[str, str],
    deadline: Deadline,
    claim: str,
    *,
    topic: str = LEASE_TOPIC,
) -> LeaseState:
    """release_claim ends ``claim`` for every reader, and returns the state after it."""
    log = LeaseLog(producer_config, topic)
    try:
        with waiting_on(f"the broker to confirm the release of claim {claim} on topic {topic}"):
            log.append(claim, None, _left(deadline))
        return _read(log, deadline)
    finally:
        log.close()


def _left(deadline: Deadline) -> float:
    left = deadline.remaining()
    if left <= 0:
        raise deadline.exceeded()
    return left


def is_own(holder: Holder) -> bool:
    """is_own: the claim was made by this user on this host."""
    try:
        user = getpass.getuser()
    except (OSError, KeyError):
        user = "?"
    return holder.info.get("user") == user and holder.info.get("host") == socket.gethostname()


def holder_alive(holder: Holder) -> bool:
    """holder_alive: an own claim whose process still runs here (it releases on its own); an
    exited one not yet reaped by its parent (a zombie) is gone."""
    pid = holder.info.get("pid")
    if not is_own(holder) or not isinstance(pid, int) or pid <= 0:
        return False
    return pid_alive(pid)


def status_lines(state: LeaseState) -> list[str]:
    """status_lines is ``kquota lease status``'s text."""
    if not state.exists:
        return [f"apply lease on topic {state.topic}: free (the topic does not exist yet)"]
    holder = state.holder
    if holder is None:
        return [f"apply lease on topic {state.topic}: free", *_bad_lines(state.bad)]
    renewed = (
        f"last renewed {utc(holder.renewed_ms)}" if holder.renewed_ms is not None else "claimed"
    )
    return [
        f"apply lease on topic {state.topic}: held",
        f"  claim:  {holder.claim}",
        f"  holder: {holder.who}",
        f"  since:  {utc(holder.since_ms)}",
        f"  until:  {utc(holder.until_ms)} unless renewed ({renewed}; a live holder renews "
        f"every {RENEW_EVERY:g} s)",
        f"  free it if that apply is gone: kquota lease release --force {holder.claim}",
        *_bad_lines(state.bad),
    ]


def _bad_lines(bad: tuple[LeaseRecord, ...]) -> list[str]:
    """_bad_lines names the bad records (the first of them by offset): each counts only as a
    release of its key, so none of them holds the lease."""
    if not bad:
        return []
    first = bad[0]
    more = f" and {len(bad) - 1} more" if len(bad) > 1 else ""
    return [
        f"  ignored: {len(bad)} bad record{'s' if len(bad) > 1 else ''} (offset {first.offset}: "
        f"{first.bad}{more}); a bad record never holds the lease"
    ]
