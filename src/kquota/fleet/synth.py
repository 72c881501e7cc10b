"""Synthetic fleets: deterministic desired states and snapshots for tests and benchmarks.

Each cluster gets a mix an operator would recognise: user, client-id and user+client-id
entities, default entities, ip entities; its snapshot starts from the desired state and then
drifts: changed values, missing and extra keys, missing entities, undeclared entities and
entities outside a ``team-*`` ownership scope.
"""

from __future__ import annotations

import random
from pathlib import Path

from kquota.desired.writer import quoted_name
from kquota.model import Entity, QuotaState, sorted_entities
from kquota.snapshot.files import dump_snapshot
from kquota.snapshot.rows import row_key

_CLIENT_KEYS = ("producer_byte_rate", "consumer_byte_rate", "request_percentage")


def _entity(rng: random.Random, i: int) -> Entity:
    kind = i % 10
    if kind == 0:
        return Entity.of({"ip": f"10.{(i >> 16) & 255}.{(i >> 8) & 255}.{i & 255}"})
    if kind in (1, 2):
        return Entity.of({"client-id": f"team-app-{i}"})
    if kind in (3, 4, 5):
        return Entity.of({"user": f"team-{i}", "client-id": f"app-{i % 7}"})
    return Entity.of({"user": f"team-{i}"})


def _values(rng: random.Random, entity: Entity) -> dict[str, float]:
    if entity.is_ip:
        return {"connection_creation_rate": float(rng.randrange(1, 500))}
    keys = rng.sample(_CLIENT_KEYS, rng.randrange(1, len(_CLIENT_KEYS) + 1))
    out: dict[str, float] = {}
    for k in keys:
        out[k] = (
            round(rng.uniform(1, 400), 2)
            if k == "request_percentage"
            else float(rng.randrange(1, 1 << 30))
        )
    return out


def synth_cluster(seed: int, entities: int) -> tuple[QuotaState, QuotaState]:
    """synth_cluster returns (desired, snapshot) for one cluster of about ``entities``."""
    rng = random.Random(seed)
    desired: QuotaState = {
        Entity.of({"user": None}): {"consumer_byte_rate": 1048576.0},
        Entity.of({"user": None, "client-id": None}): {"producer_byte_rate": 524288.0},
        Entity.of({"ip": None}): {"connection_creation_rate": 100.0},
    }
    for i in range(entities):
        e = _entity(rng, i)
        desired[e] = _values(rng, e)
    snapshot: QuotaState = {}
    for e, values in desired.items():
        roll = rng.random()
        if roll < 0.03:
            continue  # declared entity missing on the cluster
        v = dict(values)
        if roll < 0.08:
            k = rng.choice(list(v))
            v[k] = v[k] * 2  # value changed
        elif roll < 0.11 and not e.is_ip and len(v) > 1:
            v.pop(next(iter(v)))  # declared key missing
        elif roll < 0.14 and not e.is_ip:
            extra = [k for k in _CLIENT_KEYS if k not in v]
            if extra:
                v[extra[0]] = 77.0  # key added out of band
        snapshot[e] = v
    for j in range(max(1, entities // 50)):
        snapshot[Entity.of({"user": f"team-undeclared-{j}"})] = {"producer_byte_rate": 1000.0 + j}
        snapshot[Entity.of({"user": f"legacy-{j}"})] = {"consumer_byte_rate": 2000.0 + j}
    return desired, snapshot


def _yaml_number(v: float) -> str:
    return str(int(v)) if v.is_integer() else repr(v)


def write_desired_yaml(state: QuotaState, path: Path) -> None:
    """write_desired_yaml writes the canonical YAML form, one flow-style entry a line."""
    lines = ["apiVersion: kquota/v1", "kind: ClientQuotas", "quotas:"]
    for e in sorted_entities(state):
        match = ", ".join(f"{t}: {quoted_name(n)}" for t, n in e.parts)
        sets = ", ".join(f"{k}: {_yaml_number(v)}" for k, v in sorted(state[e].items()))
        lines.append(f"  - {{match: {{{match}}}, set: {{{sets}}}}}")
    path.write_text("\n".join(lines) + "\n")


def write_fleet(
    root: Path,
    snapshots: Path,
    *,
    clusters: int,
    entities: int,
    formats: tuple[str, ...] = ("json",),
) -> list[str]:
    """write_fleet writes ``clusters`` clusters; snapshot formats rotate through ``formats``."""
    names = []
    snapshots.mkdir(parents=True, exist_ok=True)
    for c in range(clusters):
        name = f"cluster-{c:03d}"
        desired, snapshot = synth_cluster(seed=c, entities=entities)
        (root / name).mkdir(parents=True, exist_ok=True)
        write_desired_yaml(desired, root / name / "quotas.yaml")
        fmt = formats[c % len(formats)]
        if fmt == "parquet":
            from kquota.snapshot.parquet import write_parquet_snapshot

            write_parquet_snapshot(
                snapshot, snapshots / f"{name}.parquet", cluster=name, cluster_id=None,
                captured_at="2026-01-01T00:00:00Z",
            )  # fmt: skip
        else:
            (snapshots / f"{name}.{fmt}").write_bytes(dump_snapshot(snapshot, fmt))  # type: ignore[arg-type]
        names.append(name)
    return names


__all__ = ["row_key", "synth_cluster", "write_desired_yaml", "write_fleet"]
