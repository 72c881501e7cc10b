"""How an apply that did not simply succeed ends: its report lines and its exit status.

Exit statuses of ``kquota apply`` (documented in docs/apply-safety.md):

* 0 — every change committed and verified.
* 1 — a failure: validation, a rejected entity, a broken connection, the deadline, changes
  not visible within the verification bound.
* 3 — committed but not audited (cli.apply's CommittedNotAudited).
* 4 — another writer changed entities after this run wrote them (verification found
  values neither this run nor the plan's snapshot had).
* 130 / 143 — stopped by SIGINT / SIGTERM (128 + the signal's number).
"""

from __future__ import annotations

from kquota.apply.applier import ApplyReport
from kquota.apply.interrupts import exit_status, signal_name
from kquota.errors import KquotaError
from kquota.render.format import display_entity

OVERWRITTEN_EXIT = 4
LEASE_LOST = "the apply lease was lost"
"""How :class:`kquota.apply.lease.LeaseLost` messages begin: a stop, not a broken connection."""
_SHOW = 10


class Interrupted(KquotaError):
    """Interrupted: a signal stopped apply outside the commit (before it, or after the report)."""

    def __init__(self, signum: int, *, after_report: bool = False) -> None:
        name = signal_name(signum)
        super().__init__(
            f"interrupted by {name} after the report above; audit events may be incomplete"
            if after_report
            else f"interrupted by {name} before committing; nothing was written"
        )
        self.exit_code = exit_status(signum)


def exit_code(report: ApplyReport) -> int:
    """exit_code is the exit status of an apply whose report is not ok."""
    if report.signal is not None:
        return exit_status(report.signal)
    if report.overwritten:
        return OVERWRITTEN_EXIT
    return 1


def stop_lines(report: ApplyReport) -> list[str]:
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


def overwritten_lines(report: ApplyReport) -> list[str]:
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
