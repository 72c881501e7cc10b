"""Offline plan against its floor (issues 12 and 22): whole processes, floor in the same run.

For each size it generates the entities of ``bench_plan.py`` (a snapshot and a desired state
that differ by 1% updates, 0.5% creates, 0.5% removals), writes the desired state in every
style of ``desired_styles.py`` (export's form, one-line flow entries, quoted names, block
mappings, units, comments, profiles, several files: the same entities and values), then runs,
interleaved round by round and style by style, ``--rounds`` times each:

- **kquota**: ``kquota plan FILES --snapshot SNAPSHOT --prune --allow-mass-removal
  --format json`` with the JSON plan written to a file (start-up, imports, reading and
  checking both files, planning, the digest, rendering: the whole command);
- **floor**: a Python process that parses the same files with yaml-rs (``yaml_rs.loads``)
  and the standard ``json`` module and does nothing else.

Every style must give the same plan (its time and file positions aside), or the run stops.
Wall and CPU time (user + system, from ``wait4``) are medians; peak RSS is the largest of
the rounds. The machine is shared, so the CPU ratio is the steadier one.

Usage: ``python benchmarks/bench_plan_floor.py [--sizes 100000,1000000] [--rounds 3]
[--styles export,block,...]``;
writes ``benchmarks/RESULTS-plan-styles.md`` (merged into BENCHMARKS.md by ``assemble.py``).
Needs ``pip install yaml-rs`` (the peer only; kquota does not use it).
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_plan import states  # noqa: E402
from desired_styles import STYLES, write_style  # noqa: E402

FLOOR = """
import json, sys, yaml_rs
quotas = 0
for path in sys.argv[2:]:
    with open(path, encoding="utf-8") as fh:
        quotas += len(yaml_rs.loads(fh.read())["quotas"])
with open(sys.argv[1], "rb") as fh:
    snapshot = json.loads(fh.read())
