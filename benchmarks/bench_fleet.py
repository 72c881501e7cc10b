"""Fleet benchmark: the fleet engines on the same fleets, each run a separate process.

    python benchmarks/bench_fleet.py [--sizes 10x10000,100x10000] [--repeat 3]
        [--engines local,local2,spark,standalone] [--results benchmarks/RESULTS-fleet.md]

Engines: ``local`` (one process), ``local2`` (``--processes 2``), ``spark`` (Spark local[*])
and ``standalone`` (``--master spark://…``: a standalone master and worker the script starts on
loopback from the pyspark package, executors on a Python without kquota, as in the tests).

For each size it generates a deterministic fleet (``kquota.fleet.synth``: desired YAML per
cluster and a drifted JSON Lines snapshot), then runs ``kquota fleet plan`` with each engine,
round robin, ``--repeat`` times: wall time (median) and the peak RSS of the process tree,
for ``standalone`` the driver's tree plus the worker's (its executor JVM and Python workers).
Every engine must write the local engine's files byte for byte; the script checks it. Prints
a table and writes it to ``--results``.
"""

from __future__ import annotations

import argparse
import contextlib
import filecmp
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parent.parent / "tests"))
from proctree import run_measured  # noqa: E402

from kquota.fleet.synth import write_fleet  # noqa: E402
from spark_cluster import SparkCluster, standalone_cluster  # noqa: E402

RESULTS = Path(__file__).parent / "RESULTS-fleet.md"
ENGINES = ("local", "local2", "spark", "standalone")


def _same_outputs(a: Path, b: Path) -> bool:
    names = sorted(p.name for p in a.iterdir())
    if names != sorted(p.name for p in b.iterdir()):
        return False
    match, mismatch, errors = filecmp.cmpfiles(a, b, names, shallow=False)
    return not mismatch and not errors


def _engine_args(engine: str, args: argparse.Namespace, cluster: SparkCluster | None) -> list[str]:
    if engine == "local":
        return ["--engine", "local", "--processes", "1"]
    if engine == "local2":
        return ["--engine", "local", "--processes", "2"]
    spark = ["--engine", "spark", "--driver-memory", args.driver_memory]
    if engine == "spark":
        return spark
    assert cluster is not None
    return [*spark, "--master", cluster.master,
            "--conf", f"spark.pyspark.python={cluster.executor_python}",
            "--conf", "spark.driver.host=127.0.0.1", "--conf", "spark.driver.bindAddress=127.0.0.1",
            "--conf", f"spark.executor.memory={args.executor_memory}"]  # fmt: skip


@contextlib.contextmanager
def _maybe_cluster(engines: list[str], args: argparse.Namespace) -> Iterator[SparkCluster | None]:
    if "standalone" not in engines:
        yield None
        return
    with (
        tempfile.TemporaryDirectory(prefix="kquota-bench-spark-") as folder,
        standalone_cluster(
            Path(folder), cores=args.worker_cores, memory=args.worker_memory
        ) as cluster,
    ):
        yield cluster


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="10x10000,10x100000,100x10000,100x100000")
    ap.add_argument("--engines", default="local,spark")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--driver-memory", default="8g")
    ap.add_argument("--executor-memory", default="6g")
    ap.add_argument("--worker-cores", type=int, default=2)
    ap.add_argument("--worker-memory", default="8g")
    ap.add_argument("--work", type=Path, default=None)
    ap.add_argument("--results", type=Path, default=RESULTS)
    args = ap.parse_args()
    engines = args.engines.split(",")
    if engines[0] != "local" or set(engines) - set(ENGINES):
        raise SystemExit(f"--engines: start with local, then any of {', '.join(ENGINES)}")
    work = args.work or Path(tempfile.mkdtemp(prefix="kquota-bench-fleet-"))
    load_before = os.getloadavg()
    rows = []
    with _maybe_cluster(engines, args) as cluster:
        env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1"}
        for size in args.sizes.split(","):
            clusters, entities = (int(x) for x in size.split("x"))
            base = work / size
            if base.exists():
                shutil.rmtree(base)
            write_fleet(base / "desired", base / "snapshots", clusters=clusters,
                        entities=entities, formats=("jsonl",))  # fmt: skip
            times: dict[str, list[float]] = {e: [] for e in engines}
            peaks: dict[str, float] = dict.fromkeys(engines, 0.0)
            for _ in range(args.repeat):
                for engine in engines:
                    out = base / f"out-{engine}"
                    shutil.rmtree(out, ignore_errors=True)
                    cmd = [sys.executable, "-m", "kquota.cli.main", "fleet", "plan",
                           "--desired", str(base / "desired"),
                           "--snapshots", str(base / "snapshots"), "--out", str(out),
                           "--allow-mass-removal", "--timeout", "12h",  # 100 x 100k, loaded
                           *_engine_args(engine, args, cluster)]  # fmt: skip
                    also = [cluster.worker_pid] if engine == "standalone" and cluster else []
                    secs, peak, proc = run_measured(cmd, env=env, also=also)
                    if proc.returncode != 0:
                        raise SystemExit(f"{engine} failed on {size}:\n{proc.stderr[-3000:]}")
                    times[engine].append(secs)
                    peaks[engine] = max(peaks[engine], peak)
                    print(f"{size} {engine}: {secs:.1f}s, peak {peak:.0f} MiB", flush=True)
            same = {e: _same_outputs(base / "out-local", base / f"out-{e}") for e in engines}
            rows.append((clusters, entities, times, peaks, same))
            shutil.rmtree(base)
    load_after = os.getloadavg()
    lines = [
        "| clusters | entities/cluster | engine | median s | runs | peak MiB | time / local |"
        " identical to local |",
        "|---:|---:|:---|---:|---:|---:|---:|:---:|",
    ]
    for clusters, entities, times, peaks, same in rows:
        base_s = statistics.median(times["local"])
        for engine in engines:
            med = statistics.median(times[engine])
            runs = " / ".join(f"{t:.1f}" for t in times[engine])
            lines.append(
                f"| {clusters} | {entities:,} | {engine} | {med:.1f} | {runs} | "
                f"{peaks[engine]:.0f} | {med / base_s:.2f} | {'yes' if same[engine] else 'NO'} |"
            )
    shape = (
        f"; standalone: 1 worker, {args.worker_cores} cores, executor memory {args.executor_memory}"
        if "standalone" in engines
        else ""
    )
    header = (
        f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on {os.cpu_count()} "
        f"cores, Python {platform.python_version()}, Spark driver memory {args.driver_memory}"
        f"{shape}. Load average (1/5/15 min) before "
        f"{' / '.join(f'{x:.2f}' for x in load_before)}, after "
        f"{' / '.join(f'{x:.2f}' for x in load_after)}."
    )
    table = "\n".join(lines)
    print(header)
    print(table)
    method = (
        "Each run is one `kquota fleet plan` process (`--allow-mass-removal`, prune off): "
        "wall time from start to exit (median of the runs listed) and the largest peak RSS of "
        "its process tree, sampled every 0.1 s (Spark's JVM and Python workers included; for "
        "`standalone` also the worker's tree). Engines run round robin on the same fleet, from "
        "`kquota.fleet.synth` (about 14 % of each cluster's entities drift), and must write "
        "the local engine's files byte for byte (last column)."
    )
    args.results.write_text(
        f"## Fleet planning: {', '.join(engines)}\n\n{header}\n\n{table}\n\n{method}\n"
    )


if __name__ == "__main__":
    main()
