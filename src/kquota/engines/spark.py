"""SparkEngine: the planning pipeline as a PySpark job, for fleets of clusters.

It is a translation of the local planner, not a second design:

1. normalise desired states and snapshots to rows ``(cluster, entity, key, value)``
   (:mod:`kquota.fleet.rows`); YAML and JSON are parsed on the executors with the same
   loaders the local engine uses, Parquet snapshots are read by Spark itself;
2. full outer join on ``(cluster, entity, key)``;
3. classify every row with a ``when(...)`` chain generated from
   :data:`kquota.plan.rules.RULES` (the table the local planner compiles), so the ownership
   rules live in one place;
4. group per entity: counts for every entity, ops and snapshot values only for the entities
   that change, which are all the driver collects;
5. build each cluster's :class:`~kquota.plan.types.Plan` on the driver with the planner's own
   ``alteration_of`` and ``finish_plan`` (ordering, removal counts, guard, fingerprint).

Value comparison uses Spark's ``=``. It equals the planner's bitwise ``same_value`` on every
input a plan can have: desired values are positive finite numbers (local validation), and
only NaN and signed zeros compare differently, which a desired value never is.

The ownership scope is evaluated with a Python UDF calling ``Policy.in_scope`` on each
distinct entity (skipped entirely when the scope is ``all``), again to keep one definition.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kquota.errors import KquotaError
from kquota.fleet.layout import FleetCluster
from kquota.fleet.rows import entity_of
from kquota.model import QuotaState
from kquota.plan.planner import alteration_of, finish_plan
from kquota.plan.policy import Policy
from kquota.plan.rules import FACT_NAMES, RULES, Outcome
from kquota.plan.types import IgnoreReason, Op, Plan

_ERROR_KEY = "\x00error"


def _desired_rows(item: tuple[str, str]) -> Iterator[tuple[str, str, str, float | None]]:
    from kquota.desired.loader import load_desired
    from kquota.fleet.rows import state_rows

    cluster, folder = item
    try:
        state = load_desired([Path(folder)]).quotas
    except KquotaError as e:
        yield (cluster, str(e), _ERROR_KEY, None)
        return
    yield from state_rows(cluster, state)


def _snapshot_rows(item: tuple[str, str]) -> Iterator[tuple[str, str, str, float | None]]:
    from kquota.fleet.rows import read_snapshot_any, state_rows

    cluster, path = item
    try:
        state = read_snapshot_any(Path(path))
    except KquotaError as e:
        yield (cluster, str(e), _ERROR_KEY, None)
        return
    yield from state_rows(cluster, state)


@dataclass(frozen=True)
class SparkSettings:
    master: str = "local[*]"
    shuffle_partitions: int = 8
    driver_memory: str = "4g"


class SparkEngine:
    """SparkEngine plans whole fleets in one Spark job (``--engine spark``)."""

    name = "spark"

    def __init__(self, settings: SparkSettings | None = None) -> None:
        self.settings = settings or SparkSettings()
        self._spark: Any = None

    def session(self) -> Any:
        if self._spark is None:
            try:
                from pyspark.sql import SparkSession
            except ImportError:
                raise KquotaError(
                    "the Spark engine needs PySpark: pip install 'kquota[spark]'"
                ) from None
            s = self.settings
            self._spark = (
                SparkSession.builder.master(s.master)
                .appName("kquota-fleet")
                .config("spark.ui.enabled", "false")
                .config("spark.ui.showConsoleProgress", "false")
                .config("spark.sql.shuffle.partitions", str(s.shuffle_partitions))
                .config("spark.driver.memory", s.driver_memory)
                .config("spark.driver.bindAddress", "127.0.0.1")
                .config("spark.driver.host", "127.0.0.1")
                .config("spark.sql.session.timeZone", "UTC")
                .getOrCreate()
            )
            self._spark.sparkContext.setLogLevel("ERROR")
        return self._spark

    def stop(self) -> None:
        if self._spark is not None:
            self._spark.stop()
            self._spark = None

    def __enter__(self) -> SparkEngine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- inputs -----------------------------------------------------------------------------

    def _rows(self, clusters: Sequence[FleetCluster]) -> tuple[Any, Any]:
        from pyspark.sql import functions as F
        from pyspark.sql.types import DoubleType, StringType, StructField, StructType

        spark = self.session()
        sc = spark.sparkContext
        schema = StructType(
            [
                StructField("cluster", StringType(), False),
                StructField("entity", StringType(), False),
                StructField("key", StringType(), False),
                StructField("value", DoubleType(), True),
            ]
        )
        slices = max(1, min(len(clusters), self.settings.shuffle_partitions * 4))
        desired = spark.createDataFrame(
            sc.parallelize([(c.name, str(c.desired_dir)) for c in clusters], slices).flatMap(
                _desired_rows
            ),
            schema,
        )
        text_snaps = [(c.name, str(c.snapshot)) for c in clusters if c.snapshot_format != "parquet"]
        parts = []
        if text_snaps:
            parts.append(
                spark.createDataFrame(
                    sc.parallelize(text_snaps, max(1, min(len(text_snaps), slices))).flatMap(
                        _snapshot_rows
                    ),
                    schema,
                )
            )
        for c in clusters:
            if c.snapshot_format == "parquet":
                parts.append(
                    spark.read.parquet(str(c.snapshot)).select(
                        F.lit(c.name).alias("cluster"), "entity", "key", "value"
                    )
                )
        snapshot = functools.reduce(lambda a, b: a.unionByName(b), parts)
        return desired, snapshot

    @staticmethod
    def _raise_input_errors(desired: Any, snapshot: Any) -> None:
        from pyspark.sql import functions as F

        errors = (
            desired.filter(F.col("key") == _ERROR_KEY)
            .unionByName(snapshot.filter(F.col("key") == _ERROR_KEY))
            .select("cluster", "entity")
            .collect()
        )
        if errors:
            lines = [f"cluster {r['cluster']}: {r['entity']}" for r in sorted(errors)]
            raise KquotaError("\n".join(lines))

    def resolve_fleet(
        self, clusters: Sequence[FleetCluster], principals: Sequence[tuple[str, str]], source: str
    ) -> dict[str, list[dict[str, tuple[float, Any]]]]:
        """resolve_fleet gives every principal's effective quotas on every cluster."""
        from kquota.fleet.resolve import resolve_spark

        desired, snapshot = self._rows(clusters)
        self._raise_input_errors(desired, snapshot)
        rows = desired if source == "desired" else snapshot
        return resolve_spark(rows, principals, [c.name for c in clusters])

    # -- the job ----------------------------------------------------------------------------

    def plan_fleet(self, clusters: Sequence[FleetCluster], policy: Policy) -> dict[str, Plan]:
        """plan_fleet plans every cluster of the fleet under ``policy``."""
        from pyspark.sql import functions as F
        from pyspark.sql.types import BooleanType

        desired, snapshot = self._rows(clusters)
        desired = desired.cache()
        snapshot = snapshot.cache()
        self._raise_input_errors(desired, snapshot)

        d = desired.select("cluster", "entity", "key", F.col("value").alias("dv"))
        s = snapshot.select("cluster", "entity", "key", F.col("value").alias("cv"))
        joined = d.join(s, ["cluster", "entity", "key"], "full_outer")
        declared = (
            desired.select("cluster", "entity").distinct().withColumn("declared", F.lit(True))
        )
        rows = joined.join(declared, ["cluster", "entity"], "left").withColumn(
            "declared", F.coalesce(F.col("declared"), F.lit(False))
        )
        if policy.scope is None:
            rows = rows.withColumn("in_scope", F.lit(True))
        else:
            scope_udf = F.udf(
                lambda ek: policy.in_scope(entity_of(ek)), BooleanType(), useArrow=False
            )
            entities = rows.select("entity").distinct()
            scoped = entities.withColumn("in_scope", scope_udf(F.col("entity")))
            rows = rows.join(scoped, ["entity"], "left")

        facts = {
            "in_scope": F.col("in_scope"),
            "declared": F.col("declared"),
            "prune": F.lit(policy.prune),
            "desired_present": F.col("dv").isNotNull(),
            "current_present": F.col("cv").isNotNull(),
            "same_value": F.coalesce(F.col("dv") == F.col("cv"), F.lit(False)),
        }
        outcome: Any = None
        for rule in RULES:
            conds = [
                facts[name] == F.lit(want)
                for name, want in zip(FACT_NAMES, rule.conditions(), strict=True)
                if want is not None
            ]
            cond = functools.reduce(operator.and_, conds) if conds else F.lit(True)
            outcome = (F.when if outcome is None else outcome.when)(cond, rule.outcome.value)
        rows = rows.withColumn("outcome", outcome)

        is_op = F.col("outcome").isin(Outcome.SET.value, Outcome.REMOVE.value)
        per_entity = rows.groupBy("cluster", "entity").agg(
            F.max("declared").alias("declared"),
            F.max("in_scope").alias("in_scope"),
            F.count("cv").alias("n_current"),
            F.sum(F.when(is_op, 1).otherwise(0)).alias("n_ops"),
            F.sum(F.when(F.col("outcome") == Outcome.REMOVE.value, 1).otherwise(0)).alias(
                "n_remove"
            ),
            F.collect_list(
                F.when(is_op, F.struct("key", "dv", "cv", F.col("outcome") == "remove"))
            ).alias("ops"),
            F.collect_list(F.when(F.col("cv").isNotNull(), F.struct("key", "cv"))).alias("current"),
        )
        per_entity = per_entity.cache()

        counts = (
            per_entity.groupBy("cluster")
            .agg(
                F.sum(F.when(F.col("declared") & ~F.col("in_scope"), 1).otherwise(0)).alias(
                    "declared_out_of_scope"
                ),
                F.sum(F.when(~F.col("declared") & ~F.col("in_scope"), 1).otherwise(0)).alias(
                    "out_of_scope"
                ),
                F.sum(F.when(F.col("in_scope") & (F.col("n_current") > 0), 1).otherwise(0)).alias(
                    "managed_entities"
                ),
                F.sum(F.when(F.col("in_scope"), F.col("n_current")).otherwise(0)).alias(
                    "managed_quotas"
                ),
                F.sum(
                    F.when(
                        F.col("declared") & F.col("in_scope") & (F.col("n_ops") == 0), 1
                    ).otherwise(0)
                ).alias("unchanged"),
                F.sum(
                    F.when(
                        ~F.col("declared") & F.col("in_scope") & (F.col("n_ops") == 0), 1
                    ).otherwise(0)
                ).alias("not_declared"),
                F.sum(F.when(F.col("declared") & F.col("in_scope"), 1).otherwise(0)).alias(
                    "declared_in_scope"
                ),
            )
            .collect()
        )
        changed = (
            per_entity.filter(F.col("n_ops") > 0)
            .select("cluster", "entity", "n_current", "ops", "current")
            .collect()
        )
        desired.unpersist()
        snapshot.unpersist()
        per_entity.unpersist()
        return _assemble(clusters, policy, counts, changed)


