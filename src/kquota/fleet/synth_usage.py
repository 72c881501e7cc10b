"""Synthetic fleet samples: deterministic sample folders and snapshots for tests and benchmarks.

Each cluster ``c`` gets ``SAMPLES/<c>/`` and ``SNAPSHOTS/<c>.json``. The samples are what a
sample reader must hold up to: principals of every quota level (``{user}``,
``{user, client-id}``, ``{client-id}``: empty tags), rates from a small set of values (ties),
some samples written twice (duplicates), every file's rows shuffled (out of order), throttle
times above zero for some principals (censored), and brokers spread over files of every
kind asked for (JSON Lines, Parquet, Prometheus scrapes).
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from pathlib import Path

import orjson

from kquota.model import Entity, QuotaState
from kquota.snapshot.files import dump_snapshot
from kquota.usage.exposition import EXPOSITION_METRICS
from kquota.usage.rows import FETCH_BYTE_RATE, PRODUCE_BYTE_RATE, PRODUCE_THROTTLE_TIME, Sample
from kquota.usage.samples import FIELDS

START_MS = 1_767_225_600_000
"""2026-01-01T00:00:00Z: the first sample of every series."""
MINUTE_MS = 60_000

_EXPOSITION_NAME = {metric: pair for pair, metric in EXPOSITION_METRICS.items()}


def principals_of(count: int) -> list[tuple[str | None, str | None]]:
    """principals_of is ``count`` (user, client-id) tags, every quota level among them."""
    out: list[tuple[str | None, str | None]] = []
    for i in range(count):
        kind = i % 4
        if kind == 0:
            out.append((f"team-{i}", None))
        elif kind == 1:
            out.append((f"team-{i}", f"app-{i % 3}"))
        elif kind == 2:
            out.append((None, f"batch-{i}"))
        else:
            out.append((f"svc-{i}", None))
    return out


def cluster_samples(
    cluster: str, seed: int, *, principals: int, brokers: int, minutes: int
) -> Iterator[Sample]:
    """cluster_samples are one cluster's samples, in time order, with duplicates."""
    rng = random.Random(seed)
    tags = principals_of(principals)
    levels = [rng.choice((1024.0, 2048.0, 4096.0, 65536.0)) for _ in tags]
    throttled = {i for i in range(len(tags)) if i % 5 == 4}
    for minute in range(minutes):
        ts = START_MS + minute * MINUTE_MS
        for b in range(brokers):
            broker = str(b + 1)
            for i, (user, client) in enumerate(tags):
                rate = levels[i] * rng.randrange(0, 8)  # few distinct values: ties
                yield Sample(cluster, broker, user, client, PRODUCE_BYTE_RATE, ts, rate)
                yield Sample(cluster, broker, user, client, FETCH_BYTE_RATE, ts, rate / 2)
                held = i in throttled and minute % 7 == 0
                throttle = float(rng.randrange(1, 40)) if held else 0.0
                yield Sample(cluster, broker, user, client, PRODUCE_THROTTLE_TIME, ts, throttle)
                if (minute + i) % 11 == 0:  # the same sample twice: kept once
                    yield Sample(cluster, broker, user, client, PRODUCE_BYTE_RATE, ts, rate)


def snapshot_of(principals: int) -> QuotaState:
    """snapshot_of is a cluster's quotas: some principals bounded by their own entity, some
    by a default, and one quota no traffic matches."""
    state: QuotaState = {
        Entity.of({"user": "<default>"}): {"producer_byte_rate": 8192.0},
        Entity.of({"client-id": "<default>"}): {"consumer_byte_rate": 16384.0},
        Entity.of({"user": "nobody-home"}): {"producer_byte_rate": 1024.0},
    }
    for i, (user, client) in enumerate(principals_of(principals)):
        if i % 3 == 0 and user is not None:
            parts = {"user": user} if client is None else {"user": user, "client-id": client}
            state[Entity.of(parts)] = {
                "producer_byte_rate": 4096.0 * (1 + i % 4),
                "consumer_byte_rate": 8192.0,
            }
    return state


def write_usage_fleet(
    samples_root: Path,
    snapshots_dir: Path,
    *,
    clusters: int = 2,
    principals: int = 12,
    brokers: int = 3,
    minutes: int = 60,
    formats: Sequence[str] = ("jsonl", "parquet", "prom"),
    seed: int = 1,
) -> int:
    """write_usage_fleet writes the samples and snapshots of ``clusters`` clusters; broker
    ``b`` goes to a file of ``formats[b % len(formats)]``. Returns the samples written."""
    snapshots_dir.mkdir(parents=True, exist_ok=True)
    written = 0
    for c in range(clusters):
        name = f"cluster-{c:02d}"
        folder = samples_root / name
        folder.mkdir(parents=True, exist_ok=True)
        by_file: dict[tuple[int, str], list[Sample]] = {}
        for s in cluster_samples(
            name, seed + c, principals=principals, brokers=brokers, minutes=minutes
        ):
            b = int(s.broker) - 1
            by_file.setdefault((b, formats[b % len(formats)]), []).append(s)
        rng = random.Random(seed * 1000 + c)
        for (b, fmt), rows in sorted(by_file.items()):
            rng.shuffle(rows)  # out of order
            write_samples(folder / f"broker-{b + 1}.{fmt}", rows, fmt)
            written += len(rows)
        (snapshots_dir / f"{name}.json").write_bytes(dump_snapshot(snapshot_of(principals)))
    return written


def write_samples(path: Path, rows: Sequence[Sample], fmt: str) -> None:
    """write_samples writes ``rows`` as a sample file of kind ``fmt``."""
    if fmt == "jsonl":
        with path.open("wb") as f:
            for s in rows:
                f.write(orjson.dumps({k: getattr(s, k) for k in FIELDS}) + b"\n")
    elif fmt == "parquet":
        from kquota.snapshot.parquet import _pyarrow

        pa, pq = _pyarrow()
        table = pa.table({k: [getattr(s, k) for s in rows] for k in FIELDS})
        pq.write_table(table, path)
    elif fmt == "prom":
        lines = []
        for s in rows:
            name, kind = _EXPOSITION_NAME[s.metric]
            labels = f'cluster="{s.cluster}",broker="{s.broker}",type="{kind}",'
            labels += f'user="{s.user or ""}",client_id="{s.client_id or ""}"'
            lines.append(f"{name}{{{labels}}} {s.value!r} {s.timestamp_ms}\n")
        path.write_text("# TYPE kafka_server_quota_byte_rate gauge\n" + "".join(lines))
    else:
        raise ValueError(f"{fmt}: not a sample file kind")
