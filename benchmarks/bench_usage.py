"""Fleet usage benchmark: ``kquota fleet usage`` on the local engine and on Spark.

    python benchmarks/bench_usage.py [--sizes 10M,100M] [--clusters 2] [--principals 1000]
        [--engines local,spark] [--results benchmarks/RESULTS-usage.md] [--no-steps]

For each size (samples in all) it writes a deterministic fleet of Parquet sample files
(``SAMPLES/<cluster>/broker-<b>.parquet``: 6 brokers, ``--principals`` principals each, a
produce rate and a produce throttle time a minute, as many minutes as the size needs; rates
from a few values, so ties, and throttled principals) and a snapshot per cluster, then runs
``kquota fleet usage --since 30d`` with each engine in its own process: wall time, samples
per second, per second per core (local: 1 core; Spark: every core of ``local[*]``) and the
peak RSS of the process tree (Spark's JVM and Python workers included). Every engine must
write the local engine's files byte for byte; the script checks it.

Where the time goes: unless ``--no-steps``, each engine is run once more in a process of its
own, timing its steps: the local engine's reading (and checking) of the files alone, then the
rest of the profile; the Spark job's steps as :func:`kquota.fleet.spark_usage.profile_fleet_spark`
names them.
"""

from __future__ import annotations

import argparse
import filecmp
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from proctree import run_measured  # noqa: E402

RESULTS = Path(__file__).parent / "RESULTS-usage.md"
ENGINES = ("local", "spark")
BROKERS = 6
BATCH = 1_000_000
SINCE = "30d"


def _count(text: str) -> int:
    units = {"K": 1_000, "M": 1_000_000, "G": 1_000_000_000}
    text = text.strip().upper()
    return int(float(text[:-1]) * units[text[-1]]) if text[-1] in units else int(text)


