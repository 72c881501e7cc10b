"""Apply a plan: validate-only pass, chunked commit, verification.

1. Refuse a plan the mass-removal guard stopped (unless the operator allowed it).
2. Send every alteration with ValidateOnly=true. If any entity fails, commit nothing and
   report every failure with the broker's message.
3. Commit in batches, every alteration that only sets before any that removes
   (:func:`commit_order`: a quota moving between entities is never missing in between,
   docs/apply-safety.md); WireAdmin sends one alteration per entity per request and keeps each
   request below the controller's batch limit (``kquota.kafka.admin.chunk_alterations``, 5,000
   ops a request: far below the protocol's cap of 1,000,000 array elements, which the codec
   refuses to send; tests/kafka/protocol/test_protocol_array_cap.py); a batch ends where one of
   those requests ends (:class:`RequestCuts`), so the commit sends the very requests the
   validate-only pass encoded. Alterations are atomic per entity on the controller, so an
   entity is never half written; a connection that breaks mid-apply leaves a clear split of
   committed / uncertain / not attempted entities, and re-running the same plan converges
   because every op is an idempotent set or remove.
   SIGINT/SIGTERM (as KeyboardInterrupt, see :mod:`kquota.apply.interrupts`) and the command's
   deadline (:mod:`kquota.runtime.deadline`) stop the commit the same way; the batch in
   flight is then settled by describing, a few seconds at most.
4. Verify: poll describe at every live broker until each shows what this run wrote, within a
   bound, and report the entities that did not converge and those another writer changed
   since. Brokers apply the metadata log at their own pace; waiting for all of them means a
   drift check right after apply, wherever it reads, sees what was applied
   (docs/consistency.md). Few entities are read by exact-match describes of just those
   entities; many are first waited for by polling the last one written that way, then read
   with one describe-all per broker (:func:`_verify`).
"""

from __future__ import annotations

import bisect
import itertools
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from kquota.apply.interrupts import signal_name, stop_signal
from kquota.apply.verify import overwritten, unconverged
from kquota.model import Entity, QuotaState
from kquota.plan.guard import refuse_unapplied
from kquota.plan.types import Alteration, Plan
from kquota.runtime import deadline, progress
from kquota.runtime.deadline import DeadlineExceeded, bounded

DEFAULT_BATCH_SIZE = 20_000
"""Alterations per commit call. WireAdmin splits each call into requests of at most 5,000
changed keys and keeps several in flight, so a batch must span several requests for that
pipelining to pay (measured: 100k alterations committed in 6.2 s as one call, 8.2 s in
batches of 2,000). A connection cut leaves at most one batch uncertain, and apply settles
that batch by describing."""
FIRST_POLL_DELAY = 0.02
"""Verification polls at 0.02 s, then doubles up to ``poll_interval``: a broker's metadata
image usually trails the controller by milliseconds, so a fixed 0.25 s sleep was mostly
waiting for nothing (on a 100k apply, the sleeps were a tenth of the verify phase)."""
EXACT_READ_MAX = 20
"""Verification reads at most this many entities by exact-match describes (one small request
per entity and broker); more are read by a describe-all per broker. A broker answers an
exact-match describe by scanning every entity it holds (Kafka 4.3.1), so on a cluster of
100k entities one costs about a 28th of a describe-all (measured: 130 ms against 3.7 s, load
average 14): exact reads pay only for a handful of entities."""
LAST_WRITE_SHOWS = "the last committed entity to show at every broker"
"""What verification of a large apply waits for first (the status line's words)."""
SETTLE_TIMEOUT = 5.0
"""How long to watch for the batch that was in flight when a connection broke: a committed
batch shows within this on a healthy cluster; one that never reached the controller never
shows, and waiting the full verify timeout for it would only delay the report."""


class Admin(Protocol):
    """Admin is the part of WireAdmin the applier uses (a Protocol keeps this testable)."""

    def alter(self, alterations: Sequence[Any], *, validate_only: bool) -> Sequence[Any]: ...

    def describe_all(self) -> QuotaState: ...

    def describe_each_broker(self) -> Sequence[QuotaState]: ...


@runtime_checkable
class ExactReads(Protocol):
    """ExactReads is an admin that can also read given entities at every broker (WireAdmin
    can; an admin without it is verified by describe-alls only)."""

    def describe_entities_each_broker(self, entities: Sequence[Entity]) -> Sequence[QuotaState]: ...


