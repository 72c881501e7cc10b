"""The ramped apply: a saved plan applied step by step, each step through the whole road.

Every step is an ordinary apply of a plan (:func:`kquota.operations.apply.apply`, given by
the caller as ``apply_step`` so that this module does not depend on how it is called):
lease, staleness, guards, validate-only, commit, verify, audit. Between steps the ramp
waits the interval, then reads the cluster: every key a step set must still hold the step's
value (no drift: nobody else moved it, no broker lags behind); the next step is planned
against that read, so its staleness check covers the wait too. The first step that fails,
or drift, stops the ramp; what was applied stays applied (each step is a complete,
verified apply), and the report says how far it got.

Run again on the same plan, the ramp first reads the cluster and goes on from the step it
stands at (:func:`kquota.plan.ramp.resume_step`): a ramp cut short by Ctrl-C, a lost lease or
the deadline is finished by running it again, never refused as stale nor started over with
steps bigger than the policy allows.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass

from kquota.display import number
from kquota.errors import KquotaError
from kquota.model import QuotaState, display_entity
from kquota.operations.apply import ApplyResult
from kquota.plan.fingerprint import snapshot_fingerprint
from kquota.plan.ramp import resume_step, resumed_step, step_count, step_plan
from kquota.plan.types import Plan
from kquota.runtime import deadline
from kquota.target import Target


class RampDrift(KquotaError):
    """RampDrift: between two steps the cluster stopped showing what a step set."""


@dataclass(frozen=True)
class RampResult:
    """RampResult: the result of each step applied (from step ``first``: a resumed ramp
    starts past the steps already on the cluster), and how many steps there are."""

    steps: int
    results: tuple[ApplyResult, ...]
    first: int = 1

    @property
    def last_step(self) -> int:
        """last_step is the number of the last step this run applied (or found applied)."""
        return self.first - 1 + len(self.results)

    @property
    def ok(self) -> bool:
        return self.last_step >= self.steps and all(r.ok for r in self.results)


def drift_in(step: Plan, current: QuotaState, setter: str = "step") -> list[str]:
    """drift_in lists the keys of ``step`` that the cluster does not show as set (``setter``
    names what set them in the message: the ramp's step, a fleet's plan)."""
    out = []
    for alt in step.alterations:
        have = current.get(alt.entity, {})
        for op in alt.ops:
            now = have.get(op.key)
            want = None if op.remove else op.value
            if now != want:
                shown = "unset" if now is None else number(now, long_range=True)
                wanted = "unset" if want is None else number(want, long_range=True)
                out.append(
                    f"{display_entity(alt.entity)}: {op.key} is {shown}, {setter} set {wanted}"
                )
    return out


def _wait(seconds: float) -> None:
    """Sleeps ``seconds`` in short naps (a signal or the deadline ends it early)."""
    ends = time.monotonic() + seconds
    while (left := ends - time.monotonic()) > 0:
        outer = deadline.current()
        if outer is not None and outer.remaining() < left:
            raise outer.exceeded()
        time.sleep(min(0.2, left))


def apply_ramped(
    target: Target,
    plan: Plan,
    *,
    max_step: float,
    interval: float,
    apply_step: Callable[[Plan], ApplyResult],
    on_step: Callable[[int, int, Plan], None] = lambda _n, _of, _plan: None,
    on_resume: Callable[[int, int], None] = lambda _n, _of: None,
) -> RampResult:
    """apply_ramped applies ``plan`` in :func:`~kquota.plan.ramp.step_count` steps of at most
    ``max_step`` each, ``interval`` seconds apart; ``on_step`` sees each step's plan before it
    is applied. On a cluster that already holds some of the steps it goes on from there, and
    ``on_resume`` is told the step first (past the last: nothing is left). Raises
    :class:`RampDrift` when the cluster moved between steps."""
    total = step_count(plan, max_step)
    results: list[ApplyResult] = []
    with target.admin() as admin:
        current = admin.describe_all()
    first = resume_step(plan, max_step, current) or 1
    if first > 1:
        on_resume(first, total)
    if first > total:
        return RampResult(total, (), first)
    step = resumed_step(plan, max_step, current, first)
    for n in range(first, total + 1):
        on_step(n, total, step)
        result = apply_step(step)
        results.append(result)
        if not result.ok or n == total:
            break
        _wait(interval)
        with target.admin() as admin:
            current = admin.describe_all()
        drifted = drift_in(step, current)
        if drifted:
            raise RampDrift(
                f"ramp stopped after step {n} of {total}: the cluster no longer shows what "
                "the step set:\n" + "\n".join(f"  {d}" for d in drifted[:20])
            )
        following = step_plan(plan, max_step, n + 1)
        step = dataclasses.replace(
            following,
            snapshot_fingerprint=snapshot_fingerprint(
                current, (a.entity for a in following.alterations)
            ),
        )
    return RampResult(total, tuple(results), first)
