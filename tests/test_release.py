"""The release as far as it runs without PyPI or GitHub: scripts/release-check builds the
sdist and the wheel, runs `twine check`, and installs the wheel alone into a clean venv to
run `kquota --version`, `python -m kquota --version` and a plan against the example's
snapshot. The release workflow runs the same script on a tag before it publishes.

It runs with PIP_REQUIRE_HASHES=1, which every pip it starts inherits: a requirement without
a hash (an isolated build fetching setuptools, a wheel installed with whatever dependencies
the index serves) fails the check instead of installing something no lock pins."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from kquota.version import __version__
from repo_root import ROOT


def test_release_check_builds_checks_and_runs_the_wheel(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    proc = subprocess.run(
        [str(ROOT / "scripts" / "release-check"), str(dist)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHON": sys.executable, "PIP_REQUIRE_HASHES": "1"},
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    assert "PASSED" in out and "FAILED" not in out  # twine check, both files
    assert f"kquota, version {__version__}" in out
    assert "Plan: 0 to create, 2 to update, 1 to delete" in out
    assert "No broken requirements found." in out  # pip check in the clean venv
    assert sorted(p.name for p in dist.iterdir()) == [
        f"kquota-{__version__}-py3-none-any.whl",
        f"kquota-{__version__}.tar.gz",
    ]
