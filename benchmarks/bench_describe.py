"""Describe-all benchmark: kquota against Kafka's Java AdminClient on the same broker.

Starts a fresh dev broker (loopback, ``kquota dev-broker``'s launcher), loads 10,000 and then
100,000 quota entities with kquota's own chunked ``alter`` (a mix of user, user+client-id,
client-id and ip entities, 1-3 keys each), and at each size times whole processes, each
writing every entity out:

- ``kquota``: ``kquota describe --format json`` (the snapshot contract);
- ``java``: ``benchmarks/java``: ``Admin.describeClientQuotas(ClientQuotaFilter.all())``
  printing one line per entity, built with Maven against kafka-clients 4.3.1 into a cache
  directory (nothing built is kept in the repository);
- ``kafka-configs``: ``kafka-configs --describe --entity-type users`` (users only, and it
  looks up SCRAM credentials too; Kafka's shipped tool, with its script's ``-Xmx256m``);
- ``kquota, split ...``: ``kquota describe`` with its describe-all split into filtered
  requests (``describe_split.py``; measured, not adopted), checked byte for byte against
  ``kquota describe`` before it is timed.

Wall time and peak RSS come from ``/usr/bin/time`` for each process; each is run ``--reps``
times and the median wall time and largest peak RSS are reported, with ratios against
kquota. Everything is measured in one run of this script, against one broker.

Usage: ``python benchmarks/bench_describe.py [--sizes 10000,100000] [--reps 3] [--runs 1]
[--out FILE]``; ``--runs 3`` measures every size three times (three runs of ``--reps``).
Writes a Markdown table to ``benchmarks/RESULTS-describe.md``. Bounded: a few minutes.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kquota.kafka.admin import QuotaAlteration

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import javapeer  # noqa: E402

KAFKA_VERSION = "4.3.1"
TOOL_TIMEOUT = 300.0
SPLIT_MODES = {"pipelined": "7 requests on 1 connection", "connections": "7 connections"}
"""describe_split.py's modes, by the row each gets."""
# kafka-configs describes one entity shape per run: these four together show every entity.
CONFIGS_ENTITY_TYPES = (("users",), ("clients",), ("users", "clients"), ("ips",))


@dataclass
class Measured:
    wall: float  # median seconds
    rss_mib: float  # largest peak RSS
    entities: int
    cpu: float = 0.0  # median user+sys seconds of the process (its threads and children)


def build_java() -> list[str]:
    """build_java compiles the Java program into the cache and returns its command prefix."""
    return javapeer.build_java("kquota.bench.DescribeAll", "bench-describe-java", KAFKA_VERSION)


def entity_parts(i: int) -> dict[str, str | None]:
    kind = i % 4
    if kind == 0:
        return {"user": f"bench-user-{i:07d}", "client-id": f"bench-app-{i % 97}"}
    if kind == 1:
        return {"client-id": f"bench-client-{i:07d}"}
    if kind == 2:
        return {"ip": f"10.{i >> 16 & 255}.{i >> 8 & 255}.{i & 255}"}
    return {"user": f"bench-user-{i:07d}"}


def alterations(start: int, stop: int) -> list[QuotaAlteration]:
    """alterations create entities [start, stop) of the benchmark's mix."""
    from kquota.kafka.admin import QuotaAlteration, QuotaOp
    from kquota.model import Entity

    out = []
    for i in range(start, stop):
        parts = entity_parts(i)
        if "ip" in parts:
            ops: tuple[QuotaOp, ...] = (QuotaOp.set("connection_creation_rate", 10 + i % 50),)
        else:
            ops = (
                QuotaOp.set("producer_byte_rate", 1048576 * (1 + i % 64)),
                QuotaOp.set("consumer_byte_rate", 2097152 * (1 + i % 32)),
            )
            if i % 3 == 0:
                ops += (QuotaOp.set("request_percentage", 100.0 + i % 7 + 0.5),)
        out.append(QuotaAlteration(Entity.of(parts), ops))
    return out


