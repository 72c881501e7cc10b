"""Blast-radius benchmark (issue 13): ``--impact`` against the plan it belongs to.

A synthetic snapshot of 100k entities (user, user+client-id, client-id and ip entities, and
the defaults) is written to a file and read back, a desired state differing by ~2% is
planned against it, and the impact of that plan on 10k principals (users with client ids,
users alone, client ids alone, ip addresses; half of them named in the snapshot) is
computed. Two plans:

- ``named only``: the changes touch named entities only (the common case);
- ``defaults too``: the plan also changes ``user=<default>``, ``client-id=<default>`` and
  ``ip=<default>``, so every principal has an altered candidate and is resolved (the worst
  case for the fast path).

Columns: reading the snapshot, planning (:func:`kquota.plan.planner.plan`), the
impact (:func:`kquota.plan.impact.plan_impact`), and, for scale, resolving every principal
without the fast path (``resolution_changes`` with no ``altered``). Best of 3 each.

Usage: ``python benchmarks/bench_impact.py [--entities 100000] [--principals 10000]``.
Writes ``benchmarks/RESULTS-impact.md`` (merged into BENCHMARKS.md by assemble.py).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
P, C, R = "producer_byte_rate", "consumer_byte_rate", "connection_creation_rate"


def generate(n: int) -> tuple[dict, dict]:  # type: ignore[type-arg]
    """generate is (snapshot, desired) for n entities, deterministic."""
    from kquota.model import Entity

    snapshot: dict[Entity, dict[str, float]] = {
        Entity.of({"user": None}): {P: 1e6, C: 1e6},
        Entity.of({"client-id": None}): {P: 5e5},
        Entity.of({"ip": None}): {R: 100.0},
    }
    for i in range(n - 3):
        kind = i % 4
        if kind == 0:
            entity = Entity.of({"user": f"user-{i:07d}", "client-id": f"client-{i % 97}"})
        elif kind == 1:
            entity = Entity.of({"client-id": f"app-{i:07d}"})
        elif kind == 2:
            entity = Entity.of({"ip": f"10.{i >> 16 & 255}.{i >> 8 & 255}.{i & 255}"})
        else:
            entity = Entity.of({"user": f"user-{i:07d}"})
        snapshot[entity] = {R: float(10 + i % 50)} if entity.is_ip else {P: float(1 + i % 64)}
    desired = {e: dict(v) for e, v in snapshot.items()}
    for i, entity in enumerate(list(desired)):
        if i % 100 == 7:
            desired[entity] = {k: v * 2 for k, v in desired[entity].items()}
        elif i % 100 == 8 and entity.parts[0][1] is not None:
            del desired[entity]
    return snapshot, desired


def principals(n: int) -> list:  # type: ignore[type-arg]
    """principals: n principals, half named in the snapshot's entities, half not."""
    from kquota.plan.resolver import Principal

    out = []
    for j in range(n):
        i = (j * 4) % 100_000 if j % 2 == 0 else 10_000_000 + j
        kind = j % 4
        if kind == 0:
            out.append(Principal(f"user-{i:07d}", f"client-{i % 97}"))
        elif kind == 1:
            out.append(Principal(f"user-{i + 3:07d}"))
        elif kind == 2:
            out.append(Principal(None, f"app-{i + 1:07d}"))
        else:
            out.append(Principal(ip=f"10.{i >> 16 & 255}.{i >> 8 & 255}.{(i + 2) & 255}"))
    return out


def best(fn: Callable[[], object], runs: int = 3) -> tuple[float, object]:
    times, result = [], None
    for _ in range(runs):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return min(times), result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--entities", type=int, default=100_000)
    parser.add_argument("--principals", type=int, default=10_000)
    parser.add_argument("--out", type=Path, default=HERE / "RESULTS-impact.md")
    args = parser.parse_args()

    from kquota.desired import load_desired
    from kquota.desired.writer import render_desired
    from kquota.model import Entity
    from kquota.plan.impact import plan_impact
    from kquota.plan.planner import plan as make
    from kquota.plan.resolver import resolution_changes
    from kquota.plan.simulate import simulate_plan
    from kquota.policy import Policy
    from kquota.snapshot.files import dump_snapshot, read_snapshot

    snapshot, desired = generate(args.entities)
    who = principals(args.principals)
    policy = Policy(prune=True, allow_mass_removal=True)
    load = os.getloadavg()[0]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "snapshot.json"
        path.write_bytes(dump_snapshot(snapshot))
        read_s, state = best(lambda: read_snapshot(path), runs=1)
        yaml_path = Path(tmp) / "desired.yaml"
        yaml_path.write_text(render_desired(desired, "bench"), encoding="utf-8")
        yaml_s, _ = best(lambda: load_desired([yaml_path]), runs=1)
    for label, extra in (
        ("named only", {}),
        (
            "defaults too",
            {
                Entity.of({"user": None}): {P: 2e6, C: 1e6},
                Entity.of({"client-id": None}): {P: 4e5},
                Entity.of({"ip": None}): {R: 50.0},
            },
        ),
    ):
        wanted = desired | extra
        plan_s, plan = best(lambda w=wanted: make(w, state, policy, cluster="bench"))  # type: ignore[misc]
        impact_s, impact = best(lambda p=plan: plan_impact(state, p, who, policy))  # type: ignore[misc]
        after = simulate_plan(state, plan)  # type: ignore[arg-type]
        full_s, full = best(lambda a=after: resolution_changes(state, a, who), runs=1)  # type: ignore[misc]
        assert set(impact.changes) == set(full)  # type: ignore[attr-defined,call-overload]
        rows.append(
            (label, read_s, plan_s, impact_s, full_s, len(plan.alterations), len(full))  # type: ignore[attr-defined,arg-type]
        )

    head = (
        "| plan | read snapshot | load desired YAML | plan | plan command | impact "
        "| impact / plan command | resolve all (no fast path) | alterations | changes |\n"
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    )
    lines = []
    for label, r, p, i, f, a, c in rows:
        total = r + yaml_s + p
        lines.append(
            f"| {label} | {r:.2f} s | {yaml_s:.2f} s | {p:.2f} s | {total:.2f} s | {i:.2f} s "
            f"| {i / total:.0%} | {f:.2f} s | {a:,} | {c:,} |"
        )
    text = (
        "## Blast radius: plan --impact (issue 13)\n\n"
        f"`python benchmarks/bench_impact.py`, Python {platform.python_version()}, "
        f"{os.cpu_count()} CPUs, load average {load:.1f} at the start. "
        f"{args.entities:,} entities in a snapshot file, {args.principals:,} principals "
        "(a quarter each user+client-id, user, client-id, ip; half named in the snapshot). "
        "Best of 3, in one process.\n\n" + head + "\n" + "\n".join(lines) + "\n\n"
        "*plan command* is what `kquota plan --snapshot` spends before rendering: reading the "
        "snapshot, loading the desired YAML (the same entities), planning. *impact* resolves "
        "only the keys of principals one of whose candidate entities the plan alters "
        "(checked equal to resolving every principal, the last time column). With the "
        "defaults changed every principal is a candidate: that is the worst case.\n"
    )
    args.out.write_text(text)
    sys.stdout.write(head + "\n" + "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
