"""``fleet apply``: the fleet's reviewed plans rolled out wave by wave, each cluster through
the whole single-cluster apply road.

Which plan goes to which cluster: ``fleet plan`` plans from snapshots and records no cluster
id, and a saved plan without one is refused by apply. So fleet apply does not apply the
reviewed file as is: for each cluster it runs the one apply operation
(:func:`kquota.operations.apply.run_apply`) on that cluster's desired state
(``ROOT/<cluster>``, what was reviewed), with the reviewed plan as the request's
``expected`` plan. The operation plans against the live cluster (the live cluster id, lease,
describe) and, before anything is written, holds that live plan, empty or not, against the
reviewed one (:mod:`kquota.apply.reviewed`): the same alterations (every op with its before
value) and the same snapshot fingerprint (the altered entities hold on the cluster exactly
what the snapshot said). Any difference refuses the cluster with nothing written; then
guards, validate-only, commit, verify and audit go as for ``kquota apply``. What is applied
is what was reviewed, proven against the live cluster, never a plan file trusted to name its
own target.

kquota.yaml is read once per rollout: the waves (``rollout:``, unless the request has its
own) and every cluster's target come from that one read.

The rollout stops at the first cluster that fails; nothing of a later cluster or wave
starts. A record (``PLANS/fleet-apply.json``) is written after each cluster, so
``--resume`` continues from the first cluster not done, with the staleness of each
remaining cluster checked again by its own apply. The record is a file anyone with the plans
folder can edit: a cluster it calls done is skipped only when the live cluster shows that
cluster's plan; otherwise it goes through its own apply like any cluster not done.

The record also names, by position in the cluster's reviewed plan, the alterations this
rollout committed and those whose audit events were confirmed. A cluster that failed after
committing (its audit not confirmed, its brokers not all showing the values in time, a
connection lost mid-commit) resumes from there: the live cluster must show the committed
entities as reviewed and the live plan must be the rest of the reviewed plan
(:mod:`kquota.apply.reviewed`); the rest is committed, the earlier entities verified again at
every broker, and their missing audit events published. The record is believed only for the
plan it names (its plan id is the reviewed plan's) and only as far as the live cluster
confirms it.

A wave with ``max_parallel`` above one applies up to that many of its clusters at once, each
in a process of its own (:mod:`kquota.operations.fleet_parallel`): the deadline, the signal
handling and the lease renewer of an apply are process-wide, and a process gives each apply
its own, exactly as ``kquota apply`` has them. One cluster at a time runs in this process.
SIGINT/SIGTERM stop the rollout either way: the apply in flight settles its batch and says
what it committed, nothing more starts, and the report says how to resume.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from kquota.apply.interrupts import signal_name, stop_signal
from kquota.display import safe_text
from kquota.errors import KquotaError, UsageError
from kquota.operations.apply import ApplyHooks, ApplyResult
from kquota.plan.guard import LIBRARY, Overrides
from kquota.plan.rollout import (
    COMMITTED,
    DONE,
    FAILED,
    NOT_ATTEMPTED,
    UNCHANGED,
    ClusterOutcome,
    FleetApplyReport,
    PlannedWave,
    Wave,
)
from kquota.plan.types import Plan
from kquota.runtime import deadline
from kquota.target import Target

if TYPE_CHECKING:
    from kquota.apply.applier import ApplyReport
    from kquota.config.project import ProjectConfig

RECORD = "fleet-apply.json"


def _failure(result: ApplyResult) -> str:
    report = result.report
    assert report is not None
    total = len(result.plan.alterations)
    parts = _committed_parts(report, total)
    if result.audit is not None and not result.audit.confirmed:
        parts.append(result.audit.message)
    return "; ".join(parts)


def _committed_parts(report: ApplyReport, total: int) -> list[str]:
    if report.validation_failures:
        return [
            f"validate-only pass failed for {len(report.validation_failures)} of {total} "
            "entities; nothing was committed"
        ]
    parts = [f"committed {len(report.committed)} of {total} entities"]
    for label, items in (
        ("failed", report.failed),
        ("uncertain", report.uncertain),
        ("not attempted", report.not_attempted),
        ("not shown yet by every broker", report.unconverged),
        ("overwritten by another writer", report.overwritten),
    ):
        if items:
            parts.append(f"{len(items)} {label}")
    if report.interrupted:
        parts.append(report.interrupted)
    return parts


@dataclass(frozen=True)
class FleetApplyRequest:
    """FleetApplyRequest is one fleet rollout: where the reviewed plans and the desired state
    are, the waves asked for, and the options every cluster's apply takes."""

    plans_dir: Path
    desired_root: Path
    waves: tuple[Wave, ...] = ()
    """The waves asked for, in order (``--wave``); none: ``rollout:`` in kquota.yaml, else the
    first cluster by name alone (the canary), then the rest."""
    config_path: Path | None = None
    prune: bool | None = None
    allow_mass_removal: bool = False
    audit_topic: str | None = None
    verify_timeout: float = 15.0
    resume: bool = False
    overrides: Overrides = LIBRARY
    """How a guard's refusal names its override: the CLI's flags, or the library's arguments."""


