"""Offline plan against its floor (issue 12, goal 3): whole processes, peer in the same run.

For each size it generates the inputs of ``bench_plan.py`` (canonical desired-state YAML and
a snapshot that differ by 1% updates, 0.5% creates, 0.5% removals), then runs, interleaved,
``--rounds`` times each:

- **kquota**: ``kquota plan DESIRED --snapshot SNAPSHOT --prune --allow-mass-removal
  --format json`` with the JSON plan written to a file (start-up, imports, reading and
  checking both files, planning, the digest, rendering: the whole command);
- **floor**: a Python process that parses the same two files with yaml-rs (``yaml_rs.loads``)
  and the standard ``json`` module and does nothing else.

Wall and CPU time (user + system, from ``wait4``) are medians; peak RSS is the largest of
the rounds. The machine is shared, so the CPU ratio is the steadier one.

Usage: ``python benchmarks/bench_plan_floor.py [--sizes 100000,1000000] [--rounds 3]``;
writes ``benchmarks/RESULTS-plan-floor.md`` (merged into BENCHMARKS.md by ``assemble.py``).
Needs ``pip install yaml-rs`` (the peer only; kquota does not use it).
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_plan import generate  # noqa: E402

FLOOR = """
import json, sys, yaml_rs
with open(sys.argv[1], encoding="utf-8") as fh:
    desired = yaml_rs.loads(fh.read())
with open(sys.argv[2], "rb") as fh:
    snapshot = json.loads(fh.read())
