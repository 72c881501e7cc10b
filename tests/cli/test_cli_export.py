"""``kquota export``: YAML that plans back to no changes."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from kquota.cli.main import cli
from kquota.model import Entity
from kquota.snapshot.files import dump_snapshot

STATE = {
    Entity.of({"user": "alice", "client-id": None}): {
        "producer_byte_rate": 10485760.0,
        "request_percentage": 0.1 + 0.2,
    },
    Entity.of({"user": "<default>"}): {"consumer_byte_rate": 500000.0},
    Entity.of({"user": None}): {"controller_mutation_rate": 1e-05},
    Entity.of({"client-id": "odd: name, {x}"}): {"producer_byte_rate": 1001.0},
    Entity.of({"ip": "2001:db8::1"}): {"connection_creation_rate": 7.0},
    Entity.of({"ip": None}): {"connection_creation_rate": 100.0},
}


@pytest.fixture()
def snap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "snap.json"
    path.write_bytes(dump_snapshot(STATE))
    return path


def test_export_then_plan_is_empty(snap: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(cli, ["export", "--snapshot", str(snap), "--out", "quotas/all.yaml"])
    assert result.exit_code == 1  # the folder does not exist yet: a clear error
    (tmp_path / "quotas").mkdir()
    result = runner.invoke(cli, ["export", "--snapshot", str(snap), "--out", "quotas/all.yaml"])
    assert result.exit_code == 0, result.output
    text = (tmp_path / "quotas" / "all.yaml").read_text()
    assert "set: {producer_byte_rate: 10MiB, request_percentage: 0.30000000000000004}" in text
    result = runner.invoke(cli, ["plan", "--snapshot", str(snap), "--prune", "--detailed-exitcode"])
    assert result.exit_code == 0, result.output
    assert "No changes" in result.stdout


def test_export_to_stdout_respects_scope(snap: Path, tmp_path: Path) -> None:
    (tmp_path / "kquota.yaml").write_text(
        "clusters:\n  c:\n    kafka: {bootstrap.servers: 'x:1'}\n    policy: {scope: [{ip: '*'}]}\n"
    )
    result = CliRunner().invoke(cli, ["export", "--snapshot", str(snap)])
    assert result.exit_code == 0, result.output
    assert "ip:" in result.stdout and "user" not in result.stdout.split("kind:")[1]
    everything = CliRunner().invoke(cli, ["export", "--snapshot", str(snap), "--all"])
    assert "user: alice" in everything.stdout
