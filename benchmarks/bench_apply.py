"""Apply benchmark: ``kquota apply`` against Kafka's Java AdminClient on the same broker.

Starts a fresh dev broker (loopback, ``kquota dev-broker``'s launcher) and, for 10,000 and
then 100,000 alterations, generates one deterministic batch of new entities (user,
user+client-id and client-id entities, 1-2 keys each) twice: as desired-state YAML for
kquota and as a TSV file for the Java program. Each tool then applies the whole batch as a
separate process, on a cluster that holds no quota at all:

- ``kquota``: ``kquota apply DIR --bootstrap-server BS --auto-approve``: loads the YAML,
  describes the cluster and plans, prints the plan, sends a validate-only pass over every
  alteration, commits (in apply's batches, each chunked below the controller's limit),
  then describes again until the cluster shows every change (verification);
- ``java commit``: ``benchmarks/java`` AlterAll, ``Admin.alterClientQuotas`` once per chunk
  of at most 5,000 changed keys (the AdminClient sends one request per call and the controller
  fails every entry of a request changing more than 10,000 keys), all chunks submitted at
  once, every entity's future checked;
- ``java validate+commit``: the same with a ``validateOnly(true)`` pass over every chunk first
  (nothing committed if any entity fails it);
- ``java validate+commit+verify``: the same, then waits until describe shows every entity with
  its values, as kquota's verification does (the last entity by exact filter, then
  describe-all): the like-for-like peer of kquota apply's wire work.

kquota does more than either Java variant (describe before, plan, render, verify after);
``--breakdown`` (default on) times kquota's phases in-process on one more apply at each size
by wrapping QuotaAdmin and running the real ``apply_plan``, so the table shows where its time
goes. Every run is checked afterwards (describe until the cluster shows exactly the batch,
bounded), then every entity is removed again with kquota's alter; checks and removal are not
timed. Wall time and peak RSS of each process tree come from ``proctree.run_measured``.

Usage: ``python benchmarks/bench_apply.py [--sizes 10000,100000] [--reps 3] [--out FILE]``
(each tool runs ``--reps`` times per size, round robin; median wall, largest RSS); by default
it first waits (polling every 30 s, up to 40 minutes) until no ``bench_fleet.py`` runs, so it
measures an otherwise idle machine. Writes ``benchmarks/RESULTS-apply.md``. Bounded: the
whole run takes a few minutes.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
import javapeer  # noqa: E402
from proctree import run_measured  # noqa: E402

from kquota.apply.applier import DEFAULT_BATCH_SIZE  # noqa: E402
from kquota.kafka.admin import QuotaAdmin, QuotaAlteration, QuotaOp  # noqa: E402
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


@dataclass
class SizeResult:
    size: int
    keys: int
    rows: list[Row] = field(default_factory=list)
    phases: dict[str, float] = field(default_factory=dict)
    java_passes: dict[str, float] = field(default_factory=dict)


# ---------------------------------------------------------------------------- the batch


def batch(size: int) -> QuotaState:
    """batch is ``size`` distinct entities with 1-2 keys each, the same for every call."""
    state: QuotaState = {}
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


def wait_for(admin: QuotaAdmin, expected: QuotaState, what: str) -> None:
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


def clear(admin: QuotaAdmin, state: QuotaState) -> None:
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


def measured(cmd: list[str], *, expect_ok: bool = True) -> tuple[float, float, str]:
    """measured runs ``cmd``; returns (wall seconds, peak RSS MiB of the tree, its output)."""
    wall, rss, proc = run_measured(cmd, timeout=TOOL_TIMEOUT)
    output = proc.stdout + proc.stderr
    if expect_ok and proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd[:4])}… failed ({proc.returncode}):\n{output[-3000:]}")
    return wall, rss, output


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


# ---------------------------------------------------------------------------- in-process


class TimedAdmin:
    """TimedAdmin wraps QuotaAdmin for ``apply_plan``: adds up the time of its alter calls,
    notes when the last commit returned and counts the verifying describes."""

    def __init__(self, admin: QuotaAdmin, phases: dict[str, float]) -> None:
        self._admin = admin
        self._phases = phases
        self.commit_end = 0.0
        self.describes = 0
        self.exact_reads = 0

    def alter(self, alterations: Sequence[Any], *, validate_only: bool) -> Sequence[Any]:
        phase = "validate-only pass" if validate_only else "commit pass"
        t0 = time.perf_counter()
        try:
            return self._admin.alter(alterations, validate_only=validate_only)
        finally:
            now = time.perf_counter()
            self._phases[phase] = self._phases.get(phase, 0.0) + now - t0
            if not validate_only:
                self.commit_end = now

    def describe_all(self) -> QuotaState:
        self.describes += 1
        return self._admin.describe_all()

    def describe_each_broker(self) -> Sequence[QuotaState]:
        self.describes += 1
        return self._admin.describe_each_broker()

    def describe_entities_each_broker(self, entities: Sequence[Entity]) -> Sequence[QuotaState]:
        self.exact_reads += 1
        return self._admin.describe_entities_each_broker(entities)


def breakdown(bootstrap: str, yaml_dir: Path) -> dict[str, float]:
    """breakdown runs kquota apply's steps in-process with a clock on each (the real
    ``apply_plan``; the CLI's own glue is the same calls); returns seconds per phase."""
    from kquota.apply.applier import apply_plan
    from kquota.cli.options import load_desired_quotas
    from kquota.plan.planner import plan as make
    from kquota.plan.policy import Policy
    from kquota.render.text import render_plan

    phases: dict[str, float] = {}
    t0 = time.perf_counter()
    desired = load_desired_quotas([yaml_dir])
    t1 = time.perf_counter()
    phases["load desired YAML"] = t1 - t0
    with QuotaAdmin(bootstrap) as admin:
        admin.cluster_id()
        current = admin.describe_all()
        t2 = time.perf_counter()
        phases["connect, cluster id, describe-all"] = t2 - t1
        plan = make(desired.quotas, current, Policy(), cluster=None)
        t3 = time.perf_counter()
        phases["plan"] = t3 - t2
        render_plan(plan)
        phases["render the plan as text"] = time.perf_counter() - t3
        timed = TimedAdmin(admin, phases)
        report = apply_plan(timed, plan, verify_timeout=float(VERIFY_TIMEOUT))
        phases["verify (until every broker shows every write)"] = (
            time.perf_counter() - timed.commit_end
        )
        phases["verifying describe-all calls (count)"] = timed.describes
        phases["verifying exact-read polls (count)"] = timed.exact_reads
    if not report.ok or len(report.committed) != len(desired.quotas):
        raise SystemExit(f"in-process apply did not commit everything: {report}")
    total = time.perf_counter() - t0
    counted = sum(v for k, v in phases.items() if "count" not in k)
    phases["other (applier glue, closing)"] = total - counted
    phases["total"] = total
    return phases