def project_config(request: FleetApplyRequest) -> ProjectConfig | None:
    """project_config is the rollout's one read of kquota.yaml (None: there is none): every
    cluster's target and the waves come from it."""
    from kquota.config.file import find_config
    from kquota.config.project import load_config

    path = request.config_path or find_config()
    return None if path is None else load_config(path)


def _target(config: ProjectConfig | None, name: str) -> Target:
    if config is None:
        raise UsageError(f"--cluster {name}: no kquota.yaml here (use --config PATH)")
    return Target.of_config(config, name)


def cluster_names(request: FleetApplyRequest) -> list[str]:
    """cluster_names are the clusters ``fleet plan`` wrote a plan for, by name."""
    found = request.plans_dir.glob("*.plan.json")
    names = sorted(p.name.removesuffix(".plan.json") for p in found)
    if not names:
        raise UsageError(
            f"{request.plans_dir}: no <cluster>.plan.json here (written by fleet plan)"
        )
    return names


def planned_waves(
    request: FleetApplyRequest, config: ProjectConfig | None, names: Sequence[str]
) -> tuple[PlannedWave, ...]:
    """planned_waves puts every cluster in its wave: the request's waves, else ``rollout:`` in
    kquota.yaml, else the canary and then the rest (:func:`kquota.plan.rollout.plan_waves`)."""
    from kquota.plan.rollout import default_waves, plan_waves
    from kquota.runtime.deadline import parse_duration

    waves = list(request.waves)
    if not waves and config is not None:
        waves = [
            Wave(
                tuple(w.clusters),
                w.max_parallel,
                parse_duration(w.soak, "soak", minimum=1.0, maximum=7 * 24 * 3600.0)
                if w.soak
                else 0.0,
            )
            for w in config.rollout
        ]
    return tuple(plan_waves(names, waves or default_waves(names)))


def reviewed_plans(
    request: FleetApplyRequest, config: ProjectConfig | None, names: Sequence[str]
) -> tuple[dict[str, Plan], dict[str, Target]]:
    """reviewed_plans reads every cluster's plan file strictly (review mode: a fleet plan has
    no cluster id) and checks each against its target in ``config``, before any connection;
    the plans and the targets, by cluster."""
    from kquota.planfile.reader import PlanFileError, load_plan_file

    plans, targets, problems = {}, {}, []
    for name in names:
        path = request.plans_dir / f"{name}.plan.json"
        try:
            target = targets[name] = _target(config, name)
            policy = target.policy(
                prune=request.prune, allow_mass_removal=request.allow_mass_removal
            )
            plans[name] = load_plan_file(path, policy, review=True)
            if not (request.desired_root / name).is_dir():
                problems.append(f"{name}: no desired state at {request.desired_root / name}")
        except (PlanFileError, KquotaError) as e:
            problems.append(f"{name}: {e}")
    for name, plan in plans.items():
        if plan.cluster not in (None, name):
            problems.append(f"{name}: its plan file was made for {safe_text(str(plan.cluster))!r}")
    if problems:
        raise UsageError("fleet apply: nothing was applied:\n" + "\n".join(problems))
    return plans, targets