def load(bootstrap: str, start: int, stop: int) -> float:
    """load creates entities [start, stop) with kquota's chunked alter; returns seconds."""
    from kquota.kafka.admin import WireAdmin
    from kquota.kafka.config import ClientConfig

    alterations_ = alterations(start, stop)
    t0 = time.perf_counter()
    with WireAdmin([bootstrap], ClientConfig()) as admin:
        results = admin.alter(alterations_, validate_only=False)
        failed = [r for r in results if not r.ok]
        if failed:
            raise SystemExit(f"load failed for {len(failed)} entities, e.g. {failed[0]}")
        # describe trails alter: wait until the broker shows them all
        deadline = time.monotonic() + 600  # a loaded machine: the broker can trail by minutes
        while len(admin.describe_all()) < stop:
            if time.monotonic() > deadline:
                raise SystemExit("loaded entities never all became visible")
            time.sleep(0.2)
    return time.perf_counter() - t0


def timed(cmd: list[str], out_path: Path) -> tuple[float, float, float]:
    """timed runs cmd under /usr/bin/time; returns (wall seconds, peak RSS MiB, user+sys
    CPU seconds): on a loaded machine wall time is mostly waiting, CPU time is the work."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as tf:
        with out_path.open("wb") as out:
            proc = subprocess.run(
                ["/usr/bin/time", "-f", "%e %M %U %S", "-o", tf.name, *cmd],
                stdout=out,
                stderr=subprocess.PIPE,
                timeout=TOOL_TIMEOUT,
                check=False,
            )
        if proc.returncode != 0:
            raise SystemExit(f"{cmd[0]} failed ({proc.returncode}): {proc.stderr.decode()[-2000:]}")
        wall, rss_kib, user, system = Path(tf.name).read_text().split()[-4:]
    return float(wall), int(rss_kib) / 1024, float(user) + float(system)


def compiled_as_installed(cache: Path) -> None:
    """compiled_as_installed gives every tool started from here kquota's byte code, as an
    installed kquota has it (pip compiles a wheel's modules when it installs them), in a
    cache directory outside the checkout: with ``PYTHONDONTWRITEBYTECODE`` set (a CI or
    sandbox environment may set it), every kquota process would compile its source first,
    0.05 s of CPU that no user's describe pays and that the Java side (compiled jars) never
    has."""
    import kquota

    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    os.environ["PYTHONPYCACHEPREFIX"] = str(cache)
    package = str(Path(kquota.__file__).parent)
    subprocess.run([sys.executable, "-m", "compileall", "-q", package], check=True)


def count_kquota(path: Path) -> int:
    return len(json.loads(path.read_bytes())["entries"])


def count_lines(path: Path) -> int:
    with path.open("rb") as f:
        return sum(1 for _ in f)


def count_kafka_configs(path: Path) -> int:
    return sum(1 for line in path.open() if line.startswith("Quota configs for"))


Tool = tuple[list[list[str]], object]
"""A tool is one or more commands run one after another (their walls add up) and a counter."""


def measure_all(
    tools: dict[str, Tool],
    reps: int,
    workdir: Path,
    after_round: Callable[[str], None] | None = None,
) -> dict[str, Measured]:
    """measure_all runs every tool ``reps`` times, round robin (so drift in the machine's
    load hits every tool alike); median wall, largest peak RSS, entities of the last run.
    ``after_round`` is given the load average after each round."""
    walls: dict[str, list[float]] = {name: [] for name in tools}
    rss: dict[str, list[float]] = {name: [] for name in tools}
    cpus: dict[str, list[float]] = {name: [] for name in tools}
    counts: dict[str, int] = {}
    for _ in range(reps):
        for name, (cmds, counter) in tools.items():
            wall, peak, count, cpu = 0.0, 0.0, 0, 0.0
            for i, cmd in enumerate(cmds):
                out = workdir / f"out-{i}.txt"
                w, r, c = timed(cmd, out)
                wall, peak, count = wall + w, max(peak, r), count + counter(out)  # type: ignore[operator]
                cpu += c
            walls[name].append(wall)
            cpus[name].append(cpu)
            rss[name].append(peak)
            counts[name] = count
            print(f"  {name}: {wall:.2f}s {peak:.0f} MiB ({count:,})", file=sys.stderr)
        if after_round is not None:
            after_round(load_average())
    return {
        name: Measured(
            statistics.median(walls[name]),
            max(rss[name]),
            counts[name],
            statistics.median(cpus[name]),
        )
        for name in tools
    }


def write_desired(bootstrap: str, path: Path, timeout_ms: int = 30_000) -> int:
    """write_desired writes the cluster's state as desired YAML with 1 in 100 entities
    changed (a live plan's typical input); returns the number of changes."""
    from kquota.fleet.synth import write_desired_yaml
    from kquota.kafka.admin import WireAdmin
    from kquota.kafka.config import ClientConfig

    with WireAdmin([bootstrap], ClientConfig(request_timeout_ms=timeout_ms)) as admin:
        state = admin.describe_all()
    changed = 0
    for i, entity in enumerate(sorted(state, key=str)):
        if i % 100 == 0:
            values = state[entity]
            key = min(values)
            values[key] = values[key] + 1
            changed += 1
    path.parent.mkdir(parents=True, exist_ok=True)
    write_desired_yaml(state, path)
    return changed


def split_tools(kq_describe: list[str], bootstrap: str, work: Path) -> dict[str, Tool]:
    """split_tools are the split describes of describe_split.py, each checked first to write
    exactly what ``kquota describe`` writes (every entity, the same bytes)."""
    args = ["describe", "--bootstrap-server", bootstrap, "--format", "json"]
    expected = work / "unfiltered.json"
    timed(kq_describe, expected)
    tools: dict[str, Tool] = {}
    for mode, label in SPLIT_MODES.items():
        cmd = [sys.executable, str(HERE / "describe_split.py"), mode, *args]
        got = work / f"split-{mode}.json"
        timed(cmd, got)
        if got.read_bytes() != expected.read_bytes():
            raise SystemExit(f"describe_split.py {mode} differs from kquota describe")
        tools[f"kquota, split: {label}"] = ([cmd], count_kquota)
    return tools


def count_plan(path: Path) -> int:
    """count_plan is the number of entities the text plan changes (its ``~`` lines)."""
    return sum(1 for line in path.open() if line.startswith("~ "))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--runs", type=int, default=1, help="measure each size this many times")
    parser.add_argument("--no-split", dest="split", action="store_false")
    parser.add_argument("--out", type=Path, default=HERE / "RESULTS-describe.md")
    parser.add_argument("--no-kafka-configs", action="store_true")
    parser.add_argument(
        "--no-plan", dest="plan", action="store_false", help="skip the live-plan rows (issue 12)"
    )
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]

    from kquota.devbroker.jars import KafkaJars, find_java
    from kquota.devbroker.launcher import start_broker, stop_broker

    java_cmd = build_java()
    jars = KafkaJars.resolve(KAFKA_VERSION)
    configs_cmd = [find_java(), "-Xmx256m", "-cp", jars.classpath, jars.config_command_class]
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="kquota-bench-") as tmp:
        work = Path(tmp)
        compiled_as_installed(work / "pycache")
        broker_dir = work / "broker"
        info = start_broker(
            broker_dir, kafka_version=KAFKA_VERSION, fresh=True, die_with_parent=True
        )
        try:
            bootstrap = info.bootstrap_servers
            loaded = 0
            for size in sizes:
                load_s = load(bootstrap, loaded, size)
                loaded = size
                print(f"loaded {size:,} entities (+{load_s:.1f}s)", file=sys.stderr)
                kq = [sys.executable, "-m", "kquota.cli.main"]
                kq_describe = [*kq, "describe", "--bootstrap-server", bootstrap, "--format", "json"]
                tools: dict[str, Tool] = {
                    "kquota": ([kq_describe], count_kquota),
                    "java": ([[*java_cmd, bootstrap]], count_lines),
                }  # fmt: skip
                if args.split:
                    tools.update(split_tools(kq_describe, bootstrap, work))
                if not args.no_kafka_configs:
                    describe = [*configs_cmd, "--bootstrap-server", bootstrap, "--describe"]
                    tools["kafka-configs"] = (
                        [[*describe, "--entity-type", "users"]],
                        count_kafka_configs,
                    )
                if args.plan:
                    desired = work / f"desired-{size}" / "quotas.yaml"
                    write_desired(bootstrap, desired)
                    tools["kquota plan (live)"] = (
                        [[*kq, "plan", str(desired.parent), "--bootstrap-server", bootstrap]],
                        count_plan,
                    )
                if args.plan and not args.no_kafka_configs:
                    tools["kafka-configs, every type"] = (
                        [[*describe, *(a for t in types for a in ("--entity-type", t))]
                         for types in CONFIGS_ENTITY_TYPES],
                        count_kafka_configs,
                    )  # fmt: skip
                for run in range(1, args.runs + 1):
                    loads: list[str] = []
                    measured = measure_all(tools, args.reps, work, after_round=loads.append)
                    rows.append(Row(size, load_s, run, measured, loads[-1]))
        finally:
            stop_broker(broker_dir)
    report = render(rows, args.reps, args.runs)
    args.out.write_text(report)
    print(report)