# ---------------------------------------------------------------------------- main


def bench_size(
    size: int, bootstrap: str, java_cmd: list[str], work: Path, args: argparse.Namespace
) -> SizeResult:
    state = batch(size)
    keys = sum(len(v) for v in state.values())
    yaml_dir, tsv = write_inputs(state, work / f"n{size}")
    result = SizeResult(size, keys)
    tools: dict[str, list[str]] = {
        "kquota apply": [
            sys.executable, "-m", "kquota.cli.main", "apply", str(yaml_dir),
            "--bootstrap-server", bootstrap, "--auto-approve", "--verify-timeout", VERIFY_TIMEOUT,
        ],
        "java commit": [*java_cmd, bootstrap, str(tsv), "commit", str(CHUNK_KEYS)],
        "java validate+commit": [
            *java_cmd, bootstrap, str(tsv), "validate-commit", str(CHUNK_KEYS),
        ],
        "java validate+commit+verify": [
            *java_cmd, bootstrap, str(tsv), "validate-commit-verify", str(CHUNK_KEYS),
        ],
    }  # fmt: skip
    walls: dict[str, list[float]] = {name: [] for name in tools}
    rsss: dict[str, list[float]] = {name: [] for name in tools}
    passes: dict[str, list[float]] = {p: [] for p in JAVA_PASSES.values()}
    with QuotaAdmin(bootstrap) as admin:
        wait_for(admin, {}, "before the runs")
        for rep in range(args.reps):  # round robin: drift in the machine's load hits all tools
            for name, cmd in tools.items():
                wall, rss, output = measured(cmd)
                if name == "java validate+commit+verify":
                    for pass_name, ms in java_pass_ms(output).items():
                        passes[pass_name].append(ms / 1000)
                wait_for(admin, state, f"{name} at {size:,}")
                walls[name].append(wall)
                rsss[name].append(rss)
                print(f"  {size:,} {name} #{rep + 1}: {wall:.2f}s {rss:.0f} MiB (verified)",
                      file=sys.stderr)  # fmt: skip
                clear(admin, state)
    for name in tools:
        result.rows.append(Row(size, name, statistics.median(walls[name]), max(rsss[name])))
    result.java_passes = {k: statistics.median(v) for k, v in passes.items() if v}
    if args.breakdown:
        result.phases = breakdown(bootstrap, yaml_dir)
        with QuotaAdmin(bootstrap) as admin:
            wait_for(admin, state, f"in-process apply at {size:,}")
            clear(admin, state)
    return result


