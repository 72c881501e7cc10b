"""The lock files in requirements/: compiled from today's pyproject.toml, hashed, and true.

scripts/lock writes them (uv), scripts/venv-from-lock installs them (pip --require-hashes);
these tests hold the committed files to what those scripts promise, without the network.
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
import tomllib
from pathlib import Path
from types import ModuleType

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from repo_root import ROOT

REQS = ROOT / "requirements"
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)(?:\s*;\s*([^\\]+?))?\s*\\?$")


def _script(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name.replace("-", "_"), ROOT / "scripts" / name)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


lockfile = _script("lockfile.py")
newer = _script("newer-than-lock.py")


def pins(lock: str) -> dict[str, str]:
    """pins maps each package a lock installs on this platform to its version."""
    from packaging.markers import Marker

    found = {}
    for line in (REQS / lock).read_text(encoding="utf-8").splitlines():
        m = _PIN.match(line)
        if m and (m.group(3) is None or Marker(m.group(3)).evaluate()):
            found[canonicalize_name(m.group(1))] = m.group(2)
    return found


def direct() -> list[Requirement]:
    """direct lists what pyproject.toml asks for: the dependencies, and the dev and spark
    extras (the set CI installs)."""
    extras = PYPROJECT["optional-dependencies"]
    return [Requirement(r) for r in [*PYPROJECT["dependencies"], *extras["dev"], *extras["spark"]]]


@pytest.mark.parametrize("lock", ["ci.txt", "demo.txt", "floors.txt"])
def test_each_lock_was_compiled_from_todays_pyproject(lock: str) -> None:
    # A dependency added to pyproject.toml without ./scripts/lock fails here and in the scripts.
    assert lockfile.recorded(REQS / lock) == lockfile.digest(), "run ./scripts/lock"


@pytest.mark.parametrize("lock", ["ci.txt", "demo.txt", "floors.txt", "bootstrap.txt", "uv.txt"])
def test_every_pin_carries_hashes(lock: str) -> None:
    text = (REQS / lock).read_text(encoding="utf-8")
    blocks = re.split(r"\n(?=[A-Za-z0-9])", text)
    pinned = [b for b in blocks if _PIN.match(b.splitlines()[0])]
    assert pinned, lock
    for block in pinned:
        assert "--hash=sha256:" in block, block.splitlines()[0]


def test_the_ci_lock_satisfies_every_declared_range() -> None:
    locked = pins("ci.txt")
    for req in direct():
        name = canonicalize_name(req.name)
        assert name in locked, f"{req} is not in requirements/ci.txt"
        assert req.specifier.contains(locked[name], prereleases=True), (str(req), locked[name])


def test_the_demo_installs_the_versions_ci_tests() -> None:
    ci, demo = pins("ci.txt"), pins("demo.txt")
    assert {n: ci.get(n) for n in demo} == demo
    for r in PYPROJECT["dependencies"]:
        assert canonicalize_name(Requirement(r).name) in demo, r


def test_the_floors_lock_installs_each_direct_dependency_at_its_declared_floor() -> None:
    # So scripts/floors proves every `>=` of pyproject.toml: the floor is what it installs.
    floors = pins("floors.txt")
    for req in direct():
        lows = [s.version for s in req.specifier if s.operator in (">=", "==")]
        assert len(lows) == 1, f"{req}: every dependency declares one floor (>=)"
        assert Version(floors[canonicalize_name(req.name)]) == Version(lows[0]), str(req)


def test_the_digest_follows_the_lists_not_the_layout(tmp_path: Path) -> None:
    base = '[project]\nname = "x"\nrequires-python = ">=3.11"\ndependencies = ["a>=1", "b>=2"]\n'
    same = (
        '[project]\nname="x"\n# deps\nrequires-python=">=3.11"\n'
        'dependencies=[\n  "a>=1",\n  "b>=2",\n]\n'
    )
    other = base.replace("b>=2", "b>=3")
    digests = []
    for i, text in enumerate((base, same, other)):
        (tmp_path / f"{i}.toml").write_text(text, encoding="utf-8")
        digests.append(lockfile.digest(tmp_path / f"{i}.toml"))
    assert digests[0] == digests[1] != digests[2]


def test_a_stale_lock_is_refused_with_the_command_that_refreshes_it(tmp_path: Path) -> None:
    stale = tmp_path / "ci.txt"
    stale.write_text(lockfile.PREFIX + "0" * 64 + "\nclick==8.4.0\n", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "lockfile.py"), "--check", str(stale)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    assert "compiled from other dependency lists (digest 000000000000)" in done.stderr
    assert "run ./scripts/lock" in done.stderr
    ok = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "lockfile.py"), "--check", str(REQS / "ci.txt")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert ok.returncode == 0, ok.stderr


def test_the_newest_table_names_what_moved_since_the_lock() -> None:
    table = newer.table({"click": "8.4.0", "rich": "13.0"}, {"click": "8.5.1", "rich": "13.0"})
    assert table == ["| package | locked | newest |", "|---|---|---|", "| click | 8.4.0 | 8.5.1 |"]
    assert newer.table({"rich": "13.0"}, {"rich": "13.0"}) == [
        "Every package is at its locked version."
    ]


def test_the_install_scripts_install_from_the_lock_only() -> None:
    for script, lock in (("check", "ci.txt"), ("demo", "demo.txt"), ("floors", "floors.txt")):
        text = (ROOT / "scripts" / script).read_text(encoding="utf-8")
        assert "./scripts/venv-from-lock .venv" in text and f"requirements/{lock}" in text
        assert "pip install" not in text, script
    install = (ROOT / "scripts" / "venv-from-lock").read_text(encoding="utf-8")
    code = [line for line in install.splitlines() if not line.startswith("#")]
    assert sum("--require-hashes" in line for line in code) == 2
    assert "  -r requirements/bootstrap.txt" in code
    assert '--require-hashes --no-deps -r "$lock"' in install
    assert "--no-deps --no-build-isolation -e ." in install
