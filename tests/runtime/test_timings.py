"""kquota.runtime.timings: KQUOTA_PHASE_TIMES=FILE gets one line per step at exit; nothing
without."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

STEPS = (
    "from kquota.runtime import progress, timings\n"
    "with timings.span('lease'):\n"
    "    pass\n"
    "with progress.phase('load'):\n"
    "    sum(range(10000))\n"
)


def _run(env: dict[str, str]) -> None:
    subprocess.run([sys.executable, "-c", STEPS], env=env, check=True, timeout=60)


def test_every_step_is_written_with_its_clock(tmp_path: Path) -> None:
    out = tmp_path / "times.tsv"
    _run({**os.environ, "KQUOTA_PHASE_TIMES": str(out)})
    rows = [line.split("\t") for line in out.read_text().splitlines()]
    assert [r[0] for r in rows] == ["lease", "load"]
    for _, start, end, cpu in rows:
        assert float(start) <= float(end) and float(cpu) >= 0.0
    assert float(rows[0][2]) <= float(rows[1][1]), "in the order they ran"


def test_nothing_is_recorded_without_the_variable() -> None:
    env = {k: v for k, v in os.environ.items() if k != "KQUOTA_PHASE_TIMES"}
    check = STEPS + "assert not timings.enabled() and timings._spans == []\n"
    subprocess.run([sys.executable, "-c", check], env=env, check=True, timeout=60)