@runtime_checkable
class RequestCuts(Protocol):
    """RequestCuts is an admin that says where it would end each request of an alter call
    (WireAdmin can): the commit's batches are cut at those ends, so that each batch sends the
    very requests the validate-only pass sent, whose encoded bytes WireAdmin reuses."""

    def request_ends(self, alterations: Sequence[Alteration]) -> list[int]: ...


def request_ends_of(admin: object, alterations: Sequence[Alteration]) -> list[int]:
    """request_ends_of is where ``admin`` would end each request of an alter call over
    ``alterations`` (:class:`RequestCuts`); none for an admin that cannot say, whose commit
    batches are then cut by size alone."""
    return admin.request_ends(alterations) if isinstance(admin, RequestCuts) else []


@dataclass(frozen=True)
class EntityFailure:
    entity: Entity
    error_name: str
    message: str | None

    def __str__(self) -> str:
        return f"{self.entity}: {self.error_name}" + (f": {self.message}" if self.message else "")


@dataclass
class ApplyReport:
    """ApplyReport is what happened to every entity of a plan."""

    validation_failures: list[EntityFailure] = field(default_factory=list)
    committed: list[Alteration] = field(default_factory=list)
    failed: list[EntityFailure] = field(default_factory=list)
    uncertain: list[Entity] = field(default_factory=list)
    not_attempted: list[Entity] = field(default_factory=list)
    unconverged: list[Entity] = field(default_factory=list)
    interrupted: str | None = None
    already_applied: list[Entity] = field(default_factory=list)
    stopped_by: str | None = None
    """Why apply stopped early: "connection", "deadline", "signal" (in the commit) or
    "signal in verification" (everything committed, verification cut short)."""
    signal: int | None = None
    second_signal: bool = False
    """A second signal cut settling short: the in-flight batch stays uncertain."""
    overwritten: list[tuple[Entity, str]] = field(default_factory=list)
    """Entities another writer changed after this run wrote them, and how."""

    @property
    def ok(self) -> bool:
        """ok: every entity committed and verified, nothing stopped, failed or overwritten."""
        return not (
            self.validation_failures
            or self.failed
            or self.uncertain
            or self.not_attempted
            or self.unconverged
            or self.interrupted
            or self.overwritten
        )


def _failures(results: Sequence[Any]) -> list[EntityFailure]:
    return [EntityFailure(r.entity, r.error_name, r.error_message) for r in results if not r.ok]


def apply_plan(
    admin: Admin,
    plan: Plan,
    *,
    batch_size: int = DEFAULT_BATCH_SIZE,
    on_batch: Callable[[int], None] | None = None,
    verify_timeout: float = 15.0,
    poll_interval: float = 0.25,
    connection_errors: tuple[type[BaseException], ...] = (),
    already_applied: frozenset[Entity] = frozenset(),
) -> ApplyReport:
    """apply_plan applies ``plan`` through ``admin`` and reports per entity.

    ``connection_errors`` are the exceptions that mean "the connection broke" (the caller's
    transport types); they end the commit phase with a report instead of a traceback.
    ``already_applied`` entities (a re-run after an interrupted apply) are not sent again.
    """
    report = ApplyReport()
    if plan.empty:
        return report
    refuse_unapplied(plan)
    alterations = to_commit(plan, already_applied)
    if already_applied:
        report.already_applied = [a.entity for a in plan.alterations if a.entity in already_applied]
    if not alterations:
        return report
    # The plan's alterations go to the wire as they are (WireAdmin reads entity and ops).
    with progress.phase("validate-only", total=len(alterations)):
        report.validation_failures = _failures(admin.alter(alterations, validate_only=True))
    if report.validation_failures:
        return report

    stops: tuple[type[BaseException], ...] = (*connection_errors, DeadlineExceeded)
    batches = commit_batches(alterations, batch_size, request_ends_of(admin, alterations))
    done = 0  # alterations whose batch is recorded; the next batch is the one in flight
    try:
        with progress.phase("commit", total=len(alterations)):
            for start, end in batches:
                batch = alterations[start:end]
                results = admin.alter(batch, validate_only=False)
                _record(report, batch, results)
                if on_batch is not None:
                    on_batch(len(batch))
                done = end
    except stops as e:
        report.interrupted = str(e)
        report.stopped_by = "deadline" if isinstance(e, DeadlineExceeded) else "connection"
    except KeyboardInterrupt:
        report.signal = stop_signal()
        report.interrupted = f"interrupted by {signal_name(report.signal)}"
        report.stopped_by = "signal"
    if report.stopped_by is not None:
        recorded = {a.entity for a in report.committed} | {f.entity for f in report.failed}
        recorded.update(report.uncertain)
        flight_end = next((end for start, end in batches if start == done), done)
        in_flight = alterations[done:flight_end]
        report.uncertain += [a.entity for a in in_flight if a.entity not in recorded]
        report.not_attempted = [a.entity for a in alterations[flight_end:]]

    if report.uncertain and report.interrupted:
        # A few seconds even past an expired deadline: the report must say what was written.
        with bounded(min(verify_timeout, SETTLE_TIMEOUT), "settling", cap=False):
            _settle_uncertain(admin, report, alterations, connection_errors, poll_interval)
    if report.committed and report.stopped_by in (None, "connection"):
        try:
            with (
                bounded(verify_timeout, f"verification ({verify_timeout:g} s)"),
                progress.phase("verify", total=len(report.committed), reads=True),
            ):
                _verify(admin, report, report.committed, poll_interval)
        except connection_errors as e:
            report.interrupted = report.interrupted or f"verification failed: {e}"
            report.unconverged = [a.entity for a in report.committed]
        except KeyboardInterrupt:
            report.signal = report.signal or stop_signal()
            report.interrupted = f"interrupted by {signal_name(report.signal)} while verifying"
            report.stopped_by = "signal in verification"
    return report


