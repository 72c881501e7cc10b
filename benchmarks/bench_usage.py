"""Fleet usage benchmark: ``kquota fleet usage`` on the local engine and on Spark.

    python benchmarks/bench_usage.py [--sizes 10M,100M] [--clusters 2] [--principals 1000]
        [--engines local,spark] [--steps-sizes 10M] [--timeout SECONDS] [--cache DIR]
        [--results benchmarks/RESULTS-usage.md] [--append]

For each size (samples in all) it writes, once, a deterministic fleet of Parquet sample
files (``SAMPLES/<cluster>/broker-<b>.parquet``: 6 brokers, ``--principals`` principals each,
a produce rate and a produce throttle time a minute, as many minutes as the size needs;
rates from a few values, so ties, and throttled principals) and a snapshot per cluster into
``--cache`` (default: a folder in the temporary directory; 100 M samples are about 0.5 GB
and kept for the next run), then runs ``kquota fleet usage --since 30d`` with each engine in
its own process: wall time, CPU seconds, samples per second, per second per core (local: 1
core; Spark: every core of ``local[*]``), per CPU second, the peak RSS of the process tree
(Spark's JVM and Python workers included) and the load averages before and after, since a
shared machine's load changes every figure. A run past ``--timeout`` is stopped and
recorded as such. The results file is rewritten after every run (``--append`` keeps the rows
of earlier runs, kept in the cache). Both engines must write the same files byte for byte;
the script checks it.

Where the time goes: for the ``--steps-sizes``, each engine is run once more in a process
of its own, timing its steps: the local engine's reading (and checking) of the files alone,
then the rest of the profile, then a cProfile run's functions by own time; the Spark job's
steps as :func:`kquota.fleet.spark_usage.profile_fleet_spark` names them.
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
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from proctree import run_measured  # noqa: E402

RESULTS = Path(__file__).parent / "RESULTS-usage.md"
ENGINES = ("local", "spark")
BROKERS = 6
BATCH = 1_000_000
SINCE = "30d"
CACHE = "kquota-bench-usage-cache"


def _count(text: str) -> int:
    units = {"K": 1_000, "M": 1_000_000, "G": 1_000_000_000}
    text = text.strip().upper()
    return int(float(text[:-1]) * units[text[-1]]) if text[-1] in units else int(text)


def write_fleet(base: Path, samples: int, clusters: int, principals: int) -> int:
    """write_fleet writes the sample folders and snapshots; returns the samples written.

    Row r of a broker's file is minute ``r // (2 * principals)``, principal
    ``r // 2 % principals``, metric ``r % 2`` (produce rate, then throttle time): built
    column by column with pyarrow's compute functions, a million rows at a time, so 100 M
    samples take a minute or two, not an hour of Python loops."""
    from kquota.fleet.synth_usage import START_MS, principals_of, snapshot_of
    from kquota.snapshot.files import dump_snapshot
    from kquota.snapshot.parquet import _pyarrow
    from kquota.usage.rows import PRODUCE_BYTE_RATE, PRODUCE_THROTTLE_TIME
    from kquota.usage.samples import parquet_schema

    pa, pq = _pyarrow()
    import pyarrow.compute as pc

    per_minute = clusters * BROKERS * principals * 2
    minutes = max(1, samples // per_minute)
    rows = minutes * principals * 2  # per file
    tags = principals_of(principals)
    users = pa.array([u for u, _ in tags], pa.string())
    client_ids = pa.array([c for _, c in tags], pa.string())
    metrics = pa.array([PRODUCE_BYTE_RATE, PRODUCE_THROTTLE_TIME], pa.string())
    (base / "snapshots").mkdir(parents=True)
    schema = parquet_schema(pa)
    step = BATCH - BATCH % (2 * principals)  # whole minutes a batch

    def mod(x: object, n: int) -> object:
        return pc.subtract(x, pc.multiply(pc.divide(x, n), n))

    written = 0
    for c in range(clusters):
        name = f"cluster-{c:02d}"
        folder = base / "samples" / name
        folder.mkdir(parents=True)
        (base / "snapshots" / f"{name}.json").write_bytes(dump_snapshot(snapshot_of(principals)))
        for b in range(BROKERS):
            with pq.ParquetWriter(folder / f"broker-{b + 1}.parquet", schema) as w:
                for first in range(0, rows, step):
                    r = pa.array(range(first, min(rows, first + step)), pa.int64())
                    m = pc.divide(r, 2 * principals)
                    i = mod(pc.divide(r, 2), principals)
                    k = mod(r, 2)
                    # rate: ((i * 7919 + m * 104729 + b) % 64) * 1024; throttle time: 5 ms
                    # for every 50th principal every 7th minute
                    mix = pc.add(pc.add(pc.multiply(i, 7919), pc.multiply(m, 104729)), b)
                    rate = pc.cast(pc.multiply(mod(mix, 64), 1024), pa.float64())
                    held = pc.and_(pc.equal(mod(i, 50), 0), pc.equal(mod(m, 7), 0))
                    held_ms = pc.if_else(held, 5.0, 0.0)
                    n = len(r)
                    w.write_batch(
                        pa.RecordBatch.from_arrays(
                            [
                                pa.array([name] * n, pa.string()),
                                pa.array([str(b + 1)] * n, pa.string()),
                                pc.take(users, i),
                                pc.take(client_ids, i),
                                pc.take(metrics, k),
                                pc.add(pc.multiply(m, 60_000), START_MS),
                                pc.if_else(pc.equal(k, 0), rate, held_ms),
                            ],
                            schema=schema,
                        )
                    )
                    written += n
    return written


def cached_fleet(cache: Path, size: str, clusters: int, principals: int) -> tuple[Path, int]:
    """cached_fleet is the fleet of ``size`` samples in ``cache`` (written once, then kept:
    100 M samples are a few GB and minutes to write) and its sample count."""
    base = cache / f"{size}-{clusters}x{principals}"
    done = base / "written"
    if not done.exists():
        shutil.rmtree(base, ignore_errors=True)
        began = time.monotonic()
        samples = write_fleet(base, _count(size), clusters, principals)
        done.write_text(str(samples))
        print(f"{size}: {samples:,} samples written in {time.monotonic() - began:.0f}s", flush=True)
    return base, int(done.read_text())


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


Step = tuple[str, float, float]
"""a step's name, wall seconds and CPU seconds of this process (nan: not this process's)"""


def steps_of(engine: str, base: Path, driver_memory: str) -> list[Step]:
    """steps_of times one engine's steps on the fleet at ``base`` (run in its own process)."""
    from kquota.fleet.usage import discover_usage, profile_fleet_local
    from kquota.usage.window import parse_since

    window = parse_since(SINCE)
    samples, snaps = str(base / "samples"), str(base / "snapshots")
    steps: list[Step] = []
    began, cpu = time.monotonic(), time.process_time()
    if engine == "local":
        import cProfile
        import pstats

        from kquota.usage.samples import SampleFiles

        clusters = discover_usage(samples, snaps)
        rows = 0
        for c in clusters:
            rows += sum(1 for _ in SampleFiles((Path(c.desired_dir),), c.name))
        read = (time.monotonic() - began, time.process_time() - cpu)
        steps.append((f"read and check the files ({rows:,} rows; alone)", *read))
        began, cpu = time.monotonic(), time.process_time()
        profile_fleet_local(clusters, since_ms=window)
        whole = (time.monotonic() - began, time.process_time() - cpu)
        steps.append(("the whole profile (reading again, series, sort, percentiles)", *whole))
        rest = (whole[0] - read[0], whole[1] - read[1])
        steps.append(("of which: series, sort, percentiles", *rest))
        # Where the CPU goes, by function: a profiled run (cProfile's own cost inflates it).
        profiler = cProfile.Profile()
        profiler.runcall(profile_fleet_local, clusters, since_ms=window)
        stats = pstats.Stats(profiler).stats  # type: ignore[attr-defined]
        total = sum(v[2] for v in stats.values())
        top = sorted(stats.items(), key=lambda kv: -kv[1][2])[:8]
        for (file, line, func), v in top:
            where = f"{Path(file).name}:{line}" if line else file
            steps.append((f"cProfile, own time: {func} ({where}), {v[2] / total:.0%}", NAN, v[2]))
        return steps
    from kquota.fleet.spark import SparkEngine, SparkSettings
    from kquota.fleet.spark_usage import profile_fleet_spark

    with SparkEngine(SparkSettings(driver_memory=driver_memory)) as job:
        job.session()
        walls = [("start the Spark session", time.monotonic() - began)]
        clusters = job.discover_usage(samples, snaps)
        profile_fleet_spark(job.session(), clusters, since_ms=window, steps=walls)
    # The work is the JVM's and its Python workers', not this driver's: wall time only.
    return [(name, secs, NAN) for name, secs in walls]


