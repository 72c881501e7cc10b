"""Broker-cost benchmark (issue 34, part 4): what an apply costs the broker and its producers.

Starts a fresh dev broker (loopback, ``kquota dev-broker``'s launcher), pre-loads it with
``--preload`` entities over every quota level (:func:`preload`: users, users with a client id,
client ids, ip addresses, and the user, client-id, user+client-id and ip defaults), so the
broker's ``ClientQuotaManager`` already holds every quota type, then applies the same batch of
``--size`` new entities (``bench_apply``'s ``mixed`` shape) with each variant of
:func:`variants` in turn, ``--reps`` rounds, every other round in the reverse order:

- ``kquota apply`` with its default ``--batch-size`` and with each of ``--batch-sizes``
  (the desired YAML holds the pre-load too, so the plan is the batch alone);
- the Java peer (``benchmarks/java`` AlterAll, validate+commit+poll, 5,000-key chunks, every
  chunk in flight) in the batch's own order (the three entity shapes interleaved) and grouped
  by entity shape (every user, then every user+client-id, then every client-id): the order
  experiment (kquota commits in its plan's order, the entities sorted, which the benchmark
  cannot change without changing kquota).

During every run a steady producer (``benchmarks/steady_producer.py``: ``--rate`` messages a
second of 1 KiB, ``acks=all``) sends to a topic on the same broker, from before the tool's
launch to after its exit; its per-message latency (``produce()`` to the delivery callback)
gives p50, p99 and max per run. The same producer alone (no apply), before the first and after
the last run, gives the baseline and the broker's CPU per second for the producer alone.
Broker CPU is ``/proc/PID/stat`` of the broker's tree from the tool's launch to its exit
(``proctree.tree_cpu``); *net* subtracts the producer's rate alone (the baseline after the
runs) over the same wall.

The first run after the pre-load pays for the broker's trailing work on it (measured: 2.7-3.4 s
of broker CPU per 10k for whichever variant ran first, 1.2-2.3 s for every other run), so each
variant should run first in some run of the script (``--start-reversed`` makes the first round
the reverse order) and those runs be set aside when variants are compared.

After each run describe must show exactly the pre-load and the batch (bounded); then the batch
is removed and describe must show the pre-load alone. Neither is timed.

Usage: ``python benchmarks/bench_broker_cost.py [--size 50000] [--preload 20000] [--reps 2]
[--batch-sizes 1000,100000] [--rate 2000] [--start-reversed] [--no-grouped] [--out FILE]``.
Writes ``benchmarks/RESULTS-broker-cost.md`` (the runs of issue 34 are set together in
RESULTS-apply.md's issue 34 section). Bounded: at 50k about 8-11 minutes on a loaded machine.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from bench_apply import (  # noqa: E402
    CHUNK_KEYS,
    KAFKA_VERSION,
    MIXED,
    VERIFY_TIMEOUT,
    batch,
    build_java,
    measured_cpu,
    wait_for,
    warm_up,
    write_inputs,
)
from proctree import tree_cpu  # noqa: E402

from kquota.apply.applier import DEFAULT_BATCH_SIZE  # noqa: E402
from kquota.fleet.synth import write_desired_yaml  # noqa: E402
from kquota.kafka.admin import QuotaAlteration, QuotaOp, WireAdmin  # noqa: E402
from kquota.model import Entity, QuotaState  # noqa: E402

HERE = Path(__file__).resolve().parent
TOPIC = "steady"
BASELINE_SECONDS = 20.0
PRODUCER_START_TIMEOUT = 60.0
MIB = 1048576.0


# ---------------------------------------------------------------------------- the cluster


def preload(n: int) -> QuotaState:
    """preload is ``n`` entities over every quota level, deterministic; the defaults' rates
    are far above the steady producer's, so they never throttle it."""
    state: QuotaState = {
        Entity.of({"user": None}): {
            "producer_byte_rate": 100 * MIB,
            "consumer_byte_rate": 100 * MIB,
        },
        Entity.of({"client-id": None}): {"producer_byte_rate": 100 * MIB},
        Entity.of({"user": None, "client-id": None}): {"request_percentage": 400.0},
        Entity.of({"ip": None}): {"connection_creation_rate": 1000.0},
    }
    for i in range(n - len(state)):
        kind = i % 5
        if kind == 0:
            entity = Entity.of({"user": f"pre-user-{i:07d}"})
        elif kind == 1:
            entity = Entity.of({"user": f"pre-user-{i:07d}", "client-id": f"pre-app-{i % 41}"})
        elif kind == 2:
            entity = Entity.of({"user": f"pre-user-{i:07d}", "client-id": None})
        elif kind == 3:
            entity = Entity.of({"client-id": f"pre-client-{i:07d}"})
        else:
            entity = Entity.of({"ip": f"10.{i >> 16 & 255}.{i >> 8 & 255}.{i & 255}"})
            state[entity] = {"connection_creation_rate": float(10 + i % 50)}
            continue
        state[entity] = {"producer_byte_rate": MIB * (1 + i % 64)}
        if i % 3 == 0:
            state[entity]["consumer_byte_rate"] = 2 * MIB * (1 + i % 32)
    return state


