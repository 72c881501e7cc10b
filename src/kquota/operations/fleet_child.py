"""One cluster of a fleet rollout, applied in a process of its own (``python -m
kquota.operations.fleet_child``), started by :mod:`kquota.operations.fleet_parallel`.

The process reads its job from stdin (JSON: the fleet request's options, the cluster, the
plan id the driver reviewed, what is left of the driver's deadline, and the file to write its
result to), reads the cluster's reviewed plan again, refuses a plan file changed since the
driver read it, and runs the one apply call of a fleet rollout
(:func:`kquota.operations.fleet_apply.apply_cluster`) under its own deadline and its own
SIGINT/SIGTERM handling, exactly as ``kquota apply`` runs. Its result is one JSON object,
written atomically: the cluster's status, the detail, and the signal that stopped it. No
secret goes through the job: the process resolves the cluster's target from kquota.yaml
itself, as the driver would.

On Linux it asks to receive SIGTERM when the driver dies (a controlled stop: the batch in
flight settles and the lease is released) rather than applying on, unwatched.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

RESULT_VERSION = 1
"""The result's ``format_version`` (the job is :func:`kquota.operations.fleet_parallel.job`)."""


def _die_with(parent: int) -> None:
    """SIGTERM to this process when its parent dies (then checked: it may be gone)."""
    from kquota.runtime.parentdeath import signal_on_parent_death

    signal_on_parent_death(signal.SIGTERM)
    if sys.platform.startswith("linux") and os.getppid() != parent:
        os.kill(os.getpid(), signal.SIGTERM)


def _write(path: Path, data: dict[str, Any]) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data) + "\n", encoding="utf-8")
    tmp.replace(path)


def run(data: dict[str, Any]) -> dict[str, Any]:
    """run applies one cluster as the job says and returns its result."""
    from kquota.apply.interrupts import signals_stop_apply
    from kquota.errors import KquotaError
    from kquota.operations.fleet_apply import (
        FleetApplyRequest,
        apply_cluster,
        project_config,
        reviewed_plans,
    )
    from kquota.plan.guard import Overrides
    from kquota.plan.rollout import FAILED, ClusterOutcome
    from kquota.planfile.writer import plan_id
    from kquota.runtime import deadline

    name = data["cluster"]
    request = FleetApplyRequest(
        plans_dir=Path(data["plans_dir"]),
        desired_root=Path(data["desired_root"]),
        waves=(),
        config_path=Path(data["config_path"]) if data["config_path"] else None,
        prune=data["prune"],
        allow_mass_removal=data["allow_mass_removal"],
        audit_topic=data["audit_topic"],
        verify_timeout=data["verify_timeout"],
        overrides=Overrides(**data["overrides"]),
    )
    outcome = ClusterOutcome(
        name,
        0,
        data["plan_id"],
        committed=tuple(data["committed"]),
        audited=tuple(data["audited"]),
    )
    seconds = min(data["deadline_seconds"], data["deadline_at"] - time.monotonic())
    with signals_stop_apply(), deadline.bounded(max(seconds, 0.001), data["deadline_label"]):
        try:
            plans, targets = reviewed_plans(request, project_config(request), [name])
        except KquotaError as e:
            outcome.status, outcome.detail = FAILED, str(e)
        else:
            reviewed = plans[name]
            if plan_id(reviewed) != data["plan_id"]:
                outcome.status = FAILED
                outcome.detail = (
                    f"{name}: its plan file changed since the rollout read it; nothing was "
                    "written (plan the fleet again and review the new plans)"
                )
            else:
                apply_cluster(request, targets[name], reviewed, outcome)
    return {
        "format_version": RESULT_VERSION,
        "cluster": name,
        "status": outcome.status,
        "detail": outcome.detail,
        "signal": outcome.signal,
        "committed": list(outcome.committed),
        "audited": list(outcome.audited),
    }


def main() -> int:
    parent = os.getppid()
    _die_with(parent)
    data = json.loads(sys.stdin.read())
    result = Path(data["result"])
    try:
        _write(result, run(data))
    except KeyboardInterrupt:
        # A signal outside the apply (reading the plans): nothing was written.
        from kquota.apply.interrupts import signal_name, stop_signal

        sig = stop_signal()
        _write(
            result,
            {
                "format_version": RESULT_VERSION,
                "cluster": data["cluster"],
                "status": "failed",
                "detail": f"interrupted by {signal_name(sig)} before committing; nothing was "
                "written",
                "signal": int(sig),
            },
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
