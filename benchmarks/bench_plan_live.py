"""Live plan at 1M entities: kquota against Kafka's own tools on one dev broker.

Starts a fresh dev broker with a heap that holds a million quota entities (``--heap``),
loads them with kquota's own chunked ``alter`` (the mix of ``bench_describe.py``: user,
user+client-id, client-id and ip entities, 1-3 keys each, plus one entity of every default
shape), a chunk at a time and bounded in time (``--load-timeout``), then times whole
processes, round robin, ``--reps`` rounds:

- ``kquota plan (live)``: ``kquota plan DIR --bootstrap-server BS`` with a desired YAML file
  of every entity, 1 in 100 changed: loads the YAML, describes the cluster, plans and prints
  the text plan (entities out = entities the plan changes);
- ``kafka-configs, every type``: ``kafka-configs --describe`` once per entity shape
  (``users``, ``clients``, ``users`` + ``clients``, ``ips``; each shape's run shows its
  default entities too), the walls added up: what it takes to see every entity with Kafka's
  own tool, from the same jars as the broker, with its script's heap (``-Xmx256m``) unless
  ``--configs-heap`` says otherwise;
- ``kquota describe``: ``kquota describe --format json``;
- ``java``: ``benchmarks/java`` DescribeAll, Kafka's AdminClient describing every entity.

Wall time and peak RSS come from ``/usr/bin/time`` for each process (for several processes
run one after another: walls added, the largest peak); medians of the rounds. The broker is
stopped at the end, whatever happens.

Usage: ``python benchmarks/bench_plan_live.py [--size 1000000] [--reps 3] [--out FILE]``.
Writes ``benchmarks/RESULTS-plan-live-1m.md``. Bounded: the load by ``--load-timeout``, each
process by ``bench_describe.TOOL_TIMEOUT``.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import bench_describe as bd  # noqa: E402

# One entity of every default shape the broker holds (None: the default entity).
DEFAULTS: tuple[dict[str, str | None], ...] = (
    {"user": None},
    {"client-id": None},
    {"user": None, "client-id": None},
    {"user": "bench-user-default-client", "client-id": None},
    {"user": None, "client-id": "bench-app-default-user"},
    {"ip": None},
)
LOAD_CHUNK = 100_000


# A describe of a million entities can take the loaded broker over the default 30 s.
TIMEOUT_MS = 600_000
KQUOTA_PROPERTIES = f"request.timeout.ms={TIMEOUT_MS}\n"
JAVA_PROPERTIES = KQUOTA_PROPERTIES + f"default.api.timeout.ms={TIMEOUT_MS}\n"


def load(bootstrap: str, size: int, timeout: float) -> float:
    """load creates ``size`` entities and the default shapes over one connection, a chunk
    at a time (progress, and a bound: past ``timeout`` it gives up), then waits until the
    broker shows them all; returns seconds."""
    from kquota.kafka.admin import QuotaAlteration, QuotaOp, WireAdmin
    from kquota.kafka.config import ClientConfig
    from kquota.model import Entity

    began = time.perf_counter()
    op = (QuotaOp.set("producer_byte_rate", 1048576.0),)
    ip_op = (QuotaOp.set("connection_creation_rate", 100.0),)
    defaults = [QuotaAlteration(Entity.of(d), ip_op if "ip" in d else op) for d in DEFAULTS]
    with WireAdmin([bootstrap], ClientConfig(request_timeout_ms=TIMEOUT_MS)) as admin:
        for start in range(0, size, LOAD_CHUNK):
            chunk = bd.alterations(start, min(size, start + LOAD_CHUNK))
            if start == 0:
                chunk += defaults
            failed = [r for r in admin.alter(chunk, validate_only=False) if not r.ok]
            if failed:
                raise SystemExit(f"load failed for {len(failed)} entities, e.g. {failed[0]}")
            done = min(size, start + LOAD_CHUNK)
            print(f"  loaded {done:,} ({time.perf_counter() - began:.0f}s)", file=sys.stderr)
            if time.perf_counter() - began > timeout:
                raise SystemExit(f"loading took over {timeout:.0f}s; stopped at {done:,}")
        deadline = time.monotonic() + 600
        while (visible := len(admin.describe_all())) < size + len(DEFAULTS):
            print(f"  visible: {visible:,}", file=sys.stderr)
            if time.monotonic() > deadline:
                break  # measured as it stands: the table says how many the tools saw
            time.sleep(1)
    return time.perf_counter() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=1_000_000)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--heap", default="4g", help="the broker's -Xmx")
    parser.add_argument("--configs-heap", default="256m", help="kafka-configs' -Xmx")
    parser.add_argument("--load-timeout", type=float, default=1800.0)
    parser.add_argument("--out", type=Path, default=HERE / "RESULTS-plan-live-1m.md")
    args = parser.parse_args()
    bd.TOOL_TIMEOUT = 1800.0  # a million entities on a loaded machine

    from kquota.devbroker.jars import KafkaJars, find_java
    from kquota.devbroker.launcher import start_broker, stop_broker

    java_cmd = bd.build_java()
    jars = KafkaJars.resolve(bd.KAFKA_VERSION)
    configs = [find_java(), f"-Xmx{args.configs_heap}", "-cp", jars.classpath]
    configs.append(jars.config_command_class)
    with tempfile.TemporaryDirectory(prefix="kquota-bench-") as tmp:
        work = Path(tmp)
        broker_dir = work / "broker"
        info = start_broker(
            broker_dir,
            kafka_version=bd.KAFKA_VERSION,
            fresh=True,
            die_with_parent=True,
            heap=args.heap,
        )
        try:
            bootstrap = info.bootstrap_servers
            load_s = load(bootstrap, args.size, args.load_timeout)
            print(f"loaded {args.size:,} entities in {load_s:.0f}s", file=sys.stderr)
            desired = work / "desired" / "quotas.yaml"
            changed = bd.write_desired(bootstrap, desired, TIMEOUT_MS)
            (work / "kquota.properties").write_text(KQUOTA_PROPERTIES)
            (work / "java.properties").write_text(JAVA_PROPERTIES)
            conf = ["--command-config", str(work / "kquota.properties"), "--timeout", "30m"]
            java_conf = ["--command-config", str(work / "java.properties")]
            kq = [sys.executable, "-m", "kquota.cli.main"]
            describe = [*configs, "--bootstrap-server", bootstrap, *java_conf, "--describe"]
            tools: dict[str, bd.Tool] = {
                "kquota plan (live)": (
                    [[*kq, "plan", str(desired.parent), "--bootstrap-server", bootstrap, *conf]],
                    bd.count_plan,
                ),
                "kafka-configs, every type": (
                    [[*describe, *(a for t in types for a in ("--entity-type", t))]
                     for types in bd.CONFIGS_ENTITY_TYPES],
                    bd.count_kafka_configs,
                ),
                "kquota describe": (
                    [[*kq, "describe", "--bootstrap-server", bootstrap, *conf, "--format", "json"]],
                    bd.count_kquota,
                ),
                "java describe-all": ([[*java_cmd, bootstrap, str(TIMEOUT_MS)]], bd.count_lines),
            }  # fmt: skip
            loads: list[str] = []
            results = bd.measure_all(tools, args.reps, work, after_round=loads.append)
        finally:
            stop_broker(broker_dir)
    report = render(args, load_s, changed, results, loads)
    args.out.write_text(report)
    print(report)


def render(
    args: argparse.Namespace,
    load_s: float,
    changed: int,
    results: dict[str, bd.Measured],
    loads: list[str],
) -> str:
    total = args.size + len(DEFAULTS)
    plan, configs = results["kquota plan (live)"], results["kafka-configs, every type"]
    describe, java = results["kquota describe"], results["java describe-all"]
    lines = [
        f"## Live plan at {args.size:,} entities against Kafka's own tools (issue 22)",
        "",
        f"`python benchmarks/bench_plan_live.py`, Python {platform.python_version()}, "
        f"{platform.machine()}, {os.cpu_count()} CPUs, Kafka {bd.KAFKA_VERSION} dev broker on "
        f"loopback (KRaft, PLAINTEXT, `-Xmx{args.heap}`), holding {total:,} entities "
        f"({args.size:,} of the describe benchmark's mix and one of each of the "
        f"{len(DEFAULTS)} default shapes), loaded with kquota's chunked alter in "
        f"{load_s:.0f} s. Whole processes run round robin, {args.reps} rounds: median wall "
        "and CPU (user+sys), largest peak RSS, from `/usr/bin/time`. Load average after "
        f"each round: {'; '.join(loads)} (a shared 2-core machine: walls are noisy, CPU "
        "less so).",
        "",
        f"- **kquota plan (live)**: `kquota plan DIR --bootstrap-server BS`, the desired YAML "
        f"holding every entity with {changed:,} changed: loads the YAML, describes the "
        "cluster, plans, prints the text plan (entities out = entities the plan changes).",
        "- **kafka-configs, every type**: `kafka-configs --describe` once per entity shape "
        "(`users`, `clients`, `users`+`clients`, `ips`; each shows that shape's default "
        f"entities too), `-Xmx{args.configs_heap}`; walls and CPU added, largest peak."
        + (
            ""
            if args.configs_heap == "256m"
            else " (With its script's `-Xmx256m` it ran out of heap, "
            "`java.lang.OutOfMemoryError`, describing the `users`+`clients` shape at 1M.)"
        ),
        "- **kquota describe**: `kquota describe --format json`.",
        "- **java describe-all**: `benchmarks/java` DescribeAll, Kafka's AdminClient "
        "`describeClientQuotas(ClientQuotaFilter.all())`, default JVM heap.",
        "",
        "| tool | entities out | wall | CPU | peak RSS |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, m in results.items():
        lines.append(
            f"| {name} | {m.entities:,} | {m.wall:.1f} s | {m.cpu:.1f} s | {m.rss_mib:.0f} MiB |"
        )
    lines += [
        "",
        f"kquota plan (live) / kafka-configs every type: wall {plan.wall / configs.wall:.2f}x, "
        f"CPU {plan.cpu / configs.cpu:.2f}x, peak RSS {plan.rss_mib / configs.rss_mib:.2f}x. "
        f"kquota describe / java describe-all: wall {describe.wall / java.wall:.2f}x, "
        f"CPU {describe.cpu / java.cpu:.2f}x, peak RSS {describe.rss_mib / java.rss_mib:.2f}x "
        "(below 1 = kquota is faster or smaller).",
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
