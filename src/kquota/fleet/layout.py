"""The fleet layout: where each cluster's desired state and snapshot are.

``ROOT/<cluster>/*.yaml`` holds each cluster's desired state; ``SNAPSHOTS/<cluster>.json``,
``<cluster>.jsonl`` or ``<cluster>.parquet`` its snapshot (the formats ``plan --snapshot`` reads,
or the Parquet that ``kquota snapshot`` writes). A cluster with desired state but no snapshot,
or the reverse, is an error: planning it against nothing would plan the creation (or, with
prune, the removal) of everything. A fleet's usage samples are laid out the same way:
``SAMPLES/<cluster>/`` folders of sample files paired with the snapshots
(:mod:`kquota.fleet.usage`).

Locations are strings so that the Spark engine can list ``hdfs://`` or ``s3a://`` folders
through Hadoop's file systems (:mod:`kquota.fleet.spark_fs`); the local engine lists the
local file system. Both go through :func:`discover`, so the pairing rules are one.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Protocol

from kquota.errors import KquotaError

SNAPSHOT_SUFFIXES = (".json", ".jsonl", ".parquet")


@dataclass(frozen=True)
class FleetCluster:
    name: str
    desired_dir: str
    snapshot: str

    @property
    def snapshot_format(self) -> str:
        return os.path.splitext(self.snapshot)[1].lstrip(".")


class Listing(Protocol):
    """Listing is a file system as discovery sees it: folders of named entries."""

    def is_dir(self, location: str) -> bool: ...

    def entries(self, folder: str) -> list[tuple[str, bool]]:
        """entries gives ``(name, is_dir)`` for each entry of ``folder``."""
        ...

    def join(self, folder: str, name: str) -> str: ...


class LocalListing:
    """LocalListing lists the local file system, paths as given (relative stay relative)."""

    def is_dir(self, location: str) -> bool:
        return os.path.isdir(location)

    def entries(self, folder: str) -> list[tuple[str, bool]]:
        with os.scandir(folder) as it:
            return [(e.name, e.is_dir()) for e in it]

    def join(self, folder: str, name: str) -> str:
        return os.path.join(folder, name)


def discover(
    desired_root: str | os.PathLike[str],
    snapshots_dir: str | os.PathLike[str],
    listing: Listing | None = None,
    *,
    folders: str = "desired-state",
    expected: str = "ROOT/<cluster>/*.yaml",
) -> list[FleetCluster]:
    """discover pairs every cluster folder of ``desired_root`` with its snapshot file;
    ``folders`` and ``expected`` name what the folders hold, for errors (a fleet's sample
    folders pair with snapshots the same way)."""
    fs = listing or LocalListing()
    root, snaps = os.fspath(desired_root), os.fspath(snapshots_dir)
    if not fs.is_dir(root):
        raise KquotaError(f"{root}: not a directory (expected {expected})")
    if not fs.is_dir(snaps):
        raise KquotaError(f"{snaps}: not a directory (expected <cluster>.json files)")
    names = sorted(n for n, is_dir in fs.entries(root) if is_dir and not n.startswith("."))
    snapshots: dict[str, list[str]] = {}
    for name, _ in fs.entries(snaps):
        stem, suffix = os.path.splitext(name)
        if suffix in SNAPSHOT_SUFFIXES and not name.startswith("."):
            snapshots.setdefault(stem, []).append(name)
    problems = []
    clusters = []
    for name in names:
        found = snapshots.get(name, [])
        if not found:
            problems.append(f"cluster {name!r}: no snapshot {snaps}/{name}.json|.jsonl|.parquet")
        elif len(found) > 1:
            listed = ", ".join(sorted(found))
            problems.append(f"cluster {name!r}: several snapshots ({listed}); keep one")
        else:
            clusters.append(FleetCluster(name, fs.join(root, name), fs.join(snaps, found[0])))
    for stem in sorted(set(snapshots) - set(names)):
        problems.append(f"snapshot {stem!r} has no {folders} folder {root}/{stem}/")
    if problems:
        raise KquotaError("the fleet layout is inconsistent:\n  " + "\n  ".join(problems))
    if not clusters:
        raise KquotaError(f"{root}: no cluster folders found")
    return clusters
