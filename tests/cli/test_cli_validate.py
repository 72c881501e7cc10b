"""``kquota validate``: exit codes and output, through the real command group."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from kquota.cli.main import cli

HEAD = "apiVersion: kquota/v1\nkind: ClientQuotas\n"
GOOD = HEAD + "quotas:\n  - match: {user: alice}\n    set: {producer_byte_rate: 1MiB}\n"


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


def test_cli_validate_ok(runner: CliRunner, tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(GOOD)
    (tmp_path / "b.yaml").write_text(
        HEAD + "quotas:\n  - match: {ip: <default>}\n    set: {connection_creation_rate: 5}\n"
    )
    result = runner.invoke(cli, ["validate", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert result.output == "ok: 2 entities in 2 files\n"


def test_cli_validate_reports_every_problem_without_traceback(
    runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("bad.yaml").write_text(
        HEAD
        + "quotas:\n  - match: {user: alice, ip: 1.2.3.4}\n    set: {request_percentage: .nan}\n"
        "  - match: {user: bob}\n    set: {request_percentage: 1, request_percentage: 2}\n"
    )
    result = runner.invoke(cli, ["validate", "bad.yaml"])
    assert result.exit_code == 1
    assert result.exception is None or isinstance(result.exception, SystemExit)
    lines = result.output.splitlines()
    assert lines[0].startswith("bad.yaml:4:12: ip cannot be combined with user or client-id")
    assert lines[1].startswith("bad.yaml:5:31: request_percentage = .nan: NaN is not a quota")
    assert lines[2].startswith("bad.yaml:7:34: duplicate key 'request_percentage'")
    assert lines[3] == "3 problems found"
    assert "Traceback" not in result.output


def test_cli_validate_defaults_to_quotas_folder(
    runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(cli, ["validate"])
    assert result.exit_code == 1
    assert "no PATHS given, no kquota.yaml and no quotas/ folder here" in result.output
    Path("quotas").mkdir()
    Path("quotas/q.yaml").write_text(GOOD)
    result = runner.invoke(cli, ["validate"])
    assert result.exit_code == 0
    assert result.output == "ok: 1 entity in 1 file\n"


def test_cli_validate_missing_path(runner: CliRunner, tmp_path: Path) -> None:
    result = runner.invoke(cli, ["validate", str(tmp_path / "nope")])
    assert result.exit_code == 1
    missing = f"{tmp_path / 'nope'}: no such file or folder; allowed: an existing path"
    assert result.output == missing + "\n1 problem found\n"


def test_cli_validate_print_schema(runner: CliRunner) -> None:
    result = runner.invoke(cli, ["validate", "--print-schema"])
    assert result.exit_code == 0
    schema = json.loads(result.output)
    assert schema["title"] == "kquota desired state"
    assert "QuotaSet" in schema["$defs"]


def test_cli_validate_is_listed(runner: CliRunner) -> None:
    result = runner.invoke(cli, ["--help"])
    assert "validate" in result.output


def test_cli_validate_checks_each_configured_cluster_on_its_own(
    runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    entry = (
        "apiVersion: kquota/v1\nkind: ClientQuotas\nquotas:\n  - {match: {user: a}, set: {%s}}\n"
    )
    for cluster, body in (("prod", "producer_byte_rate: 1"), ("dev", "producer_byte_rate: 2")):
        (tmp_path / cluster).mkdir()
        (tmp_path / cluster / "q.yaml").write_text(entry % body)
    (tmp_path / "kquota.yaml").write_text(
        "clusters:\n"
        "  prod: {kafka: {bootstrap.servers: 'p:1'}, desired: [prod]}\n"
        "  dev: {kafka: {bootstrap.servers: 'd:1'}, desired: [dev]}\n"
    )
    result = runner.invoke(cli, ["validate"])
    assert result.exit_code == 0, result.output
    assert result.output == "dev: ok: 1 entity in 1 file\nprod: ok: 1 entity in 1 file\n"
    (tmp_path / "dev" / "q.yaml").write_text(entry % "producer_byte_rate: -1")
    result = runner.invoke(cli, ["validate"])
    assert result.exit_code == 1
    assert "dev/q.yaml:4" in result.output and "dev: 1 problem found" in result.output
