"""Prints, as a Markdown table, every package whose installed version is not the locked one.

    python scripts/newer-than-lock.py requirements/ci.txt

Run with the Python of a venv installed without the lock (the scheduled workflow
``newest.yml`` installs ``kquota[dev,spark]`` with ``--upgrade``): the rows are the versions
that moved since ``scripts/lock`` last ran, so when the suite fails there, one of them broke
it. Standard library only.
"""

from __future__ import annotations

import re
import sys
from importlib.metadata import distributions
from pathlib import Path

_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)")


def normalized(name: str) -> str:
    """normalized is a distribution name as PEP 503 compares it."""
    return re.sub(r"[-_.]+", "-", name).lower()


def locked(lock: Path) -> dict[str, str]:
    """locked maps each package pinned in a lock file to its version."""
    pins = {}
    for line in lock.read_text(encoding="utf-8").splitlines():
        if m := _PIN.match(line):
            pins[normalized(m.group(1))] = m.group(2)
    return pins


def installed() -> dict[str, str]:
    """installed maps each distribution of this interpreter's environment to its version."""
    return {normalized(d.metadata["Name"]): d.version for d in distributions()}


def table(pins: dict[str, str], now: dict[str, str]) -> list[str]:
    rows = [
        (name, pins.get(name, "(not locked)"), now.get(name, "(not installed)"))
        for name in sorted(pins.keys() | now.keys())
        if pins.get(name) != now.get(name) and name not in ("kquota", "pip", "setuptools")
    ]
    if not rows:
        return ["Every package is at its locked version."]
    return [
        "| package | locked | newest |",
        "|---|---|---|",
        *(f"| {name} | {was} | {now_} |" for name, was, now_ in rows),
    ]


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    print("\n".join(table(locked(Path(argv[0])), installed())))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