NAN = float("nan")


def _load() -> str:
    return " / ".join(f"{x:.1f}" for x in os.getloadavg())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="10M,100M")
    ap.add_argument("--clusters", type=int, default=2)
    ap.add_argument("--principals", type=int, default=1000)
    ap.add_argument("--engines", default="local,spark")
    ap.add_argument("--driver-memory", default="8g")
    ap.add_argument("--steps-sizes", default="10M", help="sizes whose steps are timed too")
    ap.add_argument("--timeout", type=float, default=45 * 60, help="seconds a run may take")
    ap.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / CACHE)
    ap.add_argument("--results", type=Path, default=RESULTS)
    ap.add_argument("--append", action="store_true", help="keep the cache's earlier rows")
    ap.add_argument("--steps-only", action="store_true", help="time the steps, not the runs")
    ap.add_argument("--steps-of", nargs=2, metavar=("ENGINE", "FLEET"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.steps_of:
        engine, base = args.steps_of
        print(json.dumps(steps_of(engine, Path(base), args.driver_memory)))
        return
    engines = args.engines.split(",")
    if set(engines) - set(ENGINES):
        raise SystemExit(f"--engines: any of {', '.join(ENGINES)}")
    cores = os.cpu_count() or 1
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1"}
    # The rows so far (--append: of earlier runs too): written after every run, so a run
    # stopped halfway (100 M samples on a loaded machine) still leaves its figures.
    state_file = args.cache / "results.json"
    state: dict[str, list[Any]] = {"rows": [], "steps": []}
    if args.append and state_file.exists():
        state = json.loads(state_file.read_text())
    for size in args.sizes.split(","):
        base, samples = cached_fleet(args.cache, size, args.clusters, args.principals)
        for engine in engines:
            if args.steps_only:
                _steps(args, state, size, engine, base, env)
                _write(args, state, state_file, cores)
                continue
            out = base / f"out-{engine}"
            shutil.rmtree(out, ignore_errors=True)
            cmd = [sys.executable, "-m", "kquota.cli.main", "fleet", "usage",
                   "--samples", str(base / "samples"), "--snapshots", str(base / "snapshots"),
                   "--out", str(out), "--since", SINCE, "--timeout", "12h",
                   *_engine_args(engine, args)]  # fmt: skip
            before, cpu = _load(), list[float]()
            secs, peak, proc = run_measured(cmd, env=env, timeout=args.timeout, cpu=cpu)
            after = _load()
            used = 1 if engine == "local" else cores
            if proc.returncode != 0 and secs >= args.timeout:
                done = f"stopped after {args.timeout:.0f} s, unfinished"
                state["rows"].append(
                    f"| {samples:,} | {engine} | >{secs:.0f} | {cpu[0]:.0f} | {done} | | | "
                    f"{peak:.0f} | {before} | {after} | |"
                )
            elif proc.returncode != 0:
                raise SystemExit(f"{engine} failed on {size}:\n{proc.stderr[-3000:]}")
            else:
                other = base / f"out-{'spark' if engine == 'local' else 'local'}"
                same = ("yes" if _same_outputs(other, out) else "NO") if other.exists() else "-"
                rate = samples / secs
                state["rows"].append(
                    f"| {samples:,} | {engine} | {secs:.1f} | {cpu[0]:.0f} | {rate:,.0f} | "
                    f"{rate / used:,.0f} | {samples / cpu[0]:,.0f} | {peak:.0f} | {before} | "
                    f"{after} | {same} |"
                )
            print(state["rows"][-1], flush=True)
            _write(args, state, state_file, cores)
            if size in args.steps_sizes.split(",") and proc.returncode == 0:
                _steps(args, state, size, engine, base, env)
                _write(args, state, state_file, cores)


def _steps(
    args: argparse.Namespace,
    state: dict[str, list[Any]],
    size: str,
    engine: str,
    base: Path,
    env: dict[str, str],
) -> None:
    before = _load()
    found = subprocess.run(
        [sys.executable, __file__, "--steps-of", engine, str(base),
         "--driver-memory", args.driver_memory],
        env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    steps = json.loads(found.stdout.splitlines()[-1])
    state["steps"].append((size, engine, before, _load(), steps))


def _write(
    args: argparse.Namespace, state: dict[str, list[Any]], state_file: Path, cores: int
) -> None:
    state_file.write_text(json.dumps(state))
    lines = [
        "| samples | engine | wall s | CPU s | samples/s | samples/s/core | samples/CPU-s "
        "| peak MiB | load before | load after | identical |",
        "|---:|:---|---:|---:|---:|---:|---:|---:|:---|:---|:---:|",
        *state["rows"],
    ]
    steps_md = []
    for size, engine, before, after, steps in state["steps"]:
        steps_md.append(
            f"\n{size}, {engine} (load {before} before, {after} after):\n\n"
            "| step | wall s | CPU s |\n|:---|---:|---:|"
        )
        steps_md += [
            f"| {name} | {'' if wall != wall else f'{wall:.1f}'} | "
            f"{'' if cpu != cpu else f'{cpu:.1f}'} |"
            for name, wall, cpu in steps
        ]
    header = (
        f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} (last run) on {cores} "
        f"cores, Python {platform.python_version()}, Spark local[*], driver memory "
        f"{args.driver_memory}; {args.clusters} clusters x {BROKERS} brokers x "
        f"{args.principals} principals, Parquet. Load: the 1 / 5 / 15 minute load averages "
        "before and after each run."
    )
    table = "\n".join(lines)
    method = (
        "Each run is one `kquota fleet usage --since 30d` process: wall time from start to "
        "exit (Spark's session start included), the CPU seconds and the peak RSS of its "
        "process tree (Spark's JVM and Python workers included), sampled every 0.1 s. "
        "samples/s/core divides by the cores the engine can use (local: 1); samples/CPU-s "
        "is what a loaded machine changes least. Both engines must write byte-identical "
        "files (last column: the second of the two runs of a size compared with the first)."
    )
    args.results.write_text(
        f"## Fleet usage: local engine vs Spark\n\n{header}\n\n{table}\n\n{method}\n\n"
        f"### Where the time goes\n{chr(10).join(steps_md)}\n"
    )


if __name__ == "__main__":
    main()