def write_fleet(base: Path, samples: int, clusters: int, principals: int) -> int:
    """write_fleet writes the sample folders and snapshots; returns the samples written."""
    from kquota.fleet.synth_usage import START_MS, principals_of, snapshot_of
    from kquota.snapshot.files import dump_snapshot
    from kquota.snapshot.parquet import _pyarrow
    from kquota.usage.rows import PRODUCE_BYTE_RATE, PRODUCE_THROTTLE_TIME
    from kquota.usage.samples import parquet_schema

    pa, pq = _pyarrow()
    per_minute = clusters * BROKERS * principals * 2
    minutes = max(1, samples // per_minute)
    tags = principals_of(principals)
    (base / "snapshots").mkdir(parents=True)
    schema = parquet_schema(pa)
    written = 0
    for c in range(clusters):
        name = f"cluster-{c:02d}"
        folder = base / "samples" / name
        folder.mkdir(parents=True)
        (base / "snapshots" / f"{name}.json").write_bytes(dump_snapshot(snapshot_of(principals)))
        for b in range(BROKERS):
            with pq.ParquetWriter(folder / f"broker-{b + 1}.parquet", schema) as w:
                cols: list[list[object]] = [[] for _ in range(7)]
                for m in range(minutes):
                    ts = START_MS + m * 60_000
                    for i, (user, client) in enumerate(tags):
                        rate = float(((i * 7919 + m * 104729 + b) % 64) * 1024)
                        held = 5.0 if i % 50 == 0 and m % 7 == 0 else 0.0
                        for metric, value in (
                            (PRODUCE_BYTE_RATE, rate),
                            (PRODUCE_THROTTLE_TIME, held),
                        ):
                            for col, v in zip(
                                cols,
                                (name, str(b + 1), user, client, metric, ts, value),
                                strict=True,
                            ):
                                col.append(v)
                    if len(cols[0]) >= BATCH or m == minutes - 1:
                        w.write_table(pa.table(cols, schema=schema))
                        written += len(cols[0])
                        cols = [[] for _ in range(7)]
    return written


def _engine_args(engine: str, args: argparse.Namespace) -> list[str]:
    if engine == "local":
        return ["--engine", "local"]
    return ["--engine", "spark", "--driver-memory", args.driver_memory]


def _same_outputs(a: Path, b: Path) -> bool:
    names = sorted(p.name for p in a.iterdir())
    if names != sorted(p.name for p in b.iterdir()):
        return False
    _, mismatch, errors = filecmp.cmpfiles(a, b, names, shallow=False)
    return not mismatch and not errors


def steps_of(engine: str, base: Path, driver_memory: str) -> list[tuple[str, float]]:
    """steps_of times one engine's steps on the fleet at ``base`` (run in its own process)."""
    from kquota.fleet.usage import discover_usage, profile_fleet_local
    from kquota.usage.source import parse_since

    window = parse_since(SINCE)
    samples, snaps = str(base / "samples"), str(base / "snapshots")
    steps: list[tuple[str, float]] = []
    began = time.monotonic()
    if engine == "local":
        from kquota.usage.samples import SampleFiles

        clusters = discover_usage(samples, snaps)
        rows = 0
        for c in clusters:
            rows += sum(1 for _ in SampleFiles((Path(c.desired_dir),), c.name))
        steps.append((f"read and check the files ({rows:,} rows; alone)", time.monotonic() - began))
        began = time.monotonic()
        profile_fleet_local(clusters, since_ms=window)
        whole = time.monotonic() - began
        steps.append(("the whole profile (reading again, series, sort, percentiles)", whole))
        steps.append(("of which: series, sort, percentiles", whole - steps[0][1]))
        return steps
    from kquota.fleet.spark import SparkEngine, SparkSettings
    from kquota.fleet.spark_usage import profile_fleet_spark

    with SparkEngine(SparkSettings(driver_memory=driver_memory)) as job:
        job.session()
        steps.append(("start the Spark session", time.monotonic() - began))
        clusters = job.discover_usage(samples, snaps)
        profile_fleet_spark(job.session(), clusters, since_ms=window, steps=steps)
    return steps


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="10M,100M")
    ap.add_argument("--clusters", type=int, default=2)
    ap.add_argument("--principals", type=int, default=1000)
    ap.add_argument("--engines", default="local,spark")
    ap.add_argument("--driver-memory", default="8g")
    ap.add_argument("--no-steps", action="store_true")
    ap.add_argument("--work", type=Path, default=None)
    ap.add_argument("--results", type=Path, default=RESULTS)
    ap.add_argument("--steps-of", nargs=2, metavar=("ENGINE", "FLEET"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.steps_of:
        engine, base = args.steps_of
        print(json.dumps(steps_of(engine, Path(base), args.driver_memory)))
        return
    engines = args.engines.split(",")
    if engines[0] != "local" or set(engines) - set(ENGINES):
        raise SystemExit(f"--engines: start with local, then any of {', '.join(ENGINES)}")
    work = args.work or Path(tempfile.mkdtemp(prefix="kquota-bench-usage-"))
    cores = os.cpu_count() or 1
    load_before = os.getloadavg()
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1"}
    rows = []
    step_tables = []
    for size in args.sizes.split(","):
        base = work / size
        shutil.rmtree(base, ignore_errors=True)
        began = time.monotonic()
        samples = write_fleet(base, _count(size), args.clusters, args.principals)
        print(f"{size}: {samples:,} samples written in {time.monotonic() - began:.0f}s", flush=True)
        results = {}
        for engine in engines:
            out = base / f"out-{engine}"
            cmd = [sys.executable, "-m", "kquota.cli.main", "fleet", "usage",
                   "--samples", str(base / "samples"), "--snapshots", str(base / "snapshots"),
                   "--out", str(out), "--since", SINCE, "--timeout", "12h",
                   *_engine_args(engine, args)]  # fmt: skip
            secs, peak, proc = run_measured(cmd, env=env, timeout=12 * 3600)
            if proc.returncode != 0:
                raise SystemExit(f"{engine} failed on {size}:\n{proc.stderr[-3000:]}")
            used = 1 if engine == "local" else cores
            results[engine] = (secs, peak, used)
            print(f"{size} {engine}: {secs:.1f}s, peak {peak:.0f} MiB", flush=True)
            if not args.no_steps:
                found = subprocess.run(
                    [sys.executable, __file__, "--steps-of", engine, str(base),
                     "--driver-memory", args.driver_memory],
                    env=env, capture_output=True, text=True, check=True,
                )  # fmt: skip
                step_tables.append((size, engine, json.loads(found.stdout.splitlines()[-1])))
        same = {e: _same_outputs(base / "out-local", base / f"out-{e}") for e in engines}
        rows.append((size, samples, results, same))
        shutil.rmtree(base)
    load_after = os.getloadavg()
    lines = [
        "| samples | engine | s | samples/s | cores | samples/s/core | peak MiB | identical |",
        "|---:|:---|---:|---:|---:|---:|---:|:---:|",
    ]
    for _, samples, results, same in rows:
        for engine, (secs, peak, used) in results.items():
            rate = samples / secs
            lines.append(
                f"| {samples:,} | {engine} | {secs:.1f} | {rate:,.0f} | {used} | "
                f"{rate / used:,.0f} | {peak:.0f} | {'yes' if same[engine] else 'NO'} |"
            )
    steps_md = []
    for size, engine, steps in step_tables:
        steps_md.append(f"\n{size}, {engine}:\n\n| step | s |\n|:---|---:|")
        steps_md += [f"| {name} | {secs:.1f} |" for name, secs in steps]
    header = (
        f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on {cores} cores, "
        f"Python {platform.python_version()}, Spark local[*], driver memory "
        f"{args.driver_memory}; {args.clusters} clusters x {BROKERS} brokers x "
        f"{args.principals} principals, Parquet. Load average (1/5/15 min) before "
        f"{' / '.join(f'{x:.2f}' for x in load_before)}, after "
        f"{' / '.join(f'{x:.2f}' for x in load_after)}."
    )
    table = "\n".join(lines)
    print(header)
    print(table)
    print("\n".join(steps_md))
    method = (
        "Each run is one `kquota fleet usage --since 30d` process: wall time from start to "
        "exit (Spark's session start included) and the peak RSS of its process tree, sampled "
        "every 0.1 s. samples/s/core divides by the cores the engine can use (local: 1). Both "
        "engines must write byte-identical files (last column)."
    )
    args.results.write_text(
        f"## Fleet usage: local engine vs Spark\n\n{header}\n\n{table}\n\n{method}\n\n"
        f"### Where the time goes\n{chr(10).join(steps_md)}\n"
    )


if __name__ == "__main__":
    main()