# AlterAll's lines (``validated=… ms=N``) and the phase each one times.
JAVA_PASSES = {
    "validated=": "validate-only pass",
    "committed=": "commit pass",
    "verified=": "verify (until every broker shows every write)",
}


def java_pass_ms(output: str) -> dict[str, float]:
    """java_pass_ms reads AlterAll's own clock of each pass."""
    found = {}
    for line in output.splitlines():
        prefix = line.split("=", 1)[0] + "="
        if prefix in JAVA_PASSES and " ms=" in line:
            found[JAVA_PASSES[prefix]] = float(line.rsplit(" ms=", 1)[1])
    return found


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
    with QuotaAdmin(bootstrap) as admin:
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
    with QuotaAdmin(bootstrap) as admin:
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
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--out", type=Path, default=HERE / "RESULTS-apply.md")
    parser.add_argument("--no-wait", action="store_true", help="do not wait for bench_fleet.py")
    parser.add_argument("--no-breakdown", dest="breakdown", action="store_false")
    parser.add_argument("--probe-size", type=int, help="entities for the unchunked probe")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]

    from kquota.devbroker.launcher import start_broker, stop_broker

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
            fixed = startup(java_cmd, bootstrap, work)
            warm_up(bootstrap)
            probe = unchunked_probe(bootstrap, java_cmd, args.probe_size or sizes[0], work)
            print(f"unchunked probe: {probe}", file=sys.stderr)
            for size in sizes:
                results.append(bench_size(size, bootstrap, java_cmd, work, args))
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
        "## Apply against a live broker (issue 5)",
        "",
        f"`python benchmarks/bench_apply.py`, Python {platform.python_version()}, "
        f"{platform.machine()}, {os.cpu_count()} CPUs, Kafka {KAFKA_VERSION} dev broker "
        "(KRaft, combined broker+controller, PLAINTEXT, loopback, 768 MiB heap) sharing the "
        "machine with the tools. One run of the script, one broker; each tool runs as a "
        f"separate process, {reps} times per size (round robin over the tools); wall time "
        "(median) and peak RSS of the process tree (largest; sampled every 100 ms, "
        "`benchmarks/proctree.py`). Ratios are tool / kquota (below 1 = the tool is "
        "faster or smaller than kquota). Load average (1/5/15 min) before the timed runs "
        f"{_load(load_before)}, after {_load(load_after)}; the script waited "
        f"{waited:.0f} s for `bench_fleet.py` to finish first and then took {elapsed:.0f} s.",
        "",
        "Every run applies the same batch of new entities (a third user, a third "
        "user+client-id, a third client-id; 1-2 keys each) to a cluster holding no quota; "
        "afterwards describe must show exactly the batch (polled, bounded: a run that applied "
        "nothing fails the script), then the entities are removed again. Checks and removal "
        "are not timed.",
        "",
        "- **kquota apply**: `kquota apply DIR --bootstrap-server BS --auto-approve "
        f"--verify-timeout {VERIFY_TIMEOUT}` (a broker on a loaded machine can take longer "
        "than the default 15 s to show 100k changes; the bound only matters when it does): loads "
        "the YAML, describes the cluster, plans, prints the plan, validate-only pass over "
        f"every alteration, commit in batches of {DEFAULT_BATCH_SIZE:,} entities "
        "(each chunked to at most 5,000 "
        "keys per request, 4 requests in flight), then describes until the cluster shows "
        "every change. **It does more work than either Java variant** (describe and plan "
        "before, render, verify after); the breakdown below shows how much.",
        "- **java commit**: `benchmarks/java` AlterAll, Kafka's AdminClient "
        "`alterClientQuotas` with the whole batch split into calls of at most 5,000 changed "
        "keys (whole entities), all calls submitted at once, then every entity's future "
        "checked. Default JVM settings. Chunking is needed: the AdminClient sends one "
        "AlterClientQuotas request per call and the controller fails every entry of a "
        f"request changing more than {CONTROLLER_MAX_KEYS:,} keys. Probe, one unchunked "
        f"call: {probe}.",
        "- **java validate+commit**: the same, with a `validateOnly(true)` pass over every "
        "chunk first (nothing committed if any entity fails it).",
        "- **java validate+commit+verify**: the same, then it waits until describe shows every "
        "entity with its values, as kquota verifies (the last entity written by an exact "
        "filter, 20 ms doubling to 250 ms apart, then describe-all until all show): the "
        "like-for-like peer of kquota apply's wire work. The broker acknowledges a write once "
        "the controller has committed it, before it serves it to describe.",
        "",
        "| alterations | keys | tool | wall | peak RSS | wall ratio | RSS ratio |",
        "|---:|---:|---|---:|---:|---:|---:|",
    ]
    for r in results:
        base = r.rows[0]
        for row in r.rows:
            lines.append(
                f"| {r.size:,} | {r.keys:,} | {row.tool} | {row.wall:.2f} s "
                f"| {row.rss_mib:.0f} MiB | {row.wall / base.wall:.2f}x "
                f"| {row.rss_mib / base.rss_mib:.2f}x |"
            )
    lines += ["", "Fixed cost of each process (doing nothing):", ""]
    lines += [f"- {name}: {w:.2f} s, {rss:.0f} MiB" for name, (w, rss) in fixed.items()]
    if any(r.phases for r in results):
        names = list(next(r.phases for r in results if r.phases))
        lines += [
            "",
            "Where kquota apply's time goes: its steps run in-process (one more apply per "
            "size, the real `apply_plan` over a clock-wrapped QuotaAdmin; no Python start-up "
            "or imports), seconds. The validate-only pass is one QuotaAdmin call over every "
            "alteration (chunks pipelined, 4 in flight); the commit pass is apply's batches of "
            f"{DEFAULT_BATCH_SIZE:,} entities, one call after another; "
            "verification starts when the last commit "
            "returns: it reads the last entity written by exact match (sleeping 0.02 s, then twice "
            "as long each time up to 0.25 s) until it shows, then reads everything with one "
            "describe-all, then only what is still missing. The Java column is AlterAll's own "
            "clock around each pass in the "
            "java validate+commit+verify runs (median), the like-for-like peer of each pass "
            "(issue 12 asks for the two write passes within 1.5x):",
            "",
            "| phase | "
            + " | ".join(f"{r.size:,} | java {r.size:,} | ratio" for r in results if r.phases)
            + " |",
            "|---|" + "---:|---:|---:|" * sum(1 for r in results if r.phases),
        ]
        for name in names:
            fmt = "{:.0f}" if "count" in name else "{:.2f}"
            cells = []
            for r in results:
                if not r.phases:
                    continue
                ours, java = r.phases.get(name, 0.0), r.java_passes.get(name)
                cells.append(fmt.format(ours))
                cells.append("" if java is None else f"{java:.2f}")
                cells.append("" if not java else f"{ours / java:.2f}x")
            lines.append(f"| {name} | {' | '.join(cells)} |")
    lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