def verify_shown(
    admin: Admin,
    alterations: Sequence[Alteration],
    *,
    verify_timeout: float = 15.0,
    poll_interval: float = 0.25,
) -> ApplyReport:
    """verify_shown is the verification of :func:`apply_plan` alone, for ``alterations`` an
    earlier run committed (a resumed fleet rollout): a report counting them committed, with
    those not shown yet by every broker, or changed by another writer since, as such."""
    report = ApplyReport(committed=list(alterations))
    if alterations:
        with (
            bounded(verify_timeout, f"verification ({verify_timeout:g} s)"),
            progress.phase("verify", total=len(alterations)),
        ):
            _verify(admin, report, list(alterations), poll_interval)
    return report


def commit_phase(alteration: Alteration) -> int:
    """commit_phase orders the commit so that no principal goes unthrottled between two
    alterations (docs/apply-safety.md): 0 sets only, 1 sets and removes, 2 removes only."""
    removes = 0
    for op in alteration.ops:  # a loop, not sum() over a generator: 100k entities a call
        if op.remove:
            removes += 1
    if removes == 0:
        return 0
    return 2 if removes == len(alteration.ops) else 1


def commit_order(alterations: Iterable[Alteration]) -> list[Alteration]:
    """commit_order is ``alterations`` by :func:`commit_phase`, plan order within a phase."""
    return sorted(alterations, key=commit_phase)  # stable


def to_commit(plan: Plan, already_applied: frozenset[Entity]) -> list[Alteration]:
    """to_commit is what :func:`apply_plan` sends of ``plan``: its alterations but those of
    ``already_applied`` entities, in :func:`commit_order`."""
    if not already_applied:
        return commit_order(plan.alterations)
    return commit_order(a for a in plan.alterations if a.entity not in already_applied)


def commit_batches(
    alterations: Sequence[Alteration], size: int, request_ends: Sequence[int] = ()
) -> list[tuple[int, int]]:
    """commit_batches cuts the ordered alterations into ``[start, end)`` batches of at most
    ``size`` that never span two phases: WireAdmin pipelines the requests of one call (and
    retries some), so only separate calls are ordered on the cluster. Given the admin's
    ``request_ends`` over all of them (:class:`RequestCuts`), a batch ends at the last of
    those within its size when there is one: a batch cut mid-request would re-encode every
    request after it (a mixed plan's 1-2 keys an entity put 20,000 entities at no request's
    end)."""
    out: list[tuple[int, int]] = []
    start = 0
    for _, phase in itertools.groupby(alterations, key=commit_phase):
        end = start + sum(1 for _ in phase)
        s = start
        while s < end:
            limit = min(s + size, end)
            cut = bisect.bisect_right(request_ends, limit) - 1
            e = request_ends[cut] if limit < end and cut >= 0 and request_ends[cut] > s else limit
            out.append((s, e))
            s = e
        start = end
    return out


