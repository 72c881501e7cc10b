"""The synthetic desired-state writer reads back as the very state it was given, names that
YAML or the loader would read otherwise included."""

from __future__ import annotations

from pathlib import Path

from kquota.desired import load_desired
from kquota.fleet.synth import write_desired_yaml
from kquota.model import Entity, QuotaState


def test_written_yaml_loads_back_as_the_same_state(tmp_path: Path) -> None:
    names = [
        "svc-1",
        "<default>",  # a user literally named so, not the default entity
        "emoji-\U0001f600",  # beyond the BMP: json.dumps wrote it as a surrogate pair
        "zero\u200bwidth",  # invisible: written verbatim
        'quote"and\\slash',
        "true",
    ]
    state: QuotaState = {Entity.of({"user": n}): {"producer_byte_rate": 1024.0} for n in names}
    state[Entity.of({"user": None})] = {"consumer_byte_rate": 2048.0}
    state[Entity.of({"user": "<default>", "client-id": None})] = {"request_percentage": 50.5}
    path = tmp_path / "quotas.yaml"
    write_desired_yaml(state, path)
    assert load_desired([path]).quotas == state
    # Ordinary names stay double-quoted, as the benchmarks' inputs are written.
    assert '- {match: {user: "svc-1"}, set: {producer_byte_rate: 1024}}' in path.read_text()