def _assemble(
    clusters: Sequence[FleetCluster], policy: Policy, counts: list[Any], changed: list[Any]
) -> dict[str, Plan]:
    by_cluster: dict[str, list[Any]] = {}
    for row in changed:
        by_cluster.setdefault(row["cluster"], []).append(row)
    count_of = {
        row["cluster"]: {k: int(v or 0) for k, v in row.asDict().items() if k != "cluster"}
        for row in counts
    }
    return {
        c.name: _cluster_plan(c.name, policy, count_of.get(c.name, {}), by_cluster.get(c.name, []))
        for c in clusters
    }


def _cluster_plan(name: str, policy: Policy, counts: dict[str, int], rows: list[Any]) -> Plan:
    """_cluster_plan builds one cluster's Plan from the job's counts and changed entities."""
    alterations = []
    current: QuotaState = {}
    for row in rows:
        entity = entity_of(row["entity"])
        have = {v["key"]: v["cv"] for v in row["current"]} if row["n_current"] else None
        ops = sorted(
            (
                Op(o["key"], None, True, o["cv"]) if o[3] else Op(o["key"], o["dv"], False, o["cv"])
                for o in row["ops"]
            ),
            key=lambda op: op.key,
        )
        alterations.append(alteration_of(entity, ops, have))
        if have is not None:
            current[entity] = have
    return finish_plan(
        alterations,
        policy=policy,
        cluster=name,
        snapshot=current,
        declared_in_scope=counts.get("declared_in_scope", 0),
        managed_entities=counts.get("managed_entities", 0),
        managed_quotas=counts.get("managed_quotas", 0),
        unchanged=counts.get("unchanged", 0),
        # The job counts ignored entities; it does not collect them to the driver.
        ignored={
            IgnoreReason.OUT_OF_SCOPE: (counts.get("out_of_scope", 0), ()),
            IgnoreReason.DECLARED_OUT_OF_SCOPE: (counts.get("declared_out_of_scope", 0), ()),
            IgnoreReason.NOT_DECLARED: (counts.get("not_declared", 0), ()),
        },
    )