assert quotas > 0 and len(snapshot["entries"]) > 0
"""


def run(argv: list[str], out: Path) -> dict[str, float]:
    """run starts one process and returns its wall, CPU seconds and peak RSS (MiB).

    Through ``/usr/bin/time``: a child forked from this (large) process would inherit its
    peak RSS, as Linux keeps the high-water mark across exec.
    """
    stats = out.with_suffix(".time")
    with out.open("wb") as fh:
        t0 = time.perf_counter()
        done = subprocess.run(
            ["/usr/bin/time", "-f", "%U %S %M", "-o", str(stats), *argv],
            stdout=fh,
            stderr=subprocess.PIPE,
        )
        wall = time.perf_counter() - t0
    if done.returncode != 0:
        raise SystemExit(f"{argv[0]} failed: {done.stderr.decode()}")
    user, system, rss_kb = stats.read_text().split()[-3:]
    return {"wall": wall, "cpu": float(user) + float(system), "rss": int(rss_kb) / 1024}


def measure(
    n: int, folder: Path, rounds: int, styles: list[str]
) -> dict[str, dict[str, list[dict[str, float]]]]:
    """measure runs kquota and its floor on each style, interleaved: round by round, style by
    style, kquota then floor (so both of a pair see the same machine load)."""
    from kquota.snapshot.files import dump_snapshot

    desired_state, snapshot_state = states(n)
    snapshot = folder / "snapshot.json"
    snapshot.write_bytes(dump_snapshot(snapshot_state))
    kquota = shutil.which("kquota") or "kquota"
    tools: dict[str, dict[str, list[str]]] = {}
    for style in styles:
        sub = folder / style
        sub.mkdir()
        files = [str(p) for p in write_style(style, desired_state, sub)]
        plan = [kquota, "plan", *files, "--snapshot", str(snapshot)]
        plan += ["--prune", "--allow-mass-removal", "--format", "json"]
        floor = [sys.executable, "-c", FLOOR, str(snapshot), *files]
        tools[style] = {"kquota": plan, "floor": floor}
    del desired_state, snapshot_state
    results = {style: {"kquota": [], "floor": []} for style in styles}  # type: ignore[var-annotated]
    plans: dict[str, bytes] = {}
    for r in range(rounds):
        for style, pair in tools.items():
            for name, argv in pair.items():
                got = run(argv, folder / style / f"{name}.out")
                results[style][name].append(got)
                print(
                    f"{n:>9,} round {r + 1} {style:>11} {name:>6}: wall {got['wall']:.2f} s, "
                    f"cpu {got['cpu']:.2f} s, peak {got['rss']:.0f} MiB",
                    flush=True,
                )
            plans[style] = _without_sources((folder / style / "kquota.out").read_bytes())
    if len(set(plans.values())) > 1:
        raise SystemExit(f"the styles planned differently: {sorted(plans)}")
    return results


def _without_sources(plan: bytes) -> bytes:
    """_without_sources is a JSON plan without its time and what names files and lines
    (which differ from style to style): the changes and the digest must be the same."""
    import json

    doc = json.loads(plan)
    return json.dumps(_strip(doc), sort_keys=True).encode()


def _strip(value: object) -> object:
    if isinstance(value, dict):
        return {
            k: _strip(v) for k, v in value.items() if k not in ("created_at", "source", "sources")
        }
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--styles", default=",".join(STYLES), help=f"of {', '.join(STYLES)}")
    parser.add_argument("--out", type=Path, default=HERE / "RESULTS-plan-styles.md")
    args = parser.parse_args()
    compiled()
    load_before = os.getloadavg()
    rows = []
    with tempfile.TemporaryDirectory(prefix="kquota-floor-") as tmp:
        for n in (int(s) for s in args.sizes.split(",")):
            folder = Path(tmp) / str(n)
            folder.mkdir()
            rows.append((n, measure(n, folder, args.rounds, args.styles.split(","))))
            shutil.rmtree(folder)  # 1M inputs are 200 MB a style: free the disk first
    args.out.write_text(report(rows, args.rounds, load_before, os.getloadavg()), encoding="utf-8")
    print(f"wrote {args.out}")


def compiled() -> None:
    """compiled writes kquota's bytecode, as pip does when it installs the wheel: a checkout
    installed editable and run with ``PYTHONDONTWRITEBYTECODE=1`` (as CI and the sessions
    run) would compile every module of every kquota process from source, about 0.07 s of
    CPU a process that no installed kquota spends (the floor's modules are compiled)."""
    import compileall

    import kquota

    compileall.compile_dir(Path(kquota.__file__).parent, quiet=1)


def report(
    rows: list[tuple[int, dict[str, dict[str, list[dict[str, float]]]]]],
    rounds: int,
    before: tuple[float, float, float],
    after: tuple[float, float, float],
) -> str:
    lines = [
        "## Offline plan by writing style, against the parse floor (issues 12 and 22)",
        "",
        f"`python benchmarks/bench_plan_floor.py`, Python {platform.python_version()}, "
        f"{os.cpu_count()} CPUs, shared with other builds: load average (1/5/15 min) "
        f"{before[0]:.1f} / {before[1]:.1f} / {before[2]:.1f} before, "
        f"{after[0]:.1f} / {after[1]:.1f} / {after[2]:.1f} after. The same entities and "
        "values (snapshot JSON as in the offline plan section, 2% of entities differ) with the "
        "desired state written in each style of `benchmarks/desired_styles.py` (export's "
        "form; one-line flow entries; double- and single-quoted names; block mappings; "
        "units; comments; profiles with per-entry overrides, their tiers in flow or in block "
        "mappings; 10 files; the `docs-*` styles written from the docs, issue 34); every "
        "style must give the same plan, or the script stops. Each tool is a fresh process, "
        f"{rounds} rounds interleaved (round by round, style by style: kquota, then its "
        "floor); wall and CPU (user + system) are medians, peak RSS the largest round. "
        "kquota's bytecode is written first, as pip writes it on install.",
        "",
        "- **kquota**: `kquota plan FILES --snapshot snapshot.json --prune "
        "--allow-mass-removal --format json > plan.json`, the whole command.",
        "- **floor**: `yaml_rs.loads` of the same YAML files and `json.loads` of the snapshot "
        "in one Python process, nothing else (no checks, no positions, no plan).",
        "",
        "| entities | style | kquota wall | floor wall | kquota CPU | floor CPU "
        "| kquota peak | wall / floor | CPU / floor |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for n, by_style in rows:
        for style, res in by_style.items():
            med = {
                name: (
                    statistics.median(r["wall"] for r in runs),
                    statistics.median(r["cpu"] for r in runs),
                    max(r["rss"] for r in runs),
                )
                for name, runs in res.items()
            }
            (kw, kc, kr), (fw, fc, _) = med["kquota"], med["floor"]
            lines.append(
                f"| {n:,} | {style} | {kw:.2f} s | {fw:.2f} s | {kc:.2f} s | {fc:.2f} s "
                f"| {kr:.0f} MiB | {kw / fw:.2f}x | {kc / fc:.2f}x |"
            )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