@dataclass(frozen=True)
class _Recorded:
    """_Recorded is what the record says of one cluster: its status, and the positions in its
    reviewed plan of the alterations committed and of those audited."""

    status: str
    committed: tuple[int, ...] = ()
    audited: tuple[int, ...] = ()


def _positions(value: object, size: int | None, what: str) -> tuple[int, ...]:
    """_positions reads a record's list of positions in a reviewed plan of ``size``
    alterations (None: the cluster is not in this rollout, nothing to check them against)."""
    if value is None or size is None:
        return ()  # a record written before positions were: it vouches for nothing
    if (
        not isinstance(value, list)
        or any(type(i) is not int or not 0 <= i < size for i in value)
        or len(set(value)) != len(value)
    ):
        raise ValueError(
            f"{what} is not a list of distinct positions in its reviewed plan (0 to {size - 1})"
        )
    return tuple(sorted(value))


def _recorded(
    entry: Mapping[str, object], plan_ids: Mapping[str, str], sizes: Mapping[str, int]
) -> _Recorded:
    """_recorded is one cluster's entry of the record; its positions only for the plan the
    rollout reviewed (the entry's plan id is that plan's), else none."""
    name, status = entry["cluster"], entry["status"]
    ours = isinstance(name, str) and plan_ids.get(name) == entry["plan_id"]
    size = sizes[name] if ours and isinstance(name, str) else None
    where = f"cluster {safe_text(str(name))!r}"
    committed = _positions(entry.get("committed"), size, f"{where}: committed")
    audited = _positions(entry.get("audited"), size, f"{where}: audited")
    if not set(audited) <= set(committed):
        raise ValueError(f"{where}: audited names alterations not committed")
    return _Recorded(str(status), committed, audited)


def _load_record(
    request: FleetApplyRequest, plan_ids: dict[str, str], sizes: Mapping[str, int]
) -> dict[str, _Recorded]:
    from kquota.localfile import MiB, UnreadableFile, read_text

    path = request.plans_dir / RECORD
    if not path.exists():
        if request.resume:
            raise UsageError(f"--resume: no record of an earlier fleet apply at {path}")
        return {}
    try:
        data = json.loads(read_text(path, limit=64 * MiB, larger="start a new rollout"))
        recorded = {
            c["cluster"]: (c["plan_id"], _recorded(c, plan_ids, sizes)) for c in data["clusters"]
        }
    except UnreadableFile as e:
        raise UsageError(e.message(path, "the fleet apply record")) from None
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as e:
        raise UsageError(f"{path}: not a fleet apply record ({safe_text(str(e))})") from None
    if not request.resume:
        if any(r.status in DONE or r.committed for _, r in recorded.values()):
            raise UsageError(
                f"{path} records an earlier fleet apply of these plans: pass --resume to "
                "continue it (or remove the file to start over)"
            )
        return {}
    changed = sorted(n for n, (pid, _) in recorded.items() if plan_ids.get(n) not in (None, pid))
    if changed:
        raise UsageError(
            f"--resume: the plans of {', '.join(changed)} changed since the recorded rollout; "
            f"nothing was applied (remove {path} to start a new rollout)"
        )
    return {n: r for n, (_, r) in recorded.items()}


def _write_record(report: FleetApplyReport) -> None:
    from kquota.localfile import replace_file

    path = report.plans_dir / RECORD
    data = (json.dumps(report.to_data(), indent=2) + "\n").encode("utf-8")
    try:
        replace_file(path, data)
    except OSError as e:
        raise KquotaError(
            f"{path}: cannot write the fleet apply record: {e.strerror or e}"
        ) from None


def _not_shown(target: Target, plan: Plan) -> str | None:
    """_not_shown says why the live cluster does not confirm that a cluster the record calls
    done holds its plan (None: it does). The record alone never skips a cluster."""
    from kquota.operations.ramp import drift_in

    if not plan.alterations:
        return None
    try:
        with target.admin() as admin:
            found = drift_in(plan, admin.describe_all(), setter="the plan")
    except KquotaError as e:
        return f"the live cluster could not be read ({e})"
    if not found:
        return None
    more = f" and {len(found) - 1} more" if len(found) > 1 else ""
    return f"the live cluster does not show its plan ({found[0]}{more})"


