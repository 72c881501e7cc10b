"""The fleet engine protocol: plan and resolve over many clusters, however the work is spread.

Both engines implement it: :class:`kquota.fleet.local.LocalFleetEngine` (this process, or a
pool of local processes) and :class:`kquota.fleet.spark.SparkEngine` (PySpark, local or a
cluster). They must agree exactly: the same fleet gives plans with equal ``to_data()`` and
equal effective quotas, and the same samples give equal demand profiles. Drift over a fleet
is its plans read as drift reports (:func:`kquota.fleet.run.write_drift`), so it needs nothing
more of an engine.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from typing import Any, Protocol

from kquota.fleet.layout import FleetCluster
from kquota.plan.types import Plan
from kquota.policy import Policy
from kquota.usage.profile import Profiles

Effective = dict[str, tuple[float, Any]]


class FleetEngine(Protocol):
    """FleetEngine finds a fleet's clusters and plans or resolves all of them; use it as a
    context manager (an engine may hold a session open)."""

    def __enter__(self) -> FleetEngine: ...

    def __exit__(self, *exc: object) -> None: ...

    def discover(self, desired_root: str, snapshots_dir: str) -> list[FleetCluster]: ...

    def plan_fleet(self, clusters: Sequence[FleetCluster], policy: Policy) -> dict[str, Plan]: ...

    def resolve_fleet(
        self, clusters: Sequence[FleetCluster], principals: Sequence[tuple[str, str]], source: str
    ) -> dict[str, list[Effective]]: ...

    def discover_usage(self, samples_root: str, snapshots_dir: str) -> list[FleetCluster]: ...

    def profile_fleet(
        self, clusters: Sequence[FleetCluster], *, since_ms: int, extra: Sequence[Decimal]
    ) -> dict[str, Profiles]: ...
