"""How an apply that did not simply succeed ends: its exit status (its report lines are
:mod:`kquota.render.apply_report`'s).

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

OVERWRITTEN_EXIT = 4


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


__all__ = ["OVERWRITTEN_EXIT", "Interrupted", "exit_code"]
