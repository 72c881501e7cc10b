"""Apply benchmark: ``kquota apply`` against Kafka's Java AdminClient on the same broker.

Starts a fresh dev broker (loopback, ``kquota dev-broker``'s launcher) and, for 10,000 and
then 100,000 alterations, generates one deterministic batch of new entities in each shape of
:data:`SHAPES` (``mixed``: user, user+client-id and client-id entities, 1-2 keys each, where
the broker's work dominates; ``users``: one user and one key each, where the client's does)
twice: as desired-state YAML for kquota and as a TSV file for the Java program. Each tool then
applies the whole batch as a separate process, on a cluster that holds no quota at all:

- ``kquota``: ``kquota apply DIR --bootstrap-server BS --auto-approve``: loads the YAML,
  connects, takes the apply lease, describes the cluster and plans, prints the plan, sends a
  validate-only pass over every alteration, commits (in apply's batches, each chunked below
  the controller's limit), then describes until every broker shows every change
  (verification), and releases the lease;
- ``java validate+commit+poll`` (the peer, issue 22): ``benchmarks/java`` AlterAll,
  ``Admin.alterClientQuotas`` with ``validateOnly(true)`` over every chunk of at most 5,000
  changed keys (the AdminClient sends one request per call and the controller fails every
  entry of a request changing more than 10,000 keys), all chunks submitted at once, then the
  same chunks committed, then describe-all every 100 ms until every entity shows its values;
- ``java validate+commit+verify``: the same two passes, then the wait kquota's verification
  used when issue 12 was measured (the last entity written by an exact filter, 20 ms doubling
  to 250 ms apart, then describe-all 250 ms apart until all show): the peer BENCHMARKS.md's
  1.28x was measured against, kept to show where that figure came from.

Both tools report their own phases: kquota through ``KQUOTA_PHASE_TIMES``
(``kquota.runtime.timings``: every progress phase plus the lease, the plan and the render, in
epoch seconds), AlterAll through its ``phase NAME START END`` lines; the benchmark sets them
against the process's launch and exit. Every run is checked afterwards (describe until the
cluster shows exactly the batch, bounded), then every entity is removed again with kquota's
alter; checks and removal are not timed. Wall time and peak RSS of each process tree come from
``proctree.run_measured``, its CPU time from ``getrusage`` (the process and the children it
waited for), and the broker's CPU time from launch to exit from ``/proc/PID/stat``
(``proctree.tree_cpu``): what the same writes cost the broker, by tool (issue 34, part 4).

Usage: ``python benchmarks/bench_apply.py [--sizes 10000,100000] [--shapes mixed,users]
[--reps 3] [--out FILE]``
(each tool runs ``--reps`` times per size, round robin; median wall, largest RSS, median of
each phase); by default it first waits (polling every 30 s, up to 40 minutes) until no
``bench_fleet.py`` runs. Writes ``benchmarks/RESULTS-apply.md``. Bounded: the whole run takes
a few minutes.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import javapeer  # noqa: E402
from proctree import run_measured, tree_cpu  # noqa: E402

from kquota.apply.applier import DEFAULT_BATCH_SIZE  # noqa: E402
from kquota.kafka.admin import QuotaAlteration, QuotaOp, WireAdmin  # noqa: E402
from kquota.model import Entity, QuotaState  # noqa: E402

HERE = Path(__file__).resolve().parent
KAFKA_VERSION = "4.3.1"
CHUNK_KEYS = 5000  # as kquota.kafka.admin.DEFAULT_CHUNK_KEYS
CONTROLLER_MAX_KEYS = 10_000  # the controller's MAX_RECORDS_PER_USER_OP
TOOL_TIMEOUT = 600.0
SETTLE_TIMEOUT = 600.0  # a loaded machine's broker can trail its controller by minutes
VERIFY_TIMEOUT = "300"  # kquota apply's --verify-timeout, for the same reason
IDLE_POLL = 30.0
IDLE_MAX = 40 * 60.0
BUSY_PATTERN = "bench_fleet.py"


@dataclass
class Row:
    size: int
    tool: str
    wall: float
    rss_mib: float
    cpu: float
    broker_cpu: float


@dataclass
class SizeResult:
    shape: str
    size: int
    keys: int
    rows: list[Row] = field(default_factory=list)
    phases: dict[str, dict[str, tuple[float, float, float]]] = field(default_factory=dict)


# ---------------------------------------------------------------------------- the batch


MIXED, USERS = "mixed", "users"
SHAPES = {
    MIXED: "a third user, a third user+client-id, a third client-id; 1-2 keys each: the "
    "broker's quota replay dominates",
    USERS: "every entity a user, one key each (`producer_byte_rate`): the broker is cheap and "
    "the client's own work shows (issue 34, part 2)",
}


def batch(size: int, shape: str = MIXED) -> QuotaState:
    """batch is ``size`` distinct entities of ``shape`` (:data:`SHAPES`), the same for every
    call: for ``mixed``, 1-2 keys each."""
    state: QuotaState = {}
    if shape == USERS:
        for i in range(size):
            user = Entity.of({"user": f"apply-user-{i:07d}"})
            state[user] = {"producer_byte_rate": float(1048576 * (1 + i % 64))}
        return state
    for i in range(size):
        kind = i % 3
        if kind == 0:
            entity = Entity.of({"user": f"apply-user-{i:07d}"})
        elif kind == 1:
            entity = Entity.of({"user": f"apply-user-{i:07d}", "client-id": f"app-{i % 53}"})
        else:
            entity = Entity.of({"client-id": f"apply-client-{i:07d}"})
        values = {"producer_byte_rate": float(1048576 * (1 + i % 64))}
        if i % 2 == 0:
            values["consumer_byte_rate"] = float(2097152 * (1 + i % 32))
        if i % 5 == 0:
            values = {"request_percentage": 50.0 + i % 40 + 0.5}
        state[entity] = values
    return state


def write_inputs(state: QuotaState, work: Path) -> tuple[Path, Path]:
    """write_inputs writes the batch as kquota desired YAML (a directory) and as Java TSV."""
    from kquota.fleet.synth import write_desired_yaml

    yaml_dir = work / "quotas"
    yaml_dir.mkdir(parents=True, exist_ok=True)
    write_desired_yaml(state, yaml_dir / "quotas.yaml")
    tsv = work / "batch.tsv"
    with tsv.open("w") as out:
        for entity, values in state.items():
            parts = ";".join(f"{t}={n}" for t, n in entity.parts)
            ops = ";".join(f"{k}={v!r}" for k, v in values.items())
            out.write(f"{parts}\t{ops}\n")
    return yaml_dir, tsv


# ---------------------------------------------------------------------------- cluster checks


def wait_for(admin: WireAdmin, expected: QuotaState, what: str) -> None:
    """wait_for polls describe-all until the cluster shows exactly ``expected``, or fails."""
    deadline = time.monotonic() + SETTLE_TIMEOUT
    while True:
        current = admin.describe_all()
        if current == expected:
            return
        if time.monotonic() > deadline:
            missing = sum(1 for e, v in expected.items() if current.get(e) != v)
            extra = sum(1 for e in current if e not in expected)
            raise SystemExit(
                f"{what}: the cluster shows {len(current):,} entities, expected "
                f"{len(expected):,} ({missing:,} missing or different, {extra:,} unexpected)"
            )
        time.sleep(0.5)


def clear(admin: WireAdmin, state: QuotaState) -> None:
    """clear removes every key of ``state``'s entities and waits until none is left."""
    removals = [
        QuotaAlteration(e, tuple(QuotaOp.delete(k) for k in sorted(v))) for e, v in state.items()
    ]
    failed = [r for r in admin.alter(removals, validate_only=False) if not r.ok]
    if failed:
        raise SystemExit(f"clean-up failed for {len(failed):,} entities, e.g. {failed[0]}")
    wait_for(admin, {}, "clean-up")


