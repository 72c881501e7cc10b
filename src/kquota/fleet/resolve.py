"""Fleet resolution: the effective quotas of listed (user, client-id) pairs on every cluster.

Both engines decide with :func:`kquota.plan.precedence.choose`; the Spark job finds the
candidate entities with a join of (principal x eight precedence levels) against the quota
rows, the local engine with dictionary lookups. Output, one file per cluster,
``OUT/<cluster>.effective.jsonl``: one line per principal, in the input order, in the
``resolve --format json`` form.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from kquota.model import Entity, QuotaState
from kquota.plan.precedence import Level, candidate, choose
from kquota.plan.resolver import resolve
from kquota.quotakeys import CLIENT_KEYS

UserClient = tuple[str, str]
Effective = dict[str, tuple[float, Entity]]


def _levels(user: str, client: str) -> list[tuple[Level, Entity]]:
    """_levels are the candidates that can exist (no empty names) for one principal."""
    return [
        (level, candidate(level, user, client))
        for level in Level
        if all(n != "" for _, n in candidate(level, user, client).parts)
    ]


def resolve_local(state: QuotaState, principals: Sequence[UserClient]) -> list[Effective]:
    """resolve_local resolves each principal with the resolver (the reference semantics)."""
    return [
        {q.key: (q.value, q.source) for q in resolve(state, user, client).quotas}
        for user, client in principals
    ]


def _line(principal: UserClient, eff: Effective) -> str:
    user, client = principal
    data: dict[str, Any] = {
        "entity": {"user": user, "client-id": client},
        "quotas": {
            key: {"value": eff[key][0], "source": eff[key][1].to_json()}
            for key in CLIENT_KEYS
            if key in eff
        },
    }
    return json.dumps(data, separators=(",", ":"))


def write_effective(
    results: dict[str, list[Effective]], principals: Sequence[UserClient], out: Path
) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for cluster, effs in results.items():
        lines = [_line(p, e) for p, e in zip(principals, effs, strict=True)]
        (out / f"{cluster}.effective.jsonl").write_text("".join(line + "\n" for line in lines))


def _choose_row(cands: list[Any], user: str, client: str) -> int | None:
    chosen = choose([c["level"] for c in cands], user, client)
    return None if chosen is None else int(chosen)


def resolve_spark(
    rows: Any, principals: Sequence[UserClient], clusters: Sequence[str]
) -> dict[str, list[Effective]]:
    """resolve_spark resolves on Spark; ``rows`` is a (cluster, entity, key, value) frame."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import IntegerType

    from kquota.snapshot.rows import row_key

    spark = rows.sparkSession
    cand_rows = [
        (pid, user, client, int(level), row_key(entity))
        for pid, (user, client) in enumerate(principals)
        for level, entity in _levels(user, client)
    ]
    cands = spark.createDataFrame(
        cand_rows, "pid INT, user STRING, client STRING, level INT, entity STRING"
    )
    hits = rows.filter(F.col("key").isin(*CLIENT_KEYS)).join(cands, "entity")
    grouped = hits.groupBy("cluster", "pid", "user", "client", "key").agg(
        F.collect_list(F.struct("level", "value")).alias("cands")
    )
    choose_udf = F.udf(_choose_row, IntegerType(), useArrow=False)
    chosen = grouped.withColumn("chosen", choose_udf("cands", "user", "client")).filter(
        F.col("chosen").isNotNull()
    )
    picked = chosen.select(
        "cluster",
        "pid",
        "key",
        "chosen",
        F.expr("filter(cands, c -> c.level = chosen)[0].value").alias("value"),
    ).collect()
    results: dict[str, list[Effective]] = {c: [{} for _ in principals] for c in clusters}
    for r in picked:
        user, client = principals[r["pid"]]
        results[r["cluster"]][r["pid"]][r["key"]] = (
            r["value"],
            candidate(Level(r["chosen"]), user, client),
        )
    return results