def _record(report: ApplyReport, batch: list[Alteration], results: Sequence[Any]) -> None:
    # The usual answer first: one accepted result per alteration, in order, for the very
    # entity objects sent (WireAdmin's), checked without hashing an entity (Python-level).
    if len(results) == len(batch) and all(
        r.ok and r.entity is a.entity for r, a in zip(results, batch, strict=True)
    ):
        report.committed.extend(batch)
        return
    by_entity = {r.entity: r for r in results}
    for alt in batch:
        r = by_entity.get(alt.entity)
        if r is None:
            report.uncertain.append(alt.entity)
        elif r.ok:
            report.committed.append(alt)
        else:
            report.failed.append(EntityFailure(alt.entity, r.error_name, r.error_message))


def _settle_uncertain(
    admin: Admin,
    report: ApplyReport,
    alterations: list[Alteration],
    connection_errors: tuple[type[BaseException], ...],
    interval: float,
) -> None:
    """_settle_uncertain asks the cluster whether the batch in flight when the apply stopped
    was committed; entities it shows fully applied count as committed. A second signal, a
    broken connection or the settling bound leaves the rest uncertain."""
    uncertain = set(report.uncertain)
    in_flight = [a for a in alterations if a.entity in uncertain]
    settled = ApplyReport()
    try:
        _verify(admin, settled, in_flight, interval)
    except connection_errors:
        return
    except KeyboardInterrupt:
        report.second_signal = True
        return
    still = set(settled.unconverged) | {e for e, _ in settled.overwritten}
    report.committed.extend(a for a in in_flight if a.entity not in still)
    report.uncertain = [e for e in report.uncertain if e in still]


def _verify(admin: Admin, report: ApplyReport, written: list[Alteration], interval: float) -> None:
    """_verify polls every live broker until each shows what this run wrote, within the
    current deadline.

    An entity showing a value neither written nor planned against was changed by another
    writer: it goes to ``report.overwritten`` at once rather than being waited for. Up to
    :data:`EXACT_READ_MAX` pending entities are read by exact match. More are read whole,
    but only once the last entity written shows at every broker: a broker applies the
    metadata log in order, so by then it very likely shows the rest, and the describe-all
    that follows is the proof. Polling describe-alls instead cost a 100k apply seven of them,
    each taking CPU from the broker it waits for.
    """
    exact = admin if isinstance(admin, ExactReads) else None
    pending = list(written)
    try:
        if exact is not None and len(pending) > EXACT_READ_MAX:
            # The last entity is a probe, not a result: it is counted with the rest, and the
            # status line says what the bar, still at 0, waits for (the metadata log's way to
            # every broker), with the seconds moving.
            with deadline.waiting_on(LAST_WRITE_SHOWS):
                probe = pending[-1:]
                _poll(
                    exact.describe_entities_each_broker, probe, interval, ApplyReport(), count=False
                )
        _poll(
            lambda entities: (
                exact.describe_entities_each_broker(entities)
                if exact is not None and len(entities) <= EXACT_READ_MAX
                else admin.describe_each_broker()
            ),
            pending,
            interval,
            report,
        )
    except DeadlineExceeded:
        pass
    report.unconverged = [a.entity for a in pending]


def _poll(
    read: Callable[[list[Entity]], Sequence[QuotaState]],
    pending: list[Alteration],
    interval: float,
    report: ApplyReport,
    count: bool = True,
) -> None:
    """_poll reads the ``pending`` entities at every broker (``read``) until all show this
    run's writes or the deadline is near, sleeping 0.02 s, then twice as long up to
    ``interval``. Narrows ``pending`` in place to the entities left (so a DeadlineExceeded
    from a read leaves the caller the last answer) and moves those another writer changed
    to ``report.overwritten``."""
    delay = min(interval, FIRST_POLL_DELAY)
    while True:
        views = read([a.entity for a in pending])
        left: set[Entity] = set()
        for view in views:
            left.update(unconverged(pending, view))
        if not left:  # every broker shows every write: the usual end, 100k entities at once
            if count:
                progress.advance(len(pending))
            pending.clear()
            return
        still = []
        for a in pending:
            if a.entity not in left:
                continue
            how = _overwritten_anywhere(a, views)
            if how is None:
                still.append(a)
            else:
                report.overwritten.append((a.entity, how))
        if count:
            progress.advance(len(pending) - len(still))
        pending[:] = still
        limit = deadline.current()
        if not pending or (limit is not None and limit.remaining() <= delay):
            return
        time.sleep(delay)
        delay = min(interval, delay * 2)


def _overwritten_anywhere(alt: Alteration, views: Sequence[QuotaState]) -> str | None:
    for view in views:
        how = overwritten(alt, view.get(alt.entity, {}))
        if how is not None:
            return how
    return None