@dataclass(frozen=True)
class _Rollout:
    """_Rollout is what the rollout read before its first connection: its waves, and each
    cluster's reviewed plan and target."""

    waves: tuple[PlannedWave, ...]
    plans: Mapping[str, Plan]
    targets: Mapping[str, Target]


def fleet_apply(
    request: FleetApplyRequest,
    *,
    confirm: Callable[[tuple[PlannedWave, ...]], None] = lambda _waves: None,
    progress: Callable[[str], None] = lambda _line: None,
) -> FleetApplyReport:
    """fleet_apply rolls the reviewed plans out wave by wave (see the module docstring).

    kquota.yaml is read once: the waves and every cluster's target come from that one read.
    ``confirm`` sees the waves before any plan is read, and may refuse them (raise)."""
    from kquota.planfile.writer import plan_id

    names = cluster_names(request)
    config = project_config(request)
    waves = planned_waves(request, config, names)
    confirm(waves)
    plans, targets = reviewed_plans(request, config, [n for w in waves for n in w.clusters])
    rollout = _Rollout(waves, plans, targets)
    ids = {n: plan_id(p) for n, p in plans.items()}
    sizes = {n: len(p.alterations) for n, p in plans.items()}
    done_before = _load_record(request, ids, sizes)
    report = FleetApplyReport(request.plans_dir, waves, desired_root=request.desired_root)
    for wave in waves:
        for name in wave.clusters:
            report.clusters.append(ClusterOutcome(name, wave.number, ids[name]))
    by_name = {c.cluster: c for c in report.clusters}
    for name, recorded in done_before.items():
        if name not in by_name:
            continue
        if recorded.status in DONE:
            by_name[name].status = recorded.status
            by_name[name].detail = "done in an earlier run"
        elif recorded.status == FAILED:  # its apply goes on from what it committed
            by_name[name].committed = recorded.committed
            by_name[name].audited = recorded.audited
    try:
        for wave in waves:
            progress(f"wave {wave.number} of {len(waves)}: {', '.join(wave.clusters)}")
            pending = []
            for name in wave.clusters:
                outcome = by_name[name]
                if outcome.status in DONE:
                    why = _not_shown(targets[name], plans[name])
                    if why is None:
                        progress(f"  {name}: {outcome.status} in an earlier run")
                        continue
                    progress(f"  {name}: the record says {outcome.status}, but {why}: applying it")
                    outcome.status, outcome.detail = NOT_ATTEMPTED, ""
                pending.append(outcome)
            stopped = _run_wave(request, rollout, wave, pending, report, progress)
            if stopped is not None:
                report.stopped = stopped
                _write_record(report)
                return report
            last = wave.number == len(waves)
            if wave.wave.soak and not last:
                progress(f"  soak: {deadline.format_duration(wave.wave.soak)}, then drift checked")
                drifted = _soak(rollout, wave)
                if drifted:
                    report.stopped = f"drift during the soak of wave {wave.number}: {drifted}"
                    _write_record(report)
                    return report
    except KeyboardInterrupt:
        # Between two clusters, or in a soak: nothing was in flight.
        report.signal = stop_signal()
        report.stopped = f"interrupted by {signal_name(report.signal)}"
    _write_record(report)
    return report


def _run_wave(
    request: FleetApplyRequest,
    rollout: _Rollout,
    wave: PlannedWave,
    pending: list[ClusterOutcome],
    report: FleetApplyReport,
    progress: Callable[[str], None],
) -> str | None:
    """_run_wave applies the wave's clusters not done yet: one at a time here, or up to its
    ``max_parallel`` at once in processes of their own; why the rollout stops, or None."""

    def finished(outcome: ClusterOutcome) -> None:
        detail = f": {outcome.detail}" if outcome.detail else ""
        progress(f"  {outcome.cluster}: {outcome.status}{detail}")
        _write_record(report)

    parallel = min(wave.wave.max_parallel, len(pending))
    if parallel > 1:
        from kquota.operations.fleet_parallel import apply_side_by_side

        report.signal = apply_side_by_side(
            request, pending, parallel, finished=finished, progress=progress
        )
    else:
        for outcome in pending:
            name = outcome.cluster
            apply_cluster(request, rollout.targets[name], rollout.plans[name], outcome)
            finished(outcome)
            if outcome.status not in DONE:
                report.signal = outcome.signal
                break
    failed = [o.cluster for o in pending if o.status == FAILED]
    if report.signal is not None:
        return f"interrupted by {signal_name(report.signal)} in wave {wave.number}"
    if failed:
        return f"{', '.join(failed)} (wave {wave.number}) failed"
    return None


