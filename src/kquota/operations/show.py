"""The show operation: read a saved plan the way apply will, for a reviewer to read.

``kquota show PLAN.json`` is Terraform's ``show``: the artifact apply would use, rendered. It
goes through the same strict reader as apply (:mod:`kquota.planfile`), so a doctored
file gets apply's refusal, word for word. Two things differ, because nothing is applied:

- a guard that trips is a verdict to show, not a refusal: the plan is read as if the operator
  had passed ``--allow-mass-removal`` and then marked stopped again, so the renderers say
  what apply would refuse (the file's own ``mass_removal_allowed`` still counts for nothing);
- a null safety field (``cluster_id``, ``snapshot_fingerprint``, ``cluster``) is let through
  and reported as what apply would refuse: a fleet plan records no cluster id.

The guard and the ownership scope are those of the plan's cluster in kquota.yaml when there
is one, by its name or by its bootstrap servers (or of the cluster named), else the defaults.
Observe mode is a verdict too: a plan for a cluster in observe mode, or altering an observed
scope, is shown with apply's refusal. The guards apply counts on the live cluster (protected
principals resolved there, the capacity guard from the brokers' facts) are never read from
the file: show says that apply counts them, under which settings, and lists no impact.

A fleet's ``fleet-plan.json`` (``kquota fleet plan``) stands for its folder: every
``<cluster>.plan.json`` beside it is read the same way; the summary in the file is never
trusted, it is recomputed from the plans.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from kquota.display import safe_text
from kquota.errors import KquotaError
from kquota.localfile import UnreadableFile, read_regular
from kquota.operations.apply import observe_refusal
from kquota.plan.types import Plan
from kquota.planfile.reader import (
    MAX_PLAN_BYTES,
    PlanFileError,
    parse_plan,
    read_plan_bytes,
    values_problem,
)
from kquota.planfile.writer import unapplyable_because
from kquota.policy import Policy

FLEET_SUMMARY = "fleet-plan.json"
PLAN_SUFFIX = ".plan.json"


@dataclass(frozen=True)
class ShownPlan:
    """ShownPlan is one saved plan as read for review, and why apply would refuse it
    as saved (missing safety fields; the guard's verdict is in the plan)."""

    path: Path
    plan: Plan
    unapplyable: tuple[str, ...] = ()
    principals: int = 0
    """Principals the file names for apply to check live (their verdict is not shown)."""
    live: tuple[str, ...] = ()
    """The guards apply counts again on the live cluster under the policy in force."""


PolicyFor = Callable[[str | None], Policy | None]
"""The policy in force for a recorded cluster name, or None for the defaults."""


def show_plan(path: Path, policy_for: PolicyFor) -> list[ShownPlan]:
    """show_plan reads a saved plan, or every plan of a fleet when ``path`` is a fleet's
    ``fleet-plan.json``; PlanFileError (apply's refusal) for a plan apply would not read."""
    if path.name == FLEET_SUMMARY:
        return [_read(p, policy_for) for p in _fleet_plans(path)]
    return [_read(path, policy_for)]


def _read(path: Path, policy_for: PolicyFor) -> ShownPlan:
    data = read_plan_bytes(path)
    first = policy_for(None)
    plan = parse_plan(data, str(path), _reviewing(first), review=True)
    policy = policy_for(plan.cluster)
    if policy is not None and policy is not first:  # the recorded cluster's scope and limits
        plan = parse_plan(data, str(path), _reviewing(policy), review=True)
    principals = 0 if plan.impact is None else len(plan.impact.resolved)
    # Stopped again: only the operator's flag at apply time overrides the guard.
    plan = dataclasses.replace(plan, mass_removal_allowed=False, impact=None)
    refusals = unapplyable_because(plan)
    in_force = policy or first or Policy()
    observed = observe_refusal(plan.cluster, in_force, plan)
    if observed is not None:
        refusals.append(observed)
    return ShownPlan(path, plan, tuple(refusals), principals, live_guards(in_force))


def live_guards(policy: Policy) -> tuple[str, ...]:
    """live_guards: what apply counts on the live cluster under ``policy``, which a saved plan
    cannot say (issue 33)."""
    out = []
    if policy.protect:
        names = "; ".join(
            ",".join(f"{t}={safe_text(p)}" for t, p in m.to_data().items()) for m in policy.protect
        )
        out.append(f"apply resolves the protected principals ({names}) on the live cluster")
    if policy.max_oversubscription is not None:
        out.append(
            "apply counts the capacity guard (max_oversubscription="
            f"{policy.max_oversubscription:g}) from the live brokers' facts"
        )
    return tuple(out)


def _reviewing(policy: Policy | None) -> Policy:
    return dataclasses.replace(policy or Policy(), allow_mass_removal=True)


def _fleet_plans(summary: Path) -> list[Path]:
    """_fleet_plans are the plan files beside a fleet summary; the summary's cluster list
    must name exactly them (its names are compared, never used as paths)."""
    try:
        data = read_regular(summary, limit=MAX_PLAN_BYTES, larger="a smaller fleet")
        too_many = values_problem(data)
        if too_many is not None:
            raise PlanFileError(str(summary), [too_many])
        doc = json.loads(data)
    except UnreadableFile as e:
        raise PlanFileError(
            str(summary), [f"cannot read: {e.reason}; allowed: {e.allowed}"]
        ) from None
    except (ValueError, RecursionError):
        doc = None
    rows = doc.get("clusters") if isinstance(doc, dict) else None
    if not isinstance(rows, list) or not all(
        isinstance(r, dict) and isinstance(r.get("cluster"), str) for r in rows
    ):
        raise PlanFileError(
            str(summary),
            ['clusters: not a fleet summary; allowed: the fleet-plan.json "kquota fleet plan" '
             "writes, beside its <cluster>.plan.json files"],
        )  # fmt: skip
    found = {p.name[: -len(PLAN_SUFFIX)]: p for p in summary.parent.glob(f"*{PLAN_SUFFIX}")}
    named = [r["cluster"] for r in rows]
    missing = sorted(set(named) - set(found))
    if missing:
        from kquota.display import safe_text

        raise PlanFileError(
            str(summary),
            [f"clusters: no plan file beside it for {safe_text(n)!r}; allowed: the fleet's "
             f"folder as kquota fleet plan wrote it" for n in missing],
        )  # fmt: skip
    return [found[n] for n in sorted(found)]


def load_policy_for(config_path: Path | None, cluster: str | None) -> PolicyFor:
    """load_policy_for is the policy lookup for ``show``: the named cluster's (``--cluster``),
    else the recorded cluster's when kquota.yaml has it, else the defaults."""
    from kquota.config.file import find_config
    from kquota.config.project import load_config
    from kquota.target import matching

    path = config_path or find_config()
    if config_path is not None and not config_path.exists():
        raise KquotaError(f"{config_path}: no such config file")
    if path is None:
        if cluster is not None:
            raise KquotaError(f"--cluster {cluster}: no kquota.yaml here (use --config PATH)")
        return lambda _: None
    config = load_config(path)
    if cluster is not None:
        chosen = config.cluster(cluster).policy.to_policy()
        return lambda _: chosen

    def lookup(recorded: str | None) -> Policy | None:
        if recorded is None:
            return None
        # A plan made with --bootstrap-server records the servers: the cluster they are.
        names = [recorded] if recorded in config.clusters else matching(config, recorded)
        return config.clusters[names[0]].policy.to_policy() if len(names) == 1 else None

    return lookup


__all__ = ["ShownPlan", "load_policy_for", "show_plan"]
