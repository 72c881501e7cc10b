"""Assemble BENCHMARKS.md from the per-area results each benchmark script writes.

    python benchmarks/assemble.py

Each ``benchmarks/bench_*.py`` writes its own ``benchmarks/RESULTS-<area>.md`` (tables plus
method notes, measured in one run); this stitches them under one page in a fixed order.
"""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).parent
ORDER = [
    ("describe", "bench_describe.py"),
    ("describe-past-cap", "../tests/kafka/test_kafka_describe_past_cap.py"),
    ("plan-live-1m", "bench_plan_live.py"),
    ("wire", "bench_wire.py"),
    ("yaml", "bench_yaml_parse.py"),
    ("plan-styles", "bench_plan_floor.py"),
    ("plan-floor", "bench_plan_floor.py"),
    ("impact", "bench_impact.py"),
    ("render", "bench_render.py"),
    ("apply", "bench_apply.py"),
    ("fleet", "bench_fleet.py"),
    ("fleet-processes", "bench_fleet.py"),
    ("fleet-cluster", "bench_fleet.py"),
    ("failover", "bench_failover.py"),
    ("lease", "bench_lease.py"),
    ("usage", "bench_usage.py"),
]
INTRO = """# Benchmarks

Measured on this project's machine: 2 cores, 24 GiB, Python 3.11, OpenJDK 17, Kafka 4.3.1
dev broker on loopback. Each section is written by its script, in one run, with peers (Kafka's
Java AdminClient and tools, other YAML parsers, the other fleet engine) measured in the same
run so ratios are meaningful even where absolute times move with machine load. Re-run a
section with `python benchmarks/<script>` and then `python benchmarks/assemble.py`.
"""


# Written by hand from the sections' numbers: where each goal of issues 22 and 12 stands.
SUMMARIES = [HERE / "SUMMARY-issue22.md", HERE / "SUMMARY-issue12.md"]


def main() -> None:
    parts = [INTRO]
    for summary in SUMMARIES:
        if summary.is_file():
            parts.append(summary.read_text().strip())
    for area, script in ORDER:
        results = HERE / f"RESULTS-{area}.md"
        if results.is_file():
            parts.append(f"<!-- from benchmarks/{script} -->\n" + results.read_text().strip())
        else:
            parts.append(f"## {area}\n\nNot measured yet: run `python benchmarks/{script}`.")
    (HERE.parent / "BENCHMARKS.md").write_text("\n\n".join(parts) + "\n")


if __name__ == "__main__":
    main()
