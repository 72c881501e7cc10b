"""Offline plan benchmark: 10k, 100k and 1M entities; wall time and peak memory.

For each size it generates a snapshot (the describe JSON contract) and a desired state
(canonical desired-state YAML, read by the real loader; the 1M size can use the snapshot
format for the desired state too, ``--desired-format json``, see below) that differ by about
1% updates, 0.5% creates and 0.5% removals (prune on; the guard is overridden, as the point is
to time the planner). Then, each in a fresh subprocess so peak RSS (``ru_maxrss``) belongs to
one measurement:

- ``parse``: read the desired state and the snapshot, nothing else;
- ``plan``: the same, then ``plan()``, then rendering the JSON contract and the text.

The planner's own overhead is the ``plan`` column next to the parse columns, and the memory
difference between the two subprocesses.

Usage: ``python benchmarks/bench_plan.py [--sizes 10000,100000,1000000] [--out FILE]``.
Writes a Markdown table to ``benchmarks/RESULTS-plan.md`` (merged into BENCHMARKS.md).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kquota.model import Entity

HERE = Path(__file__).resolve().parent
KEYS = ("producer_byte_rate", "consumer_byte_rate", "request_percentage")


def states(n: int) -> tuple[dict[Entity, dict[str, float]], dict[Entity, dict[str, float]]]:
    """states is the desired state and the snapshot for n entities (deterministic)."""
    from kquota.model import Entity

    snapshot: dict[Entity, dict[str, float]] = {}
    desired: dict[Entity, dict[str, float]] = {}
    for i in range(n):
        if i % 4 == 0:
            entity = Entity.of({"user": f"user-{i:07d}", "client-id": f"client-{i % 97}"})
        elif i % 4 == 1:
            entity = Entity.of({"client-id": f"app-{i:07d}"})
        elif i % 4 == 2:
            entity = Entity.of({"ip": f"10.{i >> 16 & 255}.{i >> 8 & 255}.{i & 255}"})
        else:
            entity = Entity.of({"user": f"user-{i:07d}"})
        if entity.is_ip:
            values = {"connection_creation_rate": float(10 + i % 50)}
        else:
            values = {k: float(1048576 * (1 + (i + j) % 64)) for j, k in enumerate(KEYS[:2])}
            if i % 3 == 0:
                values["request_percentage"] = 100.0 + i % 7
        bucket = i % 200
        if bucket == 0:  # 0.5% only in the snapshot: removed under prune
            snapshot[entity] = values
        elif bucket == 1:  # 0.5% only desired: created
            desired[entity] = values
        elif bucket in (2, 3):  # 1% changed values
            snapshot[entity] = values
            desired[entity] = {k: v * 2 for k, v in values.items()}
        else:
            snapshot[entity] = values
            desired[entity] = dict(values)
    return desired, snapshot


def generate(n: int, folder: Path, desired_format: str) -> tuple[Path, Path]:
    """generate writes snapshot.json and the desired state for n entities (deterministic)."""
    from kquota.desired.writer import render_desired
    from kquota.snapshot.files import dump_snapshot

    desired, snapshot = states(n)
    snap_path = folder / "snapshot.json"
    snap_path.write_bytes(dump_snapshot(snapshot))
    if desired_format == "yaml":
        desired_path = folder / "desired.yaml"
        desired_path.write_text(render_desired(desired, "benchmark"), encoding="utf-8")
    else:
        desired_path = folder / "desired.json"
        desired_path.write_bytes(dump_snapshot(desired))
    return desired_path, snap_path


def child(mode: str, desired_path: str, snap_path: str) -> None:
    """child runs one measurement in this (fresh) process and prints JSON."""
    from kquota.snapshot.files import read_snapshot

    t0 = time.perf_counter()
    if desired_path.endswith(".json"):
        desired = read_snapshot(desired_path)
    else:
        from kquota.desired import load_desired

        desired = load_desired([Path(desired_path)]).quotas
    t1 = time.perf_counter()
    snapshot = read_snapshot(snap_path)
    t2 = time.perf_counter()
    result: dict[str, float | int] = {"desired_s": t1 - t0, "snapshot_s": t2 - t1}
    if mode == "plan":
        from kquota.plan.planner import plan
        from kquota.policy import Policy
        from kquota.render import json as render_json
        from kquota.render import text

        policy = Policy(prune=True, allow_mass_removal=True)
        t3 = time.perf_counter()
        p = plan(desired, snapshot, policy, cluster="bench")
        t4 = time.perf_counter()
        rendered = render_json.render_plan(p)
        t5 = time.perf_counter()
        text.render_plan(p)
        t6 = time.perf_counter()
        result |= {
            "plan_s": t4 - t3,
            "json_s": t5 - t4,
            "text_s": t6 - t5,
            "alterations": len(p.alterations),
            "plan_bytes": len(rendered),
        }
    result["entities"] = len(desired.keys() | snapshot.keys())
    result["maxrss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(result))


def measure(mode: str, desired_path: Path, snap_path: Path) -> dict[str, float]:
    t0 = time.perf_counter()
    out = subprocess.run(
        [sys.executable, __file__, "--child", mode, str(desired_path), str(snap_path)],
        check=True,
        capture_output=True,
        text=True,
    )
    data: dict[str, float] = json.loads(out.stdout)
    data["process_s"] = time.perf_counter() - t0
    return data


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument(
        "--desired-format-1m",
        choices=["yaml", "json"],
        default="yaml",
        help="desired-state format for sizes >= 1M (yaml: the real loader)",
    )
    parser.add_argument("--out", type=Path, default=HERE / "RESULTS-plan.md")
    parser.add_argument("--child", nargs=3, metavar=("MODE", "DESIRED", "SNAPSHOT"))
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return

    rows = []
    codec: dict[str, float] = {}
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="kquota-bench-") as tmp:
        for n in (int(s) for s in args.sizes.split(",")):
            folder = Path(tmp) / str(n)
            folder.mkdir()
            fmt = args.desired_format_1m if n >= 1_000_000 else "yaml"
            t0 = time.perf_counter()
            desired_path, snap_path = generate(n, folder, fmt)
            gen_s = time.perf_counter() - t0
            parse = measure("parse", desired_path, snap_path)
            full = measure("plan", desired_path, snap_path)
            row = {
                "n": n,
                "desired_format": fmt,
                "desired_mb": desired_path.stat().st_size / 1e6,
                "snapshot_mb": snap_path.stat().st_size / 1e6,
                "gen_s": gen_s,
                "parse": parse,
                "plan": full,
            }
            rows.append(row)
            if n == 100_000:
                codec = compare_json_codecs(snap_path)
            print(
                f"{n:>9,} entities: desired {parse['desired_s']:.2f}s "
                f"({fmt}, {row['desired_mb']:.1f} MB), snapshot {parse['snapshot_s']:.2f}s "
                f"({row['snapshot_mb']:.1f} MB), plan {full['plan_s']:.2f}s, "
                f"json {full['json_s']:.2f}s, text {full['text_s']:.2f}s; peak RSS parse "
                f"{parse['maxrss_mib']:.0f} MiB, parse+plan {full['maxrss_mib']:.0f} MiB",
                flush=True,
            )
    load = (load_before, os.getloadavg()[0])
    args.out.write_text(report(rows, codec, load), encoding="utf-8")
    print(f"wrote {args.out}")


def compare_json_codecs(snap_path: Path) -> dict[str, float]:
    """compare_json_codecs times orjson against the standard json module (best of 3)."""
    import orjson

    data = snap_path.read_bytes()
    doc = orjson.loads(data)

    def best(f: object) -> float:
        times = []
        for _ in range(3):
            t0 = time.perf_counter()
            f()  # type: ignore[operator]
            times.append(time.perf_counter() - t0)
        return min(times)

    return {
        "orjson_loads": best(lambda: orjson.loads(data)),
        "json_loads": best(lambda: json.loads(data)),
        "orjson_dumps": best(lambda: orjson.dumps(doc)),
        "json_dumps": best(lambda: json.dumps(doc)),
        "mb": len(data) / 1e6,
    }


def report(
    rows: list[dict[str, object]], codec: dict[str, float], load: tuple[float, float]
) -> str:
    cpu = platform.processor() or platform.machine()
    lines = [
        "## Offline plan (issue 4)",
        "",
        f"`python benchmarks/bench_plan.py`, Python {platform.python_version()}, {cpu}, "
        f"{os.cpu_count()} CPUs, load average {load[0]:.1f} before / {load[1]:.1f} after the "
        "run. Each column is one phase, timed inside a fresh process;",
        "peak RSS (`ru_maxrss`) is per process: *parse* reads both files and stops, *plan* also",
        "plans and renders. Inputs differ by 1% updates, 0.5% creates, 0.5% removals (prune on).",
        "",
        "| entities | desired file | parse desired | parse snapshot | plan | render JSON "
        "| render text | plan / parse | alterations | peak RSS parse | peak RSS parse+plan |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        p: dict[str, float] = r["parse"]  # type: ignore[assignment]
        f: dict[str, float] = r["plan"]  # type: ignore[assignment]
        lines.append(
            f"| {r['n']:,} | {r['desired_format']} {r['desired_mb']:.1f} MB "
            f"| {p['desired_s']:.2f} s | {p['snapshot_s']:.2f} s ({r['snapshot_mb']:.1f} MB) "
            f"| {f['plan_s']:.2f} s | {f['json_s']:.2f} s | {f['text_s']:.2f} s "
            f"| {f['plan_s'] / (p['desired_s'] + p['snapshot_s']):.0%} "
            f"| {int(f['alterations']):,} | {p['maxrss_mib']:.0f} MiB | {f['maxrss_mib']:.0f} MiB |"
        )
    lines += [
        "",
        "*plan / parse* is the planner's time as a share of reading both files: the planner",
        "(a dict hash join, classify via the rules table, sort only the alterations) is a",
        "small fraction; parsing the desired YAML dominates, and its transient peak is also",
        "the peak RSS (planning adds no new peak: its output is proportional to the changes).",
        "",
    ]
    if codec:
        lines.append(
            f"JSON codec on the 100k snapshot ({codec['mb']:.1f} MB, best of 3): orjson loads "
            f"{codec['orjson_loads']:.2f} s vs json {codec['json_loads']:.2f} s; dumps "
            f"{codec['orjson_dumps']:.3f} s vs {codec['json_dumps']:.3f} s."
        )
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
