"""A cluster as a snapshot file and its desired state as a folder: what the operations read
when they reach no broker (``Target.of_snapshot``), for tests of the roads above them."""

from __future__ import annotations

from pathlib import Path

from kquota.model import Entity, QuotaState
from kquota.snapshot.files import dump_snapshot
from kquota.target import Target

ALICE = Entity.of({"user": "alice"})
IP_LOOK_ALIKES: QuotaState = {
    Entity.of({"ip": "2001:db8::1"}): {"connection_creation_rate": 5.0},
    Entity.of({"ip": "2001:DB8:0::1"}): {"connection_creation_rate": 6.0},
}
"""One IPv6 address spelled two ways, each with its own quota: a plan warns of them."""


def snapshot_target(tmp_path: Path, state: QuotaState) -> Target:
    """snapshot_target is a target reading ``state`` from ``tmp_path/snap.json``, a snapshot
    of cluster ``c1`` (cluster id ``id-1``)."""
    path = tmp_path / "snap.json"
    path.write_bytes(dump_snapshot(state, "json", {"cluster": "c1", "cluster_id": "id-1"}))
    return Target.of_snapshot(path)


def desired_folder(tmp_path: Path, yaml: str) -> Path:
    """desired_folder is ``tmp_path/quotas`` holding ``yaml`` as its one file."""
    folder = tmp_path / "quotas"
    folder.mkdir()
    (folder / "q.yaml").write_text(yaml)
    return folder