def load_average() -> str:
    return " / ".join(f"{x:.1f}" for x in os.getloadavg())


@dataclass
class Row:
    """Row is one run of every tool at one size."""

    size: int
    load_s: float
    run: int
    results: dict[str, Measured]
    load_average: str


def render(rows: list[Row], reps: int, runs: int = 1) -> str:
    cpus = os.cpu_count()
    lines = [
        "## Describe-all and live plan against a live broker (issues 3, 12 and 22)",
        "",
        f"`python benchmarks/bench_describe.py --runs {runs}`, Python "
        f"{platform.python_version()}, {platform.machine()}, {cpus} CPUs, Kafka "
        f"{KAFKA_VERSION} dev broker on loopback (KRaft, PLAINTEXT). Whole-process wall time "
        f"(median of {reps}, tools run round robin; {runs} run(s) of that per size) and peak "
        "RSS (largest) from `/usr/bin/time`; every describing tool writes every entity to a "
        "file. Ratios are tool / kquota (above 1 = kquota is faster or smaller). The load "
        "average after each run is in its rows (a shared machine makes the walls noisy).",
        "",
        "- **kquota**: `kquota describe --format json` (Python start-up and imports included; "
        "kquota's modules byte-compiled once before timing, as an installed kquota has them).",
        "- **java**: `benchmarks/java` DescribeAll, Kafka's AdminClient "
        "`describeClientQuotas(ClientQuotaFilter.all())`, default JVM heap settings.",
        "- **kquota, split: ...** (measured, not adopted): `kquota describe` with its "
        "describe-all split into 7 filtered requests (`benchmarks/describe_split.py`: the "
        "strict shapes `{user}`, `{client-id}`, `{user, client-id}`, `{ip}` matching any "
        "name, and the entities with a default part of each type), either pipelined on one "
        "connection (kquota decodes one answer while the broker builds the next) or one "
        "connection each (the broker builds them at once). Checked byte for byte against "
        "`kquota describe` before timing.",
        "- **kafka-configs**: `kafka-configs --describe --entity-type users` "
        "(user-only entities: a quarter of the set; it also looks up SCRAM "
        "credentials), `-Xmx256m` as its script sets.",
        "- **kquota plan (live)**: `kquota plan DIR --bootstrap-server BS` with a desired "
        "YAML file of every entity, 1 in 100 changed: loads the YAML, describes the cluster, "
        "plans and prints the text plan (entities out = entities the plan changes).",
        "- **kafka-configs, every type**: `kafka-configs --describe` once per entity shape "
        "(`users`, `clients`, `users`+`clients`, `ips`: it shows one shape per run), "
        "the four walls added up: what it takes to see every entity with Kafka's tool.",
        "",
        "CPU is user+sys seconds of each process (median; `/usr/bin/time`, threads and "
        "children included): the work done, where the wall also waits for the shared broker.",
        "",
        "| entities | run | load (kquota alter) | tool | entities out | wall | CPU | peak RSS "
        "| wall ratio | CPU ratio | RSS ratio |",
        "|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        base = row.results["kquota"]
        for name, m in row.results.items():
            wall_ratio, rss_ratio = m.wall / base.wall, m.rss_mib / base.rss_mib
            lines.append(
                f"| {row.size:,} | {row.run} | {row.load_s:.1f} s | {name} | {m.entities:,} "
                f"| {m.wall:.2f} s | {m.cpu:.2f} s | {m.rss_mib:.0f} MiB | {wall_ratio:.2f}x "
                f"| {m.cpu / base.cpu:.2f}x | {rss_ratio:.2f}x |"
            )
    lines += ["", "Per run (kquota / java: below 1 = kquota is faster or smaller):", ""]
    for row in rows:
        base, java = row.results["kquota"], row.results["java"]
        split = "; ".join(
            f"{name.removeprefix('kquota, ')} / kquota wall {m.wall / base.wall:.2f}x"
            for name, m in row.results.items()
            if name.startswith("kquota, split")
        )
        lines.append(
            f"- {row.size:,}, run {row.run} (load average {row.load_average}): kquota / java "
            f"wall {base.wall / java.wall:.2f}x, CPU {base.cpu / java.cpu:.2f}x, peak RSS "
            f"{base.rss_mib / java.rss_mib:.2f}x" + (f"; {split}" if split else "") + "."
        )
    lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
