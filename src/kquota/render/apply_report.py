"""The report of an apply, as the operator reads it: committed, failed, stopped, verified.

It reads the applier's report through :class:`AppliedReport` (the fields it shows), so the
renderer needs nothing of the writer.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from kquota.errors import LEASE_LOST
from kquota.model import Entity, display_entity
from kquota.render.failures import Failure, failure_lines

_SHOW = 10


class AppliedReport(Protocol):
    """AppliedReport: the fields of :class:`kquota.apply.applier.ApplyReport` shown here."""

    @property
    def validation_failures(self) -> Sequence[Failure]: ...
    @property
    def committed(self) -> Sequence[object]: ...
    @property
    def failed(self) -> Sequence[Failure]: ...
    @property
    def uncertain(self) -> Sequence[Entity]: ...
    @property
    def not_attempted(self) -> Sequence[Entity]: ...
    @property
    def unconverged(self) -> Sequence[Entity]: ...
    @property
    def interrupted(self) -> str | None: ...
    @property
    def already_applied(self) -> Sequence[Entity]: ...
    @property
    def stopped_by(self) -> str | None: ...
    @property
    def second_signal(self) -> bool: ...
    @property
    def overwritten(self) -> Sequence[tuple[Entity, str]]: ...


def apply_report_lines(report: AppliedReport, total: int) -> list[str]:
    """apply_report_lines: what became of a plan of ``total`` alterations, line by line."""
    out: list[str] = []
    if report.validation_failures:
        out.append(
            f"validate-only pass failed for {len(report.validation_failures)} of {total} "
            "entities; nothing was committed:"
        )
        out += failure_lines(report.validation_failures)
        return out
    done = len(report.committed)
    line = f"committed {done} of {total} entities"
    if report.already_applied:
        line += f" ({len(report.already_applied)} already applied by an earlier run)"
    out.append(line)
    out += failure_lines(report.failed, prefix="failed ")
    if report.interrupted:
        out += stop_lines(report)
        if report.uncertain:
            out.append(f"  {len(report.uncertain)} entities may or may not have been committed")
        if report.not_attempted:
            out.append(f"  {len(report.not_attempted)} entities were not attempted")
        out.append("  every op is an idempotent set or remove: run apply again to converge")
    out += overwritten_lines(report)
    if report.unconverged:
        out.append(
            f"verification: {len(report.unconverged)} committed entities do not show their "
            "changes yet (brokers trail the controller briefly):"
        )
        out += [f"  {display_entity(e)}" for e in report.unconverged[:20]]
    elif done and not report.overwritten and report.stopped_by in (None, "connection"):
        out.append("verified: the cluster shows every committed change")
    return out


def stop_lines(report: AppliedReport) -> list[str]:
    """stop_lines says why the commit stopped early and what became of the batch in flight."""
    if report.stopped_by == "signal":
        lines = [f"{report.interrupted}: the commit stopped"]
        if report.second_signal:
            lines.append(
                "  a second signal stopped settling the batch in flight: it stays uncertain"
            )
        else:
            lines.append("  the batch in flight was settled by describing the cluster")
        return lines
    if report.stopped_by == "signal in verification":
        return [f"{report.interrupted}: every change was committed, verification was cut short"]
    if report.stopped_by == "deadline":
        return [f"stopped: {report.interrupted}"]
    if (report.interrupted or "").startswith(LEASE_LOST):
        return [f"stopped: {report.interrupted}"]  # kquota.apply.lease.LeaseLost
    return [f"the connection broke: {report.interrupted}"]


def overwritten_lines(report: AppliedReport) -> list[str]:
    """overwritten_lines names the entities another writer changed after this run wrote them."""
    if not report.overwritten:
        return []
    n = len(report.overwritten)
    lines = [
        f"verification: {n} of {len(report.committed)} committed entities were changed by "
        "another writer after this run wrote them (the state this run set does not hold):"
    ]
    lines += [f"  {display_entity(e)}: {how}" for e, how in report.overwritten[:_SHOW]]
    if n > _SHOW:
        lines.append(f"  … and {n - _SHOW} more")
    return lines
