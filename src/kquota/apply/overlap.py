"""The validate-only pass under the plan's rendering: the wire works while the plan is shown.

Between planning and committing, apply shows the plan (100k alterations: a third of a second
of rendering and writing) and the validate-only pass waits on the broker for as long again
or longer. Neither needs the other: validate-only writes nothing, and the commit still comes
after both. So, when nobody is asked to confirm, :func:`early_validation` sends the pass on a
thread of its own as soon as the plan is made, and hands its answers to the applier's own
validate-only call (:func:`kquota.apply.applier.apply_plan`), which then only waits for what
is left of it. Every guarantee stands: the whole set is validated before anything is
committed, nothing is committed if any entity fails, the applier reports exactly what it
reports without the overlap.

It is sent only for a plan the refusals will let through (the operation's checks, run once
more beforehand) and that the applier will send as it is: one the operator must
confirm, or with an audit topic to check first, goes the plain way. The pass's thread owns
the admin until it ends: whatever stops the apply in between (a refusal, an error, a signal)
waits for it before the connection is closed, a few seconds at most.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from kquota.apply.applier import Admin, ExactReads, request_ends_of, to_commit
from kquota.model import Entity, QuotaState
from kquota.plan.types import Alteration, Plan
from kquota.runtime import timings


class _EarlyPass:
    """_EarlyPass is one validate-only call running on a thread, and its outcome."""

    def __init__(self, admin: Admin, alterations: list[Alteration]) -> None:
        self._admin = admin
        self.alterations = alterations
        self.results: Sequence[Any] | None = None
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="validate-only", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _run(self) -> None:
        try:
            with timings.span("validate-only"):
                self.results = self._admin.alter(self.alterations, validate_only=True)
        except BaseException as e:  # handed to whoever takes the answers
            self.error = e

    def wait(self) -> None:
        """wait returns once the pass has ended. A signal meanwhile is held until then (the
        pass is bounded by the command's deadline, and the admin is not to be shared) and
        raised after."""
        interrupted: KeyboardInterrupt | None = None
        while self._thread.is_alive():
            try:
                self._thread.join(0.1)
            except KeyboardInterrupt as e:
                interrupted = e
        if interrupted is not None:
            raise interrupted

    def answers(self, alterations: Sequence[Any]) -> Sequence[Any] | None:
        """answers are the pass's results if ``alterations`` are the very ones it sent."""
        sent = self.alterations
        if len(alterations) != len(sent) or any(
            a is not b for a, b in zip(alterations, sent, strict=True)
        ):
            return None
        self.wait()
        if self.error is not None:
            raise self.error
        return self.results


class EarlyAdmin:
    """EarlyAdmin is the operation's admin, except that the first validate-only call over the
    alterations already sent takes that pass's answers instead of sending them again."""

    def __init__(self, admin: Admin, early: _EarlyPass) -> None:
        self._admin = admin
        self._early: _EarlyPass | None = early

    def alter(self, alterations: Sequence[Any], *, validate_only: bool) -> Sequence[Any]:
        early, self._early = self._early, None
        if validate_only and early is not None:
            results = early.answers(alterations)
            if results is not None:
                return results
        return self._admin.alter(alterations, validate_only=validate_only)

    def request_ends(self, alterations: Sequence[Alteration]) -> list[int]:
        return request_ends_of(self._admin, alterations)

    def describe_all(self) -> QuotaState:
        return self._admin.describe_all()

    def describe_each_broker(self) -> Sequence[QuotaState]:
        return self._admin.describe_each_broker()

    def describe_entities_each_broker(self, entities: Sequence[Entity]) -> Sequence[QuotaState]:
        # Only called when the admin can (kquota.apply.applier.ExactReads).
        assert isinstance(self._admin, ExactReads)
        return self._admin.describe_entities_each_broker(entities)


@contextmanager
def early_validation(
    admin: Admin,
    plan: Plan,
    already_applied: frozenset[Entity],
    *,
    enabled: bool,
    refusals: Sequence[Callable[[], None]],
) -> Iterator[Admin]:
    """early_validation yields the admin to apply ``plan`` with: with ``enabled`` (nobody
    confirms, no audit topic to check first) and when none of ``refusals`` raises (the checks
    the operation makes after showing the plan, pure: run here once more), one whose
    validate-only pass is already on its way. The block's end waits for the pass."""
    if not enabled or plan.empty or plan.refusal is not None or not isinstance(admin, ExactReads):
        yield admin
        return
    try:
        for refusal in refusals:
            refusal()
    except Exception:  # refused: the operation says so after showing the plan, as ever
        yield admin
        return
    # As apply_plan orders them: its validate-only call then sends these very objects.
    alterations = to_commit(plan, already_applied)
    if not alterations:
        yield admin
        return
    early = _EarlyPass(admin, alterations)
    early.start()
    try:
        yield EarlyAdmin(admin, early)
    finally:
        early.wait()
