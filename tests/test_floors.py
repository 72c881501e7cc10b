"""scripts/floors, the offline suite at the declared floors: what its marker expression leaves
out, and the suite's own check that such a run starts no broker (tests/conftest.py)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from _pytest.mark.expression import Expression

from repo_root import ROOT


def floors_expression() -> str:
    """floors_expression is the ``-m`` scripts/floors gives pytest (a later ``-m`` in its
    extra arguments would replace it, so the script's own must be complete)."""
    found = re.findall(r"pytest -m '([^']+)'", (ROOT / "scripts" / "floors").read_text())
    assert len(found) == 1, found
    return found[0]


def selects(expr: str, marks: set[str]) -> bool:
    """selects: a test carrying ``marks`` runs under ``-m expr``."""
    return Expression.compile(expr).evaluate(lambda name, **_: name in marks)


@pytest.mark.parametrize("mark", ["integration", "jvm", "container"])
def test_the_floors_run_leaves_out_brokers_jars_and_the_image(mark: str) -> None:
    expr = floors_expression()
    assert not selects(expr, {mark}), expr
    assert selects(expr, set()), expr


# Fake: writes the file a broker's storage format writes, without a broker.
FAKE_BROKER_TEST = """
def test_formats_a_broker(tmp_path):
    (tmp_path / "b" / "data").mkdir(parents=True)
    (tmp_path / "b" / "data" / "meta.properties").write_text("node.id=1\\n")

def test_offline(tmp_path):
    (tmp_path / "notes.txt").write_text("no broker here")
"""


def _run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "t").mkdir(exist_ok=True)
    (tmp_path / "t" / "test_fake.py").write_text(FAKE_BROKER_TEST)
    # The inner run's temporary root lies outside this run's, whose own check (in an offline
    # run) would otherwise find the fake's file.
    with tempfile.TemporaryDirectory() as base:
        return subprocess.run(
            # The suite's conftest as a plugin, with the project's settings.
            [sys.executable, "-m", "pytest", "-c", str(ROOT / "pyproject.toml"), "--rootdir",
             str(ROOT), "-p", "conftest", "-p", "no:cacheprovider", "--basetemp",
             str(Path(base) / "t"), "-q", str(tmp_path / "t" / "test_fake.py"), *args],
            capture_output=True, text=True, timeout=300, cwd=ROOT,
            # -p imports before pytest 8.1 applies the pythonpath setting: give it to Python.
            env={**os.environ, "PYTHONPATH": os.pathsep.join(
                [str(ROOT / "tests"), str(ROOT / "tests" / "faults")])},
        )  # fmt: skip


def test_an_offline_run_that_starts_a_broker_fails_and_names_where(tmp_path: Path) -> None:
    proc = _run(tmp_path, "-m", floors_expression())
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert (
        f"this run leaves out `integration` ({floors_expression()}) but a Kafka broker was "
        "started in test_formats_a_broker0/b/data under "
    ) in proc.stdout
    assert "mark the test that starts it @pytest.mark.integration" in proc.stdout
    # Only the file a broker writes counts: the offline test alone passes.
    proc = _run(tmp_path, "-m", floors_expression(), "-k", "test_offline")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_a_run_with_brokers_may_start_them(tmp_path: Path) -> None:
    proc = _run(tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "2 passed" in proc.stdout