# ---------------------------------------------------------------------------- processes


def build_java() -> list[str]:
    """build_java compiles benchmarks/java into the cache; returns AlterAll's command prefix."""
    return javapeer.build_java("kquota.bench.AlterAll", "bench-apply-java", KAFKA_VERSION)


def measured(
    cmd: list[str], *, expect_ok: bool = True, env: dict[str, str] | None = None
) -> tuple[float, float, str]:
    """measured runs ``cmd``; returns (wall seconds, peak RSS MiB of the tree, its output)."""
    wall, rss, output, _ = measured_cpu(cmd, expect_ok=expect_ok, env=env)
    return wall, rss, output


def measured_cpu(
    cmd: list[str], *, expect_ok: bool = True, env: dict[str, str] | None = None
) -> tuple[float, float, str, float]:
    """measured_cpu is :func:`measured` plus the CPU seconds (user and system) the process
    and every child it waited for used: robust where the machine's load skews the wall."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall, rss, proc = run_measured(cmd, timeout=TOOL_TIMEOUT, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    output = proc.stdout + proc.stderr
    if expect_ok and proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd[:4])}… failed ({proc.returncode}):\n{output[-3000:]}")
    return wall, rss, output, cpu


def wait_until_idle(pattern: str) -> float:
    """wait_until_idle polls until no process matches ``pattern``; returns seconds waited."""
    began = time.monotonic()
    while subprocess.run(["pgrep", "-f", pattern], capture_output=True).returncode == 0:
        waited = time.monotonic() - began
        if waited > IDLE_MAX:
            raise SystemExit(f"{pattern} still running after {waited / 60:.0f} minutes")
        print(f"waiting for {pattern} to finish ({waited:.0f}s)", file=sys.stderr)
        time.sleep(IDLE_POLL)
    return time.monotonic() - began


# ---------------------------------------------------------------------------- phases

# Rows of the phase table: (row, kquota's spans, AlterAll's phases). A row's time is from the
# first span's start to the last one's end; kquota's spans may overlap other rows (steps run
# at once show their own clocks).
PHASE_ROWS: list[tuple[str, tuple[str, ...], tuple[str, ...]]] = [
    ("start-up (launch to the first step)", (), ()),
    ("read the input (YAML: load and check; Java: the TSV)", ("load",), ("read_the_batch",)),
    ("connect (Java: create the AdminClient)", ("connect",), ("create_the_AdminClient",)),
    ("apply lease", ("lease",), ()),
    ("describe-all before", ("describe",), ()),
    ("plan", ("plan",), ()),
    ("render the plan", ("render",), ()),
    ("validate-only pass", ("validate-only",), ("validate-only_pass",)),
    ("commit pass", ("commit",), ("commit_pass",)),
    ("verify (until every write shows)", ("verify",), ("verify",)),
    ("lease release", ("lease release",), ()),
    ("exit (the last step's end to the process's end)", (), ()),
]
FIRST, LAST = PHASE_ROWS[0][0], PHASE_ROWS[-1][0]


Span = tuple[str, float, float, float]
"""A step's name, start and end (epoch seconds) and the process's CPU seconds in it."""


def kquota_spans(path: Path) -> list[Span]:
    """kquota_spans reads ``KQUOTA_PHASE_TIMES``'s file."""
    spans = []
    for line in path.read_text().splitlines():
        name, start, end, cpu = line.split("\t")
        spans.append((name, float(start), float(end), float(cpu)))
    return spans


