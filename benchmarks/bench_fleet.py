"""Fleet benchmark: the local engine against the Spark engine (local mode) on the same fleets.

    python benchmarks/bench_fleet.py [--sizes 10x10000,10x100000,100x10000,100x100000]

For each size it generates a deterministic fleet (``kquota.fleet.synth``: desired YAML per
cluster and a drifted JSON Lines snapshot), then runs ``kquota fleet plan`` once with each
engine as a separate process, measuring wall time and the peak RSS of the whole process tree
(Spark's JVM included). Both engines must write identical files; the script checks it. Prints
a table and writes benchmarks/RESULTS-fleet.md.
"""

from __future__ import annotations

import argparse
import filecmp
import os
import platform
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from proctree import run_measured  # noqa: E402

from kquota.fleet.synth import write_fleet  # noqa: E402

RESULTS = Path(__file__).parent / "RESULTS-fleet.md"


def _same_outputs(a: Path, b: Path) -> bool:
    names = sorted(p.name for p in a.iterdir())
    if names != sorted(p.name for p in b.iterdir()):
        return False
    match, mismatch, errors = filecmp.cmpfiles(a, b, names, shallow=False)
    return not mismatch and not errors


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="10x10000,10x100000,100x10000,100x100000")
    ap.add_argument("--driver-memory", default="8g")
    ap.add_argument("--work", type=Path, default=None)
    args = ap.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="kquota-bench-fleet-"))
    rows = []
    for size in args.sizes.split(","):
        clusters, entities = (int(x) for x in size.split("x"))
        base = work / size
        if base.exists():
            shutil.rmtree(base)
        t0 = time.monotonic()
        write_fleet(base / "desired", base / "snapshots", clusters=clusters, entities=entities,
                    formats=("jsonl",))  # fmt: skip
        gen = time.monotonic() - t0
        results = {}
        for engine in ("local", "spark"):
            out = base / f"out-{engine}"
            cmd = [sys.executable, "-m", "kquota.cli.main", "fleet", "plan",
                   "--desired", str(base / "desired"), "--snapshots", str(base / "snapshots"),
                   "--out", str(out), "--engine", engine, "--allow-mass-removal",
                   "--driver-memory", args.driver_memory]  # fmt: skip
            secs, peak, proc = run_measured(cmd)
            if proc.returncode != 0:
                raise SystemExit(f"{engine} failed on {size}:\n{proc.stderr[-3000:]}")
            results[engine] = (secs, peak)
            print(f"{size} {engine}: {secs:.1f}s, peak {peak:.0f} MiB", flush=True)
        same = _same_outputs(base / "out-local", base / "out-spark")
        rows.append((clusters, entities, gen, results, same))
        shutil.rmtree(base)
    lines = [
        "| clusters | entities/cluster | total entities | local s | local peak MiB |"
        " spark s | spark peak MiB | spark/local time | identical output |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|:---:|",
    ]
    for clusters, entities, _gen, res, same in rows:
        (ls, lm), (ss, sm) = res["local"], res["spark"]
        lines.append(
            f"| {clusters} | {entities:,} | {clusters * entities:,} | {ls:.1f} | {lm:.0f} | "
            f"{ss:.1f} | {sm:.0f} | {ss / ls:.2f} | {'yes' if same else 'NO'} |"
        )
    header = (
        f"Measured {time.strftime('%Y-%m-%d')} on {os.cpu_count()} cores, "
        f"Python {platform.python_version()}, Spark local[*], driver memory {args.driver_memory}."
    )
    table = "\n".join(lines)
    print(header)
    print(table)
    method = (
        "Each cell is one `kquota fleet plan` process (`--allow-mass-removal`, prune off): wall "
        "time from start to exit and the peak RSS of its whole process tree, sampled every "
        "0.1 s (Spark's JVM and Python workers included). Both engines parse the same YAML and "
        "JSON Lines with the same loaders (Spark on its executors, two at a time; the local "
        "engine one cluster after another, in one process) and must write byte-identical "
        "plan files (last column). Fleets come from `kquota.fleet.synth` (about 14 % of each "
        "cluster's entities drift)."
    )
    RESULTS.write_text(
        f"## Fleet planning: local engine vs Spark engine\n\n{header}\n\n{table}\n\n{method}\n"
    )


if __name__ == "__main__":
    main()
