"""Fleet usage: each cluster's demand profiles from its own folder of sample files.

``SAMPLES/<cluster>/`` holds one cluster's sample files (every kind
:mod:`kquota.usage.samples` reads; the folder's files by name, not its subfolders), paired
with ``SNAPSHOTS/<cluster>.json``, ``.jsonl`` or ``.parquet`` (its effective quotas) by the
same rules as desired-state folders (:func:`kquota.fleet.layout.discover`). Every sample of a
folder must be of its cluster: a sample of another cluster is refused by file and line.

The local engine profiles cluster by cluster with :func:`kquota.usage.profile.profile`, so
its memory is that of one cluster's samples (16 bytes a sample, the largest cluster's); the
Spark engine computes the same profiles as one job (:mod:`kquota.fleet.spark_usage`). An
error names its cluster first (``cluster prod: ...``), on both engines.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from pathlib import Path

from kquota.errors import KquotaError
from kquota.fleet.layout import FleetCluster, Listing, discover
from kquota.runtime import deadline
from kquota.usage.profile import Profiles, profile


def _executor_needs() -> tuple[str, ...]:
    # pyarrow before 16 imports numpy when it is imported (pyarrow>=15 is the floor); a newer
    # one declares no numpy and needs none shipped.
    from importlib.metadata import PackageNotFoundError, requires

    try:
        required = requires("pyarrow") or []
    except PackageNotFoundError:
        return ("pyarrow",)
    needs_numpy = any(
        r.split(";")[0].strip().startswith("numpy") and "extra" not in r for r in required
    )
    return ("pyarrow", "numpy") if needs_numpy else ("pyarrow",)


EXECUTOR_NEEDS = _executor_needs()
"""What the Spark executors need besides the planner's: they read Parquet sample files with
the local reader (pyarrow, and numpy where that pyarrow imports it), so a bad row is refused in
the same words."""
SAMPLE_FOLDERS = "samples"
SAMPLES_EXPECTED = "SAMPLES/<cluster>/ folders of sample files"


def discover_usage(
    samples_root: str, snapshots_dir: str, listing: Listing | None = None
) -> list[FleetCluster]:
    """discover_usage pairs every cluster folder of ``samples_root`` with its snapshot; a
    cluster's ``desired_dir`` is then its folder of sample files."""
    return discover(
        samples_root, snapshots_dir, listing, folders=SAMPLE_FOLDERS, expected=SAMPLES_EXPECTED
    )


def profile_cluster(cluster: FleetCluster, *, since_ms: int, extra: Sequence[Decimal]) -> Profiles:
    """profile_cluster profiles one cluster's folder of samples in this process."""
    from kquota.usage.samples import SampleFiles

    files = SampleFiles((Path(cluster.desired_dir),), cluster.name)
    try:
        return profile(files, since_ms=since_ms, where=files.where, extra=extra)
    except KquotaError as e:
        raise KquotaError(in_cluster(cluster.name, str(e))) from None


def profile_fleet_local(
    clusters: Sequence[FleetCluster], *, since_ms: int, extra: Sequence[Decimal] = ()
) -> dict[str, Profiles]:
    """profile_fleet_local profiles cluster by cluster, in the clusters' order; the command's
    deadline interrupts it where it is."""
    out: dict[str, Profiles] = {}
    with deadline.interrupting():
        for i, c in enumerate(clusters):
            what = f"the local engine to profile cluster {c.name} ({i} of {len(clusters)} done)"
            with deadline.waiting_on(what):
                deadline.check()
                out[c.name] = profile_cluster(c, since_ms=since_ms, extra=extra)
    return out


def in_cluster(name: str, message: str) -> str:
    """in_cluster is an error message of cluster ``name``, as both engines say it."""
    from kquota.display import display_name

    return f"cluster {display_name(name)}: {message}"