def java_spans(output: str) -> list[Span]:
    """java_spans reads AlterAll's ``phase NAME START END`` lines (epoch milliseconds; no
    CPU time)."""
    spans = []
    for line in output.splitlines():
        if line.startswith("phase "):
            _, name, start, end = line.split()
            spans.append((name, int(start) / 1000, int(end) / 1000, 0.0))
    return spans


Times = tuple[float, float, float]
"""A table row's start after the launch, its seconds and its CPU seconds."""


def phase_times(spans: list[Span], launched: float, wall: float, java: bool) -> dict[str, Times]:
    """phase_times is each table row's times for one run."""
    rows: dict[str, Times] = {}
    steps = [sp for sp in spans if sp[0] != "jvm_start-up"]
    if not steps:
        return rows
    first = min(sp[1] for sp in steps)
    last = max(sp[2] for sp in steps)
    rows[FIRST] = (0.0, first - launched, 0.0)
    for row, ours, theirs in PHASE_ROWS[1:-1]:
        names = theirs if java else ours
        hits = [sp for sp in spans if sp[0] in names]
        if hits:
            st, en = min(h[1] for h in hits), max(h[2] for h in hits)
            rows[row] = (st - launched, en - st, sum(h[3] for h in hits))
    rows[LAST] = (last - launched, launched + wall - last, 0.0)
    return rows