def shape_rank(entity: Entity) -> int:
    """shape_rank: user 0, user+client-id 1, client-id 2 (the batch's three shapes)."""
    types = tuple(t for t, _ in entity.parts)
    return {("user",): 0, ("user", "client-id"): 1}.get(types, 2)


def write_all(admin: WireAdmin, state: QuotaState) -> None:
    """write_all sets every key of ``state`` (chunked by the admin), failing on any error."""
    sets = [
        QuotaAlteration(e, tuple(QuotaOp.set(k, v) for k, v in sorted(vals.items())))
        for e, vals in state.items()
    ]
    failed = [r for r in admin.alter(sets, validate_only=False) if not r.ok]
    if failed:
        raise SystemExit(f"pre-load failed for {len(failed):,} entities, e.g. {failed[0]}")


def remove_batch(admin: WireAdmin, batch_state: QuotaState, left: QuotaState) -> None:
    """remove_batch removes every key of the batch and waits until the cluster shows ``left``."""
    removals = [
        QuotaAlteration(e, tuple(QuotaOp.delete(k) for k in sorted(v)))
        for e, v in batch_state.items()
    ]
    failed = [r for r in admin.alter(removals, validate_only=False) if not r.ok]
    if failed:
        raise SystemExit(f"clean-up failed for {len(failed):,} entities, e.g. {failed[0]}")
    wait_for(admin, left, "clean-up")


def create_topic(bootstrap: str) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]

    admin = AdminClient({"bootstrap.servers": bootstrap})  # kept alive until answered
    futures = admin.create_topics([NewTopic(TOPIC, num_partitions=1, replication_factor=1)])
    for future in futures.values():
        future.result(timeout=60)


# ---------------------------------------------------------------------------- the producer


@dataclass
class Latency:
    count: int
    failed: int
    p50: float
    p99: float
    max: float
    rate: float


class SteadyProducer:
    """SteadyProducer runs steady_producer.py from ``start`` (returns once it delivers) to
    ``stop`` (returns its latencies)."""

    def __init__(self, bootstrap: str, rate: int, log: Path) -> None:
        self.cmd = [
            sys.executable, str(HERE / "steady_producer.py"), "--bootstrap-server", bootstrap,
            "--topic", TOPIC, "--rate", str(rate),
        ]  # fmt: skip
        self.proc: subprocess.Popen[str] | None = None
        self.log = log

    def start(self) -> None:
        # stderr to a file, not a pipe: nobody reads a pipe after "ready", and librdkafka's
        # logs could fill it and stall the producer.
        with self.log.open("w") as log:
            self.proc = subprocess.Popen(self.cmd, stdout=subprocess.PIPE, stderr=log, text=True)
        deadline = time.monotonic() + PRODUCER_START_TIMEOUT
        while True:
            if "ready" in self.log.read_text().split():
                break
            if time.monotonic() > deadline or self.proc.poll() is not None:
                self.proc.kill()
                raise SystemExit("the steady producer did not deliver its first message")
            time.sleep(0.05)
        time.sleep(1.0)  # past the connection's first round trips

    def stop(self) -> Latency:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGTERM)
        out, _ = self.proc.communicate(timeout=120)
        err = self.log.read_text()
        if self.proc.returncode != 0:
            raise SystemExit(f"the steady producer failed ({self.proc.returncode}):\n{err}")
        got = json.loads(out.strip().splitlines()[-1])
        if got["failed"] or got["undelivered"]:
            raise SystemExit(f"the steady producer lost messages: {got}")
        return Latency(got["count"], got["failed"], got["p50"], got["p99"], got["max"], got["rate"])


# ---------------------------------------------------------------------------- runs


@dataclass
class Run:
    variant: str
    rep: int
    wall: float
    cpu: float
    broker_cpu: float
    latency: Latency
    load: tuple[float, float, float]


@dataclass
class Baseline:
    when: str
    latency: Latency
    broker_cpu_per_s: float
    load: tuple[float, float, float]


