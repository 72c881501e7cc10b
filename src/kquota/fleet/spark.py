"""SparkEngine: the planning pipeline as a PySpark job, for fleets of clusters.

It is a translation of the local planner, not a second design:

1. normalise desired states and snapshots to rows ``(cluster, entity, key, value)``
   (:mod:`kquota.snapshot.rows`); YAML and JSON are parsed on the executors with the same
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

import contextlib
import functools
import itertools
import operator
import os
import posixpath
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

from kquota.errors import KquotaError
from kquota.fleet.layout import FleetCluster
from kquota.model import IP, Entity, QuotaState
from kquota.plan.planner import alteration_of, finish_plan
from kquota.plan.rules import FACT_NAMES, RULES, Outcome
from kquota.plan.types import IgnoreReason, Op, Plan
from kquota.policy import Policy
from kquota.snapshot.rows import entity_of
from kquota.usage.profile import Profiles

_ERROR_KEY = "\x00error"
_JOB_GROUPS = itertools.count(1)


def _desired_partition(
    cluster: str, order: tuple[str, ...], items: Iterator[tuple[str, bytes]]
) -> Iterator[tuple[str, str, str, float | None]]:
    """_desired_partition parses one cluster's files (one partition) with the local loader."""
    from kquota.desired.loader import load_desired_data
    from kquota.fleet.spark_fs import display_name
    from kquota.snapshot.rows import state_rows

    rank = {location: i for i, location in enumerate(order)}
    files = sorted(items, key=lambda kv: (rank.get(kv[0], len(rank)), kv[0]))
    try:
        state = load_desired_data([(display_name(loc), data) for loc, data in files]).quotas
    except KquotaError as e:
        yield (cluster, str(e), _ERROR_KEY, None)
        return
    yield from state_rows(cluster, state)


def _snapshot_rows(item: tuple[str, bytes]) -> Iterator[tuple[str, str, str, float | None]]:
    from kquota.fleet.spark_fs import display_name
    from kquota.snapshot.files import parse_snapshot
    from kquota.snapshot.rows import state_rows

    location, data = item
    cluster = posixpath.splitext(posixpath.basename(location))[0]
    try:
        state = parse_snapshot(data, display_name(location))
    except KquotaError as e:
        yield (cluster, str(e), _ERROR_KEY, None)
        return
    yield from state_rows(cluster, state)


@dataclass(frozen=True)
class SparkSettings:
    master: str = "local[*]"
    shuffle_partitions: int = 8
    driver_memory: str = "4g"
    # Extra session settings (``--conf``), e.g. for YARN or Kubernetes.
    conf: tuple[tuple[str, str], ...] = ()
    # Ship kquota and its libraries to the executors; None: whenever the master is not local.
    ship: bool | None = None

    @property
    def local(self) -> bool:
        return self.master.startswith("local")