def median_phases(runs: list[dict[str, Times]]) -> dict[str, Times]:
    """median_phases: per row, the median of each time over the runs."""
    out = {}
    for row, _, _ in PHASE_ROWS:
        got = [r[row] for r in runs if row in r]
        if got:
            out[row] = (
                statistics.median(g[0] for g in got),
                statistics.median(g[1] for g in got),
                statistics.median(g[2] for g in got),
            )
    return out


# ---------------------------------------------------------------------------- main


KQUOTA = "kquota apply"
PEER = "java validate+commit+poll"
OLD_PEER = "java validate+commit+verify"


def bench_size(
    shape: str,
    size: int,
    bootstrap: str,
    broker_pid: int,
    java_cmd: list[str],
    work: Path,
    args: argparse.Namespace,
) -> SizeResult:
    state = batch(size, shape)
    keys = sum(len(v) for v in state.values())
    yaml_dir, tsv = write_inputs(state, work / f"{shape}-n{size}")
    times = work / f"phases-{shape}-{size}.tsv"
    result = SizeResult(shape, size, keys)
    tools: dict[str, list[str]] = {
        KQUOTA: [
            sys.executable, "-m", "kquota.cli.main", "apply", str(yaml_dir),
            "--bootstrap-server", bootstrap, "--auto-approve", "--verify-timeout", VERIFY_TIMEOUT,
        ],
        PEER: [*java_cmd, bootstrap, str(tsv), "validate-commit-poll", str(CHUNK_KEYS)],
        OLD_PEER: [*java_cmd, bootstrap, str(tsv), "validate-commit-verify", str(CHUNK_KEYS)],
    }  # fmt: skip
    if args.no_old_peer:
        del tools[OLD_PEER]
    for n in args.batch_sizes:  # apply's commit batches: what their size costs the broker
        tools[f"{KQUOTA} --batch-size {n:,}"] = [*tools[KQUOTA], "--batch-size", str(n)]
    envs: dict[str, dict[str, str]] = {}
    for label, src in args.baseline:  # another kquota (a checkout's src), in the same sitting
        tools[f"{KQUOTA} ({label})"] = tools[KQUOTA]
        envs[f"{KQUOTA} ({label})"] = {"PYTHONPATH": src}
    walls: dict[str, list[float]] = {name: [] for name in tools}
    rsss: dict[str, list[float]] = {name: [] for name in tools}
    cpus: dict[str, list[float]] = {name: [] for name in tools}
    broker: dict[str, list[float]] = {name: [] for name in tools}
    phases: dict[str, list[dict[str, Times]]] = {name: [] for name in tools}
    env = dict(os.environ, KQUOTA_PHASE_TIMES=str(times))
    with WireAdmin(bootstrap) as admin:
        wait_for(admin, {}, "before the runs")
        for rep in range(args.reps):  # round robin: drift in the machine's load hits all tools
            # Every other round backwards: no tool always follows the clean-up's removals,
            # whose tail (the broker's garbage) would count in its broker CPU.
            order = list(tools.items())
            for name, cmd in order if rep % 2 == 0 else order[::-1]:
                times.unlink(missing_ok=True)
                launched = time.time()
                broker_before = tree_cpu(broker_pid)
                wall, rss, output, cpu = measured_cpu(cmd, env={**env, **envs.get(name, {})})
                # The broker's CPU from launch to exit: its replay of the quota records
                # trails the commit, so a tool that stops at "shows" has seen it all.
                broker[name].append(tree_cpu(broker_pid) - broker_before)
                cpus[name].append(cpu)
                ours = name.startswith(KQUOTA)
                spans = kquota_spans(times) if ours else java_spans(output)
                phases[name].append(phase_times(spans, launched, wall, java=not ours))
                wait_for(admin, state, f"{name} at {size:,}")
                walls[name].append(wall)
                rsss[name].append(rss)
                print(f"  {shape} {size:,} {name} #{rep + 1}: {wall:.2f}s {cpu:.2f}s CPU "
                      f"broker {broker[name][-1]:.2f}s CPU {rss:.0f} MiB (verified) "
                      f"load {_load(os.getloadavg())}", file=sys.stderr)  # fmt: skip
                clear(admin, state)
    for name in tools:
        result.rows.append(
            Row(
                size,
                name,
                statistics.median(walls[name]),
                max(rsss[name]),
                statistics.median(cpus[name]),
                statistics.median(broker[name]),
            )
        )
        result.phases[name] = median_phases(phases[name])
    return result


