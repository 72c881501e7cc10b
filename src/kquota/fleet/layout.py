"""The fleet layout on disk.

``ROOT/<cluster>/*.yaml`` holds each cluster's desired state; ``SNAPSHOTS/<cluster>.json``,
``<cluster>.jsonl`` or ``<cluster>.parquet`` its snapshot (the formats ``plan --snapshot`` reads,
or the Parquet that ``kquota snapshot`` writes). A cluster with desired state but no snapshot,
or the reverse, is an error: planning it against nothing would plan the creation (or, with
prune, the removal) of everything.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kquota.errors import KquotaError

SNAPSHOT_SUFFIXES = (".json", ".jsonl", ".parquet")


@dataclass(frozen=True)
class FleetCluster:
    name: str
    desired_dir: Path
    snapshot: Path

    @property
    def snapshot_format(self) -> str:
        return self.snapshot.suffix.lstrip(".")


def discover(desired_root: Path, snapshots_dir: Path) -> list[FleetCluster]:
    """discover pairs every cluster folder of ``desired_root`` with its snapshot file."""
    if not desired_root.is_dir():
        raise KquotaError(f"{desired_root}: not a directory (expected ROOT/<cluster>/*.yaml)")
    if not snapshots_dir.is_dir():
        raise KquotaError(f"{snapshots_dir}: not a directory (expected <cluster>.json files)")
    names = sorted(
        p.name for p in desired_root.iterdir() if p.is_dir() and not p.name.startswith(".")
    )
    snapshots: dict[str, list[Path]] = {}
    for p in snapshots_dir.iterdir():
        if p.suffix in SNAPSHOT_SUFFIXES and not p.name.startswith("."):
            snapshots.setdefault(p.stem, []).append(p)
    problems = []
    clusters = []
    for name in names:
        found = snapshots.get(name, [])
        if not found:
            problems.append(
                f"cluster {name!r}: no snapshot {snapshots_dir}/{name}.json|.jsonl|.parquet"
            )
        elif len(found) > 1:
            listed = ", ".join(sorted(p.name for p in found))
            problems.append(f"cluster {name!r}: several snapshots ({listed}); keep one")
        else:
            clusters.append(FleetCluster(name, desired_root / name, found[0]))
    for stem in sorted(set(snapshots) - set(names)):
        problems.append(f"snapshot {stem!r} has no desired-state folder {desired_root}/{stem}/")
    if problems:
        raise KquotaError("the fleet layout is inconsistent:\n  " + "\n  ".join(problems))
    if not clusters:
        raise KquotaError(f"{desired_root}: no cluster folders found")
    return clusters