class SparkEngine:
    """SparkEngine plans whole fleets in one Spark job (``--engine spark``)."""

    name = "spark"

    def __init__(self, settings: SparkSettings | None = None, needs: tuple[str, ...] = ()) -> None:
        self.settings = settings or SparkSettings()
        # Packages the executors need beyond the planner's (shipped with it, and probed).
        self.needs = needs
        self._spark: Any = None
        self._archive_dir: tempfile.TemporaryDirectory[str] | None = None

    def session(self) -> Any:
        if self._spark is None:
            try:
                from pyspark.sql import SparkSession
            except ImportError:
                raise KquotaError(
                    "the Spark engine needs PySpark: pip install 'kquota[spark]'"
                ) from None
            s = self.settings
            conf = {
                "spark.ui.enabled": "false",
                "spark.ui.showConsoleProgress": "false",
                "spark.sql.shuffle.partitions": str(s.shuffle_partitions),
                "spark.driver.memory": s.driver_memory,
                "spark.sql.session.timeZone": "UTC",
            }
            if s.local:
                # Local mode needs no network: keep the driver on loopback.
                conf["spark.driver.bindAddress"] = "127.0.0.1"
                conf["spark.driver.host"] = "127.0.0.1"
            conf.update(s.conf)
            ship = not s.local if s.ship is None else s.ship
            if ship:
                from kquota.fleet.spark_ship import build_archive, ship_settings

                self._archive_dir = tempfile.TemporaryDirectory(prefix="kquota-ship-")
                archive = build_archive(Path(self._archive_dir.name), self.needs)
                conf.update(ship_settings(archive, conf))
            if "spark.pyspark.python" in conf:
                # spark-submit turns this setting into PYSPARK_PYTHON, which is what PySpark
                # reads; kquota is its own driver, so it does the same.
                os.environ["PYSPARK_PYTHON"] = conf["spark.pyspark.python"]
            elif s.local and not ship and "PYSPARK_PYTHON" not in os.environ:
                # Local workers run on this machine: this Python has kquota, where PySpark's
                # default (python3 on PATH) need not (a virtualenv's kquota run unactivated).
                os.environ["PYSPARK_PYTHON"] = sys.executable
            builder = SparkSession.builder.master(s.master).appName("kquota-fleet")
            for key, value in conf.items():
                builder = builder.config(key, value)
            from kquota.fleet.spark_stderr import filtered_stderr_for_children

            with filtered_stderr_for_children():  # the driver JVM is launched in here
                self._spark = builder.getOrCreate()
            self._spark.sparkContext.setLogLevel("ERROR")
            if not s.local or ship:
                from kquota.fleet.spark_ship import check_executors

                try:
                    check_executors(self._spark, ship, self.needs)
                except KquotaError:
                    self.stop()
                    raise
        return self._spark

    def stop(self) -> None:
        if self._spark is not None:
            self._spark.stop()
            self._spark = None
        if self._archive_dir is not None:
            self._archive_dir.cleanup()
            self._archive_dir = None

    def __enter__(self) -> SparkEngine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- inputs -----------------------------------------------------------------------------

    def discover(self, desired_root: str, snapshots_dir: str) -> list[FleetCluster]:
        """discover is :func:`kquota.fleet.layout.discover` through Hadoop's file systems."""
        from kquota.fleet.layout import discover

        return self._through_hadoop(discover, desired_root, snapshots_dir)

    def discover_usage(self, samples_root: str, snapshots_dir: str) -> list[FleetCluster]:
        """discover_usage is :func:`kquota.fleet.usage.discover_usage` through Hadoop's file
        systems."""
        from kquota.fleet.usage import discover_usage

        return self._through_hadoop(discover_usage, samples_root, snapshots_dir)

    def _through_hadoop(
        self, find: Callable[..., list[FleetCluster]], root: str, snapshots_dir: str
    ) -> list[FleetCluster]:
        from kquota.fleet.spark_fs import HadoopListing
        from kquota.runtime import deadline

        with deadline.waiting_on("the Spark session to start"):
            spark = self.session()
        deadline.check()
        fs = HadoopListing(spark)
        with deadline.waiting_on(f"Hadoop to list {root} and {snapshots_dir}"):
            found = find(fs.qualify(root), fs.qualify(snapshots_dir), fs)
        deadline.check()
        return found

    def profile_fleet(
        self, clusters: Sequence[FleetCluster], *, since_ms: int, extra: Sequence[Decimal] = ()
    ) -> dict[str, Profiles]:
        """profile_fleet profiles every cluster's samples (:mod:`kquota.fleet.spark_usage`)."""
        from kquota.fleet.spark_usage import profile_fleet_spark

        with self._job(f"the Spark job to profile the samples of {len(clusters)} clusters"):
            return profile_fleet_spark(self.session(), clusters, since_ms=since_ms, extra=extra)

    @contextlib.contextmanager
    def _job(self, what: str) -> Iterator[None]:
        """_job runs the block's Spark jobs in one job group, which the command's deadline
        cancels (``SparkContext.cancelJobGroup``) when it runs out; the block then raises
        :class:`kquota.runtime.deadline.DeadlineExceeded`, and leaving the engine stops the session.
        """
        from kquota.runtime import deadline

        with deadline.waiting_on("the Spark session to start"):
            sc = self.session().sparkContext
        deadline.check()
        group = f"kquota-fleet-{os.getpid()}-{next(_JOB_GROUPS)}"
        # interruptOnCancel off: interrupting a task thread kills its Python worker mid-write,
        # and PySpark's daemon then prints a BrokenPipe traceback on the user's terminal. The
        # cancelled job fails at once either way, and leaving the engine stops the session.
        sc.setJobGroup(group, what, interruptOnCancel=False)
        try:
            # Cancelled again each second: a cancel reaches only the jobs running then, and
            # the driver may be between two jobs when the deadline runs out.
            cancel = functools.partial(sc.cancelJobGroup, group)
            with deadline.on_expiry(cancel, every=1.0), deadline.waiting_on(what):
                yield
        finally:
            sc.setLocalProperty("spark.jobGroup.id", None)

    def _rows(self, clusters: Sequence[FleetCluster]) -> tuple[Any, Any]:
        from pyspark.sql import functions as F
        from pyspark.sql.types import DoubleType, StringType, StructField, StructType

        from kquota.fleet.spark_fs import HadoopListing, display_name

        spark = self.session()
        sc = spark.sparkContext
        fs = HadoopListing(spark)
        schema = StructType(
            [
                StructField("cluster", StringType(), False),
                StructField("entity", StringType(), False),
                StructField("key", StringType(), False),
                StructField("value", DoubleType(), True),
            ]
        )
        per_cluster = []
        empty = []
        for c in clusters:
            folder = fs.qualify(c.desired_dir)
            files = fs.yaml_files(folder)
            if not files:
                empty.append(f"cluster {c.name}: {display_name(folder)}: no *.yaml or *.yml files")
                continue
            # One partition per cluster: its files merge together (duplicates across files).
            per_cluster.append(
                sc.binaryFiles(",".join(files), 1)
                .coalesce(1)
                .mapPartitions(functools.partial(_desired_partition, c.name, tuple(files)))
            )
        if empty:
            raise KquotaError("\n".join(empty))
        desired = spark.createDataFrame(sc.union(per_cluster), schema)
        text_snaps = [fs.qualify(c.snapshot) for c in clusters if c.snapshot_format != "parquet"]
        parts = []
        if text_snaps:
            parts.append(
                spark.createDataFrame(
                    sc.binaryFiles(",".join(text_snaps), len(text_snaps)).flatMap(_snapshot_rows),
                    schema,
                )
            )
        for c in clusters:
            if c.snapshot_format == "parquet":
                parts.append(
                    spark.read.parquet(fs.qualify(c.snapshot)).select(
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

        with self._job(f"the Spark job to resolve on {len(clusters)} clusters"):
            desired, snapshot = self._rows(clusters)
            self._raise_input_errors(desired, snapshot)
            rows = desired if source == "desired" else snapshot
            return resolve_spark(rows, principals, [c.name for c in clusters])

    # -- the job ----------------------------------------------------------------------------

    def plan_fleet(self, clusters: Sequence[FleetCluster], policy: Policy) -> dict[str, Plan]:
        """plan_fleet plans every cluster of the fleet under ``policy``."""
        with self._job(f"the Spark job to plan {len(clusters)} clusters"):
            return self._plan_fleet(clusters, policy)

    def _plan_fleet(self, clusters: Sequence[FleetCluster], policy: Policy) -> dict[str, Plan]:
        from pyspark.sql import functions as F
        from pyspark.sql.types import BooleanType

        desired, snapshot = self._rows(clusters)
        snapshot = snapshot.cache()
        desired = _as_cluster_spells(desired, snapshot).cache()
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


def _as_cluster_spells(desired: Any, snapshot: Any) -> Any:
    """_as_cluster_spells is :func:`kquota.names.as_cluster_spells` as a join: a declared ip
    address the cluster holds only under another spelling takes that spelling (the first by
    name), so the Spark plan changes the entity the broker has, as the local planner does."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import StringType

    canonical = F.udf(_canonical_ip_key, StringType(), useArrow=False)
    held = snapshot.select("cluster", "entity").distinct()
    spelled = (
        held.filter(F.col("entity").startswith('[["ip","'))
        .withColumn("canonical", canonical(F.col("entity")))
        .filter(F.col("canonical").isNotNull())
        .join(held.withColumnRenamed("entity", "canonical"), ["cluster", "canonical"], "left_anti")
        .groupBy("cluster", "canonical")
        .agg(F.min("entity").alias("held_as"))
        .withColumnRenamed("canonical", "entity")
    )
    return desired.join(spelled, ["cluster", "entity"], "left").select(
        "cluster", F.coalesce(F.col("held_as"), F.col("entity")).alias("entity"), "key", "value"
    )


def _canonical_ip_key(key: str) -> str | None:
    """_canonical_ip_key is the entity key of an ip entity's canonical spelling, or None
    when the name is canonical already (or not an ip literal)."""
    from kquota.names import canonical_ip
    from kquota.snapshot.rows import row_key

    parts = entity_of(key).parts
    name = parts[0][1] if len(parts) == 1 and parts[0][0] == IP else None
    canonical = canonical_ip(name) if name is not None else None
    if canonical is None or canonical == name:
        return None
    return row_key(Entity(((IP, canonical),)))


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