def unchunked_probe(bootstrap: str, java_cmd: list[str], size: int, work: Path) -> str:
    """unchunked_probe commits a batch with ONE alterClientQuotas call (no chunking) and says
    what happened; whatever it wrote is removed again."""
    state = batch(size)
    keys = sum(len(v) for v in state.values())
    if keys <= CONTROLLER_MAX_KEYS:
        return f"not run ({keys:,} keys is below the controller's limit)"
    _, tsv = write_inputs(state, work / "probe")
    _, _, output = measured([*java_cmd, bootstrap, str(tsv), "commit", "0"], expect_ok=False)
    lines = output.splitlines()
    summary = next((ln for ln in lines if ln.startswith("committed=")), lines[-1] if lines else "")
    first = next((ln.split(": ", 1)[-1] for ln in lines if ln.startswith("failed ")), "")
    with WireAdmin(bootstrap) as admin:
        time.sleep(2.0)  # let a commit, if any, show
        left = admin.describe_all()
        if left:
            clear(admin, left)
    result = f"{size:,} entities ({keys:,} keys) in one call: `{summary}`"
    if first:
        result += f", e.g. `{first}`"
    return result + f"; {len(left):,} entities written"


def warm_up(bootstrap: str) -> None:
    """warm_up alters and removes a small batch so no timed run meets a cold broker."""
    state = {Entity.of({"user": f"warm-{e.parts[-1][1]}"}): v for e, v in batch(2000).items()}
    with WireAdmin(bootstrap) as admin:
        admin.alter([QuotaAlteration(e, tuple(QuotaOp.set(k, x) for k, x in v.items()))
                     for e, v in state.items()], validate_only=False)  # fmt: skip
        wait_for(admin, state, "warm-up")
        clear(admin, state)


def startup(java_cmd: list[str], bootstrap: str, work: Path) -> dict[str, tuple[float, float]]:
    """startup times each tool with nothing to apply: the fixed cost under every row."""
    empty = work / "empty"
    empty.mkdir()
    (empty / "quotas.yaml").write_text("apiVersion: kquota/v1\nkind: ClientQuotas\nquotas: []\n")
    (empty / "batch.tsv").write_text("")
    kq = measured(
        [sys.executable, "-m", "kquota.cli.main", "apply", str(empty),
         "--bootstrap-server", bootstrap, "--auto-approve"]
    )  # fmt: skip
    java = measured([*java_cmd, bootstrap, str(empty / "batch.tsv"), "commit"])
    return {
        "kquota apply, empty desired state (start-up, imports, connect, describe, "
        "'nothing to apply')": kq[:2],
        "java AlterAll, empty batch (JVM start-up, AdminClient created, no request)": java[:2],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--shapes", default=f"{MIXED},{USERS}", help=f"of {', '.join(SHAPES)}")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--out", type=Path, default=HERE / "RESULTS-apply.md")
    parser.add_argument("--no-wait", action="store_true", help="do not wait for bench_fleet.py")
    parser.add_argument("--probe-size", type=int, help="entities for the unchunked probe")
    parser.add_argument(
        "--batch-sizes",
        type=lambda v: [int(n) for n in v.split(",")],
        default=[],
        help="also kquota apply with each of these --batch-size values",
    )
    parser.add_argument("--no-old-peer", action="store_true", help=f"leave out {OLD_PEER}")
    parser.add_argument(
        "--baseline",
        type=lambda v: tuple(v.split("=", 1)),
        action="append",
        default=[],
        metavar="LABEL=SRC",
        help="also kquota apply from another checkout's src (PYTHONPATH), e.g. main=../main/src",
    )
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]

    from kquota.devbroker.launcher import start_broker, stop_broker
    from kquota.operations.topics import create_topics, lease_spec
    from kquota.target import Target

    java_cmd = build_java()
    waited = 0.0 if args.no_wait else wait_until_idle(BUSY_PATTERN)
    load_before = os.getloadavg()
    began = time.monotonic()
    results: list[SizeResult] = []
    with tempfile.TemporaryDirectory(prefix="kquota-bench-apply-") as tmp:
        work = Path(tmp)
        broker_dir = work / "broker"
        try:
            info = start_broker(
                broker_dir, kafka_version=KAFKA_VERSION, fresh=True, die_with_parent=True
            )
            bootstrap = info.bootstrap_servers
            # The lease topic, made once as an operator makes it: apply never creates it.
            create_topics(Target(bootstrap_server=bootstrap), [lease_spec()], 120)
            fixed = startup(java_cmd, bootstrap, work)
            warm_up(bootstrap)
            probe = unchunked_probe(bootstrap, java_cmd, args.probe_size or sizes[0], work)
            print(f"unchunked probe: {probe}", file=sys.stderr)
            for size in sizes:
                for shape in args.shapes.split(","):
                    results.append(
                        bench_size(shape, size, bootstrap, info.pid, java_cmd, work, args)
                    )
        finally:
            stop_broker(broker_dir)
    report = render(
        results,
        fixed,
        probe,
        load_before,
        os.getloadavg(),
        time.monotonic() - began,
        waited,
        args.reps,
    )
    args.out.write_text(report)
    print(report)