@dataclass
class Results:
    runs: list[Run] = field(default_factory=list)
    baselines: list[Baseline] = field(default_factory=list)


KQUOTA = "kquota apply"
PEER = "java peer, batch order (shapes interleaved)"
PEER_GROUPED = "java peer, grouped by shape"


def variants(
    yaml_dir: Path, tsv: Path, grouped_tsv: Path, java_cmd: list[str], bootstrap: str,
    batch_sizes: list[int],
) -> dict[str, list[str]]:  # fmt: skip
    kquota = [
        sys.executable, "-m", "kquota.cli.main", "apply", str(yaml_dir),
        "--bootstrap-server", bootstrap, "--auto-approve", "--verify-timeout", VERIFY_TIMEOUT,
    ]  # fmt: skip
    out = {f"{KQUOTA} (--batch-size {DEFAULT_BATCH_SIZE:,}, the default)": kquota}
    for n in batch_sizes:
        out[f"{KQUOTA} --batch-size {n:,}"] = [*kquota, "--batch-size", str(n)]
    for name, path in ((PEER, tsv), (PEER_GROUPED, grouped_tsv)):
        out[name] = [*java_cmd, bootstrap, str(path), "validate-commit-poll", str(CHUNK_KEYS)]
    return out


def baseline(producer: SteadyProducer, broker_pid: int, when: str) -> Baseline:
    producer.start()
    before, began = tree_cpu(broker_pid), time.monotonic()
    time.sleep(BASELINE_SECONDS)
    cpu, seconds = tree_cpu(broker_pid) - before, time.monotonic() - began
    latency = producer.stop()
    got = Baseline(when, latency, cpu / seconds, os.getloadavg())
    print(f"  baseline {when}: p99 {latency.p99:.1f} ms, broker {got.broker_cpu_per_s:.3f} "
          f"CPU s/s, load {_load(got.load)}", file=sys.stderr)  # fmt: skip
    return got


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--size", type=int, default=50_000)
    parser.add_argument("--preload", type=int, default=20_000)
    parser.add_argument("--reps", type=int, default=2)
    parser.add_argument("--rate", type=int, default=2000)
    parser.add_argument(
        "--batch-sizes",
        type=lambda v: [int(n) for n in v.split(",") if n],
        default=[1000, 100_000],
    )
    parser.add_argument("--out", type=Path, default=HERE / "RESULTS-broker-cost.md")
    parser.add_argument(
        "--start-reversed", action="store_true", help="the first round in the reverse order"
    )
    parser.add_argument("--no-grouped", action="store_true", help=f"leave out {PEER_GROUPED}")
    args = parser.parse_args()

    from kquota.devbroker.launcher import start_broker, stop_broker
    from kquota.operations.topics import create_topics, lease_spec
    from kquota.target import Target

    java_cmd = build_java()
    results = Results()
    began = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="kquota-bench-broker-cost-") as tmp:
        work = Path(tmp)
        broker_dir = work / "broker"
        pre = preload(args.preload)
        new = batch(args.size, MIXED)
        yaml_dir, tsv = write_inputs(new, work / "batch")
        write_desired_yaml({**pre, **new}, yaml_dir / "quotas.yaml")  # the plan: the batch
        grouped = dict(sorted(new.items(), key=lambda kv: shape_rank(kv[0])))
        _, grouped_tsv = write_inputs(grouped, work / "grouped")
        try:
            info = start_broker(
                broker_dir, kafka_version=KAFKA_VERSION, fresh=True, die_with_parent=True
            )
            bootstrap = info.bootstrap_servers
            create_topics(Target(bootstrap_server=bootstrap), [lease_spec()], 120)
            create_topic(bootstrap)
            warm_up(bootstrap)  # before the pre-load: no timed run meets a cold broker
            producer = SteadyProducer(bootstrap, args.rate, work / "producer.log")
            with WireAdmin(bootstrap) as admin:
                write_all(admin, pre)
                wait_for(admin, pre, "pre-load")
                print(f"pre-loaded {len(pre):,} entities", file=sys.stderr)
                results.baselines.append(baseline(producer, info.pid, "before the runs"))
                tools = variants(yaml_dir, tsv, grouped_tsv, java_cmd, bootstrap, args.batch_sizes)
                if args.no_grouped:
                    del tools[PEER_GROUPED]
                expected = {**pre, **new}
                for rep in range(args.reps):
                    order = list(tools.items())
                    for name, cmd in order if (rep + args.start_reversed) % 2 == 0 else order[::-1]:
                        producer.start()
                        broker_before = tree_cpu(info.pid)
                        wall, _, _, cpu = measured_cpu(cmd)
                        broker = tree_cpu(info.pid) - broker_before
                        latency = producer.stop()
                        run = Run(name, rep + 1, wall, cpu, broker, latency, os.getloadavg())
                        results.runs.append(run)
                        print(f"  {name} #{rep + 1}: {wall:.2f}s, broker {broker:.2f}s CPU, "
                              f"p50 {latency.p50:.1f} p99 {latency.p99:.1f} max "
                              f"{latency.max:.1f} ms, load {_load(run.load)}",
                              file=sys.stderr)  # fmt: skip
                        wait_for(admin, expected, f"{name} #{rep + 1}")
                        remove_batch(admin, new, pre)
                results.baselines.append(baseline(producer, info.pid, "after the runs"))
        finally:
            stop_broker(broker_dir)
    report = render(results, args, len(pre), sum(len(v) for v in new.values()),
                    time.monotonic() - began)  # fmt: skip
    args.out.write_text(report)
    print(report)