def apply_cluster(
    request: FleetApplyRequest, target: Target, reviewed: Plan, outcome: ClusterOutcome
) -> None:
    """apply_cluster is the one call into the apply operation for one cluster (in this
    process, or in a cluster's own process when a wave runs side by side), with the
    reviewed plan as the plan the live one must be (:attr:`ApplyRequest.expected`), less the
    alterations an earlier attempt of this rollout committed (``outcome.committed``, from the
    record): those are verified again and their missing audit events published
    (:func:`_resume_earlier`) once the rest is committed.

    SIGINT/SIGTERM (as KeyboardInterrupt) end it with an outcome too: in the commit the
    applier settles the batch in flight and the report counts it; before the commit nothing
    was written; after it the audit events may be incomplete."""
    from kquota.operations.apply import ApplyRequest, RunOptions, run_apply
    from kquota.operations.desired import load_desired_state
    from kquota.operations.overrides import PolicyOverrides

    publisher = None
    reports: list[ApplyReport] = []
    earlier = outcome.committed
    topic = request.audit_topic or target.audit_topic
    try:
        desired = load_desired_state([request.desired_root / outcome.cluster])
        if topic:
            from kquota.audit import AuditPublisher

            publisher = AuditPublisher(
                topic, target.client_properties(), signer=target.audit_keys()
            )
        asked = ApplyRequest(
            target,
            desired,
            PolicyOverrides(request.prune, request.allow_mass_removal),
            RunOptions(verify_timeout=request.verify_timeout, overrides=request.overrides),
            expected=reviewed,
            expected_done=frozenset(reviewed.alterations[i].entity for i in earlier),
        )
        result = run_apply(
            asked,
            ApplyHooks(committed=lambda plan, report: reports.append(report)),
            publisher=publisher,
        )
    except KquotaError as e:
        outcome.status, outcome.detail = FAILED, str(e)
        return
    except KeyboardInterrupt:
        outcome.signal = stop_signal()
        how = signal_name(outcome.signal)
        if reports:
            _count_committed(outcome, reviewed, reports[0], audited=False)
            done = "; ".join(_committed_parts(reports[0], len(reviewed.alterations)))
            outcome.detail = (
                f"{done}; interrupted by {how} while publishing its audit events: they may be "
                "incomplete"
            )
        else:
            outcome.detail = f"interrupted by {how} before committing; nothing was written"
        outcome.status = FAILED
        return
    finally:
        if publisher is not None:
            publisher.close()
    if result.report is not None:
        confirmed = result.audit is not None and result.audit.confirmed
        _count_committed(outcome, reviewed, result.report, audited=confirmed)
    if result.report is None and not earlier:
        outcome.status, outcome.detail = UNCHANGED, "nothing to apply"
    elif result.ok:
        if result.report is None:
            outcome.status, outcome.detail = COMMITTED, "nothing left to commit"
        else:
            n = len(result.report.committed)
            audited = f"; {result.audit.message}" if result.audit is not None else ""
            outcome.status = COMMITTED
            outcome.detail = f"{n} entities committed and verified{audited}"
        if earlier:
            _resume_earlier(_EarlierCommits(request, target, reviewed, outcome, earlier, topic))
    else:
        assert result.report is not None
        outcome.status, outcome.detail = FAILED, _failure(result)
        outcome.signal = result.report.signal


def _count_committed(
    outcome: ClusterOutcome, reviewed: Plan, report: ApplyReport, *, audited: bool
) -> None:
    """_count_committed adds what ``report`` committed to the positions the record keeps
    (``audited``: their audit events were confirmed too)."""
    where = {a.entity: i for i, a in enumerate(reviewed.alterations)}
    new = {where[a.entity] for a in report.committed if a.entity in where}
    outcome.committed = tuple(sorted({*outcome.committed, *new}))
    if audited:
        outcome.audited = tuple(sorted({*outcome.audited, *new}))


