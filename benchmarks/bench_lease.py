"""What the apply lease costs: acquire and release in-process, and a one-entity apply with
and without it (issue 10.4).

    python benchmarks/bench_lease.py [--reps 20]

Starts its own dev broker (stopped at the end) and writes ``benchmarks/RESULTS-lease.md``.
Bounded: about a minute.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent


def _contend(config: dict[str, str], limit: Any, done: list[float]) -> None:
    from kquota.apply.lease import apply_lease

    with apply_lease(config, limit):
        done.append(time.perf_counter())


def _lease_times(bootstrap: str, reps: int) -> tuple[list[float], list[float], list[float]]:
    from kquota.apply.lease import apply_lease
    from kquota.kafka.librdkafka import producer_config
    from kquota.runtime import deadline

    config = producer_config({"bootstrap.servers": bootstrap})
    acquire, release, handover = [], [], []
    with deadline.bounded(600, "bench"):
        limit = deadline.current()
        assert limit is not None
        for _ in range(reps):
            start = time.perf_counter()
            with apply_lease(config, limit):
                held = time.perf_counter()
            acquire.append(held - start)
            release.append(time.perf_counter() - held)
        # A contender that finds the lease held waits; how long after the release it gets it.
        for _ in range(max(3, reps // 5)):
            first = apply_lease(config, limit)
            first.__enter__()
            second_done: list[float] = []
            proc_start = time.perf_counter()
            t = threading.Thread(target=_contend, args=(config, limit, second_done))
            t.start()
            time.sleep(1.5)
            released = time.perf_counter()
            first.__exit__(None, None, None)
            t.join(30)
            assert second_done and second_done[0] > proc_start
            handover.append(second_done[0] - released)
    return acquire, release, handover


def _apply_times(bootstrap: str, work: Path, reps: int) -> dict[str, list[float]]:
    (work / "quotas").mkdir()
    desired = work / "quotas" / "main.yaml"
    times: dict[str, list[float]] = {"with lease": [], "--no-lease": []}
    for i in range(reps):
        for label, extra in (("with lease", []), ("--no-lease", ["--no-lease"])):
            value = 1000 + 2 * i + (label == "--no-lease")
            desired.write_text(
                "apiVersion: kquota/v1\nkind: ClientQuotas\nquotas:\n"
                f"  - {{match: {{user: bench-lease}}, set: {{producer_byte_rate: {value}}}}}\n"
            )
            argv = [sys.executable, "-m", "kquota.cli.main", "apply", str(work / "quotas"),
                    "--bootstrap-server", bootstrap, "--auto-approve", *extra]  # fmt: skip
            start = time.perf_counter()
            subprocess.run(argv, check=True, capture_output=True, cwd=work)
            times[label].append(time.perf_counter() - start)
    return times


def _ms(values: list[float]) -> str:
    return f"{statistics.median(values) * 1000:.0f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--out", type=Path, default=HERE / "RESULTS-lease.md")
    args = parser.parse_args()

    from kquota.devbroker.launcher import start_broker, stop_broker
    from kquota.operations.topics import create_topics, lease_spec
    from kquota.target import Target

    with tempfile.TemporaryDirectory(prefix="kquota-bench-") as tmp:
        work = Path(tmp)
        info = start_broker(work / "broker", fresh=True, die_with_parent=True)
        try:
            # The lease topic, made once as an operator makes it: apply never creates it.
            create_topics(Target(bootstrap_server=info.bootstrap_servers), [lease_spec()], 120)
            acquire, release, handover = _lease_times(info.bootstrap_servers, args.reps)
            applies = _apply_times(info.bootstrap_servers, work, max(3, args.reps // 4))
        finally:
            stop_broker(work / "broker")
        kafka = info.kafka_version
    rows = [
        ("acquire (topic exists, lease free)", _ms(acquire), len(acquire)),
        ("release", _ms(release), len(release)),
        ("handover: holder releases -> waiting contender holds it", _ms(handover), len(handover)),
        *((f"`kquota apply`, one entity, {k}", _ms(v), len(v)) for k, v in applies.items()),
    ]
    text = [
        "## The apply lease (issue 10.4)",
        "",
        f"`python benchmarks/bench_lease.py`, Python {platform.python_version()}, "
        f"Kafka {kafka} dev broker on loopback. Medians. Acquire is: append a claim, wait "
        "for its offset, read the one-partition topic up to it. A waiting contender retries "
        "every second, so a handover takes up to that long. The apply rows are whole "
        "processes (start-up, imports, plan, validate, commit, verify).",
        "",
        "| what | median | runs |",
        "|---|---:|---:|",
        *(f"| {what} | {median} | {n} |" for what, median, n in rows),
    ]
    args.out.write_text("\n".join(text) + "\n")
    print("\n".join(text))


if __name__ == "__main__":
    main()
