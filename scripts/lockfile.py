"""Ties the lock files in requirements/ to the pyproject.toml they were compiled from.

Every lock starts with a line ``# pyproject-dependencies-sha256: <hex>``: the SHA-256 of the
dependency lists of pyproject.toml (``requires-python``, ``dependencies`` and every extra),
written by ``scripts/lock``. ``scripts/check``, ``scripts/demo`` and ``scripts/floors`` run
``--check`` before they install, so a dependency added to pyproject.toml without re-running
``scripts/lock`` stops them with a message that says so, instead of installing a set that
does not hold it. Standard library only (tomllib): it runs before anything is installed, and
without the network.

    python3 scripts/lockfile.py --write FILE...   put the current digest on top of each FILE
    python3 scripts/lockfile.py --check FILE...   exit 1 unless each FILE has the current digest
"""

from __future__ import annotations

import hashlib
import json
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PREFIX = "# pyproject-dependencies-sha256: "


def digest(pyproject: Path = ROOT / "pyproject.toml") -> str:
    """digest is the SHA-256 of pyproject's dependency lists, independent of their layout
    (comments, quoting, line breaks) but not of their order or their text."""
    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    lists = {
        "requires-python": project.get("requires-python"),
        "dependencies": project.get("dependencies", []),
        "optional-dependencies": project.get("optional-dependencies", {}),
    }
    canonical = json.dumps(lists, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def recorded(lock: Path) -> str | None:
    """recorded is the digest a lock file was compiled from, None when it carries none."""
    with lock.open(encoding="utf-8") as f:
        first = f.readline().rstrip("\n")
    return first[len(PREFIX) :] if first.startswith(PREFIX) else None


def write(lock: Path, current: str) -> None:
    lines = lock.read_text(encoding="utf-8").splitlines(keepends=True)
    if lines and lines[0].startswith(PREFIX):
        lines = lines[1:]
    lock.write_text(PREFIX + current + "\n" + "".join(lines), encoding="utf-8")


def main(argv: list[str]) -> int:
    if len(argv) < 2 or argv[0] not in ("--write", "--check"):
        print(__doc__, file=sys.stderr)
        return 2
    current = digest()
    stale = []
    for name in argv[1:]:
        lock = Path(name)
        if argv[0] == "--write":
            write(lock, current)
        elif not lock.is_file():
            stale.append(f"{name}: missing")
        elif (found := recorded(lock)) != current:
            was = "no digest" if found is None else f"digest {found[:12]}"
            stale.append(f"{name}: compiled from other dependency lists ({was})")
    if stale:
        print(
            "error: the lock files do not match the dependencies of pyproject.toml "
            f"(digest {current[:12]} now):",
            *(f"  {s}" for s in stale),
            "run ./scripts/lock to compile them again, and commit requirements/",
            sep="\n",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
