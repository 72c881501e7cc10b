"""A saved plan's target: the cluster it records, held against the operator's target.

A plan file never chooses where credentials go: the operator names the target, and a plan
recorded for another cluster is refused before any connection. The cluster id is checked
once connected (:mod:`kquota.apply.staleness`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass

from kquota.plan.types import Plan
from kquota.planfile.reader import FIELD_HELP, PlanFileError


@dataclass(frozen=True)
class TargetIdentity:
    """TargetIdentity is the operator's target: its kquota.yaml name and bootstrap servers."""

    name: str | None
    bootstrap_servers: str
    named: Mapping[str, str] = dataclasses.field(default_factory=dict)
    """The bootstrap servers of each cluster kquota.yaml names: a plan may record either."""


def check_target(
    plan: Plan, name: str, target: TargetIdentity, named: Mapping[str, str] | None = None
) -> None:
    """check_target refuses a plan whose recorded cluster is not the operator's target.

    The recorded cluster matches the target's kquota.yaml name, or the same set of bootstrap
    servers; a recorded name is resolved through ``named`` (the local kquota.yaml's clusters
    and their bootstrap servers). The cluster id is checked once connected (apply.staleness).
    """
    recorded = plan.cluster
    if recorded is None:  # load_plan_file never lets this through
        raise PlanFileError(name, [f"cluster: missing; allowed: {FIELD_HELP['cluster']}"])
    if target.name is not None and recorded == target.name:
        return
    from kquota.target import same_servers

    servers = (target.named if named is None else named).get(recorded, recorded)
    if same_servers(servers) == same_servers(target.bootstrap_servers) != frozenset():
        return
    shown = target.name or target.bootstrap_servers
    raise PlanFileError(
        name,
        [
            f"cluster: the plan was made for {recorded!r}, but the target is {shown!r}; "
            f"allowed: the cluster the plan was made for (--cluster NAME from kquota.yaml, "
            "or --bootstrap-server HOST:PORT with the same servers)"
        ],
    )


__all__ = ["TargetIdentity", "check_target"]