assert len(desired["quotas"]) > 0 and len(snapshot["entries"]) > 0
"""


def run(argv: list[str], out: Path) -> dict[str, float]:
    """run starts one process and returns its wall, CPU seconds and peak RSS (MiB).

    Through ``/usr/bin/time``: a child forked from this (large) process would inherit its
    peak RSS, as Linux keeps the high-water mark across exec.
    """
    stats = out.with_suffix(".time")
    with out.open("wb") as fh:
        t0 = time.perf_counter()
        done = subprocess.run(
            ["/usr/bin/time", "-f", "%U %S %M", "-o", str(stats), *argv],
            stdout=fh,
            stderr=subprocess.PIPE,
        )
        wall = time.perf_counter() - t0
    if done.returncode != 0:
        raise SystemExit(f"{argv[0]} failed: {done.stderr.decode()}")
    user, system, rss_kb = stats.read_text().split()[-3:]
    return {"wall": wall, "cpu": float(user) + float(system), "rss": int(rss_kb) / 1024}


def measure(n: int, folder: Path, rounds: int) -> dict[str, list[dict[str, float]]]:
    desired, snapshot = generate(n, folder, "yaml")
    kquota = shutil.which("kquota") or "kquota"
    tools = {
        "kquota": [
            kquota,
            "plan",
            str(desired),
            "--snapshot",
            str(snapshot),
            "--prune",
            "--allow-mass-removal",
            "--format",
            "json",
        ],
        "floor": [sys.executable, "-c", FLOOR, str(desired), str(snapshot)],
    }
    results: dict[str, list[dict[str, float]]] = {name: [] for name in tools}
    for r in range(rounds):
        for name, argv in tools.items():
            got = run(argv, folder / f"{name}.out")
            results[name].append(got)
            print(
                f"{n:>9,} round {r + 1} {name:>6}: wall {got['wall']:.2f} s, "
                f"cpu {got['cpu']:.2f} s, peak {got['rss']:.0f} MiB",
                flush=True,
            )
    plan_bytes = (folder / "kquota.out").stat().st_size
    print(f"{n:>9,}: plan {plan_bytes / 1e6:.1f} MB", flush=True)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", type=Path, default=HERE / "RESULTS-plan-floor.md")
    args = parser.parse_args()
    load_before = os.getloadavg()
    rows = []
    with tempfile.TemporaryDirectory(prefix="kquota-floor-") as tmp:
        for n in (int(s) for s in args.sizes.split(",")):
            folder = Path(tmp) / str(n)
            folder.mkdir()
            rows.append((n, measure(n, folder, args.rounds)))
            for f in folder.iterdir():
                f.unlink()  # 1M inputs are 200 MB: free the disk before the next size
    args.out.write_text(report(rows, args.rounds, load_before, os.getloadavg()), encoding="utf-8")
    print(f"wrote {args.out}")


def report(
    rows: list[tuple[int, dict[str, list[dict[str, float]]]]],
    rounds: int,
    before: tuple[float, float, float],
    after: tuple[float, float, float],
) -> str:
    lines = [
        "## Offline plan against the parse floor (issue 12, goal 3)",
        "",
        f"`python benchmarks/bench_plan_floor.py`, Python {platform.python_version()}, "
        f"{os.cpu_count()} CPUs, shared with other builds: load average (1/5/15 min) "
        f"{before[0]:.1f} / {before[1]:.1f} / {before[2]:.1f} before, "
        f"{after[0]:.1f} / {after[1]:.1f} / {after[2]:.1f} after. Inputs as in the offline "
        "plan section (canonical YAML, snapshot JSON, 2% of entities differ). Each tool is a "
        f"fresh process, {rounds} rounds interleaved (kquota, floor, kquota, floor, ...); "
        "wall and CPU (user + system) are medians, peak RSS the largest round.",
        "",
        "- **kquota**: `kquota plan desired.yaml --snapshot snapshot.json --prune "
        "--allow-mass-removal --format json > plan.json`, the whole command.",
        "- **floor**: `yaml_rs.loads` of the YAML and `json.loads` of the snapshot in one "
        "Python process, nothing else (no checks, no positions, no plan).",
        "",
        "| entities | tool | wall | CPU | peak RSS | wall / floor | CPU / floor |",
        "|---:|---|---:|---:|---:|---:|---:|",
    ]
    for n, res in rows:
        med = {
            name: (
                statistics.median(r["wall"] for r in runs),
                statistics.median(r["cpu"] for r in runs),
                max(r["rss"] for r in runs),
            )
            for name, runs in res.items()
        }
        floor_wall, floor_cpu, _ = med["floor"]
        for name, (wall, cpu, rss) in med.items():
            lines.append(
                f"| {n:,} | {name} | {wall:.2f} s | {cpu:.2f} s | {rss:.0f} MiB "
                f"| {wall / floor_wall:.2f}x | {cpu / floor_cpu:.2f}x |"
            )
    lines += [
        "",
        "Goal 3 asks for at most 3x the floor at 100k and at 1M, and at most 1.5 GiB peak at",
        "1M. What got kquota there (each measured before it was kept; none changes an output",
        "byte: golden files, plans and digests are checked by the tests):",
        "",
        "1. **One regular expression over the whole desired file** (`kquota.desired.scan`):",
        "   the tightest canonical form (what `export` writes) is split into lines, keys and",
        "   flow pairs by one `finditer` in C; positions come from match offsets. Anything",
        "   else, even one odd line, declines to the line reader, then to the YAML composer.",
        "   Hypothesis checks it against both (generated, export-shaped and randomly mutated",
        "   files: identical nodes, or a decline), and reading through it against the full",
        "   path (identical entries and problems).",
        "2. **Entries are validated as they are scanned** (`DocumentReader`), by the same",
        "   walker as every other file, so a file's nodes never all exist at once: at 1M the",
        "   desired load peaked at 2.3 GiB with the tree, about 0.8 GiB streamed.",
        "3. **Equal quota-value dicts are shared** (`kquota.model.pooled`) in snapshots and",
        "   desired files: large states repeat a few tiers, and each shared dict saves about",
        "   250 bytes an entity; snapshot entries whose values are pooled skip their checks.",
        "4. **Snapshots in the written layout are parsed entry by entry** with orjson instead",
        "   of as one document (which held all 1M entries as JSON objects at once).",
        "5. **The state digest is encoded by orjson** when that is byte-identical to",
        "   `json.dumps` (no escapes needed, every number printed as Python's repr); else by",
        "   `json` itself. Plain scalars that no YAML resolver can claim skip PyYAML's resolver.",
        "",
        "Not done: kquota's start-up (about 0.5 s of CPU, mostly importing pydantic for",
        "`kquota.yaml` and the desired-state models) is the largest fixed cost left at 100k;",
        "a native scanner was not needed.",
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
