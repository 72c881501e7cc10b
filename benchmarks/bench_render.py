"""Text plan rendering CPU (issue 22, goal 2): this tree against a git ref, interleaved.

``kquota apply`` prints the plan (``render.text.render_plan``, the ``render`` span) while its
validate-only pass runs, on the main thread: every CPU second of it is taken from the wire.
For each size this builds the plan of ``bench_apply.py``'s ``batch()`` (all new entities,
1-2 keys each, as apply's benchmark applies them) and times ``render_plan`` in CPU seconds
(``time.process_time``), one process per side and round, the two sides alternating round by
round: this tree, and ``--base`` (a git ref, extracted with ``git archive`` into a temporary
directory and put first on ``PYTHONPATH``). Each side's output is hashed: the run stops
unless the bytes are the same.

``--plan changes`` renders instead a plan whose every alteration is a change of its own
(issue 31's regression, issue 34): entities of three shapes holding two keys each, updated
to values none shares (lower and higher), a tenth deleted and a tenth created, prune on; no
two alterations group.

Usage: ``python benchmarks/bench_render.py [--base main] [--sizes 10000,100000]
[--rounds 5] [--format text|markdown|json] [--plan creates|changes]``; prints a markdown
table (medians) with the load average before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
from io import BytesIO
from pathlib import Path

HERE = Path(__file__).resolve().parent

_CHILD = """
import gc, hashlib, json, sys, time
sys.path.insert(0, sys.argv[4])
from bench_apply import batch
from kquota.plan.planner import plan
from kquota.policy import Policy
from kquota.render import json as rjson, markdown, text
render = {"text": text.render_plan, "markdown": markdown.render_plan, "json": rjson.render_plan}
f = render[sys.argv[2]]
n = int(sys.argv[1])
if sys.argv[5] == "creates":
    p = plan(batch(n), {}, Policy())
else:
    from kquota.model import Entity
    P, C = "producer_byte_rate", "consumer_byte_rate"
    now, want = {}, {}
    for i in range(n):
        kind = i % 3
        if kind == 0:
            e = Entity.of({"user": f"user-{i:07d}"})
        elif kind == 1:
            e = Entity.of({"user": f"user-{i:07d}", "client-id": f"app-{i % 97}"})
        else:
            e = Entity.of({"client-id": f"client-{i:07d}"})
        if i % 10 != 9:
            now[e] = {P: float(1000000 + i), C: float(2000000 + i)}
        if i % 10 != 8:
            want[e] = {P: float(1000500 + i + (i % 7 - 3) * 1000), C: float(2000000 + 2 * i)}
            if i % 4 == 0:
                want[e]["request_percentage"] = 10.0 + i % 50
    p = plan(want, now, Policy(prune=True, allow_mass_removal=True))
out = f(p)
times = []
for _ in range(int(sys.argv[3])):
    gc.collect()
    t0 = time.process_time()
    f(p)
    times.append(time.process_time() - t0)
digest = hashlib.sha256(out.encode("utf-8", "surrogatepass")).hexdigest()
print(json.dumps({"cpu": times, "sha256": digest, "bytes": len(out)}))
"""


def run(n: int, fmt: str, src: Path | None, shape: str) -> dict[str, object]:
    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = str(src)
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(n), fmt, "1", str(HERE), shape],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, object] = json.loads(done.stdout)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="main")
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--format", default="text", choices=["text", "markdown", "json"])
    parser.add_argument("--plan", default="creates", choices=["creates", "changes"])
    args = parser.parse_args()
    load_before = os.getloadavg()
    archive = subprocess.run(
        ["git", "archive", args.base, "src"], cwd=HERE.parent, capture_output=True, check=True
    ).stdout
    rows = []
    with tempfile.TemporaryDirectory(prefix="kquota-render-") as tmp:
        with tarfile.open(fileobj=BytesIO(archive)) as tar:
            tar.extractall(tmp, filter="data")
        base_src = Path(tmp) / "src"
        for n in (int(s) for s in args.sizes.split(",")):
            cpu: dict[str, list[float]] = {"base": [], "tree": []}
            digests = set()
            for _ in range(args.rounds):
                for side, src in (("base", base_src), ("tree", None)):
                    r = run(n, args.format, src, args.plan)
                    cpu[side] += r["cpu"]  # type: ignore[arg-type]
                    digests.add((r["sha256"], r["bytes"]))
            if len(digests) != 1:
                sys.exit(f"{n}: the two trees render different bytes: {digests}")
            base, tree = statistics.median(cpu["base"]), statistics.median(cpu["tree"])
            rows.append(f"| {n:,} | {base:.4f} | {tree:.4f} | {tree / base:.2f}x |")
    load_after = os.getloadavg()
    print(
        f"`render.{args.format}.render_plan` of the {args.plan} plan, CPU s, median of "
        f"{args.rounds} (one process each, interleaved); base `{args.base}`; same bytes on "
        f"both sides; load average {load_before[0]:.2f} before, {load_after[0]:.2f} after.\n"
    )
    print("| entities | base | this tree | ratio |\n|---:|---:|---:|---:|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
