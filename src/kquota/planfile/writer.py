"""Writing a saved plan (``plan --out``), naming it (its plan id), and telling a saved plan's
path from desired-state paths."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from kquota.errors import KquotaError
from kquota.plan.types import Plan


def unapplyable_because(plan: Plan) -> list[str]:
    """unapplyable_because says which safety fields a plan about to be saved lacks."""
    out = []
    if plan.cluster is None:
        out.append("the plan records no cluster (plan with --cluster NAME or against a live one)")
    if plan.cluster_id is None:
        out.append(
            "the plan records no cluster id (the snapshot does not say which cluster it came "
            "from: take it with kquota snapshot, or plan against the live cluster)"
        )
    if plan.snapshot_fingerprint is None:
        out.append("the plan records no snapshot fingerprint")
    return out


def write_plan_file(plan: Plan, path: Path) -> list[str]:
    """write_plan_file saves a plan (its JSON contract) for review and apply, and returns what
    would make apply refuse it (:func:`unapplyable_because`)."""
    from kquota.render.json import render_plan

    try:
        path.write_text(render_plan(plan), encoding="utf-8")
    except OSError as e:
        raise KquotaError(f"{path}: cannot write plan: {e.strerror or e}") from None
    return unapplyable_because(plan)


def write_plan(plan: Plan, path: Path) -> list[str]:
    """write_plan saves ``plan`` as ``kquota plan --out`` does, and returns what would make
    apply refuse it (a missing cluster, cluster id or snapshot fingerprint), one line each."""
    from kquota import argcheck as check

    check.instance(plan, Plan, "write_plan: plan", "a Plan (PlanResult.plan)")
    return write_plan_file(plan, check.path(path, "write_plan: path"))


def is_saved_plan(args: Sequence[Path]) -> bool:
    """is_saved_plan: ``apply``'s arguments name one saved plan file, not desired state."""
    # A mistyped plan path is reported by the plan reader, not taken for a desired-state path.
    return len(args) == 1 and args[0].suffix == ".json" and not args[0].is_dir()


def plan_id(plan: Plan) -> str:
    """plan_id names a plan in audit events: a digest of its JSON contract."""
    import hashlib

    from kquota.render.json import render_plan

    return hashlib.sha256(render_plan(plan).encode()).hexdigest()[:16]


__all__ = ["is_saved_plan", "plan_id", "unapplyable_because", "write_plan", "write_plan_file"]