@dataclass(frozen=True)
class _EarlierCommits:
    """_EarlierCommits is what one cluster's earlier attempt of this rollout committed
    (``positions`` in its ``reviewed`` plan) with what finishing them needs: the request,
    the cluster's target, its outcome (updated in place) and the audit topic, if any."""

    request: FleetApplyRequest
    target: Target
    reviewed: Plan
    outcome: ClusterOutcome
    positions: tuple[int, ...]
    audit_topic: str | None


def _resume_earlier(earlier: _EarlierCommits) -> None:
    """_resume_earlier is :func:`_finish_earlier` with its failures as the outcome's: the
    rest of the plan is committed whatever happens here."""
    outcome = earlier.outcome
    what = f"the {len(earlier.positions)} entities committed in an earlier attempt"
    try:
        _finish_earlier(earlier)
    except KquotaError as e:
        outcome.status = FAILED
        outcome.detail = f"{outcome.detail}; {what} could not be verified: {e}"
    except KeyboardInterrupt:
        outcome.signal = stop_signal()
        outcome.status = FAILED
        outcome.detail = (
            f"{outcome.detail}; interrupted by {signal_name(outcome.signal)} while verifying "
            f"and auditing {what}"
        )


def _finish_earlier(earlier: _EarlierCommits) -> None:
    """_finish_earlier completes the alterations an earlier attempt committed, once the rest
    of the reviewed plan is committed and verified: every broker must show them (the earlier
    verification may have timed out), and the audit events not confirmed then are published
    now. ``outcome`` becomes failed, saying what is missing, when either falls short."""
    from kquota.apply.applier import ApplyReport as Committed
    from kquota.apply.applier import verify_shown
    from kquota.operations.apply import publish_audit

    target, reviewed, outcome = earlier.target, earlier.reviewed, earlier.outcome
    positions, topic = earlier.positions, earlier.audit_topic
    alterations = [reviewed.alterations[i] for i in positions]
    with target.admin() as admin:
        cluster_id = admin.cluster_id()
        shown = verify_shown(admin, alterations, verify_timeout=earlier.request.verify_timeout)
    what = f"{len(positions)} committed in an earlier attempt"
    if not shown.ok:
        parts = _committed_parts(shown, len(reviewed.alterations))[1:]
        outcome.status = FAILED
        outcome.detail = f"{outcome.detail}; of the {what}: {'; '.join(parts)}"
        return
    outcome.detail = f"{outcome.detail}; {what}, verified"
    missing = [i for i in positions if i not in outcome.audited]
    if not topic or not missing:
        return
    from kquota.audit import AuditPublisher

    publisher = AuditPublisher(topic, target.client_properties(), signer=target.audit_keys())
    try:
        audit = publish_audit(
            publisher, reviewed, Committed(committed=[reviewed.alterations[i] for i in missing]),
            cluster_id,
        )  # fmt: skip
    finally:
        publisher.close()
    if audit.confirmed:
        outcome.audited = tuple(sorted({*outcome.audited, *missing}))
        outcome.detail = f"{outcome.detail}; {audit.message} (of the earlier attempt)"
    else:
        outcome.status, outcome.detail = FAILED, f"{outcome.detail}; {audit.message}"


def _soak(rollout: _Rollout, wave: PlannedWave) -> str | None:
    """_soak waits the wave's soak time, then checks each of its clusters still shows its
    plan; the first drift found, or None."""
    from kquota.operations.ramp import drift_in

    ends = time.monotonic() + wave.wave.soak
    while (left := ends - time.monotonic()) > 0:
        outer = deadline.current()
        if outer is not None and outer.remaining() < left:
            raise outer.exceeded()
        time.sleep(min(0.5, left))
    for name in wave.clusters:
        with rollout.targets[name].admin() as admin:
            found = drift_in(rollout.plans[name], admin.describe_all(), setter="the plan")
        if found:
            return f"{name}: {found[0]}"
    return None