def _load(avg: tuple[float, float, float]) -> str:
    return " / ".join(f"{x:.2f}" for x in avg)


def render(
    results: Results, args: argparse.Namespace, preloaded: int, keys: int, elapsed: float
) -> str:
    # The baseline after the runs: the one before them still carries the broker's trailing
    # work on the pre-load (its CPU per second there was 2-4 times the one after).
    producer_rate = results.baselines[-1].broker_cpu_per_s
    lines = [
        "## The broker's cost of an apply on a pre-loaded cluster (issue 34, part 4)",
        "",
        f"`python benchmarks/bench_broker_cost.py --size {args.size} --preload {args.preload} "
        f"--reps {args.reps} --batch-sizes {','.join(str(n) for n in args.batch_sizes)} "
        f"--rate {args.rate}`, Python {platform.python_version()}, {platform.machine()}, "
        f"{os.cpu_count()} CPUs, Kafka {KAFKA_VERSION} dev broker (KRaft, combined, "
        f"PLAINTEXT, loopback, 768 MiB heap) sharing the machine with the tools; took "
        f"{elapsed:.0f} s. The cluster holds {preloaded:,} entities over every quota level "
        "before each run; each run applies the same "
        f"{args.size:,} new entities ({keys:,} keys, `mixed` shape), then they are removed "
        f"again (not timed). A steady producer ({args.rate:,} msgs/s of 1 KiB, acks=all) runs "
        "from before each tool's launch to after its exit. Rounds alternate the order.",
        "",
        "| variant | round | wall | tool CPU | broker CPU | broker CPU / 10k | net of producer "
        "/ 10k | p50 | p99 | max | load (1/5/15) after |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for b in results.baselines:
        lines.append(
            f"| producer alone, {b.when} | | {BASELINE_SECONDS:.0f} s | | "
            f"{b.broker_cpu_per_s:.3f} s/s | | | {b.latency.p50:.1f} ms | {b.latency.p99:.1f} ms "
            f"| {b.latency.max:.1f} ms | {_load(b.load)} |"
        )
    per10k = 10_000 / args.size
    for r in sorted(
        results.runs,
        key=lambda r: (
            list(dict.fromkeys(x.variant for x in results.runs)).index(r.variant),
            r.rep,
        ),
    ):
        net = r.broker_cpu - producer_rate * r.wall
        lines.append(
            f"| {r.variant} | {r.rep} | {r.wall:.2f} s | {r.cpu:.2f} s | {r.broker_cpu:.2f} s "
            f"| {r.broker_cpu * per10k:.2f} s | {net * per10k:.2f} s | {r.latency.p50:.1f} ms "
            f"| {r.latency.p99:.1f} ms | {r.latency.max:.1f} ms | {_load(r.load)} |"
        )
    lines += ["", "Medians per variant:", ""]
    lines += [
        "| variant | broker CPU / 10k | net / 10k | p99 | wall |",
        "|---|---:|---:|---:|---:|",
    ]
    for name in dict.fromkeys(r.variant for r in results.runs):
        mine = [r for r in results.runs if r.variant == name]
        b = statistics.median(r.broker_cpu for r in mine) * per10k
        n = statistics.median(r.broker_cpu - producer_rate * r.wall for r in mine) * per10k
        p99 = statistics.median(r.latency.p99 for r in mine)
        wall = statistics.median(r.wall for r in mine)
        lines.append(f"| {name} | {b:.2f} s | {n:.2f} s | {p99:.1f} ms | {wall:.2f} s |")
    lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
