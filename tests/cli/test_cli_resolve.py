"""``kquota resolve`` against a snapshot file and against desired-state YAML."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from kquota.cli.main import cli
from kquota.model import Entity
from kquota.snapshot.files import dump_snapshot


@pytest.fixture()
def snap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    state = {
        Entity.of({"user": None, "client-id": "my-client"}): {"producer_byte_rate": 500000.0},
        Entity.of({"user": "alice"}): {"consumer_byte_rate": 1048576.0},
        Entity.of({"ip": None}): {"connection_creation_rate": 10.0},
    }
    path = tmp_path / "snap.json"
    path.write_bytes(dump_snapshot(state))
    return path


def test_text_form(snap: Path) -> None:
    result = CliRunner().invoke(
        cli, ["resolve", "--names", "user=bob,client-id=my-client", "--snapshot", str(snap)]
    )
    assert result.exit_code == 0, result.output
    assert result.stdout == (
        "producer_byte_rate=500000 {user=<default>, client-id=my-client}\n"
        "consumer_byte_rate=unlimited\n"
        "request_percentage=unlimited\n"
        "controller_mutation_rate=unlimited\n"
    )


def test_json_form_with_ip(snap: Path) -> None:
    result = CliRunner().invoke(
        cli,
        [
            "resolve",
            "--names",
            "user=alice,ip=10.1.1.1",
            "--snapshot",
            str(snap),
            "--format",
            "json",
        ],
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == {
        "entity": {"user": "alice", "ip": "10.1.1.1"},
        "quotas": {
            "consumer_byte_rate": {"value": 1048576.0, "source": {"user": "alice"}},
            "connection_creation_rate": {"value": 10.0, "source": {"ip": None}},
        },
    }


def test_against_desired_yaml(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "q.yaml").write_text(
        "apiVersion: kquota/v1\nkind: ClientQuotas\nquotas:\n"
        "  - match: {user: <default>}\n    set: {producer_byte_rate: 1MiB}\n"
    )
    result = CliRunner().invoke(cli, ["resolve", "--names", "user=x", "--desired", "q.yaml"])
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[0] == "producer_byte_rate=1048576 {user=<default>}"


@pytest.mark.parametrize("names", ["", "user", "bogus=1", "user=a,user=b"])
def test_bad_names(snap: Path, names: str) -> None:
    result = CliRunner().invoke(cli, ["resolve", "--names", names, "--snapshot", str(snap)])
    assert result.exit_code == 1


def test_desired_load_warnings_come_before_its_error_and_its_answer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from cli_runner import run_kquota

    good = "apiVersion: kquota/v1\nkind: ClientQuotas\nquotas:\n  - match: {user: alice}\n"
    (tmp_path / "q.yaml").write_text(good + "    set: {producer_byte_rate: 1KiB}\n")
    (tmp_path / "q.yaml.bak").write_text(good)  # a look-alike: warned about, not read
    argv = ["resolve", "--names", "user=alice", "--desired", str(tmp_path)]
    code, out, err = run_kquota(argv, capsys)
    assert code == 0 and "producer_byte_rate" in out
    assert err.startswith("warning: ") and "q.yaml.bak" in err
    (tmp_path / "q.yaml").write_text(good + "    set: {producer_byte_rate: -1}\n")
    code, out, err = run_kquota(argv, capsys)
    assert (code, out) == (1, "")
    warning, error = err.splitlines()
    assert warning.startswith("warning: ") and "q.yaml.bak" in warning
    assert error.startswith(f"error: {tmp_path / 'q.yaml'}:5:")