def _load(avg: tuple[float, float, float]) -> str:
    return " / ".join(f"{x:.2f}" for x in avg)


def render(
    results: list[SizeResult],
    fixed: dict[str, tuple[float, float]],
    probe: str,
    load_before: tuple[float, float, float],
    load_after: tuple[float, float, float],
    elapsed: float,
    waited: float,
    reps: int,
) -> str:
    lines = [
        "## Apply against a live broker (issues 5, 22 and 34)",
        "",
        f"`python benchmarks/bench_apply.py`, Python {platform.python_version()}, "
        f"{platform.machine()}, {os.cpu_count()} CPUs, Kafka {KAFKA_VERSION} dev broker "
        "(KRaft, combined broker+controller, PLAINTEXT, loopback, 768 MiB heap) sharing the "
        "machine with the tools. One run of the script, one broker; each tool runs as a "
        f"separate process, {reps} times per size (round robin over the tools, every other "
        "round in the reverse order); wall time "
        "(median) and peak RSS of the process tree (largest; sampled every 100 ms, "
        "`benchmarks/proctree.py`). Ratios are tool / the peer, java validate+commit+poll "
        "(above 1 = slower or larger than the peer). Load average (1/5/15 min) before the "
        f"timed runs {_load(load_before)}, after {_load(load_after)}; the script waited "
        f"{waited:.0f} s for `bench_fleet.py` to finish first and then took {elapsed:.0f} s.",
        "",
        "Every run applies the same batch of new entities, in one of two shapes, to a "
        "cluster holding no quota: "
        + "; ".join(f"**{name}**: {what}" for name, what in SHAPES.items())
        + ". Afterwards describe must show exactly the batch (polled, bounded: a run that applied "
        "nothing fails the script), then the entities are removed again. Checks and removal "
        "are not timed.",
        "",
        f"- **{KQUOTA}**: `kquota apply DIR --bootstrap-server BS --auto-approve "
        f"--verify-timeout {VERIFY_TIMEOUT}` (the bound only matters when a loaded broker "
        "takes longer than the default 15 s to show 100k changes), apply lease included: "
        "loads the YAML, connects, takes the lease, describes the cluster, plans, prints the "
        "plan, validate-only pass over every alteration, commit in batches of "
        f"{DEFAULT_BATCH_SIZE:,} entities (each chunked to at most 5,000 keys per request), "
        "then describes until every broker shows every change, and releases the lease.",
        f"- **{PEER}** (the peer issue 22 names): `benchmarks/java` AlterAll, Kafka's "
        "AdminClient `alterClientQuotas` with `validateOnly(true)` over the whole batch split "
        "into calls of at most 5,000 changed keys (whole entities), all calls submitted at "
        "once, every entity's future checked (nothing committed if any fails); then the same "
        "calls committing; then describe-all every 100 ms until every entity shows its values. "
        "Default JVM settings. Chunking is needed: the AdminClient sends one "
        "AlterClientQuotas request per call and the controller fails every entry of a "
        f"request changing more than {CONTROLLER_MAX_KEYS:,} keys. Probe, one unchunked "
        f"call: {probe}.",
        f"- **{OLD_PEER}**: the same two passes, then the wait kquota's verification used "
        "when issue 12 was measured: the last entity written by an exact filter (20 ms "
        "doubling to 250 ms apart) until it shows, then describe-all 250 ms apart until all "
        "show. BENCHMARKS.md's earlier 1.28x was against this one.",
        "",
        "*CPU* is the CPU time (user and system) of the tool's process and every child it "
        "waited for (`getrusage`), robust where other work on the machine stretches the "
        "wall; *broker CPU* is the broker JVM's CPU time (`/proc/PID/stat`, its whole tree) "
        "from the tool's launch to its exit, also per 10,000 alterations: the broker's cost "
        "of the same writes (issue 34, part 4). Medians of the runs.",
        "",
        "| shape | alterations | keys | tool | wall | CPU | peak RSS | wall ratio | CPU ratio "
        "| RSS ratio | broker CPU | broker CPU / 10k |",
        "|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        base = next(row for row in r.rows if row.tool == PEER)
        for row in r.rows:
            lines.append(
                f"| {r.shape} | {r.size:,} | {r.keys:,} | {row.tool} | {row.wall:.2f} s "
                f"| {row.cpu:.2f} s | {row.rss_mib:.0f} MiB | {row.wall / base.wall:.2f}x "
                f"| {row.cpu / base.cpu:.2f}x | {row.rss_mib / base.rss_mib:.2f}x "
                f"| {row.broker_cpu:.2f} s | {row.broker_cpu / r.size * 10_000:.2f} s |"
            )
    lines += ["", "Fixed cost of each process (doing nothing):", ""]
    lines += [f"- {name}: {w:.2f} s, {rss:.0f} MiB" for name, (w, rss) in fixed.items()]
    lines += [
        "",
        "Where each process's time goes, from its own clock (kquota: `KQUOTA_PHASE_TIMES`, "
        "`kquota.runtime.timings`; AlterAll: its `phase` lines), set against the process's "
        "launch and exit: per step, when it began after the launch (*at*) and how long it "
        "took (*s*), "
        f"median of the {reps} runs above. Steps that run at once show overlapping clocks, "
        "so a column need not add up to the wall. kquota's *CPU s* is the CPU time its whole "
        "process used during the step (every thread): the rest of the step was waiting for "
        "the broker. The Java start-up row ends when AlterAll's "
        "`main` starts reading the batch (JVM start and class loading of the main class).",
    ]
    for r in results:
        ours, java, old = (r.phases.get(t, {}) for t in (KQUOTA, PEER, OLD_PEER))
        lines += [
            "",
            f"{r.size:,} alterations, {r.shape}:",
            "",
            f"| step | {KQUOTA} at | s | CPU s | {PEER} at | s | ratio | {OLD_PEER} at | s |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for step, _, _ in PHASE_ROWS:
            cells = []
            for tool in (ours, java, old):
                got = tool.get(step)
                cells += ["", ""] if got is None else [f"{got[0]:.2f}", f"{got[1]:.2f}"]
                if tool is ours:
                    cells.append("" if got is None or not got[2] else f"{got[2]:.2f}")
                if tool is java:
                    both = ours.get(step), got
                    ratio = (
                        f"{both[0][1] / both[1][1]:.2f}x"
                        if both[0] is not None and both[1] is not None and both[1][1] > 0.005
                        else ""
                    )
                    cells.append(ratio)
            lines.append(f"| {step} | {' | '.join(cells)} |")
        walls = {row.tool: row.wall for row in r.rows}
        old_wall = f"**{walls[OLD_PEER]:.2f}**" if OLD_PEER in walls else ""
        lines.append(
            f"| **whole process (median wall)** | | **{walls[KQUOTA]:.2f}** | | | "
            f"**{walls[PEER]:.2f}** | **{walls[KQUOTA] / walls[PEER]:.2f}x** | | {old_wall} |"
        )
    lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
