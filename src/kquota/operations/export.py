"""The export operation: a target's quotas as desired-state YAML that reads back exactly."""

from __future__ import annotations

from kquota.desired.exportable import Export, export_yaml
from kquota.target import Target


def export_desired(target: Target, *, export_all: bool = False) -> Export:
    """export_desired writes the target's state (only its policy's scope unless
    ``export_all``) as desired-state YAML; entities desired state cannot declare are left out
    and named in ``left_out``."""
    state = target.load_state()
    source = str(target.snapshot_path) if target.snapshot_path else (target.label or "the cluster")
    header = f"Exported by kquota from {source}."
    if not export_all:
        policy = target.policy(prune=None, allow_mass_removal=False)
        if policy.scope is not None:
            state = {e: v for e, v in state.items() if policy.in_scope(e)}
            header += " Only entities in the cluster's ownership scope."
    return export_yaml(state, header)
